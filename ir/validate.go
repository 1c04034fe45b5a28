package ir

import "regexp"

var identRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// Validate checks a kernel's types, scopes, buffer access, uniformity of
// collectives and contract rules. Every error carries the DSL position.
func Validate(k *Kernel) error {
	v := &validator{k: k, names: map[string]Pos{}}
	v.run()
	return v.errs.Err()
}

type validator struct {
	k       *Kernel
	errs    ErrorList
	names   map[string]Pos
	params  map[*Param]bool
	args    map[*Arg]bool
	bufs    map[*Buffer]bool
	varying map[*Var]bool
}

type scope struct {
	parent *scope
	vars   map[*Var]bool
	arrays map[*Array]bool
}

func (s *scope) hasVar(x *Var) bool {
	for ; s != nil; s = s.parent {
		if s.vars[x] {
			return true
		}
	}
	return false
}

func (s *scope) hasArray(a *Array) bool {
	for ; s != nil; s = s.parent {
		if s.arrays[a] {
			return true
		}
	}
	return false
}

func newScope(parent *scope) *scope {
	return &scope{parent: parent, vars: map[*Var]bool{}, arrays: map[*Array]bool{}}
}

func (v *validator) declare(name string, p Pos) {
	if !identRE.MatchString(name) {
		v.errs.add(p, "name %q is not an identifier; use letters, digits and _", name)
	}
	if prev, ok := v.names[name]; ok {
		v.errs.add(p, "name %q is already used at %s; pick another name", name, prev)
		return
	}
	v.names[name] = p
}

func (v *validator) run() {
	k := v.k
	if k.Name == "" || !identRE.MatchString(k.Name) {
		v.errs.add(k.At, "kernel name %q is not an identifier", k.Name)
	}
	if k.Arith.Native && k.Arith.Backend == "" {
		v.errs.add(k.At, "native contract needs a backend name")
	}
	v.params, v.args, v.bufs = map[*Param]bool{}, map[*Arg]bool{}, map[*Buffer]bool{}
	for _, p := range k.Params {
		v.declare(p.Name, p.At)
		v.params[p] = true
		if p.Type != U32 && p.Type != I32 && p.Type != Bool {
			v.errs.add(p.At, "param %s has type %s; params are u32, i32 or bool", p.Name, p.Type)
		}
		if p.Derived != nil {
			v.expr(p.Derived, newScope(nil))
			if !IsCompileTime(p.Derived) || p.Derived.Type() != p.Type {
				v.errs.add(p.At, "derived param %s must be a compile-time %s expression", p.Name, p.Type)
			}
		}
	}
	for _, r := range k.Requires {
		v.expr(r.Cond, newScope(nil))
		if !IsCompileTime(r.Cond) || r.Cond.Type() != Bool {
			v.errs.add(r.At, "requirement must be a compile-time bool expression of params")
		}
	}
	for _, a := range k.Args {
		v.declare(a.Name, a.At)
		v.args[a] = true
		if !a.Type.IsValue() || a.Type == Bool || a.Type == U64 {
			v.errs.add(a.At, "arg %s has type %s; args are f32, i32 or u32", a.Name, a.Type)
		}
	}
	for _, b := range k.Buffers {
		v.declare(b.Name, b.At)
		v.bufs[b] = true
		if b.Access == 0 {
			v.errs.add(b.At, "buffer %s has no access mode", b.Name)
		}
		if b.Elem == Bool || b.Elem == Invalid || b.Elem == U64 {
			v.errs.add(b.At, "buffer %s has element type %s; use f32, bf16, i32 or u32", b.Name, b.Elem)
		}
		if b.Prior && b.Access != Read {
			v.errs.add(b.At, "buffer %s is marked prior but declared %s; prior marks a buffer the kernel only reads", b.Name, b.Access)
		}
		if b.Prior && !waits(k) {
			v.errs.add(b.At, "buffer %s is marked prior (the previous dispatch writes it), but the kernel never waits for that dispatch; add a dep_wait before reading it", b.Name)
		}
	}
	root := newScope(nil)
	for d := 0; d < 3; d++ {
		if w := k.Workgroup[d]; w == nil {
			v.errs.add(k.At, "workgroup size %c is not set", "xyz"[d])
		} else {
			v.expr(w, root)
			if !IsCompileTime(w) || !w.Type().IsInt() {
				v.errs.add(w.Pos(), "workgroup size must be a compile-time integer (constants and params only)")
			}
		}
		if g := k.Grid[d]; g == nil {
			v.errs.add(k.At, "grid size %c is not set", "xyz"[d])
		} else {
			v.expr(g, root)
			if !IsUniformArgs(g) || !g.Type().IsInt() {
				v.errs.add(g.Pos(), "grid size must be an integer expression of params and args")
			}
		}
	}
	v.varying = map[*Var]bool{}
	// Varying-ness propagates through loop-carried assignments: iterate to a fixpoint.
	for {
		n := len(v.varying)
		v.uniformity(k.Body, false)
		if len(v.varying) == n {
			break
		}
	}
	v.block(k.Body, root, false)
	if k.ArithFree {
		v.arithFree()
	}
}

// arithFree checks that a kernel marked ArithFree is what the mark says:
// portable, with no f32 arithmetic (its f32 values are only moved).
func (v *validator) arithFree() {
	k := v.k
	if k.Arith.Native {
		v.errs.add(k.At, "kernel %s is marked arith-free but built under %s; an arith-free kernel is built portable once", k.Name, k.Arith)
	}
	WalkStmts(k.Body, func(s Stmt) {
		switch s.(type) {
		case *Reduce, *VecSilu:
			v.errs.add(s.Pos(), "arith-free kernel %s reduces or vectorises (arithmetic a contract decides); drop the arith-free mark", k.Name)
		}
		for _, e := range StmtExprs(s) {
			WalkExpr(e, func(x Expr) {
				if floatArith(x) {
					v.errs.add(x.Pos(), "arith-free kernel %s computes with f32 values (%s); drop the arith-free mark", k.Name, ExprString(x))
				}
			})
		}
	})
}

// floatArith reports whether e itself is an f32 computation: an operator
// or intrinsic whose result or operands are f32 (a load or a move is not).
func floatArith(e Expr) bool {
	switch e := e.(type) {
	case *Binary:
		return e.X.Type() == F32
	case *Unary:
		return e.X.Type() == F32 || e.To == F32
	case *Call:
		return e.Type() == F32 || len(e.Args) > 0 && e.Args[0].Type() == F32
	case *VecDot:
		return true
	}
	return false
}

// varyingExpr reports whether e may differ between threads of a workgroup.
func (v *validator) varyingExpr(e Expr) bool {
	vary := false
	WalkExpr(e, func(x Expr) {
		switch x := x.(type) {
		case *BuiltinRef:
			if x.Builtin == LocalID {
				vary = true
			}
		case *VarRef:
			if v.varying[x.Var] {
				vary = true
			}
		case *ArrayLoad:
			// A private array may differ per thread. A shared one read
			// at a uniform index is one value for the workgroup: between
			// two barriers every thread sees the same element (a write
			// racing the read is a data race the kernel must not have).
			// Its index is walked on its own.
			if x.Array.Space != Shared {
				vary = true
			}
		case *VecDot:
			vary = vary || x.X.Array != nil || x.Y.Array != nil
		}
	})
	return vary
}

func (v *validator) uniformity(body []Stmt, vary bool) {
	for _, s := range body {
		switch s := s.(type) {
		case *Let:
			if vary || v.varyingExpr(s.Value) {
				v.varying[s.Var] = true
			}
		case *Assign:
			if vary || v.varyingExpr(s.Value) {
				v.varying[s.Var] = true
			}
		case *Reduce:
			v.varying[s.Var] = true
		case *For:
			inner := vary || v.varyingExpr(s.Start) || v.varyingExpr(s.End) || v.varyingExpr(s.Step)
			if inner {
				v.varying[s.Var] = true
			}
			v.uniformity(s.Body, inner)
		case *If:
			inner := vary || v.varyingExpr(s.Cond)
			v.uniformity(s.Then, inner)
			v.uniformity(s.Else, inner)
		}
	}
}

func (v *validator) block(body []Stmt, parent *scope, divergent bool) {
	sc := newScope(parent)
	for _, s := range body {
		v.stmt(s, sc, divergent)
	}
}

func (v *validator) defineVar(x *Var, sc *scope) {
	v.declare(x.Name, x.At)
	if !x.Type.IsValue() {
		v.errs.add(x.At, "variable %s has type %s; values are f32, i32, u32 or bool", x.Name, x.Type)
	}
	sc.vars[x] = true
}

func (v *validator) stmt(s Stmt, sc *scope, divergent bool) {
	switch s := s.(type) {
	case *Let:
		v.expr(s.Value, sc)
		if s.Value.Type() != s.Var.Type {
			v.errs.add(s.At, "let %s: value has type %s, variable has type %s", s.Var.Name, s.Value.Type(), s.Var.Type)
		}
		v.defineVar(s.Var, sc)
	case *Assign:
		v.expr(s.Value, sc)
		switch {
		case !sc.hasVar(s.Var):
			v.errs.add(s.At, "assignment to %s, which is not in scope", s.Var.Name)
		case !s.Var.Mutable:
			v.errs.add(s.At, "assignment to immutable %s; declare it with Var instead of Let", s.Var.Name)
		case s.Value.Type() != s.Var.Type:
			v.errs.add(s.At, "assignment to %s: value has type %s, variable has type %s", s.Var.Name, s.Value.Type(), s.Var.Type)
		}
	case *DeclArray:
		a := s.Array
		v.declare(a.Name, a.At)
		sc.arrays[a] = true
		v.expr(a.Len, sc)
		if !IsCompileTime(a.Len) || !a.Len.Type().IsInt() {
			v.errs.add(a.At, "array %s length must be a compile-time integer (constants and params only)", a.Name)
		}
		if !a.Elem.IsValue() || a.Elem == U64 {
			v.errs.add(a.At, "array %s has element type %s; arrays hold f32, i32, u32 or bool", a.Name, a.Elem)
		}
	case *ArrayStore:
		v.expr(s.Index, sc)
		v.expr(s.Value, sc)
		if !sc.hasArray(s.Array) {
			v.errs.add(s.At, "store to array %s, which is not in scope", s.Array.Name)
		}
		if !s.Index.Type().IsInt() {
			v.errs.add(s.At, "array index has type %s; use an integer", s.Index.Type())
		}
		if s.Value.Type() != s.Array.Elem {
			v.errs.add(s.At, "store of %s into %s array %s", s.Value.Type(), s.Array.Elem, s.Array.Name)
		}
	case *Store:
		v.expr(s.Index, sc)
		v.expr(s.Value, sc)
		b := s.Buf
		if !v.bufs[b] {
			v.errs.add(s.At, "store to buffer %s, which this kernel does not declare", b.Name)
			return
		}
		if !b.Access.CanWrite() {
			v.errs.add(s.At, "store to buffer %s, which is declared %s; declare it Write or ReadWrite (at %s)", b.Name, b.Access, b.At)
		}
		if !s.Index.Type().IsInt() {
			v.errs.add(s.At, "buffer index has type %s; use an integer", s.Index.Type())
		}
		if s.Value.Type() != b.Elem.ValueType() {
			v.errs.add(s.At, "store of %s into buffer %s of %s", s.Value.Type(), b.Name, b.Elem)
		}
	case *For:
		v.expr(s.Start, sc)
		v.expr(s.End, sc)
		v.expr(s.Step, sc)
		if !s.Var.Type.IsInt() || s.Var.Type == U64 {
			v.errs.add(s.At, "loop variable %s has type %s; use i32 or u32 (u64 is for offsets)", s.Var.Name, s.Var.Type)
		}
		for _, e := range []Expr{s.Start, s.End, s.Step} {
			if e.Type() != s.Var.Type {
				v.errs.add(e.Pos(), "loop bound has type %s, loop variable %s has type %s", e.Type(), s.Var.Name, s.Var.Type)
			}
		}
		loopVarying := v.varyingExpr(s.Start) || v.varyingExpr(s.End) || v.varyingExpr(s.Step)
		if loopVarying && anyCollective(s.Body) {
			v.errs.add(s.At, "loop %s has thread-dependent bounds but contains a barrier or reduction; make the bounds uniform", s.Var.Name)
		}
		inner := newScope(sc)
		v.defineVar(s.Var, inner)
		v.block(s.Body, inner, divergent || loopVarying)
	case *If:
		v.expr(s.Cond, sc)
		if s.Cond.Type() != Bool {
			v.errs.add(s.At, "if condition has type %s; compare it to get a bool", s.Cond.Type())
		}
		d := divergent || v.varyingExpr(s.Cond)
		v.block(s.Then, sc, d)
		v.block(s.Else, sc, d)
	case *Barrier:
		if divergent {
			v.errs.add(s.At, "barrier in thread-dependent control flow would deadlock; move it out of the branch or loop")
		}
	case *Reduce:
		v.expr(s.X, sc)
		v.expr(s.Width, sc)
		if divergent {
			v.errs.add(s.At, "reduction in thread-dependent control flow; every lane of the cluster must take part")
		}
		if s.X.Type() != F32 || s.Var.Type != F32 {
			v.errs.add(s.At, "reduction of %s; only f32 sums are supported", s.X.Type())
		}
		if !IsCompileTime(s.Width) || !s.Width.Type().IsInt() {
			v.errs.add(s.At, "reduction width must be a compile-time integer")
		}
		if s.Order == NativeOrder && !v.k.Arith.Native {
			v.errs.add(s.At, "native-order reduction in a portable kernel; use the butterfly order")
		}
		v.defineVar(s.Var, sc)
	case *VecSilu:
		for _, e := range StmtExprs(s) {
			v.expr(e, sc)
		}
		v.span(s.Dst, true, sc, s.At)
		v.span(s.Src, false, sc, s.At)
		v.vecLen(s.N, s.At, "vec_silu")
	case *Assert:
		v.expr(s.Cond, sc)
		if s.Cond.Type() != Bool {
			v.errs.add(s.At, "assert condition has type %s; compare it to get a bool", s.Cond.Type())
		}
		if !v.k.Arith.Native {
			v.errs.add(s.At, "assert in a portable kernel: only a backend that can stop checks it")
		}
	case *Comment, *DepSync:
	default:
		v.errs.add(s.Pos(), "unknown statement %T", s)
	}
}

func (v *validator) expr(e Expr, sc *scope) {
	WalkExpr(e, func(x Expr) {
		switch x := x.(type) {
		case *Const:
			if !x.T.IsValue() {
				v.errs.add(x.At, "constant of type %s", x.T)
			}
		case *ParamRef:
			if !v.params[x.Param] {
				v.errs.add(x.At, "param %s is not declared by kernel %s", x.Param.Name, v.k.Name)
			}
		case *ArgRef:
			if !v.args[x.Arg] {
				v.errs.add(x.At, "arg %s is not declared by kernel %s", x.Arg.Name, v.k.Name)
			}
		case *BuiltinRef:
			if x.Dim < 0 || x.Dim > 2 {
				v.errs.add(x.At, "%s dimension %d; use 0, 1 or 2", x.Builtin, x.Dim)
			}
		case *VarRef:
			if !sc.hasVar(x.Var) {
				v.errs.add(x.At, "%s is used outside its scope", x.Var.Name)
			}
		case *ArrayLoad:
			if !sc.hasArray(x.Array) {
				v.errs.add(x.At, "array %s is used outside its scope", x.Array.Name)
			}
			if !x.Index.Type().IsInt() {
				v.errs.add(x.At, "array index has type %s; use an integer", x.Index.Type())
			}
		case *Load:
			if !v.bufs[x.Buf] {
				v.errs.add(x.At, "load from buffer %s, which this kernel does not declare", x.Buf.Name)
			} else if !x.Buf.Access.CanRead() {
				v.errs.add(x.At, "load from buffer %s, which is declared %s; declare it Read or ReadWrite (at %s)", x.Buf.Name, x.Buf.Access, x.Buf.At)
			}
			if !x.Index.Type().IsInt() {
				v.errs.add(x.At, "buffer index has type %s; use an integer", x.Index.Type())
			}
		case *Unary:
			v.unary(x)
		case *Binary:
			v.binary(x)
		case *Call:
			v.call(x)
		case *VecDot:
			v.span(x.X, false, sc, x.At)
			v.span(x.Y, false, sc, x.At)
			v.vecLen(x.N, x.At, "vec_dot")
		case *Select:
			if x.Cond.Type() != Bool {
				v.errs.add(x.At, "select condition has type %s; want bool", x.Cond.Type())
			}
			if x.X.Type() != x.Y.Type() {
				v.errs.add(x.At, "select arms differ: %s and %s", x.X.Type(), x.Y.Type())
			}
		}
	})
}

func (v *validator) unary(x *Unary) {
	t := x.X.Type()
	switch x.Op {
	case Neg:
		if t != F32 && t != I32 {
			v.errs.add(x.At, "negation of %s; only f32 and i32 can be negated", t)
		}
	case Not:
		if t != Bool {
			v.errs.add(x.At, "logical not of %s; want bool", t)
		}
	case Convert:
		if !x.To.IsValue() || !t.IsValue() || x.To == Bool || t == Bool {
			v.errs.add(x.At, "conversion from %s to %s", t, x.To)
		}
	case Bitcast:
		if t == Bool || x.To == Bool || t == U64 || x.To == U64 || !t.IsValue() || !x.To.IsValue() {
			v.errs.add(x.At, "bitcast from %s to %s; both sides must be 32-bit numbers", t, x.To)
		}
	default:
		v.errs.add(x.At, "unknown unary operation")
	}
}

func (v *validator) binary(x *Binary) {
	tx, ty := x.X.Type(), x.Y.Type()
	if tx != ty {
		v.errs.add(x.At, "%s of mismatched types %s and %s; convert one side (e.g. .F32(), .U32())", x.Op, tx, ty)
		return
	}
	switch {
	case x.Op.IsLogical():
		if tx != Bool {
			v.errs.add(x.At, "%s of %s; want bool operands", x.Op, tx)
		}
	case x.Op.IsCompare():
		if tx == Bool && x.Op != Eq && x.Op != Ne {
			v.errs.add(x.At, "ordering comparison of bools")
		}
	case x.Op.IsBitwise():
		if !tx.IsInt() {
			v.errs.add(x.At, "%s of %s; integer operands only", x.Op, tx)
		}
	default:
		if tx == Bool {
			v.errs.add(x.At, "arithmetic %s on bool", x.Op)
		}
		if tx == F32 && x.Op == Div && !v.k.Arith.Native {
			v.errs.add(x.At, "f32 division in a portable kernel: its rounding differs between backends; use the portable division routine (dsl.DivPortable)")
		}
	}
}

func (v *validator) call(x *Call) {
	want := map[Intrinsic]int{FMA: 3, ExpNative: 1, Min: 2, Max: 2, Dot4: 8}[x.Fn]
	if want == 0 {
		v.errs.add(x.At, "unknown intrinsic")
		return
	}
	if len(x.Args) != want {
		v.errs.add(x.At, "%s takes %d arguments, got %d", x.Fn, want, len(x.Args))
		return
	}
	for _, a := range x.Args {
		if a.Type() != F32 {
			v.errs.add(x.At, "%s of %s; f32 operands only", x.Fn, a.Type())
			return
		}
	}
	if x.Fn.NativeOnly() && !v.k.Arith.Native {
		v.errs.add(x.At, "%s in a portable kernel: its rounding is backend-defined; use the portable routine", x.Fn)
	}
}

// waits reports whether k waits for the previous dispatch anywhere.
func waits(k *Kernel) bool {
	found := false
	WalkStmts(k.Body, func(s Stmt) {
		if d, ok := s.(*DepSync); ok && d.Kind == DepWait {
			found = true
		}
	})
	return found
}
