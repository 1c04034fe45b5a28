package fusion

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernelgen/kernelgen/internal/tier"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/ops/fusion"
)

var reference = fusion.Backend{Buffers: []string{"cache", "compute", "input", "weights"}}

// idsOf draws s_copy_main for n sequences from rows [0, mem) with the
// window at kv: identity, a rotation of the window, one row every sequence
// reads, rows outside the window, or a mixture.
func idsOf(kind string, n, mem, kv int, r *rand.Rand) []int32 {
	ids := make([]int32, n)
	for s := range ids {
		switch kind {
		case "identity":
			ids[s] = int32(kv + s)
		case "rotation":
			ids[s] = int32(kv + (s+1)%n)
		case "shared":
			ids[s] = int32(kv + n/2)
		case "outside":
			ids[s] = int32((kv + n + s) % mem)
		default:
			ids[s] = int32(r.IntN(mem))
		}
	}
	return ids
}

// compare is "" where both memories hold the same bits in every root the
// fused run must leave as the unfused one does: every root but the fused
// nodes' (their memory is scratch or unwritten) unless it is an output, and
// the GDN's attention.
func compare(b *fusion.Built, matches []*fusion.Match, got, want *Memory) string {
	fused := map[*fusion.Tensor]bool{}
	for _, m := range matches {
		for _, t := range m.Fused {
			if t != m.Bound["out"] {
				fused[t] = true
			}
		}
	}
	for root, w := range want.F32 {
		g := got.F32[root]
		n := len(w)
		if root.Op == "GATED_DELTA_NET" {
			v := root.Src[2]
			n = int(v.Ne[0] * v.Ne[1] * v.Ne[2] * v.Ne[3]) // the attention; the state region is scratch
		} else if fused[root] && !root.Output {
			continue
		}
		for i := 0; i < n; i++ {
			if math.Float32bits(g[i]) != math.Float32bits(w[i]) {
				return fmt.Sprintf("%s[%d]: fused %v, unfused %v", root.Name, i, g[i], w[i])
			}
		}
	}
	return ""
}

func runBoth(t *testing.T, c Contract, l fusion.Layer, ids []int32, seed uint64) {
	t.Helper()
	if d := fusedVsUnfused(t, c, l, ids, seed, nil); d != "" {
		t.Fatalf("%s %+v ids %v: %s", c.Arith, l, ids, d)
	}
}

// fusedVsUnfused runs both ways; edit, when set, changes the fused run's
// memory before the comparison.
func fusedVsUnfused(t *testing.T, c Contract, l fusion.Layer, ids []int32, seed uint64, edit func(*fusion.Built, *Memory)) string {
	t.Helper()
	b := l.Build()
	be := reference
	be.Target = c.Target
	state, r1 := fusion.StatePattern.Find(b.G, be)
	conv, r2 := fusion.ConvPattern.Find(b.G, be)
	if len(state) != 1 || len(conv) != 1 {
		t.Fatalf("%+v: refused %v %v", l, r1, r2)
	}
	matches := append(state, conv...)
	want := NewMemory(b.G, seed)
	copy(want.I32[b.Ids], ids)
	got := want.Clone()
	if err := c.RunUnfused(b.G, want); err != nil {
		t.Fatal(err)
	}
	if err := c.RunFused(b.G, got, matches); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(b, got)
	}
	return compare(b, matches, got, want)
}

// TestTheComparisonSeesWrongFusions: without the gathers, ids that rotate
// the window read rows already written; one bit flipped in a cache row
// outside the window is seen too.
func TestTheComparisonSeesWrongFusions(t *testing.T) {
	l := fusion.Layer{SV: 64, H: 1, HK: 1, Seqs: 3, T: 1, K: 1, DConv: 3, C: 16, MemSize: 6, KVHead: 1, RowZero: -1}
	ids := idsOf("rotation", 3, 6, 1, nil)
	if d := fusedVsUnfused(t, Contract{Arith: ir.Portable, noGather: true}, l, ids, 1, nil); d == "" {
		t.Error("the fused run without its gathers gave the unfused results")
	} else {
		t.Log(d)
	}
	for _, cache := range []func(b *fusion.Built) *fusion.Tensor{
		func(b *fusion.Built) *fusion.Tensor { return b.StateCache },
		func(b *fusion.Built) *fusion.Tensor { return b.ConvCache },
	} {
		d := fusedVsUnfused(t, Contract{Arith: ir.Portable}, l, ids, 1, func(b *fusion.Built, m *Memory) {
			x := m.F32[cache(b)]
			x[len(x)-1] = math.Float32frombits(math.Float32bits(x[len(x)-1]) ^ 1) // the last row, outside the window
		})
		if d == "" {
			t.Error("a flipped bit outside the window went unseen")
		}
	}
}

// TestFusedEqualsUnfused: llama.cpp's decode step run node by node and with
// both patterns dispatched as ops B and D give the same bits in the
// outputs and in every byte of both caches, rows outside the window too.
func TestFusedEqualsUnfused(t *testing.T) {
	r := rand.New(rand.NewPCG(44, 1))
	c := Contract{Arith: ir.Portable}
	seqs := []int{1, 2, 3, 5, 8}
	if tier.Full() {
		seqs = append(seqs, 16, 33, 64)
	}
	i := 0
	for _, n := range seqs {
		for _, dc := range []int{2, 3, 4} {
			for _, ids := range []string{"identity", "rotation", "shared", "outside", "mixed"} {
				i++
				sv := []int{64, 128}[i%2]
				h, hk := []int{1, 2, 4}[i%3], 1
				if h%2 == 0 && i%4 < 2 {
					hk = h / 2 // GQA
				}
				mem := n + 1 + r.IntN(4)
				kv := r.IntN(mem - n + 1)
				l := fusion.Layer{SV: sv, H: h, HK: hk, KDA: i%5 == 0, Bias: i%7 == 0, Seqs: n, T: 1, K: 1,
					DConv: dc, C: 8 + 8*r.IntN(8), MemSize: mem, KVHead: kv, RowZero: r.IntN(mem+1) - 1}
				if n == 64 {
					l.H, l.HK, l.SV = 1, 1, 64
				}
				t.Run(fmt.Sprintf("n%d_dconv%d_%s_sv%d", n, dc, ids, sv), func(t *testing.T) {
					runBoth(t, c, l, idsOf(ids, n, mem, kv, r), uint64(i))
				})
			}
		}
	}
}

// TestFusedEqualsUnfusedUnderEveryContract: the same under each backend's
// native contract, on its own variants.
func TestFusedEqualsUnfusedUnderEveryContract(t *testing.T) {
	r := rand.New(rand.NewPCG(44, 2))
	for _, tg := range ops.Targets() {
		c := Contract{Arith: ir.Native(tg.Name), Target: tg.Name}
		for _, kind := range []string{"rotation", "mixed"} {
			l := fusion.Layer{SV: 64, H: 2, HK: 1, Seqs: 3, T: 1, K: 1, DConv: 4, C: 16, MemSize: 6, KVHead: 2, RowZero: -1}
			t.Run(c.Arith.String()+"_"+kind, func(t *testing.T) { runBoth(t, c, l, idsOf(kind, 3, 6, 2, r), 3) })
		}
	}
}

// TestSnapshotsFusedEqualUnfused: with K > 1 snapshot slots (MTP) op B
// and op D with slots write every slot in place, so both patterns stay
// fused and both caches, slot rows included, are the graph's bit for bit
// (the conv's SILU fused, or after a bias); a step of fewer tokens than
// slots is refused by both. Under the portable contract and every
// backend's native one.
func TestSnapshotsFusedEqualUnfused(t *testing.T) {
	r := rand.New(rand.NewPCG(44, 3))
	contracts := []Contract{{Arith: ir.Portable}}
	for _, tg := range ops.Targets() {
		contracts = append(contracts, Contract{Arith: ir.Native(tg.Name), Target: tg.Name})
	}
	i := 0
	for _, k := range []int{2, 3, 4} {
		for _, tok := range []int{k - 1, k, k + 1} {
			for _, kind := range []string{"rotation", "shared", "mixed"} {
				i++
				c := contracts[i%len(contracts)]
				l := fusion.Layer{SV: 64, H: 2, HK: 1, KDA: k == 3, Bias: i%4 == 0, Seqs: 3, T: tok, K: k, DConv: 2 + i%3, C: 16, MemSize: 5, KVHead: 1, RowZero: -1}
				b := l.Build()
				be := reference
				be.Target = c.Target
				state, _ := fusion.StatePattern.Find(b.G, be)
				conv, _ := fusion.ConvPattern.Find(b.G, be)
				fused := map[bool]int{true: 1, false: 0}[tok >= k]
				if len(conv) != fused || len(state) != fused {
					t.Fatalf("K %d T %d: %d state, %d conv matches", k, tok, len(state), len(conv))
				}
				matches := append(state, conv...)
				before := NewMemory(b.G, 5)
				copy(before.I32[b.Ids], idsOf(kind, 3, 5, 1, r))
				want, got := before.Clone(), before.Clone()
				if err := c.RunUnfused(b.G, want); err != nil {
					t.Fatal(err)
				}
				if err := c.RunFused(b.G, got, matches); err != nil {
					t.Fatal(err)
				}
				if d := compare(b, matches, got, want); d != "" {
					t.Fatalf("%s K %d T %d %s: %s", c.Arith, k, tok, kind, d)
				}
				// the oldest written slot reached both caches
				D, R := l.SV*l.SV*l.H, (l.DConv-1)*l.C
				slot := min(k, tok) - 1
				for _, x := range []struct {
					cache *fusion.Tensor
					row   int
				}{{b.StateCache, D}, {b.ConvCache, R}} {
					at := (l.KVHead + slot*l.MemSize) * x.row
					if math.Float32bits(want.F32[x.cache][at]) == math.Float32bits(before.F32[x.cache][at]) {
						t.Errorf("K %d T %d: snapshot slot %d was not copied into %s", k, tok, slot, x.cache.Name)
					}
				}
			}
		}
	}
}

// TestSecondReadersSeeAWrongFusion: test-backend-ops' GDN_DECODE_STEP cases
// whose intermediate another node reads, or that is an output (its
// "extra"), are refused, and run with the other pattern fused they give the
// unfused graph's bits; fused anyway (the matches of the graph without that
// reader), the reader, or the output, sees the difference.
func TestSecondReadersSeeAWrongFusion(t *testing.T) {
	c := Contract{Arith: ir.Portable}
	l := fusion.Layer{SV: 64, H: 4, HK: 2, Seqs: 4, T: 1, K: 1, DConv: 4, C: 16, MemSize: 9, KVHead: 1, RowZero: -1}
	ids := idsOf("rotation", 4, 9, 1, nil)
	for extra, edit := range map[string]func(b *fusion.Built){
		"rows-read":   func(b *fusion.Built) { peek(b, "state_rows") },
		"state-read":  func(b *fusion.Built) { peek(b, "state_new") },
		"concat-read": func(b *fusion.Built) { peek(b, "conv_input") },
		"rows-output": func(b *fusion.Built) { named(b, "conv_rows").Output = true },
	} {
		b := l.Build()
		state, _ := fusion.StatePattern.Find(b.G, reference)
		conv, _ := fusion.ConvPattern.Find(b.G, reference)
		wrong := append(state, conv...)
		edit(b)
		state, r1 := fusion.StatePattern.Find(b.G, reference)
		conv, r2 := fusion.ConvPattern.Find(b.G, reference)
		refused := append(r1, r2...)
		if len(state)+len(conv) != 1 || len(refused) != 1 || refused[0].Condition != "intermediates" {
			t.Fatalf("%s: %d state, %d conv matches, refused %v", extra, len(state), len(conv), refused)
		}
		run := func(matches []*fusion.Match) string {
			want := NewMemory(b.G, 9)
			copy(want.I32[b.Ids], ids)
			got := want.Clone()
			if err := c.RunUnfused(b.G, want); err != nil {
				t.Fatal(err)
			}
			if err := c.RunFused(b.G, got, matches); err != nil {
				t.Fatal(err)
			}
			return compare(b, matches, got, want)
		}
		if d := run(append(state, conv...)); d != "" {
			t.Errorf("%s, refused: %s", extra, d)
		}
		if d := run(wrong); d == "" {
			t.Errorf("%s: fused anyway, it gave the unfused results", extra)
		} else {
			t.Logf("%s, fused anyway: %s", extra, d)
		}
	}
}

// peek adds a node that copies the named node out, as another reader.
func peek(b *fusion.Built, name string) {
	n := named(b, name)
	b.G.Cpy("peek", n, fusion.Leaf("peek_dst", "f32", "compute", n.Ne[:]...))
}

func named(b *fusion.Built, name string) *fusion.Tensor {
	for _, n := range b.G.Nodes {
		if n.Name == name {
			return n
		}
	}
	panic("no node " + name)
}
