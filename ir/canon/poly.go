package canon

import (
	"bytes"
	"sort"
	"strconv"

	"github.com/kernelgen/kernelgen/ir"
)

// Integer +, - and * are exact in the ring of 32-bit integers (the IR's
// i32 and u32 wrap), so integer arithmetic is kept as a polynomial over
// atoms (params, args, thread ids, loop counters, loads, and every other
// integer operation): a*b + c and c + b*a are one node, and an index
// computed through a Let is the same as the index written inline.

// ring32 reports whether t's +, - and * are those of the 32-bit ring. U64
// arithmetic is another ring, and widening a u32 into it is no ring map
// (u64(a*b) is not u64(a)*u64(b) once a*b wraps), so u64 operations and
// conversions stay opaque nodes, compared as written.
func ring32(t ir.Type) bool { return t == ir.I32 || t == ir.U32 }

// term is coeff * atoms[0] * atoms[1] * ...; atoms sorted by digest.
type term struct {
	coeff uint32
	atoms []*node
}

func (t term) key() string {
	var b bytes.Buffer
	for _, a := range t.atoms {
		b.Write(a.id[:])
	}
	return b.String()
}

type poly map[string]term

func (b *builder) polyOf(n *node) poly {
	switch {
	case n.op == "poly":
		p := poly{}
		for _, t := range n.terms {
			p[t.key()] = t
		}
		return p
	case n.op == "const" && n.typ.IsInt():
		v, _ := strconv.ParseUint(n.attr, 10, 32)
		return poly{"": term{coeff: uint32(v)}}
	}
	t := term{coeff: 1, atoms: []*node{n}}
	return poly{t.key(): t}
}

func (p poly) add(q poly, scale uint32) poly {
	out := poly{}
	for k, t := range p {
		out[k] = t
	}
	for k, t := range q {
		c := out[k].coeff + scale*t.coeff
		out[k] = term{coeff: c, atoms: t.atoms}
	}
	return out
}

func (p poly) mul(q poly) poly {
	out := poly{}
	for _, a := range p {
		for _, b := range q {
			atoms := append(append([]*node(nil), a.atoms...), b.atoms...)
			sort.Slice(atoms, func(i, j int) bool { return bytes.Compare(atoms[i].id[:], atoms[j].id[:]) < 0 })
			t := term{coeff: a.coeff * b.coeff, atoms: atoms}
			k := t.key()
			out[k] = term{coeff: out[k].coeff + t.coeff, atoms: atoms}
		}
	}
	return out
}

// intConst is the canonical integer constant of type typ with bits v.
func (b *builder) intConst(typ ir.Type, v uint32) *node {
	return b.t.make("const", typ, strconv.FormatUint(uint64(v), 10))
}

// mkPoly turns a polynomial into its node: a constant, a lone atom, or a
// "poly" node whose terms are sorted. Thread ids are first folded into
// global ids where the polynomial holds group_id*workgroup + local_id.
func (b *builder) mkPoly(typ ir.Type, p poly) *node {
	p = b.globalIDs(typ, p)
	var ts []term
	for _, t := range p {
		if t.coeff != 0 {
			ts = append(ts, t)
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].key() < ts[j].key() })
	switch {
	case len(ts) == 0:
		return b.intConst(typ, 0)
	case len(ts) == 1 && len(ts[0].atoms) == 0:
		return b.intConst(typ, ts[0].coeff)
	case len(ts) == 1 && len(ts[0].atoms) == 1 && ts[0].coeff == 1 && ts[0].atoms[0].typ == typ:
		return ts[0].atoms[0]
	}
	h := &hasher{}
	h.str("poly")
	h.num(uint64(typ))
	seen := map[digest]bool{}
	var atoms []*node
	for _, t := range ts {
		h.num(uint64(t.coeff))
		h.num(uint64(len(t.atoms)))
		for _, a := range t.atoms {
			h.dig(a.id)
			if !seen[a.id] {
				seen[a.id] = true
				atoms = append(atoms, a)
			}
		}
	}
	sort.Slice(atoms, func(i, j int) bool { return bytes.Compare(atoms[i].id[:], atoms[j].id[:]) < 0 })
	return b.t.intern(&node{op: "poly", typ: typ, args: atoms, terms: ts}, h.sum())
}

// globalIDs replaces c*(group_id.d*workgroup.d + local_id.d) by
// c*global_id.d: the same thread, whatever the tiling.
func (b *builder) globalIDs(typ ir.Type, p poly) poly {
	if b.wg[0] == nil {
		return p // the workgroup itself is being built
	}
	for d := 0; d < 3; d++ {
		lid := b.t.make("local_id", ir.U32, strconv.Itoa(d))
		lt := term{coeff: 1, atoms: []*node{lid}}
		c := p[lt.key()].coeff
		if c == 0 {
			continue
		}
		gid := b.t.make("group_id", ir.U32, strconv.Itoa(d))
		want := poly{}.add(b.polyOf(gid).mul(b.polyOf(b.wg[d])), c)
		ok := true
		for k, t := range p {
			if contains(t.atoms, gid) && want[k].coeff != t.coeff {
				ok = false
			}
		}
		for k, t := range want {
			if p[k].coeff != t.coeff {
				ok = false
			}
		}
		if !ok {
			continue
		}
		p = p.add(want, ^uint32(0))
		delete(p, lt.key())
		g := b.t.make("global_id", ir.U32, strconv.Itoa(d))
		p = p.add(b.polyOf(g), c)
	}
	return p
}

func contains(atoms []*node, n *node) bool {
	for _, a := range atoms {
		if a == n {
			return true
		}
	}
	return false
}
