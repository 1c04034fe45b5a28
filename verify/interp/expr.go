package interp

import (
	"math"

	"github.com/kernelgen/kernelgen/emit/goref/rt"
	"github.com/kernelgen/kernelgen/ir"
)

// val is a compiled expression: the closure of its type is set.
type val struct {
	t ir.Type
	f func(*thread) float32
	i func(*thread) int32
	u func(*thread) uint32
	w func(*thread) uint64
	b func(*thread) bool
}

// asBits reads any value as its 32-bit pattern (bool: 0 or 1).
func (c *compiler) asBits(v val) func(*thread) uint32 {
	switch v.t {
	case ir.F32:
		f := v.f
		return func(t *thread) uint32 { return math.Float32bits(f(t)) }
	case ir.I32:
		f := v.i
		return func(t *thread) uint32 { return uint32(f(t)) }
	case ir.U32:
		return v.u
	case ir.Bool:
		f := v.b
		return func(t *thread) uint32 { return b2u(f(t)) }
	}
	return func(*thread) uint32 { return 0 }
}

// fromBits reads a 32-bit pattern as a value of type ty.
func fromBits(ty ir.Type, bits func(*thread) uint32) val {
	switch ty {
	case ir.F32:
		return val{t: ty, f: func(t *thread) float32 { return math.Float32frombits(bits(t)) }}
	case ir.I32:
		return val{t: ty, i: func(t *thread) int32 { return int32(bits(t)) }}
	case ir.Bool:
		return val{t: ty, b: func(t *thread) bool { return bits(t) != 0 }}
	}
	return val{t: ir.U32, u: bits}
}

func (c *compiler) expr(e ir.Expr) val {
	switch e := e.(type) {
	case *ir.Const:
		switch e.T {
		case ir.F32:
			x := e.F
			return val{t: ir.F32, f: func(*thread) float32 { return x }}
		case ir.I32:
			x := int32(e.I)
			return val{t: ir.I32, i: func(*thread) int32 { return x }}
		case ir.U32:
			x := uint32(e.I)
			return val{t: ir.U32, u: func(*thread) uint32 { return x }}
		case ir.U64:
			x := uint64(e.I)
			return val{t: ir.U64, w: func(*thread) uint64 { return x }}
		case ir.Bool:
			x := e.B
			return val{t: ir.Bool, b: func(*thread) bool { return x }}
		}
	case *ir.ParamRef:
		i := c.params[e.Param]
		return fromBits(e.Param.Type, func(t *thread) uint32 { return t.m.params[i] })
	case *ir.ArgRef:
		i := c.args[e.Arg]
		return fromBits(e.Arg.Type, func(t *thread) uint32 { return t.m.args[i] })
	case *ir.BuiltinRef:
		d := e.Dim
		if e.Builtin == ir.GroupID {
			return val{t: ir.U32, u: func(t *thread) uint32 { return t.m.gid[d] }}
		}
		return val{t: ir.U32, u: func(t *thread) uint32 { return t.lid[d] }}
	case *ir.VarRef:
		// Spelled out per type: variables are most of what kernels read.
		slot := c.slot(e.Var)
		switch e.Var.Type {
		case ir.F32:
			return val{t: ir.F32, f: func(t *thread) float32 { return math.Float32frombits(t.regs[slot]) }}
		case ir.U32:
			return val{t: ir.U32, u: func(t *thread) uint32 { return t.regs[slot] }}
		case ir.I32:
			return val{t: ir.I32, i: func(t *thread) int32 { return int32(t.regs[slot]) }}
		case ir.U64:
			return val{t: ir.U64, w: func(t *thread) uint64 { return uint64(t.regs[slot]) | uint64(t.regs[slot+1])<<32 }}
		}
		return fromBits(e.Var.Type, func(t *thread) uint32 { return t.regs[slot] })
	case *ir.ArrayLoad:
		ai := c.arrays[e.Array]
		idx := c.index(e.Index)
		if e.Array.Space == ir.Shared {
			name := e.Array.Name
			return fromBits(e.Array.Elem, func(t *thread) uint32 {
				i := idx(t)
				t.sharedAt(ai, name, i, false, 0)
				return t.m.arrays[ai][i]
			})
		}
		if e.Array.Elem == ir.F32 {
			return val{t: ir.F32, f: func(t *thread) float32 {
				return math.Float32frombits(t.m.arrays[ai][t.tid*t.m.alen[ai]+idx(t)])
			}}
		}
		return fromBits(e.Array.Elem, func(t *thread) uint32 { return t.m.arrays[ai][t.tid*t.m.alen[ai]+idx(t)] })
	case *ir.Load:
		bi, name := c.bufs[e.Buf], e.Buf.Name
		at := c.index(e.Index)
		idx := func(t *thread) int { i := at(t); t.loaded(bi, name, i); return i }
		switch e.Buf.Elem {
		case ir.F32:
			return val{t: ir.F32, f: func(t *thread) float32 { return t.m.f32[bi][idx(t)] }}
		case ir.BF16:
			return val{t: ir.F32, f: func(t *thread) float32 { return rt.BF16ToF32(t.m.bf16[bi][idx(t)]) }}
		case ir.I32:
			return val{t: ir.I32, i: func(t *thread) int32 { return t.m.i32[bi][idx(t)] }}
		case ir.U32:
			return val{t: ir.U32, u: func(t *thread) uint32 { return t.m.u32[bi][idx(t)] }}
		}
	case *ir.Unary:
		return c.unary(e)
	case *ir.Binary:
		return c.binary(e)
	case *ir.Call:
		return c.call(e)
	case *ir.Select:
		cond, x, y := c.expr(e.Cond).b, c.expr(e.X), c.expr(e.Y)
		switch x.t {
		case ir.F32:
			return val{t: x.t, f: func(t *thread) float32 { return rt.SelF32(cond(t), x.f(t), y.f(t)) }}
		case ir.I32:
			return val{t: x.t, i: func(t *thread) int32 { return rt.SelI32(cond(t), x.i(t), y.i(t)) }}
		case ir.U32:
			return val{t: x.t, u: func(t *thread) uint32 { return rt.SelU32(cond(t), x.u(t), y.u(t)) }}
		case ir.U64:
			return val{t: x.t, w: func(t *thread) uint64 { return rt.SelU64(cond(t), x.w(t), y.w(t)) }}
		case ir.Bool:
			return val{t: x.t, b: func(t *thread) bool { return rt.SelBool(cond(t), x.b(t), y.b(t)) }}
		}
	case *ir.VecDot:
		x, y, n := c.span(e.X), c.span(e.Y), c.index(e.N)
		var xs, ys []float32 // an array span's elements as f32
		return val{t: ir.F32, f: func(t *thread) float32 {
			k := n(t)
			return rt.VecDot(x(t, k).floats(&xs), y(t, k).floats(&ys))
		}}
	}
	c.fail(e.Pos(), "cannot run %s", ir.ExprString(e))
	return zero(e.Type())
}

// view is the elements of a span in their storage: an f32 buffer's, or an
// array's bits.
type view struct {
	f    []float32
	bits []uint32
}

// floats is the view as f32 values, copied to *scratch for an array.
func (v view) floats(scratch *[]float32) []float32 {
	if v.bits == nil {
		return v.f
	}
	if cap(*scratch) < len(v.bits) {
		*scratch = make([]float32, len(v.bits))
	}
	out := (*scratch)[:len(v.bits)]
	for i, b := range v.bits {
		out[i] = math.Float32frombits(b)
	}
	return out
}

func (v view) at(i int) float32 {
	if v.bits == nil {
		return v.f[i]
	}
	return math.Float32frombits(v.bits[i])
}

func (v view) set(i int, x float32) {
	if v.bits == nil {
		v.f[i] = x
	} else {
		v.bits[i] = math.Float32bits(x)
	}
}

// span compiles a vector operand to the n elements it names, sliced as the
// Go reference slices them (a private array's from the thread's own
// elements), so that a span out of range faults as it does there.
func (c *compiler) span(sp ir.Span) func(t *thread, n int) view {
	off := c.index(sp.Off)
	if sp.Buf != nil {
		bi := c.bufs[sp.Buf]
		return func(t *thread, n int) view {
			lo := off(t)
			return view{f: t.m.f32[bi][lo : lo+n]}
		}
	}
	ai := c.arrays[sp.Array]
	if sp.Array.Space == ir.Shared {
		return func(t *thread, n int) view {
			lo := off(t)
			return view{bits: t.m.arrays[ai][lo : lo+n]}
		}
	}
	return func(t *thread, n int) view {
		lo := t.tid*t.m.alen[ai] + off(t)
		return view{bits: t.m.arrays[ai][lo : lo+n]}
	}
}

func zero(t ir.Type) val {
	return fromBits(t, func(*thread) uint32 { return 0 })
}

func (c *compiler) unary(e *ir.Unary) val {
	x := c.expr(e.X)
	switch e.Op {
	case ir.Neg:
		switch x.t {
		case ir.F32:
			return val{t: x.t, f: func(t *thread) float32 { return -x.f(t) }}
		case ir.I32:
			return val{t: x.t, i: func(t *thread) int32 { return -x.i(t) }}
		case ir.U32:
			return val{t: x.t, u: func(t *thread) uint32 { return -x.u(t) }}
		case ir.U64:
			return val{t: x.t, w: func(t *thread) uint64 { return -x.w(t) }}
		}
	case ir.Not:
		return val{t: ir.Bool, b: func(t *thread) bool { return !x.b(t) }}
	case ir.Convert:
		return convert(x, e.To)
	case ir.Bitcast:
		// As goref's bitcast: the 32 bits, read as the other type.
		return fromBits(e.To, c.asBits(x))
	}
	c.fail(e.At, "cannot run %s", ir.ExprString(e))
	return zero(e.Type())
}

// convert is Go's value conversion, as the Go reference writes T(x).
func convert(x val, to ir.Type) val {
	if x.t == to {
		return x
	}
	switch to {
	case ir.F32:
		switch x.t {
		case ir.I32:
			return val{t: to, f: func(t *thread) float32 { return float32(x.i(t)) }}
		case ir.U32:
			return val{t: to, f: func(t *thread) float32 { return float32(x.u(t)) }}
		case ir.U64:
			return val{t: to, f: func(t *thread) float32 { return float32(x.w(t)) }}
		}
	case ir.I32:
		switch x.t {
		case ir.F32:
			return val{t: to, i: func(t *thread) int32 { return int32(x.f(t)) }}
		case ir.U32:
			return val{t: to, i: func(t *thread) int32 { return int32(x.u(t)) }}
		case ir.U64:
			return val{t: to, i: func(t *thread) int32 { return int32(x.w(t)) }}
		}
	case ir.U32:
		switch x.t {
		case ir.F32:
			return val{t: to, u: func(t *thread) uint32 { return uint32(x.f(t)) }}
		case ir.I32:
			return val{t: to, u: func(t *thread) uint32 { return uint32(x.i(t)) }}
		case ir.U64:
			return val{t: to, u: func(t *thread) uint32 { return uint32(x.w(t)) }}
		}
	case ir.U64:
		switch x.t {
		case ir.F32:
			return val{t: to, w: func(t *thread) uint64 { return uint64(x.f(t)) }}
		case ir.I32:
			return val{t: to, w: func(t *thread) uint64 { return uint64(x.i(t)) }}
		case ir.U32:
			return val{t: to, w: func(t *thread) uint64 { return uint64(x.u(t)) }}
		}
	}
	return zero(to)
}

func (c *compiler) call(e *ir.Call) val {
	a := make([]func(*thread) float32, len(e.Args))
	for i, x := range e.Args {
		a[i] = c.expr(x).f
	}
	var f func(*thread) float32
	switch e.Fn {
	case ir.FMA:
		f = func(t *thread) float32 { return rt.FMA(a[0](t), a[1](t), a[2](t)) }
	case ir.ExpNative:
		f = func(t *thread) float32 { return rt.ExpNative(a[0](t)) }
	case ir.Min:
		f = func(t *thread) float32 { return rt.MinF32(a[0](t), a[1](t)) }
	case ir.Max:
		f = func(t *thread) float32 { return rt.MaxF32(a[0](t), a[1](t)) }
	case ir.Dot4:
		f = func(t *thread) float32 {
			return rt.Dot4(a[0](t), a[1](t), a[2](t), a[3](t), a[4](t), a[5](t), a[6](t), a[7](t))
		}
	default:
		c.fail(e.At, "cannot run %s", ir.ExprString(e))
		return zero(ir.F32)
	}
	return val{t: ir.F32, f: f}
}

func (c *compiler) binary(e *ir.Binary) val {
	x, y := c.expr(e.X), c.expr(e.Y)
	switch {
	case e.Op == ir.LogAnd:
		return val{t: ir.Bool, b: func(t *thread) bool { return x.b(t) && y.b(t) }}
	case e.Op == ir.LogOr:
		return val{t: ir.Bool, b: func(t *thread) bool { return x.b(t) || y.b(t) }}
	case x.t == ir.Bool:
		switch e.Op {
		case ir.Eq:
			return val{t: ir.Bool, b: func(t *thread) bool { return x.b(t) == y.b(t) }}
		case ir.Ne:
			return val{t: ir.Bool, b: func(t *thread) bool { return x.b(t) != y.b(t) }}
		}
	case x.t == ir.F32:
		if v, ok := floatBinary(e.Op, x.f, y.f); ok {
			return v
		}
	case x.t == ir.I32:
		if v, ok := intBinary(e.Op, x.i, y.i, func(f func(*thread) int32) val { return val{t: ir.I32, i: f} }); ok {
			return v
		}
	case x.t == ir.U32:
		if v, ok := intBinary(e.Op, x.u, y.u, func(f func(*thread) uint32) val { return val{t: ir.U32, u: f} }); ok {
			return v
		}
	case x.t == ir.U64:
		if v, ok := intBinary(e.Op, x.w, y.w, func(f func(*thread) uint64) val { return val{t: ir.U64, w: f} }); ok {
			return v
		}
	}
	c.fail(e.At, "cannot run %s", ir.ExprString(e))
	return zero(e.Type())
}

func floatBinary(op ir.BinOp, x, y func(*thread) float32) (val, bool) {
	num := func(f func(*thread) float32) (val, bool) { return val{t: ir.F32, f: f}, true }
	cmp := func(f func(*thread) bool) (val, bool) { return val{t: ir.Bool, b: f}, true }
	switch op {
	case ir.Add:
		return num(func(t *thread) float32 { return float32(x(t) + y(t)) })
	case ir.Sub:
		return num(func(t *thread) float32 { return float32(x(t) - y(t)) })
	case ir.Mul:
		// The conversion rounds the product: Go may not fuse it into an add.
		return num(func(t *thread) float32 { return float32(x(t) * y(t)) })
	case ir.Div:
		return num(func(t *thread) float32 { return float32(x(t) / y(t)) })
	case ir.Lt:
		return cmp(func(t *thread) bool { return x(t) < y(t) })
	case ir.Le:
		return cmp(func(t *thread) bool { return x(t) <= y(t) })
	case ir.Gt:
		return cmp(func(t *thread) bool { return x(t) > y(t) })
	case ir.Ge:
		return cmp(func(t *thread) bool { return x(t) >= y(t) })
	case ir.Eq:
		return cmp(func(t *thread) bool { return x(t) == y(t) })
	case ir.Ne:
		return cmp(func(t *thread) bool { return x(t) != y(t) })
	}
	return val{}, false
}

// intBinary is Go's arithmetic on T: wrap-around, truncating division that
// faults on zero, shifts by the count as Go defines them.
func intBinary[T int32 | uint32 | uint64](op ir.BinOp, x, y func(*thread) T, mk func(func(*thread) T) val) (val, bool) {
	num := func(f func(*thread) T) (val, bool) { return mk(f), true }
	cmp := func(f func(*thread) bool) (val, bool) { return val{t: ir.Bool, b: f}, true }
	switch op {
	case ir.Add:
		return num(func(t *thread) T { return x(t) + y(t) })
	case ir.Sub:
		return num(func(t *thread) T { return x(t) - y(t) })
	case ir.Mul:
		return num(func(t *thread) T { return x(t) * y(t) })
	case ir.Div:
		return num(func(t *thread) T { return x(t) / y(t) })
	case ir.Rem:
		return num(func(t *thread) T { return x(t) % y(t) })
	case ir.Shl:
		return num(func(t *thread) T { return x(t) << y(t) })
	case ir.Shr:
		return num(func(t *thread) T { return x(t) >> y(t) })
	case ir.BitAnd:
		return num(func(t *thread) T { return x(t) & y(t) })
	case ir.BitOr:
		return num(func(t *thread) T { return x(t) | y(t) })
	case ir.BitXor:
		return num(func(t *thread) T { return x(t) ^ y(t) })
	case ir.Lt:
		return cmp(func(t *thread) bool { return x(t) < y(t) })
	case ir.Le:
		return cmp(func(t *thread) bool { return x(t) <= y(t) })
	case ir.Gt:
		return cmp(func(t *thread) bool { return x(t) > y(t) })
	case ir.Ge:
		return cmp(func(t *thread) bool { return x(t) >= y(t) })
	case ir.Eq:
		return cmp(func(t *thread) bool { return x(t) == y(t) })
	case ir.Ne:
		return cmp(func(t *thread) bool { return x(t) != y(t) })
	}
	return val{}, false
}
