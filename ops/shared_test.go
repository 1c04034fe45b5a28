package ops

import (
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ir"
)

// The shared gather is each ids op's gather under another name, so one
// kernel can serve both. Only the roles differ: each op's gather names the
// srcs its op binds, the shared one none.
func TestSharedGatherIsEachIdsOpsGather(t *testing.T) {
	shared, err := SharedGather()
	if err != nil {
		t.Fatal(err)
	}
	want := ir.Print(shared)
	for _, name := range []string{"gated_delta_net_gather", "ssm_conv_gather"} {
		op, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		k, err := op.Kernel(ir.Portable)
		if err != nil {
			t.Fatal(err)
		}
		same := *k
		same.Buffers = nil
		for i, b := range k.Buffers {
			c := *b
			c.Role = shared.Buffers[i].Role
			same.Buffers = append(same.Buffers, &c)
		}
		if got := strings.ReplaceAll(ir.Print(&same), name, SharedGatherName); got != want {
			t.Errorf("%s differs from %s:\n%s\nwant\n%s", name, SharedGatherName, got, want)
		}
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
