package ops

import (
	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
)

type gdnMode int

const (
	gdnBase       gdnMode = iota // final state (or K snapshots) into dst's state region
	gdnInplace                   // op A: final state into state_dst (src[6])
	gdnInplaceIds                // op B: prior state from cache[ids[s]] or state_dst, final into state_dst
	// gdnInplaceIdsBatched is op B in one dispatch for n_seqs <= NS*SPT,
	// where state_dst is the cache's window (docs/ops.md#aliasing). A
	// workgroup owns one (head, column block) of every sequence: NS rows of
	// threads (z) run SPT slots one after another, slot j sequence
	// z + j*NS. First each thread stages in shared memory the prior state
	// of its later slots whose source is another sequence's destination;
	// then slot 0 reads its prior states, one device barrier, and only then
	// does any thread write. A source only ever aliases a destination
	// within one (head, column block), so the barrier does what the gather
	// dispatch and its barrier do in op B; the later slots read nothing
	// another thread writes, so they run without one, and a thread holds
	// one register shard at any SPT. Sources inside the window are read
	// through state_dst, the binding the writes go through (SPIR-V lets a
	// compiler assume two bindings never alias).
	gdnInplaceIdsBatched
	// gdnInplaceIdsChained is op B's compute kernel in the chained schedule
	// (ops/chain.go): the workgroup of sequence s0 runs the segment s0
	// starts, member after member, each reading the row the next writes;
	// a sequence the plan marks reads scratch, any other source is read
	// through state_dst where it lies in the window, else the cache.
	gdnInplaceIdsChained
	// gdnInplaceIdsBlocks is op B's compute kernel in the block schedule
	// (docs/ops.md#blocks), a workgroup of NW warps of CPW columns each,
	// as the two-phase kernel's. Where no source aliases, workgroup (h, s,
	// column block) runs sequence s over NW*CPW columns, each warp CPW
	// columns NW apart, as the two-phase kernel does. Where one does, the
	// same grid runs the block gather's layout: a workgroup takes one tile
	// of CPW columns NW apart of a block, warp y the sequence at position
	// y (the last block packs several tiles a workgroup, tailOf). Every
	// warp reads its prior state, one workgroup barrier, then every warp
	// writes: a source the plan marks is read from scratch, any other in
	// the window through state_dst, since the block gather placed its
	// writer in the same block.
	gdnInplaceIdsBlocks
	// gdnShared is ops A and B in one kernel, picked by the IDS param: what
	// upstream gets (Shared), one template for both ops.
	gdnShared
)

func (m gdnMode) ids() bool {
	return m == gdnInplaceIds || m == gdnInplaceIdsBatched || m == gdnInplaceIdsChained || m == gdnInplaceIdsBlocks
}

// maxShared is the most shared memory, in floats, the batched kernel may
// take: 48 KiB, what CUDA gives a block without opting in and NVIDIA's
// Vulkan driver gives a workgroup.
const maxShared = 12288

// splitGroups is the most workgroups of the batched kernel split by
// aliasing (splitParam).
const splitGroups = 256

// splitParam is the batched kernel's bool param of a tier split by
// aliasing (Batch.Aliased): the kernel runs a step only where some source
// aliases, and the chained compute after it (aliasedBatchedArg) where none
// does.
const splitParam = "SPLIT"

// sharedFlag is the bool param of a Shared kernel that picks the ids op.
const sharedFlag = "IDS"

// buildGDN is the gated-DeltaNet recurrence (docs/ops.md#gdn) for one (head,
// sequence) per workgroup row of columns: each cluster of W = min(32, S_v)
// lanes owns one value column, each lane R = S_v/W rows of it, held in
// registers from the first read to the final write.
func buildGDN(name string, mode gdnMode, a ir.Arith) (*ir.Kernel, error) {
	st := styleOf(a)
	b := dsl.New(name, a)

	sv := b.Param("S_v", ir.U32, 16, 32, 64, 128)
	kda := b.Param("KDA", ir.Bool)
	var withIds dsl.Val // the ids op's parts of a Shared kernel run where this is true
	if mode == gdnShared {
		withIds = b.Param(sharedFlag, ir.Bool)
	}
	var keepRS dsl.Val
	if mode == gdnBase {
		keepRS = b.Param("KEEP_RS", ir.Bool)
	}
	nw := b.Param("NW", ir.U32, 1, 2, 4, 8, 16)
	cpw := b.Param("CPW", ir.U32, 1, 2, 4, 8)
	batched := mode == gdnInplaceIdsBatched
	var ns, spt, split dsl.Val
	if batched {
		ns = b.Param("NS", ir.U32, 2, 4, 8, 10, 12, 16, 18, 20, 22, 24, 32)
		spt = b.Param("SPT", ir.U32, 1, 2, 3, 4, 8) // slots: sequences per row of threads
		// split by aliasing (Batch.Aliased): a variant of its own, so that
		// the tiers that run every step keep their code (a runtime switch
		// cost them 0-5%, bench/RESULTS.md "split by aliasing")
		split = b.Param(splitParam, ir.Bool)
	}
	lanes := b.Select(sv.Lt(32), sv, b.U32(32))
	if st.lanes != nil {
		lanes = st.lanes(b, sv)
	}
	if st.vectorRows {
		lanes = b.U32(1) // a lane holds whole columns
	}
	w := b.Derived("W", lanes)
	rows := b.Derived("R", sv.Div(w))
	b.Require(sv.Rem(nw.Mul(cpw)).Eq(0), "S_v must be a multiple of NW*CPW")
	var stagedLen dsl.Val // batched: the staged slots' floats, (SPT-1)*NS*NW*CPW*S_v
	if batched {
		b.Require(nw.Mul(ns).Le(32), "NW*NS must be at most 32: a workgroup of W*NW*NS threads, 1024 at most")
		stagedLen = spt.Sub(1).Mul(ns).Mul(nw).Mul(cpw).Mul(sv)
		b.Require(stagedLen.Add(w.Mul(nw).Mul(ns)).Le(maxShared),
			"the staged prior states ((SPT-1)*NS*NW*CPW*S_v floats) and the reductions' exchange (W*NW*NS) must fit in 12288 floats: 48 KiB of shared memory")
	}
	// Two workgroups per core keep the register shard small enough for
	// latency hiding on this bandwidth-bound loop (ggml-cuda's MIN_BLOCKS).
	b.Occupancy(2)

	nHeads := b.Arg("H", ir.U32, "value heads")
	nTok := b.Arg("n_tokens", ir.U32, "tokens per sequence")
	nSeqs := b.Arg("n_seqs", ir.U32, "sequences")
	neq1 := b.Arg("neq1", ir.U32, "q/k heads (GQA: head h reads q/k head h % neq1)")
	rq3 := b.Arg("rq3", ir.U32, "n_seqs / q/k sequences (sequence s reads q/k sequence s / rq3)")
	sq1 := b.Arg("sq1", ir.U32, "q/k head stride, elements")
	sq2 := b.Arg("sq2", ir.U32, "q/k token stride, elements")
	sq3 := b.Arg("sq3", ir.U32, "q/k sequence stride, elements")
	sv1 := b.Arg("sv1", ir.U32, "v head stride, elements")
	sv2 := b.Arg("sv2", ir.U32, "v token stride, elements")
	sv3 := b.Arg("sv3", ir.U32, "v sequence stride, elements")
	sg1 := b.Arg("sg1", ir.U32, "g head stride, elements")
	sg2 := b.Arg("sg2", ir.U32, "g token stride, elements")
	sg3 := b.Arg("sg3", ir.U32, "g sequence stride, elements")
	sb1 := b.Arg("sb1", ir.U32, "beta head stride, elements")
	sb2 := b.Arg("sb2", ir.U32, "beta token stride, elements")
	sb3 := b.Arg("sb3", ir.U32, "beta sequence stride, elements")
	scale := b.Arg("scale", ir.F32, "1/sqrt(S_v), computed by the host")
	var nSnap, stateOff, dstRow, rsHead dsl.Val
	if mode == gdnBase {
		nSnap = b.Arg("K", ir.U32, "snapshot slots (op_params[0])")
		stateOff = b.Arg("s_off", ir.U32, "start of dst's state region: S_v*H*n_tokens*n_seqs")
	} else {
		dstRow = b.Arg("sd1", ir.U32, "state_dst sequence (row) stride, elements")
	}
	if mode.ids() || mode == gdnShared {
		rsHead = b.Arg("rs_head", ir.U32, "first destination slot (op_params[1])")
	}
	var byAliasing dsl.Val // chained: the step split with the batched dispatch before (aliasedBatchedArg)
	if mode == gdnInplaceIdsChained {
		byAliasing = b.Arg(aliasedBatchedArg, ir.U32, aliasedBatchedDoc)
	}

	q := b.Buffer("q", ir.F32, ir.Read, "src0", "[S_v, H_k, T, n_seqs_q]")
	k := b.Buffer("k", ir.F32, ir.Read, "src1", "[S_v, H_k, T, n_seqs_q]")
	v := b.Buffer("v", ir.F32, ir.Read, "src2", "[S_v, H, T, n_seqs]")
	g := b.Buffer("g", ir.F32, ir.Read, "src3", "[1 or S_v, H, T, n_seqs]")
	beta := b.Buffer("beta", ir.F32, ir.Read, "src4", "[1, H, T, n_seqs]")
	var state, stateDst, ids, scratch dsl.Buf
	switch mode {
	case gdnBase, gdnInplace:
		state = b.Buffer("state", ir.F32, ir.Read, "src5", "prior state [S_v, S_v, H, n_seqs]")
	case gdnInplaceIds, gdnInplaceIdsBatched, gdnInplaceIdsChained, gdnInplaceIdsBlocks:
		state = b.Buffer("cache", ir.F32, ir.Read, "src5", "the full state cache, rows of S_v*S_v*H")
	case gdnShared:
		state = b.Buffer("state", ir.F32, ir.Read, "src5", "prior state [S_v, S_v, H, n_seqs]; with IDS the full cache, rows of S_v*S_v*H")
	}
	dst := b.Buffer("dst", ir.F32, ir.Write, "dst", "attention [S_v, H, T, n_seqs], then the state region")
	switch mode {
	case gdnInplace:
		stateDst = b.Buffer("state_dst", ir.F32, ir.Write, "src6", "in-place final state, rows of S_v*S_v*H")
	case gdnInplaceIds, gdnShared:
		stateDst = b.Buffer("state_dst", ir.F32, ir.ReadWrite, "src6", "in-place state rows; identity rows are also read here")
		ids = b.Buffer("ids", ir.I32, ir.Read, "src7", "source slot of each sequence")
		scratch = b.Buffer("scratch", ir.F32, ir.Read, "scratch", "gathered prior state of sequences whose source is another's destination").Prior()
	case gdnInplaceIdsBatched, gdnInplaceIdsChained, gdnInplaceIdsBlocks:
		stateDst = b.Buffer("state_dst", ir.F32, ir.ReadWrite, "src6", "the cache's rows [rs_head, rs_head+n_seqs): sources there are read here")
		ids = b.Buffer("ids", ir.I32, ir.Read, "src7", "source slot of each sequence")
	}
	var plan dsl.Buf
	if mode == gdnInplaceIdsChained {
		scratch = b.Buffer("scratch", ir.F32, ir.Read, "scratch", "prior state of the sequences the plan marks, copied by the chain gather").Prior()
		plan = b.Buffer("plan", ir.I32, ir.Read, "plan", "the chain plan: len << 16 | from per sequence").Prior()
	}
	blocks := mode == gdnInplaceIdsBlocks
	if blocks {
		scratch = b.Buffer("scratch", ir.F32, ir.Read, "scratch", "prior state of the sequences the plan marks, copied by the block gather").Prior()
		plan = b.Buffer("plan", ir.I32, ir.Read, "plan", "the block plan: s << 16 | from per position").Prior()
	}

	var tiles, groups dsl.Val // split: (head, column block) tiles, and the workgroups that run them
	if batched {
		b.Workgroup(w, nw, ns)
		// A workgroup per (head, column block) tile; split by aliasing, at
		// most splitGroups, each running tiles splitGroups apart: where no
		// source aliases every workgroup only looks at ids, and one wave of
		// them costs identity ids less than a workgroup per tile would.
		cols := sv.Div(nw.Mul(cpw))
		tiles = nHeads.Mul(cols)
		groups = b.Select(tiles.Gt(splitGroups), b.U32(splitGroups), tiles)
		b.Grid(b.Select(split, groups, nHeads), 1, b.Select(split, b.U32(1), cols))
	} else if blocks {
		// the whole blocks of NW, then the last block's sequences rounded
		// up to a power of two (tailOf): the grid both ways of running a
		// step take
		b.Workgroup(w, nw, 1)
		tail := tailOf(b, nSeqs, nw)
		b.Grid(nHeads, nSeqs.Sub(tail.rem).Add(tail.padded), sv.Div(nw.Mul(cpw)))
	} else {
		b.Workgroup(w, nw, 1)
		b.Grid(nHeads, nSeqs, sv.Div(nw.Mul(cpw)))
	}

	// The next dispatch may start at once (it waits before reading what this
	// one writes). Inputs come from earlier dispatches: wait for them, except
	// in op B, whose gather waited for them before letting this dispatch
	// start, and which waits for the gather itself only where it must.
	if batched {
		// Split by aliasing, the chained compute after this dispatch reads
		// its inputs without waiting (waitWithoutGather): wait for them
		// before letting it start, as a gather does.
		b.If(split, func() { b.DepWait() })
	}
	b.DepRelease()
	switch mode {
	case gdnInplaceIds, gdnInplaceIdsChained, gdnInplaceIdsBlocks:
		waitWithoutGather(b, nSeqs)
	case gdnShared:
		b.If(withIds.Not().OrElse(nSeqs.Lt(b.U32(uint32(gatherGuard.Min)))), func() { b.DepWait() })
	default:
		b.DepWait()
	}
	var h, colBlock dsl.Val // the batched kernel sets them per tile
	if !batched {
		h, colBlock = b.Let("h", b.GroupID(0)), b.GroupID(2)
	}
	var s dsl.Val
	var member dsl.Mut  // the chained kernel's current sequence
	var aliased dsl.Val // the chained and block kernels: some source aliases (they read the plan)
	sequence := func() {
		stores := b.Bool(true)
		// blocks: from, 0 or the plan's scratch row + 1
		var col0, from dsl.Val
		switch {
		case mode == gdnInplaceIdsChained:
			s = b.Let("s", member.Get())
		case blocks:
			// Where some source aliases, this workgroup runs one block at
			// one tile of CPW columns NW apart (S_v/CPW tiles a head), warp
			// y the block's y-th position: the columns lie as a warp's of
			// the two-phase tiling do, so both ways compile to one code.
			// The last block, of rem < NW sequences padded to a power of
			// two, takes NW/padded tiles a workgroup, warp y its position
			// y % padded of tile y / padded: a workgroup per tile would
			// leave most of its warps idle (1.31-1.34x at 49 and 50
			// sequences on the H200). Shifts, not divisions by rem, so
			// that identity ids pay nothing for it (bench/RESULTS.md).
			tiles := sv.Div(cpw)
			y := b.LocalID(1)
			tail := tailOf(b, nSeqs, nw)
			whole := b.Let("whole", nSeqs.Sub(tail.rem)) // the whole blocks' positions
			cols := sv.Div(nw.Mul(cpw))
			at := b.Let("at", b.GroupID(1).Mul(cols).Add(colBlock))
			inWhole := b.Let("in_whole", at.Lt(whole.Mul(cols)))
			last := b.Let("last", at.Sub(whole.Mul(cols))) // the last block's workgroup
			lg := b.Let("tail_log2", tail.log2)
			tile := b.Let("tile", b.Select(inWhole, at.Rem(tiles), last.Mul(nw.Shr(lg)).Add(y.Shr(lg))))
			pos := b.Let("pos", b.Select(inWhole, at.Div(tiles).Mul(nw).Add(y), whole.Add(y.BitAnd(b.U32(1).Shl(lg).Sub(1)))))
			slot := b.Let("slot", b.Select(aliased, pos, b.GroupID(1)))
			stores = b.Let("stores", slot.Lt(nSeqs))
			entry := b.Var("entry", b.Select(stores, slot, nSeqs.Sub(1)).I32().Shl(planLenShift))
			b.If(aliased.AndAlso(stores), func() { entry.Set(plan.Load(slot)) })
			s = b.Let("s", entry.Get().U32().Shr(planLenShift))
			from = b.Let("from", entry.Get().BitAnd(planFromMask))
			col0 = b.Let("col0", b.Select(aliased, tile.Div(nw).Mul(nw.Mul(cpw)).Add(tile.Rem(nw)), colBlock.Mul(nw.Mul(cpw)).Add(b.LocalID(1))))
		case !batched:
			s = b.Let("s", b.GroupID(1))
		}
		var z dsl.Val // batched: the row of threads
		if batched {
			z = b.Let("z", b.LocalID(2))
		}
		// slot sets s and stores for a batched row's slot j (sequence
		// z + j*NS). Slots past n_seqs run the last sequence's inputs on
		// a zero state, so that every thread reaches every barrier of the
		// reductions, and store nothing.
		slot := func(j dsl.Val) {
			at := b.Let("slot", z.Add(j.Mul(ns)))
			stores = b.Let("stores", at.Lt(nSeqs))
			s = b.Let("s", b.Select(stores, at, nSeqs.Sub(1)))
		}
		var lane dsl.Val
		if !st.vectorRows {
			lane = b.Let("lane", b.LocalID(0))
		}
		if col0.Expr() == nil {
			col0 = b.Let("col0", colBlock.Mul(nw.Mul(cpw)).Add(b.LocalID(1)))
		}
		hq := b.Let("hq", h.Rem(neq1))
		var sq dsl.Val
		if !batched {
			sq = b.Let("sq", s.Div(rq3))
		}
		block := b.Let("block", sv.Mul(sv)) // one head's state
		row := func(r dsl.Val) dsl.Val {
			if st.vectorRows {
				return r
			}
			if st.blockedRows {
				return lane.Mul(rows).Add(r)
			}
			return r.Mul(w).Add(lane)
		}
		// rowVar is row r's key index as a variable (r itself where a lane holds whole columns).
		rowVar := func(r dsl.Val) dsl.Val {
			if st.vectorRows {
				return r
			}
			return b.Let("i", row(r))
		}
		// forShard runs f for each register of the shard: column c, row i, register index.
		forShard := func(f func(c, i, reg dsl.Val)) {
			if mode == gdnShared {
				// one loop over the registers, in the same order: upstream's
				// shorter text
				b.Unrolled("reg", 0, cpw.Mul(rows), func(reg dsl.Val) {
					c := b.Let("col", col0.Add(reg.Div(rows).Mul(nw)))
					f(c, rowVar(reg.Rem(rows)), reg)
				})
				return
			}
			b.Unrolled("cc", 0, cpw, func(cc dsl.Val) {
				c := b.Let("col", col0.Add(cc.Mul(nw)))
				b.Unrolled("r", 0, rows, func(r dsl.Val) {
					f(c, rowVar(r), cc.Mul(rows).Add(r))
				})
			})
		}

		shard := b.Array("s_shard", ir.F32, cpw.Mul(rows))
		if !batched {
			b.Comment("read the prior state once; it stays in registers for every token")
		}
		loadFrom := func(buf dsl.Buf, base dsl.Val) {
			forShard(func(c, i, reg dsl.Val) {
				shard.Set(reg, buf.Load(base.Add(along(base, c.Mul(sv))).Add(along(base, i))))
			})
		}
		loadIds := func() {
			// Identity reads its own slot; a source that another sequence of this
			// op writes was gathered into scratch; any other source is read from
			// the cache directly, since nothing in the op writes it.
			src := b.Let("src", ids.Load(s))
			b.IfElse(src.Eq(rsHead.Add(s).I32()),
				func() { loadFrom(stateDst, s.Mul(dstRow).Add(h.Mul(block))) },
				func() {
					b.IfElse(aliasesOtherThanSelf(st, b, src, s, rsHead, nSeqs),
						func() {
							b.DepWait() // scratch is the gather's output
							loadFrom(scratch, s.Mul(nHeads).Add(h).Mul(block))
						},
						func() { loadFrom(state, cacheRow(src, nHeads).Add(h.U64()).Mul(block.U64())) })
				})
		}
		loadChained := func() {
			b.IfElse(aliased.AndAlso(readsScratch(b, plan, s)),
				func() { loadFrom(scratch, scratchRow(b, plan, s).Mul(nHeads).Add(h).Mul(block)) },
				func() {
					src := b.Let("src", ids.Load(s))
					b.IfElse(inWindow(src, rsHead, nSeqs),
						func() { loadFrom(stateDst, src.U32().Sub(rsHead).Mul(dstRow).Add(h.Mul(block))) },
						func() { loadFrom(state, cacheRow(src, nHeads).Add(h.U64()).Mul(block.U64())) })
				})
		}
		switch mode {
		case gdnBase, gdnInplace:
			loadFrom(state, s.Mul(nHeads).Add(h).Mul(block))
		case gdnInplaceIds:
			loadIds()
		case gdnInplaceIdsChained:
			loadChained()
		case gdnInplaceIdsBlocks:
			// a warp past n_seqs (where some source aliases) runs the last
			// sequence's inputs on a zero state and stores nothing
			b.IfElse(stores.Not(),
				func() { b.Unrolled("reg", 0, cpw.Mul(rows), func(reg dsl.Val) { shard.Set(reg, b.F32(0)) }) },
				func() {
					b.IfElse(from.Ne(0),
						func() { loadFrom(scratch, from.Sub(1).U32().Mul(nHeads).Add(h).Mul(block)) },
						func() {
							src := b.Let("src", ids.Load(s))
							b.IfElse(inWindow(src, rsHead, nSeqs),
								func() { loadFrom(stateDst, src.U32().Sub(rsHead).Mul(dstRow).Add(h.Mul(block))) },
								func() { loadFrom(state, cacheRow(src, nHeads).Add(h.U64()).Mul(block.U64())) })
						})
				})
		case gdnShared:
			b.IfElse(withIds, loadIds, func() { loadFrom(state, s.Mul(nHeads).Add(h).Mul(block)) })
		}
		// The batched kernel's staged slots: slot j's register x of thread
		// tid at ((j-1)*CPW*R + x)*threads + tid, so that a warp's lanes
		// take consecutive words. Only the thread that stages a float reads
		// it back, so no barrier orders the two.
		var staged dsl.Arr
		var stagedAt func(j, reg dsl.Val) dsl.Val
		var stagedSource func(src dsl.Val) dsl.Val
		if batched {
			staged = b.SharedArray("staged", ir.F32, b.Select(spt.Gt(1), stagedLen, b.U32(1)))
			threads := w.Mul(nw).Mul(ns)
			tid := b.Let("tid", b.LocalID(2).Mul(nw).Add(b.LocalID(1)).Mul(w).Add(b.LocalID(0)))
			stagedAt = func(j, reg dsl.Val) dsl.Val {
				return j.Sub(1).Mul(cpw.Mul(rows)).Add(reg).Mul(threads).Add(tid)
			}
			// stagedSource: a later slot's (j > 0) source src is another
			// sequence's destination, so it was staged.
			stagedSource = func(src dsl.Val) dsl.Val {
				return src.Ge(rsHead.I32()).AndAlso(src.Lt(rsHead.Add(nSeqs).I32())).AndAlso(src.Ne(rsHead.Add(s).I32()))
			}
		}
		// The batched kernel reads its prior state in the first token, after
		// that token's inputs: loads behind the branch on src would otherwise
		// wait for it (one memory latency more per workgroup).
		loadBatched := func(j dsl.Val) func() {
			return func() {
				b.IfElse(stores.Not(),
					func() { b.Unrolled("reg", 0, cpw.Mul(rows), func(reg dsl.Val) { shard.Set(reg, b.F32(0)) }) },
					func() {
						src := b.Let("src", ids.Load(s))
						inWindow := src.Ge(rsHead.I32()).AndAlso(src.Lt(rsHead.Add(nSeqs).I32()))
						b.IfElse(j.Gt(0).AndAlso(stagedSource(src)),
							func() {
								b.Unrolled("reg", 0, cpw.Mul(rows), func(reg dsl.Val) { shard.Set(reg, staged.At(stagedAt(j, reg))) })
							},
							func() {
								b.IfElse(inWindow,
									func() { loadFrom(stateDst, src.U32().Sub(rsHead).Mul(dstRow).Add(h.Mul(block))) },
									func() { loadFrom(state, cacheRow(src, nHeads).Add(h.U64()).Mul(block.U64())) })
							})
					})
			}
		}

		var slotJ dsl.Val // batched: the slot being run
		token := func(t dsl.Val) {
			qReg := b.Array("q_reg", ir.F32, rows)
			kReg := b.Array("k_reg", ir.F32, rows)
			qk := b.Let("qk_off", sq.Mul(sq3).Add(t.Mul(sq2)).Add(hq.Mul(sq1)))
			b.Unrolled("r", 0, rows, func(r dsl.Val) {
				i := rowVar(r)
				qReg.Set(r, q.Load(qk.Add(i)))
				kReg.Set(r, k.Load(qk.Add(i)))
			})
			gOff := b.Let("g_off", s.Mul(sg3).Add(t.Mul(sg2)).Add(h.Mul(sg1)))
			betaT := b.Let("beta_t", beta.Load(s.Mul(sb3).Add(t.Mul(sb2)).Add(h.Mul(sb1))))
			if batched {
				b.Comment("read the prior state once, behind this token's inputs; it stays in registers for every token")
				b.If(t.Eq(0), loadBatched(slotJ))
			}
			vOff := b.Let("v_off", s.Mul(sv3).Add(t.Mul(sv2)).Add(h.Mul(sv1)))
			attnOff := b.Let("attn_off", s.Mul(nTok).Add(t).Mul(nHeads).Add(h).Mul(sv))

			storeAttn := func(c, partial dsl.Val) {
				attn := b.Reduce("attn", partial, w, st.order)
				b.If(and(lane.Eq(0), stores), func() { dst.Store(attnOff.Add(c), attn.Mul(scale)) })
			}
			snapshot := func(c, reg dsl.Val) {
				if mode != gdnBase {
					return
				}
				b.If(keepRS, func() {
					slot := b.Let("slot", nTok.Sub(1).Sub(t))
					b.If(slot.Lt(nSnap), func() {
						base := b.Let("snap_off", stateOff.Add(slot.Mul(nSeqs).Mul(nHeads).Mul(block)))
						b.Unrolled("r", 0, rows, func(r dsl.Val) {
							dst.Store(base.Add(s.Mul(nHeads).Add(h).Mul(block)).Add(c.Mul(sv)).Add(row(r)), shard.At(reg.Add(r)))
						})
					})
				})
			}

			// vectorRows: a lane holds its columns whole, so each dot is one
			// VecDot over the column and the row of k or q.
			vecDecayFirst := func(gate func(r dsl.Val) dsl.Val) {
				b.Unrolled("cc", 0, cpw, func(cc dsl.Val) {
					c := b.Let("col", col0.Add(cc.Mul(nw)))
					reg0 := b.Let("reg0", cc.Mul(rows))
					b.Unrolled("r", 0, rows, func(r dsl.Val) { shard.Set(reg0.Add(r), gate(r).Mul(shard.At(reg0.Add(r)))) })
					kv := b.Let("kv", b.VecDot(shard.From(reg0), kReg.From(0), rows))
					delta := b.Let("delta", v.Load(vOff.Add(c)).Sub(kv).Mul(betaT))
					b.Unrolled("r", 0, rows, func(r dsl.Val) {
						shard.Set(reg0.Add(r), st.madd(b, kReg.At(r), delta, shard.At(reg0.Add(r))))
					})
					attn := b.Let("attn", b.VecDot(shard.From(reg0), qReg.From(0), rows))
					storeIf(b, stores, func() { dst.Store(attnOff.Add(c), attn.Mul(scale)) })
					snapshot(c, reg0)
				})
			}
			// decayFirst: S' = gate*S, kv = sum S'*k, delta = (v - kv)*beta,
			// S = S' + k*delta, attn = sum S*q (docs/ops.md#gdn as written).
			decayFirst := func(gate func(r dsl.Val) dsl.Val) {
				b.Unrolled("cc", 0, cpw, func(cc dsl.Val) {
					c := b.Let("col", col0.Add(cc.Mul(nw)))
					reg0 := b.Let("reg0", cc.Mul(rows))
					kv := b.Var("kv_part", b.F32(0))
					b.Unrolled("r", 0, rows, func(r dsl.Val) {
						sd := b.Let("s_dec", gate(r).Mul(shard.At(reg0.Add(r))))
						shard.Set(reg0.Add(r), sd)
						kv.Set(st.madd(b, sd, kReg.At(r), kv.Get()))
					})
					kvSum := b.Reduce("kv", kv.Get(), w, st.order)
					delta := b.Let("delta", v.Load(vOff.Add(c)).Sub(kvSum).Mul(betaT))
					at := b.Var("attn_part", b.F32(0))
					b.Unrolled("r", 0, rows, func(r dsl.Val) {
						sn := b.Let("s_new", st.madd(b, kReg.At(r), delta, shard.At(reg0.Add(r))))
						shard.Set(reg0.Add(r), sn)
						at.Set(st.madd(b, sn, qReg.At(r), at.Get()))
					})
					storeAttn(c, at.Get())
					snapshot(c, reg0)
				})
			}
			// gateAfterReduce (CUDA/SYCL scalar gate): kv on the undecayed state,
			// delta = (v - g*kv)*beta, S = g*S + k*delta.
			gateAfter := func(ga dsl.Val) {
				b.Unrolled("cc", 0, cpw, func(cc dsl.Val) {
					c := b.Let("col", col0.Add(cc.Mul(nw)))
					reg0 := b.Let("reg0", cc.Mul(rows))
					kv := b.Var("kv_part", b.F32(0))
					b.Unrolled("r", 0, rows, func(r dsl.Val) {
						kv.Set(st.madd(b, shard.At(reg0.Add(r)), kReg.At(r), kv.Get()))
					})
					kvSum := b.Reduce("kv", kv.Get(), w, st.order)
					delta := b.Let("delta", v.Load(vOff.Add(c)).Sub(ga.Mul(kvSum)).Mul(betaT))
					at := b.Var("attn_part", b.F32(0))
					b.Unrolled("r", 0, rows, func(r dsl.Val) {
						sn := b.Let("s_new", ga.Mul(shard.At(reg0.Add(r))).Add(kReg.At(r).Mul(delta)))
						shard.Set(reg0.Add(r), sn)
						at.Set(st.madd(b, sn, qReg.At(r), at.Get()))
					})
					storeAttn(c, at.Get())
					snapshot(c, reg0)
				})
			}

			// kdaInDot is ggml-cuda's KDA arithmetic with the contractions nvcc
			// chooses for the series kernel pinned as explicit fmas (read off its
			// PTX under -use_fast_math, docs/arithmetic.md#cuda-kda): kv += fma(e_i*S, k, kv) in
			// the dot; in the update, with one row per lane (S_v <= 32) nvcc reuses
			// the dot's e_i*S and fuses k*delta, S = fma(k, delta, e_i*S); with more
			// rows it recomputes and fuses the gate, S = fma(e_i, S, k*delta). Pinned,
			// the generated kernel's bits no longer depend on nvcc's scheduling.
			kdaInDot := func() {
				b.Comment("KDA: one gate per key row, applied inside the dot and the update")
				gate := func(r dsl.Val) dsl.Val { return b.ExpNative(g.Load(gOff.Add(row(r)))) }
				b.Unrolled("cc", 0, cpw, func(cc dsl.Val) {
					c := b.Let("col", col0.Add(cc.Mul(nw)))
					reg0 := b.Let("reg0", cc.Mul(rows))
					kv := b.Var("kv_part", b.F32(0))
					b.Unrolled("r", 0, rows, func(r dsl.Val) {
						kv.Set(b.FMA(gate(r).Mul(shard.At(reg0.Add(r))), kReg.At(r), kv.Get()))
					})
					kvSum := b.Reduce("kv", kv.Get(), w, st.order)
					delta := b.Let("delta", v.Load(vOff.Add(c)).Sub(kvSum).Mul(betaT))
					at := b.Var("attn_part", b.F32(0))
					b.Unrolled("r", 0, rows, func(r dsl.Val) {
						sn := b.Var("s_new", b.F32(0))
						b.IfElse(rows.Eq(1),
							func() { sn.Set(b.FMA(kReg.At(r), delta, gate(r).Mul(shard.At(reg0.Add(r))))) },
							func() { sn.Set(b.FMA(gate(r), shard.At(reg0.Add(r)), kReg.At(r).Mul(delta))) })
						shard.Set(reg0.Add(r), sn.Get())
						at.Set(st.madd(b, sn.Get(), qReg.At(r), at.Get()))
					})
					storeAttn(c, at.Get())
					snapshot(c, reg0)
				})
			}
			if st.vectorRows {
				// One decay loop for both gates: the scalar gate fills every
				// row's slot (the products are the same).
				gates := b.Array("gates", ir.F32, rows)
				b.IfElse(kda, func() {
					b.Unrolled("r", 0, rows, func(r dsl.Val) { gates.Set(r, st.exp(b, g.Load(gOff.Add(r)))) })
				}, func() {
					e := st.exp(b, g.Load(gOff))
					b.Unrolled("r", 0, rows, func(r dsl.Val) { gates.Set(r, e) })
				})
				vecDecayFirst(func(r dsl.Val) dsl.Val { return gates.At(r) })
				return
			}
			kdaGate := func() {
				gReg := b.Array("g_reg", ir.F32, rows)
				b.Comment("KDA: one gate per key row")
				b.Unrolled("r", 0, rows, func(r dsl.Val) {
					gReg.Set(r, st.exp(b, g.Load(gOff.Add(row(r)))))
				})
				decayFirst(func(r dsl.Val) dsl.Val { return gReg.At(r) })
			}
			if st.gateAfterReduce {
				kdaGate = kdaInDot
			}
			// gateOnPartial (ggml-opencl scalar gate): each lane's partial dot of
			// the undecayed state times g, then the reduction; S = g*S + k*delta.
			gateOnPart := func(ga dsl.Val) {
				b.Unrolled("cc", 0, cpw, func(cc dsl.Val) {
					c := b.Let("col", col0.Add(cc.Mul(nw)))
					reg0 := b.Let("reg0", cc.Mul(rows))
					kv := b.Var("kv_part", b.F32(0))
					b.Unrolled("r", 0, rows, func(r dsl.Val) {
						kv.Set(st.madd(b, shard.At(reg0.Add(r)), kReg.At(r), kv.Get()))
					})
					kvSum := b.Reduce("kv", kv.Get().Mul(ga), w, st.order)
					delta := b.Let("delta", v.Load(vOff.Add(c)).Sub(kvSum).Mul(betaT))
					at := b.Var("attn_part", b.F32(0))
					b.Unrolled("r", 0, rows, func(r dsl.Val) {
						sn := b.Let("s_new", st.madd(b, kReg.At(r), delta, ga.Mul(shard.At(reg0.Add(r)))))
						shard.Set(reg0.Add(r), sn)
						at.Set(st.madd(b, sn, qReg.At(r), at.Get()))
					})
					storeAttn(c, at.Get())
					snapshot(c, reg0)
				})
			}
			b.IfElse(kda, kdaGate, func() {
				ga := b.Let("gate", st.exp(b, g.Load(gOff)))
				if st.gateAfterReduce {
					gateAfter(ga)
				} else if st.gateOnPartial {
					gateOnPart(ga)
				} else {
					decayFirst(func(dsl.Val) dsl.Val { return ga })
				}
			})
		}
		if batched {
			b.Comment("stage each later slot's source that is another sequence's destination, before any slot writes")
			b.Unrolled("j", 1, spt, func(j dsl.Val) {
				slot(j)
				b.If(stores, func() {
					src := b.Let("later_src", ids.Load(s)) // the prior-state loads keep the name src
					b.If(stagedSource(src), func() {
						base := b.Let("src_off", src.U32().Sub(rsHead).Mul(dstRow).Add(h.Mul(block)))
						forShard(func(c, i, reg dsl.Val) {
							staged.Set(stagedAt(j, reg), stateDst.Load(base.Add(c.Mul(sv)).Add(i)))
						})
					})
				})
			})
			// A loop, not unrolled: the slots' code once, not SPT times;
			// unrolled ran no faster (bench/RESULTS.md calls 14 and 15).
			b.For("j", 0, spt, func(j dsl.Val) {
				b.If(j.Mul(ns).Lt(nSeqs), func() { // uniform: a slot past every sequence is skipped whole
					slot(j)
					slotJ = j
					sq = b.Let("sq", s.Div(rq3))
					b.Comment("no tokens: the final state is the prior state")
					b.If(nTok.Eq(0), loadBatched(j))
					b.For("t", 0, nTok, token)
					b.If(j.Eq(0), func() {
						b.Comment("every thread of the workgroup has read slot 0's prior state and staged the later slots'")
						b.DeviceBarrier()
					})
					b.If(stores, func() {
						base := b.Let("final_off", s.Mul(dstRow).Add(h.Mul(block)))
						forShard(func(c, i, reg dsl.Val) { stateDst.Store(base.Add(c.Mul(sv)).Add(i), shard.At(reg)) })
					})
				})
			})
			return
		}
		b.For("t", 0, nTok, token)

		b.Comment("write the final state")
		switch mode {
		case gdnBase:
			b.If(keepRS.Not(), func() {
				base := b.Let("final_off", stateOff.Add(s.Mul(nHeads).Add(h).Mul(block)))
				forShard(func(c, i, reg dsl.Val) { dst.Store(base.Add(c.Mul(sv)).Add(i), shard.At(reg)) })
			})
		default:
			switch mode {
			case gdnInplaceIds:
				// The gather may still be reading this row as another sequence's source.
				b.DepWait()
			case gdnShared:
				// With IDS the gather may still be reading this row as another sequence's source.
				b.If(withIds, func() { b.DepWait() })
			case gdnInplaceIdsBlocks:
				b.If(aliased, func() {
					b.Comment("every warp of the block has read its prior state")
					b.DeviceBarrier()
				})
			}
			storeIf(b, stores, func() {
				base := b.Let("final_off", s.Mul(dstRow).Add(h.Mul(block)))
				forShard(func(c, i, reg dsl.Val) { stateDst.Store(base.Add(c.Mul(sv)).Add(i), shard.At(reg)) })
			})
		}
	}
	if batched {
		// Without SPLIT (a compile-time constant) the tile loop runs once
		// from 0 and h, col_block are the workgroup's: the code of a
		// workgroup per tile.
		runs := b.Var("runs", b.Bool(true))
		b.If(split, func() {
			b.Comment("split by aliasing: where no source aliases, the chained compute runs the step")
			threads := w.Mul(nw).Mul(ns)
			runs.Set(anyAliases(b, b.LocalID(2).Mul(nw).Add(b.LocalID(1)).Mul(w).Add(b.LocalID(0)), threads, ids, rsHead, nSeqs))
		})
		b.If(runs.Get(), func() {
			b.ForStep("tile", b.Select(split, b.GroupID(0), b.U32(0)), b.Select(split, tiles, b.U32(1)), b.Select(split, groups, b.U32(1)), func(tile dsl.Val) {
				h = b.Let("h", b.Select(split, tile.Rem(nHeads), b.GroupID(0)))
				colBlock = b.Let("col_block", b.Select(split, tile.Div(nHeads), b.GroupID(2)))
				sequence()
			})
		})
		return b.Build()
	}
	if blocks {
		aliased = anyAliases(b, b.LocalID(1).Mul(w).Add(b.LocalID(0)), w.Mul(nw), ids, rsHead, nSeqs)
		b.If(aliased, func() { b.DepWait() }) // the plan, scratch and the rows a block reads are ready
		// where no source aliases, a workgroup past n_seqs has no sequence
		b.If(aliased.OrElse(b.GroupID(1).Lt(nSeqs)), sequence)
		return b.Build()
	}
	if mode != gdnInplaceIdsChained {
		sequence()
		return b.Build()
	}
	runSegments(b, plan, ids, rsHead, nSeqs, b.LocalID(1).Mul(w).Add(b.LocalID(0)), w.Mul(nw), "row", &aliased, &member, byAliasing,
		func() dsl.Val { sequence(); return s })
	return b.Build()
}

// lastBlock is the block schedule's last block: n_seqs % NW sequences (rem),
// padded to the power of two above (0 where rem is 0), and its log2.
type lastBlock struct{ rem, padded, log2 dsl.Val }

// tailOf is the last block of n_seqs in blocks of nw (at most 16, the NW
// param's largest value), in selects the host and the kernel both
// evaluate: no loop, no division by rem.
func tailOf(b *dsl.Builder, nSeqs, nw dsl.Val) lastBlock {
	rem := nSeqs.Rem(nw)
	pick := func(p16, p8, p4, low dsl.Val) dsl.Val {
		return b.Select(rem.Gt(8), p16, b.Select(rem.Gt(4), p8, b.Select(rem.Gt(2), p4, low)))
	}
	return lastBlock{
		rem:    rem,
		padded: pick(b.U32(16), b.U32(8), b.U32(4), rem),
		log2:   pick(b.U32(4), b.U32(3), b.U32(2), b.Select(rem.Gt(1), b.U32(1), b.U32(0))),
	}
}

// storeIf runs store under cond, or unconditionally where cond is the
// constant true.
func storeIf(b *dsl.Builder, cond dsl.Val, store func()) {
	if c, ok := cond.Expr().(*ir.Const); ok && c.T == ir.Bool && c.B {
		store()
		return
	}
	b.If(cond, store)
}

// and is x && y, leaving out a y that is the constant true (so kernels
// without the condition print as before).
func and(x, y dsl.Val) dsl.Val {
	if c, ok := y.Expr().(*ir.Const); ok && c.T == ir.Bool && c.B {
		return x
	}
	return x.AndAlso(y)
}
