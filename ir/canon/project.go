package canon

import (
	"bytes"
	"sort"
	"strings"

	"github.com/kernelgen/kernelgen/ir"
)

// A projection keeps what one category compares and forgets the rest:
//
//   - arithmetic: every operation on values, constants and reductions; a
//     load is its buffer and the direction in which the enclosing loops walk
//     it (the sign of each loop counter in its index), because that is the
//     order in which a loop combines the elements, while where in the
//     buffer the walk starts and its stride are memory's business;
//   - memory: which elements are read and written (full index
//     expressions), the order of stores, barriers and dispatch waits, and
//     for each value the set of loads it depends on.
//
// Control (loops, branches, barriers) is read off the statements; launch and
// interface off the header (see form.go).
const (
	projArith = iota
	projMem
	numProjections
)

type projector struct {
	// index marks the nodes that appear in an index expression.
	index map[*node]bool
	// loopy memoises whether a node depends on a loop counter or phi.
	loopy map[*node]bool
}

func hashOf(parts ...any) digest {
	h := &hasher{}
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			h.str(p)
		case digest:
			h.dig(p)
		case []digest:
			h.num(uint64(len(p)))
			for _, d := range p {
				h.dig(d)
			}
		case int:
			h.num(uint64(p))
		}
	}
	return h.sum()
}

func sortDigests(ds []digest) []digest {
	sort.Slice(ds, func(i, j int) bool { return bytes.Compare(ds[i][:], ds[j][:]) < 0 })
	return ds
}

var memDigest = hashOf("memory")

func isValue(t ir.Type) bool { return t.IsValue() }

// arith is n's arithmetic projection.
func (p *projector) arith(n *node) digest {
	if d := n.proj[projArith]; d != nil {
		return *d
	}
	var d digest
	args := func(ns ...*node) []digest {
		out := make([]digest, len(ns))
		for i, a := range ns {
			out[i] = p.arith(a)
		}
		return out
	}
	switch {
	case n.typ == memType:
		d = memDigest
	case n.op == "load":
		d = hashOf("load", n.attr, int(n.typ), p.walk(n.args[0]))
	case n.op == "aload":
		d = hashOf("aload", int(n.typ), p.walk(n.args[0]), p.arith(n.args[1]))
	case n.op == "astore":
		d = hashOf("astore", p.arith(n.args[0]), p.walk(n.args[1]), p.arith(n.args[2]))
	case n.op == "store":
		d = hashOf("store", n.attr, p.walk(n.args[0]), p.arith(n.args[1]))
	case n.op == "barrier" || n.op == "barrier(device)" || n.op == ir.DepWait.String() || n.op == ir.DepRelease.String():
		d = hashOf("sync")
	case n.op == "seq":
		var ds []digest
		for _, e := range n.args {
			if !isSync(e) {
				ds = append(ds, p.arith(e))
			}
		}
		d = hashOf("seq", ds)
	case n.op == "for":
		var carries []digest
		values := false
		for _, c := range n.args[4:] {
			carries = append(carries, p.arith(c))
			values = values || c.args[0].typ != memType
		}
		bounds := []digest{}
		if values {
			// How many times a loop updates a value is arithmetic.
			bounds = args(n.args[:3]...)
		}
		d = hashOf("for", bounds, p.arith(n.args[3]), sortDigests(carries))
	case n.op == "poly":
		d = hashOf("poly", int(n.typ), p.terms(n, p.arith))
	case n.op == "if":
		// Which effects run is control's business; what they compute is ours.
		d = hashOf("if", p.arith(n.args[1]), p.arith(n.args[2]))
	default:
		d = hashOf(n.op, int(n.typ), n.attr, args(n.args...))
	}
	n.proj[projArith] = &d
	return d
}

func isSync(n *node) bool {
	return n.op == "barrier" || n.op == "barrier(device)" || n.op == ir.DepWait.String() || n.op == ir.DepRelease.String()
}

// terms encodes a polynomial's terms with their atoms projected, sorted,
// so that the order of terms by full digest does not leak into the
// projection.
func (p *projector) terms(n *node, proj func(*node) digest) []digest {
	var out []digest
	for _, t := range n.terms {
		var atoms []digest
		for _, a := range t.atoms {
			atoms = append(atoms, proj(a))
		}
		out = append(out, hashOf(int(t.coeff), sortDigests(atoms)))
	}
	return sortDigests(out)
}

// walk is how an index moves with the enclosing loops: for every term
// holding a loop counter or loop-carried value, that atom's depth and the
// sign of the term's coefficient; an atom that depends on one in another
// way (a remainder, a shift) counts as such an atom of unknown direction.
func (p *projector) walk(idx *node) digest {
	terms := idx.terms
	if idx.op != "poly" {
		terms = []term{{coeff: 1, atoms: []*node{idx}}}
	}
	var marks []string
	for _, t := range terms {
		sign := "+"
		if int32(t.coeff) < 0 {
			sign = "-"
		}
		for _, a := range t.atoms {
			switch {
			case a.op == "counter":
				marks = append(marks, "counter "+a.attr+sign)
			case a.op == "phi":
				marks = append(marks, "carried"+sign)
			case p.dependsOnLoop(a):
				marks = append(marks, "opaque")
			}
		}
	}
	sort.Strings(marks)
	return hashOf("walk", strings.Join(marks, ","))
}

func (p *projector) dependsOnLoop(n *node) bool {
	if v, ok := p.loopy[n]; ok {
		return v
	}
	p.loopy[n] = false
	v := n.op == "counter" || n.op == "phi" || n.op == "phi1"
	if n.op != "result" { // a loop's result is fixed after it
		for _, a := range n.args {
			v = v || p.dependsOnLoop(a)
		}
	}
	p.loopy[n] = v
	return v
}

// markIndex records that n (and what it is computed from) is index
// arithmetic.
func (p *projector) markIndex(n *node) {
	if p.index[n] {
		return
	}
	p.index[n] = true
	for _, a := range n.args {
		p.markIndex(a)
	}
}

// mem is the memory projection of a version, array or effect node.
func (p *projector) mem(n *node) digest {
	if d := n.proj[projMem]; d != nil {
		return *d
	}
	var d digest
	full := func(x *node) digest {
		p.markIndex(x)
		return x.id
	}
	switch {
	case n.op == "load":
		d = hashOf("load", n.attr, full(n.args[0]), p.mem(n.args[1]))
	case n.op == "aload":
		d = hashOf("aload", full(n.args[0]), p.mem(n.args[1]))
	case isValue(n.typ) && n.op != "store":
		d = hashOf("reads", p.reads(n))
	case n.op == "array":
		d = hashOf("array", n.attr, full(n.args[0]))
	case n.op == "astore":
		d = hashOf("astore", p.mem(n.args[0]), full(n.args[1]), p.reads(n.args[2]))
	case n.op == "store":
		d = hashOf("store", n.attr, full(n.args[0]), p.reads(n.args[1]))
	case n.op == "stored":
		d = hashOf("stored", n.attr, p.mem(n.args[0]), full(n.args[1]))
	case n.op == "if":
		d = hashOf("if", p.reads(n.args[0]), p.mem(n.args[1]), p.mem(n.args[2]))
	case n.op == "merge":
		d = hashOf("merge", p.reads(n.args[0]), p.mem(n.args[1]), p.mem(n.args[2]))
	case n.op == "for":
		var carries []digest
		for _, c := range n.args[4:] {
			carries = append(carries, p.mem(c))
		}
		d = hashOf("for", full(n.args[0]), full(n.args[1]), full(n.args[2]), p.mem(n.args[3]), sortDigests(carries))
	default:
		var ds []digest
		for _, a := range n.args {
			ds = append(ds, p.mem(a))
		}
		d = hashOf(n.op, n.attr, ds)
	}
	n.proj[projMem] = &d
	return d
}

// reads is the set of loads (as memory projections) a value depends on.
func (p *projector) reads(n *node) []digest {
	if n.rdone {
		return n.reads
	}
	n.rdone = true
	set := map[digest]bool{}
	switch n.op {
	case "load", "aload":
		set[p.mem(n)] = true
	case "result":
		// What the loop made of this value: its initial value and update.
		for _, d := range p.reads(n.args[1]) {
			set[d] = true
		}
		for _, d := range p.reads(n.args[2]) {
			set[d] = true
		}
	default:
		for _, a := range n.args {
			if !isValue(a.typ) {
				continue
			}
			for _, d := range p.reads(a) {
				set[d] = true
			}
		}
	}
	out := make([]digest, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	n.reads = sortDigests(out)
	return n.reads
}
