package emit_test

import (
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/emit/sycl"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// CUDA declares a buffer the previous dispatch writes (ir.Buffer.Prior) as
// a plain pointer, in the kernel and in its explicit instantiations: with
// programmatic dependent launch a const restrict pointer let nvcc load the
// chain plan before griddepcontrol.wait (bench/RESULTS.md, call 52). Every
// other buffer stays restrict, and SYCL, whose dispatches do not overlap,
// keeps restrict on every buffer.
func TestPriorBuffersAreNotRestrictOnCUDA(t *testing.T) {
	checked := 0
	for _, op := range ops.All() {
		k, err := op.Kernel(ir.Portable)
		if err != nil {
			t.Fatal(err)
		}
		u := ir.Unit{Op: op.Name, Summary: op.Summary, Kernels: []*ir.Kernel{k}}
		src, err := cuda.Emit(u)
		if err != nil {
			t.Fatal(err)
		}
		syclSrc, err := sycl.Emit(u)
		if err != nil {
			t.Fatal(err)
		}
		vs := ops.TargetOf("cuda").Variants(op.Name)
		for _, b := range k.Buffers {
			if b.Access != ir.Read {
				continue
			}
			plain := " * " + b.Name + ",\n"
			restrict := " * __restrict__ " + b.Name + ",\n"
			if b.Prior {
				checked++
				if !strings.Contains(string(src), plain) || strings.Contains(string(src), restrict) {
					t.Errorf("cuda %s: Prior buffer %s is not declared a plain pointer", op.Name, b.Name)
				}
				if !strings.Contains(string(syclSrc), restrict) {
					t.Errorf("sycl %s: buffer %s lost __restrict__", op.Name, b.Name)
				}
			} else if !strings.Contains(string(src), restrict) {
				t.Errorf("cuda %s: buffer %s is not declared __restrict__", op.Name, b.Name)
			}
		}
		for _, v := range vs {
			inst := cuda.Instantiation(v.Of(k))
			_, params, _ := strings.Cut(inst, ">(")
			types := strings.Split(params, ", ")
			for i, b := range k.Buffers {
				if b.Prior && strings.Contains(types[i], "__restrict__") {
					t.Errorf("%s: the instantiation declares Prior buffer %s restrict: %s", op.Name, b.Name, inst)
				}
			}
		}
	}
	if checked < 6 { // scratch of the four ids compute kernels, plan of the two chained
		t.Errorf("only %d Prior buffers checked", checked)
	}
}
