package fusion

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/kernelgen/kernelgen/ops"
)

// Backend is what a matcher knows of the backend it runs for: its ops
// target, whose variants it builds ("" for the reference: the variants no
// backend restricts), and the buffers whose memory it holds.
type Backend struct {
	Target  string
	Buffers []string
}

// Match is a pattern found in a graph: its roles bound to tensors, and the
// fused dispatch's params and args (Plan).
type Match struct {
	P     *Pattern
	Bound map[string]*Tensor
	// Fused are the nodes the dispatch replaces, Anchor the one whose place
	// it takes.
	Fused  []*Tensor
	Anchor *Tensor
}

// Refusal says why a candidate anchor stays unfused: the condition that
// failed (or the node the pattern lacks) and its why.
type Refusal struct {
	Anchor    string
	Condition string
	Detail    string
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("%s at %s: %s", r.Condition, r.Anchor, r.Detail)
}

// Find matches p at every node of g of the anchor's op: the matches, and a
// refusal for each candidate left unfused.
func (p *Pattern) Find(g *Graph, be Backend) ([]*Match, []*Refusal) {
	var ms []*Match
	var rs []*Refusal
	for _, n := range g.Nodes {
		if n.Op != p.Nodes[0].Op {
			continue
		}
		m, r := p.At(g, n, be)
		if r != nil {
			rs = append(rs, r)
			continue
		}
		ms = append(ms, m)
	}
	return ms, rs
}

// At matches p with its anchor at node a: every node of the pattern found
// (nil refusal) and every condition holds, in the order p lists them.
func (p *Pattern) At(g *Graph, a *Tensor, be Backend) (*Match, *Refusal) {
	refuse := func(cond, format string, args ...any) (*Match, *Refusal) {
		return nil, &Refusal{Anchor: a.Name, Condition: cond, Detail: fmt.Sprintf(format, args...)}
	}
	m := &Match{P: p, Bound: map[string]*Tensor{p.Anchor: a}, Anchor: a}
	for i, n := range p.Nodes {
		if i == 0 || (n.Slot && p.Nodes[i-1].Slot) {
			continue // the anchor; a slot node after the first, bound with it
		}
		if n.Slot {
			if err := p.findSlots(g, m.Bound, p.Nodes[i:]); err != nil {
				return refuse("pattern", "%v", err)
			}
			continue
		}
		t, err := p.find(g, m.Bound, n)
		if err != nil {
			if n.Optional {
				continue
			}
			return refuse("pattern", "%s: %v", n.Role, err)
		}
		m.Bound[n.Role] = t
	}
	for _, r := range p.Out {
		if t := m.Bound[r]; t != nil {
			m.Bound["out"] = t
			break
		}
	}
	for _, n := range p.Nodes {
		switch t := m.Bound[n.Role]; {
		case n.Slot && n.Fused:
			for k := 0; m.Bound[AtSlot(n.Role, k)] != nil; k++ {
				m.Fused = append(m.Fused, m.Bound[AtSlot(n.Role, k)])
			}
		case t != nil && n.Fused:
			m.Fused = append(m.Fused, t)
		}
	}
	for _, c := range p.Conditions {
		if detail := m.check(g, c, be); detail != "" {
			return refuse(c.Name, "%s (%s)", detail, c.Why)
		}
	}
	return m, nil
}

// findSlots binds the run of Slot nodes at the head of ns for slot 0, 1,
// ... while slot i has every one of them, up to MaxSlots: AtSlot(role, i),
// and slot 0's as role too. Slot 0 must be found.
func (p *Pattern) findSlots(g *Graph, bound map[string]*Tensor, ns []Node) error {
	for i := 0; i < p.MaxSlots; i++ {
		at := maps.Clone(bound)
		for _, n := range ns {
			if !n.Slot {
				break
			}
			n.From.Where = slices.Clone(n.From.Where)
			for j, e := range n.From.Where {
				n.From.Where[j] = Eq{e.A.inSlot(i), e.B.inSlot(i)}
			}
			t, err := p.find(g, at, n)
			if err != nil && i == 0 {
				return fmt.Errorf("%s: %v", n.Role, err)
			}
			if err != nil {
				return nil
			}
			at[n.Role] = t
		}
		for _, n := range ns {
			if !n.Slot {
				break
			}
			bound[AtSlot(n.Role, i)] = at[n.Role]
			if i == 0 {
				bound[n.Role] = at[n.Role]
			}
		}
	}
	return nil
}

// inSlot is bound with the Slot nodes' roles naming slot k's.
func (m *Match) inSlot(k int) map[string]*Tensor {
	at := maps.Clone(m.Bound)
	for _, r := range m.P.slotRoles() {
		at[r] = m.Bound[AtSlot(r, k)]
	}
	return at
}

// find binds node n from its edge.
func (p *Pattern) find(g *Graph, bound map[string]*Tensor, n Node) (*Tensor, error) {
	from := bound[n.From.Role]
	if from == nil {
		return nil, fmt.Errorf("%s is not bound", n.From.Role)
	}
	ok := func(t *Tensor) bool { return n.Op == "" || t.Op == n.Op }
	if !n.From.Down {
		if n.From.Src >= len(from.Src) || from.Src[n.From.Src] == nil {
			return nil, fmt.Errorf("%s has no src[%d]", from.Name, n.From.Src)
		}
		t := from.Src[n.From.Src]
		if !ok(t) {
			return nil, fmt.Errorf("%s.src[%d] is %s %s, not %s", from.Name, n.From.Src, t.Op, t.Name, n.Op)
		}
		return t, nil
	}
	for _, t := range g.Readers(from) {
		if !ok(t) || n.From.Src >= len(t.Src) || t.Src[n.From.Src] != from {
			continue
		}
		bound[Self] = t
		holds := true
		for _, e := range n.From.Where {
			a, err1 := e.A.Eval(bound)
			b, err2 := e.B.Eval(bound)
			holds = holds && err1 == nil && err2 == nil && a == b
		}
		delete(bound, Self)
		if holds {
			return t, nil
		}
	}
	return nil, fmt.Errorf("no %s reads %s", n.Op, from.Name)
}

// check is "" where c holds, else what fails.
func (m *Match) check(g *Graph, c Condition, be Backend) string {
	switch c.Kind {
	case Equal:
		if !m.P.perSlot(c) {
			return m.equal(c.Eqs, m.Bound, -1)
		}
		for k := 0; m.Bound[AtSlot(m.P.slotRoles()[0], k)] != nil; k++ {
			if detail := m.equal(c.Eqs, m.inSlot(k), k); detail != "" {
				return fmt.Sprintf("slot %d: %s", k, detail)
			}
		}
	case Intermediates:
		out := m.Bound["out"]
		for _, t := range m.Fused {
			if t == out {
				continue
			}
			if t.Output {
				return t.Name + " is an output"
			}
			for _, r := range g.Readers(t) {
				if !slices.Contains(m.Fused, r) {
					return fmt.Sprintf("%s is read by %s", t.Name, r.Name)
				}
			}
		}
	case AttentionViews:
		limit, err := c.Bytes.Eval(m.Bound)
		if err != nil {
			return err.Error()
		}
		a := m.Anchor
		if a.Output {
			return a.Name + " is an output"
		}
		for _, r := range g.Readers(a) {
			if slices.Contains(m.Fused, r) {
				continue
			}
			if !r.IsView() {
				return fmt.Sprintf("%s (%s) reads %s whole", r.Name, r.Op, a.Name)
			}
			if lo, hi := r.Bytes(); lo < 0 || hi > limit {
				return fmt.Sprintf("%s reads bytes [%d, %d) of %s, past the attention's %d", r.Name, lo, hi, a.Name, limit)
			}
		}
	case SameCache:
		root := m.Bound[c.Roles[0]].Root()
		for _, r := range c.Roles[1:] {
			if got := m.Bound[r].Root(); got != root {
				return fmt.Sprintf("%s is in %s, not %s", r, got.Name, root.Name)
			}
		}
		if root.Type != "f32" {
			return fmt.Sprintf("%s is %s", root.Name, root.Type)
		}
		if !slices.Contains(be.Buffers, root.Buffer) {
			return fmt.Sprintf("%s is in buffer %s, not this backend's", root.Name, root.Buffer)
		}
	case NothingBetween:
		return m.between(g)
	case Adjacent:
		from, to := g.Index(m.Bound[m.P.Anchor]), g.Index(m.Bound["out"])
		for _, n := range g.Nodes[from+1 : max(to, from+1)] {
			if !slices.Contains(m.Fused, n) && !n.IsView() && n.Elems() > 0 {
				return fmt.Sprintf("%s (%s) runs between %s and %s", n.Name, n.Op, m.Bound[m.P.Anchor].Name, m.Bound["out"].Name)
			}
		}
	case Disjoint:
		w := m.Bound[c.Roles[0]]
		wlo, whi := w.Bytes()
		for _, r := range c.Roles[1:] {
			t := m.Bound[r]
			if lo, hi := t.Bytes(); t.Root() == w.Root() && lo < whi && wlo < hi {
				return fmt.Sprintf("%s overlaps %s", w.Name, t.Name)
			}
		}
	case Variant:
		params, err := m.Params()
		if err != nil {
			return err.Error()
		}
		if _, ok := m.Variant(be.Target, params); !ok {
			return fmt.Sprintf("%s has no variant %v on %s", m.P.Kernel, params, be.Target)
		}
	default:
		return "unknown condition kind " + string(c.Kind)
	}
	return ""
}

// equal is "" where every eq holds on bound (in slot k, where k >= 0),
// else the first that fails.
func (m *Match) equal(eqs []Eq, bound map[string]*Tensor, k int) string {
	for _, e := range eqs {
		if k >= 0 {
			e = Eq{e.A.inSlot(k), e.B.inSlot(k)}
		}
		a, err := e.A.Eval(bound)
		if err != nil {
			return err.Error()
		}
		b, err := e.B.Eval(bound)
		if err != nil {
			return err.Error()
		}
		if a != b {
			return fmt.Sprintf("%s = %d, want %s = %d", e.A.C(nil), a, e.B.C(nil), b)
		}
	}
	return ""
}

// between: no node outside the pattern from its first node to its last
// reads or writes bytes of the cache (a view's bytes; a node's srcs it
// reads, the node itself it writes).
func (m *Match) between(g *Graph) string {
	root := m.Bound["cache"].Root()
	first, last := len(g.Nodes), -1
	for _, t := range m.Fused {
		i := g.Index(t)
		first, last = min(first, i), max(last, i)
	}
	touches := func(t *Tensor) bool {
		if t.Root() != root {
			return false
		}
		lo, hi := t.Bytes()
		return lo < hi
	}
	for _, n := range g.Nodes[max(first, 0) : last+1] {
		if slices.Contains(m.Fused, n) || n.IsView() || n.Elems() == 0 {
			continue // ggml runs no empty node
		}
		if touches(n) {
			return fmt.Sprintf("%s (%s) writes %s in between", n.Name, n.Op, root.Name)
		}
		for _, s := range n.Src {
			if s != nil && touches(s) {
				return fmt.Sprintf("%s (%s) reads %s in between", n.Name, n.Op, root.Name)
			}
		}
	}
	return ""
}

// Params are the fused kernel's variant params as the pattern reads them.
func (m *Match) Params() (map[string]int64, error) {
	out := map[string]int64{}
	for _, a := range m.P.Params {
		v, err := a.Value.Eval(m.Bound)
		if err != nil {
			return nil, err
		}
		out[a.Name] = v
	}
	for _, f := range m.P.Flags {
		out[f.Param] = 0
		if m.Bound[f.Role] != nil {
			out[f.Param] = 1
		}
	}
	return out, nil
}

// Variant is the fused kernel's first variant with params on target (its
// tiling params free): what the backend dispatches.
func (m *Match) Variant(target string, params map[string]int64) (ops.Variant, bool) {
	for _, v := range ops.TargetOf(target).Variants(m.P.Kernel) {
		hit := true
		for k, x := range params {
			hit = hit && v.Values[k] == x
		}
		if hit {
			return v, true
		}
	}
	return ops.Variant{}, false
}

// Args are the integer args of the kernel and the gather, and the f32 scale
// as its bits where the kernel takes one.
func (m *Match) Args() (map[string]uint32, error) {
	out := map[string]uint32{}
	for _, a := range m.P.Args {
		v, err := a.Value.Eval(m.Bound)
		if err != nil {
			return nil, err
		}
		if v < 0 || v > math.MaxUint32 {
			return nil, fmt.Errorf("%s = %d does not fit a u32", a.Name, v)
		}
		out[a.Name] = uint32(v)
	}
	if m.P.Scale != "" {
		params, err := m.Params()
		if err != nil {
			return nil, err
		}
		out["scale"] = math.Float32bits(float32(1 / math.Sqrt(float64(params[m.P.Scale]))))
	}
	return out, nil
}
