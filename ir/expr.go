package ir

// Expr is a side-effect-free value. Every operation on F32 rounds its exact
// result to binary32 (nearest even) on its own; see doc.go.
type Expr interface {
	Type() Type
	Pos() Pos
	isExpr()
}

// Const is a literal. F32 values hold an exactly representable binary32
// value in F, integers in I, booleans in B.
type Const struct {
	T  Type
	F  float32
	I  int64
	B  bool
	At Pos
}

type ParamRef struct {
	Param *Param
	At    Pos
}

type ArgRef struct {
	Arg *Arg
	At  Pos
}

type BuiltinRef struct {
	Builtin Builtin
	Dim     int // 0, 1, 2 for x, y, z
	At      Pos
}

type VarRef struct {
	Var *Var
	At  Pos
}

type ArrayLoad struct {
	Array *Array
	Index Expr
	At    Pos
}

// Load reads element Index of a buffer (BF16 widens to F32).
type Load struct {
	Buf   *Buffer
	Index Expr
	At    Pos
}

// UnOp is a unary operation.
type UnOp uint8

const (
	Neg     UnOp = iota + 1 // arithmetic negation (exact for F32: flips the sign)
	Not                     // logical not (Bool)
	Convert                 // value conversion to Unary.To (float->int truncates; the value must be in range)
	Bitcast                 // reinterpret the 32 bits as Unary.To
)

func (o UnOp) String() string {
	switch o {
	case Neg:
		return "-"
	case Not:
		return "!"
	case Convert:
		return "convert"
	case Bitcast:
		return "bitcast"
	}
	return "?"
}

type Unary struct {
	Op UnOp
	X  Expr
	To Type // result type of Convert and Bitcast
	At Pos
}

// BinOp is a binary operation. Both operands have the same type.
type BinOp uint8

const (
	Add BinOp = iota + 1
	Sub
	Mul
	Div // F32: correctly rounded division (native kernels only); ints: truncating
	Rem // ints only
	Shl
	Shr // arithmetic for I32, logical for U32
	BitAnd
	BitOr
	BitXor
	Lt
	Le
	Gt
	Ge
	Eq
	Ne
	LogAnd
	LogOr
)

var binOpText = map[BinOp]string{
	Add: "+", Sub: "-", Mul: "*", Div: "/", Rem: "%", Shl: "<<", Shr: ">>",
	BitAnd: "&", BitOr: "|", BitXor: "^", Lt: "<", Le: "<=", Gt: ">", Ge: ">=",
	Eq: "==", Ne: "!=", LogAnd: "&&", LogOr: "||",
}

func (o BinOp) String() string { return binOpText[o] }

// IsCompare reports whether o yields Bool from two numbers.
func (o BinOp) IsCompare() bool { return o >= Lt && o <= Ne }

// IsLogical reports whether o combines two Bools.
func (o BinOp) IsLogical() bool { return o == LogAnd || o == LogOr }

// IsBitwise reports whether o is an integer-only bit operation.
func (o BinOp) IsBitwise() bool { return o == Rem || (o >= Shl && o <= BitXor) }

type Binary struct {
	Op   BinOp
	X, Y Expr
	At   Pos
}

// Intrinsic is a named operation with fixed semantics.
type Intrinsic uint8

const (
	// FMA(a, b, c) = a*b + c with one rounding. Emitters must emit a true fused
	// operation (fma, fmaf, sycl::fma) and never split it.
	FMA Intrinsic = iota + 1
	// ExpNative(x) is the backend's exp (expf, __expf, exp, sycl::native::exp);
	// its rounding is backend-defined. Native kernels only.
	ExpNative
	// Min(x, y) = y < x ? y : x; Max(x, y) = y > x ? y : x.
	Min
	Max
	// Dot4(a0..a3, b0..b3) is the backend's 4-wide dot product (dot(float4,
	// float4)); association and contraction are backend-defined. Native only.
	Dot4
)

var intrinsicText = map[Intrinsic]string{FMA: "fma", ExpNative: "exp_native", Min: "min", Max: "max", Dot4: "dot4"}

func (i Intrinsic) String() string { return intrinsicText[i] }

// NativeOnly reports whether i's rounding is backend-defined.
func (i Intrinsic) NativeOnly() bool { return i == ExpNative || i == Dot4 }

type Call struct {
	Fn   Intrinsic
	Args []Expr
	At   Pos
}

// Select evaluates both X and Y, then yields X if Cond else Y. Both operands
// must be safe to evaluate.
type Select struct {
	Cond, X, Y Expr
	At         Pos
}

func (e *Const) Type() Type      { return e.T }
func (e *ParamRef) Type() Type   { return e.Param.Type }
func (e *ArgRef) Type() Type     { return e.Arg.Type }
func (e *BuiltinRef) Type() Type { return U32 }
func (e *VarRef) Type() Type     { return e.Var.Type }
func (e *ArrayLoad) Type() Type  { return e.Array.Elem }
func (e *Load) Type() Type       { return e.Buf.Elem.ValueType() }
func (e *Unary) Type() Type {
	if e.Op == Convert || e.Op == Bitcast {
		return e.To
	}
	return e.X.Type()
}
func (e *Binary) Type() Type {
	if e.Op.IsCompare() || e.Op.IsLogical() {
		return Bool
	}
	return e.X.Type()
}
func (e *Call) Type() Type   { return F32 }
func (e *Select) Type() Type { return e.X.Type() }

func (e *Const) Pos() Pos      { return e.At }
func (e *ParamRef) Pos() Pos   { return e.At }
func (e *ArgRef) Pos() Pos     { return e.At }
func (e *BuiltinRef) Pos() Pos { return e.At }
func (e *VarRef) Pos() Pos     { return e.At }
func (e *ArrayLoad) Pos() Pos  { return e.At }
func (e *Load) Pos() Pos       { return e.At }
func (e *Unary) Pos() Pos      { return e.At }
func (e *Binary) Pos() Pos     { return e.At }
func (e *Call) Pos() Pos       { return e.At }
func (e *Select) Pos() Pos     { return e.At }

func (*Const) isExpr()      {}
func (*ParamRef) isExpr()   {}
func (*ArgRef) isExpr()     {}
func (*BuiltinRef) isExpr() {}
func (*VarRef) isExpr()     {}
func (*ArrayLoad) isExpr()  {}
func (*Load) isExpr()       {}
func (*Unary) isExpr()      {}
func (*Binary) isExpr()     {}
func (*Call) isExpr()       {}
func (*Select) isExpr()     {}
