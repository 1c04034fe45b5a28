package upstream_test

import (
	"context"
	"errors"
	backendcuda "github.com/kernelgen/kernelgen/internal/backend/cuda"
	backendmetal "github.com/kernelgen/kernelgen/internal/backend/metal"
	backendsycl "github.com/kernelgen/kernelgen/internal/backend/sycl"
	"github.com/kernelgen/kernelgen/internal/upstream"
	"testing"

	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/emit/msl"
	"github.com/kernelgen/kernelgen/emit/sycl"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/tools/ptx"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

func asToolError(err error, te **hostemu.ToolError) bool { return errors.As(err, te) }

// The CUDA headers upstream gets compile under host emulation and run every
// variant of ops A-D, gathers included, like the Go reference, at warp 32
// and at HIP's 64.
func TestCUDAKernelsRunLikeTheGoReference(t *testing.T) {
	files, err := backendcuda.UpstreamKernels()
	if err != nil {
		t.Fatal(err)
	}
	fams, err := upstream.Families()
	if err != nil {
		t.Fatal(err)
	}
	gather, err := ops.SharedGather()
	if err != nil {
		t.Fatal(err)
	}
	g := build(t, hostemu.CUDA, "cuda", files[0].Name, cuda.KernelName(gather), files[0].Data, gather, nil, fams[0].Gather)
	byOp := map[string]*program{}
	for i, f := range fams {
		shared, err := f.Kernel("cuda")
		if err != nil {
			t.Fatal(err)
		}
		p := build(t, hostemu.CUDA, "cuda", files[i+1].Name, cuda.KernelName(shared), files[i+1].Data, shared, f.Shared, nil)
		byOp[f.Shared.Plain], byOp[f.Shared.Ids], byOp[f.Gather.Name] = p, p, g
	}
	for _, width := range []int{32, 64} {
		checkFamilies(t, "cuda", byOp, width)
	}
}

// The SYCL headers upstream gets run every variant of ops A-D, gathers
// included, like the Go reference at the sub-group widths of Intel (16,
// which takes xor_reduce_sum's local-memory path where W is 32), NVIDIA
// and AMD (32, 64) and a narrow 8.
func TestSYCLKernelsRunLikeTheGoReference(t *testing.T) {
	files, err := backendsycl.UpstreamKernels()
	if err != nil {
		t.Fatal(err)
	}
	fams, err := upstream.Families()
	if err != nil {
		t.Fatal(err)
	}
	gather, err := ops.SharedGather()
	if err != nil {
		t.Fatal(err)
	}
	if !files[0].InGlue {
		t.Fatalf("%s: the SYCL gather should join the glue's header", files[0].Name)
	}
	// the glue's header includes sycl.hpp before the gather
	gsrc := append([]byte("#pragma once\n\n#include <sycl/sycl.hpp>\n\n"), files[0].Data...)
	g := build(t, hostemu.SYCL, "sycl", files[0].Name, sycl.FunctionName(gather), gsrc, gather, nil, fams[0].Gather)
	byOp := map[string]*program{}
	for i, f := range fams {
		shared, err := f.Kernel("sycl")
		if err != nil {
			t.Fatal(err)
		}
		p := build(t, hostemu.SYCL, "sycl", files[i+1].Name, sycl.FunctionName(shared), files[i+1].Data, shared, f.Shared, nil)
		byOp[f.Shared.Plain], byOp[f.Shared.Ids], byOp[f.Gather.Name] = p, p, g
	}
	for _, width := range []int{8, 16, 32, 64} {
		checkFamilies(t, "sycl", byOp, width)
	}
}

// The Metal kernels upstream gets (the text joining ggml-metal.metal, after
// that file's prelude) run every variant of ops A-D, gathers included, like
// the Go reference at Apple's simdgroup width, 32.
func TestMetalKernelsRunLikeTheGoReference(t *testing.T) {
	lib, err := backendmetal.UpstreamLibrary()
	if err != nil {
		t.Fatal(err)
	}
	src := append([]byte("#include <metal_stdlib>\n\nusing namespace metal;\n\n"), lib...)
	fams, err := upstream.Families()
	if err != nil {
		t.Fatal(err)
	}
	gather, err := ops.SharedGather()
	if err != nil {
		t.Fatal(err)
	}
	const file = "ggml-metal.metal"
	g := build(t, hostemu.MSL, "metal", file, msl.FunctionName(gather), src, gather, nil, fams[0].Gather)
	byOp := map[string]*program{}
	for _, f := range fams {
		shared, err := f.Kernel("metal")
		if err != nil {
			t.Fatal(err)
		}
		p := build(t, hostemu.MSL, "metal", file, msl.FunctionName(shared), src, shared, f.Shared, nil)
		byOp[f.Shared.Plain], byOp[f.Shared.Ids], byOp[f.Gather.Name] = p, p, g
	}
	checkFamilies(t, "metal", byOp, 32)
}

// warpReduceSum stands in for ggml-cuda's common.cuh warp_reduce_sum (the
// xor butterfly over width lanes), which the upstream kernels call.
const warpReduceSum = `template <int width = 32>
static __device__ __forceinline__ float warp_reduce_sum(float x) {
#pragma unroll
    for (int offset = width / 2; offset > 0; offset >>= 1) {
        x += __shfl_xor_sync(0xffffffff, x, offset, width);
    }
    return x;
}
`

// The CUDA headers upstream gets compile to PTX for sm_90 with clang-22,
// -Wall -Werror, every variant instantiated, as kernelgen build compiles
// generated/cuda.
func TestCUDAKernelsCompileToPTX(t *testing.T) {
	files, err := backendcuda.UpstreamKernels()
	if err != nil {
		t.Fatal(err)
	}
	fams, err := upstream.Families()
	if err != nil {
		t.Fatal(err)
	}
	gather, err := ops.SharedGather()
	if err != nil {
		t.Fatal(err)
	}
	kernels := map[string]*ir.Kernel{files[0].Name: gather}
	variants := map[string][]ops.Variant{files[0].Name: {{}}}
	for i, f := range fams {
		k, err := f.Kernel("cuda")
		if err != nil {
			t.Fatal(err)
		}
		kernels[files[i+1].Name], variants[files[i+1].Name] = k, f.Shared.Variants("cuda")
	}
	for _, f := range files {
		k := kernels[f.Name]
		var inst []string
		for _, v := range variants[f.Name] {
			inst = append(inst, cuda.Instantiation(v.Of(k)))
		}
		got, err := ptx.Compile(context.Background(), f.Name, append([]byte(warpReduceSum), f.Data...), inst)
		if errors.Is(err, ptx.ErrNoClang) {
			t.Skip("clang++-22 not installed")
		}
		if err != nil {
			t.Fatal(err)
		}
		if got != len(inst) {
			t.Errorf("%s: PTX has %d kernels, want %d", f.Name, got, len(inst))
		}
	}
}
