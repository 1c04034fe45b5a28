package fusion

import (
	"slices"
	"strings"

	"github.com/kernelgen/kernelgen/ops"
)

// Node is one tensor of a pattern, found from a node bound before it.
type Node struct {
	Role string
	Op   string // ggml op; "" any (an input of the fused kernel)
	From Edge
	// Optional: the pattern holds without it (then the kernel runs the
	// variant that Params says).
	Optional bool
	// Fused: the fused dispatch replaces the node (it is skipped); every
	// fused node but the anchor is an intermediate: read by no node outside
	// the pattern and not an output. Nodes not fused are the kernel's
	// inputs and the cache rows it writes.
	Fused bool
	// FusedIf: fused only when that optional role is bound.
	FusedIf string
	// Slot: a node of the snapshot slots (a run of such nodes, together in
	// Nodes), found once per slot i = 0, 1, ... (Slot() is i in their
	// edges' Where and their conditions) until slot i lacks one, at most
	// Pattern.MaxSlots: slot k's node is AtSlot(Role, k), slot 0's Role too.
	Slot bool
}

// Edge finds a node from Role, bound before: Role's src[Src] (Down false),
// or the reader of Role through its src[Src] (Down true) for which Where
// holds, the node itself bound as Self while Where is evaluated.
type Edge struct {
	Role  string
	Src   int
	Down  bool
	Where []Eq
}

// Self names the candidate in an Edge's Where.
const Self = "self"

// Eq says two expressions are equal.
type Eq struct{ A, B Expr }

// Kind is what a condition checks; each is spelled once per backend.
type Kind string

const (
	// Equal: every Eq of the condition holds.
	Equal Kind = "equal"
	// Intermediates: no fused node but the anchor is read outside the
	// pattern or marked output (ggml_can_fuse's rule).
	Intermediates Kind = "intermediates"
	// AttentionViews: every reader of the anchor outside the pattern is a
	// view inside its first Bytes bytes (the attention, not the state).
	AttentionViews Kind = "attention-views"
	// SameCache: Roles' tensors share the cache's memory (one root), an f32
	// tensor in a buffer of this backend.
	SameCache Kind = "same-cache"
	// NothingBetween: no node outside the pattern, from the first pattern
	// node to the last in graph order, reads or writes bytes of the
	// cache: the fused dispatch moves the read to the anchor and the write
	// before the copy.
	NothingBetween Kind = "nothing-between"
	// Adjacent: no node outside the pattern runs between the anchor and
	// the node whose result is the dispatch's out: the dispatch writes out
	// at the anchor's place, and the allocator may have put the result of
	// a node in between in out's memory (it allocates out only when the
	// graph reaches it).
	Adjacent Kind = "adjacent"
	// Disjoint: the memory of Roles[0] (what the kernel writes) overlaps
	// none of Roles[1:] (what it reads). The dispatch reads its inputs
	// later than the graph's last reader of them did, so the allocator may
	// have handed their memory on; a backend checks data pointers.
	Disjoint Kind = "disjoint"
	// Variant: the shapes are in the variant table (ops/variants.go) of
	// the fused kernel, on this backend.
	Variant Kind = "variant"
)

// Condition is one check of the matcher, in the order backends test them:
// those on a pattern's Slot nodes (Pattern.perSlot) first, as each slot is
// found.
type Condition struct {
	Name string
	Kind Kind
	Why  string
	Eqs  []Eq
	// Roles: SameCache's tensors.
	Roles []string
	// Bytes: AttentionViews' bound.
	Bytes Expr
}

// Bind is a buffer of a fused kernel: the memory of Role's tensor from
// byte Offset past it.
type Bind struct {
	Buffer, Role string
	Offset       Expr
	Why          string
}

// Whole reports whether b binds its tensor from its start (no offset).
func (b Bind) Whole() bool { return b.Offset.Op == "const" && b.Offset.K == 0 }

// WhyC is Why as a comment of the emitted C reads it, lower-case first.
func (b Bind) WhyC() string { return strings.ToLower(b.Why[:1]) + b.Why[1:] }

// Flag is a param that is 1 where Role is bound (an optional node fused).
type Flag struct{ Param, Role string }

// Arg is an integer arg or param of a fused kernel.
type Arg struct {
	Name  string
	Value Expr
}

// Pattern is one graph fusion: the nodes llama.cpp builds, the conditions
// under which the fused dispatch gives the graph's results bit for bit, and
// the dispatch: a gather, then the compute kernel, at the anchor's place.
type Pattern struct {
	Name       string
	Anchor     string // the node whose place the fused dispatch takes
	Nodes      []Node // the anchor first
	Conditions []Condition
	// Kernel and Gather are ops' names; Buffers, Args and Params bind
	// theirs (every buffer and arg of both kernels; params as the
	// variant table names them, the tiling from the backend's Target).
	Kernel, Gather string
	Buffers        []Bind
	Args           []Arg
	Params         []Arg
	// Flags are params that are 1 where their role is bound, else 0.
	Flags []Flag
	// Out: the first bound of these roles holds the fused result, bound
	// as "out" (the anchor's readers outside the pattern read it).
	Out []string
	// Scale names the param whose 1/sqrt the kernel's f32 arg "scale" is,
	// computed on the host as ggml does.
	Scale string
	// MaxSlots bounds the snapshot slots of the Slot nodes: a graph with
	// more leaves the last ones outside the pattern (and so unfused).
	MaxSlots int
}

// SlotsArg and SlotStrideArg are the args that give a kernel the snapshot
// slots it writes: K of them, slot i at i*ss elements past slot 0.
const SlotsArg, SlotStrideArg = "K", "ss"

// SlotBound reports whether a buffer bound to role is written K slots
// long: role is a Slot node's, bound as slot 0's tensor, and the kernel
// writes slot i SlotStrideArg elements further for each i < SlotsArg. A
// backend whose bindings have a range (Vulkan's descriptors) spans them.
func (p *Pattern) SlotBound(role string) bool {
	return slices.Contains(p.slotRoles(), role)
}

// slotRoles are the roles of p's Slot nodes.
func (p *Pattern) slotRoles() []string {
	var out []string
	for _, n := range p.Nodes {
		if n.Slot {
			out = append(out, n.Role)
		}
	}
	return out
}

// readOutsideSlots are the Slot nodes' roles read as one tensor (slot
// 0's): by a buffer, an arg, the out, or a condition not on every slot.
func (p *Pattern) readOutsideSlots() map[string]bool {
	out := map[string]bool{}
	mark := func(e Expr) {
		e.walk(func(x Expr) {
			if x.Op != "slots" && x.Op != "stride" {
				out[x.Role] = true
			}
		})
	}
	for _, b := range p.Buffers {
		out[b.Role] = true
		mark(b.Offset)
	}
	for _, a := range append(slices.Clone(p.Args), p.Params...) {
		mark(a.Value)
	}
	for _, r := range p.Out {
		out[r] = true
	}
	for _, c := range p.Conditions {
		if p.perSlot(c) {
			continue
		}
		for _, r := range c.Roles {
			out[r] = true
		}
		for _, e := range c.Eqs {
			mark(e.A)
			mark(e.B)
		}
		mark(c.Bytes)
	}
	return out
}

// perSlot reports whether condition c reads a slot's nodes: it holds for
// every slot.
func (p *Pattern) perSlot(c Condition) bool {
	roles := p.slotRoles()
	return slices.ContainsFunc(c.Eqs, func(e Eq) bool { return e.A.reads(roles) || e.B.reads(roles) })
}

// Patterns are the decode step's two fusions.
var Patterns = []*Pattern{StatePattern, ConvPattern}

// bytes of f32 elements
func f32s(e Expr) Expr { return Mul(e, Const(4)) }

var (
	sv     = Ne("v", 0)
	nSeqs  = Ne("v", 3)
	nTok   = Ne("v", 2)
	stateD = Mul(Ne("prior", 0), Ne("prior", 1), Ne("prior", 2)) // S_v*S_v*H, a cache row
	attn   = Mul(Ne("v", 0), Ne("v", 1), Ne("v", 2), Ne("v", 3)) // attention floats
	snaps  = Param("gdn", 0)                                     // K
)

// StatePattern: GET_ROWS(ssm_states_all, s_copy_main) -> RESHAPE ->
// GATED_DELTA_NET(K) -> VIEW of the new state -> CPY into ssm_states_all
// rows [kv_head, kv_head+n_seqs) (K > 1: K row groups), run as op B with
// slots: ops.GatherOp then ops.SlotsOp.
var StatePattern = &Pattern{
	Name:   "gdn-state",
	Anchor: "gdn",
	Nodes: []Node{
		{Role: "gdn", Op: "GATED_DELTA_NET", Fused: true},
		{Role: "q", From: Edge{Role: "gdn", Src: 0}},
		{Role: "k", From: Edge{Role: "gdn", Src: 1}},
		{Role: "v", From: Edge{Role: "gdn", Src: 2}},
		{Role: "g", From: Edge{Role: "gdn", Src: 3}},
		{Role: "beta", From: Edge{Role: "gdn", Src: 4}},
		{Role: "prior", Op: "RESHAPE", From: Edge{Role: "gdn", Src: 5}, Fused: true},
		{Role: "rows", Op: "GET_ROWS", From: Edge{Role: "prior", Src: 0}, Fused: true},
		{Role: "cache", From: Edge{Role: "rows", Src: 0}},
		{Role: "ids", From: Edge{Role: "rows", Src: 1}},
		{Role: "tail", Op: "VIEW", From: Edge{Role: "gdn", Src: 0, Down: true, Where: []Eq{{Offs(Self), f32s(attn)}}}, Fused: true},
		{Role: "store", Op: "CPY", From: Edge{Role: "tail", Src: 0, Down: true}, Fused: true},
		{Role: "window", From: Edge{Role: "store", Src: 1}},
	},
	Conditions: []Condition{
		{Name: "intermediates", Kind: Intermediates, Why: "an intermediate read elsewhere or an output needs its value: run unfused"},
		{Name: "attention-only", Kind: AttentionViews, Bytes: f32s(attn), Why: "the fused kernel leaves the GDN's state region unwritten (it holds the gather's scratch)"},
		{Name: "one-cache", Kind: SameCache, Roles: []string{"cache", "window"}, Why: "the rows read and the rows written are one f32 cache in this backend's memory"},
		{Name: "cache-rows", Kind: Equal, Why: "the cache is read as packed f32 rows of S_v*S_v*H, ids one per sequence", Eqs: []Eq{
			{Ne("cache", 0), stateD}, {Nb("cache", 1), f32s(stateD)}, {Ne("ids", 0), nSeqs}, {Ne("prior", 3), nSeqs},
		}},
		{Name: "q-k-layout", Kind: Equal, Why: "the kernel takes one set of strides for q and k, and keys of S_v", Eqs: []Eq{
			{Ne("q", 0), sv}, {Ne("k", 0), sv}, {Ne("k", 1), Ne("q", 1)}, {Ne("k", 3), Ne("q", 3)},
			{Nb("k", 1), Nb("q", 1)}, {Nb("k", 2), Nb("q", 2)}, {Nb("k", 3), Nb("q", 3)},
		}},
		{Name: "state-view", Kind: Equal, Why: "the copied view is the whole state region, packed", Eqs: []Eq{
			{Mul(Ne("tail", 0), Ne("tail", 1), Ne("tail", 2), Ne("tail", 3)), Mul(stateD, nSeqs, snaps)},
			{Nb("tail", 1), Mul(Ne("tail", 0), Const(4))},
		}},
		{Name: "window-rows", Kind: Equal, Why: "the destination is n_seqs whole rows from a row boundary, each of the K slots a row group (slot i at i*mem_size rows: nb[2]); fewer slots (n_tokens < K) run unfused", Eqs: []Eq{
			{Ne("window", 0), stateD}, {Ne("window", 1), nSeqs}, {Ne("window", 2), snaps},
			{Nb("window", 1), f32s(stateD)}, {Mod(Offs("window"), f32s(stateD)), Const(0)},
		}},
		{Name: "nothing-between", Kind: NothingBetween, Why: "a node between the read and the write that touches the cache would see (or make) a different cache"},
		{Name: "variant", Kind: Variant, Why: "the fused kernels are built for the variant table's shapes only"},
	},
	Kernel: ops.SlotsOp,
	Gather: ops.GatherOp,
	Buffers: []Bind{
		{Buffer: "q", Role: "q", Offset: Const(0)},
		{Buffer: "k", Role: "k", Offset: Const(0)},
		{Buffer: "v", Role: "v", Offset: Const(0)},
		{Buffer: "g", Role: "g", Offset: Const(0)},
		{Buffer: "beta", Role: "beta", Offset: Const(0)},
		{Buffer: "cache", Role: "cache", Offset: Const(0), Why: "the whole cache: sources outside the window are read in place"},
		{Buffer: "ids", Role: "ids", Offset: Const(0)},
		{Buffer: "state_dst", Role: "window", Offset: Const(0), Why: "the CPY's destination rows, written in place"},
		{Buffer: "scratch", Role: "gdn", Offset: f32s(attn), Why: "the GDN's state region, which only the skipped copy read"},
		{Buffer: "dst", Role: "gdn", Offset: Const(0), Why: "the attention, where the graph's readers find it"},
	},
	Args: []Arg{
		{"H", Ne("v", 1)}, {"n_tokens", nTok}, {"n_seqs", nSeqs},
		{"neq1", Ne("q", 1)}, {"rq3", Div(nSeqs, Ne("q", 3))},
		{"sq1", Div(Nb("q", 1), Const(4))}, {"sq2", Div(Nb("q", 2), Const(4))}, {"sq3", Div(Nb("q", 3), Const(4))},
		{"sv1", Div(Nb("v", 1), Const(4))}, {"sv2", Div(Nb("v", 2), Const(4))}, {"sv3", Div(Nb("v", 3), Const(4))},
		{"sg1", Div(Nb("g", 1), Const(4))}, {"sg2", Div(Nb("g", 2), Const(4))}, {"sg3", Div(Nb("g", 3), Const(4))},
		{"sb1", Div(Nb("beta", 1), Const(4))}, {"sb2", Div(Nb("beta", 2), Const(4))}, {"sb3", Div(Nb("beta", 3), Const(4))},
		{"sd1", stateD},
		{"rs_head", Div(Offs("window"), f32s(stateD))},
		{"row_len", stateD},
		{SlotsArg, snaps}, // slot i of every sequence at i*ss further (MTP rollback)
		{SlotStrideArg, Div(Nb("window", 2), Const(4))},
	},
	Params: []Arg{
		{"S_v", sv},
		{"KDA", Div(Ne("g", 0), sv)}, // g's ne[0] is 1 or S_v
	},
	Out:   []string{"gdn"},
	Scale: "S_v",
}

var (
	dconv     = Ne("kernel", 0)
	channel   = Ne("kernel", 1)
	convRow   = Mul(Sub(dconv, Const(1)), channel) // (d_conv-1)*C
	convN     = Ne("x", 2)
	convT     = Ne("x", 1)
	convSlots = Slots("window")
	slotBytes = f32s(Mul(convRow, convN)) // a slot's rows
)

// maxStepTokens bounds the tokens of a fused conv step: its kernel runs a
// sequence's tokens one after another, where the plain conv of a longer
// batch (a prompt's) runs them in parallel.
const maxStepTokens = 8

// ConvPattern: GET_ROWS(conv_states_all, s_copy_main) -> RESHAPE ->
// CONCAT(taps, TRANSPOSE(qkv)) -> VIEW of the last d_conv-1 taps -> CPY
// into conv_states_all (K > 1: slot i's VIEW i tokens earlier, its CPY
// i*mem_size rows further, the Slot nodes), and SSM_CONV(conv_input,
// kernel) -> SILU, run as op D over the step's tokens with slots:
// ops.GatherOp then ops.ConvSlotsOp (SILU on where the SILU reads the conv
// alone; where an ADD of a bias comes between, SILU off and the ADD and
// SILU run as they are).
var ConvPattern = &Pattern{
	Name:   "conv-state",
	Anchor: "conv",
	Nodes: []Node{
		{Role: "conv", Op: "SSM_CONV", Fused: true},
		{Role: "kernel", From: Edge{Role: "conv", Src: 1}},
		{Role: "input", Op: "CONCAT", From: Edge{Role: "conv", Src: 0}, Fused: true},
		{Role: "taps", Op: "RESHAPE", From: Edge{Role: "input", Src: 0}, Fused: true},
		{Role: "rows", Op: "GET_ROWS", From: Edge{Role: "taps", Src: 0}, Fused: true},
		{Role: "cache", From: Edge{Role: "rows", Src: 0}},
		{Role: "ids", From: Edge{Role: "rows", Src: 1}},
		{Role: "xt", Op: "TRANSPOSE", From: Edge{Role: "input", Src: 1}, Fused: true},
		{Role: "x", From: Edge{Role: "xt", Src: 0}},
		{Role: "last", Op: "VIEW", From: Edge{Role: "input", Src: 0, Down: true, Where: []Eq{{Offs(Self), f32s(Sub(convT, Slot()))}}}, Fused: true, Slot: true},
		{Role: "store", Op: "CPY", From: Edge{Role: "last", Src: 0, Down: true}, Fused: true, Slot: true},
		{Role: "window", From: Edge{Role: "store", Src: 1}, Slot: true},
		{Role: "silu", Op: "SILU", From: Edge{Role: "conv", Src: 0, Down: true}, Optional: true, Fused: true},
	},
	Conditions: []Condition{
		{Name: "last-taps", Kind: Equal, Why: "each copied view is d_conv-1 taps of every channel", Eqs: []Eq{
			{Ne("last", 0), Sub(dconv, Const(1))}, {Ne("last", 1), channel}, {Ne("last", 2), convN},
			{Nb("last", 1), Nb("input", 1)}, {Nb("last", 2), Nb("input", 2)},
		}},
		{Name: "window-rows", Kind: Equal, Why: "each destination is n_seqs whole packed rows from a row boundary, slot i's i strides past slot 0's, the slots apart", Eqs: []Eq{
			{Mul(Ne("window", 0), Ne("window", 1), Ne("window", 2), Ne("window", 3)), Mul(convRow, convN)},
			{Nb("window", 1), Mul(Ne("window", 0), Const(4))},
			{Mod(Offs("window"), f32s(convRow)), Const(0)},
			{Offs("window"), Add(Offs(AtSlot("window", 0)), Mul(Slot(), SlotStride("window")))},
			{Min(Sub(Offs("window"), Offs(AtSlot("window", 0))), Mul(Slot(), slotBytes)), Mul(Slot(), slotBytes)},
		}},
		{Name: "intermediates", Kind: Intermediates, Why: "an intermediate read elsewhere or an output needs its value: run unfused"},
		{Name: "one-cache", Kind: SameCache, Roles: []string{"cache", "window"}, Why: "the taps read and written are one f32 cache in this backend's memory"},
		{Name: "cache-rows", Kind: Equal, Why: "the cache is read as packed f32 rows of (d_conv-1)*C taps, channel-major, ids one per sequence", Eqs: []Eq{
			{Ne("cache", 0), convRow}, {Nb("cache", 1), f32s(convRow)}, {Ne("ids", 0), convN},
			{Ne("taps", 0), Sub(dconv, Const(1))}, {Ne("taps", 1), channel},
		}},
		{Name: "tokens", Kind: Equal, Why: "x rows packed; a slot per token at most (slot i is the taps after token T-1-i), and a decode step's few tokens", Eqs: []Eq{
			{Nb("x", 0), Const(4)}, {Min(convSlots, convT), convSlots}, {Min(convT, Const(maxStepTokens)), convT},
		}},
		{Name: "nothing-between", Kind: NothingBetween, Why: "a node between the read and the write that touches the cache would see (or make) a different cache"},
		{Name: "no-reuse", Kind: Disjoint, Roles: []string{"out", "x", "input"}, Why: "x is read after the CONCAT, its last reader in the graph: its memory may hold the result by now"},
		{Name: "silu-next", Kind: Adjacent, Why: "the SILU's result is written at the SSM_CONV's place: a node between the two may have its result in that memory"},
		{Name: "variant", Kind: Variant, Why: "the fused kernels are built for the variant table's shapes only"},
	},
	Kernel: ops.ConvSlotsOp,
	Gather: ops.GatherOp,
	Buffers: []Bind{
		{Buffer: "cache", Role: "cache", Offset: Const(0), Why: "the whole cache: sources outside the window are read in place"},
		{Buffer: "conv_kernel", Role: "kernel", Offset: Const(0)},
		{Buffer: "x_cur", Role: "x", Offset: Const(0), Why: "the token, before its transpose"},
		{Buffer: "conv_state_dst", Role: "window", Offset: Const(0), Why: "the CPY's destination rows, written in place"},
		{Buffer: "ids", Role: "ids", Offset: Const(0)},
		{Buffer: "scratch", Role: "input", Offset: Const(0), Why: "the CONCAT's result, which only skipped nodes read"},
		{Buffer: "dst", Role: "out", Offset: Const(0), Why: "the SILU's result where it is fused, else the SSM_CONV's"},
	},
	Args: []Arg{
		{"n_ch", channel}, {"n_seqs", convN},
		{"cs1", Sub(dconv, Const(1))}, {"cs2", convRow}, {"w1", Div(Nb("kernel", 1), Const(4))},
		{"x2", Div(Nb("x", 2), Const(4))}, {"sd1", convRow}, {"d2", Div(Nb("out", 2), Const(4))},
		{"rs_head", Div(Offs("window"), f32s(convRow))},
		{"row_len", convRow},
		{"n_t", convT}, {"x1", Div(Nb("x", 1), Const(4))}, {"d1", Div(Nb("out", 1), Const(4))},
		{SlotsArg, convSlots}, // slot i of every sequence at i*ss further (MTP rollback)
		{SlotStrideArg, Div(SlotStride("window"), Const(4))},
	},
	Params:   []Arg{{"d_conv", dconv}},
	Flags:    []Flag{{Param: "SILU", Role: "silu"}},
	Out:      []string{"silu", "conv"},
	MaxSlots: 4,
}
