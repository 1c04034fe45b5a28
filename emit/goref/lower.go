package goref

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/kernelgen/kernelgen/ir"
)

// lowerer turns one kernel into the body of a Go function with parameters
// kgP (params), kgA (args) and kgB (buffers).
type lowerer struct {
	k     *ir.Kernel
	names map[any]string
	taken map[string]bool // names given, so renames cannot collide
	// perThread vars live across a collective, so they are stored per thread
	// (name[kgTid]); all other vars are plain Go locals.
	perThread map[*ir.Var]bool
	arrayLen  map[*ir.Array]string
	// read holds the vars some expression reads; others get `_ = v`.
	read map[*ir.Var]bool
	err  error
}

func lowerKernel(k *ir.Kernel, typ string) ([]jen.Code, error) {
	l := &lowerer{k: k, names: map[any]string{}, taken: map[string]bool{}, perThread: map[*ir.Var]bool{}, arrayLen: map[*ir.Array]string{}, read: map[*ir.Var]bool{}}
	ir.WalkStmts(k.Body, func(s ir.Stmt) {
		for _, e := range ir.StmtExprs(s) {
			ir.WalkExpr(e, func(x ir.Expr) {
				if r, ok := x.(*ir.VarRef); ok {
					l.read[r.Var] = true
				}
			})
		}
	})
	var out []jen.Code
	// Params, derived params, args and buffers become locals named as in the IR.
	for _, p := range k.Params {
		n := l.name(p, p.Name)
		if _, lit := p.Derived.(*ir.Const); lit {
			// A literal alone would make the local an untyped int.
			out = append(out, jen.Var().Id(n).Id(goType(p.Type)).Op("=").Add(l.expr(p.Derived, "")))
		} else if p.Derived != nil {
			out = append(out, jen.Id(n).Op(":=").Add(l.expr(p.Derived, "")))
		} else {
			out = append(out, jen.Id(n).Op(":=").Id("kgP").Dot(goName(p.Name)))
		}
	}
	for _, a := range k.Args {
		out = append(out, jen.Id(l.name(a, a.Name)).Op(":=").Id("kgA").Dot(goName(a.Name)))
	}
	for _, b := range k.Buffers {
		out = append(out, jen.Id(l.name(b, b.Name)).Op(":=").Id("kgB").Dot(goName(b.Name)))
	}
	var used []jen.Code
	for _, p := range k.Params {
		used = append(used, jen.Id(l.names[p]))
	}
	for _, a := range k.Args {
		used = append(used, jen.Id(l.names[a]))
	}
	for _, b := range k.Buffers {
		used = append(used, jen.Id(l.names[b]))
	}
	if len(used) > 0 {
		lhs := make([]jen.Code, len(used))
		for i := range lhs {
			lhs[i] = jen.Id("_")
		}
		out = append(out, jen.List(lhs...).Op("=").List(used...))
	}
	out = append(out, l.checks()...)

	out = append(out,
		jen.List(jen.Id("kgWX"), jen.Id("kgWY"), jen.Id("kgWZ")).Op(":=").List(
			jen.Int().Call(l.expr(k.Workgroup[0], "")), jen.Int().Call(l.expr(k.Workgroup[1], "")), jen.Int().Call(l.expr(k.Workgroup[2], ""))),
		jen.Id("kgN").Op(":=").Id("kgWX").Op("*").Id("kgWY").Op("*").Id("kgWZ"),
		jen.List(jen.Id("kgNX"), jen.Id("kgNY"), jen.Id("kgNZ")).Op(":=").List(
			jen.Int().Call(l.expr(k.Grid[0], "")), jen.Int().Call(l.expr(k.Grid[1], "")), jen.Int().Call(l.expr(k.Grid[2], ""))),
	)
	l.analyze(k.Body)
	// Per-thread storage, allocated once and reused by every workgroup.
	ir.WalkStmts(k.Body, func(s ir.Stmt) {
		switch s := s.(type) {
		case *ir.DeclArray:
			a := s.Array
			n := l.name(a, a.Name)
			ln := n + "Len"
			l.arrayLen[a] = ln
			out = append(out, jen.Id(ln).Op(":=").Int().Call(l.expr(a.Len, "")))
			size := jen.Id(ln)
			if a.Space == ir.Private {
				size = jen.Id("kgN").Op("*").Id(ln)
			}
			out = append(out, jen.Id(n).Op(":=").Make(jen.Index().Id(goType(a.Elem)), size), jen.Id("_").Op("=").Id(n))
		case *ir.Let:
			if l.perThread[s.Var] {
				out = append(out, jen.Id(l.name(s.Var, s.Var.Name)).Op(":=").Make(jen.Index().Id(goType(s.Var.Type)), jen.Id("kgN")))
			}
		case *ir.Reduce:
			out = append(out, jen.Id(l.name(s.Var, s.Var.Name)).Op(":=").Make(jen.Index().Id(goType(s.Var.Type)), jen.Id("kgN")))
		}
	})
	body := l.block(k.Body)
	out = append(out,
		jen.For(jen.Id("kgGZ").Op(":=").Lit(0), jen.Id("kgGZ").Op("<").Id("kgNZ"), jen.Id("kgGZ").Op("++")).Block(
			jen.For(jen.Id("kgGY").Op(":=").Lit(0), jen.Id("kgGY").Op("<").Id("kgNY"), jen.Id("kgGY").Op("++")).Block(
				jen.For(jen.Id("kgGX").Op(":=").Lit(0), jen.Id("kgGX").Op("<").Id("kgNX"), jen.Id("kgGX").Op("++")).Block(body...))),
		jen.Return(jen.Nil()),
	)
	if l.err != nil {
		return nil, l.err
	}
	return out, nil
}

func (l *lowerer) name(key any, name string) string {
	if n, ok := l.names[key]; ok {
		return n
	}
	n, err := safeIdent(name)
	if err != nil && l.err == nil {
		l.err = err
	}
	// A renamed keyword (range -> range_) must not take another entity's
	// name (an IR name range_).
	for l.taken[n] {
		n += "_"
	}
	l.taken[n] = true
	l.names[key] = n
	return n
}

// checks returns code rejecting params outside their domains and variants
// that break a requirement, before anything runs.
func (l *lowerer) checks() []jen.Code {
	var out []jen.Code
	for _, p := range l.k.Params {
		if p.Domain == nil || p.Derived != nil {
			continue
		}
		var vals []jen.Code
		for _, d := range p.Domain {
			vals = append(vals, jen.Lit(int(d)))
		}
		out = append(out, jen.Switch(jen.Id(l.names[p])).Block(
			jen.Case(vals...),
			jen.Default().Block(jen.Return(jen.Qual("fmt", "Errorf").Call(
				jen.Lit(fmt.Sprintf("%s: %s %%d is not in %v", l.k.ID(), p.Name, p.Domain)), jen.Id(l.names[p]))))))
	}
	for _, r := range l.k.Requires {
		out = append(out, jen.If(jen.Op("!").Parens(l.expr(r.Cond, ""))).Block(
			jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(fmt.Sprintf("%s: %s", l.k.ID(), r.Msg))))))
	}
	// Reduction clusters must not straddle rows of the workgroup.
	seen := map[string]bool{}
	ir.WalkStmts(l.k.Body, func(s ir.Stmt) {
		if r, ok := s.(*ir.Reduce); ok && !seen[ir.ExprString(r.Width)] {
			seen[ir.ExprString(r.Width)] = true
			w := l.expr(r.Width, "")
			wx := l.expr(l.k.Workgroup[0], "")
			out = append(out, jen.If(jen.Add(w.Clone()).Op("==").Lit(0).Op("||").Add(wx).Op("%").Add(w).Op("!=").Lit(0)).Block(
				jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(fmt.Sprintf("%s: reduction width %s must divide the workgroup x size", l.k.ID(), ir.ExprString(r.Width)))))))
		}
	})
	return out
}

// analyze marks the vars that must be stored per thread: those defined in one
// barrier-free stretch of a block and referenced after it.
func (l *lowerer) analyze(body []ir.Stmt) {
	runs := splitRuns(body)
	for ri, run := range runs {
		if run.collective {
			s := run.stmts[0]
			switch s := s.(type) {
			case *ir.For:
				l.analyze(s.Body)
			case *ir.If:
				l.analyze(s.Then)
				l.analyze(s.Else)
			}
			continue
		}
		for _, s := range run.stmts {
			let, ok := s.(*ir.Let)
			if !ok {
				continue
			}
			for _, later := range runs[ri+1:] {
				for _, ls := range later.stmts {
					if refersTo(ls, let.Var) {
						l.perThread[let.Var] = true
					}
				}
			}
		}
	}
}

func refersTo(s ir.Stmt, v *ir.Var) bool {
	found := false
	check := func(e ir.Expr) {
		ir.WalkExpr(e, func(x ir.Expr) {
			if r, ok := x.(*ir.VarRef); ok && r.Var == v {
				found = true
			}
		})
	}
	ir.WalkStmts([]ir.Stmt{s}, func(st ir.Stmt) {
		for _, e := range ir.StmtExprs(st) {
			check(e)
		}
		if a, ok := st.(*ir.Assign); ok && a.Var == v {
			found = true
		}
	})
	return found
}

type run struct {
	collective bool
	stmts      []ir.Stmt
}

// splitRuns cuts a block into maximal barrier-free stretches and single
// collective statements (Barrier, Reduce, or a For/If containing one).
func splitRuns(body []ir.Stmt) []run {
	var out []run
	for _, s := range body {
		if ir.IsCollective(s) {
			out = append(out, run{collective: true, stmts: []ir.Stmt{s}})
			continue
		}
		if len(out) == 0 || out[len(out)-1].collective {
			out = append(out, run{})
		}
		out[len(out)-1].stmts = append(out[len(out)-1].stmts, s)
	}
	return out
}

// block lowers a block outside any thread loop (collective level).
func (l *lowerer) block(body []ir.Stmt) []jen.Code {
	var out []jen.Code
	for _, r := range splitRuns(body) {
		if !r.collective {
			out = append(out, l.threadLoop(r.stmts, nil, nil))
			continue
		}
		switch s := r.stmts[0].(type) {
		case *ir.Barrier:
			out = append(out, jen.Comment("barrier: the thread loops before and after it are the ordering"))
		case *ir.Reduce:
			v := l.name(s.Var, s.Var.Name)
			out = append(out, l.threadLoop(nil, s.X, jen.Id(v).Index(jen.Id("kgTid")).Op("=").Add(l.expr(s.X, "kgTid"))))
			out = append(out, jen.Qual(rtPath, "Butterfly").Call(jen.Id(v), jen.Int().Call(l.expr(s.Width, ""))))
		case *ir.For:
			out = append(out, l.forStmt(s, "0", l.block(s.Body)))
		case *ir.If:
			st := jen.If(l.expr(s.Cond, "0")).Block(l.block(s.Then)...)
			if len(s.Else) > 0 {
				st.Else().Block(l.block(s.Else)...)
			}
			out = append(out, st)
		}
	}
	return out
}

// threadLoop runs stmts, then extra (which evaluates extraExpr), for every
// thread of the workgroup.
func (l *lowerer) threadLoop(stmts []ir.Stmt, extraExpr ir.Expr, extra jen.Code) jen.Code {
	var body []jen.Code
	var dims [3]bool
	mark := func(e ir.Expr) {
		ir.WalkExpr(e, func(x ir.Expr) {
			if b, ok := x.(*ir.BuiltinRef); ok && b.Builtin == ir.LocalID {
				dims[b.Dim] = true
			}
		})
	}
	ir.WalkStmts(stmts, func(s ir.Stmt) {
		for _, e := range ir.StmtExprs(s) {
			mark(e)
		}
	})
	mark(extraExpr)
	local := []jen.Code{
		jen.Id("kgLX").Op(":=").Uint32().Call(jen.Id("kgTid").Op("%").Id("kgWX")),
		jen.Id("kgLY").Op(":=").Uint32().Call(jen.Id("kgTid").Op("/").Id("kgWX").Op("%").Id("kgWY")),
		jen.Id("kgLZ").Op(":=").Uint32().Call(jen.Id("kgTid").Op("/").Parens(jen.Id("kgWX").Op("*").Id("kgWY"))),
	}
	for d := 0; d < 3; d++ {
		if dims[d] {
			body = append(body, local[d])
		}
	}
	for _, s := range stmts {
		body = append(body, l.stmt(s)...)
	}
	if extra != nil {
		body = append(body, extra)
	}
	return jen.For(jen.Id("kgTid").Op(":=").Lit(0), jen.Id("kgTid").Op("<").Id("kgN"), jen.Id("kgTid").Op("++")).Block(body...)
}

func (l *lowerer) forStmt(s *ir.For, tid string, body []jen.Code) jen.Code {
	v := l.name(s.Var, s.Var.Name)
	return jen.For(
		jen.Id(v).Op(":=").Id(goType(s.Var.Type)).Call(l.expr(s.Start, tid)),
		jen.Id(v).Op("<").Add(l.expr(s.End, tid)),
		jen.Id(v).Op("+=").Add(l.expr(s.Step, tid)),
	).Block(body...)
}

// stmt lowers a statement inside a thread loop (kgTid is the thread).
func (l *lowerer) stmt(s ir.Stmt) []jen.Code {
	const tid = "kgTid"
	switch s := s.(type) {
	case *ir.Let:
		n := l.name(s.Var, s.Var.Name)
		if l.perThread[s.Var] {
			return []jen.Code{jen.Id(n).Index(jen.Id(tid)).Op("=").Add(l.expr(s.Value, tid))}
		}
		decl := jen.Var().Id(n).Id(goType(s.Var.Type)).Op("=").Add(l.expr(s.Value, tid))
		if !l.read[s.Var] {
			return []jen.Code{decl, jen.Id("_").Op("=").Id(n)}
		}
		return []jen.Code{decl}
	case *ir.Assign:
		return []jen.Code{l.varRef(s.Var, tid).Op("=").Add(l.expr(s.Value, tid))}
	case *ir.DeclArray:
		return nil
	case *ir.ArrayStore:
		return []jen.Code{l.arrayRef(s.Array, s.Index, tid).Op("=").Add(l.expr(s.Value, tid))}
	case *ir.Store:
		val := l.expr(s.Value, tid)
		if s.Buf.Elem == ir.BF16 {
			val = jen.Qual(rtPath, "F32ToBF16").Call(val)
		}
		return []jen.Code{jen.Id(l.names[s.Buf]).Index(l.expr(s.Index, tid)).Op("=").Add(val)}
	case *ir.For:
		var body []jen.Code
		for _, x := range s.Body {
			body = append(body, l.stmt(x)...)
		}
		return []jen.Code{l.forStmt(s, tid, body)}
	case *ir.If:
		var then, els []jen.Code
		for _, x := range s.Then {
			then = append(then, l.stmt(x)...)
		}
		st := jen.If(l.expr(s.Cond, tid)).Block(then...)
		if len(s.Else) > 0 {
			for _, x := range s.Else {
				els = append(els, l.stmt(x)...)
			}
			st.Else().Block(els...)
		}
		return []jen.Code{st}
	case *ir.VecSilu:
		return []jen.Code{jen.Qual(rtPath, "VecSilu").Call(l.slice(s.Dst, s.N, tid), l.slice(s.Src, s.N, tid))}
	case *ir.Assert:
		what := fmt.Sprintf("assert %s failed", ir.ExprString(s.Cond))
		return []jen.Code{jen.If(jen.Op("!").Parens(l.expr(s.Cond, tid))).Block(jen.Panic(jen.Lit(what)))}
	case *ir.Comment:
		return []jen.Code{jen.Comment(s.Text)}
	case *ir.DepSync:
		// Dispatches run one after the other here: nothing to wait for.
		return []jen.Code{jen.Comment(s.Kind.String() + ": dispatches are ordered in the Go reference")}
	}
	if l.err == nil {
		l.err = fmt.Errorf("%s: %T inside a thread loop", s.Pos(), s)
	}
	return nil
}

func (l *lowerer) varRef(v *ir.Var, tid string) *jen.Statement {
	n := l.name(v, v.Name)
	if l.perThread[v] || isReduceVar(l.k, v) {
		return jen.Id(n).Index(jen.Id(tid))
	}
	return jen.Id(n)
}

func isReduceVar(k *ir.Kernel, v *ir.Var) bool {
	found := false
	ir.WalkStmts(k.Body, func(s ir.Stmt) {
		if r, ok := s.(*ir.Reduce); ok && r.Var == v {
			found = true
		}
	})
	return found
}

func (l *lowerer) arrayRef(a *ir.Array, idx ir.Expr, tid string) *jen.Statement {
	n := l.names[a]
	i := jen.Int().Call(l.expr(idx, tid))
	if a.Space == ir.Shared {
		return jen.Id(n).Index(i)
	}
	return jen.Id(n).Index(jen.Id(tid).Op("*").Id(l.arrayLen[a]).Op("+").Add(i))
}

// expr lowers an expression; tid is the thread index expression ("" where no
// per-thread value may appear).
func (l *lowerer) expr(e ir.Expr, tid string) *jen.Statement {
	switch e := e.(type) {
	case *ir.Const:
		switch e.T {
		case ir.F32:
			s := ir.F32String(e.F)
			if s == "-0.0" {
				return jen.Qual(rtPath, "NegZero")
			}
			return jen.Op(s)
		case ir.Bool:
			return jen.Lit(e.B)
		default:
			return jen.Op(fmt.Sprint(e.I))
		}
	case *ir.ParamRef:
		return jen.Id(l.names[e.Param])
	case *ir.ArgRef:
		return jen.Id(l.names[e.Arg])
	case *ir.BuiltinRef:
		if e.Builtin == ir.GroupID {
			return jen.Uint32().Call(jen.Id([]string{"kgGX", "kgGY", "kgGZ"}[e.Dim]))
		}
		return jen.Id([]string{"kgLX", "kgLY", "kgLZ"}[e.Dim])
	case *ir.VarRef:
		if tid == "" {
			l.fail(e.At, "variable %s where only params and args may appear", e.Var.Name)
		}
		return l.varRef(e.Var, tidOr0(tid))
	case *ir.ArrayLoad:
		return l.arrayRef(e.Array, e.Index, tidOr0(tid))
	case *ir.Load:
		x := jen.Id(l.names[e.Buf]).Index(l.expr(e.Index, tid))
		if e.Buf.Elem == ir.BF16 {
			return jen.Qual(rtPath, "BF16ToF32").Call(x)
		}
		return x
	case *ir.Unary:
		x := l.expr(e.X, tid)
		switch e.Op {
		case ir.Neg:
			return jen.Op("-").Parens(x)
		case ir.Not:
			return jen.Op("!").Parens(x)
		case ir.Convert:
			return jen.Id(goType(e.To)).Call(x)
		case ir.Bitcast:
			return bitcast(e.X.Type(), e.To, x)
		}
	case *ir.Binary:
		x, y := l.expr(e.X, tid), l.expr(e.Y, tid)
		expr := jen.Parens(jen.Add(x).Op(e.Op.String()).Add(y))
		if e.Op == ir.Mul && e.X.Type() == ir.F32 {
			// The explicit conversion keeps Go from fusing the product into an add.
			return jen.Float32().Call(jen.Add(x).Op("*").Add(y))
		}
		return expr
	case *ir.Call:
		args := make([]jen.Code, len(e.Args))
		for i, a := range e.Args {
			args[i] = l.expr(a, tid)
		}
		fn := map[ir.Intrinsic]string{ir.FMA: "FMA", ir.ExpNative: "ExpNative", ir.Min: "MinF32", ir.Max: "MaxF32", ir.Dot4: "Dot4"}[e.Fn]
		return jen.Qual(rtPath, fn).Call(args...)
	case *ir.Select:
		fn := map[ir.Type]string{ir.F32: "SelF32", ir.U32: "SelU32", ir.U64: "SelU64", ir.I32: "SelI32", ir.Bool: "SelBool"}[e.Type()]
		return jen.Qual(rtPath, fn).Call(l.expr(e.Cond, tid), l.expr(e.X, tid), l.expr(e.Y, tid))
	case *ir.VecDot:
		return jen.Qual(rtPath, "VecDot").Call(l.slice(e.X, e.N, tidOr0(tid)), l.slice(e.Y, e.N, tidOr0(tid)))
	}
	l.fail(e.Pos(), "cannot lower %s", ir.ExprString(e))
	return jen.Null()
}

// slice is the n elements of a span as a Go slice (a private array's
// elements of thread tid).
func (l *lowerer) slice(sp ir.Span, n ir.Expr, tid string) *jen.Statement {
	lo := jen.Int().Call(l.expr(sp.Off, tid))
	base := jen.Id(l.names[sp.Buf])
	if sp.Array != nil {
		base = jen.Id(l.names[sp.Array])
		if sp.Array.Space == ir.Private {
			lo = jen.Id(tid).Op("*").Id(l.arrayLen[sp.Array]).Op("+").Add(lo)
		}
	}
	return base.Index(lo.Clone(), lo.Clone().Op("+").Int().Call(l.expr(n, tid)))
}

func tidOr0(tid string) string {
	if tid == "" {
		return "0"
	}
	return tid
}

func (l *lowerer) fail(p ir.Pos, format string, args ...any) {
	if l.err == nil {
		l.err = fmt.Errorf("%s: %s", p, fmt.Sprintf(format, args...))
	}
}

func bitcast(from, to ir.Type, x *jen.Statement) *jen.Statement {
	switch {
	case from == ir.F32 && to == ir.U32:
		return jen.Qual(rtPath, "F32ToBits").Call(x)
	case from == ir.F32 && to == ir.I32:
		return jen.Int32().Call(jen.Qual(rtPath, "F32ToBits").Call(x))
	case to == ir.F32:
		return jen.Qual(rtPath, "BitsToF32").Call(jen.Uint32().Call(x))
	}
	return jen.Id(goType(to)).Call(x)
}
