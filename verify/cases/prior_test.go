package cases

import (
	"math/rand/v2"
	"testing"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// A buffer one launch of a case writes and a later launch reads is marked
// Prior in the later kernel. With programmatic dependent launch (CUDA) the
// later kernel starts while the earlier one runs; a read-only (const
// restrict) pointer would let nvcc load it before the kernel's wait, and
// only Prior buffers are kept off it (ir.Buffer.Prior). A buffer the
// later kernel writes too is never declared const, and the wait's memory
// clobber keeps its loads behind the wait (op B's split by aliasing: the
// chained compute reads state_dst, which the batched dispatch writes).
func TestLaterLaunchesMarkWhatEarlierOnesWrite(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	sz := Size{MaxHeads: 2, MaxTokens: 2, MaxSeqs: 6, MaxChannels: 64}
	pairs := map[string]int{} // later kernel: buffers checked
	for _, op := range ops.All() {
		for i := 0; i < 6; i++ {
			a := ops.Ariths()[i%len(ops.Ariths())]
			c, err := Random(op.Name, a, r, sz, nil)
			if err != nil {
				t.Fatal(err)
			}
			written := map[string]string{} // case buffer: the kernel that wrote it
			for _, l := range c.Launches {
				for bi, kb := range l.Kernel.Buffers {
					by, ok := written[l.Bind[bi]]
					if !ok || kb.Access != ir.Read {
						continue
					}
					pairs[l.Kernel.Name]++
					if !kb.Prior {
						t.Errorf("%s: %s reads buffer %s, which %s wrote in the launch before, but does not mark it Prior", c.Name, l.Kernel.Name, kb.Name, by)
					}
				}
				for bi, kb := range l.Kernel.Buffers {
					if kb.Access != ir.Read {
						written[l.Bind[bi]] = l.Kernel.Name
					}
				}
			}
		}
	}
	// The four ids compute kernels (two-phase and chained, ops B and D)
	// each read what their gather wrote.
	if len(pairs) < 4 {
		t.Errorf("only %d kernels read what an earlier launch wrote (%v): the cases no longer cover the ids ops' gathers", len(pairs), pairs)
	}
}

// TestOpBSnapshotsAreTheBaseOps: the snapshot slots of op B with slots
// (ops.SlotsOp, the graph fusion's, ops/fusion) hold what the base op's KEEP_RS slots hold, bit
// for bit on the Go reference, under every contract; the final state too.
func TestOpBSnapshotsAreTheBaseOps(t *testing.T) {
	checkSlotsOp(t, ops.SlotsOp, 4, "n_tokens", nil)
}

// TestOpDSnapshotsAreTheGraphsCopies: op D with slots (ops.ConvSlotsOp,
// the graph fusion's) gives, on the Go reference and under every
// contract, the bits of the unfused chain llama.cpp builds: SSM_CONV over
// the CONCAT of the gathered taps and the T tokens, and in slot i the
// CONCAT's view of the d_conv-1 taps from token offset T-i.
func TestOpDSnapshotsAreTheGraphsCopies(t *testing.T) {
	var variants []ops.Variant
	for _, v := range ops.VariantsOf(ops.ConvSlotsOp) {
		if v.Values["SILU"] == 0 { // ggml applies SiLU as a node of its own
			variants = append(variants, v)
		}
	}
	checkSlotsOp(t, ops.ConvSlotsOp, 3, "n_t", variants)
}

// checkSlotsOp runs 24 random cases of a slots op (variants in turn, if
// any) under every contract on the Go reference and checks each against
// its unfused graph (AddUnfused), bit for bit; at least 5 of them must
// write a slot past the last one (K > 1 over more than one token, the
// tokens counted by the arg tokens).
func checkSlotsOp(t *testing.T, op string, seed uint64, tokens string, variants []ops.Variant) {
	t.Helper()
	r := rand.New(rand.NewPCG(44, seed))
	sz := Small
	sz.MaxTokens = 4
	slots := 0
	for i := 0; i < 24; i++ {
		a := ops.Ariths()[i%len(ops.Ariths())]
		var v *ops.Variant
		if len(variants) > 0 {
			v = &variants[i%len(variants)]
		}
		c, err := Random(op, a, r, sz, v)
		if err != nil {
			t.Fatal(err)
		}
		check, err := AddUnfused(c, a.Backend)
		if err != nil {
			t.Fatal(err)
		}
		c.Expected = nil
		if err := c.runReference(); err != nil {
			t.Fatal(err)
		}
		got := map[string][]byte{}
		for _, b := range c.Expected {
			got[b.Name] = b.Bytes()
		}
		l := c.Launches[1]
		if l.Args["K"] > 1 && l.Args[tokens] > 1 {
			slots++
		}
		if err := check(got); err != nil {
			t.Errorf("%s (K %d, T %d): %v", c.Name, l.Args["K"], l.Args[tokens], err)
		}
	}
	if slots < 5 {
		t.Errorf("only %d cases wrote a snapshot slot", slots)
	}
}
