// Package fusion runs an ops/fusion graph two ways on the Go reference:
// node by node, as ggml runs it unfused (GET_ROWS, CPY, the views, CONCAT,
// SSM_CONV, ADD, SILU, GATED_DELTA_NET; the projections as seeded data),
// and with the patterns the reference matcher finds dispatched as their
// plan says (the gather and the fused kernel at the anchor, the other
// fused nodes skipped). The tests compare the two bit for bit.
package fusion

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"

	gen "github.com/kernelgen/kernelgen/generated/goref"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/ops/fusion"
	"github.com/kernelgen/kernelgen/verify/interp"
)

// Memory is every root tensor's storage: f32 as float32, i32 as int32.
type Memory struct {
	F32 map[*fusion.Tensor][]float32
	I32 map[*fusion.Tensor][]int32
}

// Clone copies m.
func (m *Memory) Clone() *Memory {
	c := &Memory{F32: map[*fusion.Tensor][]float32{}, I32: map[*fusion.Tensor][]int32{}}
	for t, x := range m.F32 {
		c.F32[t] = append([]float32(nil), x...)
	}
	for t, x := range m.I32 {
		c.I32[t] = append([]int32(nil), x...)
	}
	return c
}

// NewMemory allocates every root the graph reaches; leaves hold seeded
// values in (-1, 1), ids as set later.
func NewMemory(g *fusion.Graph, seed uint64) *Memory {
	m := &Memory{F32: map[*fusion.Tensor][]float32{}, I32: map[*fusion.Tensor][]int32{}}
	var visit func(t *fusion.Tensor)
	visit = func(t *fusion.Tensor) {
		if t == nil {
			return
		}
		r := t.Root()
		if _, ok := m.F32[r]; !ok && r.Type != "i32" {
			m.F32[r] = make([]float32, r.Elems())
			if r.Op == "NONE" {
				fill(m.F32[r], r.Name, seed, -1, 1)
			}
		}
		if _, ok := m.I32[r]; !ok && r.Type == "i32" {
			m.I32[r] = make([]int32, r.Elems())
		}
		for _, s := range t.Src {
			visit(s)
		}
	}
	for _, n := range g.Nodes {
		visit(n)
	}
	return m
}

func fill(x []float32, name string, seed uint64, lo, hi float32) {
	h := fnv.New64a()
	h.Write([]byte(name))
	r := rand.New(rand.NewPCG(seed, h.Sum64()))
	for i := range x {
		x[i] = lo + (hi-lo)*r.Float32()
	}
}

// at is the element index of t's (i0, i1, i2, i3) in its root.
func at(t *fusion.Tensor, i [4]int64) int {
	o := t.ViewOffs
	for d := 0; d < 4; d++ {
		o += i[d] * t.Nb[d]
	}
	return int(o / 4)
}

// each visits t's elements in ggml's order (ne[0] fastest).
func each(t *fusion.Tensor, f func(flat int, i [4]int64)) {
	flat := 0
	for i3 := int64(0); i3 < t.Ne[3]; i3++ {
		for i2 := int64(0); i2 < t.Ne[2]; i2++ {
			for i1 := int64(0); i1 < t.Ne[1]; i1++ {
				for i0 := int64(0); i0 < t.Ne[0]; i0++ {
					f(flat, [4]int64{i0, i1, i2, i3})
					flat++
				}
			}
		}
	}
}

// unravel is the index of flat element k of t.
func unravel(t *fusion.Tensor, k int64) [4]int64 {
	var i [4]int64
	for d := 0; d < 4; d++ {
		i[d] = k % t.Ne[d]
		k /= t.Ne[d]
	}
	return i
}

// from is t's root storage from t's offset on.
func (m *Memory) from(t *fusion.Tensor, extra int64) []float32 {
	return m.F32[t.Root()][(t.ViewOffs+extra)/4:]
}

// Contract is the arithmetic both runs use: a contract and the ops target
// whose variants run ("" for the reference's).
type Contract struct {
	Arith  ir.Arith
	Target string
	// noGather leaves the gathers out: the negative control of the tests.
	noGather bool
}

// Unfused runs node n as ggml runs it alone.
func (c Contract) Unfused(m *Memory, n *fusion.Tensor) error {
	x := m.F32[n.Root()]
	switch n.Op {
	case "NONE", "VIEW", "RESHAPE", "TRANSPOSE", "PERMUTE":
	case "SCALE":
		s := float32(n.Params[0])
		each(n, func(_ int, i [4]int64) { x[at(n, i)] *= s })
	case "GET_ROWS":
		a, ids := n.Src[0], m.I32[n.Src[1].Root()]
		ax := m.F32[a.Root()]
		each(n, func(_ int, i [4]int64) {
			x[at(n, i)] = ax[at(a, [4]int64{i[0], int64(ids[i[1]])})]
		})
	case "CPY":
		a := n.Src[0]
		ax := m.F32[a.Root()]
		each(n, func(k int, i [4]int64) { x[at(n, i)] = ax[at(a, unravel(a, int64(k)))] })
	case "CONCAT":
		a, b := n.Src[0], n.Src[1]
		ax, bx := m.F32[a.Root()], m.F32[b.Root()]
		each(n, func(_ int, i [4]int64) {
			if i[0] < a.Ne[0] {
				x[at(n, i)] = ax[at(a, i)]
			} else {
				j := i
				j[0] -= a.Ne[0]
				x[at(n, i)] = bx[at(b, j)]
			}
		})
	case "ADD":
		a, b := n.Src[0], n.Src[1]
		ax, bx := m.F32[a.Root()], m.F32[b.Root()]
		each(n, func(_ int, i [4]int64) { x[at(n, i)] = ax[at(a, i)] + bx[at(b, [4]int64{i[0]})] })
	case "SILU":
		return c.silu(m, n)
	case "SSM_CONV":
		return c.ssmConv(m, n)
	case "GATED_DELTA_NET":
		return c.gdn(m, n)
	default:
		// a projection or norm: seeded data, the same in both runs
		lo, hi := float32(-1), float32(1)
		switch n.Op {
		case "MUL": // the gate, log-decay
			lo, hi = -20, -1e-4
		case "SIGMOID":
			lo = 0
		case "CONT": // v
			lo, hi = -0.3, 5
		}
		fill(x, n.Name, 7, lo, hi)
	}
	return nil
}

func (c Contract) silu(m *Memory, n *fusion.Tensor) error {
	k, err := ops.Silu(c.Arith)
	if err != nil {
		return err
	}
	p, err := interp.Compile(k)
	if err != nil {
		return err
	}
	a := n.Src[0]
	if !a.Contiguous() || !n.Contiguous() {
		return fmt.Errorf("%s: SILU of strided tensors", n.Name)
	}
	return p.Run(nil, map[string]uint32{"n": uint32(n.Elems()), "row": uint32(n.Ne[0])},
		map[string]any{"src": m.from(a, 0), "dst": m.from(n, 0)})
}

func (c Contract) variant(op string, want map[string]int64) (map[string]int64, error) {
	for _, v := range ops.TargetOf(c.Target).Variants(op) {
		hit := true
		for k, x := range want {
			hit = hit && v.Values[k] == x
		}
		if hit {
			return v.Values, nil
		}
	}
	return nil, fmt.Errorf("%s has no variant %v", op, want)
}

func (c Contract) run(op string, params map[string]int64, args map[string]uint32, bufs map[string]any) error {
	run, ok := gen.Run[op]
	if !ok {
		return fmt.Errorf("the Go reference has no op %s", op)
	}
	return run(c.Arith.String(), params, args, bufs)
}

func (c Contract) ssmConv(m *Memory, n *fusion.Tensor) error {
	sx, w := n.Src[0], n.Src[1]
	params, err := c.variant("ssm_conv", map[string]int64{"d_conv": w.Ne[0]})
	if err != nil {
		return err
	}
	args := map[string]uint32{"n_ch": uint32(n.Ne[0]), "n_t": uint32(n.Ne[1]), "n_s": uint32(n.Ne[2]),
		"sx1": uint32(sx.Nb[1] / 4), "sx2": uint32(sx.Nb[2] / 4), "w1": uint32(w.Nb[1] / 4),
		"d1": uint32(n.Nb[1] / 4), "d2": uint32(n.Nb[2] / 4)}
	return c.run("ssm_conv", params, args, map[string]any{"sx": m.from(sx, 0), "conv_kernel": m.from(w, 0), "dst": m.from(n, 0)})
}

// gdn runs the base op on the node's srcs, its args as the state pattern
// binds them (one home for the strides), plus K and s_off.
func (c Contract) gdn(m *Memory, n *fusion.Tensor) error {
	bound := map[string]*fusion.Tensor{"gdn": n, "q": n.Src[0], "k": n.Src[1], "v": n.Src[2], "g": n.Src[3], "beta": n.Src[4], "prior": n.Src[5]}
	mt := &fusion.Match{P: fusion.StatePattern, Bound: bound}
	args := map[string]uint32{}
	for _, a := range fusion.StatePattern.Args {
		if v, err := a.Value.Eval(bound); err == nil {
			args[a.Name] = uint32(v)
		}
	}
	K := int64(n.Params[0])
	v := n.Src[2]
	args["K"], args["s_off"] = uint32(K), uint32(v.Ne[0]*v.Ne[1]*v.Ne[2]*v.Ne[3])
	args["scale"] = math.Float32bits(float32(1 / math.Sqrt(float64(v.Ne[0]))))
	want, err := mt.Params()
	if err != nil {
		return err
	}
	want["KEEP_RS"] = 0
	if K > 1 {
		want["KEEP_RS"] = 1
	}
	params, err := c.variant("gated_delta_net", want)
	if err != nil {
		return err
	}
	bufs := map[string]any{"state": m.from(n.Src[5], 0), "dst": m.from(n, 0)}
	for i, name := range []string{"q", "k", "v", "g", "beta"} {
		bufs[name] = m.from(n.Src[i], 0)
	}
	return c.run("gated_delta_net", params, args, bufs)
}

// RunUnfused runs every node of g in order.
func (c Contract) RunUnfused(g *fusion.Graph, m *Memory) error {
	for _, n := range g.Nodes {
		if err := c.Unfused(m, n); err != nil {
			return fmt.Errorf("%s (%s): %v", n.Name, n.Op, err)
		}
	}
	return nil
}

// RunFused runs g with the matches dispatched: at each anchor the gather
// then the kernel, with the buffers, args and params the pattern binds;
// the other fused nodes skipped; every other node as RunUnfused.
func (c Contract) RunFused(g *fusion.Graph, m *Memory, matches []*fusion.Match) error {
	return c.RunFusedBy(g, m, matches, c.dispatch)
}

// RunFusedBy is RunFused with each match run by dispatch: a backend's own
// fused step (its matcher and dispatch under host emulation) in place of
// the reference's.
func (c Contract) RunFusedBy(g *fusion.Graph, m *Memory, matches []*fusion.Match, dispatch func(*Memory, *fusion.Match) error) error {
	skip := map[*fusion.Tensor]bool{}
	at := map[*fusion.Tensor]*fusion.Match{}
	for _, mt := range matches {
		for _, t := range mt.Fused {
			skip[t] = true
		}
		at[mt.Anchor] = mt
	}
	for _, n := range g.Nodes {
		if mt := at[n]; mt != nil {
			if err := dispatch(m, mt); err != nil {
				return fmt.Errorf("%s at %s: %v", mt.P.Name, n.Name, err)
			}
			continue
		}
		if skip[n] {
			continue
		}
		if err := c.Unfused(m, n); err != nil {
			return fmt.Errorf("%s (%s): %v", n.Name, n.Op, err)
		}
	}
	return nil
}

// dispatch runs a match's gather and kernel. The buffers are slices of the
// roots' storage, so the cache and the window rows alias as on a device.
func (c Contract) dispatch(m *Memory, mt *fusion.Match) error {
	want, err := mt.Params()
	if err != nil {
		return err
	}
	params, err := c.variant(mt.P.Kernel, want)
	if err != nil {
		return err
	}
	args, err := mt.Args()
	if err != nil {
		return err
	}
	bufs := map[string]any{}
	for _, b := range mt.P.Buffers {
		t := mt.Bound[b.Role]
		off, err := b.Offset.Eval(mt.Bound)
		if err != nil {
			return err
		}
		if t.Root().Type == "i32" {
			bufs[b.Buffer] = m.I32[t.Root()][(t.ViewOffs+off)/4:]
		} else {
			bufs[b.Buffer] = m.from(t, off)
		}
	}
	// The gather runs even where its guard would leave it out: it then
	// changes nothing (verify/cases' TestGuardedLaunchesChangeNothing).
	if c.noGather {
		return c.run(mt.P.Kernel, params, args, bufs)
	}
	if err := c.run(mt.P.Gather, nil, args, bufs); err != nil {
		return err
	}
	return c.run(mt.P.Kernel, params, args, bufs)
}
