// Package canon computes a kernel's canonical form, for telling a reviewer
// what an edit changed: two kernels have equal forms exactly when they
// differ in names and layout only (variable names, the order of independent
// statements, comments, how an index is split into Lets), and otherwise the
// forms say in which categories they differ and where.
//
// Every value is named by the operation that computes it and the names of
// its operands (hash-consed), never by a variable name or a definition
// order. Integer +, - and * are normalised as polynomials (exact in 32-bit
// wrap-around arithmetic), group_id*workgroup + local_id becomes the global
// id, a > b becomes b < a; f32 arithmetic is kept as written, operand order
// included. Loads name the memory version they read (the stores, barriers
// and dispatch waits before them), array reads the array's version; a
// vector operation's span is read like a load of elements [off, off+n) (a
// vec_dot is one operation over both spans, its length arithmetic as a
// reduction's width is; a vec_silu reads one span and stores to another,
// its length only which elements); loops are their bounds, counter,
// effects and loop-carried values; branches are their condition and what
// each side does. What the kernel does is its
// effects in program order (stores, barriers, dispatch dependencies, the
// loops and branches holding them) plus any value it computes and never
// uses; with the launch geometry and the interface, that is the form.
package canon

import (
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/ir"
)

// Category is what a difference between two forms is about.
type Category int

const (
	// Arithmetic: operations on values, constants, fma, exp routine,
	// reduction order and width, operand order, and the direction in which a
	// loop walks what it combines.
	Arithmetic Category = iota
	// Memory: which elements are read and written (index expressions of
	// loads, stores and arrays), the order of stores, and memory operations'
	// order relative to barriers and dispatch waits.
	Memory
	// Control: loops (bounds, step, unrolling), branches, barriers and
	// dispatch dependencies, and their nesting.
	Control
	// Launch: workgroup size and grid.
	Launch
	// Interface: params (with domains and derivations), requirements, args
	// and buffers: names, types, access, roles, order.
	Interface
	numCategories
)

var categoryNames = [...]string{"arithmetic", "memory", "control", "launch", "interface"}

func (c Category) String() string { return categoryNames[c] }

// Categories lists every category in reporting order.
func Categories() []Category {
	return []Category{Arithmetic, Memory, Control, Launch, Interface}
}

// Form is a kernel's canonical form.
type Form struct {
	// ID is the kernel's NAME@ARITH.
	ID    string
	sums  [numCategories]digest
	items [numCategories][]item
	stmts []stmtNode
}

// item is one statement's (or header line's) share of a category.
type item struct {
	line int
	d    digest
}

type stmtKind int

const (
	stmtValue stmtKind = iota
	stmtArrayStore
	stmtEffect
	stmtControl
)

type stmtNode struct {
	line  int
	kind  stmtKind
	n     *node
	v     *ir.Var // what a stmtValue defines
	depth int
}

// Of computes k's canonical form. Lines in differences are the statements'
// positions (for a kernel read from text by irtext, the text's lines).
func Of(k *ir.Kernel) (f *Form, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("canon: %s: %v", k.ID(), r)
		}
	}()
	f = &Form{ID: k.ID()}
	b := &builder{t: &table{nodes: map[digest]*node{}}, k: k, record: true, f: f}
	b.scan(k)
	// The workgroup first: it is what local ids are folded against.
	var wg [3]*node
	empty := &state{vals: map[thing]*node{}}
	for d := 0; d < 3; d++ {
		wg[d] = b.value(k.Workgroup[d], empty)
	}
	b.wg = wg
	var grid [3]*node
	for d := 0; d < 3; d++ {
		grid[d] = b.value(k.Grid[d], empty)
	}
	st := &state{vals: map[thing]*node{memKey: b.t.make("memory", memType, "")}}
	effects := b.seq(b.block(k.Body, st))

	p := newProjector(false)
	// Interface and launch, per header line.
	iface := &f.items[Interface]
	for _, x := range k.Params {
		derived := digest{}
		if x.Derived != nil {
			derived = b.value(x.Derived, empty).id
		}
		*iface = append(*iface, item{x.At.Line, hashOf("param", x.Name, int(x.Type), fmt.Sprint(x.Domain), derived)})
	}
	for _, r := range k.Requires {
		*iface = append(*iface, item{r.At.Line, hashOf("require", b.value(r.Cond, empty).id)})
	}
	for _, x := range k.Args {
		*iface = append(*iface, item{x.At.Line, hashOf("arg", x.Name, int(x.Type))})
	}
	for _, x := range k.Buffers {
		*iface = append(*iface, item{x.At.Line, hashOf("buffer", x.Name, int(x.Elem), int(x.Access), x.Role, x.Prior)})
	}
	f.items[Launch] = []item{
		{k.Workgroup[0].Pos().Line, hashOf("workgroup", wg[0].id, wg[1].id, wg[2].id)},
		{k.Grid[0].Pos().Line, hashOf("grid", grid[0].id, grid[1].id, grid[2].id)},
	}

	// Values of variables nothing reads still count: arithmetic when they
	// are f32, memory otherwise.
	var deadArith, deadMem []digest
	for _, n := range b.defined {
		if n.typ == ir.F32 {
			deadArith = append(deadArith, p.arith(n))
		} else {
			deadMem = append(deadMem, p.shape(n))
		}
	}
	f.sums[Arithmetic] = hashOf(p.arith(effects), sortDigests(deadArith))
	f.sums[Memory] = hashOf(p.mem(effects), sortDigests(deadMem))

	// Per statement: control items in program order with their nesting;
	// each value's arithmetic (where arithmetic reads it) and memory share,
	// with loop-carried values named locally.
	global := p
	p = newProjector(true)
	for _, s := range f.stmts {
		n := s.n
		switch s.kind {
		case stmtControl:
			f.items[Control] = append(f.items[Control], item{s.line, hashOf(s.depth, p.shape(n))})
		case stmtEffect:
			if !isSync(n) {
				f.items[Arithmetic] = append(f.items[Arithmetic], item{s.line, p.arith(n)})
			}
			f.items[Memory] = append(f.items[Memory], item{s.line, p.mem(n)})
		case stmtArrayStore:
			if n.op == "avstore" {
				// A vec_silu into an array: its start, length and source.
				f.items[Arithmetic] = append(f.items[Arithmetic], item{s.line, hashOf("avstore", p.walk(n.args[1]), p.arith(n.args[3]))})
				f.items[Memory] = append(f.items[Memory], item{s.line, hashOf("avstore", p.shape(n.args[1]), p.shape(n.args[2]), p.reads(n.args[3]))})
				break
			}
			f.items[Arithmetic] = append(f.items[Arithmetic], item{s.line, hashOf(p.walk(n.args[1]), p.arith(n.args[2]))})
			f.items[Memory] = append(f.items[Memory], item{s.line, hashOf(p.shape(n.args[1]), p.reads(n.args[2]))})
		}
	}
	for _, s := range f.stmts {
		n := s.n
		if s.kind != stmtValue {
			continue
		}
		if global.visited(n) {
			f.items[Arithmetic] = append(f.items[Arithmetic], item{s.line, p.arith(n)})
		}
		switch {
		case b.indexVars[s.v]:
			f.items[Memory] = append(f.items[Memory], item{s.line, p.shape(n)})
		case len(p.reads(n)) > 0:
			f.items[Memory] = append(f.items[Memory], item{s.line, hashOf(p.reads(n))})
		}
	}
	var ctl []digest
	for _, it := range f.items[Control] {
		ctl = append(ctl, it.d)
	}
	f.sums[Control] = hashOf("control", ctl)
	for _, c := range []Category{Interface, Launch} {
		var ds []digest
		for _, it := range f.items[c] {
			ds = append(ds, it.d)
		}
		f.sums[c] = hashOf(c.String(), ds)
	}
	for c := range f.items {
		sortItems(f.items[c])
	}
	f.stmts = nil
	return f, nil
}

func sortItems(items []item) {
	// Stable by line: items of one line keep their order.
	for i := 1; i < len(items); i++ {
		for j := i; j > 0 && items[j].line < items[j-1].line; j-- {
			items[j], items[j-1] = items[j-1], items[j]
		}
	}
}

// Equal reports whether f and g differ in names and layout only.
func (f *Form) Equal(g *Form) bool { return f.sums == g.sums }

// Difference is a category in which two forms differ, with the first
// statement of each side that has no counterpart on the other (its line; 0
// when every statement of that side has one, as when the other side adds a
// statement). Where both sides hold the same statements in another order,
// the lines are a's first statement out of place and that statement in b.
type Difference struct {
	Category     Category
	LineA, LineB int
}

// Compare lists the categories in which a and b differ, in reporting order;
// none means names/layout only.
func Compare(a, b *Form) []Difference {
	var out []Difference
	for _, c := range Categories() {
		if a.sums[c] == b.sums[c] {
			continue
		}
		d := Difference{Category: c, LineA: unmatched(a.items[c], b.items[c]), LineB: unmatched(b.items[c], a.items[c])}
		if d.LineA == 0 && d.LineB == 0 {
			// Same statements, another order: the first of a's out of
			// place, and where b has it.
			ai, bi := a.items[c], b.items[c]
			for i := 0; i < len(ai) && i < len(bi); i++ {
				if ai[i].d == bi[i].d {
					continue
				}
				d.LineA, d.LineB = ai[i].line, bi[i].line
				for _, it := range bi[i:] {
					if it.d == ai[i].d {
						d.LineB = it.line
						break
					}
				}
				break
			}
		}
		out = append(out, d)
	}
	return out
}

// unmatched is the line of the first item of a with no counterpart in b
// (items matched one to one).
func unmatched(a, b []item) int {
	left := map[digest]int{}
	for _, it := range b {
		left[it.d]++
	}
	for _, it := range a {
		if left[it.d] == 0 {
			return it.line
		}
		left[it.d]--
	}
	return 0
}

// String lists the categories of a comparison, "names/layout only" for none.
func String(ds []Difference) string {
	if len(ds) == 0 {
		return "names/layout only"
	}
	var s []string
	for _, d := range ds {
		s = append(s, d.Category.String())
	}
	return strings.Join(s, ", ")
}
