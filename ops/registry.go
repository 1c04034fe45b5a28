package ops

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
)

// Op is one kernel program of docs/ops.md, written once and built under every
// arithmetic contract it has.
type Op struct {
	// Name is the kernel's name, as ggml would name it.
	Name string
	// Fusion is the series op it implements: "A".."D", "" for the base
	// ops; a kernel several run names each ("BD": the chain gather).
	Fusion string
	// Summary is one line for listings.
	Summary string
	// Guard, when set, says when a launch of this op can be left out: it
	// would change nothing.
	Guard *Guard
	build func(ir.Arith) (*ir.Kernel, error)
}

// Guard: a launch is needed only when its integer arg Arg is at least Min;
// below, it leaves every buffer as it was (Why; tested in verify/cases).
// Backends skip the launch, and its barrier, on the host.
type Guard struct {
	Arg string
	Min int64
	Why string
}

// Needed reports whether a launch with these arg values must run.
func (o *Op) Needed(args map[string]int64) bool {
	if o.Guard == nil {
		return true
	}
	v, ok := args[o.Guard.Arg]
	return !ok || v >= o.Guard.Min
}

// gatherGuard: a gather copies the rows whose source is another sequence's
// destination; with one sequence there is none.
var gatherGuard = &Guard{Arg: "n_seqs", Min: 2, Why: "with one sequence no source is another sequence's destination: the gather copies nothing"}

// waitWithoutGather: an ids op's compute kernel relies on its gather to
// have waited for the dispatches before (DepWait); where the guard leaves
// the gather out, the kernel must wait itself.
func waitWithoutGather(b *dsl.Builder, nSeqs dsl.Val) {
	b.If(nSeqs.Lt(b.U32(uint32(gatherGuard.Min))), func() { b.DepWait() })
}

// GatherOp is the first dispatch of ops B's and D's two-phase schedule:
// one kernel, which copies rows of whatever the cache holds (prior states,
// taps), its cache and ids bound as the op's own (ir.CallerRole).
const GatherOp = "gather"

// ChainGatherOp is the first dispatch of ops B's and D's chained
// schedules: one kernel, which copies rows of whatever the cache holds
// (prior states, taps), its cache and ids bound as the op's own
// (ir.CallerRole).
const ChainGatherOp = "chain_gather"

// SlotsOp is op B with snapshot slots, which the graph fusion of
// llama.cpp's MTP decode step runs (ops/fusion); the ops form's nodes keep
// none, so op B stays as it is.
const SlotsOp = "gated_delta_net_inplace_ids_slots"

// ConvSlotsOp is op D over the step's tokens with snapshot slots of taps,
// the conv state's side of the same fusion; op D stays as it is.
const ConvSlotsOp = "ssm_conv_update_inplace_ids_slots"

var registry = []*Op{
	{Name: "gated_delta_net", Summary: "base GDN recurrence; final state or K snapshots into dst", build: func(a ir.Arith) (*ir.Kernel, error) {
		return buildGDN("gated_delta_net", gdnBase, a)
	}},
	{Name: "gated_delta_net_inplace", Fusion: "A", Summary: "GDN writing the final state in place (src[6])", build: func(a ir.Arith) (*ir.Kernel, error) {
		return buildGDN("gated_delta_net_inplace", gdnInplace, a)
	}},
	{Name: "gated_delta_net_inplace_ids", Fusion: "B", Summary: "GDN reading cache[ids[s]] (gathered) or its own slot, writing in place", build: func(a ir.Arith) (*ir.Kernel, error) {
		return buildGDN("gated_delta_net_inplace_ids", gdnInplaceIds, a)
	}},
	{Name: SlotsOp, Fusion: "B", Summary: "op B writing the K snapshot slots in place too (slot i at i*ss): the graph fusion's, ops/fusion", build: func(a ir.Arith) (*ir.Kernel, error) {
		return buildGDNSlots(SlotsOp, a)
	}},
	{Name: "gated_delta_net_inplace_ids_batched", Fusion: "B", Summary: "op B in one dispatch for n_seqs <= NS*SPT, state_dst the cache's window: no gather", build: func(a ir.Arith) (*ir.Kernel, error) {
		return buildGDN("gated_delta_net_inplace_ids_batched", gdnInplaceIdsBatched, a)
	}},
	{Name: GatherOp, Fusion: "BD", Summary: "phase 1 of ops B and D: copy the non-identity rows (prior states, taps) to scratch", Guard: gatherGuard, build: func(ir.Arith) (*ir.Kernel, error) {
		return buildGather(GatherOp)
	}},
	{Name: RowGatherOp, Fusion: "BD", Summary: "the ids gather as ggml-cpu runs it: the rows another sequence overwrites (prior states, conv taps) copied to scratch in chunks over the threads", Guard: gatherGuard, build: func(ir.Arith) (*ir.Kernel, error) {
		return buildGatherRows(RowGatherOp)
	}},
	{Name: ChainGatherOp, Fusion: "BD", Summary: "ops B's and D's chained schedules, phase 1: plan the segments of the ids chains, copy the rows (prior states, taps) they cut to scratch (ops/chain.go)", Guard: gatherGuard, build: func(ir.Arith) (*ir.Kernel, error) {
		return buildChainGather(ChainGatherOp)
	}},
	{Name: "gated_delta_net_inplace_ids_chained", Fusion: "B", Summary: "op B's chained schedule, phase 2: each workgroup runs a segment of sequences in order", build: func(a ir.Arith) (*ir.Kernel, error) {
		return buildGDN("gated_delta_net_inplace_ids_chained", gdnInplaceIdsChained, a)
	}},
	{Name: "gated_delta_net_block_gather", Fusion: "B", Summary: "op B's block schedule, phase 1: lay the ids chains out in blocks, copy the prior states read across blocks to scratch (ops/chain.go)", Guard: gatherGuard, build: func(ir.Arith) (*ir.Kernel, error) {
		return buildBlockGather("gated_delta_net_block_gather", "src5", "src7")
	}},
	{Name: "gated_delta_net_inplace_ids_blocks", Fusion: "B", Summary: "op B's block schedule, phase 2: each workgroup runs a block of sequences, one per row of threads", build: func(a ir.Arith) (*ir.Kernel, error) {
		return buildGDN("gated_delta_net_inplace_ids_blocks", gdnInplaceIdsBlocks, a)
	}},
	{Name: "ssm_conv", Summary: "plain depthwise causal conv (the non-fused path)", build: func(a ir.Arith) (*ir.Kernel, error) {
		return buildSSMConv("ssm_conv", a)
	}},
	{Name: "ssm_conv_update_inplace", Fusion: "C", Summary: "conv over cached taps + new token, SiLU folded, taps shifted in place (src[3])", build: func(a ir.Arith) (*ir.Kernel, error) {
		return buildConvUpdate("ssm_conv_update_inplace", convPlain, a)
	}},
	{Name: "ssm_conv_update_inplace_ids", Fusion: "D", Summary: "op C reading taps from cache[ids[s]] (gathered) or its own slot", build: func(a ir.Arith) (*ir.Kernel, error) {
		return buildConvUpdate("ssm_conv_update_inplace_ids", convIds, a)
	}},
	{Name: ConvSlotsOp, Fusion: "D", Summary: "op D over n_t tokens writing the K snapshot slots of taps in place too (slot i at i*ss): the graph fusion's, ops/fusion", build: func(a ir.Arith) (*ir.Kernel, error) {
		return buildConvSlots(ConvSlotsOp, a)
	}},
	{Name: "ssm_conv_update_inplace_ids_batched", Fusion: "D", Summary: "op D in one dispatch for n_seqs <= NS, conv_state_dst the cache's window: no gather", build: func(a ir.Arith) (*ir.Kernel, error) {
		return buildConvUpdate("ssm_conv_update_inplace_ids_batched", convIdsBatched, a)
	}},
	{Name: "ssm_conv_update_inplace_ids_chained", Fusion: "D", Summary: "op D's chained schedule, phase 2: each workgroup runs a segment of sequences in order", build: func(a ir.Arith) (*ir.Kernel, error) {
		return buildConvUpdate("ssm_conv_update_inplace_ids_chained", convIdsChained, a)
	}},
}

// All returns every op in listing order.
func All() []*Op { return registry }

// Names returns every op name.
func Names() []string {
	out := make([]string, len(registry))
	for i, op := range registry {
		out[i] = op.Name
	}
	return out
}

// Lookup finds an op by name; the error lists the valid names.
func Lookup(name string) (*Op, error) {
	for _, op := range registry {
		if op.Name == name {
			return op, nil
		}
	}
	return nil, fmt.Errorf("unknown op %q; valid ops: %s", name, strings.Join(Names(), ", "))
}

// ArithFree reports whether the op's kernel is marked arith-free in its IR
// (ir.Kernel.ArithFree): one portable kernel that every backend uses
// whatever its contract.
func (op *Op) ArithFree() bool {
	k, err := op.Kernel(ir.Portable)
	return err == nil && k.ArithFree
}

// Ariths lists the contracts this op has its own kernel for.
func (op *Op) Ariths() []ir.Arith {
	if op.ArithFree() {
		return []ir.Arith{ir.Portable}
	}
	return Ariths()
}

type built struct {
	k   *ir.Kernel
	err error
}

var (
	cacheMu sync.Mutex
	cache   = map[string]built{}
)

// Kernel returns the op's kernel under contract a (arith-free ops ignore a).
// Kernels are built once and shared; callers must not modify them.
func (op *Op) Kernel(a ir.Arith) (*ir.Kernel, error) {
	if a != ir.Portable && op.ArithFree() {
		a = ir.Portable
	}
	if a.Native && !knownBackend(a.Backend) {
		return nil, fmt.Errorf("unknown contract %s; valid: %s", a, arithNames())
	}
	key := op.Name + "@" + a.String()
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if b, ok := cache[key]; ok {
		return b.k, b.err
	}
	k, err := op.build(a)
	cache[key] = built{k, err}
	return k, err
}

// Kernels builds every op under every contract it has, sorted by ID.
func Kernels() ([]*ir.Kernel, error) {
	var out []*ir.Kernel
	for _, op := range registry {
		for _, a := range op.Ariths() {
			k, err := op.Kernel(a)
			if err != nil {
				return nil, err
			}
			out = append(out, k)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID() < out[j].ID() })
	return out, nil
}

func knownBackend(be string) bool {
	for _, x := range NativeBackends() {
		if x == be {
			return true
		}
	}
	return false
}

func arithNames() string {
	var s []string
	for _, a := range Ariths() {
		s = append(s, a.String())
	}
	return strings.Join(s, ", ")
}

// Rebuild builds an op's kernel afresh, bypassing the cache (for tests of determinism).
func Rebuild(op *Op, a ir.Arith) (*ir.Kernel, error) {
	if op.ArithFree() {
		a = ir.Portable
	}
	return op.build(a)
}
