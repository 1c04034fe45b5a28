package ggmlcpu

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/kernelgen/kernelgen/emit/internal/cfamily"
	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ir/ctype"
)

// reserved are the lowering's own names and what ggml-cpu declares.
var reserved = cfamily.CPPReserved(`params dst group n_groups
	groups_x groups_y groups_z group_x group_y group_z local_x local_y local_z tid
	dot_f32 butterfly_sum f32_bits bits_f32 MIN MAX GGML_ASSERT expf fmaf sqrtf memcpy
	ggml_vec_dot_f32 ggml_vec_silu_f32 ggml_barrier`)

var xyz = [3]string{"x", "y", "z"}

// fn lowers one kernel to one function.
type fn struct {
	e  *emitter
	op *glue.Op
	d  glue.Dispatch
	k  *ir.Kernel
	p  *cfamily.Printer
	b  *bounds
	// lanes[d] is the workgroup size along d, "" where it is 1.
	lanes [3]string
	// grid[d] is true where the grid has more than one group along d.
	grid [3]bool
	// coord[d], where set, spells group d's coordinate at its one use.
	coord [3]string
	// perLane are the vars and private arrays a thread must keep across a
	// phase (the lanes run one after another between barriers), in order;
	// single is true when the workgroup is one lane (no per-lane index).
	perLane []any
	isLane  map[any]bool
	single  bool
	shared  []*ir.Array
	// groupVars are the loop variables of loops around a phase boundary.
	groupVars map[*ir.Var]bool
	err       error
}

func (e *emitter) kernel(op *glue.Op, d glue.Dispatch) (string, error) {
	k := d.Kernel
	if err := cfamily.Unsupported("ggml-cpu", k); err != nil {
		return "", err
	}
	f := &fn{e: e, op: op, d: d, k: k, b: newBounds(k, e.instances), isLane: map[any]bool{}, groupVars: map[*ir.Var]bool{}}
	f.single = true
	for dim := 0; dim < 3; dim++ {
		if n, ok := static(k.Workgroup[dim]); !ok || n != 1 {
			f.single = false
		}
		if n, ok := static(k.Grid[dim]); !ok || n != 1 {
			f.grid[dim] = true
		}
	}
	dia := &dialect{CStyle: cfamily.CStyle{Types: ctype.C}, f: f}
	f.p = cfamily.New(dia, k)
	for dim := 0; dim < 3; dim++ {
		if n, ok := static(k.Workgroup[dim]); !ok || n != 1 {
			f.lanes[dim] = f.p.Expr(k.Workgroup[dim])
		}
	}
	for _, b := range k.Buffers {
		if reserved[b.Name] {
			f.p.SetName(b, b.Name+"_data")
		}
	}
	f.analyze(k.Body)
	f.nameAll()
	text := f.print()
	if f.err != nil {
		return "", fmt.Errorf("ggmlcpu: %s: %v", k.ID(), f.err)
	}
	return text, nil
}

func (f *fn) fail(format string, args ...any) {
	if f.err == nil {
		f.err = fmt.Errorf(format, args...)
	}
}

// run is a barrier-free stretch of statements, or one collective statement.
type run struct {
	collective bool
	stmts      []ir.Stmt
}

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

// analyze finds what must live per lane: a var or private array defined in
// one phase and used in a later one, and every reduction's result.
func (f *fn) analyze(body []ir.Stmt) {
	mark := func(key any) {
		if !f.isLane[key] {
			f.isLane[key] = true
			f.perLane = append(f.perLane, key)
		}
	}
	runs := splitRuns(body)
	for ri, r := range runs {
		if r.collective {
			switch s := r.stmts[0].(type) {
			case *ir.For:
				f.groupVars[s.Var] = true
				f.analyze(s.Body)
			case *ir.If:
				f.analyze(s.Then)
				f.analyze(s.Else)
			case *ir.Reduce:
				mark(s.Var)
			}
			continue
		}
		for _, s := range r.stmts {
			var key any
			switch s := s.(type) {
			case *ir.Let:
				key = s.Var
			case *ir.DeclArray:
				if s.Array.Space == ir.Private {
					key = s.Array
				}
			}
			for _, later := range runs[ri+1:] {
				if key != nil && refers(later.stmts, key) {
					mark(key)
				}
			}
		}
	}
	ir.WalkStmts(body, func(s ir.Stmt) {
		if d, ok := s.(*ir.DeclArray); ok && d.Array.Space == ir.Shared && !contains(f.shared, d.Array) {
			f.shared = append(f.shared, d.Array)
		}
	})
}

func contains(as []*ir.Array, a *ir.Array) bool {
	for _, x := range as {
		if x == a {
			return true
		}
	}
	return false
}

// refers reports whether body (nested statements included) uses key, a var
// or an array.
func refers(body []ir.Stmt, key any) bool {
	found := false
	span := func(sp ir.Span) {
		if sp.Array != nil && any(sp.Array) == key {
			found = true
		}
	}
	ir.WalkStmts(body, func(s ir.Stmt) {
		switch s := s.(type) {
		case *ir.Assign:
			found = found || any(s.Var) == key
		case *ir.ArrayStore:
			found = found || any(s.Array) == key
		case *ir.VecSilu:
			span(s.Dst)
			span(s.Src)
		}
		for _, e := range ir.StmtExprs(s) {
			ir.WalkExpr(e, func(x ir.Expr) {
				switch x := x.(type) {
				case *ir.VarRef:
					found = found || any(x.Var) == key
				case *ir.ArrayLoad:
					found = found || any(x.Array) == key
				case *ir.VecDot:
					span(x.X)
					span(x.Y)
				}
			})
		}
	})
	return found
}

// dslSuffix is what the DSL appends to make a name unique in its kernel.
var dslSuffix = regexp.MustCompile(`_[0-9]+$`)

// nameAll names every local as C scopes allow: a name is reused wherever no
// enclosing scope holds it, so the DSL's kernel-wide suffixes mostly go.
func (f *fn) nameAll() {
	var scopes []map[string]bool
	push := func() { scopes = append(scopes, map[string]bool{}) }
	pop := func() { scopes = scopes[:len(scopes)-1] }
	taken := func(n string) bool {
		if reserved[n] {
			return true
		}
		for _, s := range scopes {
			if s[n] {
				return true
			}
		}
		return false
	}
	declare := func(key any, irName string) {
		base := dslSuffix.ReplaceAllString(irName, "")
		n := base
		for i := 2; taken(n); i++ {
			n = fmt.Sprintf("%s_%d", base, i)
		}
		scopes[len(scopes)-1][n] = true
		if f.isLane[key] && !f.single {
			f.p.SetName(key, n+"[tid]")
		} else {
			f.p.SetName(key, n)
		}
	}
	push()
	for _, x := range f.k.Params {
		scopes[0][f.p.Name(x, x.Name)] = true
	}
	for _, x := range f.k.Args {
		scopes[0][f.p.Name(x, x.Name)] = true
	}
	for _, x := range f.k.Buffers {
		scopes[0][f.p.Name(x, x.Name)] = true
	}
	push() // the group loop: per-lane and shared storage
	for _, key := range f.perLane {
		declare(key, entityName(key))
	}
	for _, a := range f.shared {
		declare(a, a.Name)
	}
	var lane func(body []ir.Stmt)
	lane = func(body []ir.Stmt) {
		for _, s := range body {
			switch s := s.(type) {
			case *ir.Let:
				if !f.isLane[s.Var] {
					declare(s.Var, s.Var.Name)
				}
			case *ir.DeclArray:
				if s.Array.Space == ir.Private && !f.isLane[s.Array] {
					declare(s.Array, s.Array.Name)
				}
			case *ir.For:
				push()
				declare(s.Var, s.Var.Name)
				lane(s.Body)
				pop()
			case *ir.If:
				push()
				lane(s.Then)
				pop()
				push()
				lane(s.Else)
				pop()
			}
		}
	}
	var group func(body []ir.Stmt)
	group = func(body []ir.Stmt) {
		for _, r := range splitRuns(body) {
			if !r.collective {
				push()
				lane(r.stmts)
				pop()
				continue
			}
			switch s := r.stmts[0].(type) {
			case *ir.For:
				push()
				declare(s.Var, s.Var.Name)
				group(s.Body)
				pop()
			case *ir.If:
				push()
				group(s.Then)
				pop()
				push()
				group(s.Else)
				pop()
			}
		}
	}
	group(f.k.Body)
}

func entityName(key any) string {
	switch x := key.(type) {
	case *ir.Var:
		return x.Name
	case *ir.Array:
		return x.Name
	}
	return "?"
}

// storage is a per-lane or shared entity's C name without the lane index.
func (f *fn) storage(key any) string {
	return strings.TrimSuffix(f.p.Name(key, entityName(key)), "[tid]")
}

func (f *fn) print() string {
	p, k := f.p, f.k
	if op := f.d.Op; op.Summary != "" {
		p.Line("// %s: %s", k.Name, op.Summary)
	}
	p.Line("static void %s(const ggml_compute_params * params, ggml_tensor * dst) {", DispatchedName(f.op.Name, k))
	p.Indent()
	f.bindings()
	f.asserts()
	f.groupLoop()
	p.Dedent()
	p.Line("}")
	return strings.Join(p.Lines(), "\n") + "\n"
}

// used reports the params, args and buffers k refers to (derived params
// pull in what they derive from).
func used(k *ir.Kernel) map[any]bool {
	u := map[any]bool{}
	var expr func(e ir.Expr)
	span := func(sp ir.Span) {
		if sp.Buf != nil {
			u[sp.Buf] = true
		}
	}
	expr = func(e ir.Expr) {
		ir.WalkExpr(e, func(x ir.Expr) {
			switch x := x.(type) {
			case *ir.ParamRef:
				if !u[x.Param] && x.Param.Derived != nil {
					expr(x.Param.Derived)
				}
				u[x.Param] = true
			case *ir.ArgRef:
				u[x.Arg] = true
			case *ir.Load:
				u[x.Buf] = true
			case *ir.VecDot:
				span(x.X)
				span(x.Y)
			}
		})
	}
	for d := 0; d < 3; d++ {
		expr(k.Grid[d])
		expr(k.Workgroup[d])
	}
	for _, r := range k.Requires {
		expr(r.Cond)
	}
	ir.WalkStmts(k.Body, func(s ir.Stmt) {
		switch s := s.(type) {
		case *ir.Store:
			u[s.Buf] = true
		case *ir.VecSilu:
			span(s.Dst)
			span(s.Src)
		}
		for _, e := range ir.StmtExprs(s) {
			expr(e)
		}
	})
	return u
}

// bindings reads the kernel's params, args and buffers from the node.
func (f *fn) bindings() {
	p, k := f.p, f.k
	u := used(k)
	for _, x := range k.Params {
		if !u[x] {
			continue
		}
		val := ""
		if x.Derived != nil {
			val = p.Expr(x.Derived)
		} else if val = node(f.op.Choice(f.d, x.Name)); val == "" {
			f.fail("param %s has no choice in the glue", x.Name)
		}
		p.Line("const %s %s = %s;", ctype.C.Of(x.Type), p.Name(x, x.Name), val)
	}
	for i, x := range k.Args {
		if u[x] {
			p.Line("const %s %s = %s;", ctype.C.Of(x.Type), p.Name(x, x.Name), node(f.d.Args[i].Expr))
		}
	}
	for i, x := range k.Buffers {
		if u[x] {
			p.Line("%s * %s = %s;", qualified(x), p.Name(x, x.Name), f.pointer(f.d.Bind[i], x))
		}
	}
	p.Line("")
}

func qualified(b *ir.Buffer) string {
	if b.Access.CanWrite() {
		return ctype.C.Of(b.Elem.ValueType())
	}
	return "const " + ctype.C.Of(b.Elem.ValueType())
}

// pointer is the C pointer to a bound buffer's first element.
func (f *fn) pointer(b glue.Binding, buf *ir.Buffer) string {
	base, off := "dst->"+b.Tensor+"->data", node(b.Offset)
	switch {
	case b.Tensor == "op":
		base = "dst->data"
	case b.Tensor == "scratch" && f.op.Scratch != nil && f.op.Scratch.InDst:
		base, off = "dst->data", join(node(f.op.Scratch.Offset), off)
	case b.Tensor == "scratch":
		base = "params->wdata"
	}
	s := fmt.Sprintf("(%s *) %s", qualified(buf), base)
	if off != "" {
		s += " + " + off
	}
	if b.OnlyIf != "" {
		s = fmt.Sprintf("%s ? %s : nullptr", b.OnlyIf, s)
	}
	return s
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " + " + b
}

// asserts check the kernel's requirements on its params, which ggml-cpu
// chooses at run time from the node (a GPU backend builds only variants
// that meet them), then bound the runtime sizes of the stack arrays by what
// the variant table allows.
func (f *fn) asserts() {
	for _, r := range f.k.Requires {
		if _, isStatic := static(r.Cond); !isStatic {
			f.p.Line("GGML_ASSERT(%s && %q);", f.p.Expr(r.Cond), r.Msg)
		}
	}
	seen := map[string]bool{}
	check := func(e ir.Expr, what string) int64 {
		n, ok := f.b.max(e)
		if !ok {
			f.fail("%s has no bound over the variant table", what)
			return 1
		}
		if _, isStatic := static(e); !isStatic {
			if text := fmt.Sprintf("GGML_ASSERT(%s <= %d);", f.p.Expr(e), n); !seen[text] {
				seen[text] = true
				f.p.Line("%s", text)
			}
		}
		return n
	}
	ir.WalkStmts(f.k.Body, func(s ir.Stmt) {
		if d, ok := s.(*ir.DeclArray); ok {
			check(d.Array.Len, "array "+d.Array.Name)
		}
	})
	if len(f.perLane) > 0 && !f.single {
		check(f.laneCount(), "the workgroup size")
	}
}

// laneCount is the workgroup's thread count as an IR expression.
func (f *fn) laneCount() ir.Expr {
	w := f.k.Workgroup
	return &ir.Binary{Op: ir.Mul, X: &ir.Binary{Op: ir.Mul, X: w[0], Y: w[1]}, Y: w[2]}
}

// laneCountText prints the thread count, the dimensions of one left out.
func (f *fn) laneCountText() string {
	if n, ok := static(f.laneCount()); ok {
		return fmt.Sprint(n)
	}
	var parts []string
	for _, l := range f.lanes {
		if l != "" {
			parts = append(parts, paren(l, strings.Contains(l, " ")))
		}
	}
	return strings.Join(parts, " * ")
}

func (f *fn) bound(e ir.Expr) int64 {
	n, _ := f.b.max(e)
	return n
}

// groupLoop deals the grid's workgroups out to the threads in turn and runs
// each.
func (f *fn) groupLoop() {
	p, k := f.p, f.k
	var dims []int
	for d := 0; d < 3; d++ {
		if f.grid[d] {
			dims = append(dims, d)
		}
	}
	total := "1"
	var sizes []string
	switch len(dims) {
	case 0:
	case 1:
		total = p.Expr(k.Grid[dims[0]])
		sizes = []string{total}
	default:
		for _, d := range dims {
			n := "groups_" + xyz[d]
			p.Line("const int64_t %s = %s;", n, p.Expr(k.Grid[d]))
			sizes = append(sizes, n)
		}
		total = strings.Join(sizes, " * ")
	}
	p.Line("const int64_t n_groups = %s;", total)
	p.Line("")
	p.Line("for (int64_t group = params->ith; group < n_groups; group += params->nth) {")
	p.Indent()
	uses := map[int]int{}
	walkBuiltins(k, func(b *ir.BuiltinRef) {
		if b.Builtin == ir.GroupID {
			uses[b.Dim]++
		}
	})
	// a coordinate whose one use is a local's whole value ("s = group_y")
	// is that local's value, not a name of its own
	named := map[int]bool{}
	ir.WalkStmts(k.Body, func(s ir.Stmt) {
		if l, ok := s.(*ir.Let); ok {
			if b, ok := l.Value.(*ir.BuiltinRef); ok && b.Builtin == ir.GroupID && uses[b.Dim] == 1 {
				named[b.Dim] = true
			}
		}
	})
	for i, d := range dims {
		if uses[d] == 0 {
			continue
		}
		coord := "group"
		if i > 0 {
			coord = "group / " + paren(strings.Join(sizes[:i], " * "), i > 1)
		}
		if i < len(dims)-1 {
			coord += " % " + sizes[i]
		}
		if named[d] {
			f.coord[d] = coord
			continue
		}
		p.Line("const uint32_t group_%s = %s;", xyz[d], coord)
	}
	for _, key := range f.perLane {
		f.declareStorage(key)
	}
	for _, a := range f.shared {
		p.Line("%s %s[%d];", ctype.C.Of(a.Elem), f.storage(a), f.bound(a.Len))
	}
	f.block(k.Body)
	p.Dedent()
	p.Line("}")
}

func paren(s string, need bool) string {
	if need {
		return "(" + s + ")"
	}
	return s
}

func (f *fn) declareStorage(key any) {
	lanes := ""
	if !f.single {
		lanes = fmt.Sprintf("[%d]", f.bound(f.laneCount()))
	}
	switch x := key.(type) {
	case *ir.Var:
		f.p.Line("%s %s%s;", ctype.C.Of(x.Type), f.storage(x), lanes)
	case *ir.Array:
		f.p.Line("%s %s%s[%d];", ctype.C.Of(x.Elem), f.storage(x), lanes, f.bound(x.Len))
	}
}

func walkBuiltins(k *ir.Kernel, visit func(*ir.BuiltinRef)) {
	ir.WalkStmts(k.Body, func(s ir.Stmt) {
		for _, e := range ir.StmtExprs(s) {
			ir.WalkExpr(e, func(x ir.Expr) {
				if b, ok := x.(*ir.BuiltinRef); ok {
					visit(b)
				}
			})
		}
	})
}

// block lowers statements at workgroup level: each barrier-free run becomes
// a loop over the lanes; barriers end a run; reductions gather every lane's
// value, then sum the clusters.
func (f *fn) block(body []ir.Stmt) {
	p := f.p
	for _, r := range splitRuns(body) {
		if !r.collective {
			f.laneLoop(func() { p.Stmts(r.stmts) }, r.stmts)
			continue
		}
		switch s := r.stmts[0].(type) {
		case *ir.Barrier:
			// the lane loops before and after it are the ordering
		case *ir.Reduce:
			if s.Order != ir.Butterfly {
				f.fail("%s: a %s-order reduction has no ggml-cpu lowering (native-cpu kernels take VecDot)", s.At, s.Order)
				continue
			}
			f.laneLoop(func() { p.Line("%s = %s;", p.Name(s.Var, s.Var.Name), p.Expr(s.X)) }, nil)
			if !f.single {
				f.e.use("butterfly_sum")
				p.Line("butterfly_sum(%s, %s, %s);", f.storage(s.Var), f.laneCountText(), p.Expr(s.Width))
			}
		case *ir.For:
			v := p.Name(s.Var, s.Var.Name)
			step := "++" + v
			if c, ok := s.Step.(*ir.Const); !ok || c.I != 1 {
				step = v + " += " + f.groupExpr(s.Step)
			}
			p.Line("for (%s %s = %s; %s < %s; %s) {", ctype.C.Of(s.Var.Type), v, f.groupExpr(s.Start), v, f.groupExpr(s.End), step)
			p.Indent()
			f.block(s.Body)
			p.Dedent()
			p.Line("}")
		case *ir.If:
			p.Line("if (%s) {", f.groupExpr(s.Cond))
			p.Indent()
			f.block(s.Then)
			p.Dedent()
			if len(s.Else) > 0 {
				p.Line("} else {")
				p.Indent()
				f.block(s.Else)
				p.Dedent()
			}
			p.Line("}")
		}
	}
}

// groupExpr prints an expression evaluated once per workgroup: it may use
// params, args, group ids and the loops around it, never a lane's value.
func (f *fn) groupExpr(e ir.Expr) string {
	ir.WalkExpr(e, func(x ir.Expr) {
		switch x := x.(type) {
		case *ir.VarRef:
			if !f.groupVars[x.Var] {
				f.fail("%s: %s, a lane's value, decides control flow around a barrier", x.At, x.Var.Name)
			}
		case *ir.BuiltinRef:
			if x.Builtin == ir.LocalID {
				f.fail("%s: a lane id decides control flow around a barrier", x.At)
			}
		}
	})
	return f.p.Expr(e)
}

// laneLoop runs body for every lane of the workgroup, x fastest. stmts, when
// given, is what body prints: a run of comments and dependency points only
// needs no loop.
func (f *fn) laneLoop(body func(), stmts []ir.Stmt) {
	p := f.p
	if stmts != nil && !anyWork(stmts) {
		body()
		return
	}
	open := 0
	for d := 2; d >= 0; d-- {
		if f.lanes[d] == "" {
			continue
		}
		p.Line("for (uint32_t local_%s = 0; local_%s < %s; ++local_%s) {", xyz[d], xyz[d], f.lanes[d], xyz[d])
		p.Indent()
		open++
	}
	if len(f.perLane) > 0 && !f.single {
		p.Line("const uint32_t tid = %s;", f.tid())
	}
	body()
	for ; open > 0; open-- {
		p.Dedent()
		p.Line("}")
	}
}

func anyWork(stmts []ir.Stmt) bool {
	for _, s := range stmts {
		switch s.(type) {
		case *ir.Comment, *ir.DepSync:
		default:
			return true
		}
	}
	return false
}

// tid is the lane's linear index, x fastest.
func (f *fn) tid() string {
	expr := ""
	for d := 2; d >= 0; d-- {
		if f.lanes[d] == "" {
			continue
		}
		if expr == "" {
			expr = "local_" + xyz[d]
			continue
		}
		inner := expr
		if strings.Contains(inner, " ") {
			inner = "(" + inner + ")"
		}
		expr = fmt.Sprintf("local_%s + %s * %s", xyz[d], paren(f.lanes[d], strings.Contains(f.lanes[d], " ")), inner)
	}
	return expr
}

// dialect spells the IR for ggml-cpu's C++.
type dialect struct {
	cfamily.CStyle
	f *fn
}

func (d *dialect) Bitcast(from, to ir.Type, x string) string {
	switch {
	case from == ir.F32 && to == ir.U32:
		d.f.e.use("f32_bits")
		return "f32_bits(" + x + ")"
	case from == ir.F32 && to == ir.I32:
		d.f.e.use("f32_bits")
		return "(int32_t) f32_bits(" + x + ")"
	case to == ir.F32:
		d.f.e.use("bits_f32")
		return "bits_f32((uint32_t) " + x + ")"
	}
	return fmt.Sprintf("(%s) %s", ctype.C.Of(to), x)
}

func (d *dialect) Call(fn ir.Intrinsic, args []string) string {
	switch fn {
	case ir.FMA:
		return "fmaf(" + strings.Join(args, ", ") + ")"
	case ir.ExpNative:
		return "expf(" + args[0] + ")"
	}
	d.f.fail("%s has no ggml-cpu spelling", fn)
	return fn.String()
}

// ExactBinary: the operators are exact as long as the compiler does not
// contract them, which portable builds forbid (-ffp-contract=off).
func (d *dialect) ExactBinary(ir.BinOp, string, string) string { return "" }

func (d *dialect) Builtin(b ir.Builtin, dim int) string {
	if b == ir.GroupID {
		if !d.f.grid[dim] {
			return "0u"
		}
		if c := d.f.coord[dim]; c != "" {
			return c
		}
		return "group_" + xyz[dim]
	}
	if d.f.lanes[dim] == "" {
		return "0u"
	}
	return "local_" + xyz[dim]
}

func (d *dialect) Decl(v *ir.Var, portable bool) string {
	if d.f.isLane[v] {
		return ""
	}
	return d.CStyle.Decl(v, portable)
}

func (d *dialect) ArrayDecl(a *ir.Array, name, _ string) string {
	if d.f.isLane[a] {
		return ""
	}
	return fmt.Sprintf("%s %s[%d];", ctype.C.Of(a.Elem), name, d.f.bound(a.Len))
}

func (*dialect) Unroll() string            { return "" }
func (*dialect) Barrier(bool) string       { return "" }
func (*dialect) Reserved(name string) bool { return reserved[name] }
func (*dialect) DepSync(ir.DepKind) string { return "" }
func (d *dialect) VecSilu(n, dst, src string) string {
	return fmt.Sprintf("ggml_vec_silu_f32(%s, %s, %s)", n, dst, src)
}

// Assert stops as ggml-cpu's own kernels do on a bad input (GET_ROWS's
// row ids): GGML_ASSERT, one condition each, so the message says which.
func (*dialect) Assert(cond string) string { return "GGML_ASSERT(" + cond + ");" }

func (d *dialect) VecDot(n, x, y string) string {
	d.f.e.use("dot_f32")
	return fmt.Sprintf("dot_f32(%s, %s, %s)", n, x, y)
}

func (d *dialect) Reduce(string, string, string, ir.Order, bool, cfamily.Exchange) []string {
	d.f.fail("a reduction inside a lane loop")
	return nil
}

func (e *emitter) use(helper string) {
	if e.uses == nil {
		e.uses = map[string]bool{}
	}
	e.uses[helper] = true
}
