package fusion

import (
	"slices"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

var portable = Backend{Target: "", Buffers: []string{"cache", "compute", "input", "weights"}}

// layer is a decode step of Qwen3.5's shape at small H.
func layer() Layer {
	return Layer{SV: 128, H: 2, HK: 1, Seqs: 4, T: 1, K: 1, DConv: 4, C: 256, MemSize: 6, KVHead: 1, RowZero: -1}
}

func matchBoth(t *testing.T, b *Built, be Backend) (state, conv []*Match, refused []*Refusal) {
	t.Helper()
	state, r1 := StatePattern.Find(b.G, be)
	conv, r2 := ConvPattern.Find(b.G, be)
	return state, conv, append(r1, r2...)
}

func TestCanonicalDecodeGraphsMatch(t *testing.T) {
	for _, n := range []int{1, 2, 7, 64} {
		for _, dc := range []int{2, 3, 4} {
			for _, sv := range []int{64, 128} {
				for _, shape := range []struct {
					h, hk     int
					kda, bias bool
					kv, zero  int
				}{
					{1, 1, false, false, 0, -1}, {4, 2, false, true, 3, 0}, {2, 2, true, false, 1, 2},
				} {
					l := Layer{SV: sv, H: shape.h, HK: shape.hk, KDA: shape.kda, Bias: shape.bias, Seqs: n, T: 1, K: 1,
						DConv: dc, C: 64, MemSize: n + 4, KVHead: shape.kv, RowZero: shape.zero}
					state, conv, refused := matchBoth(t, l.Build(), portable)
					if len(state) != 1 || len(conv) != 1 || len(refused) != 0 {
						t.Fatalf("%+v: %d state, %d conv matches, refused %v", l, len(state), len(conv), refused)
					}
					if _, silu := conv[0].Bound["silu"]; silu == shape.bias {
						t.Errorf("%+v: SILU fused %v with a bias %v", l, silu, shape.bias)
					}
					args, err := state[0].Args()
					if err != nil || args["rs_head"] != uint32(shape.kv) || args["sd1"] != uint32(sv*sv*shape.h) {
						t.Errorf("%+v: state args %v, %v", l, args, err)
					}
					args, err = conv[0].Args()
					if err != nil || args["rs_head"] != uint32(shape.kv) || args["cs1"] != uint32(dc-1) {
						t.Errorf("%+v: conv args %v, %v", l, args, err)
					}
				}
			}
		}
	}
}

// TestSnapshotsKeepBothFused: with K > 1 snapshot slots the state and the
// conv are fused (op B and op D with slots write them, K and ss bound; the
// conv's K slot views and copies are its Slot nodes), and a step of fewer
// tokens than slots (fewer state slots copied, a conv slot of no token)
// runs unfused.
func TestSnapshotsKeepBothFused(t *testing.T) {
	for _, k := range []int{2, 3, 4} {
		for _, tok := range []int{k, k + 1} {
			l := layer()
			l.K, l.T = k, tok
			state, conv, refused := matchBoth(t, l.Build(), portable)
			if len(state) != 1 || len(conv) != 1 || len(refused) != 0 {
				t.Fatalf("K %d T %d: %d state, %d conv matches, refused %v", k, tok, len(state), len(conv), refused)
			}
			args, err := state[0].Args()
			D := l.SV * l.SV * l.H
			if err != nil || args["K"] != uint32(k) || args["ss"] != uint32(l.MemSize*D) {
				t.Errorf("K %d T %d: state args %v, %v", k, tok, args, err)
			}
			args, err = conv[0].Args()
			R := (l.DConv - 1) * l.C
			if err != nil || args["K"] != uint32(k) || args["ss"] != uint32(l.MemSize*R) || args["n_t"] != uint32(tok) || args["x1"] != uint32(l.C) {
				t.Errorf("K %d T %d: conv args %v, %v", k, tok, args, err)
			}
			if want := 5 + 2*k + 1; len(conv[0].Fused) != want { // conv, input, taps, rows, xt, K views and copies, silu
				t.Errorf("K %d T %d: %d conv nodes fused, want %d", k, tok, len(conv[0].Fused), want)
			}
		}
		l := layer()
		l.K, l.T = k, k-1
		state, conv, refused := matchBoth(t, l.Build(), portable)
		if len(state) != 0 || len(conv) != 0 || len(refused) != 2 || refused[0].Condition != "state-view" || refused[1].Condition != "tokens" {
			t.Errorf("K %d T %d: %d state, %d conv matches, refused %v", k, k-1, len(state), len(conv), refused)
		}
	}
	// more slots than the conv pattern finds: the last slot's view reads the CONCAT outside it
	l := layer()
	l.K, l.T = ConvPattern.MaxSlots+1, ConvPattern.MaxSlots+1
	state, conv, refused := matchBoth(t, l.Build(), portable)
	if len(state) != 1 || len(conv) != 0 || len(refused) != 1 || refused[0].Condition != "intermediates" {
		t.Errorf("K %d: %d state, %d conv matches, refused %v", l.K, len(state), len(conv), refused)
	}
}

// refusal is a decode graph the matcher must leave unfused, and why.
type refusal struct {
	name, cond string
	pattern    *Pattern
	edit       func(l *Layer, b *Built)
	be         Backend
}

var refusals = []refusal{
	{"state read twice", "intermediates", StatePattern, func(l *Layer, b *Built) {
		b.G.Compute("peek", "SUM", []int64{1}, node(b, "state_rows"))
	}, portable},
	{"conv input read twice", "intermediates", ConvPattern, func(l *Layer, b *Built) {
		b.G.Compute("peek", "SUM", []int64{1}, node(b, "conv_input"))
	}, portable},
	{"new state an output", "intermediates", StatePattern, func(l *Layer, b *Built) { node(b, "state_new").Output = true }, portable},
	{"new state read twice", "intermediates", StatePattern, func(l *Layer, b *Built) {
		b.G.Compute("peek", "SCALE", []int64{1}, node(b, "state_new"))
	}, portable},
	{"conv rows an output", "intermediates", ConvPattern, func(l *Layer, b *Built) { node(b, "conv_rows").Output = true }, portable},
	{"gdn read whole", "attention-only", StatePattern, func(l *Layer, b *Built) {
		b.G.Compute("peek", "SUM", []int64{1}, node(b, "gdn"))
	}, portable},
	{"state cache written between", "nothing-between", StatePattern, func(l *Layer, b *Built) {
		between(b, "state_rows", "zap", b.StateCache)
	}, portable},
	{"conv cache written between", "nothing-between", ConvPattern, func(l *Layer, b *Built) {
		between(b, "conv_rows", "zap", b.ConvCache)
	}, portable},
	{"extra states copied", "nothing-between", StatePattern, func(l *Layer, b *Built) {}, portable},
	{"cache in another buffer", "one-cache", StatePattern, func(l *Layer, b *Built) { b.StateCache.Buffer = "host" }, portable},
	{"f16 cache", "one-cache", ConvPattern, func(l *Layer, b *Built) { b.ConvCache.Type = "f16" }, portable},
	{"strided cache rows", "cache-rows", StatePattern, func(l *Layer, b *Built) { node(b, "state_states").Nb[1] += 64 }, portable},
	{"k strided apart from q", "q-k-layout", StatePattern, func(l *Layer, b *Built) { node(b, "k").Nb[3] += 64 }, portable},
	{"result in the token's memory", "no-reuse", ConvPattern, func(l *Layer, b *Built) {
		b.ConvOut.ViewSrc = b.Inputs[0] // the allocator handed qkv's memory on
	}, portable},
	{"a node between the conv and its silu", "silu-next", ConvPattern, func(l *Layer, b *Built) {
		after(b, "conv_out", func(g *Graph) { g.Compute("norm", "RMS_NORM", []int64{8}, b.Inputs[0]) })
	}, portable},
	{"a slot view read twice", "intermediates", ConvPattern, func(l *Layer, b *Built) {
		b.G.Compute("peek", "SUM", []int64{1}, nth(b, "conv_last", 1))
	}, portable},
	{"a slot without its copy", "intermediates", ConvPattern, func(l *Layer, b *Built) {
		cpy := nth(b, "conv_cpy", 2)
		b.G.Nodes = slices.DeleteFunc(b.G.Nodes, func(n *Tensor) bool { return n == cpy })
	}, portable},
	{"a slot copied out of its row group", "window-rows", ConvPattern, func(l *Layer, b *Built) {
		nth(b, "conv_dst", 2).ViewOffs += int64((l.DConv - 1) * l.C * 4) // a row past slot 2's
	}, portable},
	{"slots overlapping the window", "window-rows", ConvPattern, func(l *Layer, b *Built) {
		for i := 1; i < l.K; i++ { // slot i one row past slot 0
			nth(b, "conv_dst", i).ViewOffs = int64((l.KVHead + i) * (l.DConv - 1) * l.C * 4)
		}
	}, portable},
	{"a prompt's batch of tokens", "tokens", ConvPattern, nil, portable},
	{"S_v outside the table", "variant", StatePattern, nil, portable},
	{"d_conv outside the table", "variant", ConvPattern, nil, portable},
}

// graph builds the refusal's graph.
func (tc refusal) graph() *Built { return tc.graphOf(layer()) }

// graphOf builds the refusal's graph from l.
func (tc refusal) graphOf(l Layer) *Built {
	switch tc.name {
	case "a slot view read twice", "a slot without its copy", "a slot copied out of its row group", "slots overlapping the window":
		l.K, l.T = 3, 3
	case "a prompt's batch of tokens":
		l.T = maxStepTokens + 1
	case "extra states copied":
		l.Extra = 1
	case "S_v outside the table":
		l.SV = 48
	case "d_conv outside the table":
		l.DConv = 9
	}
	b := l.Build()
	if tc.edit != nil {
		tc.edit(&l, b)
	}
	return b
}

func TestRefusals(t *testing.T) {
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			ms, rs := tc.pattern.Find(tc.graph().G, tc.be)
			if len(ms) != 0 || len(rs) != 1 || rs[0].Condition != tc.cond {
				t.Fatalf("%d matches, refusals %v; want one refusal by %s", len(ms), rs, tc.cond)
			}
			t.Log(rs[0])
		})
	}
}

// TestTheBackendOpsCasesFuseAsTheyShould: test-backend-ops' GDN_DECODE_STEP
// cases (templates/common/fusion-tests.tmpl) as Layers: GQA and KDA fuse
// both patterns (K 1 and K 3), and each case whose intermediate
// has another reader or is an output leaves that pattern unfused, the other
// fused. Mem is the cases' kv_head + 2*n_seqs.
func TestTheBackendOpsCasesFuseAsTheyShould(t *testing.T) {
	for _, kda := range []bool{false, true} {
		for _, c := range []struct{ sv, h, hk, dc, n, kv, k int }{{64, 4, 2, 4, 8, 1, 1}, {128, 6, 2, 3, 5, 2, 1}, {128, 4, 1, 4, 3, 0, 3}} {
			l := Layer{SV: c.sv, H: c.h, HK: c.hk, KDA: kda, Seqs: c.n, T: c.k, K: c.k, DConv: c.dc, C: 256, MemSize: c.kv + 2*c.n, KVHead: c.kv, RowZero: -1}
			state, conv, refused := matchBoth(t, l.Build(), portable)
			if len(state) != 1 || len(conv) != 1 || len(refused) != 0 {
				t.Errorf("%+v: %d state, %d conv matches, refused %v", l, len(state), len(conv), refused)
			}
		}
	}
	for extra, name := range map[string]string{"rows-read": "state read twice", "state-read": "new state read twice",
		"concat-read": "conv input read twice", "rows-output": "conv rows an output"} {
		i := slices.IndexFunc(refusals, func(tc refusal) bool { return tc.name == name })
		if i < 0 {
			t.Fatalf("%s: no refusal %q", extra, name)
		}
		tc := refusals[i]
		l := Layer{SV: 64, H: 4, HK: 2, Seqs: 4, T: 1, K: 1, DConv: 4, C: 256, MemSize: 9, KVHead: 1, RowZero: -1}
		state, conv, refused := matchBoth(t, tc.graphOf(l), portable)
		fused := map[*Pattern]int{StatePattern: len(state), ConvPattern: len(conv)}
		if fused[tc.pattern] != 0 || len(state)+len(conv) != 1 || len(refused) != 1 || refused[0].Condition != tc.cond {
			t.Errorf("%s: %d state, %d conv matches, refused %v; want %s refused by %s", extra, len(state), len(conv), refused, tc.pattern.Name, tc.cond)
		}
	}
}

// nth is the i-th node named name (a slot's, where every slot's has it).
func nth(b *Built, name string, i int) *Tensor {
	for _, n := range b.G.Nodes {
		if n.Name == name {
			if i == 0 {
				return n
			}
			i--
		}
	}
	panic("no such node " + name)
}

func node(b *Built, name string) *Tensor {
	for _, n := range b.G.Nodes {
		if n.Name == name {
			return n
		}
	}
	panic("no node " + name)
}

// between inserts, right after node at, a node writing row 0 of cache in
// place.
func between(b *Built, at, name string, cache *Tensor) {
	g := &Graph{}
	for _, n := range b.G.Nodes {
		g.Nodes = append(g.Nodes, n)
		if n.Name == at {
			g.ScaleInplace(name, g.View(name+"_row", cache, []int64{16}, nil, 0), 0)
		}
	}
	b.G.Nodes = g.Nodes
}

// after inserts the nodes add builds right after node at.
func after(b *Built, at string, add func(g *Graph)) {
	g := &Graph{}
	for _, n := range b.G.Nodes {
		g.Nodes = append(g.Nodes, n)
		if n.Name == at {
			add(g)
		}
	}
	b.G.Nodes = g.Nodes
}

func TestExprSpellsGgml(t *testing.T) {
	got := Div(Offs("window"), Mul(Ne("cache", 0), Const(4))).C(func(r string) string { return "t_" + r })
	if want := "(int64_t) t_window->view_offs / (t_cache->ne[0] * 4)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := Sub(Ne("a", 0), Sub(Ne("b", 0), Const(1))).C(nil); !strings.Contains(got, "(b->ne[0] - 1)") {
		t.Errorf("right operand not parenthesised: %s", got)
	}
}

// TestThePlanBindsEveryBufferAndArg: the description is the whole dispatch:
// every buffer and arg of the gather and the kernel is bound to a pattern
// tensor, every param the variant table sets is a param or flag of the
// pattern or the backend's tiling, and every binding names a real one.
func TestThePlanBindsEveryBufferAndArg(t *testing.T) {
	for _, p := range Patterns {
		bufs, args, params := map[string]bool{}, map[string]bool{}, map[string]bool{"NW": true, "CPW": true}
		for _, b := range p.Buffers {
			bufs[b.Buffer] = true
		}
		for _, a := range p.Args {
			args[a.Name] = true
		}
		if p.Scale != "" {
			args["scale"] = true
		}
		for _, a := range p.Params {
			params[a.Name] = true
		}
		for _, f := range p.Flags {
			params[f.Param] = true
		}
		used := map[string]bool{}
		for _, name := range []string{p.Gather, p.Kernel} {
			op, err := ops.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			k, err := op.Kernel(ir.Portable)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range k.Buffers {
				used[b.Name] = true
				if !bufs[b.Name] {
					t.Errorf("%s: %s's buffer %s is bound to no tensor", p.Name, name, b.Name)
				}
			}
			for _, a := range k.Args {
				used[a.Name] = true
				if !args[a.Name] {
					t.Errorf("%s: %s's arg %s has no expression", p.Name, name, a.Name)
				}
			}
			for _, prm := range k.Params {
				if prm.Derived == nil && !params[prm.Name] {
					t.Errorf("%s: %s's param %s is set by nothing", p.Name, name, prm.Name)
				}
			}
		}
		for n := range bufs {
			if !used[n] {
				t.Errorf("%s: buffer binding %s names no buffer of the kernels", p.Name, n)
			}
		}
		for n := range args {
			if !used[n] {
				t.Errorf("%s: arg %s is no arg of the kernels", p.Name, n)
			}
		}
	}
}
