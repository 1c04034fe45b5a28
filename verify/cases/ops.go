package cases

import (
	"fmt"
	"math"
	"slices"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

func (b *builder) gdn(op string) error {
	r, v := b.r, b.vals
	sv := int(v["S_v"])
	kda := v["KDA"] == 1
	H := 1 + r.IntN(b.sz.MaxHeads)
	hk := 1
	if H%2 == 0 && r.IntN(2) == 0 {
		hk = H / 2
	} else {
		hk = H
	}
	T := 1 + r.IntN(b.sz.MaxTokens)
	n := 1 + r.IntN(b.sz.MaxSeqs)
	if op == chainedOp || op == blocksOp {
		n = 1 + r.IntN(2*b.sz.MaxSeqs+2) // chains long enough to cut into segments or blocks
	}
	if op == batchedOp {
		n = 1 + r.IntN(min(int(v["NS"]*v["SPT"]), b.sz.MaxSeqs+1)) // a workgroup takes NS*SPT
		if r.IntN(8) == 0 {
			T = 0 // it reads its prior state in the first token: none here
		}
	}
	nq := n
	if n%2 == 0 && r.IntN(2) == 0 {
		nq = n / 2
	}
	gd := 1
	if kda {
		gd = sv
	}
	sq1, sv1 := sv, sv
	sq2, sq3 := hk*sq1, T*hk*sq1
	sv2, sv3 := H*sv1, T*H*sv1
	sg1, sg2, sg3 := gd, H*gd, T*H*gd
	sb1, sb2, sb3 := 1, H, T*H
	b.f32("q", nq*sq3, -1, 1, true)
	b.f32("k", nq*sq3, -1, 1, true)
	b.f32("v", n*sv3, -0.3, 5, true)
	b.f32("g", n*sg3, -20, -1e-4, false)
	b.f32("beta", n*sb3, 0, 1, false)
	D := sv * sv * H
	attn := sv * H * T * n
	K := 1
	if v["KEEP_RS"] == 1 {
		K = 1 + r.IntN(3)
	}
	args := map[string]int64{
		"H": int64(H), "n_tokens": int64(T), "n_seqs": int64(n), "neq1": int64(hk), "rq3": int64(n / nq),
		"sq1": int64(sq1), "sq2": int64(sq2), "sq3": int64(sq3), "sv1": int64(sv1), "sv2": int64(sv2), "sv3": int64(sv3),
		"sg1": int64(sg1), "sg2": int64(sg2), "sg3": int64(sg3), "sb1": int64(sb1), "sb2": int64(sb2), "sb3": int64(sb3),
		"scale": f32arg(float32(1 / math.Sqrt(float64(sv)))),
	}
	switch op {
	case "gated_delta_net":
		b.f32("state", n*D, -1, 1, true)
		b.untouched("dst", attn+K*D*n)
		args["K"], args["s_off"] = int64(K), int64(attn)
		return b.launch(op, args, nil)
	case "gated_delta_net_inplace":
		b.f32("state", n*D, -1, 1, true)
		b.untouched("dst", attn+D*n)
		b.f32("state_dst", (n+1)*D, -1, 1, false)
		args["sd1"] = int64(D)
		return b.launch(op, args, nil)
	}
	slots := n + r.IntN(3)
	rsHead := r.IntN(slots - n + 1)
	cache := b.f32("cache", slots*D, -1, 1, true)
	snaps := 1
	if op == ops.SlotsOp {
		// the graph fusion's snapshot slots (ops/fusion): slot i i*n*D
		// further in state_dst, past the rows ids name
		snaps = 1 + r.IntN(3)
	}
	stateDst := b.f32("state_dst", snaps*n*D, -1, 1, true)
	if op == chainedOp || op == blocksOp {
		// state_dst is the cache's window, as the glue binds it: the
		// chained and block kernels read sources inside the window
		// through it.
		b.chainIds("ids", n, slots, rsHead)
		copy(stateDst.F32, cache.F32[rsHead*D:(rsHead+n)*D])
	} else if op == batchedOp && b.sz.WindowIds && r.IntN(2) == 0 {
		// Half the batched cases take the chained schedule's ids: whole
		// cycles and paths through the window, read across rows and slots.
		b.chainIds("ids", n, slots, rsHead)
	} else {
		b.ids("ids", n, slots, rsHead)
	}
	args["sd1"], args["rs_head"] = int64(D), int64(rsHead)
	args["K"], args["ss"] = int64(snaps), int64(n*D)
	args["aliased_batched"] = 0
	if op == batchedOp {
		// The batched kernel takes state_dst to be the cache's window
		// (glue.stateDstIsWindow); a case cannot alias two buffers, so
		// state_dst starts as a copy of the window's rows.
		copy(stateDst.F32, cache.F32[rsHead*D:(rsHead+n)*D])
		b.untouched("dst", attn+D*n)
		if b.vals["SPLIT"] == 0 {
			return b.launch(op, args, nil)
		}
		// A variant split by aliasing (ops.Batch.Aliased): the batched
		// dispatch, then the chained compute. The plan left from an
		// earlier step has every sequence run as a segment of one, so a
		// chained compute that ran where the batched dispatch did would
		// recompute the aliasing sequences from rows already written.
		chained, ok := splitVariant(b.c.Variant, b.c.Arith)
		if !ok {
			return fmt.Errorf("%s: no chained compute variant at S_v %d, KDA %d is built where it is", b.c.Variant, b.vals["S_v"], b.vals["KDA"])
		}
		args["aliased_batched"] = 1
		b.untouched("scratch", n*D)
		for i := range b.plan(n).I32 {
			b.c.Buffer("plan").I32[i] = 1 << 16
		}
		if err := b.launch(op, args, nil); err != nil {
			return err
		}
		batched := b.vals
		defer func() { b.vals = batched }()
		b.vals = chained.Values
		return b.launch(chainedOp, args, nil)
	}
	if op == chainedOp {
		b.untouched("scratch", n*D)
		b.untouched("dst", attn+D*n)
		args["seg"] = int64(1 + r.IntN(3))
		return b.chain("gated_delta_net", D, n, rsHead, args)
	}
	if op == blocksOp {
		b.untouched("scratch", n*D)
		b.untouched("dst", attn+D*n)
		b.plan(n)
		// blocks of the kernel's NW; the gather's guard skips one sequence
		err := b.launch(blockGatherOp, map[string]int64{"row_len": int64(D), "n_seqs": int64(n), "rs_head": int64(rsHead), "block_len": b.vals["NW"]}, nil)
		if err != nil {
			return err
		}
		return b.launch(op, args, nil)
	}
	b.untouched("scratch", n*D)
	b.untouched("dst", attn+D*n)
	if err := b.launch(ops.TargetOf(b.c.Arith.Backend).Gather(), map[string]int64{"row_len": int64(D), "n_seqs": int64(n), "rs_head": int64(rsHead)}, nil); err != nil {
		return err
	}
	return b.launch(op, args, nil)
}

// splitVariant is the chained compute's variant that runs after batched
// variant v in op B's split by aliasing, at v's S_v and KDA: one built on
// every backend that builds v (any, where v names none), else the one of
// contract a's backend, else of the first backend v names. A caller that
// runs a case on one backend passes v.OnlyOn(it): the backends' tilings
// differ at S_v 128.
func splitVariant(v ops.Variant, a ir.Arith) (ops.Variant, bool) {
	for _, builtOn := range []func(c ops.Variant) bool{
		func(c ops.Variant) bool {
			ok := v.On != nil || v.NotOn == nil
			for _, be := range v.On {
				ok = ok && c.BuiltOn(ops.TargetOf(be))
			}
			return ok
		},
		func(c ops.Variant) bool {
			return a.Native && slices.Contains(v.On, a.Backend) && c.BuiltOn(ops.TargetOf(a.Backend))
		},
		func(c ops.Variant) bool { return len(v.On) > 0 && c.BuiltOn(ops.TargetOf(v.On[0])) },
	} {
		for _, c := range ops.VariantsOf(chainedOp) {
			if c.Values["S_v"] == v.Values["S_v"] && c.Values["KDA"] == v.Values["KDA"] && builtOn(c) {
				return c, true
			}
		}
	}
	return ops.Variant{}, false
}

// batchedOp and convBatchedOp are ops B's and D's one-dispatch schedules
// (ops.Target.GDNBatch, ops.Target.ConvBatch).
const (
	batchedOp     = "gated_delta_net_inplace_ids_batched"
	convBatchedOp = "ssm_conv_update_inplace_ids_batched"
	// chainedOp and convChainedOp are their chained schedules' compute
	// kernels (ops/chain.go).
	chainedOp     = "gated_delta_net_inplace_ids_chained"
	convChainedOp = "ssm_conv_update_inplace_ids_chained"
	// blocksOp is op B's block schedule's compute kernel and blockGatherOp
	// its first dispatch (docs/ops.md#blocks).
	blocksOp      = "gated_delta_net_inplace_ids_blocks"
	blockGatherOp = "gated_delta_net_block_gather"
)

// chain adds the chained schedule's launches of op family (the chain
// gather, which plans, then the compute kernel) for n sequences of rows of
// row elements.
func (b *builder) chain(family string, row, n, rsHead int, args map[string]int64) error {
	b.plan(n)
	err := b.launch(ops.ChainGatherOp, map[string]int64{"row_len": int64(row), "n_seqs": int64(n), "rs_head": int64(rsHead), "seg": args["seg"]}, nil)
	if err != nil {
		return err
	}
	compute := chainedOp
	if family == "ssm_conv" {
		compute = convChainedOp
	}
	delete(args, "seg")
	return b.launch(compute, args, nil)
}

// planGather is a case of a plan gather alone (op: a chain gather, arg
// its seg; or the block gather, arg its block_len, drawn from 1..most):
// many sequences, ids drawn to make cycles, paths and shared rows.
func (b *builder) planGather(op, arg string, most int) error {
	r := b.r
	n := 1 + r.IntN(300)
	switch r.IntN(8) {
	case 0:
		n = 1025 + r.IntN(100) // past what one workgroup plans
	case 1:
		n = 1 // the guarded gather
	case 2:
		n = 2 + r.IntN(2)
	}
	slots := n + r.IntN(4)
	rsHead := r.IntN(slots - n + 1)
	b.chainIds("ids", n, slots, rsHead)
	rowLen := 1 + r.IntN(40)
	b.f32("cache", slots*rowLen, -1, 1, true)
	b.plan(n)
	b.untouched("scratch", n*rowLen)
	return b.launch(op, map[string]int64{"row_len": int64(rowLen), "n_seqs": int64(n), "rs_head": int64(rsHead), arg: int64(1 + r.IntN(most))}, nil)
}

func (b *builder) conv() error {
	r := b.r
	K := int(b.vals["d_conv"])
	C, nT, nS := b.channels(), 1+r.IntN(b.sz.MaxTokens+1), 1+r.IntN(b.sz.MaxSeqs)
	sx1 := K - 1 + nT
	b.f32("sx", nS*C*sx1, -1, 1, true)
	b.f32("conv_kernel", C*K, -1, 1, true)
	b.untouched("dst", nS*nT*C)
	return b.launch("ssm_conv", map[string]int64{"n_ch": int64(C), "n_t": int64(nT), "n_s": int64(nS),
		"sx1": int64(sx1), "sx2": int64(C * sx1), "w1": int64(K), "d1": int64(C), "d2": int64(C * nT)}, nil)
}

func (b *builder) convUpdate(op string) error {
	r := b.r
	K := int(b.vals["d_conv"])
	C, n := b.channels(), 1+r.IntN(b.sz.MaxSeqs+2)
	if op == convChainedOp {
		n = 1 + r.IntN(2*b.sz.MaxSeqs+4) // chains long enough to cut into segments
	}
	if op == convBatchedOp {
		n = 1 + r.IntN(min(int(b.vals["NS"]), b.sz.MaxSeqs+2))
	}
	row := (K - 1) * C
	T, snaps := 1, 1
	if op == ops.ConvSlotsOp {
		// the graph fusion's step (ops/fusion): T tokens, and slot i of the
		// taps i*n*row further in conv_state_dst, past the rows ids name
		T, snaps = 1+r.IntN(b.sz.MaxTokens+1), 1+r.IntN(3)
	}
	b.f32("conv_kernel", C*K, -1, 1, true)
	b.withEdges(b.f32("x_cur", n*T*C, -1, 1, true))
	b.untouched("dst", n*T*C)
	args := map[string]int64{"n_ch": int64(C), "n_seqs": int64(n), "cs1": int64(K - 1), "cs2": int64(row),
		"w1": int64(K), "x2": int64(T * C), "sd1": int64(row), "d2": int64(T * C)}
	if op == ops.ConvSlotsOp {
		args["n_t"], args["x1"], args["d1"], args["K"], args["ss"] = int64(T), int64(C), int64(C), int64(snaps), int64(n*row)
	}
	if op == "ssm_conv_update_inplace" {
		b.withEdges(b.f32("conv_states", n*row, -1, 1, true))
		b.f32("conv_state_dst", (n+1)*row, -1, 1, false)
		return b.launch(op, args, nil)
	}
	cells := n + r.IntN(3)
	rsHead := r.IntN(cells - n + 1)
	cache := b.withEdges(b.f32("cache", cells*row, -1, 1, true))
	stateDst := b.withEdges(b.f32("conv_state_dst", snaps*n*row, -1, 1, true))
	if op == convChainedOp {
		b.chainIds("ids", n, cells, rsHead)
		copy(stateDst.F32, cache.F32[rsHead*row:(rsHead+n)*row])
	} else {
		b.ids("ids", n, cells, rsHead)
	}
	if op == convBatchedOp {
		// As for GDN's batched op: conv_state_dst starts as the window's rows.
		copy(stateDst.F32, cache.F32[rsHead*row:(rsHead+n)*row])
		args["rs_head"] = int64(rsHead)
		return b.launch(op, args, nil)
	}
	if op == convChainedOp {
		b.untouched("scratch", n*row)
		args["rs_head"], args["seg"] = int64(rsHead), int64(1+r.IntN(3))
		return b.chain("ssm_conv", row, n, rsHead, args)
	}
	b.untouched("scratch", n*row)
	if err := b.launch(ops.TargetOf(b.c.Arith.Backend).Gather(), map[string]int64{"row_len": int64(row), "n_seqs": int64(n), "rs_head": int64(rsHead)}, nil); err != nil {
		return err
	}
	args["rs_head"] = int64(rsHead)
	return b.launch(op, args, nil)
}

func (b *builder) gather(op string) error {
	r := b.r
	n, rowLen := 1+r.IntN(b.sz.MaxSeqs+2), 1+r.IntN(600)
	if op == ops.RowGatherOp && r.IntN(2) == 0 {
		rowLen += ops.GatherRowChunk // rows of more than one chunk
	}
	slots := n + r.IntN(4)
	rsHead := r.IntN(slots - n + 1)
	b.f32("cache", slots*rowLen, -1, 1, true)
	b.ids("ids", n, slots, rsHead)
	b.untouched("scratch", n*rowLen)
	return b.launch(op, map[string]int64{"row_len": int64(rowLen), "n_seqs": int64(n), "rs_head": int64(rsHead)}, nil)
}
