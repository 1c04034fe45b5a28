package canon

import (
	"bytes"
	"fmt"
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
//
// Index expressions, loop bounds and branch conditions are compared by
// shape: in full, except that a load in them is its memory projection, so
// that a value stored earlier (arithmetic) does not make every later index
// or condition that reads memory look changed.
const (
	projArith = iota
	projMem
	projShape
	numProjections
)

type projector struct {
	// local names a loop-carried value by its loop and initial value only,
	// not by its update: a statement then reads the same phi whatever the
	// loop does later, which is what per-statement comparison wants (the
	// first statement that differs, not every reader of a changed value).
	local    bool
	memo     [numProjections]map[*node]digest
	readSets map[*node][]digest
	// loopy memoises whether a node depends on a loop counter or phi.
	loopy map[*node]bool
}

func newProjector(local bool) *projector {
	p := &projector{local: local, readSets: map[*node][]digest{}, loopy: map[*node]bool{}}
	for i := range p.memo {
		p.memo[i] = map[*node]digest{}
	}
	return p
}

// visited reports whether n's arithmetic projection was computed.
func (p *projector) visited(n *node) bool {
	_, ok := p.memo[projArith][n]
	return ok
}

// phiArgs are the operands a phi's projections use.
func (p *projector) phiArgs(n *node) []*node {
	if p.local && n.op == "phi" {
		return n.args[:1]
	}
	return n.args
}

// shape is n in full with every load replaced by its memory projection.
func (p *projector) shape(n *node) digest {
	if d, ok := p.memo[projShape][n]; ok {
		return d
	}
	var d digest
	switch {
	case n.typ == memType || n.typ == arrType || isRead(n):
		d = p.mem(n)
	case n.op == "poly":
		d = hashOf("poly", int(n.typ), p.terms(n, p.shape))
	default:
		args := p.phiArgs(n)
		ds := make([]digest, len(args))
		for i, a := range args {
			ds[i] = p.shape(a)
		}
		d = hashOf(n.op, int(n.typ), n.attr, operands(n, ds))
	}
	p.memo[projShape][n] = d
	return d
}

// operands are a node's projected operands, sorted where the operation
// commutes: the builder put those in full-digest order, and a full digest
// holds what a projection leaves out (a loop-carried value's update).
func operands(n *node, ds []digest) []digest {
	if n.commutes {
		return sortDigests(ds)
	}
	return ds
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
		case bool:
			if p {
				h.num(1)
			} else {
				h.num(0)
			}
		default:
			panic(fmt.Sprintf("canon: hashOf cannot hash %T", p))
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
	if d, ok := p.memo[projArith][n]; ok {
		return d
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
	// A span is its buffer or array and how the enclosing loops move its
	// start, as a load is; its length is the vector operation's (a
	// vec_dot's is arithmetic, a vec_silu's is which elements).
	case n.op == "vload":
		d = hashOf("vload", n.attr, p.walk(n.args[0]))
	case n.op == "avload":
		d = hashOf("avload", p.walk(n.args[0]), p.arith(n.args[2]))
	case n.op == "avstore":
		d = hashOf("avstore", p.arith(n.args[0]), p.walk(n.args[1]), p.arith(n.args[3]))
	case n.op == "vstore":
		d = hashOf("vstore", n.attr, p.walk(n.args[0]), p.arith(n.args[2]))
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
		d = hashOf(n.op, int(n.typ), n.attr, operands(n, args(p.phiArgs(n)...)))
	}
	p.memo[projArith][n] = d
	return d
}

// isRead reports a load, an array read or a span read.
func isRead(n *node) bool {
	return n.op == "load" || n.op == "aload" || n.op == "vload" || n.op == "avload"
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

// mem is the memory projection of a version, array or effect node.
func (p *projector) mem(n *node) digest {
	if d, ok := p.memo[projMem][n]; ok {
		return d
	}
	var d digest
	shape := p.shape
	switch {
	case n.op == "load":
		d = hashOf("load", n.attr, shape(n.args[0]), p.mem(n.args[1]))
	case n.op == "aload":
		d = hashOf("aload", shape(n.args[0]), p.mem(n.args[1]))
	case n.op == "vload":
		d = hashOf("vload", n.attr, shape(n.args[0]), shape(n.args[1]), p.mem(n.args[2]))
	case n.op == "avload":
		d = hashOf("avload", shape(n.args[0]), shape(n.args[1]), p.mem(n.args[2]))
	case isValue(n.typ) && n.op != "store":
		d = hashOf("reads", p.reads(n))
	case n.op == "array":
		d = hashOf("array", n.attr, shape(n.args[0]))
	case n.op == "astore":
		d = hashOf("astore", p.mem(n.args[0]), shape(n.args[1]), p.reads(n.args[2]))
	case n.op == "store":
		d = hashOf("store", n.attr, shape(n.args[0]), p.reads(n.args[1]))
	case n.op == "stored":
		d = hashOf("stored", n.attr, p.mem(n.args[0]), shape(n.args[1]))
	case n.op == "avstore":
		d = hashOf("avstore", p.mem(n.args[0]), shape(n.args[1]), shape(n.args[2]), p.reads(n.args[3]))
	case n.op == "vstore":
		d = hashOf("vstore", n.attr, shape(n.args[0]), shape(n.args[1]), p.reads(n.args[2]))
	case n.op == "vstored":
		d = hashOf("vstored", n.attr, p.mem(n.args[0]), shape(n.args[1]), shape(n.args[2]))
	case n.op == "if":
		d = hashOf("if", p.reads(n.args[0]), p.mem(n.args[1]), p.mem(n.args[2]))
	case n.op == "merge":
		d = hashOf("merge", p.reads(n.args[0]), p.mem(n.args[1]), p.mem(n.args[2]))
	case n.op == "for":
		var carries []digest
		for _, c := range n.args[4:] {
			carries = append(carries, p.mem(c))
		}
		d = hashOf("for", shape(n.args[0]), shape(n.args[1]), shape(n.args[2]), p.mem(n.args[3]), sortDigests(carries))
	default:
		var ds []digest
		for _, a := range p.phiArgs(n) {
			ds = append(ds, p.mem(a))
		}
		d = hashOf(n.op, n.attr, ds)
	}
	p.memo[projMem][n] = d
	return d
}

// reads is the set of loads (as memory projections) a value depends on.
func (p *projector) reads(n *node) []digest {
	if r, ok := p.readSets[n]; ok {
		return r
	}
	p.readSets[n] = nil
	set := map[digest]bool{}
	switch n.op {
	case "load", "aload", "vload", "avload":
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
		for _, a := range p.phiArgs(n) {
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
	p.readSets[n] = sortDigests(out)
	return p.readSets[n]
}
