// Package sycl is the SYCL backend: ggml-sycl style kernels (emit/sycl),
// checked by host emulation.
package sycl

import (
	"context"
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/emit/sycl"
	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/internal/backend"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/templates"
	"github.com/kernelgen/kernelgen/tools/toolchain"
	"github.com/kernelgen/kernelgen/verify/emulate"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

const name = "sycl"

// Backend is SYCL.
var Backend = &backend.Backend{Name: name, Dir: name, Summary: "SYCL C++ kernels + ggml-sycl glue", Issue: 8,
	Generate: generate, Verify: verify, Integration: Manifest,
	Owns:  []string{"emit/sycl", "templates/sycl", "verify/hostemu/sycl.go", "verify/emulate/sycl.go", "ops/backend_sycl.go", "generated/sycl", "tools/toolchain/sycl.go"},
	Tools: []toolchain.Tool{toolchain.ICPX, toolchain.ACPP}, Doctor: doctor}

var glueTarget = &templates.Target{
	Names: glue.Names{Backend: name, Function: sycl.FunctionName, Family: newFamily,
		// The SYCL kernel takes each as a local-memory pointer (emit/sycl).
		NoSharedArrays: "the SYCL launcher allocates local memory for reductions only; give templates/sycl a local_accessor per shared array first"},
	Prefix:   "ggml_sycl",
	Upstream: &templates.Upstream{Dir: "sycl", Files: []templates.UpstreamFile{{Section: "upstream-file", Name: "fused-ops.cpp"}, {Section: "upstream-header", Name: "fused-ops.hpp"}}},
}

// emulationWidth is ggml-sycl's WARP_SIZE for Intel, the sub-group width
// kernelgen build emulates at (the test suite covers 8, 16, 32 and 64).
const emulationWidth = 16

func generate() ([]backend.File, error) {
	files, err := backend.PerOp(name, name, func(u ir.Unit) ([]backend.File, error) {
		src, err := sycl.Emit(u)
		return backend.One(u.Op+".hpp", src, err)
	})
	if err != nil {
		return nil, err
	}
	return withReviewCopy(files)
}

// withReviewCopy adds the review copy (generated/sycl/glue): the files the
// series' SYCL commit adds, rendered as the patch renders them
// (integration.Manifest.Render), so that a reviewer reads what ggml gets.
func withReviewCopy(files []backend.File) ([]backend.File, error) {
	r, err := Manifest.Render()
	if err != nil {
		return nil, err
	}
	for _, f := range r.Files {
		files = append(files, backend.File{Path: name + "/glue/" + f.Name, Data: []byte(strings.TrimRight(string(f.Data), "\n") + "\n")})
	}
	return files, nil
}

// verify runs the files written (files) with the real SYCL compiler where
// there is one (acpp), then under emulation. Both run the same cases, so progress counts them as one list
// twice as long.
func verify(ctx context.Context, files []backend.File, progress func(done, total int)) (string, error) {
	written := backend.Emulated(files, ".hpp")
	impls, err := emulate.ProbeSYCL(ctx)
	if err != nil {
		return "", err
	}
	first, second := progress, progress
	if progress != nil && impls.ACPP.Found {
		first = func(done, total int) { progress(done, 2*total) }
		second = func(done, total int) { progress(total+done, 2*total) }
	}
	tier, err := emulate.RealSYCL(ctx, impls, written, first)
	if err != nil {
		return "", err
	}
	n, err := emulate.Check(ctx, hostemu.SYCL, ir.Native(name), written, emulationWidth, second)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("sycl: %s; host emulation (sub-group %d) ran %d cases, every one equal to the Go reference", tier, emulationWidth, n), nil
}
