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
// registers from the first read to the final write. The kernel is declared
// (params, args, buffers, geometry), then one schedule per mode places the
// sequences around the one per-sequence body (gdn.sequence), whose
// per-token core (gdn.token) is the recurrence as docs/ops.md writes it.
func buildGDN(name string, mode gdnMode, a ir.Arith) (*ir.Kernel, error) {
	return buildGDNOf(&gdn{b: dsl.New(name, a), st: styleOf(a), mode: mode,
		batched: mode == gdnInplaceIdsBatched, blocks: mode == gdnInplaceIdsBlocks})
}

// buildGDNSlots is op B writing K snapshot slots in place as well.
func buildGDNSlots(name string, a ir.Arith) (*ir.Kernel, error) {
	return buildGDNOf(&gdn{b: dsl.New(name, a), st: styleOf(a), mode: gdnInplaceIds, slots: true})
}

// buildGDNSharedSlots is the Shared kernel of ops A and B that also
// writes op B's snapshot slots (Shared.SlotsKernel): the fusion form's.
func buildGDNSharedSlots(name string, a ir.Arith) (*ir.Kernel, error) {
	return buildGDNOf(&gdn{b: dsl.New(name, a), st: styleOf(a), mode: gdnShared, slots: true})
}

func buildGDNOf(g *gdn) (*ir.Kernel, error) {
	mode := g.mode
	// ggml-cpu's upstream kernel (the Shared one) runs as ggml-cpu's loops
	// do; the ops' own kernels keep the interface every contract shares
	g.inPlace = g.st.vectorRows && mode == gdnShared
	g.declareParams()
	g.declareArgs()
	g.declareBuffers()
	g.declareGeometry()
	g.waitForInputs()
	if !g.batched { // the batched kernel sets them per tile
		g.h, g.colBlock = g.b.Let("h", g.b.GroupID(0)), g.b.GroupID(2)
	}
	switch {
	case g.batched:
		return g.batchedSchedule()
	case g.blocks:
		return g.blockSchedule()
	case mode == gdnInplaceIdsChained:
		return g.chainedSchedule()
	case g.inPlace:
		g.s = g.b.Let("s", g.b.GroupID(1))
		g.rowsInPlace()
		return g.b.Build()
	}
	g.sequence()
	return g.b.Build()
}

// gdn is one GDN kernel being built: what it declares, and while a
// sequence is emitted, what places it (the schedules set h, colBlock, s).
type gdn struct {
	b               *dsl.Builder
	st              style
	mode            gdnMode
	batched, blocks bool
	// slots: op B that also writes K snapshot slots in place (the graph
	// fusion's, ops/fusion), args K and ss
	slots bool
	// inPlace: the Shared kernel under a vectorRows contract (gdn_rows.go):
	// a lane per (head, sequence), the state updated where it ends up, a
	// row at a time; NW and CPW are the variant's but tile nothing
	inPlace bool

	// params; withIds: the ids op's parts of a Shared kernel run where this is true
	sv, kda, withIds, keepRS, nw, cpw dsl.Val
	ns, spt, split                    dsl.Val // batched
	w, rows                           dsl.Val
	stagedLen                         dsl.Val // batched: the staged slots' floats, (SPT-1)*NS*NW*CPW*S_v

	// args
	nHeads, nTok, nSeqs, neq1, rq3      dsl.Val
	sq1, sq2, sq3, sv1, sv2, sv3        dsl.Val
	sk1, sk2, sk3                       dsl.Val // inPlace: k's own strides (q's elsewhere)
	sg1, sg2, sg3, sb1, sb2, sb3, scale dsl.Val
	nSnap, stateOff, dstRow, rsHead     dsl.Val
	nRows                               dsl.Val // inPlace where the contract checks ids: the cache's rows (cacheRowsArg)
	slotStride                          dsl.Val // op B: state_dst's snapshot slot stride
	byAliasing                          dsl.Val // chained: the step split with the batched dispatch before (aliasedBatchedArg)
	q, k, v, gate, beta, dst            dsl.Buf
	state, stateDst, ids, scratch, plan dsl.Buf
	tiles, groups                       dsl.Val // split: (head, column block) tiles, and the workgroups that run them

	// the sequence being emitted
	h, colBlock, s dsl.Val
	member         dsl.Mut // the chained kernel's current sequence
	aliased        dsl.Val // the chained and block kernels: some source aliases (they read the plan)
	stores         dsl.Val // the sequence stores (false: a padding slot or warp)
	col0, from     dsl.Val // blocks: from, 0 or the plan's scratch row + 1
	z, lane        dsl.Val // batched: the row of threads; the lane in its cluster
	hq, sq, block  dsl.Val
	shard          dsl.Arr
	slotJ          dsl.Val // batched: the slot being run
	staged         dsl.Arr // batched: the later slots' staged prior states
	threads, tid   dsl.Val // batched: the workgroup's threads, this one's index
}

func (g *gdn) declareParams() {
	b := g.b
	g.sv = b.Param("S_v", ir.U32, 16, 32, 64, 128)
	g.kda = b.Param("KDA", ir.Bool)
	if g.mode == gdnShared {
		g.withIds = b.Param(sharedFlag, ir.Bool)
	}
	if g.mode == gdnBase {
		g.keepRS = b.Param("KEEP_RS", ir.Bool)
	}
	g.nw = b.Param("NW", ir.U32, 1, 2, 4, 8, 16)
	g.cpw = b.Param("CPW", ir.U32, 1, 2, 4, 8)
	if g.batched {
		g.ns = b.Param("NS", ir.U32, 2, 4, 8, 10, 12, 16, 18, 20, 22, 24, 32)
		g.spt = b.Param("SPT", ir.U32, 1, 2, 3, 4, 8) // slots: sequences per row of threads
		// split by aliasing (Batch.Aliased): a variant of its own, so that
		// the tiers that run every step keep their code (a runtime switch
		// cost them 0-5%, bench/RESULTS.md "split by aliasing")
		g.split = b.Param(splitParam, ir.Bool)
	}
	sv, nw, cpw := g.sv, g.nw, g.cpw
	lanes := b.Select(sv.Lt(32), sv, b.U32(32))
	if g.st.lanes != nil {
		lanes = g.st.lanes(b, sv)
	}
	if g.st.vectorRows {
		lanes = b.U32(1) // a lane holds whole columns
	}
	if g.inPlace {
		return // a workgroup of one lane per (head, sequence): no tiling
	}
	g.w = b.Derived("W", lanes)
	g.rows = b.Derived("R", sv.Div(g.w))
	b.Require(sv.Rem(nw.Mul(cpw)).Eq(0), "S_v must be a multiple of NW*CPW")
	if g.batched {
		b.Require(nw.Mul(g.ns).Le(32), "NW*NS must be at most 32: a workgroup of W*NW*NS threads, 1024 at most")
		g.stagedLen = g.spt.Sub(1).Mul(g.ns).Mul(nw).Mul(cpw).Mul(sv)
		b.Require(g.stagedLen.Add(g.w.Mul(nw).Mul(g.ns)).Le(maxShared),
			"the staged prior states ((SPT-1)*NS*NW*CPW*S_v floats) and the reductions' exchange (W*NW*NS) must fit in 12288 floats: 48 KiB of shared memory")
	}
	// Two workgroups per core keep the register shard small enough for
	// latency hiding on this bandwidth-bound loop (ggml-cuda's MIN_BLOCKS).
	b.Occupancy(2)
}

func (g *gdn) declareArgs() {
	b := g.b
	g.nHeads = b.Arg("H", ir.U32, "value heads")
	g.nTok = b.Arg("n_tokens", ir.U32, "tokens per sequence")
	g.nSeqs = b.Arg("n_seqs", ir.U32, "sequences")
	g.neq1 = b.Arg("neq1", ir.U32, "q/k heads (GQA: head h reads q/k head h % neq1)")
	g.rq3 = b.Arg("rq3", ir.U32, "n_seqs / q/k sequences (sequence s reads q/k sequence s / rq3)")
	qk := "q/k"
	if g.inPlace {
		qk = "q" // k has its own
	}
	g.sq1 = b.Arg("sq1", ir.U32, qk+" head stride, elements")
	g.sq2 = b.Arg("sq2", ir.U32, qk+" token stride, elements")
	g.sq3 = b.Arg("sq3", ir.U32, qk+" sequence stride, elements")
	if g.inPlace {
		g.sk1 = b.Arg("sk1", ir.U32, "k head stride, elements")
		g.sk2 = b.Arg("sk2", ir.U32, "k token stride, elements")
		g.sk3 = b.Arg("sk3", ir.U32, "k sequence stride, elements")
	}
	g.sv1 = b.Arg("sv1", ir.U32, "v head stride, elements")
	g.sv2 = b.Arg("sv2", ir.U32, "v token stride, elements")
	g.sv3 = b.Arg("sv3", ir.U32, "v sequence stride, elements")
	g.sg1 = b.Arg("sg1", ir.U32, "g head stride, elements")
	g.sg2 = b.Arg("sg2", ir.U32, "g token stride, elements")
	g.sg3 = b.Arg("sg3", ir.U32, "g sequence stride, elements")
	g.sb1 = b.Arg("sb1", ir.U32, "beta head stride, elements")
	g.sb2 = b.Arg("sb2", ir.U32, "beta token stride, elements")
	g.sb3 = b.Arg("sb3", ir.U32, "beta sequence stride, elements")
	g.scale = b.Arg("scale", ir.F32, "1/sqrt(S_v), computed by the host")
	if g.mode == gdnBase {
		g.nSnap = b.Arg("K", ir.U32, "snapshot slots (op_params[0])")
		g.stateOff = b.Arg("s_off", ir.U32, "start of dst's state region: S_v*H*n_tokens*n_seqs")
	} else {
		g.dstRow = b.Arg("sd1", ir.U32, "state_dst sequence (row) stride, elements")
	}
	if g.mode.ids() || g.mode == gdnShared {
		g.rsHead = b.Arg("rs_head", ir.U32, "first destination slot (op_params[1])")
	}
	if g.inPlace && g.st.checksIds {
		g.nRows = cacheRowsArg(b)
	}
	if g.slots {
		// The graph fusion (ops/fusion) keeps the snapshots of llama.cpp's
		// MTP rollback: slot i of the cache's rows, i*ss further.
		g.nSnap = b.Arg("K", ir.U32, "snapshot slots written into state_dst (1: the final state only)")
		g.slotStride = b.Arg("ss", ir.U32, "state_dst snapshot slot stride, elements (slot i at i*ss)")
	}
	if g.mode == gdnInplaceIdsChained {
		g.byAliasing = b.Arg(aliasedBatchedArg, ir.U32, aliasedBatchedDoc)
	}
}

func (g *gdn) declareBuffers() {
	b := g.b
	g.q = b.Buffer("q", ir.F32, ir.Read, "src0", "[S_v, H_k, T, n_seqs_q]")
	g.k = b.Buffer("k", ir.F32, ir.Read, "src1", "[S_v, H_k, T, n_seqs_q]")
	g.v = b.Buffer("v", ir.F32, ir.Read, "src2", "[S_v, H, T, n_seqs]")
	g.gate = b.Buffer("g", ir.F32, ir.Read, "src3", "[1 or S_v, H, T, n_seqs]")
	g.beta = b.Buffer("beta", ir.F32, ir.Read, "src4", "[1, H, T, n_seqs]")
	switch g.mode {
	case gdnBase, gdnInplace:
		g.state = b.Buffer("state", ir.F32, ir.Read, "src5", "prior state [S_v, S_v, H, n_seqs]")
	case gdnInplaceIds, gdnInplaceIdsBatched, gdnInplaceIdsChained, gdnInplaceIdsBlocks:
		g.state = b.Buffer("cache", ir.F32, ir.Read, "src5", "the full state cache, rows of S_v*S_v*H")
	case gdnShared:
		g.state = b.Buffer("state", ir.F32, ir.Read, "src5", "prior state [S_v, S_v, H, n_seqs]; with IDS the full cache, rows of S_v*S_v*H")
	}
	g.dst = b.Buffer("dst", ir.F32, ir.Write, "dst", "attention [S_v, H, T, n_seqs], then the state region")
	switch g.mode {
	case gdnInplace:
		g.stateDst = b.Buffer("state_dst", ir.F32, ir.Write, "src6", "in-place final state, rows of S_v*S_v*H")
	case gdnInplaceIds, gdnShared:
		g.stateDst = b.Buffer("state_dst", ir.F32, ir.ReadWrite, "src6", "in-place state rows; identity rows are also read here")
		g.ids = b.Buffer("ids", ir.I32, ir.Read, "src7", "source slot of each sequence")
		g.scratch = b.Buffer("scratch", ir.F32, ir.Read, "scratch", "gathered prior state of sequences whose source is another's destination").Prior()
	case gdnInplaceIdsBatched, gdnInplaceIdsChained, gdnInplaceIdsBlocks:
		g.stateDst = b.Buffer("state_dst", ir.F32, ir.ReadWrite, "src6", "the cache's rows [rs_head, rs_head+n_seqs): sources there are read here")
		g.ids = b.Buffer("ids", ir.I32, ir.Read, "src7", "source slot of each sequence")
	}
	if g.mode == gdnInplaceIdsChained {
		g.scratch = b.Buffer("scratch", ir.F32, ir.Read, "scratch", "prior state of the sequences the plan marks, copied by the chain gather").Prior()
		g.plan = b.Buffer("plan", ir.I32, ir.Read, "plan", "the chain plan: len << 16 | from per sequence").Prior()
	}
	if g.blocks {
		g.scratch = b.Buffer("scratch", ir.F32, ir.Read, "scratch", "prior state of the sequences the plan marks, copied by the block gather").Prior()
		g.plan = b.Buffer("plan", ir.I32, ir.Read, "plan", "the block plan: s << 16 | from per position").Prior()
	}
}

func (g *gdn) declareGeometry() {
	b, sv, nw, cpw, nHeads, nSeqs := g.b, g.sv, g.nw, g.cpw, g.nHeads, g.nSeqs
	if g.batched {
		b.Workgroup(g.w, nw, g.ns)
		// A workgroup per (head, column block) tile; split by aliasing, at
		// most splitGroups, each running tiles splitGroups apart: where no
		// source aliases every workgroup only looks at ids, and one wave of
		// them costs identity ids less than a workgroup per tile would.
		cols := sv.Div(nw.Mul(cpw))
		g.tiles = nHeads.Mul(cols)
		g.groups = b.Select(g.tiles.Gt(splitGroups), b.U32(splitGroups), g.tiles)
		b.Grid(b.Select(g.split, g.groups, nHeads), 1, b.Select(g.split, b.U32(1), cols))
	} else if g.blocks {
		// the whole blocks of NW, then the last block's sequences rounded
		// up to a power of two (tailOf): the grid both ways of running a
		// step take
		b.Workgroup(g.w, nw, 1)
		tail := tailOf(b, nSeqs, nw)
		b.Grid(nHeads, nSeqs.Sub(tail.rem).Add(tail.padded), sv.Div(nw.Mul(cpw)))
	} else if g.inPlace {
		b.Workgroup(1, 1, 1)
		b.Grid(nHeads, nSeqs, 1)
	} else {
		b.Workgroup(g.w, nw, 1)
		b.Grid(nHeads, nSeqs, sv.Div(nw.Mul(cpw)))
	}
}

// waitForInputs: the next dispatch may start at once (it waits before
// reading what this one writes). Inputs come from earlier dispatches: wait
// for them, except in op B, whose gather waited for them before letting
// this dispatch start, and which waits for the gather itself only where it
// must.
func (g *gdn) waitForInputs() {
	b := g.b
	if g.batched {
		// Split by aliasing, the chained compute after this dispatch reads
		// its inputs without waiting (waitWithoutGather): wait for them
		// before letting it start, as a gather does.
		b.If(g.split, func() { b.DepWait() })
	}
	b.DepRelease()
	switch g.mode {
	case gdnInplaceIds, gdnInplaceIdsChained, gdnInplaceIdsBlocks:
		waitWithoutGather(b, g.nSeqs)
	case gdnShared:
		b.If(g.withIds.Not().OrElse(g.nSeqs.Lt(b.U32(uint32(gatherGuard.Min)))), func() { b.DepWait() })
	default:
		b.DepWait()
	}
}

// batchedSchedule: a workgroup per (head, column block) tile, its rows of
// threads the sequences (gdnInplaceIdsBatched).
func (g *gdn) batchedSchedule() (*ir.Kernel, error) {
	b, split := g.b, g.split
	// Without SPLIT (a compile-time constant) the tile loop runs once
	// from 0 and h, col_block are the workgroup's: the code of a
	// workgroup per tile.
	runs := b.Var("runs", b.Bool(true))
	b.If(split, func() {
		b.Comment("split by aliasing: where no source aliases, the chained compute runs the step")
		threads := g.w.Mul(g.nw).Mul(g.ns)
		runs.Set(anyAliases(b, b.LocalID(2).Mul(g.nw).Add(b.LocalID(1)).Mul(g.w).Add(b.LocalID(0)), threads, g.ids, g.rsHead, g.nSeqs))
	})
	b.If(runs.Get(), func() {
		b.ForStep("tile", b.Select(split, b.GroupID(0), b.U32(0)), b.Select(split, g.tiles, b.U32(1)), b.Select(split, g.groups, b.U32(1)), func(tile dsl.Val) {
			g.h = b.Let("h", b.Select(split, tile.Rem(g.nHeads), b.GroupID(0)))
			g.colBlock = b.Let("col_block", b.Select(split, tile.Div(g.nHeads), b.GroupID(2)))
			g.sequence()
		})
	})
	return b.Build()
}

// blockSchedule: where no source aliases, a workgroup per sequence; where
// one does, the block gather's layout (gdnInplaceIdsBlocks).
func (g *gdn) blockSchedule() (*ir.Kernel, error) {
	b := g.b
	g.aliased = anyAliases(b, b.LocalID(1).Mul(g.w).Add(b.LocalID(0)), g.w.Mul(g.nw), g.ids, g.rsHead, g.nSeqs)
	b.If(g.aliased, func() { b.DepWait() }) // the plan, scratch and the rows a block reads are ready
	// where no source aliases, a workgroup past n_seqs has no sequence
	b.If(g.aliased.OrElse(b.GroupID(1).Lt(g.nSeqs)), g.sequence)
	return b.Build()
}

// chainedSchedule: each workgroup runs the segment its sequence starts,
// member after member (gdnInplaceIdsChained, ops/chain.go).
func (g *gdn) chainedSchedule() (*ir.Kernel, error) {
	b := g.b
	runSegments(b, g.plan, g.ids, g.rsHead, g.nSeqs, b.LocalID(1).Mul(g.w).Add(b.LocalID(0)), g.w.Mul(g.nw), "row", &g.aliased, &g.member, g.byAliasing,
		func() dsl.Val { g.sequence(); return g.s })
	return b.Build()
}

// sequence emits one sequence at the schedule's (h, colBlock): its place,
// its prior state read into registers, its tokens, its final state.
func (g *gdn) sequence() {
	b := g.b
	g.stores = b.Bool(true)
	g.col0, g.from, g.z, g.lane, g.sq = dsl.Val{}, dsl.Val{}, dsl.Val{}, dsl.Val{}, dsl.Val{}
	g.place()
	if g.batched {
		g.z = b.Let("z", b.LocalID(2))
	}
	if !g.st.vectorRows {
		g.lane = b.Let("lane", b.LocalID(0))
	}
	if g.col0.Expr() == nil {
		g.col0 = b.Let("col0", g.colBlock.Mul(g.nw.Mul(g.cpw)).Add(b.LocalID(1)))
	}
	g.hq = b.Let("hq", g.h.Rem(g.neq1))
	if !g.batched {
		g.sq = b.Let("sq", g.s.Div(g.rq3))
	}
	g.block = b.Let("block", g.sv.Mul(g.sv)) // one head's state

	g.shard = b.Array("s_shard", ir.F32, g.cpw.Mul(g.rows))
	if !g.batched {
		b.Comment("read the prior state once; it stays in registers for every token")
	}
	g.loadPrior()
	if g.batched {
		g.staged = b.SharedArray("staged", ir.F32, b.Select(g.spt.Gt(1), g.stagedLen, b.U32(1)))
		g.threads = g.w.Mul(g.nw).Mul(g.ns)
		g.tid = b.Let("tid", b.LocalID(2).Mul(g.nw).Add(b.LocalID(1)).Mul(g.w).Add(b.LocalID(0)))
		g.runSlots()
		return
	}
	b.For("t", 0, g.nTok, g.token)
	g.storeFinal()
}

// place sets the sequence s (and, for the block kernel, its columns and
// scratch row) the schedule runs here.
func (g *gdn) place() {
	b, sv, nw, cpw, nSeqs := g.b, g.sv, g.nw, g.cpw, g.nSeqs
	switch {
	case g.mode == gdnInplaceIdsChained:
		g.s = b.Let("s", g.member.Get())
	case g.blocks:
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
		at := b.Let("at", b.GroupID(1).Mul(cols).Add(g.colBlock))
		inWhole := b.Let("in_whole", at.Lt(whole.Mul(cols)))
		last := b.Let("last", at.Sub(whole.Mul(cols))) // the last block's workgroup
		lg := b.Let("tail_log2", tail.log2)
		tile := b.Let("tile", b.Select(inWhole, at.Rem(tiles), last.Mul(nw.Shr(lg)).Add(y.Shr(lg))))
		pos := b.Let("pos", b.Select(inWhole, at.Div(tiles).Mul(nw).Add(y), whole.Add(y.BitAnd(b.U32(1).Shl(lg).Sub(1)))))
		slot := b.Let("slot", b.Select(g.aliased, pos, b.GroupID(1)))
		g.stores = b.Let("stores", slot.Lt(nSeqs))
		entry := b.Var("entry", b.Select(g.stores, slot, nSeqs.Sub(1)).I32().Shl(planLenShift))
		b.If(g.aliased.AndAlso(g.stores), func() { entry.Set(g.plan.Load(slot)) })
		g.s = b.Let("s", entry.Get().U32().Shr(planLenShift))
		g.from = b.Let("from", entry.Get().BitAnd(planFromMask))
		g.col0 = b.Let("col0", b.Select(g.aliased, tile.Div(nw).Mul(nw.Mul(cpw)).Add(tile.Rem(nw)), g.colBlock.Mul(nw.Mul(cpw)).Add(b.LocalID(1))))
	case !g.batched:
		g.s = b.Let("s", b.GroupID(1))
	}
}

// slot sets s and stores for a batched row's slot j (sequence z + j*NS).
// Slots past n_seqs run the last sequence's inputs on a zero state, so
// that every thread reaches every barrier of the reductions, and store
// nothing.
func (g *gdn) slot(j dsl.Val) {
	b := g.b
	at := b.Let("slot", g.z.Add(j.Mul(g.ns)))
	g.stores = b.Let("stores", at.Lt(g.nSeqs))
	g.s = b.Let("s", b.Select(g.stores, at, g.nSeqs.Sub(1)))
}

// row is register row r's key index: a lane's rows blocked or strided,
// or r itself where a lane holds whole columns.
func (g *gdn) row(r dsl.Val) dsl.Val {
	if g.st.vectorRows {
		return r
	}
	if g.st.blockedRows {
		return g.lane.Mul(g.rows).Add(r)
	}
	return r.Mul(g.w).Add(g.lane)
}

// rowVar is row r's key index as a variable (r itself where a lane holds whole columns).
func (g *gdn) rowVar(r dsl.Val) dsl.Val {
	if g.st.vectorRows {
		return r
	}
	return g.b.Let("i", g.row(r))
}

// forShard runs f for each register of the shard: column c, row i, register index.
func (g *gdn) forShard(f func(c, i, reg dsl.Val)) {
	b, nw, rows := g.b, g.nw, g.rows
	if g.mode == gdnShared {
		// one loop over the registers, in the same order: upstream's
		// shorter text
		b.Unrolled("reg", 0, g.cpw.Mul(rows), func(reg dsl.Val) {
			c := b.Let("col", g.col0.Add(reg.Div(rows).Mul(nw)))
			f(c, g.rowVar(reg.Rem(rows)), reg)
		})
		return
	}
	b.Unrolled("cc", 0, g.cpw, func(cc dsl.Val) {
		c := b.Let("col", g.col0.Add(cc.Mul(nw)))
		b.Unrolled("r", 0, rows, func(r dsl.Val) {
			f(c, g.rowVar(r), cc.Mul(rows).Add(r))
		})
	})
}

// loadFrom reads the shard's prior state from buf at base.
func (g *gdn) loadFrom(buf dsl.Buf, base dsl.Val) {
	g.forShard(func(c, i, reg dsl.Val) {
		g.shard.Set(reg, buf.Load(base.Add(along(base, c.Mul(g.sv))).Add(along(base, i))))
	})
}

// zeroShard: a padding slot or warp runs on a zero state.
func (g *gdn) zeroShard() {
	g.b.Unrolled("reg", 0, g.cpw.Mul(g.rows), func(reg dsl.Val) { g.shard.Set(reg, g.b.F32(0)) })
}

// loadSource reads the prior state of a source src through state_dst
// where it lies in the window, else from the cache.
func (g *gdn) loadSource(src dsl.Val) {
	b, h, block := g.b, g.h, g.block
	b.IfElse(inWindow(src, g.rsHead, g.nSeqs),
		func() { g.loadFrom(g.stateDst, src.U32().Sub(g.rsHead).Mul(g.dstRow).Add(h.Mul(block))) },
		func() { g.loadFrom(g.state, cacheRow(src, g.nHeads).Add(h.U64()).Mul(block.U64())) })
}

// loadIds: identity reads its own slot; a source that another sequence of
// this op writes was gathered into scratch; any other source is read from
// the cache directly, since nothing in the op writes it.
func (g *gdn) loadIds() {
	b, s, h, block := g.b, g.s, g.h, g.block
	src := b.Let("src", g.ids.Load(s))
	b.IfElse(src.Eq(g.rsHead.Add(s).I32()),
		func() { g.loadFrom(g.stateDst, s.Mul(g.dstRow).Add(h.Mul(block))) },
		func() {
			b.IfElse(aliasesOtherThanSelf(g.st, b, src, s, g.rsHead, g.nSeqs),
				func() {
					b.DepWait() // scratch is the gather's output
					g.loadFrom(g.scratch, s.Mul(g.nHeads).Add(h).Mul(block))
				},
				func() { g.loadFrom(g.state, cacheRow(src, g.nHeads).Add(h.U64()).Mul(block.U64())) })
		})
}

// loadPrior reads the sequence's prior state into the shard, as the mode
// finds it (the batched kernel reads it in its first token, loadBatched).
func (g *gdn) loadPrior() {
	b, s, h, block := g.b, g.s, g.h, g.block
	switch g.mode {
	case gdnBase, gdnInplace:
		g.loadFrom(g.state, s.Mul(g.nHeads).Add(h).Mul(block))
	case gdnInplaceIds:
		g.loadIds()
	case gdnInplaceIdsChained:
		b.IfElse(g.aliased.AndAlso(readsScratch(b, g.plan, s)),
			func() { g.loadFrom(g.scratch, scratchRow(b, g.plan, s).Mul(g.nHeads).Add(h).Mul(block)) },
			func() { g.loadSource(b.Let("src", g.ids.Load(s))) })
	case gdnInplaceIdsBlocks:
		// a warp past n_seqs (where some source aliases) runs the last
		// sequence's inputs on a zero state and stores nothing
		b.IfElse(g.stores.Not(), g.zeroShard,
			func() {
				b.IfElse(g.from.Ne(0),
					func() { g.loadFrom(g.scratch, g.from.Sub(1).U32().Mul(g.nHeads).Add(h).Mul(block)) },
					func() { g.loadSource(b.Let("src", g.ids.Load(s))) })
			})
	case gdnShared:
		b.IfElse(g.withIds, g.loadIds, func() { g.loadFrom(g.state, s.Mul(g.nHeads).Add(h).Mul(block)) })
	}
}

// stagedAt is where the batched kernel stages slot j's register reg of
// its thread: ((j-1)*CPW*R + reg)*threads + tid, so that a warp's lanes
// take consecutive words. Only the thread that stages a float reads it
// back, so no barrier orders the two.
func (g *gdn) stagedAt(j, reg dsl.Val) dsl.Val {
	return j.Sub(1).Mul(g.cpw.Mul(g.rows)).Add(reg).Mul(g.threads).Add(g.tid)
}

// stagedSource: a later slot's (j > 0) source src is another sequence's
// destination, so it was staged.
func (g *gdn) stagedSource(src dsl.Val) dsl.Val {
	return src.Ge(g.rsHead.I32()).AndAlso(src.Lt(g.rsHead.Add(g.nSeqs).I32())).AndAlso(src.Ne(g.rsHead.Add(g.s).I32()))
}

// loadBatched reads slot j's prior state: the batched kernel reads it in
// the first token, after that token's inputs: loads behind the branch on
// src would otherwise wait for it (one memory latency more per workgroup).
func (g *gdn) loadBatched(j dsl.Val) func() {
	return func() {
		b := g.b
		b.IfElse(g.stores.Not(), g.zeroShard,
			func() {
				src := b.Let("src", g.ids.Load(g.s))
				b.IfElse(j.Gt(0).AndAlso(g.stagedSource(src)),
					func() {
						b.Unrolled("reg", 0, g.cpw.Mul(g.rows), func(reg dsl.Val) { g.shard.Set(reg, g.staged.At(g.stagedAt(j, reg))) })
					},
					func() { g.loadSource(src) })
			})
	}
}

// runSlots runs a batched row's SPT slots: first each later slot's source
// that another sequence writes is staged, then the slots in order, slot 0
// behind a device barrier before any thread writes.
func (g *gdn) runSlots() {
	b, ns, nSeqs := g.b, g.ns, g.nSeqs
	b.Comment("stage each later slot's source that is another sequence's destination, before any slot writes")
	b.Unrolled("j", 1, g.spt, func(j dsl.Val) {
		g.slot(j)
		b.If(g.stores, func() {
			src := b.Let("later_src", g.ids.Load(g.s)) // the prior-state loads keep the name src
			b.If(g.stagedSource(src), func() {
				base := b.Let("src_off", src.U32().Sub(g.rsHead).Mul(g.dstRow).Add(g.h.Mul(g.block)))
				g.forShard(func(c, i, reg dsl.Val) {
					g.staged.Set(g.stagedAt(j, reg), g.stateDst.Load(base.Add(c.Mul(g.sv)).Add(i)))
				})
			})
		})
	})
	// A loop, not unrolled: the slots' code once, not SPT times;
	// unrolled ran no faster (bench/RESULTS.md calls 14 and 15).
	b.For("j", 0, g.spt, func(j dsl.Val) {
		b.If(j.Mul(ns).Lt(nSeqs), func() { // uniform: a slot past every sequence is skipped whole
			g.slot(j)
			g.slotJ = j
			g.sq = b.Let("sq", g.s.Div(g.rq3))
			b.Comment("no tokens: the final state is the prior state")
			b.If(g.nTok.Eq(0), g.loadBatched(j))
			b.For("t", 0, g.nTok, g.token)
			b.If(j.Eq(0), func() {
				b.Comment("every thread of the workgroup has read slot 0's prior state and staged the later slots'")
				b.DeviceBarrier()
			})
			b.If(g.stores, func() {
				base := b.Let("final_off", g.s.Mul(g.dstRow).Add(g.h.Mul(g.block)))
				g.forShard(func(c, i, reg dsl.Val) { g.stateDst.Store(base.Add(c.Mul(g.sv)).Add(i), g.shard.At(reg)) })
			})
		})
	})
}

// storeFinal writes the sequence's final state: into dst's state region
// (the base op without snapshots), else into state_dst, once every reader
// of the row is done.
func (g *gdn) storeFinal() {
	b, s, h, block := g.b, g.s, g.h, g.block
	b.Comment("write the final state")
	if g.mode == gdnBase {
		b.If(g.keepRS.Not(), func() {
			base := b.Let("final_off", g.stateOff.Add(s.Mul(g.nHeads).Add(h).Mul(block)))
			g.forShard(func(c, i, reg dsl.Val) { g.dst.Store(base.Add(c.Mul(g.sv)).Add(i), g.shard.At(reg)) })
		})
		return
	}
	switch g.mode {
	case gdnInplaceIds:
		// The gather may still be reading this row as another sequence's source.
		b.DepWait()
	case gdnShared:
		// With IDS the gather may still be reading this row as another sequence's source.
		b.If(g.withIds, func() { b.DepWait() })
	case gdnInplaceIdsBlocks:
		b.If(g.aliased, func() {
			b.Comment("every warp of the block has read its prior state")
			b.DeviceBarrier()
		})
	}
	storeIf(b, g.stores, func() {
		base := b.Let("final_off", s.Mul(g.dstRow).Add(h.Mul(block)))
		g.forShard(func(c, i, reg dsl.Val) { g.stateDst.Store(base.Add(c.Mul(g.sv)).Add(i), g.shard.At(reg)) })
	})
}

// tok is one token's inputs as the recurrence reads them.
type tok struct {
	t                       dsl.Val
	gOff, betaT, vOff, attn dsl.Val // attn: attn_off, where the token's attention goes
	q, k                    dsl.Arr // the q and k rows, in registers
}

// token is the per-token core (docs/ops.md#gdn): q and k rows into
// registers, then per column the gate, kv = S.k, delta = (v - kv)*beta,
// S += k*delta, attn = S.q, in the order the contract's style writes it.
func (g *gdn) token(t dsl.Val) {
	b, s, h, st := g.b, g.s, g.h, g.st
	tk := tok{t: t}
	tk.q = b.Array("q_reg", ir.F32, g.rows)
	tk.k = b.Array("k_reg", ir.F32, g.rows)
	qk := b.Let("qk_off", g.sq.Mul(g.sq3).Add(t.Mul(g.sq2)).Add(g.hq.Mul(g.sq1)))
	b.Unrolled("r", 0, g.rows, func(r dsl.Val) {
		i := g.rowVar(r)
		tk.q.Set(r, g.q.Load(qk.Add(i)))
		tk.k.Set(r, g.k.Load(qk.Add(i)))
	})
	tk.gOff = b.Let("g_off", s.Mul(g.sg3).Add(t.Mul(g.sg2)).Add(h.Mul(g.sg1)))
	tk.betaT = b.Let("beta_t", g.beta.Load(s.Mul(g.sb3).Add(t.Mul(g.sb2)).Add(h.Mul(g.sb1))))
	if g.batched {
		b.Comment("read the prior state once, behind this token's inputs; it stays in registers for every token")
		b.If(t.Eq(0), g.loadBatched(g.slotJ))
	}
	tk.vOff = b.Let("v_off", s.Mul(g.sv3).Add(t.Mul(g.sv2)).Add(h.Mul(g.sv1)))
	tk.attn = b.Let("attn_off", s.Mul(g.nTok).Add(t).Mul(g.nHeads).Add(h).Mul(g.sv))

	if st.vectorRows {
		// One decay loop for both gates: the scalar gate fills every
		// row's slot (the products are the same).
		gates := b.Array("gates", ir.F32, g.rows)
		b.IfElse(g.kda, func() {
			b.Unrolled("r", 0, g.rows, func(r dsl.Val) { gates.Set(r, st.exp(b, g.gate.Load(tk.gOff.Add(r)))) })
		}, func() {
			e := st.letExp(b, "gate", g.gate.Load(tk.gOff))
			b.Unrolled("r", 0, g.rows, func(r dsl.Val) { gates.Set(r, e) })
		})
		g.vecDecayFirst(tk, func(r dsl.Val) dsl.Val { return gates.At(r) })
		return
	}
	kdaGate := func() {
		gReg := b.Array("g_reg", ir.F32, g.rows)
		b.Comment("KDA: one gate per key row")
		b.Unrolled("r", 0, g.rows, func(r dsl.Val) {
			gReg.Set(r, st.exp(b, g.gate.Load(tk.gOff.Add(g.row(r)))))
		})
		g.decayFirst(tk, func(r dsl.Val) dsl.Val { return gReg.At(r) })
	}
	if st.gateAfterReduce {
		kdaGate = func() { g.kdaInDot(tk) }
	}
	b.IfElse(g.kda, kdaGate, func() {
		ga := st.letExp(b, "gate", g.gate.Load(tk.gOff))
		if st.gateAfterReduce {
			g.gateAfter(tk, ga)
		} else if st.gateOnPartial {
			g.gateOnPart(tk, ga)
		} else {
			g.decayFirst(tk, func(dsl.Val) dsl.Val { return ga })
		}
	})
}

// columns runs f for each of the lane's CPW columns: its index c and its
// first register reg0.
func (g *gdn) columns(f func(c, reg0 dsl.Val)) {
	b := g.b
	b.Unrolled("cc", 0, g.cpw, func(cc dsl.Val) {
		c := b.Let("col", g.col0.Add(cc.Mul(g.nw)))
		reg0 := b.Let("reg0", cc.Mul(g.rows))
		f(c, reg0)
	})
}

// storeAttn reduces column c's partial attention over the lanes and
// stores it, scaled.
func (g *gdn) storeAttn(tk tok, c, partial dsl.Val) {
	b := g.b
	attn := b.Reduce("attn", partial, g.w, g.st.order)
	b.If(and(g.lane.Eq(0), g.stores), func() { g.dst.Store(tk.attn.Add(c), attn.Mul(g.scale)) })
}

// snapshot: the base op with KEEP_RS writes the state after token t to
// snapshot slot n_tokens-1-t where that is one of the K kept.
func (g *gdn) snapshot(tk tok, c, reg dsl.Val) {
	if g.slots {
		g.slotInPlace(tk, c, reg)
		return
	}
	if g.mode != gdnBase {
		return
	}
	b, s, h, block := g.b, g.s, g.h, g.block
	b.If(g.keepRS, func() {
		slot := b.Let("slot", g.nTok.Sub(1).Sub(tk.t))
		b.If(slot.Lt(g.nSnap), func() {
			base := b.Let("snap_off", g.stateOff.Add(slot.Mul(g.nSeqs).Mul(g.nHeads).Mul(block)))
			b.Unrolled("r", 0, g.rows, func(r dsl.Val) {
				g.dst.Store(base.Add(s.Mul(g.nHeads).Add(h).Mul(block)).Add(c.Mul(g.sv)).Add(g.row(r)), g.shard.At(reg.Add(r)))
			})
		})
	})
}

// slotInPlace: op B with K > 1 writes the state after token t to slot
// n_tokens-1-t of state_dst (rows slot*ss further) where 1 <= slot < K;
// slot 0 is the final state, stored after the gather's wait. Slots >= 1
// lie past the rows ids name (llama's cells, [0, mem_size)), so no gather
// reads what these early stores write (docs/fusion.md#snapshots).
func (g *gdn) slotInPlace(tk tok, c, reg dsl.Val) {
	b, s, h, block := g.b, g.s, g.h, g.block
	slot := b.Let("slot", g.nTok.Sub(1).Sub(tk.t))
	b.If(and(slot.Ge(1), slot.Lt(g.nSnap)), func() {
		storeIf(b, g.stores, func() {
			base := b.Let("snap_off", slot.Mul(g.slotStride).Add(s.Mul(g.dstRow)).Add(h.Mul(block)))
			b.Unrolled("r", 0, g.rows, func(r dsl.Val) {
				g.stateDst.Store(base.Add(c.Mul(g.sv)).Add(g.row(r)), g.shard.At(reg.Add(r)))
			})
		})
	})
}

// vecDecayFirst (vectorRows): a lane holds its columns whole, so each dot
// is one VecDot over the column and the row of k or q.
func (g *gdn) vecDecayFirst(tk tok, gate func(r dsl.Val) dsl.Val) {
	b, st, rows, shard := g.b, g.st, g.rows, g.shard
	g.columns(func(c, reg0 dsl.Val) {
		b.Unrolled("r", 0, rows, func(r dsl.Val) { shard.Set(reg0.Add(r), gate(r).Mul(shard.At(reg0.Add(r)))) })
		kv := b.Let("kv", b.VecDot(shard.From(reg0), tk.k.From(0), rows))
		delta := b.Let("delta", g.v.Load(tk.vOff.Add(c)).Sub(kv).Mul(tk.betaT))
		b.Unrolled("r", 0, rows, func(r dsl.Val) {
			shard.Set(reg0.Add(r), st.madd(b, tk.k.At(r), delta, shard.At(reg0.Add(r))))
		})
		attn := b.Let("attn", b.VecDot(shard.From(reg0), tk.q.From(0), rows))
		storeIf(b, g.stores, func() { g.dst.Store(tk.attn.Add(c), attn.Mul(g.scale)) })
		g.snapshot(tk, c, reg0)
	})
}

// decayFirst: S' = gate*S, kv = sum S'*k, delta = (v - kv)*beta,
// S = S' + k*delta, attn = sum S*q (docs/ops.md#gdn as written).
func (g *gdn) decayFirst(tk tok, gate func(r dsl.Val) dsl.Val) {
	b, st, rows, shard := g.b, g.st, g.rows, g.shard
	g.columns(func(c, reg0 dsl.Val) {
		kv := b.Var("kv_part", b.F32(0))
		b.Unrolled("r", 0, rows, func(r dsl.Val) {
			sd := b.Let("s_dec", gate(r).Mul(shard.At(reg0.Add(r))))
			shard.Set(reg0.Add(r), sd)
			kv.Set(st.madd(b, sd, tk.k.At(r), kv.Get()))
		})
		kvSum := b.Reduce("kv", kv.Get(), g.w, st.order)
		delta := b.Let("delta", g.v.Load(tk.vOff.Add(c)).Sub(kvSum).Mul(tk.betaT))
		at := b.Var("attn_part", b.F32(0))
		b.Unrolled("r", 0, rows, func(r dsl.Val) {
			sn := b.Let("s_new", st.madd(b, tk.k.At(r), delta, shard.At(reg0.Add(r))))
			shard.Set(reg0.Add(r), sn)
			at.Set(st.madd(b, sn, tk.q.At(r), at.Get()))
		})
		g.storeAttn(tk, c, at.Get())
		g.snapshot(tk, c, reg0)
	})
}

// gateAfter (CUDA/SYCL scalar gate): kv on the undecayed state,
// delta = (v - g*kv)*beta, S = g*S + k*delta.
func (g *gdn) gateAfter(tk tok, ga dsl.Val) {
	b, st, rows, shard := g.b, g.st, g.rows, g.shard
	g.columns(func(c, reg0 dsl.Val) {
		kv := b.Var("kv_part", b.F32(0))
		b.Unrolled("r", 0, rows, func(r dsl.Val) {
			kv.Set(st.madd(b, shard.At(reg0.Add(r)), tk.k.At(r), kv.Get()))
		})
		kvSum := b.Reduce("kv", kv.Get(), g.w, st.order)
		delta := b.Let("delta", g.v.Load(tk.vOff.Add(c)).Sub(ga.Mul(kvSum)).Mul(tk.betaT))
		at := b.Var("attn_part", b.F32(0))
		b.Unrolled("r", 0, rows, func(r dsl.Val) {
			sn := b.Let("s_new", ga.Mul(shard.At(reg0.Add(r))).Add(tk.k.At(r).Mul(delta)))
			shard.Set(reg0.Add(r), sn)
			at.Set(st.madd(b, sn, tk.q.At(r), at.Get()))
		})
		g.storeAttn(tk, c, at.Get())
		g.snapshot(tk, c, reg0)
	})
}

// kdaInDot is ggml-cuda's KDA arithmetic with the contractions nvcc
// chooses for the series kernel pinned as explicit fmas (read off its
// PTX under -use_fast_math, docs/arithmetic.md#cuda-kda): kv += fma(e_i*S, k, kv) in
// the dot; in the update, with one row per lane (S_v <= 32) nvcc reuses
// the dot's e_i*S and fuses k*delta, S = fma(k, delta, e_i*S); with more
// rows it recomputes and fuses the gate, S = fma(e_i, S, k*delta). Pinned,
// the generated kernel's bits no longer depend on nvcc's scheduling.
func (g *gdn) kdaInDot(tk tok) {
	b, st, rows, shard := g.b, g.st, g.rows, g.shard
	b.Comment("KDA: one gate per key row, applied inside the dot and the update")
	gate := func(r dsl.Val) dsl.Val { return b.ExpNative(g.gate.Load(tk.gOff.Add(g.row(r)))) }
	g.columns(func(c, reg0 dsl.Val) {
		kv := b.Var("kv_part", b.F32(0))
		b.Unrolled("r", 0, rows, func(r dsl.Val) {
			kv.Set(b.FMA(gate(r).Mul(shard.At(reg0.Add(r))), tk.k.At(r), kv.Get()))
		})
		kvSum := b.Reduce("kv", kv.Get(), g.w, st.order)
		delta := b.Let("delta", g.v.Load(tk.vOff.Add(c)).Sub(kvSum).Mul(tk.betaT))
		at := b.Var("attn_part", b.F32(0))
		b.Unrolled("r", 0, rows, func(r dsl.Val) {
			sn := b.Var("s_new", b.F32(0))
			b.IfElse(rows.Eq(1),
				func() { sn.Set(b.FMA(tk.k.At(r), delta, gate(r).Mul(shard.At(reg0.Add(r))))) },
				func() { sn.Set(b.FMA(gate(r), shard.At(reg0.Add(r)), tk.k.At(r).Mul(delta))) })
			shard.Set(reg0.Add(r), sn.Get())
			at.Set(st.madd(b, sn.Get(), tk.q.At(r), at.Get()))
		})
		g.storeAttn(tk, c, at.Get())
		g.snapshot(tk, c, reg0)
	})
}

// gateOnPart (ggml-opencl scalar gate): each lane's partial dot of the
// undecayed state times g, then the reduction; S = g*S + k*delta.
func (g *gdn) gateOnPart(tk tok, ga dsl.Val) {
	b, st, rows, shard := g.b, g.st, g.rows, g.shard
	g.columns(func(c, reg0 dsl.Val) {
		kv := b.Var("kv_part", b.F32(0))
		b.Unrolled("r", 0, rows, func(r dsl.Val) {
			kv.Set(st.madd(b, shard.At(reg0.Add(r)), tk.k.At(r), kv.Get()))
		})
		kvSum := b.Reduce("kv", kv.Get().Mul(ga), g.w, st.order)
		delta := b.Let("delta", g.v.Load(tk.vOff.Add(c)).Sub(kvSum).Mul(tk.betaT))
		at := b.Var("attn_part", b.F32(0))
		b.Unrolled("r", 0, rows, func(r dsl.Val) {
			sn := b.Let("s_new", st.madd(b, tk.k.At(r), delta, ga.Mul(shard.At(reg0.Add(r)))))
			shard.Set(reg0.Add(r), sn)
			at.Set(st.madd(b, sn, tk.q.At(r), at.Get()))
		})
		g.storeAttn(tk, c, at.Get())
		g.snapshot(tk, c, reg0)
	})
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
