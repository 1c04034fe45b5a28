package diffexec

import (
	"context"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ops"
)

func TestSameAndDifferentResults(t *testing.T) {
	const id = "ssm_conv_update_inplace_ids@portable"
	base := edited(t, "", "", "")
	opt := Options{PerVariant: 1}
	r := Run(context.Background(), id, base, edited(t, id, "let taps: u32 = d_conv - 1u", "let taps: u32 = d_conv + 0u - 1u"), opt)
	variants := len(ops.VariantsOf("ssm_conv_update_inplace_ids"))
	if !r.Identical() || r.Problems <= variants {
		t.Errorf("an equivalent edit: %+v; want identical on more than %d problems (one per variant and one with aliasing ids)", r, variants)
	}
	r = Run(context.Background(), id, base, edited(t, id, "window[j_4 + 1u]", "window[j_4]"), opt)
	if r.Identical() || r.First == nil || r.First.Buffer != "conv_state_dst" || r.Differ == 0 {
		t.Errorf("the ring no longer shifted: %+v", r)
	} else {
		t.Logf("ring not shifted: %d of %d differ; first %s", r.Differ, r.Problems, r.First)
	}
	// Each revision's gather runs before its compute kernel: a gather that
	// copies the wrong row shows in the compute kernel's results.
	r = Run(context.Background(), id, base, edited(t, "gather@portable", "load cache[from + u64(c + j * 256u)]", "load cache[u64(to) + u64(c + j * 256u)]"), opt)
	if r.Identical() || r.First == nil {
		t.Errorf("a broken gather: %+v", r)
	}
	r = Run(context.Background(), id, base, edited(t, id, "store conv_state_dst[ring_off + j_4]", "store conv_state_dst[ring_off + j_4 + 100000u]"), opt)
	if r.First == nil || !strings.Contains(r.First.B, "index out of range") || r.First.A != "ran" {
		t.Errorf("b writes out of range: %+v", r.First)
	}
	r = Run(context.Background(), id, base, edited(t, id, "arg rs_head: u32", "arg rs_head: u32\n    arg extra: u32"), opt)
	if r.NotRun == "" || !strings.Contains(r.NotRun, "arg extra") {
		t.Errorf("a new arg: %+v", r)
	}
}

// Native-cpu kernels run with their vector operations: an equivalent edit
// of a vec_dot is identical, a shorter one or a shorter vec_silu differs.
func TestVectorOperations(t *testing.T) {
	base := edited(t, "", "", "")
	opt := Options{PerVariant: 1}
	const gdn = "gated_delta_net_inplace_ids@native-cpu"
	r := Run(context.Background(), gdn, base, edited(t, gdn, "vec_dot<R>(s_shard[reg0..], q_reg[0u..])", "vec_dot<R>(q_reg[0u..], s_shard[reg0..])"), opt)
	if !r.Identical() || r.Problems <= len(ops.VariantsOf("gated_delta_net_inplace_ids")) {
		t.Errorf("a vec_dot's operands swapped: %+v; want identical on every problem", r)
	}
	r = Run(context.Background(), gdn, base, edited(t, gdn, "vec_dot<R>(s_shard[reg0..], k_reg[0u..])", "vec_dot<R - 1u>(s_shard[reg0..], k_reg[0u..])"), opt)
	if r.Identical() || r.First == nil || r.First.Buffer == "" {
		t.Errorf("a vec_dot one row short: %+v", r)
	} else {
		t.Logf("vec_dot one row short: %d of %d differ; first %s", r.Differ, r.Problems, r.First)
	}
	const conv = "ssm_conv_update_inplace_ids@native-cpu"
	r = Run(context.Background(), conv, base, edited(t, conv, "vec_silu<block_len>(", "vec_silu<block_len - 1u>("), opt)
	if r.Identical() || r.First == nil || r.First.Buffer != "dst" {
		t.Errorf("a vec_silu one channel short: %+v", r)
	} else {
		t.Logf("vec_silu one channel short: %d of %d differ; first %s", r.Differ, r.Problems, r.First)
	}
}

// A cancelled context runs no problem and says so.
func TestRunStopsWhenCancelled(t *testing.T) {
	const id = "ssm_conv_update_inplace_ids@portable"
	base := edited(t, "", "", "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := Run(ctx, id, base, edited(t, id, "let taps: u32 = d_conv - 1u", "let taps: u32 = d_conv + 0u - 1u"), Options{PerVariant: 1})
	if r.NotRun != Interrupted || r.Problems != 0 {
		t.Errorf("got %+v, want not run: %s", r, Interrupted)
	}
}
