package glue

import (
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// FamilyView is what the upstream glue renders for one shared kernel
// (ops.Shared): its plain op and its ids op as one node kind, the flag
// telling them apart, and one launch that takes the flag as a template
// argument, after the ids op's gather.
type FamilyView struct {
	Name   string // the shared kernel's (and the plain op's) name
	GGMLOp string
	// Select is the C condition selecting the family's nodes, Flag the
	// shared kernel's flag and FlagExpr the C condition that sets it (the
	// ids op's own slot is present).
	Select, Flag, FlagExpr string
	// Checks are supports_op's conditions of both ops, IdsChecks those only
	// the ids op has.
	Checks, IdsChecks []Check
	// CheckLines are both as the lines of supports_op's conjunction, each
	// with its reason, the last ending the statement (after a "return
	// true"); Conjunction the same statement whole, its first line the
	// return of the first check.
	CheckLines, Conjunction []string
	// Locals choose the variant params over the node, the flag included.
	Locals []Local
	// Derived are the kernel's derived params that its launch geometry
	// names, over the others.
	Derived []Local
	// Scratch: where the gather writes (see Op.Scratch).
	ScratchInDst               bool
	ScratchOffset, ScratchSize string
	Gather                     DispatchView
	// Function is the shared kernel's function, Grid and Workgroup its
	// launch over its params, CallArgs its arguments (lines of at most
	// about 100 columns).
	Function  string
	Grid      [3]string
	Workgroup [3]string
	CallArgs  []string
	// Pointers and Args are the call's arguments as locals (the scratch
	// pointer is the launcher's own), CallNames the call over them.
	Pointers, Args []Local
	CallNames      []string
	// ArgDecls and PointerDecls declare Args and Pointers, several to a line.
	ArgDecls, PointerDecls []string
	// TemplateArgs are the kernel's non-derived params as template arguments.
	TemplateArgs string
	// AllLocals are every variant param chosen over the node (Locals keeps
	// the switch key and the bools).
	AllLocals []Local
	// GatherArgs are the gather's arguments over the node, in lines.
	GatherArgs []string
	// WrittenSrc is the src slot both ops write in place.
	WrittenSrc int
	// Own is the backend's own part, from Names.Family (nil without it).
	Own any
	// Key is the param the dispatch switches on, Cases its values; the
	// launcher takes the non-bool params as LaunchParams and the bool ones
	// as BoolParams (BoolArgs), and Pick chooses the kernel among them.
	Key                                string
	Cases                              []Case
	LaunchParams, BoolParams, BoolArgs string
	Pick                               string
	// Table is the variants as the table that backends building one
	// kernel per variant index (Vulkan's pipelines, OpenCL's programs).
	Table VariantTable
}

// VariantTable is a shared kernel's variants as a table: Columns are the
// switch key, then the other non-bool params, Rows their values, one C
// initialiser per dispatch case (Cases); Bools are the bool params, which
// index the kernels beside the row, BoolIndex their lower-case loop indices.
type VariantTable struct {
	Columns, Rows    []string
	Bools, BoolIndex []string
}

// FamilyParts are what a backend's own part of a family's view
// (Names.Family) is built from: the common view, filled but for Own, and
// the facts beneath it.
type FamilyParts struct {
	View *FamilyView
	// Kernel is the shared kernel under the backend's native contract.
	Kernel *ir.Kernel
	// Compute is the ids op's compute dispatch, whose buffers the shared
	// kernel's bind by role (Bind); Gather is the gather both forms share.
	Compute, Gather Dispatch
	// Args are the kernel's args as C over the node, GatherArgs the gather's.
	Args, GatherArgs map[string]string
	// ArgTerms and GatherTerms are the same as terms, Choices the variant
	// params chosen over the node (the flag's included) and Scratch the
	// gather's scratch (View.ScratchInDst says where).
	ArgTerms, GatherTerms, Choices map[string]Term
	Scratch                        Term
	plainRoles                     map[string]bool
}

// Bind is how the shared kernel's buffer b binds (nil where the ids op's
// compute kernel has no buffer of its role) and whether the plain form
// has that tensor too (if not, only the ids form's node does).
func (p FamilyParts) Bind(b *ir.Buffer) (bind *Binding, inPlain bool) {
	return bindOf(p.Compute, b), p.plainRoles[b.Role]
}

// bindOf is d's binding of the buffer of b's role (node slot), nil where
// d's kernel has none.
func bindOf(d Dispatch, b *ir.Buffer) *Binding {
	var bind *Binding
	for i, db := range d.Kernel.Buffers {
		if db.Role == b.Role {
			bind = &d.Bind[i]
		}
	}
	return bind
}

// roles are the roles (node slots) of k's buffers.
func roles(k *ir.Kernel) map[string]bool {
	out := map[string]bool{}
	for _, b := range k.Buffers {
		out[b.Role] = true
	}
	return out
}

// declarations declares locals, consecutive ones of a type in one
// statement, wrapped at about width columns.
func declarations(locals []Local, width int) []string {
	var out []string
	for i := 0; i < len(locals); {
		j := i
		var parts []string
		// a pointer type's * belongs to each declarator
		base, star := strings.CutSuffix(locals[i].CType, " *")
		decl := ""
		if star {
			decl = "* "
		}
		for ; j < len(locals) && locals[j].CType == locals[i].CType; j++ {
			parts = append(parts, decl+locals[j].Name+" = "+locals[j].Expr)
		}
		lines := Wrap(parts, width)
		for n, l := range lines {
			if n == 0 {
				l = base + " " + l
				if !star {
					l = "const " + l
				}
			} else {
				l = "    " + l
			}
			if n == len(lines)-1 {
				l = l + ";"
			}
			out = append(out, l)
		}
		i = j
	}
	return out
}

// Case is one value of the dispatch switch and the launcher's template
// arguments there: TemplateArgs the non-bool ones, WithBools all of them,
// each bool by its name in lower case (Args one by one).
type Case struct {
	Value, TemplateArgs, WithBools string
	Args                           []string
}

// Paren wraps a conditional expression that is an operand of another.
func Paren(s string) string {
	if strings.Contains(s, " ? ") {
		return "(" + s + ")"
	}
	return s
}

// FamilyViewOf is the view of the family named shared (an ops.Shared's
// name), for a backend whose dispatch runs that family's kernel.
func FamilyViewOf(n Names, shared string) (*FamilyView, error) {
	views, err := NewFamilyViews(n)
	if err != nil {
		return nil, err
	}
	for i := range views {
		if views[i].Name == shared {
			return &views[i], nil
		}
	}
	return nil, fmt.Errorf("no glue for %s", shared)
}

// NewFamilyViews builds the upstream glue's view for backend's native
// contract, one family per shared kernel.
func NewFamilyViews(n Names) ([]FamilyView, error) {
	backend := n.Backend
	t := ops.TargetOf(backend) // the backend's tuning, resolved once
	a := ir.Native(backend)
	model, err := Model(a)
	if err != nil {
		return nil, err
	}
	byName := map[string]*Op{}
	for _, o := range model {
		byName[o.Name] = o
	}
	var out []FamilyView
	for _, s := range ops.SharedKernels() {
		plain, ids := byName[s.Plain], byName[s.Ids]
		if plain == nil || ids == nil {
			return nil, fmt.Errorf("glue: shared kernel %s: no glue for %s or %s", s.Name, s.Plain, s.Ids)
		}
		kernel := s.Kernel
		if n.Slots {
			kernel = s.SlotsKernel
		}
		k, err := kernel(a)
		if err != nil {
			return nil, err
		}
		fv, err := familyView(n, t, s, k, plain, ids)
		if err != nil {
			return nil, err
		}
		out = append(out, fv)
	}
	return out, nil
}

func familyView(n Names, t ops.Target, s *ops.Shared, k *ir.Kernel, plain, ids *Op) (FamilyView, error) {
	fv := FamilyView{Name: s.Name, GGMLOp: plain.GGMLOp, Flag: s.Flag, Function: n.Function(k)}
	// The plain op's present slots select the family; the ids op's extra
	// slot sets the flag.
	var sel []string
	for _, i := range plain.Present {
		sel = append(sel, fmt.Sprintf("op->src[%d] != NULL", i))
	}
	fv.Select = fmt.Sprintf("op->op == %s && %s", plain.GGMLOp, strings.Join(sel, " && "))
	choices := map[string]Term{}
	for _, i := range ids.Present {
		if !containsInt(plain.Present, i) {
			choices[s.Flag] = term("%s", Field{i, FieldSet, 0})
			fv.FlagExpr = choices[s.Flag].C()
		}
	}
	if fv.FlagExpr == "" || len(ids.Present) != len(plain.Present)+1 {
		return fv, fmt.Errorf("glue: %s: the ids op must differ from the plain op by one present slot", s.Name)
	}
	if err := familyChecks(&fv, s, plain, ids); err != nil {
		return fv, err
	}
	if ids.Scratch != nil {
		fv.ScratchInDst, fv.ScratchOffset, fv.ScratchSize = ids.Scratch.InDst, ids.Scratch.Offset, ids.Scratch.Elements
	}
	if len(ids.Dispatches) != 2 {
		return fv, fmt.Errorf("glue: %s: expected a gather and a compute dispatch", ids.Name)
	}
	gather, compute := ids.Dispatches[0], ids.Dispatches[1]
	// Upstream runs one gather for both ids ops (ops.SharedGather).
	shared, err := ops.SharedGather()
	if err != nil {
		return fv, err
	}
	gather.Kernel = shared
	gv, err := dispatchView(n, t, ids, gather)
	if err != nil {
		return fv, err
	}
	fv.Gather = gv
	fv.GatherArgs = Wrap(gv.CallExprList, 92)

	// Variant params: the plain op's choices, then the flag.
	for _, p := range k.Params {
		if p.Derived != nil {
			fv.Derived = append(fv.Derived, Local{CType: ctype(p.Type), Name: p.Name, Expr: cexpr(p.Derived)})
			continue
		}
		if p.Name == s.Flag {
			fv.Locals = append(fv.Locals, Local{CType: "bool", Name: p.Name, Expr: fv.FlagExpr})
			continue
		}
		e := plain.Choice(plain.Dispatches[0], p.Name)
		if e == "" || e != ids.Choice(compute, p.Name) {
			return fv, fmt.Errorf("glue: %s: param %s is chosen differently by %s and %s", s.Name, p.Name, plain.Name, ids.Name)
		}
		for _, c := range plain.Variant {
			if c.Param == p.Name && c.Term.C() == e {
				choices[p.Name] = c.Term
			}
		}
		fv.Locals = append(fv.Locals, Local{CType: ctype(p.Type), Name: p.Name, Expr: e})
	}

	// Buffers bind as the ids op's compute kernel binds the buffer of the
	// same node slot; one the plain op lacks is null there.
	plainRoles := roles(plain.Dispatches[0].Kernel)
	var call, names []string
	for _, b := range k.Buffers {
		bind := bindOf(compute, b)
		if bind == nil {
			return fv, fmt.Errorf("glue: %s: buffer %s (%s) has no binding in %s", s.Name, b.Name, b.Role, ids.Name)
		}
		c := ""
		if b.Access == ir.Read {
			c = "const "
		}
		ptr := "scratch"
		if bind.Tensor != "scratch" {
			t := "op"
			if bind.Tensor != "op" {
				t = "op->" + bind.Tensor
			}
			ptr = fmt.Sprintf("(%s%s *) %s->data", c, ctype(b.Elem), t)
		}
		if !plainRoles[b.Role] && bind.Tensor != "scratch" {
			ptr = fmt.Sprintf("%s ? %s : nullptr", s.Flag, ptr)
		}
		call, names = append(call, ptr), append(names, b.Name)
		if ptr != "scratch" {
			fv.Pointers = append(fv.Pointers, Local{CType: c + ctype(b.Elem) + " *", Name: b.Name, Expr: ptr})
		}
	}
	exprs, terms := map[string]string{}, map[string]Term{}
	for _, a := range k.Args {
		e, ok := compute.argExpr(a.Name)
		if v, slot := ops.SlotArgs[a.Name]; !ok && slot && n.Slots && s.Slots != "" {
			e, ok = fmt.Sprint(v), true
		}
		if !ok {
			return fv, fmt.Errorf("glue: %s: arg %s has no expression in %s", s.Name, a.Name, ids.Name)
		}
		exprs[a.Name], terms[a.Name] = e, compute.terms[a.Name]
		call, names = append(call, e), append(names, a.Name)
		fv.Args = append(fv.Args, Local{CType: ctype(a.Type), Name: a.Name, Expr: e})
	}
	fv.ArgDecls = declarations(fv.Args, 100)
	fv.PointerDecls = declarations(fv.Pointers, 100)
	fv.CallArgs, fv.CallNames = Wrap(call, 100), Wrap(names, 100)
	used := map[string]bool{}
	for i := 0; i < 3; i++ {
		fv.Grid[i], fv.Workgroup[i] = CExpr(k.Grid[i], exprs), CExpr(k.Workgroup[i], exprs)
		for _, e := range []ir.Expr{k.Grid[i], k.Workgroup[i]} {
			ir.WalkExpr(e, func(x ir.Expr) {
				if r, ok := x.(*ir.ParamRef); ok {
					used[r.Param.Name] = true
				}
			})
		}
	}
	// Only the derived params the launch geometry names are declared.
	var derived []Local
	for _, d := range fv.Derived {
		if used[d.Name] {
			derived = append(derived, d)
		}
	}
	fv.Derived = derived

	key, err := familyDispatch(&fv, t, s, k)
	if err != nil {
		return fv, err
	}
	fv.AllLocals = fv.Locals
	fv.WrittenSrc = ids.InPlace[0]

	// Only the switch key and the bools are chosen over the node.
	var locals []Local
	for _, l := range fv.Locals {
		if l.Name == key.Name || l.CType == "bool" {
			locals = append(locals, l)
		}
	}
	fv.Locals = locals

	if n.Family != nil {
		var scratch Term
		if ids.Scratch != nil {
			scratch = ids.Scratch.Size
		}
		own, err := n.Family(FamilyParts{View: &fv, Kernel: k, Compute: compute, Gather: gather,
			Args: exprs, GatherArgs: gatherExprs(gather), ArgTerms: terms, GatherTerms: gather.terms,
			Choices: choices, Scratch: scratch, plainRoles: plainRoles})
		if err != nil {
			return fv, err
		}
		fv.Own = own
	}
	return fv, nil
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Wrap joins items with ", " into lines of at most about width columns.
func Wrap(items []string, width int) []string {
	var lines []string
	cur := ""
	for i, it := range items {
		piece := it
		if i < len(items)-1 {
			piece += ","
		}
		switch {
		case cur == "":
			cur = piece
		case len(cur)+1+len(piece) > width:
			lines = append(lines, cur)
			cur = piece
		default:
			cur += " " + piece
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// gatherExprs are a dispatch's args by name.
func gatherExprs(d Dispatch) map[string]string {
	out := map[string]string{}
	for _, v := range d.Args {
		out[v.Arg] = v.Expr
	}
	return out
}

// Families are the shared kernels' ops (ops.Shared) under contract a, each
// one glue op that runs both forms, as ggml-cpu takes them: the plain op's
// variant choices and the flag, set where the ids op's own slot is; the ids
// op's gather, run only there; then the shared kernel, each buffer bound
// as the ids op's compute kernel binds its role, the ids op's own tensors
// only where the flag is set.
func Families(a ir.Arith) ([]*Op, error) {
	model, err := Model(a)
	if err != nil {
		return nil, err
	}
	byName := map[string]*Op{}
	for _, o := range model {
		byName[o.Name] = o
	}
	var out []*Op
	for _, s := range ops.SharedKernels() {
		plain, ids := byName[s.Plain], byName[s.Ids]
		if plain == nil || ids == nil {
			return nil, fmt.Errorf("glue: shared kernel %s: no glue for %s or %s", s.Name, s.Plain, s.Ids)
		}
		o, err := familyOp(a, s, plain, ids)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

func familyOp(a ir.Arith, s *ops.Shared, plain, ids *Op) (*Op, error) {
	if len(ids.Schedules) > 0 || len(plain.Dispatches) != 1 || len(ids.Dispatches) != 2 {
		return nil, fmt.Errorf("glue: %s: a family op runs the ids op's gather, then one compute dispatch", s.Name)
	}
	flag := ""
	for _, i := range ids.Present {
		if !containsInt(plain.Present, i) {
			flag = fmt.Sprintf("op->src[%d] != NULL", i)
		}
	}
	if flag == "" || len(ids.Present) != len(plain.Present)+1 {
		return nil, fmt.Errorf("glue: %s: the ids op must differ from the plain op by one present slot", s.Name)
	}
	k, err := s.Kernel(a)
	if err != nil {
		return nil, err
	}
	o := &Op{Fusion: plain.Fusion + ids.Fusion, Name: s.Name, GGMLOp: plain.GGMLOp, Present: plain.Present,
		InPlace: plain.InPlace, Checks: plain.Checks, Scratch: ids.Scratch, Forms: []*Op{plain, ids}, Shared: s}
	gather, compute := ids.Dispatches[0], ids.Dispatches[1]
	for _, c := range ids.Variant {
		if plain.Choice(plain.Dispatches[0], c.Param) != c.Expr {
			return nil, fmt.Errorf("glue: %s: param %s is chosen differently by %s and %s", s.Name, c.Param, plain.Name, ids.Name)
		}
		o.Variant = append(o.Variant, c)
	}
	o.Variant = append(o.Variant, Choice{Param: s.Flag, Expr: flag})
	gather.When, gather.WhenWhy = flag, "only the ids form gathers"
	if g := ids.Dispatches[0]; g.When != "" {
		gather.When += " && " + g.When
		gather.WhenWhy += "; " + g.WhenWhy
	}
	fam := Dispatch{Op: &ops.Op{Name: s.Name, Summary: s.Summary}, Kernel: k}
	plainRoles := roles(plain.Dispatches[0].Kernel)
	for _, b := range k.Buffers {
		bind := bindOf(compute, b)
		if bind == nil {
			return nil, fmt.Errorf("glue: %s: buffer %s (%s) has no binding in %s", s.Name, b.Name, b.Role, ids.Name)
		}
		bb := *bind
		bb.Buffer, bb.Access = b.Name, b.Access
		if !plainRoles[b.Role] && bb.Tensor != "scratch" {
			bb.OnlyIf = s.Flag
		}
		fam.Bind = append(fam.Bind, bb)
	}
	for _, arg := range k.Args {
		e, ok := compute.argExpr(arg.Name)
		if !ok {
			return nil, fmt.Errorf("glue: %s: arg %s has no expression in %s", s.Name, arg.Name, ids.Name)
		}
		fam.Args = append(fam.Args, Value{Arg: arg.Name, Type: arg.Type, Expr: e})
	}
	o.Dispatches = []Dispatch{gather, fam}
	return o, o.checkVariant()
}

// familyChecks fills fv's checks: each of the plain op's, then the ids
// op's own under the flag, as lines and as supports_op's conjunction.
func familyChecks(fv *FamilyView, s *ops.Shared, plain, ids *Op) error {
	inPlain := map[string]bool{}
	for _, c := range plain.Checks {
		inPlain[c.Expr] = true
	}
	inIds := map[string]bool{}
	for _, c := range ids.Checks {
		inIds[c.Expr] = true
		if !inPlain[c.Expr] {
			fv.IdsChecks = append(fv.IdsChecks, c)
		}
	}
	for _, c := range plain.Checks {
		if !inIds[c.Expr] {
			return fmt.Errorf("glue: %s: %s checks %q and %s does not", s.Name, plain.Name, c.Expr, ids.Name)
		}
		fv.Checks = append(fv.Checks, c)
	}
	var conj []Check // code and reason of each line
	for _, c := range fv.Checks {
		conj = append(conj, Check{"&& (" + c.Expr + ")", c.Why})
	}
	for _, c := range fv.IdsChecks {
		conj = append(conj, Check{fmt.Sprintf("&& (!%s || (%s))", s.Flag, c.Expr), c.Why})
	}
	for i, c := range conj {
		if i == len(conj)-1 {
			c.Expr += ";"
		}
		fv.CheckLines = append(fv.CheckLines, c.Expr+" // "+c.Why)
		if i == 0 {
			c.Expr = "return " + strings.TrimPrefix(c.Expr, "&& ")
		}
		fv.Conjunction = append(fv.Conjunction, c.Expr+" // "+c.Why)
	}
	return nil
}

// familyDispatch fills fv's dispatch: a switch on the first param over the
// variants' values, each case one instantiation of the launcher over the
// non-bool params; the launcher picks the kernel of the bool params at run
// time. It returns the switch's key.
func familyDispatch(fv *FamilyView, t ops.Target, s *ops.Shared, k *ir.Kernel) (*ir.Param, error) {
	var key *ir.Param
	var bools, rest []*ir.Param
	for _, p := range k.Params {
		switch {
		case p.Derived != nil:
		case p.Type == ir.Bool:
			bools = append(bools, p)
		case key == nil:
			key = p
		default:
			rest = append(rest, p)
		}
	}
	if key == nil {
		return nil, fmt.Errorf("glue: %s: no non-bool param to dispatch on", s.Name)
	}
	fv.Key = key.Name
	var lparams, largs []string
	for _, p := range append([]*ir.Param{key}, rest...) {
		lparams, largs = append(lparams, ctype(p.Type)+" "+p.Name), append(largs, p.Name)
	}
	var bparams, bargs []string
	for _, p := range bools {
		bparams, bargs = append(bparams, "bool "+p.Name), append(bargs, p.Name)
	}
	fv.LaunchParams, fv.BoolParams, fv.BoolArgs = strings.Join(lparams, ", "), strings.Join(bparams, ", "), strings.Join(bargs, ", ")
	// the kernel for each combination of the bools, as nested conditionals
	// the bools' values spelled by the instance, the other params by name
	var pick func(i int, vals map[string]int64) string
	pick = func(i int, vals map[string]int64) string {
		if i == len(bools) {
			in := ir.Instance{Kernel: k, Values: vals}
			var targs []string
			for _, p := range k.Params {
				switch {
				case p.Derived != nil:
				case p.Type == ir.Bool:
					targs = append(targs, in.Bare(p))
				default:
					targs = append(targs, p.Name)
				}
			}
			return fmt.Sprintf("%s<%s>", fv.Function, strings.Join(targs, ", "))
		}
		t, f := map[string]int64{bools[i].Name: 1}, map[string]int64{bools[i].Name: 0}
		for n, v := range vals {
			t[n], f[n] = v, v
		}
		sep := " : "
		if i == 0 {
			sep = "\n        : " // the two halves on two lines
		}
		return fmt.Sprintf("%s ? %s%s%s", bools[i].Name, Paren(pick(i+1, t)), sep, Paren(pick(i+1, f)))
	}
	fv.Pick = pick(0, map[string]int64{})
	var ta []string
	for _, p := range k.Params {
		if p.Derived == nil {
			ta = append(ta, p.Name)
		}
	}
	fv.TemplateArgs = strings.Join(ta, ", ")
	seen := map[int64]string{}
	combos := map[int64]int{}
	for _, v := range s.Variants(t) {
		// The upstream text switches on its key alone, so it carries the
		// backend's main GDN tiling; the small-n one that generated/ picks
		// at dispatch time (ops.Target.GDNSmallTiling) stays kernelgen's own.
		if nw, cpw, _, ok := t.GDNSmallTiling(int(v.Values["S_v"])); ok && v.Values["NW"] == int64(nw) && v.Values["CPW"] == int64(cpw) {
			continue
		}
		in := v.Of(k)
		var targs []string
		for _, p := range append([]*ir.Param{key}, rest...) {
			targs = append(targs, in.Bare(p))
		}
		t := strings.Join(targs, ", ")
		var all []string
		for _, p := range k.Params {
			switch {
			case p.Derived != nil:
			case p.Type == ir.Bool:
				all = append(all, strings.ToLower(p.Name))
			default:
				all = append(all, in.Bare(p))
			}
		}
		kv := in.Values[key.Name]
		if prev, ok := seen[kv]; ok && prev != t {
			return nil, fmt.Errorf("glue: %s: %s %d has two tilings (%s and %s); the dispatch switches on %s alone", s.Name, key.Name, kv, prev, t, key.Name)
		} else if !ok {
			seen[kv] = t
			fv.Cases = append(fv.Cases, Case{Value: in.Bare(key), TemplateArgs: t, WithBools: strings.Join(all, ", "), Args: all})
		}
		combos[kv]++
	}
	for kv, n := range combos {
		if n != 1<<len(bools) {
			return nil, fmt.Errorf("glue: %s: %s %d has %d variants, not one per combination of %s", s.Name, key.Name, kv, n, fv.BoolArgs)
		}
	}
	for _, p := range append([]*ir.Param{key}, rest...) {
		fv.Table.Columns = append(fv.Table.Columns, p.Name)
	}
	for _, c := range fv.Cases {
		fv.Table.Rows = append(fv.Table.Rows, "{"+c.TemplateArgs+"}")
	}
	for _, p := range bools {
		fv.Table.Bools = append(fv.Table.Bools, p.Name)
		fv.Table.BoolIndex = append(fv.Table.BoolIndex, strings.ToLower(p.Name))
	}
	return key, nil
}
