package glue

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/kernelgen/kernelgen/ir"
	ctypes "github.com/kernelgen/kernelgen/ir/ctype"
	"github.com/kernelgen/kernelgen/ops"
)

// View is what a backend's glue templates render: every fact precomputed,
// every expression already C text, so the templates hold no logic.
type View struct {
	Backend  string
	Contract string
	Ops      []OpView
	// Rejects are plain nodes no backend has a kernel for, which today's
	// supports_op functions accept (docs/ggml.md#supports).
	Rejects []Check
	// Headers are the generated kernel headers the glue includes.
	Headers []string
	// Kernels are the dispatches of distinct kernels, each kernel's first:
	// what is declared once per kernel (argument structs, pipelines) though
	// several schedules dispatch it.
	Kernels []DispatchView
}

// OpView is one fused op as the templates see it.
type OpView struct {
	*Op
	Discriminator string
	InPlaceSlots  string
	// Locals are the variant and derived params every dispatch shares, then
	// the schedule's condition: declared in order.
	Locals        []Local
	Dispatches    []DispatchView // the schedule's, then the op's
	ScratchInDst  bool
	ScratchOffset string // elements from dst's data (in-dst scratch)
	ScratchSize   string // elements (pool / extra allocation)
	// PlanSize is the chain plan's size in int32 elements, "" where the op
	// has no chained schedule; it is allocated where the scratch is, and
	// PlanWhen (the schedule's local) says where it is used.
	PlanSize, PlanWhen string
}

// Local is a C local declaration.
type Local struct {
	CType, Name, Expr string
}

// DispatchView is one kernel launch.
type DispatchView struct {
	Kernel string // op name of the kernel
	// When, if set, is the C condition the launch runs under, WhenWhy why
	// leaving it out otherwise is exact.
	When, WhenWhy string
	// Locals are the params this dispatch chooses for itself (declared in
	// its block).
	Locals []Local
	// Barrier: a launch of the op that runs with this one follows it and
	// reads what it wrote; BarrierWhen, when set, is the C condition under
	// which that launch runs (the barrier is needed only then).
	Barrier     bool
	BarrierWhen string
	Function    string // the backend's kernel function / shader name
	Args        []Local
	// GridArgs are the args the grid and workgroup expressions name (Metal
	// and Vulkan copy them out of the argument struct; no unused locals).
	GridArgs  []Local
	Buffers   []BufferView
	Grid      [3]string
	Workgroup [3]string
	Instances []Instance
	// CallArgs are the kernel call's arguments (CUDA, SYCL): pointers, then
	// args; CallNames the same by the kernel's names for them.
	CallArgs, CallNames string
	// Pointers are the buffers but the scratch as typed device pointers
	// declared on the host, and LocalCallArgs the call over them, the
	// scratch and the args by name: a SYCL kernel lambda copies these,
	// never the node, whose ggml_tensor structs a discrete GPU cannot read.
	Pointers      []Local
	LocalCallArgs string
	// CallExprs are the arguments as expressions over the node, Params the
	// parameter list of a function that takes them by CallNames.
	CallExprs, Params string
	CallExprList      []string // CallExprs one by one
	// Reduces says the kernel reduces across lanes (SYCL passes it local memory).
	Reduces  bool
	PushSize int
	Bindings int
	// ArgsStruct is the C struct the host fills with the kernel's args
	// (Metal's kargs, Vulkan's push constants); "" where they are passed
	// one by one.
	ArgsStruct string
}

// BufferView is one bound buffer.
type BufferView struct {
	Name, CType, Tensor, Offset string
	Const                       bool
	Index                       int
	// Ptr is the buffer as a typed device pointer (CUDA, SYCL).
	Ptr string
}

// Instance is one compiled variant: the condition on the variant locals
// that selects it, and its backend names.
type Instance struct {
	// Else is "else " for every instance but the first, so the conditions chain.
	Else         string
	Cond         string
	TemplateArgs string
	// Callee is the kernel function with its template arguments.
	Callee   string
	HostName string // Metal pipeline / Vulkan shader name
	Defines  []Define
}

// Define is a preprocessor define of a Vulkan variant.
type Define struct{ Name, Value string }

func ctype(t ir.Type) string { return ctypes.C.Of(t) }

// cexpr prints a launch-geometry or derived-param expression as C over the
// locals (params and args keep their IR names).
func cexpr(e ir.Expr) string { return CExpr(e, nil) }

// LaunchC is k's grid (workgroups in each dimension) and workgroup size as
// C expressions, each arg named in args as CExpr prints it.
func LaunchC(k *ir.Kernel, args map[string]string) (grid, group [3]string) {
	for i := range grid {
		grid[i], group[i] = CExpr(k.Grid[i], args), CExpr(k.Workgroup[i], args)
	}
	return grid, group
}

// CExpr is cexpr with each arg named in args printed as its C expression
// over the node.
func CExpr(e ir.Expr, args map[string]string) string {
	cexpr := func(e ir.Expr) string { return CExpr(e, args) }
	switch e := e.(type) {
	case *ir.Const:
		switch e.T {
		case ir.Bool:
			return fmt.Sprint(e.B)
		case ir.U32:
			return fmt.Sprintf("%du", e.I)
		case ir.F32:
			return ir.F32String(e.F) + "f"
		}
		return fmt.Sprint(e.I)
	case *ir.ParamRef:
		return e.Param.Name
	case *ir.ArgRef:
		if x, ok := args[e.Arg.Name]; ok {
			return "(" + x + ")"
		}
		return e.Arg.Name
	case *ir.Binary:
		return "(" + cexpr(e.X) + " " + e.Op.String() + " " + cexpr(e.Y) + ")"
	case *ir.Select:
		return "(" + cexpr(e.Cond) + " ? " + cexpr(e.X) + " : " + cexpr(e.Y) + ")"
	case *ir.Unary:
		if e.Op == ir.Not {
			return "!" + cexpr(e.X)
		}
		if e.Op == ir.Convert {
			return "(" + ctype(e.To) + ") " + cexpr(e.X)
		}
	}
	return fmt.Sprintf("/* %s */ 0", ir.ExprString(e))
}

// Rejects are the GDN forms no backend has a kernel for (View.Rejects); a
// backend's supports_op answers for them before the fused nodes' checks.
func Rejects() []Check {
	return []Check{
		{"op->op == GGML_OP_GATED_DELTA_NET && (op->src[8] != NULL || op->src[9] != NULL || (op->src[5] != NULL && op->src[5]->type != GGML_TYPE_F32))",
			"a per-head hybrid state (src[8], src[9]) or a bf16 state: no kernel on this backend"},
	}
}

// Names is how a backend names what it compiles, from its emitter: the
// glue reads these instead of asking which backend it renders for.
type Names struct {
	// Backend is the backend's name; its native contract is ir.Native(Backend).
	Backend string
	// Function is a kernel's function (or shader) name.
	Function func(k *ir.Kernel) string
	// HostName, when set, is a variant's host-side name (a Metal pipeline,
	// a Vulkan SPIR-V symbol); function is Function's result.
	HostName func(function string, in ir.Instance) string
	// ArgsStruct, when set, names the struct an op's kernel takes its args in;
	ArgsStruct func(op string) string
	// Defines, when set, are the preprocessor defines a variant is built with.
	Defines func(in ir.Instance) (map[string]string, error)
	// Family, when set, builds the backend's own part of a shared kernel's
	// upstream glue (FamilyView.Own), which only its templates read.
	Family func(p FamilyParts) (any, error)
	// NoSharedArrays, when set, is why the backend's launcher takes no
	// kernel with a shared array (other than a reduction's) and the fix.
	NoSharedArrays string
	// Slots: the family views are the fusion form's, a family with a Slots
	// op viewed over its SlotsKernel (ops.Shared), whose slot args a node
	// gives as one that writes no slots (ops.SlotArgs).
	Slots bool
}

// NewView builds the view of a backend, named by its emitter's names, for
// its native contract.
func NewView(n Names) (*View, error) {
	viewsBuilt.Add(1)
	backend := n.Backend
	t := ops.TargetOf(backend) // the backend's tuning, resolved once
	a := ir.Native(backend)
	model, err := Model(a)
	if err != nil {
		return nil, err
	}
	v := &View{Backend: backend, Contract: a.String(), Rejects: Rejects()}
	seen := map[string]bool{}
	for _, o := range model {
		ov := OpView{Op: o, Discriminator: o.Discriminator()}
		var slots []string
		for _, i := range o.InPlace {
			slots = append(slots, fmt.Sprintf("src[%d]", i))
		}
		ov.InPlaceSlots = strings.Join(slots, ", ")
		if o.Scratch != nil {
			ov.ScratchInDst, ov.ScratchOffset, ov.ScratchSize, ov.PlanSize = o.Scratch.InDst, o.Scratch.Offset, o.Scratch.Elements, o.Scratch.Plan
		}
		shared, perDispatch, err := locals(o)
		if err != nil {
			return nil, err
		}
		ov.Locals = shared
		// Each group of dispatches runs together, a barrier between them:
		// each schedule's where it is chosen, the op's where none is.
		var groups [][]Dispatch
		var notChosen, otherwise []string
		for _, s := range o.Schedules {
			ov.Locals = append(ov.Locals, Local{CType: "bool", Name: s.Local, Expr: s.Cond})
			groups = append(groups, s.Dispatches)
			for _, d := range s.Dispatches {
				for _, b := range d.Bind {
					if b.Tensor == "plan" && b.Access.CanWrite() { // a schedule that only reads it passes none
						ov.PlanWhen = s.Local
					}
				}
			}
			notChosen = append(notChosen, "!"+s.Local)
			if !containsString(otherwise, s.Otherwise) {
				otherwise = append(otherwise, s.Otherwise)
			}
		}
		groups = append(groups, o.Dispatches)
		for gi, group := range groups {
			for i, d := range group {
				dv, err := dispatchView(n, t, o, d)
				if err != nil {
					return nil, err
				}
				if dv.Barrier = i < len(group)-1; dv.Barrier {
					dv.BarrierWhen = group[i+1].When
				}
				dv.Locals = perDispatch[d.Op.Name]
				switch {
				case gi < len(o.Schedules):
					s := o.Schedules[gi]
					dv.When, dv.WhenWhy = s.Local, s.Why
					if d.When != "" {
						dv.When += " && " + d.When
						dv.WhenWhy += "; " + d.WhenWhy
					}
				case len(o.Schedules) > 0:
					dv.When, dv.WhenWhy = strings.Join(notChosen, " && "), strings.Join(otherwise, "; ")
					if d.When != "" {
						dv.When += " && " + d.When
						dv.WhenWhy += "; " + d.WhenWhy
					}
				}
				ov.Dispatches = append(ov.Dispatches, dv)
				if !seen[d.Op.Name] {
					seen[d.Op.Name] = true
					v.Headers = append(v.Headers, d.Op.Name)
					v.Kernels = append(v.Kernels, dv)
				}
			}
		}
		v.Ops = append(v.Ops, ov)
	}
	return v, nil
}

// locals splits the op's param locals: those every dispatch chooses alike
// (declared once per op, in the op's Variant order, then derived params
// over them), and per dispatch (by op name) the params a dispatch chooses
// for itself and what derives from them. For an op whose dispatches all
// share the op's Variant, every local is shared.
func locals(o *Op) (shared []Local, perDispatch map[string][]Local, err error) {
	own := map[string]bool{}
	for _, d := range o.AllDispatches() {
		for _, c := range d.Variant {
			own[c.Param] = true
		}
	}
	param := func(name string) *ir.Param {
		for _, d := range o.AllDispatches() {
			if p := d.Kernel.Param(name); p != nil {
				return p
			}
		}
		return nil
	}
	isShared := map[string]bool{}
	for _, c := range o.Variant {
		if p := param(c.Param); p != nil && !own[c.Param] {
			shared = append(shared, Local{CType: ctype(p.Type), Name: p.Name, Expr: c.Expr})
			isShared[p.Name] = true
		}
	}
	overShared := func(e ir.Expr) bool {
		ok := true
		ir.WalkExpr(e, func(x ir.Expr) {
			if r, is := x.(*ir.ParamRef); is && !isShared[r.Param.Name] {
				ok = false
			}
		})
		return ok
	}
	derived := map[string]string{}
	perDispatch = map[string][]Local{}
	for _, d := range o.AllDispatches() {
		var mine []Local
		for _, p := range d.Kernel.Params {
			switch {
			case p.Derived == nil && own[p.Name]:
				mine = append(mine, Local{CType: ctype(p.Type), Name: p.Name, Expr: o.Choice(d, p.Name)})
			case p.Derived != nil && overShared(p.Derived):
				e := cexpr(p.Derived)
				if prev, ok := derived[p.Name]; ok && prev != e {
					return nil, nil, fmt.Errorf("glue: %s: derived param %s is %s in one kernel and %s in another", o.Name, p.Name, prev, e)
				} else if !ok {
					derived[p.Name], isShared[p.Name] = e, true
					shared = append(shared, Local{CType: ctype(p.Type), Name: p.Name, Expr: e})
				}
			case p.Derived != nil:
				mine = append(mine, Local{CType: ctype(p.Type), Name: p.Name, Expr: cexpr(p.Derived)})
			}
		}
		perDispatch[d.Op.Name] = mine
	}
	return shared, perDispatch, nil
}

func dispatchView(n Names, t ops.Target, o *Op, d Dispatch) (DispatchView, error) {
	k := d.Kernel
	dv := DispatchView{Kernel: d.Op.Name, Bindings: len(k.Buffers), PushSize: 4 * len(k.Args),
		When: d.When, WhenWhy: d.WhenWhy}
	dv.Function = n.Function(k)
	if n.ArgsStruct != nil {
		dv.ArgsStruct = n.ArgsStruct(d.Op.Name)
	}
	for _, a := range d.Args {
		dv.Args = append(dv.Args, Local{CType: ctype(a.Type), Name: a.Arg, Expr: a.Expr})
	}
	for i, b := range d.Bind {
		bv := BufferView{Name: b.Buffer, Const: b.Access == ir.Read, Index: i}
		bv.CType = ctype(k.Buffers[i].Elem)
		switch b.Tensor {
		case "op", "scratch", "plan":
			bv.Tensor = b.Tensor
		default:
			bv.Tensor = "op->" + b.Tensor
		}
		bv.Offset = b.Offset
		c := ""
		if bv.Const {
			c = "const "
		}
		switch bv.Tensor {
		case "scratch", "plan":
			bv.Ptr = bv.Tensor
		default:
			bv.Ptr = fmt.Sprintf("(%s%s *) %s->data", c, bv.CType, bv.Tensor)
		}
		dv.Buffers = append(dv.Buffers, bv)
	}
	var call, local []string
	for _, b := range dv.Buffers {
		call = append(call, b.Ptr)
		if b.Tensor == "scratch" || b.Tensor == "plan" {
			local = append(local, b.Tensor)
			continue
		}
		c := ""
		if b.Const {
			c = "const "
		}
		dv.Pointers = append(dv.Pointers, Local{CType: c + b.CType + " * ", Name: b.Name, Expr: b.Ptr})
		local = append(local, b.Name)
	}
	for _, a := range dv.Args {
		call, local = append(call, a.Name), append(local, a.Name)
	}
	dv.CallArgs, dv.LocalCallArgs = strings.Join(call, ", "), strings.Join(local, ", ")
	var names []string
	for _, b := range dv.Buffers {
		names = append(names, b.Name)
	}
	for _, a := range dv.Args {
		names = append(names, a.Name)
	}
	dv.CallNames = strings.Join(names, ", ")
	exprs := []string{}
	for _, b := range dv.Buffers {
		exprs = append(exprs, b.Ptr)
	}
	for _, a := range dv.Args {
		exprs = append(exprs, a.Expr)
	}
	dv.CallExprs, dv.CallExprList = strings.Join(exprs, ", "), exprs
	var params []string
	for _, b := range dv.Buffers {
		c := ""
		if b.Const {
			c = "const "
		}
		params = append(params, fmt.Sprintf("%s%s * %s", c, b.CType, b.Name))
	}
	for _, a := range dv.Args {
		params = append(params, a.CType+" "+a.Name)
	}
	dv.Params = strings.Join(params, ", ")
	named := map[string]bool{}
	for i := 0; i < 3; i++ {
		dv.Grid[i], dv.Workgroup[i] = cexpr(k.Grid[i]), cexpr(k.Workgroup[i])
		for _, e := range []ir.Expr{k.Grid[i], k.Workgroup[i]} {
			ir.WalkExpr(e, func(x ir.Expr) {
				if r, ok := x.(*ir.ArgRef); ok {
					named[r.Arg.Name] = true
				}
			})
		}
	}
	for _, a := range dv.Args {
		if named[a.Name] {
			dv.GridArgs = append(dv.GridArgs, a)
		}
	}
	dv.Reduces = ir.HasReduce(k)
	if shared := ir.SharedArrays(k); n.NoSharedArrays != "" && len(shared) > 0 {
		return DispatchView{}, fmt.Errorf("glue: %s: shared array %s: %s", k.ID(), shared[0].Name, n.NoSharedArrays)
	}
	vars := t.Variants(d.Op.Name)
	for _, v := range vars {
		inst := Instance{}
		in := v.Of(k)
		var conds []string
		for _, p := range k.Params {
			if p.Derived != nil {
				continue
			}
			val := v.Values[p.Name]
			if p.Type == ir.Bool {
				conds = append(conds, fmt.Sprintf("%s == %v", p.Name, val != 0))
			} else {
				conds = append(conds, fmt.Sprintf("%s == %d", p.Name, val))
			}
		}
		if len(conds) == 0 {
			conds = []string{"true"}
		}
		inst.Cond = strings.Join(conds, " && ")
		targs := in.TemplateArgs()
		inst.TemplateArgs = strings.Join(targs, ", ")
		inst.Callee = dv.Function
		if len(targs) > 0 {
			inst.Callee += "<" + inst.TemplateArgs + ">"
		}
		if len(dv.Instances) > 0 {
			inst.Else = "else "
		}
		if n.HostName != nil {
			inst.HostName = n.HostName(dv.Function, in)
		}
		if n.Defines != nil {
			defs, err := n.Defines(in)
			if err != nil {
				return dv, err
			}
			for _, name := range sortedKeys(defs) {
				inst.Defines = append(inst.Defines, Define{name, defs[name]})
			}
		}
		dv.Instances = append(dv.Instances, inst)
	}
	return dv, nil
}

func containsString(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// viewsBuilt counts NewView calls, so tests can hold a build or a patch
// plan to building each backend's view once.
var viewsBuilt atomic.Int64

// ViewsBuilt is how many views NewView has built in this process.
func ViewsBuilt() int64 { return viewsBuilt.Load() }
