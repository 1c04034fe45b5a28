// Package cuda is the CUDA backend: ggml-cuda style templates (emit/cuda),
// checked by clang-22 to PTX and by host emulation.
package cuda

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/internal/backend"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/templates"
	"github.com/kernelgen/kernelgen/tools/ptx"
	"github.com/kernelgen/kernelgen/tools/toolchain"
	"github.com/kernelgen/kernelgen/verify/emulate"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

const name = "cuda"

// target is the backend's tuning (ops/backend_cuda.go), resolved once.
var target = ops.TargetOf(name)

// Backend is CUDA.
var Backend = &backend.Backend{Name: name, Dir: name, Summary: "CUDA kernels (ggml-cuda style templates) + ggml-cuda glue", Issue: 6,
	Generate: generate, Verify: verify, Integration: Manifest,
	Owns:  []string{"emit/cuda", "templates/cuda", "tools/ptx", "verify/hostemu/cuda.go", "verify/emulate/cuda.go", "bench/cuda", "bench/vulkan/cuda.go", "ops/backend_cuda.go", "generated/cuda", "tools/toolchain/cuda.go"},
	Tools: []toolchain.Tool{toolchain.NVCC}, Cache: &backend.Cache{Key: "ptx", Dir: ptx.CacheDir}}

var glueTarget = &templates.Target{
	Names:    glue.Names{Backend: name, Function: cuda.KernelName, Family: familyOf},
	Template: "cuda/kernelgen-fused.cu.tmpl", Out: "fused-ops.cuh", Prefix: "ggml_cuda",
	Upstream: &templates.Upstream{Files: []templates.UpstreamFile{
		{Section: "upstream-gather-header-file", Name: "state-gather.cuh"}, {Section: "upstream-gather-file", Name: "state-gather.cu"}}},
}

// emulationWidth is NVIDIA's warp, the subgroup width kernelgen build
// emulates at (the test suite covers 8, 16, 32 and 64).
const emulationWidth = 32

func generate() ([]backend.File, error) {
	files, err := backend.PerOp(name, name, func(u ir.Unit) ([]backend.File, error) {
		src, err := cuda.Emit(u)
		return backend.One(u.Op+".cuh", src, err)
	})
	if err != nil {
		return nil, err
	}
	return backend.WithGlue(files, name, Manifest)
}

// verify compiles the headers written (files), each op's with every
// variant CUDA builds instantiated, then runs host emulation.
func verify(ctx context.Context, files []backend.File, progress func(done, total int)) (string, error) {
	written := map[string][]byte{}
	for _, f := range files {
		if strings.HasSuffix(f.Path, ".cuh") && f.Op != "" {
			written[f.Op] = f.Data
		}
	}
	type header struct {
		op  *ops.Op
		src []byte
		ks  []*ir.Kernel
	}
	var headers []header
	for _, op := range ops.All() {
		if !backend.BuiltOn(op, target) {
			continue
		}
		src, ok := written[op.Name]
		if !ok {
			return "", fmt.Errorf("cuda: %s.cuh was not generated", op.Name)
		}
		ks, err := backend.KernelsFor(op, ir.Portable, ir.Native(name))
		if err != nil {
			return "", err
		}
		headers = append(headers, header{op, src, ks})
	}
	// One clang per core: a header compiles alone on one.
	counts, errs := make([]int, len(headers)), make([]error, len(headers))
	sem := make(chan struct{}, runtime.NumCPU())
	var wg sync.WaitGroup
	for i, h := range headers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			counts[i], errs[i] = PTX(ctx, h.op, h.src, h.ks)
		}()
	}
	wg.Wait()
	kernels := 0
	for i := range headers {
		if errs[i] != nil {
			return "", errs[i]
		}
		kernels += counts[i]
	}
	n, err := emulate.Check(ctx, hostemu.CUDA, ir.Native(name), backend.Emulated(files, ".cuh"), emulationWidth, progress)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("cuda: clang-22 compiled %d kernels to PTX for sm_90; host emulation (warp %d) ran %d cases, every one equal to the Go reference", kernels, emulationWidth, n), nil
}
