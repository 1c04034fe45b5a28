package dsl

import (
	"fmt"
	"math"

	"github.com/kernelgen/kernelgen/ir"
)

// Val is an expression under construction. Methods build new expressions;
// operands may be Vals or Go literals, which take the other operand's type.
type Val struct {
	b *Builder
	e ir.Expr
}

func (b *Builder) val(e ir.Expr) Val { return Val{b: b, e: e} }

// Expr returns the IR expression.
func (v Val) Expr() ir.Expr { return v.e }

// Type is the expression's type.
func (v Val) Type() ir.Type {
	if v.e == nil {
		return ir.Invalid
	}
	return v.e.Type()
}

// F32 and friends make typed constants.
func (b *Builder) F32(x float32) Val { return b.val(&ir.Const{T: ir.F32, F: x, At: callerPos()}) }
func (b *Builder) U32(x uint32) Val  { return b.val(&ir.Const{T: ir.U32, I: int64(x), At: callerPos()}) }
func (b *Builder) I32(x int32) Val   { return b.val(&ir.Const{T: ir.I32, I: int64(x), At: callerPos()}) }
func (b *Builder) Bool(x bool) Val   { return b.val(&ir.Const{T: ir.Bool, B: x, At: callerPos()}) }

// lit turns x into a Val of type want (Invalid: x must carry its own type).
func (b *Builder) lit(x any, want ir.Type) Val {
	at := callerPos()
	bad := func(format string, args ...any) Val {
		b.errs = append(b.errs, &ir.Error{Pos: at, Msg: fmt.Sprintf(format, args...)})
		return b.val(&ir.Const{T: ir.Invalid, At: at})
	}
	switch x := x.(type) {
	case Val:
		if x.b != b {
			return bad("value from another kernel's builder")
		}
		return x
	case int:
		switch want {
		case ir.U32:
			if x < 0 || x > math.MaxUint32 {
				return bad("literal %d does not fit u32", x)
			}
			return b.val(&ir.Const{T: ir.U32, I: int64(x), At: at})
		case ir.U64:
			if x < 0 {
				return bad("literal %d does not fit u64", x)
			}
			return b.val(&ir.Const{T: ir.U64, I: int64(x), At: at})
		case ir.I32:
			if x < math.MinInt32 || x > math.MaxInt32 {
				return bad("literal %d does not fit i32", x)
			}
			return b.val(&ir.Const{T: ir.I32, I: int64(x), At: at})
		case ir.F32:
			if float64(float32(x)) != float64(x) {
				return bad("literal %d is not exact in f32", x)
			}
			return b.val(&ir.Const{T: ir.F32, F: float32(x), At: at})
		case ir.Invalid:
			return bad("untyped literal %d; say b.U32(%d), b.I32(%d) or b.F32(%d)", x, x, x, x)
		}
		return bad("integer literal %d where %s is needed", x, want)
	case float64:
		if want != ir.F32 {
			if want == ir.Invalid {
				return bad("untyped literal %v; say b.F32(%v)", x, x)
			}
			return bad("float literal %v where %s is needed; convert the other side with .F32()", x, want)
		}
		if float64(float32(x)) != x {
			return bad("literal %v is not exact in f32; write it as float32(%v) to round it deliberately", x, x)
		}
		return b.val(&ir.Const{T: ir.F32, F: float32(x), At: at})
	case float32:
		if want != ir.F32 && want != ir.Invalid {
			return bad("float literal %v where %s is needed", x, want)
		}
		return b.val(&ir.Const{T: ir.F32, F: x, At: at})
	case bool:
		if want != ir.Bool && want != ir.Invalid {
			return bad("bool literal where %s is needed", want)
		}
		return b.val(&ir.Const{T: ir.Bool, B: x, At: at})
	}
	return bad("cannot use %T as a value", x)
}

func (v Val) bin(op ir.BinOp, y any) Val {
	yv := v.b.lit(y, v.Type())
	return v.b.val(&ir.Binary{Op: op, X: v.e, Y: yv.e, At: callerPos()})
}

func (v Val) Add(y any) Val     { return v.bin(ir.Add, y) }
func (v Val) Sub(y any) Val     { return v.bin(ir.Sub, y) }
func (v Val) Mul(y any) Val     { return v.bin(ir.Mul, y) }
func (v Val) Div(y any) Val     { return v.bin(ir.Div, y) }
func (v Val) Rem(y any) Val     { return v.bin(ir.Rem, y) }
func (v Val) Shl(y any) Val     { return v.bin(ir.Shl, y) }
func (v Val) Shr(y any) Val     { return v.bin(ir.Shr, y) }
func (v Val) BitAnd(y any) Val  { return v.bin(ir.BitAnd, y) }
func (v Val) BitOr(y any) Val   { return v.bin(ir.BitOr, y) }
func (v Val) Lt(y any) Val      { return v.bin(ir.Lt, y) }
func (v Val) Le(y any) Val      { return v.bin(ir.Le, y) }
func (v Val) Gt(y any) Val      { return v.bin(ir.Gt, y) }
func (v Val) Ge(y any) Val      { return v.bin(ir.Ge, y) }
func (v Val) Eq(y any) Val      { return v.bin(ir.Eq, y) }
func (v Val) Ne(y any) Val      { return v.bin(ir.Ne, y) }
func (v Val) AndAlso(y any) Val { return v.bin(ir.LogAnd, y) }
func (v Val) OrElse(y any) Val  { return v.bin(ir.LogOr, y) }

// Neg is exact negation; Not is logical not.
func (v Val) Neg() Val { return v.b.val(&ir.Unary{Op: ir.Neg, X: v.e, At: callerPos()}) }
func (v Val) Not() Val { return v.b.val(&ir.Unary{Op: ir.Not, X: v.e, At: callerPos()}) }

// F32, U32, U64 and I32 convert the value (float to int truncates; an i32
// widens to u64 as C converts it: a negative one wraps).
func (v Val) F32() Val { return v.conv(ir.F32) }
func (v Val) U32() Val { return v.conv(ir.U32) }
func (v Val) U64() Val { return v.conv(ir.U64) }
func (v Val) I32() Val { return v.conv(ir.I32) }

func (v Val) conv(t ir.Type) Val {
	if v.Type() == t {
		return v
	}
	return v.b.val(&ir.Unary{Op: ir.Convert, X: v.e, To: t, At: callerPos()})
}

// Bitcast reinterprets the 32 bits as type t.
func (v Val) Bitcast(t ir.Type) Val {
	return v.b.val(&ir.Unary{Op: ir.Bitcast, X: v.e, To: t, At: callerPos()})
}

func (b *Builder) call(fn ir.Intrinsic, args ...any) Val {
	at := callerPos()
	es := make([]ir.Expr, len(args))
	for i, a := range args {
		es[i] = b.lit(a, ir.F32).e
	}
	return b.val(&ir.Call{Fn: fn, Args: es, At: at})
}

// FMA is x*y + z with a single rounding.
func (b *Builder) FMA(x, y, z any) Val { return b.call(ir.FMA, x, y, z) }

// ExpNative is the backend's exp (native contracts only).
func (b *Builder) ExpNative(x any) Val { return b.call(ir.ExpNative, x) }

// Min and Max of two f32 values (y < x ? y : x and y > x ? y : x).
func (b *Builder) Min(x, y any) Val { return b.call(ir.Min, x, y) }
func (b *Builder) Max(x, y any) Val { return b.call(ir.Max, x, y) }

// Dot4 is the backend's 4-wide dot product (native contracts only).
func (b *Builder) Dot4(x, y [4]Val) Val {
	return b.call(ir.Dot4, x[0], x[1], x[2], x[3], y[0], y[1], y[2], y[3])
}

// Select yields x if cond else y; both are evaluated.
func (b *Builder) Select(cond, x, y any) Val {
	at := callerPos()
	var t ir.Type
	if xv, ok := x.(Val); ok {
		t = xv.Type()
	} else if yv, ok := y.(Val); ok {
		t = yv.Type()
	}
	return b.val(&ir.Select{Cond: b.lit(cond, ir.Bool).e, X: b.lit(x, t).e, Y: b.lit(y, t).e, At: at})
}

// Span is a run of consecutive elements of an array or buffer, an operand
// of the vector operations.
type Span struct{ s ir.Span }

// From is the span of a's elements starting at i.
func (a Arr) From(i any) Span { return Span{ir.Span{Array: a.a, Off: a.b.lit(i, ir.U32).e}} }

// From is the span of x's elements starting at i.
func (x Buf) From(i any) Span { return Span{ir.Span{Buf: x.buf, Off: x.b.lit(i, ir.U32).e}} }

// VecDot is the backend's dot product of n elements of x and y (native
// contracts only; see ir.VecDot).
func (b *Builder) VecDot(x, y Span, n any) Val {
	return b.val(&ir.VecDot{X: x.s, Y: y.s, N: b.lit(n, ir.U32).e, At: callerPos()})
}

// VecSilu writes the backend's SiLU of n elements of src to dst (native
// contracts only; see ir.VecSilu).
func (b *Builder) VecSilu(dst, src Span, n any) {
	at := callerPos()
	b.emit(&ir.VecSilu{Dst: dst.s, Src: src.s, N: b.lit(n, ir.U32).e, At: at})
}
