package ops

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
)

// Variant is one compiled instance of an op: a value for every
// non-derived param. Its position is the table line that declared it.
type Variant struct {
	Op     string
	Values map[string]int64
	At     ir.Pos
	// On lists the only backends that build the variant (nil: all but
	// NotOn). Tuning can differ per backend (GDNTiling); the Go reference,
	// the cases and the emulators take every variant.
	On, NotOn []string
}

// OnlyOn restricts v to the given backends.
func (v Variant) OnlyOn(backends ...string) Variant { v.On = backends; return v }

// NotOnBackends excludes the given backends.
func (v Variant) NotOnBackends(backends ...string) Variant { v.NotOn = backends; return v }

// BuiltOn reports whether target t builds v.
func (v Variant) BuiltOn(t Target) bool {
	if v.On != nil && !slices.Contains(v.On, t.Name) {
		return false
	}
	return !slices.Contains(v.NotOn, t.Name)
}

// Of is the variant as an instance of kernel k (one of its op's kernels).
func (v Variant) Of(k *ir.Kernel) ir.Instance { return ir.Instance{Kernel: k, Values: v.Values} }

// String renders the values in the kernel's param order, e.g. "S_v=128,KDA=0".
func (v Variant) String() string {
	keys := make([]string, 0, len(v.Values))
	for k := range v.Values {
		keys = append(keys, k)
	}
	op, err := Lookup(v.Op)
	if err == nil {
		if k, err := op.Kernel(ir.Portable); err == nil {
			keys = keys[:0]
			for _, p := range k.Params {
				if _, ok := v.Values[p.Name]; ok {
					keys = append(keys, p.Name)
				}
			}
		}
	} else {
		sort.Strings(keys)
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.FormatInt(v.Values[k], 10)
	}
	return strings.Join(parts, ",")
}

// V declares a variant: alternating param names and values. Use it in tables;
// errors point at the line that called it.
func V(op string, kv ...any) Variant {
	v := Variant{Op: op, Values: map[string]int64{}, At: dsl.Caller()}
	for i := 0; i+1 < len(kv); i += 2 {
		name, _ := kv[i].(string)
		switch x := kv[i+1].(type) {
		case int:
			v.Values[name] = int64(x)
		case bool:
			v.Values[name] = b2i(x)
		}
	}
	if len(kv)%2 != 0 {
		v.Values["<odd argument list>"] = 0
	}
	return v
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Tuning is what a backend tunes of the variant table, declared in its
// ops/backend_<name>.go. Column folding never changes a column's arithmetic
// (docs/ops.md#tiling), so backends may differ; each choice's measurements
// are beside it there. A zero field: the backend takes the shared choice.
type Tuning struct {
	// GDN is the backend's own workgroup shape (NW column groups of CPW
	// columns) for S_v; ok false: the shared one (sharedGDNTiling).
	GDN func(sv int) (nw, cpw int, ok bool)
	// GDNSmall is a tiling of the in-place ops (A and B) for n_seqs <=
	// maxSeqs, chosen by the glue at dispatch time; ok false: none at sv.
	GDNSmall func(sv int) (nw, cpw, maxSeqs int, ok bool)
	// GDNBatch is op B's one-dispatch schedule
	// (gated_delta_net_inplace_ids_batched) at S_v: its tiers by ascending
	// NS, each taking the sequences past the one before it, up to its NS.
	GDNBatch func(sv int) []Batch
	// GDNBatchFrom is the fewest sequences the one-dispatch schedule of op
	// B takes (0: one past the small-n tiling's, else 2).
	GDNBatchFrom int
	// ConvBatch is op D's NS for its one-dispatch schedule
	// (ssm_conv_update_inplace_ids_batched, 32 channels x NS sequences
	// per workgroup).
	ConvBatch int
	// ChainFrom is the fewest sequences from which the glue runs ops B
	// and D in the chained schedule (ops/chain.go: plan, chain gather,
	// chained compute); 0: never.
	ChainFrom int
	// ConvChainFrom is ChainFrom for op D (0: never; its chained kernels
	// are still generated where ChainFrom is set, for the bench).
	ConvChainFrom int
	// ChainSplit is how many segments a chain of n_seqs is cut into at
	// most: the plan's seg is ceil(n_seqs / ChainSplit) (ChainSeg). More
	// segments run in parallel; each costs one copied row. From
	// ChainWideFrom sequences (0: never) the split is ChainWideSplit:
	// with many sequences the chains' own parallelism fills the device,
	// and shorter segments only add copies.
	ChainSplit, ChainWideFrom, ChainWideSplit int
	// GDNBlocks: op B's chained schedule runs the block schedule's kernels
	// (docs/ops.md#blocks) at the op's tiling (GDNTiling: blocks of NW
	// sequences), the block gather and the blocks compute, and so does the
	// split by aliasing after its batched dispatch.
	GDNBlocks bool
	// RowGather: the ids ops' gathers copy rows as a CPU thread does
	// (buildGatherRows, the "_rows" ops) instead of the lane-parallel
	// chunked gather (Gather).
	RowGather bool
}

// sharedGDNTiling is the GDN workgroup shape of every backend without one
// of its own. S_v 128 uses (16, 4): on the H100 it moved 90-98% of the
// copy rate at n_seqs >= 32 where ggml-cuda's default (16, 8) moved
// 82-87%, and (8, 4) ran 4% slower there at n_seqs >= 128 (bench/cuda).
func sharedGDNTiling(sv int) (nw, cpw int) {
	if sv == 128 {
		return 16, 4
	}
	return 4, 1
}

// GDNTiling is the target's workgroup shape per S_v: NW column groups of
// CPW columns each, its own (Tuning.GDN) or the shared one.
func (t Target) GDNTiling(sv int) (nw, cpw int) {
	if t.tuning.GDN != nil {
		if nw, cpw, ok := t.tuning.GDN(sv); ok {
			return nw, cpw
		}
	}
	return sharedGDNTiling(sv)
}

// GDNSmallTiling is the target's tiling of the in-place ops (A and B) for
// n_seqs <= maxSeqs, chosen by the glue at dispatch time; ok false: the
// target has none and always runs GDNTiling's. With few sequences a
// tiling of fewer columns per workgroup spreads a head's state over more
// workgroups.
func (t Target) GDNSmallTiling(sv int) (nw, cpw, maxSeqs int, ok bool) {
	if t.tuning.GDNSmall != nil {
		return t.tuning.GDNSmall(sv)
	}
	return 0, 0, 0, false
}

// Batch is one tier of op B's one-dispatch schedule: workgroups of NW
// column groups of CPW columns and NS rows of threads, SPT sequences a row.
// From is the fewest sequences the tier takes where that is not one past
// the tier before it (0): the sequences between run the other schedules.
// Aliased: the tier runs a step only where some source is another
// sequence's destination, and the chained compute runs the steps where
// none is (aliasedBatchedArg): for the n_seqs where one dispatch bounds
// every ids pattern but costs identity ids more than the chained schedule.
type Batch struct {
	NW, CPW, NS, SPT, From int
	Aliased                bool
}

// Seqs is the most sequences the tier takes.
func (b Batch) Seqs() int { return b.NS * b.SPT }

// Shape is the tier's kernel variant (Aliased is its SPLIT), without From.
func (b Batch) Shape() Batch { b.From = 0; return b }

// Span is a range of n_seqs, From..To; Aliased as its tiers'.
type Span struct {
	From, To int
	Aliased  bool
}

// GDNBatchSpans are the n_seqs op B's one-dispatch schedule takes at S_v,
// as ascending disjoint spans (tiers that follow each other merged where
// both are Aliased or neither is).
func (t Target) GDNBatchSpans(sv int) []Span {
	var out []Span
	tiers := t.GDNBatch(sv)
	for i, bt := range tiers {
		lo := t.tierFrom(sv, tiers, i)
		if n := len(out); n > 0 && out[n-1].To+1 == lo && out[n-1].Aliased == bt.Aliased {
			out[n-1].To = bt.Seqs()
		} else {
			out = append(out, Span{lo, bt.Seqs(), bt.Aliased})
		}
	}
	return out
}

// tierFrom is the fewest sequences tier i of tiers takes at S_v: the
// schedule's first (GDNBatchFrom) for the first tier, else one past the
// tier before, or its From where that is later.
func (t Target) tierFrom(sv int, tiers []Batch, i int) int {
	if i == 0 {
		return max(t.GDNBatchFrom(sv), tiers[0].From)
	}
	return max(tiers[i-1].Seqs()+1, tiers[i].From)
}

// GDNBatch is the target's one-dispatch schedule of op B at S_v: its tiers
// by ascending Seqs, each taking the sequences past the tier before, up to
// its own. None: the target always runs the gather and the compute
// dispatch.
func (t Target) GDNBatch(sv int) []Batch {
	if t.tuning.GDNBatch != nil {
		return t.tuning.GDNBatch(sv)
	}
	return nil
}

// GDNBlocks reports whether op B's chained schedule runs the block
// schedule's kernels on the target (Tuning.GDNBlocks).
func (t Target) GDNBlocks() bool { return t.tuning.GDNBlocks }

// GDNBatchMax is the most sequences op B's one-dispatch schedule takes at
// S_v (its last tier's); 0: the target has none.
func (t Target) GDNBatchMax(sv int) int {
	if tiers := t.GDNBatch(sv); len(tiers) > 0 {
		return tiers[len(tiers)-1].Seqs()
	}
	return 0
}

// GDNBatchAt is the tier of op B's one-dispatch schedule that takes n_seqs
// at S_v; ok false: the schedule does not take n_seqs (none, too few or
// too many sequences).
func (t Target) GDNBatchAt(sv, nSeqs int) (Batch, bool) {
	tiers := t.GDNBatch(sv)
	for i, bt := range tiers {
		if nSeqs <= bt.Seqs() {
			return bt, nSeqs >= t.tierFrom(sv, tiers, i)
		}
	}
	return Batch{}, false
}

// GDNBatchFrom is the fewest sequences op B's one-dispatch schedule takes
// at S_v: the target's Tuning.GDNBatchFrom, and at least one past the
// small-n tiling's maxSeqs, whose sequences run the gather and the compute
// dispatch at that tiling; else 2.
func (t Target) GDNBatchFrom(sv int) int {
	from := max(2, t.tuning.GDNBatchFrom)
	if _, _, maxSeqs, ok := t.GDNSmallTiling(sv); ok {
		from = max(from, maxSeqs+1)
	}
	return from
}

// ConvBatch is the target's NS for op D's one-dispatch schedule; ok false:
// none, the gather and the compute dispatch always.
func (t Target) ConvBatch() (ns int, ok bool) {
	ns = t.tuning.ConvBatch
	return ns, ns > 0
}

// ChainFrom is the fewest sequences from which the target runs ops B and D
// in the chained schedule (ops/chain.go); ok false: it never does.
func (t Target) ChainFrom() (n int, ok bool) {
	n = t.tuning.ChainFrom
	return n, n > 0
}

// ConvChainFrom is ChainFrom for op D; ok false: the glue never runs op D
// chained on the target.
func (t Target) ConvChainFrom() (n int, ok bool) {
	n = t.tuning.ConvChainFrom
	return n, n > 0
}

// ChainSeg is the plan's seg (the most sequences a segment runs) at
// n_seqs on the target: ceil(n_seqs / split), split ChainSplits' at n_seqs.
func (t Target) ChainSeg(nSeqs int) int {
	split := 0
	for _, sf := range t.ChainSplits() {
		if nSeqs >= sf.From {
			split = sf.Split
		}
	}
	return max(1, (nSeqs+split-1)/split)
}

// SplitFrom is a chain split and the fewest sequences it applies from.
type SplitFrom struct{ From, Split int }

// ChainSplits are the splits the plan cuts chains by on the target, by
// ascending From, the first from one sequence (Tuning.ChainSplit, 4 where
// it sets none; Tuning.ChainWideSplit from ChainWideFrom).
func (t Target) ChainSplits() []SplitFrom {
	tu := t.tuning
	splits := []SplitFrom{{From: 1, Split: 4}}
	if tu.ChainSplit > 0 {
		splits[0].Split = tu.ChainSplit
	}
	if tu.ChainWideFrom > 1 && tu.ChainWideSplit > 0 {
		splits = append(splits, SplitFrom{From: tu.ChainWideFrom, Split: tu.ChainWideSplit})
	}
	return splits
}

// table is the one list of supported variants: S_v in {16, 32, 64, 128},
// KDA on/off, snapshots on/off for the base op, d_conv 2..8, SiLU on/off;
// state f32. Gathers have no params.
func table() []Variant {
	var out []Variant
	for _, sv := range []int{16, 32, 64, 128} {
		// The shared tiling, on every backend without one of its own; then
		// each backend whose tiling differs gets its own variants.
		nw, cpw := sharedGDNTiling(sv)
		gdn := func(nw, cpw int, on func(Variant) Variant) {
			for _, kda := range []bool{false, true} {
				for _, keep := range []bool{false, true} {
					out = append(out, on(V("gated_delta_net", "S_v", sv, "KDA", kda, "KEEP_RS", keep, "NW", nw, "CPW", cpw)))
				}
				out = append(out, on(V("gated_delta_net_inplace", "S_v", sv, "KDA", kda, "NW", nw, "CPW", cpw)))
				out = append(out, on(V("gated_delta_net_inplace_ids", "S_v", sv, "KDA", kda, "NW", nw, "CPW", cpw)))
				out = append(out, on(V(SlotsOp, "S_v", sv, "KDA", kda, "NW", nw, "CPW", cpw)))
			}
		}
		var own []string
		for _, t := range tuned(func(t Tuning) bool { return t.GDN != nil }) {
			if bnw, bcpw := t.GDNTiling(sv); bnw != nw || bcpw != cpw {
				own = append(own, t.Name)
				gdn(bnw, bcpw, func(v Variant) Variant { return v.OnlyOn(t.Name) })
			}
		}
		gdn(nw, cpw, func(v Variant) Variant { return v.NotOnBackends(own...) })
		for _, t := range tuned(func(t Tuning) bool { return t.GDNSmall != nil }) {
			if snw, scpw, _, ok := t.GDNSmallTiling(sv); ok {
				for _, kda := range []bool{false, true} {
					out = append(out, V("gated_delta_net_inplace", "S_v", sv, "KDA", kda, "NW", snw, "CPW", scpw).OnlyOn(t.Name))
					out = append(out, V("gated_delta_net_inplace_ids", "S_v", sv, "KDA", kda, "NW", snw, "CPW", scpw).OnlyOn(t.Name))
				}
			}
		}
		// the chained compute kernel at each chain backend's tiling, one
		// variant per tiling
		chainAt := map[[2]int][]string{}
		var tilings [][2]int
		for _, t := range tuned(func(t Tuning) bool { return t.ChainFrom > 0 }) {
			nw, cpw := t.GDNTiling(sv)
			if chainAt[[2]int{nw, cpw}] == nil {
				tilings = append(tilings, [2]int{nw, cpw})
			}
			chainAt[[2]int{nw, cpw}] = append(chainAt[[2]int{nw, cpw}], t.Name)
		}
		for _, t := range tilings {
			for _, kda := range []bool{false, true} {
				out = append(out, V("gated_delta_net_inplace_ids_chained", "S_v", sv, "KDA", kda, "NW", t[0], "CPW", t[1]).OnlyOn(chainAt[t]...))
			}
		}
		// the block schedule's compute kernel at each blocks backend's
		// tiling
		blocksAt := map[[2]int][]string{}
		var blockTilings [][2]int
		for _, t := range tuned(func(t Tuning) bool { return t.GDNBlocks }) {
			nw, cpw := t.GDNTiling(sv)
			if blocksAt[[2]int{nw, cpw}] == nil {
				blockTilings = append(blockTilings, [2]int{nw, cpw})
			}
			blocksAt[[2]int{nw, cpw}] = append(blocksAt[[2]int{nw, cpw}], t.Name)
		}
		for _, t := range blockTilings {
			for _, kda := range []bool{false, true} {
				out = append(out, V("gated_delta_net_inplace_ids_blocks", "S_v", sv, "KDA", kda, "NW", t[0], "CPW", t[1]).OnlyOn(blocksAt[t]...))
			}
		}
		// the batched kernel at each tier of each backend, one variant per
		// shape
		batchAt := map[Batch][]string{}
		var batches []Batch
		for _, t := range tuned(func(t Tuning) bool { return t.GDNBatch != nil }) {
			for _, bt := range t.GDNBatch(sv) {
				bt = bt.Shape()
				if batchAt[bt] == nil {
					batches = append(batches, bt)
				}
				batchAt[bt] = append(batchAt[bt], t.Name)
			}
		}
		for _, bt := range batches {
			for _, kda := range []bool{false, true} {
				out = append(out, V("gated_delta_net_inplace_ids_batched", "S_v", sv, "KDA", kda, "NW", bt.NW, "CPW", bt.CPW, "NS", bt.NS, "SPT", bt.SPT, splitParam, bt.Aliased).OnlyOn(batchAt[bt]...))
			}
		}
	}
	rowGathers := names(tuned(func(t Tuning) bool { return t.RowGather }))
	out = append(out, V(GatherOp).NotOnBackends(rowGathers...),
		V(RowGatherOp).OnlyOn(rowGathers...))
	if chain := tunedNames(func(t Tuning) bool { return t.ChainFrom > 0 }); len(chain) > 0 {
		out = append(out, V(ChainGatherOp).OnlyOn(chain...))
	}
	if blocks := tunedNames(func(t Tuning) bool { return t.GDNBlocks }); len(blocks) > 0 {
		out = append(out, V("gated_delta_net_block_gather").OnlyOn(blocks...))
	}
	for dconv := 2; dconv <= 8; dconv++ {
		out = append(out, V("ssm_conv", "d_conv", dconv))
		for _, silu := range []bool{false, true} {
			out = append(out, V("ssm_conv_update_inplace", "d_conv", dconv, "SILU", silu))
			out = append(out, V("ssm_conv_update_inplace_ids", "d_conv", dconv, "SILU", silu))
			out = append(out, V(ConvSlotsOp, "d_conv", dconv, "SILU", silu))
			if chain := tunedNames(func(t Tuning) bool { return t.ChainFrom > 0 }); len(chain) > 0 {
				out = append(out, V("ssm_conv_update_inplace_ids_chained", "d_conv", dconv, "SILU", silu).OnlyOn(chain...))
			}
			for _, t := range tuned(func(t Tuning) bool { return t.ConvBatch > 0 }) {
				if ns, ok := t.ConvBatch(); ok {
					out = append(out, V("ssm_conv_update_inplace_ids_batched", "d_conv", dconv, "SILU", silu, "NS", ns).OnlyOn(t.Name))
				}
			}
		}
	}
	return out
}

var (
	variantsOnce  sync.Once
	variantsBuilt atomic.Bool // ListIn comes too late once it is set
	variants      []Variant
	variantsErr   error
)

// Variants returns the checked variant table.
func Variants() ([]Variant, error) {
	variantsOnce.Do(func() {
		variantsBuilt.Store(true)
		variants = table()
		variantsErr = CheckVariants(variants)
	})
	return variants, variantsErr
}

// Variants returns the variants of one op that the target builds.
func (t Target) Variants(op string) []Variant {
	var out []Variant
	for _, v := range VariantsOf(op) {
		if v.BuiltOn(t) {
			out = append(out, v)
		}
	}
	return out
}

// VariantsOf returns the variants of one op, on every backend.
func VariantsOf(op string) []Variant {
	all, _ := Variants()
	var out []Variant
	for _, v := range all {
		if v.Op == op {
			out = append(out, v)
		}
	}
	return out
}

// CheckVariants checks every variant against its op's kernel: each param set
// exactly once, values in their domains, requirements met.
func CheckVariants(vs []Variant) error {
	var errs ir.ErrorList
	add := func(v Variant, format string, args ...any) {
		errs = append(errs, &ir.Error{Pos: v.At, Msg: v.Op + ": " + fmt.Sprintf(format, args...)})
	}
	seen := map[string]ir.Pos{}
	for _, v := range vs {
		op, err := Lookup(v.Op)
		if err != nil {
			add(v, "%v", err)
			continue
		}
		k, err := op.Kernel(ir.Portable)
		if err != nil {
			add(v, "kernel does not build: %v", err)
			continue
		}
		for name := range v.Values {
			p := k.Param(name)
			if p == nil || p.Derived != nil {
				add(v, "%s is not a param of this op; its params are %s", name, paramNames(k))
			}
		}
		ok := true
		for _, p := range k.Params {
			if p.Derived != nil {
				continue
			}
			val, set := v.Values[p.Name]
			switch {
			case !set:
				add(v, "%s is not set; every variant sets %s", p.Name, paramNames(k))
				ok = false
			case p.Type == ir.Bool && val != 0 && val != 1:
				add(v, "%s is a bool; use true or false", p.Name)
				ok = false
			case p.Domain != nil && !inDomain(val, p.Domain):
				add(v, "%s %d is not supported; valid values are %s", p.Name, val, domainString(p.Domain))
				ok = false
			}
		}
		if !ok {
			continue
		}
		for _, r := range k.Requires {
			if c, known := ir.EvalInt(r.Cond, v.Values); !known || c == 0 {
				add(v, "%s (%s)", r.Msg, v)
			}
		}
		key := v.Op + " " + v.String()
		if prev, dup := seen[key]; dup {
			add(v, "duplicate of the variant at %s", prev)
		}
		seen[key] = v.At
	}
	return errs.Err()
}

func inDomain(x int64, dom []int64) bool {
	for _, d := range dom {
		if d == x {
			return true
		}
	}
	return false
}

func domainString(dom []int64) string {
	s := make([]string, len(dom))
	for i, d := range dom {
		s[i] = strconv.FormatInt(d, 10)
	}
	return "{" + strings.Join(s, ", ") + "}"
}

func paramNames(k *ir.Kernel) string {
	var s []string
	for _, p := range k.Params {
		if p.Derived == nil {
			s = append(s, p.Name)
		}
	}
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}
