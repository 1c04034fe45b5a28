package main

// The chained schedule of ops B and D (ops/chain.go, issue #21 target 1):
// the chain gather (it plans the segments and copies the rows read across
// them), then the chained compute, beside what the glue dispatches today
// (gather + compute; the batched dispatch at its n_seqs).
//
//	-only chain       timing jobs: per op, shape, n_seqs and schedule, one
//	                  job that times every ids pattern in turn (a series)
//	-only chaincheck  check jobs (read back): the chained schedule at each
//	                  -chain-split against gather + compute on the same
//	                  ids, and a control that must differ (the chain
//	                  gather's copies lost, its plan kept); check.sh runs
//	                  them and `checkchain` compares their buffers
//
// The chained schedule's seg is ops.Target.ChainSeg's rule, ceil(n / split), for
// each split of -chain-split.

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/tools/spvbuild"
	"github.com/kernelgen/kernelgen/verify/vkrun"
	"github.com/kernelgen/kernelgen/verify/vulkan"
)

// The ids patterns: where sequence s reads its prior state from (as
// bench/cuda's chain mode). rotation: s reads s + 1's slot, one cycle of
// n; permutation: a random permutation of the window; shuffled: slots
// drawn from the whole pool; forks: groups of four read their first's slot
// (which reads its own); mixed (checks only): each sequence its own slot,
// a random window slot (forks, cycles, paths) or a random pool slot.
var chainPatterns = []string{"identity", "rotation", "permutation", "shuffled", "forks", "mixed"}

// timedPatterns are the patterns the timing jobs run, in order.
var timedPatterns = chainPatterns[:5]

func chainIDs(pattern string, n, rs, slots int, r *rand.Rand) []int32 {
	ids := make([]int32, n)
	var perm []int
	switch pattern {
	case "permutation":
		perm = r.Perm(n)
	case "shuffled":
		perm = r.Perm(slots)
	}
	for s := range ids {
		switch pattern {
		case "identity":
			ids[s] = int32(rs + s)
		case "rotation":
			ids[s] = int32(rs + (s+1)%n)
		case "permutation":
			ids[s] = int32(rs + perm[s])
		case "shuffled":
			ids[s] = int32(perm[s])
		case "forks":
			ids[s] = int32(rs + s/4*4)
		default:
			switch r.IntN(3) {
			case 0:
				ids[s] = int32(rs + s)
			case 1:
				ids[s] = int32(rs + r.IntN(n))
			default:
				ids[s] = int32(r.IntN(slots))
			}
		}
	}
	return ids
}

// chainSeg is ops.Target.ChainSeg's rule at a given split.
func chainSeg(n, split int) int { return max(1, (n+split-1)/split) }

func parseSplits(s string) ([]int, error) {
	var out []int
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' }) {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 {
			return nil, fmt.Errorf("-chain-split: %q is not a positive segment count", f)
		}
		out = append(out, k)
	}
	return out, nil
}

// chainOp is one op's buffers in a chain job, and how to dispatch each
// schedule on them.
type chainOp struct {
	b       *builder
	gdn     bool
	a       ir.Arith
	n       int
	row     int // elements per cache row
	cache   int
	dst     int
	scratch int
	plan    int
	rest    map[string]bind // the op's other inputs
	args    func(rs int) map[string]uint32
}

// newChainOp adds the inputs of op B (H heads, gdn) or op D (C channels)
// for n sequences; cache and dst are bound per dispatch.
func newChainOp(b *builder, gdn bool, a ir.Arith, hc, n int) *chainOp {
	o := &chainOp{b: b, gdn: gdn, a: a, n: n}
	if gdn {
		H := hc
		o.row = sv * sv * H
		tok := uint64(4 * sv * H * n)
		o.rest = map[string]bind{
			"q": whole(b.buffer(tok, b.f32s(4096, -1, 1))), "k": whole(b.buffer(tok, b.f32s(4096, -1, 1))),
			"v": whole(b.buffer(tok, b.f32s(4096, -0.3, 5))), "g": whole(b.buffer(uint64(4*H*n), b.f32s(1024, -20, -1e-4))),
			"beta": whole(b.buffer(uint64(4*H*n), b.f32s(1024, 0, 1))),
		}
		o.args = func(rs int) map[string]uint32 {
			h := uint32(H)
			return map[string]uint32{"H": h, "n_tokens": 1, "n_seqs": uint32(n), "neq1": h, "rq3": 1,
				"sq1": sv, "sq2": sv * h, "sq3": sv * h, "sv1": sv, "sv2": sv * h, "sv3": sv * h,
				"sg1": 1, "sg2": h, "sg3": h, "sb1": 1, "sb2": h, "sb3": h,
				"scale": math.Float32bits(float32(1 / math.Sqrt(sv))), "sd1": uint32(o.row), "rs_head": uint32(rs), "aliased_batched": 0}
		}
	} else {
		C := hc
		o.row = 3 * C
		o.rest = map[string]bind{
			"conv_kernel": whole(b.buffer(uint64(16*C), b.f32s(4*C, -1, 1))), "x_cur": whole(b.buffer(uint64(4*C*n), b.f32s(4096, -1, 1))),
		}
		o.args = func(rs int) map[string]uint32 {
			return map[string]uint32{"n_ch": uint32(C), "n_seqs": uint32(n), "cs1": 3, "cs2": uint32(o.row), "w1": 4,
				"x2": uint32(C), "sd1": uint32(o.row), "d2": uint32(C), "rs_head": uint32(rs)}
		}
	}
	o.scratch = b.buffer(uint64(4*o.row*n), nil)
	o.plan = b.buffer(uint64(4*n), nil)
	return o
}

func (o *chainOp) family() string {
	if o.gdn {
		return "gated_delta_net"
	}
	return "ssm_conv"
}

// binds are the compute kernel's bindings at destination slot rs.
func (o *chainOp) binds(ids bind, rs int) map[string]bind {
	rowBytes := uint64(4 * o.row)
	m := map[string]bind{"cache": whole(o.cache), "dst": whole(o.dst), "ids": ids, "scratch": whole(o.scratch), "plan": whole(o.plan)}
	window := bind{o.cache, uint64(rs) * rowBytes, uint64(o.n) * rowBytes}
	if o.gdn {
		m["state_dst"] = window
	} else {
		m["conv_state_dst"] = window
	}
	for k, v := range o.rest {
		m[k] = v
	}
	return m
}

// variant of the compute kernels at tiling (nw, cpw) (op B) .
func (o *chainOp) variant(nw, cpw int) map[string]int64 {
	if o.gdn {
		return map[string]int64{"S_v": sv, "KDA": 0, "NW": int64(nw), "CPW": int64(cpw)}
	}
	return map[string]int64{"d_conv": 4, "SILU": 1}
}

// twoPhase dispatches the gather and the compute kernel (op B at (nw, cpw)).
func (o *chainOp) twoPhase(ids bind, rs, nw, cpw int) error {
	err := o.b.dispatch(ops.GatherOp, ir.Portable, map[string]int64{},
		map[string]uint32{"row_len": uint32(o.row), "n_seqs": uint32(o.n), "rs_head": uint32(rs)},
		map[string]bind{"cache": whole(o.cache), "ids": ids, "scratch": whole(o.scratch)})
	if err != nil {
		return err
	}
	return o.compute(ids, rs, nw, cpw)
}

// compute dispatches the two-phase schedule's compute kernel alone.
func (o *chainOp) compute(ids bind, rs, nw, cpw int) error {
	compute := "gated_delta_net_inplace_ids"
	if !o.gdn {
		compute = "ssm_conv_update_inplace_ids"
	}
	return o.b.dispatch(compute, o.a, o.variant(nw, cpw), o.args(rs), o.binds(ids, rs))
}

// batched dispatches the one-dispatch schedule (the glue's for a few
// sequences).
func (o *chainOp) batched(ids bind, rs int) error {
	if o.gdn {
		bt, _ := ops.TargetOf("vulkan").GDNBatchAt(sv, o.n)
		return o.batchedAt(ids, rs, bt)
	}
	ns, _ := ops.TargetOf("vulkan").ConvBatch()
	v := o.variant(0, 0)
	v["NS"] = int64(ns)
	return o.b.dispatch("ssm_conv_update_inplace_ids_batched", o.a, v, o.args(rs), o.binds(ids, rs))
}

// batchedAt dispatches op B's one-dispatch schedule at shape bt (tuning
// runs: -batched with -only chain); an Aliased shape runs the split by
// aliasing: the batched dispatch where some source aliases, then the
// chained compute where none does (ops.Batch.Aliased).
func (o *chainOp) batchedAt(ids bind, rs int, bt ops.Batch) error {
	if !bt.Aliased {
		return o.b.dispatch("gated_delta_net_inplace_ids_batched", o.a, batchVariant(bt), o.args(rs), o.binds(ids, rs))
	}
	args := o.args(rs)
	args["aliased_batched"] = 1
	if err := o.b.dispatch("gated_delta_net_inplace_ids_batched", o.a, batchVariant(bt), args, o.binds(ids, rs)); err != nil {
		return err
	}
	nw, cpw := ops.TargetOf("vulkan").GDNTiling(sv)
	return o.b.dispatch("gated_delta_net_inplace_ids_chained", o.a, o.variant(nw, cpw), args, o.binds(ids, rs))
}

// today dispatches what the glue dispatches at n sequences: the batched
// dispatch where it takes n, else gather + compute (op B at the small-n
// tiling where it applies).
func (o *chainOp) today(ids bind, rs int) error {
	if o.todayBatched() {
		return o.batched(ids, rs)
	}
	nw, cpw := ops.TargetOf("vulkan").GDNTiling(sv)
	if snw, scpw, maxSeqs, ok := ops.TargetOf("vulkan").GDNSmallTiling(sv); ok && o.n <= maxSeqs {
		nw, cpw = snw, scpw
	}
	return o.twoPhase(ids, rs, nw, cpw)
}

func (o *chainOp) todayBatched() bool {
	if o.gdn {
		_, ok := ops.TargetOf("vulkan").GDNBatchAt(sv, o.n)
		return ok
	}
	ns, ok := ops.TargetOf("vulkan").ConvBatch()
	return ok && o.n >= 2 && o.n <= ns
}

// chainGather dispatches the chain gather: it writes the plan at seg and
// copies the rows the plan marks.
func (o *chainOp) chainGather(ids bind, rs, seg int) error {
	return o.b.dispatch(ops.ChainGatherOp, ir.Portable, map[string]int64{},
		map[string]uint32{"row_len": uint32(o.row), "n_seqs": uint32(o.n), "rs_head": uint32(rs), "seg": uint32(seg)},
		map[string]bind{"cache": whole(o.cache), "ids": ids, "plan": whole(o.plan), "scratch": whole(o.scratch)})
}

// chained dispatches the chained schedule: the chain gather, then the
// chained compute kernel at the backend's tiling.
func (o *chainOp) chained(ids bind, rs, seg int) error {
	if err := o.chainGather(ids, rs, seg); err != nil {
		return err
	}
	return o.chainedCompute(ids, rs)
}

// chainedCompute dispatches the chained compute kernel alone.
func (o *chainOp) chainedCompute(ids bind, rs int) error {
	compute := "gated_delta_net_inplace_ids_chained"
	if !o.gdn {
		compute = "ssm_conv_update_inplace_ids_chained"
	}
	nw, cpw := ops.TargetOf("vulkan").GDNTiling(sv)
	return o.b.dispatch(compute, o.a, o.variant(nw, cpw), o.args(rs), o.binds(ids, rs))
}

// blockGather dispatches op B's block gather: it lays the chains out in
// blocks of nw sequences and copies the rows read across blocks.
func (o *chainOp) blockGather(ids bind, rs, nw int) error {
	return o.b.dispatch("gated_delta_net_block_gather", ir.Portable, map[string]int64{},
		map[string]uint32{"row_len": uint32(o.row), "n_seqs": uint32(o.n), "rs_head": uint32(rs), "block_len": uint32(nw)},
		map[string]bind{"cache": whole(o.cache), "ids": ids, "plan": whole(o.plan), "scratch": whole(o.scratch)})
}

// blocks dispatches op B's block schedule (docs/ops.md#blocks) at tiling
// t: the block gather, then the blocks compute (parts: what runs).
func (o *chainOp) blocks(ids bind, rs int, t tiling, parts string) error {
	if parts != partsCompute {
		if err := o.blockGather(ids, rs, t.nw); err != nil || parts == partsGather {
			return err
		}
	}
	return o.b.dispatch("gated_delta_net_inplace_ids_blocks", o.a, o.variant(t.nw, t.cpw), o.args(rs), o.binds(ids, rs))
}

// blockName is a block tiling as -blocks spells it.
func blockName(t tiling) string { return fmt.Sprintf("%dx%d", t.nw, t.cpw) }

// The parts of a decomposition job (split 8): the chain gather alone
// (identity and rotated ids: the plan, and the plan with copies), the
// chained compute kernel alone (identity ids, the plan preset to
// identity's), today's compute kernel alone (identity ids, no gather).
const (
	partsAll          = ""
	partsGather       = "chain gather alone"
	partsCompute      = "chained compute alone"
	partsTodayCompute = "today compute alone"
)

// chainJob times one schedule ("today" or chained at split) of op B (gdn,
// H heads) or op D (C channels) at n sequences under every timed pattern
// in turn: the pool and window as gdnJob's and convJob's, the patterns a
// series of intervals in one job. parts other than partsAll time a part of
// the schedules (where its cost goes).
//
// A batch shape bt (NS > 0, op B, n <= its Seqs) times op B's one-dispatch
// schedule at that shape instead (split unused); a block tiling blk (nw >
// 0, op B) op B's block schedule (parts: partsAll or partsGather).
func chainJob(cfg config, comp *vulkan.Compiler, gdn bool, hc, n, split int, parts string, bt ops.Batch, blk tiling) (vkrun.Job, entry, error) {
	b := &builder{comp: comp, rng: rand.New(rand.NewPCG(uint64(hc), uint64(n))), offTable: bt.NS > 0 || blk.nw > 0}
	native := ir.Native("vulkan")
	o := newChainOp(b, gdn, native, hc, n)
	patterns := timedPatterns
	switch parts {
	case partsAll:
	case partsGather:
		patterns = timedPatterns[:2] // identity, rotation
	default:
		patterns = timedPatterns[:1]
	}
	if parts == partsCompute {
		b.job.Buffers[o.plan] = binary.LittleEndian.AppendUint32(nil, 2) // identity's plan, repeated
	}
	rowBytes := uint64(4 * o.row)
	minPool := cfg.convPool
	if gdn {
		minPool = cfg.gdnPool
	}
	slots, err := pool(n, cfg.runs(), rowBytes, minPool, cfg.poolCap)
	if err != nil {
		return b.job, entry{}, err
	}
	head := func(rep int) int { return rep * n % (slots - n) }
	o.cache = b.buffer(uint64(slots)*rowBytes, b.f32s(1<<14, -1, 1))
	if gdn {
		o.dst = b.buffer(uint64(4*sv*hc*n), nil)
	} else {
		o.dst = b.buffer(uint64(4*hc*n), nil)
	}
	runs := cfg.runs()
	idsBytes := make([]byte, uint64(len(patterns)*runs)*idsStride(n))
	for p, pat := range patterns {
		for rep := 0; rep < runs; rep++ {
			putIDs(idsBytes, p*runs+rep, chainIDs(pat, n, head(rep), slots, b.rng))
		}
	}
	idsBuf := b.buffer(0, idsBytes)
	nw, cpw := ops.TargetOf("vulkan").GDNTiling(sv)
	for p := range patterns {
		for rep := 0; rep < runs; rep++ {
			ids := bind{idsBuf, uint64(p*runs+rep) * idsStride(n), uint64(4 * n)}
			rs := head(rep)
			switch {
			case blk.nw > 0:
				err = o.blocks(ids, rs, blk, parts)
			case parts == partsGather:
				err = o.chainGather(ids, rs, chainSeg(n, split))
			case parts == partsCompute:
				err = o.chainedCompute(ids, rs)
			case parts == partsTodayCompute:
				err = o.compute(ids, rs, nw, cpw)
			case bt.NS > 0:
				err = o.batchedAt(ids, rs, bt)
			case split == 0:
				err = o.today(ids, rs)
			default:
				err = o.chained(ids, rs, chainSeg(n, split))
			}
			if err != nil {
				return b.job, entry{}, err
			}
		}
	}
	impl := "today"
	if o.todayBatched() && split == 0 {
		impl = "today (batched)"
		if bt, _ := ops.TargetOf("vulkan").GDNBatchAt(sv, n); gdn && bt.Aliased {
			impl = "today (split by aliasing)"
		}
	}
	if split > 0 {
		impl = fmt.Sprintf("chained %d", split)
	}
	if bt.NS > 0 {
		impl = "batched " + batchName(bt)
	}
	if parts != partsAll {
		impl = parts
	}
	if parts == partsGather {
		impl = fmt.Sprintf("%s %d", parts, split)
	}
	if blk.nw > 0 {
		impl = "blocks " + blockName(blk)
		if parts == partsGather {
			impl = "block gather alone " + blockName(blk)
		}
	}
	bench, shape := "chain_conv", fmt.Sprintf("C=%d", hc)
	if gdn {
		bench, shape = "chain_gdn", fmt.Sprintf("H=%d", hc)
	}
	e := entry{bench: bench, shape: shape, n: n, impl: impl, bytes: 2 * float64(rowBytes) * float64(n), series: patterns}
	if parts == partsGather {
		e.bytes = 0 // its copies are the schedule's, not the op's bytes
	}
	perRep := len(b.job.Dispatches) / (len(patterns) * runs)
	b.job.TimeEvery, e.perInterval = cfg.reps*perRep, cfg.reps
	return b.job, e, nil
}

// fillShader writes values in [-1, 1) hashed from the index and a seed:
// check pools on the device with no repeating rows, so a wrong row read
// shows (a pattern carried in the job would repeat).
const fillShader = `#version 450
layout(local_size_x = 256) in;
layout(binding = 0, std430) writeonly buffer B { float p[]; };
layout(push_constant) uniform P { uint n; uint seed; } pc;
void main() {
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += gl_NumWorkGroups.x * 256u) {
        uint h = i * 2654435761u ^ pc.seed * 3266489917u;
        h ^= h >> 15; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
        p[i] = float(h >> 8) * (2.0 / 16777216.0) - 1.0;
    }
}
`

// chainCheckJob runs op B (H heads) or op D (C channels) at n sequences
// on one pattern's ids under several schedules, each on its own pool and
// dst filled alike and scratch refilled with other values before each
// (no set reads rows an earlier one copied): set 0 gather + compute (op B
// at the backend's tiling), then the chained schedule at each split, and
// on rotated ids a control: the chain gather, scratch refilled (its copies
// lost, its plan kept), the chained compute, which must differ. Buffers
// 2i and 2i+1 are set i's pool and dst; the labels name the sets.
//
// Op B also runs its one-dispatch schedule at each shape of batches that
// takes n, one set each after the chained ones.
//
// And its block schedule at each tiling of blocks, one set each after
// those.
func chainCheckJob(comp *vulkan.Compiler, gdn bool, a ir.Arith, hc, n int, pattern string, splits []int, batches []ops.Batch, blocks []tiling) (vkrun.Job, entry, []string, error) {
	b := &builder{comp: comp, rng: rand.New(rand.NewPCG(uint64(hc)*7+uint64(n), uint64(len(pattern)))), offTable: len(batches) > 0 || len(blocks) > 0}
	spv, err := comp.Build(context.Background(), []spvbuild.Unit{{File: "bench/vulkan/fill.comp", Source: []byte(fillShader), Name: "bench fill"}})
	if err != nil {
		return b.job, entry{}, nil, err
	}
	labels := []string{"gather + compute"}
	for _, k := range splits {
		labels = append(labels, fmt.Sprintf("chained split %d (seg %d)", k, chainSeg(n, k)))
	}
	var takes []ops.Batch
	for _, bt := range batches {
		if gdn && n <= bt.Seqs() {
			takes = append(takes, bt)
			labels = append(labels, "batched "+batchName(bt))
		}
	}
	var blks []tiling
	if gdn {
		blks = blocks
		for _, t := range blks {
			labels = append(labels, "blocks "+blockName(t))
		}
	}
	control := pattern == "rotation" && n >= 3
	if control {
		labels = append(labels, "control: chained split 4, the chain gather's copies lost")
	}
	row := sv * sv * hc
	dstLen := sv * hc * n
	if !gdn {
		row, dstLen = 3*hc, hc*n
	}
	slots, rs := 2*n+9, n/2+4
	poolWords := uint64(row * slots)
	sets := make([][2]int, len(labels))
	for i := range sets {
		sets[i] = [2]int{b.buffer(4*poolWords, nil), b.buffer(uint64(4*dstLen), nil)}
	}
	o := newChainOp(b, gdn, a, hc, n)
	idsBytes := make([]byte, 4*n)
	for s, id := range chainIDs(pattern, n, rs, slots, b.rng) {
		binary.LittleEndian.PutUint32(idsBytes[4*s:], uint32(id))
	}
	ids := b.buffer(0, idsBytes)
	fill := func(buf int, words uint64, seed uint32) {
		b.raw(spv[0], []uint32{uint32(words), seed}, [3]uint32{groups1D(words), 1, 1}, whole(buf))
	}
	nw, cpw := ops.TargetOf("vulkan").GDNTiling(sv)
	for i, set := range sets {
		fill(set[0], poolWords, 1)
		// scratch refilled: no set reads rows an earlier set copied
		fill(o.scratch, uint64(row*n), uint32(2+i))
		o.cache, o.dst = set[0], set[1]
		switch {
		case i == 0:
			err = o.twoPhase(whole(ids), rs, nw, cpw)
		case i <= len(splits):
			err = o.chained(whole(ids), rs, chainSeg(n, splits[i-1]))
		case i <= len(splits)+len(takes):
			err = o.batchedAt(whole(ids), rs, takes[i-1-len(splits)])
		case i <= len(splits)+len(takes)+len(blks):
			err = o.blocks(whole(ids), rs, blks[i-1-len(splits)-len(takes)], partsAll)
		default:
			if err = o.chainGather(whole(ids), rs, chainSeg(n, 4)); err == nil {
				fill(o.scratch, uint64(row*n), uint32(2+i+len(sets)))
				err = o.chainedCompute(whole(ids), rs)
			}
		}
		if err != nil {
			return b.job, entry{}, nil, err
		}
	}
	bench, shape := "chaincheck_conv", fmt.Sprintf("C=%d", hc)
	if gdn {
		bench, shape = "chaincheck_gdn", fmt.Sprintf("H=%d", hc)
	}
	return b.job, entry{bench: bench, shape: shape, n: n, impl: a.String() + " " + pattern, readback: true}, labels, nil
}

// chainCheckJobs adds every check job: op B at H cfg.chainCheckH, op D at
// C cfg.chainCheckC, each n of cfg.chainCheckSeqs, both contracts, every
// pattern.
func chainCheckJobs(cfg config, comp *vulkan.Compiler, add func(vkrun.Job, entry, error) error) error {
	for _, gdn := range []bool{true, false} {
		hc := cfg.chainCheckH
		if !gdn {
			hc = cfg.chainCheckC
		}
		for _, n := range cfg.chainCheckSeqs {
			for _, a := range []ir.Arith{ir.Native("vulkan"), ir.Portable} {
				for _, pat := range chainPatterns {
					j, e, l, err := chainCheckJob(comp, gdn, a, hc, n, pat, cfg.chainSplits, cfg.batches, cfg.blockTilings)
					e.labels = l
					if err := add(j, e, err); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// chainCheckFile lists each check job's sets: name, then the labels
// separated by |.
const chainCheckFile = "chaincheck.tsv"

// checkChain (`checkchain TSV OUT...`) compares each check job's sets
// with its first, bit for bit, pool and dst; a control must differ. It
// fails when any set differs that should not, or a control does not.
func checkChain(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("checkchain", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 2 {
		return errors.New("usage: go run ./bench/vulkan checkchain chaincheck.tsv JOB.out...")
	}
	tsv, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	labels := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(tsv)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 2 {
			return fmt.Errorf("%s: malformed line %q", fs.Arg(0), line)
		}
		labels[f[0]] = strings.Split(f[1], "|")
	}
	bad := 0
	for _, path := range fs.Args()[1:] {
		name := strings.TrimSuffix(filepath.Base(path), ".out")
		l, ok := labels[name]
		if !ok {
			return fmt.Errorf("%s: no job %s in %s", path, name, fs.Arg(0))
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		res, err := vkrun.DecodeOutput(data)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if len(res.Buffers) < 2*len(l) {
			return fmt.Errorf("%s: %d buffers read back, want at least %d", path, len(res.Buffers), 2*len(l))
		}
		for i := 1; i < len(l); i++ {
			dp := wordsDiffer(res.Buffers[0], res.Buffers[2*i])
			dd := wordsDiffer(res.Buffers[1], res.Buffers[2*i+1])
			control := strings.HasPrefix(l[i], "control")
			verdict := "same"
			switch {
			case control && dp+dd > 0:
				verdict = "differs, as it must"
			case control:
				verdict, bad = "NOT CAUGHT", bad+1
			case dp+dd > 0:
				verdict, bad = "DIFFERENT", bad+1
			}
			fmt.Fprintf(w, "%s: %s against %s: %s (%d pool words, %d dst words differ)\n", name, l[i], l[0], verdict, dp, dd)
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d check sets failed", bad)
	}
	return nil
}

// wordsDiffer counts the 32-bit words in which a and b differ (every word
// past the shorter one's end counts).
func wordsDiffer(a, b []byte) int {
	n := 0
	if len(a) != len(b) {
		n = (max(len(a), len(b)) - min(len(a), len(b))) / 4
	}
	for i := 0; i+4 <= min(len(a), len(b)); i += 4 {
		if binary.LittleEndian.Uint32(a[i:]) != binary.LittleEndian.Uint32(b[i:]) {
			n++
		}
	}
	return n
}

// checkScript runs the check jobs one at a time, compares each job's
// sets with the bench binary ($VKBENCH, else `go run ./bench/vulkan` from
// the repository) and removes its read-back (pools of up to 290 MB).
const checkScript = `#!/usr/bin/env bash
# Generated by go run ./bench/vulkan -only chaincheck: runs every check job
# and compares its schedules bit for bit.
set -uo pipefail
cd "$(dirname "$0")"
res=$(mktemp -d)
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$res}
vkbench=${VKBENCH:-go run ./bench/vulkan}
failed=0
for j in jobs/*.job; do
  b=$(basename "$j" .job)
  if ./vkrun "$j" "$res/$b.out" 2> "$res/$b.log"; then
    $vkbench checkchain chaincheck.tsv "$res/$b.out" || failed=$((failed + 1))
  else
    echo "$b: vkrun failed: $(head -c 300 "$res/$b.log")"
    failed=$((failed + 1))
  fi
  rm -f "$res/$b.out"
done
echo "chain check: $failed jobs failed"
[ "$failed" = 0 ]
`
