package cuda

import (
	"context"
	"fmt"

	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/tools/ptx"
)

// PTX compiles one op's generated CUDA header with clang++-22, instantiating
// every variant of the variant table under each of its kernels, and returns
// how many kernels the PTX holds.
func PTX(ctx context.Context, op *ops.Op, header []byte, kernels []*ir.Kernel) (int, error) {
	var inst []string
	for _, k := range kernels {
		inst = append(inst, Instantiations(op, k)...)
	}
	got, err := ptx.Compile(ctx, op.Name+".cuh", header, inst)
	if err == nil && got != len(inst) {
		err = fmt.Errorf("%s: PTX has %d kernels, want %d (one per variant and contract)", op.Name, got, len(inst))
	}
	return got, err
}

// Instantiations spells an explicit instantiation of k for every variant the
// CUDA backend builds of its op (the definition itself for a kernel that is
// not a template).
func Instantiations(op *ops.Op, k *ir.Kernel) []string {
	var out []string
	for _, v := range target.Variants(op.Name) {
		out = append(out, cuda.Instantiation(v.Of(k)))
	}
	return out
}
