// Package metal is the Metal backend: Metal Shading Language kernels
// (emit/msl), checked by xcrun metal where it exists and by host emulation.
package metal

import (
	"context"
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/emit/msl"
	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/internal/backend"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/templates"
	"github.com/kernelgen/kernelgen/tools/metallib"
	"github.com/kernelgen/kernelgen/tools/toolchain"
	"github.com/kernelgen/kernelgen/verify/emulate"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

const name = "metal"

// target is the backend's tuning (ops/backend_metal.go), resolved once.
var target = ops.TargetOf(name)

// Backend is Metal.
var Backend = &backend.Backend{Name: name, Dir: name, Summary: "Metal Shading Language kernels + ggml-metal glue", Issue: 7,
	Generate: generate, Verify: verify, Integration: Manifest,
	Owns:  []string{"emit/msl", "templates/metal", "tools/metallib", "verify/hostemu/msl.go", "verify/emulate/msl.go", "ops/backend_metal.go", "generated/metal", "tools/toolchain/metal.go"},
	Tools: []toolchain.Tool{toolchain.XcrunMetal}}

var glueTarget = &templates.Target{
	Names: glue.Names{Backend: name, Function: msl.FunctionName,
		HostName:   func(_ string, in ir.Instance) string { return msl.HostName(in) },
		ArgsStruct: msl.KargsName, Family: familyAfter(pinnedBase)},
	Template: "metal/kernelgen-fused.h.tmpl", Out: "fused-ops.h", Prefix: "ggml_metal",
	Upstream: &templates.Upstream{Files: []templates.UpstreamFile{{Section: "upstream-supports-file", Name: templates.SupportsName}}},
}

// emulationWidth is Apple's simdgroup, the width kernelgen build emulates
// at (the test suite covers 8, 16, 32 and 64).
const emulationWidth = 32

func generate() ([]backend.File, error) {
	files, err := backend.PerOp(name, name, func(u ir.Unit) ([]backend.File, error) {
		src, err := msl.Emit(u)
		return backend.One(u.Op+".metal", src, err)
	})
	if err != nil {
		return nil, err
	}
	return backend.WithGlue(files, name, Manifest)
}

func verify(ctx context.Context, files []backend.File, progress func(done, total int)) (string, error) {
	sources := map[string][]byte{}
	for _, f := range files {
		if strings.HasSuffix(f.Path, ".metal") {
			sources[strings.TrimPrefix(f.Path, name+"/")] = f.Data
		}
	}
	real, err := metallib.Build(ctx, sources)
	if err != nil {
		return "", err
	}
	n, err := emulate.Check(ctx, hostemu.MSL, ir.Native(name), backend.Emulated(files, ".metal"), emulationWidth, progress)
	if err != nil {
		return "", err
	}
	tier := "xcrun metal not found (macOS only): no metallib built"
	if real {
		tier = "xcrun metal built a metallib with warnings as errors"
	}
	return fmt.Sprintf("metal: %s; host emulation (simdgroup %d) ran %d cases, every one equal to the Go reference", tier, emulationWidth, n), nil
}
