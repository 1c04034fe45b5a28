package ir

// WalkExpr calls f on e and then on each sub-expression, depth first.
func WalkExpr(e Expr, f func(Expr)) {
	if e == nil {
		return
	}
	f(e)
	switch e := e.(type) {
	case *ArrayLoad:
		WalkExpr(e.Index, f)
	case *Load:
		WalkExpr(e.Index, f)
	case *Unary:
		WalkExpr(e.X, f)
	case *Binary:
		WalkExpr(e.X, f)
		WalkExpr(e.Y, f)
	case *Call:
		for _, a := range e.Args {
			WalkExpr(a, f)
		}
	case *Select:
		WalkExpr(e.Cond, f)
		WalkExpr(e.X, f)
		WalkExpr(e.Y, f)
	case *VecDot:
		WalkExpr(e.X.Off, f)
		WalkExpr(e.Y.Off, f)
		WalkExpr(e.N, f)
	}
}

// WalkStmts calls f on every statement in body, depth first, in order.
func WalkStmts(body []Stmt, f func(Stmt)) {
	for _, s := range body {
		f(s)
		switch s := s.(type) {
		case *For:
			WalkStmts(s.Body, f)
		case *If:
			WalkStmts(s.Then, f)
			WalkStmts(s.Else, f)
		}
	}
}

// StmtExprs returns the expressions a statement evaluates itself (not those of
// nested statements).
func StmtExprs(s Stmt) []Expr {
	switch s := s.(type) {
	case *Let:
		return []Expr{s.Value}
	case *Assign:
		return []Expr{s.Value}
	case *DeclArray:
		return []Expr{s.Array.Len}
	case *ArrayStore:
		return []Expr{s.Index, s.Value}
	case *Store:
		return []Expr{s.Index, s.Value}
	case *For:
		return []Expr{s.Start, s.End, s.Step}
	case *If:
		return []Expr{s.Cond}
	case *Assert:
		return []Expr{s.Cond}
	case *Reduce:
		return []Expr{s.X, s.Width}
	case *VecSilu:
		return []Expr{s.Dst.Off, s.Src.Off, s.N}
	}
	return nil
}

// IsCompileTime reports whether e depends only on constants and params.
func IsCompileTime(e Expr) bool {
	ok := true
	WalkExpr(e, func(x Expr) {
		switch x.(type) {
		case *Const, *ParamRef, *Unary, *Binary, *Select:
		default:
			ok = false
		}
	})
	return ok
}

// IsUniformArgs reports whether e depends only on constants, params and args.
func IsUniformArgs(e Expr) bool {
	ok := true
	WalkExpr(e, func(x Expr) {
		switch x.(type) {
		case *Const, *ParamRef, *ArgRef, *Unary, *Binary, *Select:
		default:
			ok = false
		}
	})
	return ok
}

// EvalInt evaluates an integer or boolean expression of params and args
// given their values by name (names are unique within a kernel). Booleans
// evaluate to 0 or 1. Integer arithmetic is exact (no 32-bit wrap-around).
func EvalInt(e Expr, params map[string]int64) (int64, bool) {
	switch e := e.(type) {
	case *Const:
		if e.T == Bool {
			if e.B {
				return 1, true
			}
			return 0, true
		}
		if e.T.IsInt() {
			return e.I, true
		}
	case *ParamRef:
		if e.Param.Derived != nil {
			return EvalInt(e.Param.Derived, params)
		}
		v, ok := params[e.Param.Name]
		return v, ok
	case *ArgRef:
		v, ok := params[e.Arg.Name]
		return v, ok
	case *Unary:
		x, ok := EvalInt(e.X, params)
		if !ok {
			return 0, false
		}
		switch e.Op {
		case Neg:
			return -x, e.X.Type().IsInt()
		case Not:
			return 1 - x, true
		case Convert:
			if e.To.IsInt() && e.X.Type().IsInt() || e.To == Bool {
				if e.To == Bool {
					return b2i(x != 0), true
				}
				return x, true
			}
		}
	case *Binary:
		x, ok1 := EvalInt(e.X, params)
		y, ok2 := EvalInt(e.Y, params)
		if !ok1 || !ok2 || !(e.X.Type().IsInt() || e.X.Type() == Bool) {
			return 0, false
		}
		switch e.Op {
		case Add:
			return x + y, true
		case Sub:
			return x - y, true
		case Mul:
			return x * y, true
		case Div:
			if y == 0 {
				return 0, false
			}
			return x / y, true
		case Rem:
			if y == 0 {
				return 0, false
			}
			return x % y, true
		case Shl:
			return x << uint(y), true
		case Shr:
			return x >> uint(y), true
		case BitAnd:
			return x & y, true
		case BitOr:
			return x | y, true
		case BitXor:
			return x ^ y, true
		case Lt:
			return b2i(x < y), true
		case Le:
			return b2i(x <= y), true
		case Gt:
			return b2i(x > y), true
		case Ge:
			return b2i(x >= y), true
		case Eq:
			return b2i(x == y), true
		case Ne:
			return b2i(x != y), true
		case LogAnd:
			return b2i(x != 0 && y != 0), true
		case LogOr:
			return b2i(x != 0 || y != 0), true
		}
	case *Select:
		c, ok := EvalInt(e.Cond, params)
		if !ok {
			return 0, false
		}
		if c != 0 {
			return EvalInt(e.X, params)
		}
		return EvalInt(e.Y, params)
	}
	return 0, false
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// HasReduce reports whether k reduces across lanes: its C-family kernels
// then take workgroup memory for subgroups narrower than a reduction.
func HasReduce(k *Kernel) bool {
	found := false
	WalkStmts(k.Body, func(s Stmt) {
		if _, ok := s.(*Reduce); ok {
			found = true
		}
	})
	return found
}

// SharedArrays returns k's shared (per-workgroup) arrays in declaration
// order, the order in which backends that pass workgroup memory as
// parameters (SYCL) take them.
func SharedArrays(k *Kernel) []*Array {
	var out []*Array
	WalkStmts(k.Body, func(s Stmt) {
		if d, ok := s.(*DeclArray); ok && d.Array.Space == Shared {
			out = append(out, d.Array)
		}
	})
	return out
}
