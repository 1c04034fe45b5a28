package cases

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kernelgen/kernelgen/internal/tier"
	"github.com/kernelgen/kernelgen/ops"
)

// The chained schedule (plan, chain gather, compute) leaves state_dst and
// dst bit for bit as the two-phase one (gather, compute) does, over ids
// that make cycles, long paths and rows several sequences read, segments
// of 1 to 3 sequences; only scratch (fewer rows copied) and the plan differ.
func TestChainedScheduleMatchesTwoDispatches(t *testing.T) {
	t.Parallel()
	long := Size{MaxHeads: 2, MaxTokens: 2, MaxSeqs: 10, MaxChannels: 64}
	for _, x := range []struct {
		chained, gather, compute, rowArg string
	}{
		{chainedOp, ops.GatherOp, "gated_delta_net_inplace_ids", "sd1"},
		{convChainedOp, ops.GatherOp, "ssm_conv_update_inplace_ids", "cs2"},
	} {
		r := rand.New(rand.NewPCG(31, 32))
		chained := 0
		for i := 0; i < 120; i++ {
			a := ops.Ariths()[i%len(ops.Ariths())]
			c, err := Random(x.chained, a, r, long, nil)
			if err != nil {
				t.Fatal(err)
			}
			compute := c.Launches[len(c.Launches)-1]
			two, err := twoDispatches(c, compute, x.gather, x.compute, x.rowArg, func(name string) bool { return name != "plan" })
			if err != nil {
				t.Fatal(err)
			}
			n := int(compute.Args["n_seqs"])
			for _, got := range two.Expected {
				if got.Name == "scratch" {
					continue
				}
				var want *Buffer
				for _, y := range c.Expected {
					if y.Name == got.Name {
						want = y
					}
				}
				if string(got.Bytes()) != string(want.Bytes()) {
					t.Fatalf("%s: buffer %s differs between the chained schedule and gather + compute", c.Name, got.Name)
				}
			}
			// How much the cases say: sequences run behind another in a
			// segment (not copied though their source is another's row).
			plan := expectedBuffer(c, "plan").I32
			ids, rs := c.Buffer("ids").I32, int32(compute.Args["rs_head"])
			for s, id := range ids {
				if id != rs+int32(s) && id >= rs && id < rs+int32(n) {
					if plan[s]&0xffff == 0 {
						chained++
					}
				}
			}
		}
		if chained < 100 {
			t.Errorf("%s: only %d aliasing sequences ran in a segment behind the one they read: too few to say anything", x.chained, chained)
		}
	}
}

func expectedBuffer(c *Case, name string) *Buffer {
	for _, b := range c.Expected {
		if b.Name == name {
			return b
		}
	}
	return nil
}

// checkPlan checks a plan (ops/chain.go) against ids: every sequence is in
// exactly one segment of at most seg sequences, walked through ids from its
// first; an aliasing sequence either reads scratch or runs right before the
// sequence whose row it reads, in the same segment; only aliasing ones read
// scratch, window row t from scratch row t (copied once however many read
// it; past the planned size, each from its own). It returns how many rows
// are copied.
func checkPlan(ids, plan []int32, rsHead, seg int) (copies int, err error) {
	n := len(ids)
	target := func(s int) int {
		t := int(ids[s]) - rsHead
		if t < 0 || t >= n || t == s {
			return -1
		}
		return t
	}
	if n > 1024 {
		seg = 1 // past the planned size: every aliasing row copied
	}
	segOf, pos := make([]int, n), make([]int, n)
	for s := range segOf {
		segOf[s] = -1
	}
	copied := map[int]bool{}
	length := func(s int) int { return int(plan[s] >> 16) }
	from := func(s int) int { return int(plan[s]&0xffff) - 1 } // -1: no scratch
	for s := range n {
		if plan[s] < 0 || length(s) > seg || from(s) >= n {
			return 0, fmt.Errorf("plan[%d] = %#x: not len << 16 | from with len <= %d, from <= %d", s, plan[s], seg, n)
		}
		if r := from(s); r >= 0 {
			if target(s) < 0 {
				return 0, fmt.Errorf("sequence %d reads scratch but its source %d is not another's row", s, ids[s])
			}
			want := target(s) // the row's own scratch row: one copy for all its readers
			if n > 1024 {
				want = s
			}
			if r != want {
				return 0, fmt.Errorf("sequence %d reads row %d from scratch row %d, not %d", s, target(s), r, want)
			}
			copied[r] = true
		}
		at := s
		for m := 0; m < length(s); m++ {
			if segOf[at] >= 0 {
				return 0, fmt.Errorf("sequence %d is in the segments of %d and %d", at, segOf[at], s)
			}
			segOf[at], pos[at] = s, m
			if m+1 < length(s) {
				at = target(at)
				if at < 0 {
					return 0, fmt.Errorf("the segment of %d runs past a sequence whose source is not in the window", s)
				}
			}
		}
	}
	for s := range n {
		if segOf[s] < 0 {
			return 0, fmt.Errorf("sequence %d is in no segment", s)
		}
		t := target(s)
		if t < 0 || from(s) >= 0 {
			continue
		}
		if segOf[t] != segOf[s] || pos[t] != pos[s]+1 {
			return 0, fmt.Errorf("sequence %d reads row %d, which another segment (or a later member) writes, and not from scratch", s, t)
		}
	}
	return len(copied), nil
}

// The chain gather plans a valid schedule for every ids pattern, up to past
// what one workgroup plans, and copies no more than it must: one row per
// cycle or per segment boundary, and a row several read from scratch once;
// a rotation of n, one cycle, is cut into ceil(n/seg) segments with one
// copy each. Every scratch row a sequence reads holds its source row.
func TestChainPlanIsASchedule(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(41, 42))
	// plan runs the chain gather over rows of one element; nil: it wrote
	// no plan (no source aliases).
	plan := func(ids []int32, rsHead, seg int) []int32 {
		out, scratch := runPlanGather(t, ops.ChainGatherOp, "seg", seg, ids, rsHead)
		for s, p := range out {
			if r := int(p&0xffff) - 1; r >= 0 && scratch[r] != float32(100+ids[s]) {
				t.Fatalf("n %d, seg %d: sequence %d reads scratch row %d, which holds %v, not its source row %d (%v)", len(ids), seg, s, r, scratch[r], ids[s], float32(100+ids[s]))
			}
		}
		return out
	}
	for i := 0; i < tier.Pick(40, 300); i++ {
		ids, rsHead := planIds(r, i)
		n := len(ids)
		seg := 1 + r.IntN(12)
		p := plan(ids, rsHead, seg)
		if p == nil {
			continue
		}
		if _, err := checkPlan(ids, p, rsHead, seg); err != nil {
			t.Fatalf("n %d, rs_head %d, seg %d, ids %v: %v", n, rsHead, seg, ids, err)
		}
	}
	// Forks: groups of four read their first's row (the first its own):
	// the lowest reader runs before the first, the other two share one copy.
	for _, n := range []int{8, 64, 256} {
		ids := make([]int32, n)
		for s := range ids {
			ids[s] = int32(3 + s - s%4)
		}
		copies, err := checkPlan(ids, plan(ids, 3, 8), 3, 8)
		if want := n / 4; err != nil || copies != want {
			t.Errorf("forks of four, n %d: %d rows copied (want %d), %v", n, copies, want, err)
		}
	}
	for _, n := range []int{2, 7, 32, 255, 256, 1024} {
		for _, seg := range []int{1, 3, 8, 1024} {
			ids := make([]int32, n)
			for s := range ids {
				ids[s] = int32(5 + (s+1)%n)
			}
			copies, err := checkPlan(ids, plan(ids, 5, seg), 5, seg)
			if want := (n + seg - 1) / seg; err != nil || copies != want {
				t.Errorf("rotation of %d, seg %d: %d rows copied (want %d), %v", n, seg, copies, want, err)
			}
		}
	}
}
