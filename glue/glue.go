// Package glue is the typed model of how each fused op meets ggml: which
// node it is (op enum and discriminator slots), which tensors bind to which
// kernel buffers, how every kernel argument and variant parameter follows from
// the node's tensors, what supports_op must check, which src slots are written
// in place (hazard tracking, docs/ggml.md#hazards), and where the gather scratch lives.
// It is derived from the ops' IR kernels; the templates package renders it for
// each backend and holds no logic of its own.
//
// Expressions are C over ggml's node: `op` is the node (`const ggml_tensor *`),
// `op->src[i]` its sources; strides are in elements.
package glue

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// Op is one fused node kind.
type Op struct {
	// Fusion is the series letter (A-D); Name the compute kernel's op.
	Fusion, Name string
	// Builder is ggml's builder function of the node.
	Builder string
	// GGMLOp is the op enum the node reuses.
	GGMLOp string
	// Present / Absent are the discriminating src slots: the node is this
	// fused op exactly when every Present slot is set and every Absent slot is
	// null.
	Present, Absent []int
	// InPlace are the src slots the op writes (its tensor is a view into a cache).
	InPlace []int
	// Checks are supports_op's conditions, all required.
	Checks []Check
	// Variant chooses each non-derived param of the kernels (a dispatch
	// may choose some differently).
	Variant []Choice
	// Schedules are other ways to run the op (one dispatch, the chained
	// schedule), each chosen at run time where its condition holds (the
	// conditions exclude one another); Dispatches run where none does.
	Schedules []*Schedule
	// Dispatches run in order; a barrier separates dispatches that run
	// together.
	Dispatches []Dispatch
	// Scratch is the gather's scratch, when the op has one.
	Scratch *Scratch
	// Forms, on a family op (Families), are the plain op and the ids op it
	// runs; Shared is their shared kernel.
	Forms  []*Op
	Shared *ops.Shared
}

// Check is one supports_op condition with the reason it exists.
type Check struct {
	Expr string
	Why  string
}

// Choice picks a param from the node: Expr is a C expression, Term the
// same as a term where it was built as one (chosen).
type Choice struct {
	Param string
	Expr  string
	Term  Term
}

// chosen is the choice of param by term t.
func chosen(param string, t Term) Choice { return Choice{Param: param, Expr: t.C(), Term: t} }

// Schedule is an op's alternative launch plan: Local, a C bool Cond over
// the node, says when it runs instead of the op's Dispatches; Why says why
// it may, Otherwise what runs where it does not.
type Schedule struct {
	Local, Cond, Why, Otherwise string
	Dispatches                  []Dispatch
}

// Dispatch is one kernel launch of the op.
type Dispatch struct {
	Op     *ops.Op
	Bind   []Binding // in the kernel's buffer order
	Args   []Value   // in the kernel's arg order
	Kernel *ir.Kernel
	// Variant chooses params differently from the op's Variant.
	Variant []Choice
	// When is the C condition under which the launch runs ("" always): the
	// op's Guard over the node (ops.Guard says why skipping is exact) and
	// the schedule's; WhenWhy says why.
	When, WhenWhy string
	// exprs are the C expressions of every arg of the op's kernels, by
	// name: the Shared kernel built from this dispatch's may take args
	// the op's own kernel does not (ggml-cpu's reads k with its own strides).
	exprs map[string]string
	terms argTable
}

// argExpr is arg name's C expression: the kernel's, else the op's table.
func (d Dispatch) argExpr(name string) (string, bool) {
	for _, v := range d.Args {
		if v.Arg == name {
			return v.Expr, true
		}
	}
	e, ok := d.exprs[name]
	return e, ok
}

// Binding ties a kernel buffer to a tensor (or the scratch, or the chain
// plan) plus an element offset.
type Binding struct {
	Buffer string
	// Tensor is "op" (the node), "src[i]", "scratch" or "plan".
	Tensor string
	// Offset in elements from the tensor's data (a C expression, "" for none).
	Offset string
	Access ir.Access
	// OnlyIf, when set, is a bool param of the kernel: the tensor exists
	// only where it is true (a family op's ids, null on the plain form).
	OnlyIf string
}

// Value is a kernel argument's C expression.
type Value struct {
	Arg  string
	Type ir.Type
	Expr string
}

// Scratch says where the ids gather writes.
type Scratch struct {
	// InDst: the node's own output has an unused state region of exactly the
	// right size (GDN ops A/B, docs/ops.md#scratch), starting at Offset elements.
	InDst  bool
	Offset string
	// Elements is the scratch size when it is not in dst (a pool allocation).
	Elements string
	// Plan is the size in int32 elements of the chained schedule's plan
	// (ops/chain.go), allocated where the scratch is; "" without one.
	Plan string
	// Size is Offset (InDst) or Elements as a term.
	Size Term
}

// newScratch is the scratch in dst at offset size, or of size elements.
func newScratch(inDst bool, size Term) *Scratch {
	if inDst {
		return &Scratch{InDst: true, Offset: size.C(), Size: size}
	}
	return &Scratch{Elements: size.C(), Size: size}
}

// bySv chooses a GDN tiling value: at128 for S_v 128, below otherwise.
func bySv(at128, below int) string {
	if at128 == below {
		return fmt.Sprint(below)
	}
	return fmt.Sprintf("(%s == 128 ? %d : %d)", ne(2, 0), at128, below)
}

// ne is a source's extent as C over the node.
func ne(src, dim int) string { return neT(src, dim).C() }

// gdnArgs maps the GDN kernels' args (ops/gdn.go) to the node.
var gdnArgs = argTable{
	"H": neT(2, 1), "n_tokens": neT(2, 2), "n_seqs": neT(2, 3),
	"neq1": neT(0, 1), "rq3": term("%s / %s", Field{2, FieldNe, 3}, Field{0, FieldNe, 3}),
	"sq1": strideT(0, 1), "sq2": strideT(0, 2), "sq3": strideT(0, 3),
	"sk1": strideT(1, 1), "sk2": strideT(1, 2), "sk3": strideT(1, 3),
	"sv1": strideT(2, 1), "sv2": strideT(2, 2), "sv3": strideT(2, 3),
	"sg1": strideT(3, 1), "sg2": strideT(3, 2), "sg3": strideT(3, 3),
	"sb1": strideT(4, 1), "sb2": strideT(4, 2), "sb3": strideT(4, 3),
	"scale":   term("1.0f / sqrtf((float) %s)", Field{2, FieldNe, 0}),
	"sd1":     strideT(6, 1),
	"rs_head": paramT(1),
	"row_len": term("%s * %s * %s", Field{2, FieldNe, 0}, Field{2, FieldNe, 0}, Field{2, FieldNe, 1}),
	"n_rows":  neT(5, 3),
}

// convArgs maps the conv-update kernels' args (ops/conv.go) to the node.
func convArgs(nSeqsFrom int) argTable {
	return argTable{
		"n_ch": neT(1, 1), "n_seqs": neT(nSeqsFrom, 2),
		"cs1": strideT(0, 1), "cs2": strideT(0, 2), "w1": strideT(1, 1), "x2": strideT(2, 2),
		"sd1": strideT(3, 1), "d2": strideT(-1, 2),
		"rs_head": paramT(1),
		"row_len": strideT(0, 2),
		"n_rows":  neT(0, 2),
	}
}

// stateDstIsWindow: op B's state_dst is the cache (src[5], rows of nb[3]
// bytes) at rows rs_head.. with the cache's row stride, the layout the model
// builds (docs/ops.md#aliasing) and the batched kernel assumes: it reads sources
// inside the window through state_dst. Tests may pass separate buffers.
const stateDstIsWindow = "op->src[6]->buffer == op->src[5]->buffer && op->src[6]->nb[1] == op->src[5]->nb[3] && " +
	"(const char *) op->src[6]->data == (const char *) op->src[5]->data + (size_t) ggml_get_op_params_i32(op, 1) * op->src[5]->nb[3]"

// convStateDstIsWindow: op D's conv_state_dst is the cache (src[0], rows of
// nb[2] bytes, channels of d_conv-1 packed taps) at rows rs_head.., the
// layout the batched kernel assumes (it reads sources inside the window
// through conv_state_dst with the ring's own channel stride).
const convStateDstIsWindow = "op->src[3]->buffer == op->src[0]->buffer && op->src[3]->nb[1] == op->src[0]->nb[2] && op->src[0]->nb[1] == (size_t) op->src[0]->ne[0] * sizeof(float) && " +
	"(const char *) op->src[3]->data == (const char *) op->src[0]->data + (size_t) ggml_get_op_params_i32(op, 1) * op->src[0]->nb[2]"

// gdnStateOffset is the attention output's size, where the state region starts.
var gdnStateOffset = term("%s * %s * %s * %s", Field{2, FieldNe, 0}, Field{2, FieldNe, 1}, Field{2, FieldNe, 2}, Field{2, FieldNe, 3})

// rowsContiguous is ggml's check that each src's rows are contiguous
// (ggml_is_contiguous_rows), over the given src slots.
func rowsContiguous(slots ...int) string {
	var cs []string
	for _, i := range slots {
		cs = append(cs, fmt.Sprintf("ggml_is_contiguous_rows(op->src[%d])", i))
	}
	return strings.Join(cs, " && ")
}

var gdnChecks = []Check{
	{"op->type == GGML_TYPE_F32", "f32 output"},
	{"op->src[0]->type == GGML_TYPE_F32 && op->src[1]->type == GGML_TYPE_F32 && op->src[2]->type == GGML_TYPE_F32 && op->src[3]->type == GGML_TYPE_F32 && op->src[4]->type == GGML_TYPE_F32", "q, k, v, g, beta are f32"},
	{"op->src[5]->type == GGML_TYPE_F32 && op->src[6]->type == GGML_TYPE_F32", "bf16 state has no kernel yet"},
	{ne(2, 0) + " == 16 || " + ne(2, 0) + " == 32 || " + ne(2, 0) + " == 64 || " + ne(2, 0) + " == 128", "S_v in the variant table"},
	{ne(0, 0) + " == " + ne(2, 0), "S_k == S_v"},
	{ne(3, 0) + " == 1 || " + ne(3, 0) + " == " + ne(2, 0), "scalar gate or KDA"},
	{rowsContiguous(0, 1, 2, 3, 4, 6), "rows are contiguous"},
	{"ggml_are_same_shape(op->src[0], op->src[1]) && ggml_are_same_stride(op->src[0], op->src[1])", "q and k share shape and strides (one set of strides is passed)"},
	{ne(2, 1) + " % " + ne(0, 1) + " == 0 && " + ne(2, 3) + " % " + ne(0, 3) + " == 0", "GQA and sequence broadcast divide evenly"},
	{"ggml_is_contiguous(op->src[5])", "state rows are indexed densely"},
	{ne(6, 0) + " == " + ne(2, 0) + " * " + ne(2, 0) + " * " + ne(2, 1) + " && " + ne(6, 1) + " >= " + ne(2, 3), "state_dst holds a row per sequence"},
	{"ggml_get_op_params_i32(op, 0) == 1", "the in-place forms keep no snapshots (K == 1)"},
}

var convChecks = []Check{
	{"op->type == GGML_TYPE_F32 && op->src[0]->type == GGML_TYPE_F32 && op->src[1]->type == GGML_TYPE_F32 && op->src[2]->type == GGML_TYPE_F32 && op->src[3]->type == GGML_TYPE_F32", "f32 tensors (the builders assert f32 conv caches)"},
	{ne(1, 0) + " >= 2 && " + ne(1, 0) + " <= 8", "d_conv in the variant table"},
	{rowsContiguous(0, 1, 2, 3), "taps, weights, x_cur and the ring are contiguous along their first dimension"},
	{ne(0, 0) + " == " + ne(1, 0) + " - 1", "the cache holds d_conv - 1 taps"},
}

// disp is one dispatch of an op to build: its kernel's op, its args over
// the node and the params it chooses differently from the op.
type disp struct {
	op      string
	args    argTable
	variant []Choice
}

// Model builds the glue of the four fused ops for one contract.
func Model(a ir.Arith) ([]*Op, error) {
	var out []*Op
	dispatch := func(name string, d disp) (Dispatch, error) {
		op, err := ops.Lookup(d.op)
		if err != nil {
			return Dispatch{}, err
		}
		k, err := op.Kernel(a)
		if err != nil {
			return Dispatch{}, err
		}
		dd := Dispatch{Op: op, Kernel: k, Variant: d.variant, exprs: d.args.C(), terms: d.args}
		if g := op.Guard; g != nil {
			e, ok := d.args[g.Arg]
			if !ok {
				return dd, fmt.Errorf("glue: %s: guard arg %s of %s has no expression", name, g.Arg, k.ID())
			}
			dd.When, dd.WhenWhy = fmt.Sprintf("%s >= %d", e.C(), g.Min), g.Why
		}
		for _, b := range k.Buffers {
			bound := b // the buffer whose role binds b: the caller's where b is its
			if b.Role == ir.CallerRole {
				if bound, err = callersBuffer(a, name, b); err != nil {
					return dd, fmt.Errorf("glue: %s: %s: %v", name, k.ID(), err)
				}
			}
			bb, err := bindingOf(bound)
			if err != nil {
				return dd, fmt.Errorf("glue: %s: %s: %v", name, k.ID(), err)
			}
			bb.Buffer, bb.Access = b.Name, b.Access
			dd.Bind = append(dd.Bind, bb)
		}
		for _, arg := range k.Args {
			e, ok := d.args[arg.Name]
			if !ok {
				return dd, fmt.Errorf("glue: %s: arg %s of %s has no expression", name, arg.Name, k.ID())
			}
			dd.Args = append(dd.Args, Value{Arg: arg.Name, Type: arg.Type, Expr: e.C()})
		}
		return dd, nil
	}
	mk := func(fusion, name, builder, ggmlOp string, present, absent, inplace []int, checks []Check, variant []Choice, scratch *Scratch, disps ...disp) (*Op, error) {
		o := &Op{Fusion: fusion, Name: name, Builder: builder, GGMLOp: ggmlOp, Present: present, Absent: absent, InPlace: inplace, Checks: checks, Variant: variant, Scratch: scratch}
		for _, d := range disps {
			dd, err := dispatch(name, d)
			if err != nil {
				return nil, err
			}
			o.Dispatches = append(o.Dispatches, dd)
		}
		if err := o.checkVariant(); err != nil {
			return nil, err
		}
		out = append(out, o)
		return o, nil
	}
	// The backend's tuning, resolved once.
	t := ops.TargetOf(a.Backend)
	// The backend's tiling (ops.Target.GDNTiling): one for S_v 128, one below.
	nw128, cpw128 := t.GDNTiling(128)
	nwLow, cpwLow := t.GDNTiling(16)
	for _, sv := range []int{32, 64} {
		if nw, cpw := t.GDNTiling(sv); nw != nwLow || cpw != cpwLow {
			return nil, fmt.Errorf("glue: the %s tiling of S_v %d differs from S_v 16's; the choice below assumes one below 128", a.Backend, sv)
		}
	}
	nwChoice, cpwChoice := bySv(nw128, nwLow), bySv(cpw128, cpwLow)
	// At few sequences, the backend's small-n tiling (ops.Target.GDNSmallTiling).
	if snw, scpw, maxSeqs, ok := t.GDNSmallTiling(128); ok {
		few := fmt.Sprintf("%s <= %d", ne(2, 3), maxSeqs)
		nwChoice = fmt.Sprintf("(%s == 128 ? (%s ? %d : %d) : %d)", ne(2, 0), few, snw, nw128, nwLow)
		cpwChoice = fmt.Sprintf("(%s == 128 ? (%s ? %d : %d) : %d)", ne(2, 0), few, scpw, cpw128, cpwLow)
	}
	gdnVariant := []Choice{
		chosen("S_v", neT(2, 0)), chosen("KDA", term("%s == %s", Field{3, FieldNe, 0}, Field{2, FieldNe, 0})),
		{Param: "NW", Expr: nwChoice}, {Param: "CPW", Expr: cpwChoice},
	}
	convVariant := []Choice{chosen("d_conv", neT(1, 0)), chosen("SILU", term("%s != 0", Field{-1, FieldParam, 0}))}
	gdnScratch := newScratch(true, gdnStateOffset)
	if _, err := mk("A", "gated_delta_net_inplace", "ggml_gated_delta_net_inplace", "GGML_OP_GATED_DELTA_NET",
		[]int{6}, []int{7}, []int{6}, gdnChecks, gdnVariant, nil,
		disp{op: "gated_delta_net_inplace", args: gdnArgs}); err != nil {
		return nil, err
	}
	idsChecks := append(append([]Check{}, gdnChecks...), Check{"op->src[7]->type == GGML_TYPE_I32 && " + ne(7, 0) + " == " + ne(2, 3), "one source slot per sequence"})
	opB, err := mk("B", "gated_delta_net_inplace_ids", "ggml_gated_delta_net_inplace_ids", "GGML_OP_GATED_DELTA_NET",
		[]int{6, 7}, nil, []int{6}, idsChecks, gdnVariant, gdnScratch,
		disp{op: t.Gather(), args: gdnArgs},
		disp{op: "gated_delta_net_inplace_ids", args: gdnArgs})
	if err != nil {
		return nil, err
	}
	// Op B in one dispatch (ops.Target.GDNBatch), where the backend has it.
	if err := gdnBatched(t, opB, dispatch); err != nil {
		return nil, err
	}
	fromB, _ := t.ChainFrom()
	if err := chainedSchedule(t, fromB, opB, "gated_delta_net", t.GDNBatchMax(128), dispatch, ne(2, 3), gdnArgs, stateDstIsWindow, "state_dst", nwChoice); err != nil {
		return nil, err
	}
	if _, err := mk("C", "ssm_conv_update_inplace", "ggml_ssm_conv_update_inplace", "GGML_OP_SSM_CONV",
		[]int{3}, []int{4}, []int{3}, convChecks, convVariant, nil,
		disp{op: "ssm_conv_update_inplace", args: convArgs(0)}); err != nil {
		return nil, err
	}
	dChecks := append(append([]Check{}, convChecks...), Check{"op->src[4]->type == GGML_TYPE_I32 && " + ne(4, 0) + " == " + ne(2, 2), "one source slot per sequence"})
	opD, err := mk("D", "ssm_conv_update_inplace_ids", "ggml_ssm_conv_update_inplace_ids", "GGML_OP_SSM_CONV",
		[]int{3, 4}, nil, []int{3}, dChecks, convVariant, newScratch(false, term("%s * %s", Field{0, FieldStride, 2}, Field{2, FieldNe, 2})),
		disp{op: t.Gather(), args: convArgs(2)},
		disp{op: "ssm_conv_update_inplace_ids", args: convArgs(2)})
	if err != nil {
		return nil, err
	}
	// Op D in one dispatch (ops.Target.ConvBatch), where the backend has it.
	if ns, ok := t.ConvBatch(); ok {
		bd, err := dispatch(opD.Name, disp{op: "ssm_conv_update_inplace_ids_batched", args: convArgs(2),
			variant: []Choice{{Param: "NS", Expr: fmt.Sprint(ns)}}})
		if err == nil {
			err = opD.batched([]Dispatch{bd}, ne(2, 2), []ops.Span{{From: 2, To: ns}}, 2, convStateDstIsWindow, "conv_state_dst", "window")
		}
		if err != nil {
			return nil, err
		}
	}
	nsD, _ := t.ConvBatch()
	fromD, _ := t.ConvChainFrom()
	if err := chainedSchedule(t, fromD, opD, "ssm_conv", nsD, dispatch, ne(2, 2), convArgs(2), convStateDstIsWindow, "conv_state_dst", ""); err != nil {
		return nil, err
	}
	return out, nil
}

// gdnBatched gives op B its one-dispatch schedule where the backend has
// one (ops.Target.GDNBatch): one dispatch of the batched kernel whose shape is
// chosen by tier over n_seqs, at S_v 128 and (one shape list) below.
func gdnBatched(t ops.Target, opB *Op, dispatch func(string, disp) (Dispatch, error)) error {
	tiers, low := t.GDNBatch(128), t.GDNBatch(16)
	if len(tiers) == 0 {
		return nil
	}
	for _, sv := range []int{32, 64} {
		if !slices.Equal(t.GDNBatch(sv), low) {
			return fmt.Errorf("glue: the %s batched tiers of S_v %d differ from S_v 16's; the choice below assumes one list below 128", t.Name, sv)
		}
	}
	// The spans of n_seqs: one list, but for the first sequence (past the
	// small-n tiling at S_v 128).
	spans, spansLow := t.GDNBatchSpans(128), t.GDNBatchSpans(16)
	for _, sv := range []int{32, 64} {
		if !slices.Equal(t.GDNBatchSpans(sv), spansLow) {
			return fmt.Errorf("glue: the %s batched schedule's n_seqs at S_v %d differ from S_v 16's; the condition below assumes one list below 128", t.Name, sv)
		}
	}
	if len(spans) != len(spansLow) || !slices.Equal(spans[1:], spansLow[1:]) || spans[0].To != spansLow[0].To {
		return fmt.Errorf("glue: the %s batched schedule takes %v sequences at S_v 128 and %v below; the condition names one list but for its first n_seqs", t.Name, spans, spansLow)
	}
	nSeqs := ne(2, 3)
	for _, tt := range [][]ops.Batch{tiers, low} {
		for i := range tt {
			if tt[i].NS < 1 || tt[i].SPT < 1 {
				return fmt.Errorf("glue: the %s batched tier %+v: NS and SPT must be at least 1", t.Name, tt[i])
			}
			if i > 0 && tt[i].Seqs() <= tt[i-1].Seqs() || tt[i].From > tt[i].Seqs() {
				return fmt.Errorf("glue: the %s batched tier %+v takes no sequences, or is not past the tier before it", t.Name, tt[i])
			}
		}
	}
	choice := func(param func(ops.Batch) int) string {
		at128, below := byTier(nSeqs, tiers, param), byTier(nSeqs, low, param)
		if at128 == below {
			return below
		}
		return fmt.Sprintf("(%s == 128 ? %s : %s)", ne(2, 0), at128, below)
	}
	variant := []Choice{
		{Param: "NW", Expr: choice(func(b ops.Batch) int { return b.NW })},
		{Param: "CPW", Expr: choice(func(b ops.Batch) int { return b.CPW })},
		{Param: "NS", Expr: choice(func(b ops.Batch) int { return b.NS })},
		{Param: "SPT", Expr: choice(func(b ops.Batch) int { return b.SPT })},
		{Param: "SPLIT", Expr: choice(func(b ops.Batch) int { return b2i(b.Aliased) })},
	}
	// The Aliased spans run split by aliasing: the batched dispatch's SPLIT
	// variant there, and the chained compute after it.
	var aliased []ops.Span
	for _, sp := range spans {
		if sp.Aliased {
			aliased = append(aliased, sp)
		}
	}
	split := ""
	if len(aliased) > 0 {
		if from, ok := t.ChainFrom(); !ok || from > aliased[0].From {
			return fmt.Errorf("glue: the %s batched tiers from %d sequences are Aliased, but the chained compute, which runs their steps where no source aliases, runs only from %d (ops.Tuning.ChainFrom)", t.Name, aliased[0].From, from)
		}
		split, _ = spanCond(nSeqs, aliased, aliased[0].From)
	}
	bd, err := dispatch(opB.Name, disp{op: "gated_delta_net_inplace_ids_batched", args: gdnArgs, variant: variant})
	if err != nil {
		return err
	}
	ds := []Dispatch{bd}
	if len(aliased) > 0 {
		cd, err := dispatch(opB.Name, disp{op: opB.Name + "_chained", args: withArg(gdnArgs, aliasedBatched, "1")})
		if err != nil {
			return err
		}
		if planAccess(cd).CanWrite() {
			return fmt.Errorf("glue: %s: the chained compute after the split batched dispatch writes the plan; the split writes none", opB.Name)
		}
		cd.When, cd.WhenWhy = split, "split by aliasing (ops.Batch.Aliased): where no source aliases the batched dispatch ran nothing, and the chained compute runs the step"
		ds = append(ds, cd)
	}
	return opB.batched(ds, nSeqs, spans, spansLow[0].From, stateDstIsWindow, "state_dst", "prior state")
}

// aliasedBatched is the arg of op B's chained compute that has it run
// after the batched dispatch split by aliasing (ops.Batch.Aliased).
const aliasedBatched = "aliased_batched"

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// withArg is args with one more, C text over the node.
func withArg(args argTable, name, expr string) argTable {
	out := argTable{name: raw(expr)}
	for k, v := range args {
		out[k] = v
	}
	return out
}

// byTier is the C expression of a param over the tiers (ascending Seqs):
// the value of the first tier that takes nSeqs sequences, the last tier's
// past them all (the schedule's condition keeps nSeqs within it). A tier
// whose value the next tier shares needs no test of its own.
func byTier(nSeqs string, tiers []ops.Batch, param func(ops.Batch) int) string {
	e := fmt.Sprint(param(tiers[len(tiers)-1]))
	for i := len(tiers) - 2; i >= 0; i-- {
		if param(tiers[i]) != param(tiers[i+1]) {
			e = fmt.Sprintf("%s <= %d ? %d : %s", nSeqs, tiers[i].Seqs(), param(tiers[i]), e)
		}
	}
	if strings.Contains(e, "?") {
		e = "(" + e + ")"
	}
	return e
}

// chainSeg is the plan's seg over the node (nSeqs, a C expression of at
// least one sequence): ops.Target.ChainSeg's ceil(n_seqs / split) as C, a split
// per ops.Target.ChainSplits tier.
func chainSeg(t ops.Target, nSeqs string) string {
	seg := func(split int) string {
		if split <= 1 {
			return nSeqs
		}
		return fmt.Sprintf("(%s + %d) / %d", nSeqs, split-1, split)
	}
	splits := t.ChainSplits()
	e := seg(splits[0].Split)
	for _, t := range splits[1:] {
		e = fmt.Sprintf("(%s >= %d ? %s : %s)", nSeqs, t.From, seg(t.Split), e)
	}
	return e
}

// chainedCompute is the compute kernel of op o's chained schedule on a
// backend: op B's blocks compute where the backend runs the block
// schedule (ops.Target.GDNBlocks), else o's chained compute. (The split by
// aliasing keeps the chained compute after its batched dispatch: with
// identity ids it runs the two-phase kernel's code on an unpadded grid.)
func chainedCompute(t ops.Target, o *Op) string {
	if o.Fusion == "B" && t.GDNBlocks() {
		return o.Name + "_blocks"
	}
	return o.Name + "_chained"
}

// chainedSchedule gives ids op o (nSeqs, a C expression; args its kernels'
// args over the node) the chained schedule from from sequences where the
// backend runs it (from > 0: ops.Target.ChainFrom, ops.Target.ConvChainFrom): family's chain gather (which plans the segments, then
// copies), then o's chained compute, where window says dstName is the
// cache's window; batched is the most sequences o's one-dispatch schedule
// takes (0: none). Where op B runs the block schedule (ops.Target.GDNBlocks) its
// kernels are the block gather, in blocks of nw (a C expression: the
// compute's NW), and the blocks compute.
func chainedSchedule(t ops.Target, from int, o *Op, family string, batched int, dispatch func(string, disp) (Dispatch, error), nSeqs string, args argTable, window, dstName, nw string) error {
	if from <= 0 {
		return nil
	}
	gather := ops.ChainGatherOp
	planArgs := withArg(withArg(args, "seg", chainSeg(t, nSeqs)), aliasedBatched, "0")
	if chainedCompute(t, o) != o.Name+"_chained" {
		gather = family + "_block_gather"
		planArgs = withArg(args, "block_len", nw)
	}
	var ds []Dispatch
	for _, op := range []string{gather, chainedCompute(t, o)} {
		d, err := dispatch(o.Name, disp{op: op, args: planArgs})
		if err != nil {
			return err
		}
		ds = append(ds, d)
	}
	// the chained compute runs at the op's tiling for many sequences
	if _, _, maxSeqs, ok := t.GDNSmallTiling(128); ok && o.Fusion == "B" && maxSeqs >= from {
		return fmt.Errorf("glue: %s: the small-n tiling (up to %d sequences) reaches the chained schedule (from %d), whose kernel has only the main tiling", o.Name, maxSeqs, from)
	}
	return o.chained(ds, nSeqs, from, batched, window, dstName)
}

// callersBuffer is the buffer of b's name of op caller's kernel under
// contract a: what b, a buffer of a kernel several ops dispatch
// (ir.CallerRole), is bound as when caller's schedule dispatches it.
func callersBuffer(a ir.Arith, caller string, b *ir.Buffer) (*ir.Buffer, error) {
	op, err := ops.Lookup(caller)
	if err != nil {
		return nil, err
	}
	k, err := op.Kernel(a)
	if err != nil {
		return nil, err
	}
	for _, cb := range k.Buffers {
		if cb.Name == b.Name && cb.Role != ir.CallerRole {
			return cb, nil
		}
	}
	return nil, fmt.Errorf("buffer %s is the caller's, and %s has none of that name", b.Name, k.ID())
}

// bindingOf is the tensor a kernel's buffer is bound to, read from its IR
// role, the one place a binding is stated: "srcN" is the node's src[N],
// "dst" the node, "scratch" the op's scratch, "plan" its chain plan.
func bindingOf(b *ir.Buffer) (Binding, error) {
	switch b.Role {
	case "dst":
		return Binding{Tensor: "op"}, nil
	case "scratch", "plan":
		return Binding{Tensor: b.Role}, nil
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(b.Role, "src")); err == nil && strings.HasPrefix(b.Role, "src") && n >= 0 && n <= 9 {
		return Binding{Tensor: fmt.Sprintf("src[%d]", n)}, nil
	}
	return Binding{}, fmt.Errorf("buffer %s has role %q; a buffer is bound by its role: src0..src9, dst, scratch or plan", b.Name, b.Role)
}

// batched gives an ids op its one-dispatch schedule ds (the batched
// dispatch, then where some tiers split by aliasing the chained compute):
// it runs for the n_seqs of spans (nSeqs, a C expression; the first span
// from fromLow below S_v 128, where the op has S_v) where window (a C
// condition) says the destination (dstName) is the cache's window; what
// names what it reads.
func (o *Op) batched(ds []Dispatch, nSeqs string, spans []ops.Span, fromLow int, window, dstName, what string) error {
	var merged []ops.Span // the schedule's n_seqs, split or not
	for _, sp := range spans {
		if n := len(merged); n > 0 && merged[n-1].To+1 == sp.From {
			merged[n-1].To = sp.To
		} else {
			merged = append(merged, ops.Span{From: sp.From, To: sp.To})
		}
	}
	cond, why := spanCond(nSeqs, merged, fromLow)
	if fromLow != spans[0].From {
		why += fmt.Sprintf(" (from %d below S_v 128)", fromLow)
	}
	why = fmt.Sprintf("%s, %s the cache's rows from rs_head: one dispatch reads every %s before writing any (no gather)", why, dstName, what)
	for _, sp := range spans {
		if sp.Aliased {
			why += fmt.Sprintf("; at %d..%d only where some source aliases, and the chained compute runs the steps where none does", sp.From, sp.To)
		}
	}
	o.Schedules = append(o.Schedules, &Schedule{Local: "one_dispatch", Cond: cond + " && " + window,
		Why:        why,
		Otherwise:  "otherwise the gather, then the compute dispatch",
		Dispatches: ds})
	return o.checkVariant()
}

// spanCond is the C condition that nSeqs lies in one of spans (the first
// from fromLow below S_v 128) and the spans as prose.
func spanCond(nSeqs string, spans []ops.Span, fromLow int) (cond, seqs string) {
	var conds, names []string
	for i, sp := range spans {
		from := fmt.Sprint(sp.From)
		if i == 0 {
			from = bySv(sp.From, fromLow)
		}
		conds = append(conds, fmt.Sprintf("%s >= %s && %s <= %d", nSeqs, from, nSeqs, sp.To))
		names = append(names, fmt.Sprintf("%d..%d", sp.From, sp.To))
	}
	cond = conds[0]
	if len(conds) > 1 { // (a && b) || (c && d): -Wparentheses
		cond = "((" + strings.Join(conds, ") || (") + "))"
	}
	return cond, strings.Join(names, ", ") + " sequences"
}

// chained gives an ids op the chained schedule (ops/chain.go): the chain
// gather, which writes the plan, then the chained compute, which reads it
// (ds, in that order), for from or more sequences
// (nSeqs, a C expression) where window says the destination (dstName) is
// the cache's window. Where the one-dispatch schedule reaches that far
// (batched: the most sequences it takes), it runs where that one does not
// (one dispatch is cheaper where it runs); its plan (nSeqs int32) is
// allocated where the scratch is.
func (o *Op) chained(ds []Dispatch, nSeqs string, from, batched int, window, dstName string) error {
	if len(ds) != 2 {
		return fmt.Errorf("glue: %s: the chained schedule is a chain gather and a compute dispatch, not %d dispatches", o.Name, len(ds))
	}
	if a := planAccess(ds[0]); !a.CanWrite() {
		return fmt.Errorf("glue: %s: the chained schedule's first dispatch (%s) must write the plan the compute reads; %s", o.Name, ds[0].Kernel.ID(), bindsPlan(a))
	}
	if a := planAccess(ds[1]); !a.CanRead() {
		return fmt.Errorf("glue: %s: the chained compute (%s) must read the plan the chain gather writes; %s", o.Name, ds[1].Kernel.ID(), bindsPlan(a))
	}
	if g := ds[0].Op.Guard; g != nil && int64(from) < g.Min {
		return fmt.Errorf("glue: %s: the chained schedule starts at %d sequences, but its chain gather, which writes the plan, is skipped below %s %d; ops.Tuning.ChainFrom must be at least %d", o.Name, from, g.Arg, g.Min, g.Min)
	}
	cond := fmt.Sprintf("%s >= %d && %s", nSeqs, from, window)
	seqs := fmt.Sprintf("%d or more sequences", from)
	if from <= batched {
		if len(o.Schedules) == 0 {
			return fmt.Errorf("glue: %s: the chained schedule starts at %d sequences, inside the one-dispatch schedule's (up to %d), which the op does not have yet; give it the one-dispatch schedule first", o.Name, from, batched)
		}
		for _, s := range o.Schedules {
			cond += " && !" + s.Local
		}
		seqs += " where one dispatch does not take them"
	}
	if o.Scratch == nil {
		return fmt.Errorf("glue: %s: the chained schedule needs the op's scratch, where its plan is allocated", o.Name)
	}
	o.Scratch.Plan = nSeqs
	why := "the chain gather cuts the ids chains into segments and copies the rows read across a segment boundary, and a workgroup runs each segment in order"
	if strings.HasSuffix(ds[1].Op.Name, "_blocks") {
		why = "the block gather lays the ids chains out in blocks of NW sequences and copies the rows read across blocks, and a workgroup runs a block, its reads before its writes"
	}
	o.Schedules = append(o.Schedules, &Schedule{Local: "chained", Cond: cond,
		Why:        fmt.Sprintf("%s, %s the cache's rows from rs_head: %s", seqs, dstName, why),
		Otherwise:  "otherwise the gather, then the compute dispatch",
		Dispatches: ds})
	return o.checkVariant()
}

// planAccess is how dispatch d binds the chain plan (0: not at all).
func planAccess(d Dispatch) ir.Access {
	for _, b := range d.Bind {
		if b.Tensor == "plan" {
			return b.Access
		}
	}
	return 0
}

func bindsPlan(a ir.Access) string {
	if a == 0 {
		return "it has no buffer of role plan"
	}
	return "it binds it " + a.String()
}

// checkVariant ensures every non-derived param of every kernel is chosen.
func (o *Op) checkVariant() error {
	for _, d := range o.AllDispatches() {
		for _, p := range d.Kernel.Params {
			if p.Derived == nil && o.Choice(d, p.Name) == "" {
				return fmt.Errorf("glue: %s: param %s of %s is not chosen", o.Name, p.Name, d.Kernel.ID())
			}
		}
	}
	return nil
}

// Choice is the C expression choosing param name for dispatch d ("" none).
func (o *Op) Choice(d Dispatch, name string) string {
	for _, c := range d.Variant {
		if c.Param == name {
			return c.Expr
		}
	}
	for _, c := range o.Variant {
		if c.Param == name {
			return c.Expr
		}
	}
	return ""
}

// AllDispatches lists the schedules' dispatches, then the op's.
func (o *Op) AllDispatches() []Dispatch {
	var out []Dispatch
	for _, s := range o.Schedules {
		out = append(out, s.Dispatches...)
	}
	return append(out, o.Dispatches...)
}

// Discriminator is the C condition selecting this fused node among nodes of its op enum.
func (o *Op) Discriminator() string {
	var parts []string
	for _, i := range o.Present {
		parts = append(parts, fmt.Sprintf("op->src[%d] != NULL", i))
	}
	for _, i := range o.Absent {
		parts = append(parts, fmt.Sprintf("op->src[%d] == NULL", i))
	}
	sort.Strings(parts)
	s := ""
	for i, p := range parts {
		if i > 0 {
			s += " && "
		}
		s += p
	}
	return s
}

// Instances are the op's dispatched kernels at the variants they are built
// at (variants names an op's, e.g. an ops.Target's Variants): a family's
// shared kernel at each form's, its flag set for the ids form. A kernel no
// variant names has none.
func (o *Op) Instances(variants func(op string) []ops.Variant) []ir.Instance {
	var out []ir.Instance
	seen := map[*ir.Kernel]bool{}
	for _, d := range o.Dispatches {
		k := d.Kernel
		if seen[k] {
			continue
		}
		seen[k] = true
		if o.Shared == nil || k.Name != o.Shared.Name {
			for _, v := range variants(k.Name) {
				out = append(out, v.Of(k))
			}
			continue
		}
		for flag, op := range []string{o.Shared.Plain, o.Shared.Ids} {
			for _, v := range variants(op) {
				values := map[string]int64{o.Shared.Flag: int64(flag)}
				for n, x := range v.Values {
					values[n] = x
				}
				out = append(out, ir.Instance{Kernel: k, Values: values})
			}
		}
	}
	return out
}
