package cases

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernelgen/kernelgen/internal/tier"
	"github.com/kernelgen/kernelgen/ops"
)

// Every op builds cases under every contract, and the reference's own output
// passes Compare while a one-bit change does not.
func TestCasesBuildAndCompare(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for _, op := range ops.All() {
		for _, a := range ops.Ariths() {
			c, err := Random(op.Name, a, r, Small, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]byte{}
			for _, b := range c.Expected {
				got[b.Name] = b.Bytes()
			}
			if err := c.Compare(got); err != nil {
				t.Fatalf("reference vs itself: %v", err)
			}
			out := c.Expected[len(c.Expected)-1]
			bad := got[out.Name]
			bad[0] ^= 1
			if !a.Native {
				if err := c.Compare(got); err == nil {
					t.Errorf("%s: a flipped bit in %s passed", c.Name, out.Name)
				}
			}
		}
	}
}

// A guarded launch (ops.Guard: the gathers at one sequence) changes nothing:
// over random cases of every op that launches one, the Go reference leaves
// the same bits in every buffer with the launch left out. The same
// comparison does see a needed gather removed (the check has teeth).
func TestGuardedLaunchesChangeNothing(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(11, 12))
	cases := tier.Pick(60, 300) // per op; the evidence asked for scales with it
	for _, op := range ops.All() {
		skipped, teeth := 0, 0
		for i := 0; i < cases; i++ {
			c, err := Random(op.Name, ops.Ariths()[0], r, Small, nil)
			if err != nil {
				t.Fatal(err)
			}
			for li, l := range c.Launches {
				if l.Op.Guard == nil {
					continue
				}
				args := map[string]int64{}
				for n, v := range l.Args {
					args[n] = int64(v)
				}
				without := &Case{Name: c.Name, Arith: c.Arith, Buffers: c.Buffers,
					Launches: append(append([]Launch{}, c.Launches[:li]...), c.Launches[li+1:]...)}
				if err := without.runReference(); err != nil {
					t.Fatal(err)
				}
				same := true
				for bi, b := range c.Expected {
					if string(b.Bytes()) != string(without.Expected[bi].Bytes()) {
						same = false
						if !l.Op.Needed(args) {
							t.Errorf("%s: without %s (%s = %d), buffer %s differs", c.Name, l.Op.Name, l.Op.Guard.Arg, args[l.Op.Guard.Arg], b.Name)
						}
					}
				}
				if !l.Op.Needed(args) {
					skipped++
				} else if !same {
					teeth++
				}
			}
		}
		if skipped+teeth > 0 {
			t.Logf("%s: %d cases where a guard left the gather out, unchanged; %d where leaving a needed gather out shows", op.Name, skipped, teeth)
			if enough := 20 * cases / 300; skipped < enough || teeth < enough {
				t.Errorf("%s: %d guarded and %d needed gathers: too few to say anything", op.Name, skipped, teeth)
			}
		}
	}
}

// Ops B's and D's batched schedules (one dispatch, glue.Schedules) leave the
// same bits as their two dispatches, gather then compute, over random cases
// of every contract, including sources that are another sequence's
// destination and (op B) cases without tokens.
func TestBatchedScheduleMatchesTwoDispatches(t *testing.T) {
	t.Parallel()
	for _, x := range []struct {
		batched, gather, compute, rowArg string
		noTokens                         int // cases without tokens required
	}{
		{batchedOp, ops.GatherOp, "gated_delta_net_inplace_ids", "sd1", 5},
		{convBatchedOp, ops.GatherOp, "ssm_conv_update_inplace_ids", "cs2", 0},
	} {
		r := rand.New(rand.NewPCG(21, 22))
		aliasing, noTokens, split := 0, 0, 0
		for i := 0; i < 200; i++ {
			a := ops.Ariths()[i%len(ops.Ariths())]
			c, err := Random(x.batched, a, r, Small, nil)
			if err != nil {
				t.Fatal(err)
			}
			one := c.Launches[0]
			two, err := twoDispatches(c, one, x.gather, x.compute, x.rowArg, func(string) bool { return true })
			if err != nil {
				t.Fatal(err)
			}
			n := int(one.Args["n_seqs"])
			for _, want := range c.Expected {
				if want.Name == "scratch" { // the split schedule's, never written
					continue
				}
				var got *Buffer
				for _, y := range two.Expected {
					if y.Name == want.Name {
						got = y
					}
				}
				if string(got.Bytes()) != string(want.Bytes()) {
					t.Fatalf("%s: buffer %s differs between the batched dispatch and gather + compute", c.Name, want.Name)
				}
			}
			if one.Args["n_tokens"] == 0 && x.batched == batchedOp {
				noTokens++
			}
			if one.Params["SPLIT"] == 1 {
				split++
			}
			ids, rs := c.Buffer("ids").I32, int32(one.Args["rs_head"])
			for s, id := range ids {
				if id != rs+int32(s) && id >= rs && id < rs+int32(n) {
					aliasing++
				}
			}
		}
		if aliasing < 50 || noTokens < x.noTokens || x.batched == batchedOp && split < 20 {
			t.Errorf("%s: only %d sequences read another's destination, %d cases have no tokens, %d split by aliasing: too few to say anything", x.batched, aliasing, noTokens, split)
		}
	}
}

// The batched kernel with SPT sequences per row of threads (row z runs
// sequences z + j*NS) leaves the bits of gather + compute, built off the
// variant table at every SPT with small shapes and every n_seqs up to
// NS*SPT, over every contract: each sequence's arithmetic is SPT 1's, and
// every slot's prior state is read before any final state is written.
func TestBatchedSequencesPerThreadMatchTwoDispatches(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(23, 24))
	sz := Size{MaxHeads: 2, MaxTokens: 3, MaxSeqs: 64, WindowIds: true} // n_seqs up to NS*SPT
	i := 0
	for _, spt := range []int{1, 2, 3, 4, 8} {
		lastSlot, full, aliasing, staged, noTokens := 0, 0, 0, 0, 0
		nss := []int{2, 4}
		if spt <= 2 {
			nss = append(nss, 10) // rows that are not a power of two (the tiers' 10, 12, 20, 24)
		}
		for _, ns := range nss {
			for _, sv := range []int{16, 32} {
				for _, kda := range []bool{false, true} {
					for range 8 + 2*spt {
						a := ops.Ariths()[i%len(ops.Ariths())]
						i++
						v := ops.V(batchedOp, "S_v", sv, "KDA", kda, "NW", 1+r.IntN(2), "CPW", 1+r.IntN(2), "NS", ns, "SPT", spt, "SPLIT", i%3 == 0)
						c, err := Random(batchedOp, a, r, sz, &v)
						if err != nil {
							t.Fatal(err)
						}
						one := c.Launches[0]
						two, err := twoDispatches(c, one, ops.GatherOp, "gated_delta_net_inplace_ids", "sd1", func(string) bool { return true })
						if err != nil {
							t.Fatal(err)
						}
						for _, want := range c.Expected {
							if want.Name == "scratch" { // the split schedule's, never written
								continue
							}
							if got := expectedNamed(two, want.Name); got == nil || string(got.Bytes()) != string(want.Bytes()) {
								t.Fatalf("%s: buffer %s differs between the batched dispatch and gather + compute", c.Name, want.Name)
							}
						}
						n := int(one.Args["n_seqs"])
						if n > ns*(spt-1) {
							lastSlot++
						}
						if n == ns*spt {
							full++
						}
						if one.Args["n_tokens"] == 0 {
							noTokens++
						}
						ids, rs := c.Buffer("ids").I32, int32(one.Args["rs_head"])
						for s, id := range ids {
							if id != rs+int32(s) && id >= rs && id < rs+int32(n) {
								aliasing++
							}
							if s >= ns && id != rs+int32(s) && id >= rs && id < rs+int32(n) { // a later slot's: staged
								staged++
							}
						}
					}
				}
			}
		}
		t.Logf("SPT %d: %d cases reach the last slot, %d fill the workgroup, %d sequences read another's destination (%d staged), %d cases have no tokens", spt, lastSlot, full, aliasing, staged, noTokens)
		if lastSlot < 10 || full < 3 || aliasing < 40*spt || staged < 40*(spt-1) || noTokens < 3 {
			t.Errorf("SPT %d: %d cases reach the last slot, %d fill the workgroup, %d sequences read another's destination (%d staged), %d cases have no tokens: too few to say anything",
				spt, lastSlot, full, aliasing, staged, noTokens)
		}
	}
}

// twoDispatches is case c's op as gather then compute, from the launch of
// another schedule of it (its args; its params but NS and SPT): c's buffers that
// keep names (scratch added afresh), run on the Go reference.
// Split by aliasing (ops.Batch.Aliased), the batched kernel runs at most
// 256 workgroups, each taking (head, column block) tiles 256 apart: with
// more tiles than that (heads x S_v / (NW*CPW)) every tile is still run
// once, and the step leaves the bits of gather + compute.
func TestSplitBatchedTilesMatchTwoDispatches(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(25, 26))
	sz := Size{MaxHeads: 40, MaxTokens: 2, MaxSeqs: 8, WindowIds: true}
	strided, aliasing := 0, 0
	for i := 0; strided < 12 && i < 400; i++ {
		a := ops.Ariths()[i%len(ops.Ariths())]
		v := ops.V(batchedOp, "S_v", 16, "KDA", i%2 == 0, "NW", 1, "CPW", 1, "NS", 4, "SPT", 2, "SPLIT", true)
		c, err := Random(batchedOp, a, r, sz, &v)
		if err != nil {
			t.Fatal(err)
		}
		one := c.Launches[0]
		if one.Args["H"]*16 <= 256 {
			continue
		}
		strided++
		two, err := twoDispatches(c, one, ops.GatherOp, "gated_delta_net_inplace_ids", "sd1", func(string) bool { return true })
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range c.Expected {
			if want.Name == "scratch" {
				continue
			}
			if got := expectedNamed(two, want.Name); got == nil || string(got.Bytes()) != string(want.Bytes()) {
				t.Fatalf("%s: buffer %s differs between the split schedule and gather + compute", c.Name, want.Name)
			}
		}
		ids, rs, n := c.Buffer("ids").I32, int32(one.Args["rs_head"]), int32(one.Args["n_seqs"])
		for s, id := range ids {
			if id != rs+int32(s) && id >= rs && id < rs+n {
				aliasing++
			}
		}
	}
	if strided < 12 || aliasing < 10 {
		t.Errorf("%d split cases with more than 256 tiles, %d aliasing sequences: too few to say anything", strided, aliasing)
	}
}

// expectedNamed is c's expected buffer named name, or nil.
func expectedNamed(c *Case, name string) *Buffer {
	for _, b := range c.Expected {
		if b.Name == name {
			return b
		}
	}
	return nil
}

func twoDispatches(c *Case, from Launch, gather, compute, rowArg string, keep func(name string) bool) (*Case, error) {
	vals := map[string]int64{}
	for k, v := range from.Params {
		if k != "NS" && k != "SPT" {
			vals[k] = v
		}
	}
	two := &Case{Name: c.Name, Arith: c.Arith}
	for _, buf := range c.Buffers {
		if buf.Name != "scratch" && keep(buf.Name) {
			two.Buffers = append(two.Buffers, buf.Clone())
		}
	}
	b := &builder{vals: vals, c: two}
	n, rowLen := int(from.Args["n_seqs"]), int(from.Args[rowArg])
	b.untouched("scratch", n*rowLen)
	args := map[string]int64{}
	for k, v := range from.Args {
		args[k] = int64(v)
	}
	if _, ok := from.Args["scale"]; ok {
		args["scale"] = f32arg(math.Float32frombits(from.Args["scale"]))
	}
	if err := b.launch(gather, map[string]int64{"row_len": int64(rowLen), "n_seqs": int64(n), "rs_head": args["rs_head"]}, nil); err != nil {
		return nil, err
	}
	if err := b.launch(compute, args, nil); err != nil {
		return nil, err
	}
	return two, two.runReference()
}

// The conv-update cases reach SiLU's ends (convEdges): outputs of -0 (e^-y
// overflowed), tiny negatives (a denominator scaled into DivPortable's
// domain) and +Inf; their inputs being finite, the portable contract makes
// no NaN (native ones do, as y / (1 + exp(-y)) does at y = -Inf).
func TestConvCasesReachSiluEdges(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	for _, op := range []string{"ssm_conv_update_inplace", "ssm_conv_update_inplace_ids", "ssm_conv_update_inplace_ids_batched"} {
		for _, a := range ops.Ariths() {
			seen := map[string]int{}
			for _, v := range ops.VariantsOf(op) {
				if v.Values["SILU"] != 1 {
					continue
				}
				for i := 0; i < 10; i++ {
					v := v
					c, err := Random(op, a, r, Small, &v)
					if err != nil {
						t.Fatal(err)
					}
					for _, b := range c.Expected {
						for _, y := range b.F32 {
							switch {
							case math.IsNaN(float64(y)) && math.Float32bits(y) != math.Float32bits(sentinel):
								seen["NaN"]++
							case b.Name != "dst":
							case math.Float32bits(y) == 0x80000000:
								seen["-0"]++
							case y < 0 && y > -1.5e-36:
								seen["scaled"]++
							case math.IsInf(float64(y), 1):
								seen["+Inf"]++
							}
						}
					}
				}
			}
			if !a.Native {
				if seen["NaN"] > 0 {
					t.Errorf("%s %s: %d NaNs in the expected buffers", op, a, seen["NaN"])
				}
				for _, k := range []string{"-0", "scaled", "+Inf"} {
					if seen[k] == 0 {
						t.Errorf("%s %s: no SiLU output of kind %s (got %v)", op, a, k, seen)
					}
				}
			}
		}
	}
}
