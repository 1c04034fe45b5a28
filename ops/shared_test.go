package ops

import (
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ir"
)

// The shared gather is the gather op (GatherOp) under upstream's name, so
// the kernel upstream gets is the one generated/ and the glue run.
func TestSharedGatherIsTheGatherOp(t *testing.T) {
	shared, err := SharedGather()
	if err != nil {
		t.Fatal(err)
	}
	op, err := Lookup(GatherOp)
	if err != nil {
		t.Fatal(err)
	}
	k, err := op.Kernel(ir.Portable)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.ReplaceAll(ir.Print(k), GatherOp, SharedGatherName), ir.Print(shared); got != want {
		t.Errorf("%s differs from %s:\n%s\nwant\n%s", GatherOp, SharedGatherName, got, want)
	}
}

// Each shared kernel has its two ops' variants, the flag telling them apart.
func TestSharedKernelsBuildWithTheirOpsVariants(t *testing.T) {
	for _, s := range SharedKernels() {
		for _, be := range []string{"cuda", "sycl"} {
			vs := s.Variants(TargetOf(be))
			if want := len(TargetOf(be).Variants(s.Plain)) + len(TargetOf(be).Variants(s.Ids)); len(vs) != want || want == 0 {
				t.Errorf("%s on %s: %d variants, want %d", s.Name, be, len(vs), want)
			}
			k, err := s.Kernel(ir.Native(be))
			if err != nil {
				t.Fatal(err)
			}
			if k.Param(s.Flag) == nil {
				t.Errorf("%s has no param %s", s.Name, s.Flag)
			}
		}
	}
}
