package upstream

import (
	"errors"
	"testing"

	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/emit/sycl"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

func asToolError(err error, te **hostemu.ToolError) bool { return errors.As(err, te) }

// The CUDA headers upstream gets compile under host emulation and run every
// variant of ops A-D, gathers included, like the Go reference, at warp 32
// and at HIP's 64.
func TestCUDAKernelsRunLikeTheGoReference(t *testing.T) {
	files, err := CUDA()
	if err != nil {
		t.Fatal(err)
	}
	fams, err := Families()
	if err != nil {
		t.Fatal(err)
	}
	byOp := map[string]*program{}
	for i, f := range fams {
		gather, shared, err := f.Kernels("cuda")
		if err != nil {
			t.Fatal(err)
		}
		src := files[i].Data
		p := build(t, hostemu.CUDA, "cuda", files[i].Name, cuda.KernelName(shared, true), src, shared, f.Shared, nil)
		byOp[f.Shared.Plain], byOp[f.Shared.Ids] = p, p
		byOp[f.Gather.Name] = build(t, hostemu.CUDA, "cuda", files[i].Name, cuda.KernelName(gather, true), src, gather, nil, f.Gather)
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
	files, err := SYCL()
	if err != nil {
		t.Fatal(err)
	}
	fams, err := Families()
	if err != nil {
		t.Fatal(err)
	}
	byOp := map[string]*program{}
	for i, f := range fams {
		gather, shared, err := f.Kernels("sycl")
		if err != nil {
			t.Fatal(err)
		}
		src := files[i].Data
		p := build(t, hostemu.SYCL, "sycl", files[i].Name, sycl.FunctionName(shared, true), src, shared, f.Shared, nil)
		byOp[f.Shared.Plain], byOp[f.Shared.Ids] = p, p
		byOp[f.Gather.Name] = build(t, hostemu.SYCL, "sycl", files[i].Name, sycl.FunctionName(gather, true), src, gather, nil, f.Gather)
	}
	for _, width := range []int{8, 16, 32, 64} {
		checkFamilies(t, "sycl", byOp, width)
	}
}
