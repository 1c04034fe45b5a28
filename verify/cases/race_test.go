package cases

import (
	"math/rand/v2"
	"testing"

	"github.com/kernelgen/kernelgen/internal/tier"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/verify/interp"
)

// The one-dispatch kernels share nothing between threads but through their
// barrier, and the chained schedules nothing between workgroups, whatever
// the ids: the interpreter's race check (its schedule
// alone would hide a read that comes after another thread's write). Op B's
// later slots run with no barrier, so they must read only their own rows,
// the cache outside the window and what they staged; slot 0 and op D read
// before the barrier and write after it.
func TestIdsSchedulesHaveNoDataRaces(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(25, 26))
	sz := Size{MaxHeads: 2, MaxTokens: 3, MaxSeqs: 64, WindowIds: true}
	// cases per shape; the evidence asked for (sequences that read another
	// sequence's destination) scales with it
	reps := tier.Pick(4, 10)
	i := 0
	// run races the case's launches, returning its sequences that read
	// another sequence's destination
	run := func(c *Case) int {
		state := map[string]*Buffer{}
		for _, b := range c.Buffers {
			state[b.Name] = b.Clone()
		}
		for _, l := range c.Launches {
			p, err := interp.Compile(l.Kernel)
			if err != nil {
				t.Fatal(err)
			}
			p.CheckRaces = true
			bufs := map[string]any{}
			for bi, kb := range l.Kernel.Buffers {
				if b := state[l.Bind[bi]]; b.Elem == ir.I32 {
					bufs[kb.Name] = b.I32
				} else {
					bufs[kb.Name] = b.F32
				}
			}
			if err := p.Run(l.Params, l.Args, bufs); err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
		}
		n, rs, aliasing := int32(c.Launches[0].Args["n_seqs"]), int32(c.Launches[0].Args["rs_head"]), 0
		for s, id := range c.Buffer("ids").I32 {
			if id != rs+int32(s) && id >= rs && id < rs+n {
				aliasing++
			}
		}
		return aliasing
	}
	for _, spt := range []int{1, 2, 3, 4, 8} {
		aliasing := 0
		nss := []int{2, 4}
		if spt == 2 {
			nss = append(nss, 10) // rows that are not a power of two, as the tiers' 10, 12, 20, 24
		}
		for _, ns := range nss {
			for range reps {
				a := ops.Ariths()[i%len(ops.Ariths())]
				v := ops.V(batchedOp, "S_v", 16<<(i%2), "KDA", i%3 == 0, "NW", 1+r.IntN(2), "CPW", 1+r.IntN(2), "NS", ns, "SPT", spt, "SPLIT", i%2 == 0)
				i++
				c, err := Random(batchedOp, a, r, sz, &v)
				if err != nil {
					t.Fatal(err)
				}
				aliasing += run(c)
			}
		}
		t.Logf("SPT %d: %d sequences read another's destination", spt, aliasing)
		if aliasing < reps*spt {
			t.Errorf("SPT %d: %d sequences read another's destination: too few to say anything", spt, aliasing)
		}
	}
	// op B's block schedule in blocks of 2 and 4 (its launches ordered):
	// a block's rows read before its barrier, write after, and read
	// across blocks only what the block gather copied
	blockCases := Size{MaxHeads: 2, MaxTokens: 2, MaxSeqs: 10, MaxChannels: 64}
	aliasing := 0
	for range 2 * reps {
		v := ops.V(blocksOp, "S_v", 16<<(i%2), "KDA", i%3 == 0, "NW", 2<<(i%2), "CPW", 1+r.IntN(2))
		c, err := Random(blocksOp, ops.Ariths()[i%len(ops.Ariths())], r, blockCases, &v)
		i++
		if err != nil {
			t.Fatal(err)
		}
		aliasing += run(c)
	}
	t.Logf("%s: %d sequences read another's destination", blocksOp, aliasing)
	if aliasing < reps {
		t.Errorf("%s: %d sequences read another's destination: too few to say anything", blocksOp, aliasing)
	}
	// op D's one-dispatch kernel, and the chained schedules of both ops,
	// whose workgroups read across segments only what the chain gather
	// copied (its launch is checked too; launches are ordered)
	long := Size{MaxHeads: 2, MaxTokens: 2, MaxSeqs: 10, MaxChannels: 64}
	for _, x := range []struct {
		op string
		sz Size
	}{{convBatchedOp, Small}, {chainedOp, long}, {convChainedOp, long}} {
		aliasing := 0
		for range 2 * reps {
			c, err := Random(x.op, ops.Ariths()[i%len(ops.Ariths())], r, x.sz, nil)
			i++
			if err != nil {
				t.Fatal(err)
			}
			aliasing += run(c)
		}
		t.Logf("%s: %d sequences read another's destination", x.op, aliasing)
		if aliasing < reps {
			t.Errorf("%s: %d sequences read another's destination: too few to say anything", x.op, aliasing)
		}
	}
}
