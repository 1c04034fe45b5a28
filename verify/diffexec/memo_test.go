package diffexec

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ir/irtext"
	"github.com/kernelgen/kernelgen/ops"
)

// edited is every kernel of the ops read back from its IR text, kernel id's
// with from replaced by to.
func edited(t *testing.T, id, from, to string) Kernels {
	t.Helper()
	ks := Kernels{}
	for _, op := range ops.All() {
		for _, a := range op.Ariths() {
			k, err := op.Kernel(a)
			if err != nil {
				t.Fatal(err)
			}
			text := ir.Print(k)
			if k.ID() == id {
				if !strings.Contains(text, from) {
					t.Fatalf("%s has no %q", id, from)
				}
				text = strings.Replace(text, from, to, 1)
			}
			if ks[k.ID()], err = irtext.Parse(k.ID(), text); err != nil {
				t.Fatal(err)
			}
		}
	}
	return ks
}

// A memo changes what runs, never the result: a gather both revisions
// share runs once per problem, and a revision judged again (the base of a
// second edit) runs nothing; the results, first difference included, are
// those of runs without a memo.
func TestMemoRunsLessAndChangesNothing(t *testing.T) {
	const id = "ssm_conv_update_inplace_ids_chained@portable"
	base := edited(t, "", "", "")
	differ := edited(t, id, "store conv_state_dst[ring_off + j_4] = window[j_4 + 1u]", "store conv_state_dst[ring_off + j_4] = window[j_4]")
	same := edited(t, id, "let taps: u32 = d_conv - 1u", "let taps: u32 = d_conv + 0u - 1u")
	opt := Options{PerVariant: 1}
	memo := NewMemo()
	for _, x := range []struct {
		name    string
		b       Kernels
		differs bool
		// launches run on n problems
		launches func(n int) int64
	}{
		// base's gather and compute, the edit's compute, and the first
		// problem that differs once more on both sides (its compute: the
		// gather's memory is kept) to say where
		{"first edit", differ, true, func(n int) int64 { return int64(3*n + 2) }},
		// the second edit's compute only
		{"second edit", same, false, func(n int) int64 { return int64(n) }},
	} {
		n0 := launchesRun.Load()
		got := Run(context.Background(), id, base, x.b, Options{PerVariant: 1, Memo: memo})
		if got.NotRun != "" || (got.Differ > 0) != x.differs {
			t.Errorf("%s: %+v; want differing problems: %v", x.name, got, x.differs)
		}
		if ran := launchesRun.Load() - n0; ran != x.launches(got.Problems) {
			t.Errorf("%s: %d launches ran on %d problems, want %d", x.name, ran, got.Problems, x.launches(got.Problems))
		}
		if want := Run(context.Background(), id, base, x.b, opt); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: with a memo %+v, without %+v", x.name, got, want)
		}
	}
}
