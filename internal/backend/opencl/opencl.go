// Package opencl is the OpenCL backend: OpenCL C kernels for ggml-opencl
// (emit/opencl), every variant built by the OpenCL device's compiler and
// a sample run on it (PoCL in CI).
package opencl

import (
	"context"
	"fmt"
	"runtime"
	"strings"

	"github.com/kernelgen/kernelgen/emit/opencl"
	"github.com/kernelgen/kernelgen/internal/backend"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/tools/toolchain"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/clrun"
	verifycl "github.com/kernelgen/kernelgen/verify/opencl"
)

const name = "opencl"

// Backend is OpenCL.
var Backend = &backend.Backend{Name: name, Dir: name, Summary: "OpenCL C kernels for ggml-opencl, compiled and run on an OpenCL device (PoCL in CI)", Issue: 23,
	Generate: generate, Verify: verify, Integration: Manifest,
	Owns:  []string{"emit/opencl", "templates/opencl", "verify/clrun", "verify/opencl", "ops/backend_opencl.go", "generated/opencl", "tools/toolchain/opencl.go"},
	Tools: []toolchain.Tool{toolchain.Clinfo}, Doctor: doctor}

func generate() ([]backend.File, error) {
	files, err := backend.PerOp(name, name, func(u ir.Unit) ([]backend.File, error) {
		src, err := opencl.Emit(u)
		return backend.One(opencl.FileName(u.Op), src, err)
	})
	if err != nil {
		return nil, err
	}
	return withGlue(files, Manifest)
}

// verify builds every variant's program with the OpenCL device's compiler
// (PoCL in CI) and runs the sample (verify/opencl.Sample) against the Go
// reference; go test ./verify/opencl (CI) runs every variant.
func verify(ctx context.Context, files []backend.File, progress func(done, total int)) (string, error) {
	sources := map[string][]byte{}
	for _, f := range files {
		if strings.HasSuffix(f.Path, ".cl") {
			sources[f.Op] = f.Data
		}
	}
	r, err := clrun.Build(ctx)
	if err != nil {
		return "", err
	}
	devs, err := r.Devices(ctx)
	if err != nil {
		return "", err
	}
	parts := max(1, min(4, runtime.NumCPU()))
	n, err := verifycl.BuildAll(ctx, r, sources, parts)
	if err != nil {
		return "", err
	}
	rep, err := verifycl.Check(ctx, r, sources, false, parts, progress)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("opencl: %s (%s) built %d programs (every variant, both contracts, no warnings); ran %d sample cases: %d portable bit for bit, %d native within NMSE %g of the Go reference",
		devs[0].Name, devs[0].Platform, n, rep.Cases, rep.BitExact, rep.Native, cases.NMSETolerance), nil
}
