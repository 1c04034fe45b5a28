package glue

import (
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// Vulkan's op B runs its one-dispatch schedule from ops.Target.GDNBatchFrom
// sequences (past the small-n tiling at S_v 128), op D's from two.
func TestBatchedScheduleFirstSeqs(t *testing.T) {
	model, err := Model(ir.Native("vulkan"))
	if err != nil {
		t.Fatal(err)
	}
	open := "" // several spans are or-ed, each in parentheses
	if len(ops.TargetOf("vulkan").GDNBatchSpans(128)) > 1 && !contiguous(ops.TargetOf("vulkan").GDNBatchSpans(128)) {
		open = "(("
	}
	want := map[string]string{
		"gated_delta_net_inplace_ids": open + ne(2, 3) + " >= " + bySv(ops.TargetOf("vulkan").GDNBatchFrom(128), ops.TargetOf("vulkan").GDNBatchFrom(16)) + " && ",
		"ssm_conv_update_inplace_ids": ne(2, 2) + " >= 2 && ",
	}
	if _, _, maxSeqs, ok := ops.TargetOf("vulkan").GDNSmallTiling(128); !ok || maxSeqs < 2 || ops.TargetOf("vulkan").GDNBatchFrom(128) != maxSeqs+1 {
		t.Errorf("Vulkan's small-n tiling (up to %d sequences, %v) and batched op B (from %d) do not meet", maxSeqs, ok, ops.TargetOf("vulkan").GDNBatchFrom(128))
	}
	for _, o := range model {
		w, ok := want[o.Name]
		if !ok {
			continue
		}
		delete(want, o.Name)
		if s := scheduleOf(o, "one_dispatch"); s == nil {
			t.Errorf("%s: no one-dispatch schedule", o.Name)
		} else if !strings.HasPrefix(s.Cond, w) {
			t.Errorf("%s: schedule condition %q, want it to begin %q", o.Name, s.Cond, w)
		}
	}
	for name := range want {
		t.Errorf("%s: not in Vulkan's glue model", name)
	}
}

// contiguous reports whether spans follow each other with no gap (the
// schedule's condition names one range).
func contiguous(spans []ops.Span) bool {
	for i := 1; i < len(spans); i++ {
		if spans[i].From != spans[i-1].To+1 {
			return false
		}
	}
	return true
}

// scheduleOf is o's schedule of that local, nil where it has none.
func scheduleOf(o *Op, local string) *Schedule {
	for _, s := range o.Schedules {
		if s.Local == local {
			return s
		}
	}
	return nil
}
