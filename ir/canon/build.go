package canon

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/kernelgen/kernelgen/ir"
)

// builder runs a kernel symbolically, per thread, in program order: every
// value becomes a node named by what computes it; variables and arrays are
// names for nodes, so renaming or moving a Let changes nothing; memory is a
// chain of versions (stores, barriers, dependency waits) that every load
// names; loops and branches carry what they change as loop-carried and
// merged values.
type builder struct {
	t  *table
	k  *ir.Kernel
	wg [3]*node
	// depth is the loop nesting at the current statement.
	depth int
	// record is false while a loop body is run for its provisional phis.
	record bool
	f      *Form
	// defined holds every value a Let, Assign or Reduce computed, for dead
	// values.
	defined     []*node
	lastEffects []*node
	// read holds the variables some expression reads; indexVars those an
	// index is computed from (through Lets).
	read, indexVars map[*ir.Var]bool
}

// Node types beyond the IR's value types: versions of buffer memory and of
// arrays. Effects and loop/branch nodes have type Invalid.
const (
	memType ir.Type = 255
	arrType ir.Type = 254
)

// thing keys what a loop or branch may change: a *ir.Var, an *ir.Array, or
// memKey for buffer memory.
type thing any

type memKeyT struct{}

var memKey = memKeyT{}

// state is what every variable, array and the memory hold at one point.
type state struct {
	vals map[thing]*node
}

func (s *state) copy() *state {
	c := &state{vals: make(map[thing]*node, len(s.vals))}
	for k, v := range s.vals {
		c.vals[k] = v
	}
	return c
}

func (b *builder) constNode(c *ir.Const) *node {
	switch c.T {
	case ir.F32:
		return b.t.make("const", ir.F32, strconv.FormatUint(uint64(math.Float32bits(c.F)), 16))
	case ir.Bool:
		return b.t.make("const", ir.Bool, strconv.FormatBool(c.B))
	}
	if c.T == ir.U64 {
		return b.t.make("const", ir.U64, strconv.FormatUint(uint64(c.I), 10))
	}
	return b.intConst(c.T, uint32(c.I))
}

// value is the node of e in state st.
func (b *builder) value(e ir.Expr, st *state) *node {
	t := b.t
	switch e := e.(type) {
	case *ir.Const:
		return b.constNode(e)
	case *ir.ParamRef:
		if e.Param.Derived != nil {
			return b.value(e.Param.Derived, st)
		}
		return t.make("param", e.Param.Type, e.Param.Name)
	case *ir.ArgRef:
		return t.make("arg", e.Arg.Type, e.Arg.Name)
	case *ir.BuiltinRef:
		return t.make(e.Builtin.String(), ir.U32, strconv.Itoa(e.Dim))
	case *ir.VarRef:
		if n := st.vals[e.Var]; n != nil {
			return n
		}
		panic(fmt.Sprintf("canon: %s: %s has no value", e.At, e.Var.Name))
	case *ir.ArrayLoad:
		return t.make("aload", e.Array.Elem, "", b.value(e.Index, st), st.vals[e.Array])
	case *ir.Load:
		return t.make("load", e.Buf.Elem.ValueType(), e.Buf.Name, b.value(e.Index, st), st.vals[memKey])
	case *ir.Unary:
		x := b.value(e.X, st)
		switch {
		case e.Op == ir.Neg && ring32(x.typ):
			return b.mkPoly(x.typ, poly{}.add(b.polyOf(x), ^uint32(0)))
		case e.Op == ir.Neg && x.op == "const" && x.typ == ir.F32:
			// Neg is exact: -c is the constant -c.
			bits, _ := strconv.ParseUint(x.attr, 16, 32)
			return t.make("const", ir.F32, strconv.FormatUint(bits^0x80000000, 16))
		case (e.Op == ir.Convert || e.Op == ir.Bitcast) && ring32(x.typ) && ring32(e.To):
			// u32 <-> i32 keeps the 32 bits: the same ring element.
			return b.mkPoly(e.To, b.polyOf(x))
		case e.Op == ir.Convert || e.Op == ir.Bitcast:
			if x.typ == e.To {
				return x
			}
			return t.make(e.Op.String(), e.To, "", x)
		}
		return t.make(e.Op.String(), x.typ, "", x)
	case *ir.Binary:
		x, y := b.value(e.X, st), b.value(e.Y, st)
		if ring32(x.typ) {
			switch e.Op {
			case ir.Add:
				return b.mkPoly(x.typ, b.polyOf(x).add(b.polyOf(y), 1))
			case ir.Sub:
				return b.mkPoly(x.typ, b.polyOf(x).add(b.polyOf(y), ^uint32(0)))
			case ir.Mul:
				return b.mkPoly(x.typ, b.polyOf(x).mul(b.polyOf(y)))
			}
		}
		op := e.Op
		// a > b is b < a, exactly, for every type (NaN included).
		switch op {
		case ir.Gt:
			op, x, y = ir.Lt, y, x
		case ir.Ge:
			op, x, y = ir.Le, y, x
		}
		commutes := op == ir.Eq || op == ir.Ne || x.typ.IsInt() && (op == ir.BitAnd || op == ir.BitOr || op == ir.BitXor)
		if commutes && bytes.Compare(y.id[:], x.id[:]) < 0 {
			x, y = y, x
		}
		typ := x.typ
		if op.IsCompare() || op.IsLogical() {
			typ = ir.Bool
		}
		n := t.make(op.String(), typ, "", x, y)
		n.commutes = commutes
		return n
	case *ir.Call:
		args := make([]*node, len(e.Args))
		for i, a := range e.Args {
			args[i] = b.value(a, st)
		}
		return t.make(e.Fn.String(), ir.F32, "", args...)
	case *ir.Select:
		return t.make("select", e.Type(), "", b.value(e.Cond, st), b.value(e.X, st), b.value(e.Y, st))
	case *ir.VecDot:
		// One operation over both spans' memory; its length is how many
		// products it sums.
		n := b.value(e.N, st)
		return t.make("vec_dot", ir.F32, "", n, b.span(e.X, n, st), b.span(e.Y, n, st))
	}
	panic(fmt.Sprintf("canon: cannot read %s", ir.ExprString(e)))
}

// span is a vector operand's read: elements [off, off+n) of the buffer
// memory or the array version it reads, as a load or an array read is one
// element.
func (b *builder) span(sp ir.Span, n *node, st *state) *node {
	off := b.value(sp.Off, st)
	if sp.Array != nil {
		return b.t.make("avload", ir.F32, "", off, n, st.vals[sp.Array])
	}
	return b.t.make("vload", ir.F32, sp.Buf.Name, off, n, st.vals[memKey])
}

// block runs body in st and returns its effects in program order.
func (b *builder) block(body []ir.Stmt, st *state) []*node {
	var effects []*node
	for _, s := range body {
		effects = append(effects, b.stmt(s, st)...)
	}
	return effects
}

func (b *builder) define(s ir.Stmt, v *ir.Var, n *node) {
	if b.record {
		if !b.read[v] {
			b.defined = append(b.defined, n)
		}
		b.f.stmts = append(b.f.stmts, stmtNode{line: s.Pos().Line, kind: stmtValue, n: n, v: v})
	}
}

// scan finds the variables k reads, and those its indices are computed from.
func (b *builder) scan(k *ir.Kernel) {
	b.read, b.indexVars = map[*ir.Var]bool{}, map[*ir.Var]bool{}
	defs := map[*ir.Var][]ir.Expr{}
	var index []ir.Expr
	ir.WalkStmts(k.Body, func(s ir.Stmt) {
		for _, e := range ir.StmtExprs(s) {
			ir.WalkExpr(e, func(x ir.Expr) {
				switch x := x.(type) {
				case *ir.VarRef:
					b.read[x.Var] = true
				case *ir.Load:
					index = append(index, x.Index)
				case *ir.ArrayLoad:
					index = append(index, x.Index)
				case *ir.VecDot:
					index = append(index, x.X.Off, x.Y.Off, x.N)
				}
			})
		}
		switch s := s.(type) {
		case *ir.Let:
			defs[s.Var] = append(defs[s.Var], s.Value)
		case *ir.Assign:
			defs[s.Var] = append(defs[s.Var], s.Value)
		case *ir.Store:
			index = append(index, s.Index)
		case *ir.ArrayStore:
			index = append(index, s.Index)
		case *ir.VecSilu:
			index = append(index, s.Dst.Off, s.Src.Off, s.N)
		}
	})
	var mark func(e ir.Expr)
	mark = func(e ir.Expr) {
		ir.WalkExpr(e, func(x ir.Expr) {
			if r, ok := x.(*ir.VarRef); ok && !b.indexVars[r.Var] {
				b.indexVars[r.Var] = true
				for _, d := range defs[r.Var] {
					mark(d)
				}
			}
		})
	}
	for _, e := range index {
		mark(e)
	}
}

func (b *builder) stmt(s ir.Stmt, st *state) []*node {
	t := b.t
	switch s := s.(type) {
	case *ir.Let:
		n := b.value(s.Value, st)
		st.vals[s.Var] = n
		b.define(s, s.Var, n)
	case *ir.Assign:
		n := b.value(s.Value, st)
		st.vals[s.Var] = n
		b.define(s, s.Var, n)
	case *ir.Reduce:
		n := t.make("reduce", ir.F32, s.Order.String(), b.value(s.Width, st), b.value(s.X, st))
		st.vals[s.Var] = n
		b.define(s, s.Var, n)
	case *ir.DeclArray:
		a := s.Array
		st.vals[a] = t.make("array", arrType, a.Space.String()+" "+a.Elem.String(), b.value(a.Len, st))
	case *ir.ArrayStore:
		n := t.make("astore", arrType, "", st.vals[s.Array], b.value(s.Index, st), b.value(s.Value, st))
		st.vals[s.Array] = n
		if b.record {
			b.f.stmts = append(b.f.stmts, stmtNode{line: s.At.Line, kind: stmtArrayStore, n: n})
		}
	case *ir.Store:
		idx, val := b.value(s.Index, st), b.value(s.Value, st)
		e := t.make("store", val.typ, s.Buf.Name, idx, val)
		st.vals[memKey] = t.make("stored", memType, s.Buf.Name, st.vals[memKey], idx, val)
		if b.record {
			b.f.stmts = append(b.f.stmts, stmtNode{line: s.At.Line, kind: stmtEffect, n: e})
		}
		return []*node{e}
	case *ir.VecSilu:
		// A read of the source span and a write of the destination span;
		// the SiLU is elementwise, so the length is which elements, not
		// arithmetic.
		n := b.value(s.N, st)
		val := t.make("vec_silu", ir.F32, "", b.span(s.Src, n, st))
		off := b.value(s.Dst.Off, st)
		if a := s.Dst.Array; a != nil {
			v := t.make("avstore", arrType, "", st.vals[a], off, n, val)
			st.vals[a] = v
			if b.record {
				b.f.stmts = append(b.f.stmts, stmtNode{line: s.At.Line, kind: stmtArrayStore, n: v})
			}
			return nil
		}
		e := t.make("vstore", ir.Invalid, s.Dst.Buf.Name, off, n, val)
		st.vals[memKey] = t.make("vstored", memType, s.Dst.Buf.Name, st.vals[memKey], off, n, val)
		if b.record {
			b.f.stmts = append(b.f.stmts, stmtNode{line: s.At.Line, kind: stmtEffect, n: e})
		}
		return []*node{e}
	case *ir.Barrier:
		kind := "barrier"
		if s.Device {
			kind = "barrier(device)"
		}
		e := t.make(kind, ir.Invalid, "")
		b.sync(st, s.Device)
		b.controlItem(s.At.Line, e)
		if b.record {
			b.f.stmts = append(b.f.stmts, stmtNode{line: s.At.Line, kind: stmtEffect, n: e})
		}
		return []*node{e}
	case *ir.DepSync:
		e := t.make(s.Kind.String(), ir.Invalid, "")
		if s.Kind == ir.DepWait {
			// Reads after it see what the previous dispatch wrote.
			st.vals[memKey] = t.make("waited", memType, "", st.vals[memKey])
		}
		b.controlItem(s.At.Line, e)
		if b.record {
			b.f.stmts = append(b.f.stmts, stmtNode{line: s.At.Line, kind: stmtEffect, n: e})
		}
		return []*node{e}
	case *ir.Assert:
		// An effect: where the condition fails the kernel stops.
		e := t.make("assert", ir.Invalid, "", b.value(s.Cond, st))
		b.controlItem(s.At.Line, e)
		if b.record {
			b.f.stmts = append(b.f.stmts, stmtNode{line: s.At.Line, kind: stmtEffect, n: e})
		}
		return []*node{e}
	case *ir.If:
		return b.branch(s, st)
	case *ir.For:
		return b.loop(s, st)
	case *ir.Comment:
	default:
		panic(fmt.Sprintf("canon: %s: unknown statement %T", s.Pos(), s))
	}
	return nil
}

// sync is a barrier: shared arrays (and, for a device barrier, buffer
// memory) now hold what every thread of the workgroup stored before it.
func (b *builder) sync(st *state, device bool) {
	for k, v := range st.vals {
		if a, ok := k.(*ir.Array); ok && a.Space == ir.Shared {
			st.vals[k] = b.t.make("synced", arrType, "", v)
		}
	}
	if device {
		st.vals[memKey] = b.t.make("synced", memType, "", st.vals[memKey])
	}
}

func (b *builder) controlItem(line int, n *node) {
	if b.record {
		b.f.stmts = append(b.f.stmts, stmtNode{line: line, kind: stmtControl, n: n, depth: b.depth})
	}
}

func (b *builder) branch(s *ir.If, st *state) []*node {
	cond := b.value(s.Cond, st)
	b.controlItem(s.At.Line, b.t.make("if", ir.Invalid, "", cond))
	b.depth++
	th, el := st.copy(), st.copy()
	thenFx, elseFx := b.block(s.Then, th), b.block(s.Else, el)
	b.depth--
	for k, v := range st.vals {
		tv, ev := th.vals[k], el.vals[k]
		switch {
		case tv == v && ev == v:
		case tv == ev:
			st.vals[k] = tv
		default:
			st.vals[k] = b.t.make("merge", v.typ, "", cond, tv, ev)
		}
	}
	if len(thenFx) == 0 && len(elseFx) == 0 {
		return nil
	}
	return []*node{b.t.make("if", ir.Invalid, "", cond, b.seq(thenFx), b.seq(elseFx))}
}

func (b *builder) seq(effects []*node) *node { return b.t.make("seq", ir.Invalid, "", effects...) }

// carried lists what body changes of what exists before it: variables it
// assigns, arrays it stores to, and memory when it stores, waits or syncs.
func carried(body []ir.Stmt, st *state) []thing {
	seen := map[thing]bool{}
	var out []thing
	add := func(k thing) {
		if _, before := st.vals[k]; before && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	ir.WalkStmts(body, func(s ir.Stmt) {
		switch s := s.(type) {
		case *ir.Assign:
			add(s.Var)
		case *ir.ArrayStore:
			add(s.Array)
		case *ir.Store:
			add(memKey)
		case *ir.VecSilu:
			if s.Dst.Array != nil {
				add(s.Dst.Array)
			} else {
				add(memKey)
			}
		case *ir.DepSync:
			if s.Kind == ir.DepWait {
				add(memKey)
			}
		case *ir.Barrier:
			add(memKey)
			for k := range st.vals {
				if a, ok := k.(*ir.Array); ok && a.Space == ir.Shared {
					add(k)
				}
			}
		}
	})
	return out
}

// loop runs a For symbolically, its counter a node of the loop's depth.
// What the body changes enters it as a loop-carried value (phi) and leaves
// it as the loop's result for that phi. A phi is named by its depth, its
// initial value and its update computed with every phi named by the initial
// value alone, so that it does not depend on the order in which variables
// are declared or updated; two values left with one phi are the same value.
func (b *builder) loop(s *ir.For, st *state) []*node {
	start, end, step := b.value(s.Start, st), b.value(s.End, st), b.value(s.Step, st)
	unroll := ""
	if s.Unroll {
		unroll = "unroll"
	}
	b.controlItem(s.At.Line, b.t.make("for", ir.Invalid, unroll, start, end, step))
	things := carried(s.Body, st)
	b.depth++
	defer func() { b.depth-- }()
	depth := strconv.Itoa(b.depth)
	iv := b.t.make("counter", s.Var.Type, depth)

	// Pass 1 names each phi by its initial value only (phis with equal
	// initial values are one node); pass 2 by its initial value and its
	// pass-1 update, which no longer depends on declaration order.
	run := func(phis []*node, record bool) *state {
		saved := b.record
		b.record = saved && record
		defer func() { b.record = saved }()
		in := st.copy()
		in.vals[s.Var] = iv
		for i, k := range things {
			in.vals[k] = phis[i]
		}
		b.lastEffects = b.block(s.Body, in)
		return in
	}
	phis := make([]*node, len(things))
	for i, k := range things {
		phis[i] = b.t.make("phi1", st.vals[k].typ, depth, st.vals[k])
	}
	first := run(phis, false)
	for i, k := range things {
		phis[i] = b.t.make("phi", st.vals[k].typ, depth, st.vals[k], first.vals[k])
	}
	out := run(phis, true)
	fx := b.lastEffects

	carries := map[digest]*node{}
	for i, k := range things {
		carries[phis[i].id] = b.t.make("carry", ir.Invalid, "", phis[i], st.vals[k], out.vals[k])
	}
	ids := make([]digest, 0, len(carries))
	for id := range carries {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return bytes.Compare(ids[i][:], ids[j][:]) < 0 })
	args := []*node{start, end, step, b.seq(fx)}
	for _, id := range ids {
		args = append(args, carries[id])
	}
	loop := b.t.make("for", ir.Invalid, depth+":"+unroll, args...)
	for i, k := range things {
		st.vals[k] = b.t.make("result", st.vals[k].typ, "", loop, phis[i], out.vals[k])
	}
	if len(fx) == 0 {
		return nil
	}
	return []*node{loop}
}
