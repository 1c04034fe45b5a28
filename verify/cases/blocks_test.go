package cases

import (
	"fmt"
	"math/rand/v2"
	"testing"

	gen "github.com/kernelgen/kernelgen/generated/goref"
	"github.com/kernelgen/kernelgen/internal/tier"
	"github.com/kernelgen/kernelgen/ops"
)

// The block schedule (block gather, then the blocks compute) leaves
// state_dst and dst bit for bit as the two-phase one (gather, compute)
// does, over ids that make cycles, long paths and rows several sequences
// read, in blocks of NS sequences: only scratch and the plan differ. Many
// of the cases read a row of their own block without a copy.
func TestBlockScheduleMatchesTwoDispatches(t *testing.T) {
	t.Parallel()
	long := Size{MaxHeads: 2, MaxTokens: 2, MaxSeqs: 24, MaxChannels: 64}
	r := rand.New(rand.NewPCG(51, 52))
	inBlock, cases := 0, 0
	for _, v := range ops.VariantsOf(blocksOp) {
		for i := 0; i < 12; i++ {
			a := ops.Ariths()[i%len(ops.Ariths())]
			c, err := Random(blocksOp, a, r, long, &v)
			if err != nil {
				t.Fatal(err)
			}
			cases++
			compute := c.Launches[len(c.Launches)-1]
			two, err := twoDispatches(c, compute, ops.GatherOp, "gated_delta_net_inplace_ids", "sd1", func(name string) bool { return name != "plan" })
			if err != nil {
				t.Fatal(err)
			}
			for _, got := range two.Expected {
				if got.Name == "scratch" {
					continue
				}
				if want := expectedBuffer(c, got.Name); string(got.Bytes()) != string(want.Bytes()) {
					t.Fatalf("%s: buffer %s differs between the block schedule and gather + compute", c.Name, got.Name)
				}
			}
			n, rs := int(compute.Args["n_seqs"]), int32(compute.Args["rs_head"])
			plan, ids := expectedBuffer(c, "plan").I32, c.Buffer("ids").I32
			if !aliases(ids, int(rs)) {
				continue
			}
			for p := range n {
				if s := plan[p] >> 16; plan[p]&0xffff == 0 && ids[s] != rs+s && ids[s] >= rs && ids[s] < rs+int32(n) {
					inBlock++
				}
			}
		}
	}
	if cases == 0 {
		t.Fatal("no block schedule variant is built")
	}
	if inBlock < 100 {
		t.Errorf("only %d aliasing sequences read a row of their own block without a copy: too few to say anything", inBlock)
	}
}

// runPlanGather runs plan gather op (a chain gather or the block gather,
// arg its seg or block_len) over rows of one element, row i holding
// 100 + i, and returns the plan and scratch; nil where no source aliases.
// It fails t unless the plan is written exactly where some source does.
func runPlanGather(t *testing.T, op, arg string, value int, ids []int32, rsHead int) ([]int32, []float32) {
	t.Helper()
	const unwritten = -7
	out := make([]int32, len(ids))
	for i := range out {
		out[i] = unwritten
	}
	cache := make([]float32, rsHead+len(ids)+8)
	for i := range cache {
		cache[i] = float32(100 + i)
	}
	scratch := make([]float32, len(ids))
	err := gen.Run[op]("portable", map[string]int64{}, map[string]uint32{"row_len": 1, "n_seqs": uint32(len(ids)), "rs_head": uint32(rsHead), arg: uint32(value)},
		map[string]any{"cache": cache, "ids": ids, "plan": out, "scratch": scratch})
	if err != nil {
		t.Fatal(err)
	}
	written := aliases(ids, rsHead)
	for p, e := range out {
		if (e == unwritten) == written {
			t.Fatalf("%s: plan[%d] = %d where a source aliasing is %v: the plan is written exactly where some source aliases", op, p, e, written)
		}
	}
	if !written {
		return nil, nil
	}
	return out, scratch
}

// planIds are the i-th random ids of a plan test: up to 300 sequences (past
// 1000 every 20th, beyond what one workgroup plans) in a window of a pool a
// few slots larger, drawn to make cycles, paths and shared rows.
func planIds(r *rand.Rand, i int) ([]int32, int) {
	b := &builder{r: r, c: &Case{}}
	n := 1 + r.IntN(300)
	if i%20 == 0 {
		n = 1000 + r.IntN(100)
	}
	slots := n + r.IntN(4)
	rsHead := r.IntN(slots - n + 1)
	return b.chainIds("ids", n, slots, rsHead).I32, rsHead
}

func aliases(ids []int32, rsHead int) bool {
	for s, id := range ids {
		if t := int(id) - rsHead; t >= 0 && t < len(ids) && t != s {
			return true
		}
	}
	return false
}

// checkBlockPlan checks a block plan (ops/chain.go) against ids: plan[p]
// = s << 16 | from places every sequence at exactly one position; a
// sequence reading another's row of the window either reads it from
// scratch (row t from scratch row t, once however many read it; past the
// planned size each its own) or has that sequence in its own block of
// `block` positions; only such sequences read scratch. It returns how many
// rows are copied.
func checkBlockPlan(ids, plan []int32, rsHead, block int) (copies int, err error) {
	n := len(ids)
	pos := make([]int, n)
	for s := range pos {
		pos[s] = -1
	}
	for p, e := range plan {
		s := int(e >> 16)
		if e < 0 || s >= n {
			return 0, fmt.Errorf("plan[%d] = %#x: not s << 16 | from with s < %d", p, e, n)
		}
		if pos[s] >= 0 {
			return 0, fmt.Errorf("sequence %d is at positions %d and %d", s, pos[s], p)
		}
		pos[s] = p
	}
	copied := map[int]bool{}
	for p, e := range plan {
		s, from := int(e>>16), int(e&0xffff)-1
		t := int(ids[s]) - rsHead
		aliasing := t >= 0 && t < n && t != s
		switch {
		case from >= 0 && !aliasing:
			return 0, fmt.Errorf("sequence %d reads scratch but its source %d is not another's row", s, ids[s])
		case from >= 0:
			want := t
			if n > 1024 {
				want = s
			}
			if from != want {
				return 0, fmt.Errorf("sequence %d reads row %d from scratch row %d, not %d", s, t, from, want)
			}
			copied[from] = true
		case aliasing && pos[t]/block != p/block:
			return 0, fmt.Errorf("sequence %d (position %d) reads row %d, which block %d writes, and not from scratch", s, p, t, pos[t]/block)
		}
	}
	return len(copied), nil
}

// The block gather lays out a valid schedule for every ids pattern, up to
// past what one workgroup plans, and copies no more than it must: a
// rotation of n in blocks of b copies one row per block boundary, and
// forks of four within a block copy nothing. Every scratch row a sequence
// reads holds its source row.
func TestBlockPlanIsASchedule(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(61, 62))
	plan := func(ids []int32, rsHead, block int) []int32 {
		out, scratch := runPlanGather(t, blockGatherOp, "block_len", block, ids, rsHead)
		for _, e := range out {
			s := e >> 16
			if r := int(e&0xffff) - 1; r >= 0 && scratch[r] != float32(100+ids[s]) {
				t.Fatalf("n %d, block %d: sequence %d reads scratch row %d, which holds %v, not its source row %d", len(ids), block, s, r, scratch[r], ids[s])
			}
		}
		return out
	}
	for i := 0; i < tier.Pick(40, 300); i++ {
		ids, rsHead := planIds(r, i)
		n := len(ids)
		block := 1 + r.IntN(40)
		p := plan(ids, rsHead, block)
		if p == nil {
			continue
		}
		if _, err := checkBlockPlan(ids, p, rsHead, block); err != nil {
			t.Fatalf("n %d, rs_head %d, block %d, ids %v: %v", n, rsHead, block, ids, err)
		}
	}
	for _, n := range []int{8, 64, 256} {
		ids := make([]int32, n)
		for s := range ids {
			ids[s] = int32(3 + s - s%4)
		}
		copies, err := checkBlockPlan(ids, plan(ids, 3, 16), 3, 16)
		if err != nil || copies != 0 {
			t.Errorf("forks of four, n %d, blocks of 16: %d rows copied (want 0), %v", n, copies, err)
		}
	}
	for _, n := range []int{2, 7, 32, 255, 256, 1024} {
		for _, block := range []int{1, 3, 16, 1024} {
			ids := make([]int32, n)
			for s := range ids {
				ids[s] = int32(5 + (s+1)%n)
			}
			copies, err := checkBlockPlan(ids, plan(ids, 5, block), 5, block)
			// a cycle in one block copies nothing; else one row per block
			want := (n + block - 1) / block
			if want == 1 {
				want = 0
			}
			if err != nil || copies != want {
				t.Errorf("rotation of %d, blocks of %d: %d rows copied (want %d), %v", n, block, copies, want, err)
			}
		}
	}
}
