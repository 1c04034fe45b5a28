package ops

import (
	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
)

// convThreads is the workgroup size of the conv kernels: one thread per
// channel, as ggml-cuda's conv kernels use.
const convThreads = 128

// convTaps sums win[j]*w(j) for j ascending (oldest tap first, current token
// last), in the way the contract's plain conv does (docs/arithmetic.md#conv-order).
func convTaps(b *dsl.Builder, st style, dconv dsl.Val, win func(j any) dsl.Val, w func(j dsl.Val) dsl.Val) dsl.Val {
	y := b.Var("y", b.F32(0))
	ascending := func() {
		b.Unrolled("j", 0, dconv, func(j dsl.Val) { y.Set(st.convMadd(b, win(j), w(j), y.Get())) })
	}
	if st.convDot4 == nil {
		ascending()
	} else {
		b.IfElse(st.convDot4(dconv), func() {
			b.Unrolled("j4", 0, dconv.Div(4), func(j4 dsl.Val) {
				j := b.Let("j", j4.Mul(4))
				var x, c [4]dsl.Val
				for n := 0; n < 4; n++ {
					x[n] = win(j.Add(n))
					c[n] = w(j.Add(n))
				}
				y.Set(y.Get().Add(b.Dot4(x, c)))
			})
		}, ascending)
	}
	if st.convZero {
		// CUDA's plain conv adds its (zero) bias; it turns -0 into +0.
		b.Comment("as the plain kernel's zero bias: -0 becomes +0, so the result equals it bit for bit")
		y.Set(y.Get().Add(b.F32(0)))
	}
	return y.Get()
}

// convEarlyLaunchMax is the most sequences at which the update kernels let
// the next dispatch start before they end (DepRelease, CUDA's
// launch_dependents). Every workgroup signals it, and its workgroups live
// about a microsecond: on the H200 (bench/RESULTS.md, graph replay) op C
// took 10.32 us with it against 8.46 without at C 8192 and 128 sequences
// (20.15 against 17.30 at 256, 3.52 against 2.88 at 32), while at 1..8
// sequences the early start is worth up to 0.10 us to op C alone and up
// to 0.3 us to one layer's step, where the GDN dispatch follows.
const convEarlyLaunchMax = 16

// buildSSMConv is the plain depthwise causal conv (docs/ops.md#conv), the non-fused
// path the update kernels must agree with.
func buildSSMConv(name string, a ir.Arith) (*ir.Kernel, error) {
	st := styleOf(a)
	b := dsl.New(name, a)
	dconv := b.Param("d_conv", ir.U32, 2, 3, 4, 5, 6, 7, 8)
	nCh := b.Arg("n_ch", ir.U32, "channels")
	nT := b.Arg("n_t", ir.U32, "output tokens")
	nS := b.Arg("n_s", ir.U32, "sequences")
	sx1 := b.Arg("sx1", ir.U32, "sx channel stride, elements")
	sx2 := b.Arg("sx2", ir.U32, "sx sequence stride, elements")
	w1 := b.Arg("w1", ir.U32, "conv kernel channel stride, elements")
	d1 := b.Arg("d1", ir.U32, "dst token stride, elements")
	d2 := b.Arg("d2", ir.U32, "dst sequence stride, elements")
	sx := b.Buffer("sx", ir.F32, ir.Read, "src0", "[d_conv-1+n_t, n_ch, n_s]")
	wk := b.Buffer("conv_kernel", ir.F32, ir.Read, "src1", "[d_conv, n_ch]")
	dst := b.Buffer("dst", ir.F32, ir.Write, "dst", "[n_ch, n_t, n_s]")
	b.Workgroup(convThreads, 1, 1)
	b.Grid(nCh.Add(convThreads-1).Div(convThreads), nT, nS)

	b.DepRelease()
	b.DepWait()
	c := b.Let("c", b.GroupID(0).Mul(convThreads).Add(b.LocalID(0)))
	t := b.Let("t", b.GroupID(1))
	s := b.Let("s", b.GroupID(2))
	b.If(c.Lt(nCh), func() {
		win := b.Array("window", ir.F32, dconv)
		base := b.Let("x_off", s.Mul(sx2).Add(c.Mul(sx1)).Add(t))
		b.Unrolled("j", 0, dconv, func(j dsl.Val) { win.Set(j, sx.Load(base.Add(j))) })
		y := convTaps(b, st, dconv, win.At, func(j dsl.Val) dsl.Val { return wk.Load(c.Mul(w1).Add(j)) })
		dst.Store(s.Mul(d2).Add(t.Mul(d1)).Add(c), y)
	})
	return b.Build()
}

// convBatchChannels is the channels of a batched op D workgroup, each with
// a row of NS threads (one per sequence).
const convBatchChannels = 32

type convMode int

const (
	convPlain      convMode = iota // op C
	convIds                        // op D: gather, then this
	convIdsBatched                 // op D in one dispatch (as gdnInplaceIdsBatched)
	convShared                     // ops C and D in one kernel, picked by IDS (as gdnShared)
	convIdsChained                 // op D's compute kernel in the chained schedule (as gdnInplaceIdsChained)
)

// buildConvUpdate is op C and op D: the window is the d_conv-1 cached taps
// of the sequence followed by the current token; the output is the conv
// (SiLU folded when SILU), and the window shifted by one is written back as
// the new taps (docs/ops.md#fused-ops). Batched, op D runs in one dispatch for
// n_seqs <= NS where conv_state_dst is the cache's window: a workgroup holds
// every sequence of its channels (taps alias element for element, like GDN
// state), reads every window, passes a device barrier, then writes.
func buildConvUpdate(name string, mode convMode, a ir.Arith) (*ir.Kernel, error) {
	return buildConvUpdateOf(name, mode, false, a)
}

// buildConvSlots is op D over n_t tokens per sequence that also writes K
// snapshot slots of taps in place (ConvSlotsOp, the graph fusion's).
func buildConvSlots(name string, a ir.Arith) (*ir.Kernel, error) {
	return buildConvUpdateOf(name, convIds, true, a)
}

// buildConvUpdateOf builds mode; with slots (convIds or convShared only)
// the window rolls over n_t tokens (x_cur and dst [n_ch, n_t,
// n_seqs]) and after token t the window's last d_conv-1 taps go to slot
// n_t-1-t where that is < K: slot 0 into the ring after the gather's wait,
// as op D's write; slots >= 1 at slot*ss past it before, rows llama's ids
// never name (docs/fusion.md#snapshots).
func buildConvUpdateOf(name string, mode convMode, slots bool, a ir.Arith) (*ir.Kernel, error) {
	st := styleOf(a)
	b := dsl.New(name, a)
	shared := mode == convShared
	withIds, batched, chained := mode != convPlain, mode == convIdsBatched, mode == convIdsChained
	dconv := b.Param("d_conv", ir.U32, 2, 3, 4, 5, 6, 7, 8)
	silu := b.Param("SILU", ir.Bool)
	var idsFlag dsl.Val // the ids op's parts of a Shared kernel run where this is true
	if shared {
		idsFlag = b.Param(sharedFlag, ir.Bool)
	}
	var ns dsl.Val
	if batched {
		ns = b.Param("NS", ir.U32, 2, 4, 8, 16, 32)
	}
	nCh := b.Arg("n_ch", ir.U32, "channels")
	nSeqs := b.Arg("n_seqs", ir.U32, "sequences")
	cs1 := b.Arg("cs1", ir.U32, "conv_states / cache / scratch channel stride, elements")
	cs2 := b.Arg("cs2", ir.U32, "conv_states / cache / scratch row stride, elements")
	w1 := b.Arg("w1", ir.U32, "conv kernel channel stride, elements")
	x2 := b.Arg("x2", ir.U32, "x_cur sequence stride, elements")
	sd1 := b.Arg("sd1", ir.U32, "conv_state_dst row stride, elements")
	d2 := b.Arg("d2", ir.U32, "dst sequence stride, elements")
	var rsHead, nRows dsl.Val
	if withIds {
		rsHead = b.Arg("rs_head", ir.U32, "first destination slot (op_params[1])")
	}
	// ggml-cpu's upstream kernel (the Shared one) stops on an id past the cache
	checksIds := shared && st.checksIds
	if checksIds {
		nRows = cacheRowsArg(b)
	}
	roll, tokens := &convRoll{b: b, st: st}, "1"
	if slots {
		tokens = roll.declareArgs()
	}
	var states, ids, scratch dsl.Buf
	if shared {
		states = b.Buffer("conv_states", ir.F32, ir.Read, "src0", "prior taps [d_conv-1, n_ch, n_seqs]; with IDS the full conv cache [d_conv-1, n_ch, n_cells]")
	} else if withIds {
		states = b.Buffer("cache", ir.F32, ir.Read, "src0", "the full conv cache [d_conv-1, n_ch, n_cells]")
	} else {
		states = b.Buffer("conv_states", ir.F32, ir.Read, "src0", "prior taps [d_conv-1, n_ch, n_seqs]")
	}
	wk := b.Buffer("conv_kernel", ir.F32, ir.Read, "src1", "[d_conv, n_ch]")
	xCur := b.Buffer("x_cur", ir.F32, ir.Read, "src2", "[n_ch, "+tokens+", n_seqs]")
	dstAccess := ir.Write
	if withIds {
		dstAccess = ir.ReadWrite
	}
	stateDst := b.Buffer("conv_state_dst", ir.F32, dstAccess, "src3", "in-place taps, rows of (d_conv-1)*n_ch")
	if withIds {
		ids = b.Buffer("ids", ir.I32, ir.Read, "src4", "source slot of each sequence")
	}
	if mode == convIds || shared {
		scratch = b.Buffer("scratch", ir.F32, ir.Read, "scratch", "gathered taps of sequences whose source is another's destination, rows of cs2").Prior()
	}
	var plan dsl.Buf
	if chained {
		scratch = b.Buffer("scratch", ir.F32, ir.Read, "scratch", "taps of the sequences the plan marks, copied by the chain gather, rows of cs2").Prior()
		plan = b.Buffer("plan", ir.I32, ir.Read, "plan", "the chain plan: len << 16 | from per sequence").Prior()
	}
	dst := b.Buffer("dst", ir.F32, ir.Write, "dst", "[n_ch, "+tokens+", n_seqs]")
	if batched {
		b.Workgroup(convBatchChannels, ns, 1)
		b.Grid(nCh.Add(convBatchChannels-1).Div(convBatchChannels), 1, 1)
	} else if st.vectorRows {
		b.Workgroup(1, 1, 1)
		b.Grid(nCh.Add(convThreads-1).Div(convThreads), nSeqs, 1)
	} else {
		b.Workgroup(convThreads, 1, 1)
		b.Grid(nCh.Add(convThreads-1).Div(convThreads), nSeqs, 1)
	}

	// The next dispatch may start early only up to convEarlyLaunchMax
	// sequences; as for GDN, op D's compute waits for its gather only
	// where it must.
	b.If(nSeqs.Le(b.U32(convEarlyLaunchMax)), func() { b.DepRelease() })
	switch mode {
	case convIds, convIdsChained:
		waitWithoutGather(b, nSeqs)
	case convShared:
		b.If(idsFlag.Not().OrElse(nSeqs.Lt(b.U32(uint32(gatherGuard.Min)))), func() { b.DepWait() })
	default:
		b.DepWait()
	}
	// vectorRows (ggml-cpu): one lane runs a block of convThreads channels,
	// so that the block's SiLU is one VecSilu, aligned as the row's is.
	rowBlock := st.vectorRows && !batched
	var c0, s dsl.Val
	stores := b.Bool(true)
	if batched {
		// Rows past n_seqs run the last sequence again and store nothing.
		c0 = b.Let("c", b.GroupID(0).Mul(convBatchChannels).Add(b.LocalID(0)))
		z := b.Let("z", b.LocalID(1))
		stores = b.Let("stores", z.Lt(nSeqs))
		s = b.Let("s", b.Select(stores, z, nSeqs.Sub(1)))
	} else if rowBlock {
		c0 = b.Let("c0", b.GroupID(0).Mul(convThreads))
	} else {
		c0 = b.Let("c", b.GroupID(0).Mul(convThreads).Add(b.LocalID(0)))
	}
	var member dsl.Mut  // the chained kernel's current sequence
	var aliased dsl.Val // the chained kernel: some source aliases (it reads the plan)
	if !batched && !chained {
		s = b.Let("s", b.GroupID(1))
	}
	taps := b.Let("taps", dconv.Sub(1))
	var win dsl.Arr
	if batched {
		// Declared here: the window is written back after the barrier.
		win = b.Array("window", ir.F32, dconv)
	}
	var act dsl.Arr
	var blockLen dsl.Val
	if rowBlock {
		left := b.Let("left", nCh.Sub(c0))
		blockLen = b.Let("block_len", b.Select(left.Lt(convThreads), left, b.U32(convThreads)))
		act = b.Array("act", ir.F32, convThreads)
	}
	ringOff := func(c dsl.Val) dsl.Val { return b.Let("ring_off", s.Mul(sd1).Add(c.Mul(taps))) }
	waitGather := func() { convWaitGather(b, shared, withIds && !chained, idsFlag) }
	blockWins := rowBlock && slots // convRoll.block
	roll.dconv, roll.taps, roll.silu, roll.s, roll.c0, roll.x2, roll.d2, roll.w1 = dconv, taps, silu, s, c0, x2, d2, w1
	roll.xCur, roll.wk, roll.dst, roll.stateDst, roll.win, roll.act, roll.block, roll.ringOff = xCur, wk, dst, stateDst, &win, &act, blockWins, ringOff
	channel := func(c dsl.Val) {
		if !batched && !blockWins {
			win = b.Array("window", ir.F32, dconv)
		}
		b.Comment("%s", windowNote(slots))
		var ring dsl.Val
		if !batched {
			ring = ringOff(c)
		}
		loadTaps := func(buf dsl.Buf, base dsl.Val) {
			b.Unrolled("j", 0, taps, func(j dsl.Val) { win.Set(roll.at(c, j), buf.Load(base.Add(along(base, j)))) })
		}
		if batched {
			// A source inside the window is read through conv_state_dst,
			// the binding the writes use (see gdnInplaceIdsBatched).
			src := b.Let("src", ids.Load(s))
			inWindow := src.Ge(rsHead.I32()).AndAlso(src.Lt(rsHead.Add(nSeqs).I32()))
			b.IfElse(inWindow,
				func() { loadTaps(stateDst, src.U32().Sub(rsHead).Mul(sd1).Add(c.Mul(taps))) },
				func() { loadTaps(states, cacheRow(src, cs2).Add(c.Mul(cs1).U64())) })
		} else {
			// Identity reads its own ring; a source another sequence writes
			// was gathered into scratch; any other source is read in place.
			loadIds := func() {
				src := b.Let("src", ids.Load(s))
				b.IfElse(src.Eq(rsHead.Add(s).I32()),
					func() { loadTaps(stateDst, ring) },
					func() {
						b.IfElse(aliasesOtherThanSelf(st, b, src, s, rsHead, nSeqs),
							func() {
								b.DepWait() // scratch is the gather's output
								loadTaps(scratch, s.Mul(cs2).Add(c.Mul(cs1)))
							},
							func() {
								if checksIds {
									assertRow(b, src, nRows)
								}
								loadTaps(states, cacheRow(src, cs2).Add(c.Mul(cs1).U64()))
							})
					})
			}
			loadOwn := func() { loadTaps(states, s.Mul(cs2).Add(c.Mul(cs1))) }
			loadChained := func() {
				b.IfElse(aliased.AndAlso(readsScratch(b, plan, s)),
					func() { loadTaps(scratch, scratchRow(b, plan, s).Mul(cs2).Add(c.Mul(cs1))) },
					func() {
						src := b.Let("src", ids.Load(s))
						b.IfElse(inWindow(src, rsHead, nSeqs),
							func() { loadTaps(stateDst, src.U32().Sub(rsHead).Mul(sd1).Add(c.Mul(taps))) },
							func() { loadTaps(states, cacheRow(src, cs2).Add(c.Mul(cs1).U64())) })
					})
			}
			switch {
			case chained:
				loadChained()
			case shared:
				b.IfElse(idsFlag, loadIds, loadOwn)
			case withIds:
				loadIds()
			default:
				loadOwn()
			}
		}
		switch {
		case blockWins: // the tokens run over the block (sequence)
			return
		case slots:
			roll.tokens(c, ring, waitGather)
			return
		}
		win.Set(taps, xCur.Load(s.Mul(x2).Add(c)))
		y := convTaps(b, st, dconv, win.At, func(j dsl.Val) dsl.Val { return wk.Load(c.Mul(w1).Add(j)) })
		switch {
		case rowBlock:
			b.IfElse(silu, func() { act.Set(c.Sub(c0), y) }, func() { dst.Store(s.Mul(d2).Add(c), y) })
		case batched:
			out := b.Var("out", y)
			b.If(silu, func() { out.Set(st.silu(b, y)) })
			b.If(stores, func() { dst.Store(s.Mul(d2).Add(c), out.Get()) })
			return
		default:
			out := b.Var("out", y)
			b.If(silu, func() { out.Set(st.silu(b, y)) })
			dst.Store(s.Mul(d2).Add(c), out.Get())
		}
		waitGather()
		b.Comment("shift the window by one token into the ring")
		b.Unrolled("j", 0, taps, func(j dsl.Val) { stateDst.Store(ring.Add(j), win.At(j.Add(1))) })
	}
	sequence := func() {
		if chained {
			s = b.Let("s", member.Get())
		}
		if blockWins {
			roll.blockTokens(blockLen, channel, waitGather)
		} else if rowBlock {
			b.For("c", c0, c0.Add(blockLen), channel)
			b.If(silu, func() { b.VecSilu(dst.From(s.Mul(d2).Add(c0)), act.From(0), blockLen) })
		} else {
			b.If(c0.Lt(nCh), func() { channel(c0) })
		}
	}
	if chained {
		threads := b.U32(convThreads)
		if st.vectorRows {
			threads = b.U32(1)
		}
		runSegments(b, plan, ids, rsHead, nSeqs, b.LocalID(0), threads, "ring", &aliased, &member, dsl.Val{},
			func() dsl.Val { sequence(); return s })
	} else {
		sequence()
	}
	if batched {
		b.Comment("every thread of the workgroup has read its window")
		b.DeviceBarrier()
		b.If(c0.Lt(nCh).AndAlso(stores), func() {
			b.Comment("shift the window by one token into the ring")
			ring := ringOff(c0)
			b.Unrolled("j", 0, taps, func(j dsl.Val) { stateDst.Store(ring.Add(j), win.At(j.Add(1))) })
		})
	}
	return b.Build()
}

// windowNote is the comment on assembling a window: with slots the tokens
// enter it one by one.
func windowNote(slots bool) string {
	if slots {
		return "assemble the window before any write: cached taps, then the tokens one by one"
	}
	return "assemble the whole window before any write: cached taps, then the current token"
}

// convWaitGather waits, before a ring is written, for the gather that may
// still read it as another sequence's source: the ids op (ids), or the
// shared kernel's where its flag picks that op.
func convWaitGather(b *dsl.Builder, shared, ids bool, idsFlag dsl.Val) {
	switch {
	case shared:
		// With IDS the gather may still be reading this ring as another sequence's source.
		b.If(idsFlag, func() { b.DepWait() })
	case ids:
		// The gather may still be reading this ring as another sequence's source.
		b.DepWait()
	}
}

// convRoll is op D with slots' rolling window (buildConvUpdateOf): each
// token's conv over the window, the slot stores and the shift. win and
// act are the builder's arrays, declared where the schedule needs them.
type convRoll struct {
	b                                                           *dsl.Builder
	st                                                          style
	dconv, taps, silu, s, c0, nT, x1, x2, d1, d2, w1, nSnap, ss dsl.Val
	xCur, wk, dst, stateDst                                     dsl.Buf
	win, act                                                    *dsl.Arr
	// block (vectorRows): the tokens run over the block of channels,
	// channel c's window in one array at (c-c0)*d_conv
	block   bool
	ringOff func(c dsl.Val) dsl.Val
}

// declareArgs declares the args of the slots (after op D's), and returns
// the tokens x_cur and dst hold. The graph fusion (ops/fusion) runs
// llama.cpp's MTP step: n_t tokens, the taps after each of the last K
// kept as slots.
func (r *convRoll) declareArgs() string {
	b := r.b
	r.nT = b.Arg("n_t", ir.U32, "tokens per sequence")
	r.x1 = b.Arg("x1", ir.U32, "x_cur token stride, elements")
	r.d1 = b.Arg("d1", ir.U32, "dst token stride, elements")
	r.nSnap = b.Arg("K", ir.U32, "snapshot slots written into conv_state_dst (1: the last taps only)")
	r.ss = b.Arg("ss", ir.U32, "conv_state_dst snapshot slot stride, elements (slot i at i*ss)")
	return "n_t"
}

// at is tap j of channel c's window.
func (r *convRoll) at(c, j dsl.Val) dsl.Val {
	if r.block {
		return c.Sub(r.c0).Mul(r.dconv).Add(j)
	}
	return j
}

// token is token t of channel c, whose ring is at ring(): its output, the
// taps after it into slot n_t-1-t where 1 <= slot < K, and the window
// shifted by one.
func (r *convRoll) token(c, t dsl.Val, ring func() dsl.Val) {
	b, win := r.b, *r.win
	w := func(j any) dsl.Val { return win.At(r.at(c, j.(dsl.Val))) }
	win.Set(r.at(c, r.taps), r.xCur.Load(r.s.Mul(r.x2).Add(t.Mul(r.x1)).Add(c)))
	y := convTaps(b, r.st, r.dconv, w, func(j dsl.Val) dsl.Val { return r.wk.Load(c.Mul(r.w1).Add(j)) })
	at := b.Let("y_off", r.s.Mul(r.d2).Add(t.Mul(r.d1)))
	if r.block {
		b.IfElse(r.silu, func() { r.act.Set(c.Sub(r.c0), y) }, func() { r.dst.Store(at.Add(c), y) })
	} else {
		out := b.Var("out", y)
		b.If(r.silu, func() { out.Set(r.st.silu(b, y)) })
		r.dst.Store(at.Add(c), out.Get())
	}
	slot := b.Let("slot", r.nT.Sub(1).Sub(t))
	b.If(slot.Ge(1).AndAlso(slot.Lt(r.nSnap)), func() {
		b.Comment("the taps after this token: snapshot slot n_t-1-t, past the rows ids name")
		snap := b.Let("snap_off", slot.Mul(r.ss).Add(ring()))
		b.Unrolled("j", 0, r.taps, func(j dsl.Val) { r.stateDst.Store(snap.Add(j), w(j.Add(1))) })
	})
	b.Comment("shift the window by one token")
	b.Unrolled("j", 0, r.taps, func(j dsl.Val) { win.Set(r.at(c, j), w(j.Add(1))) })
}

// tokens runs channel c's tokens, then after the gather's wait stores
// its last taps into its ring.
func (r *convRoll) tokens(c, ring dsl.Val, wait func()) {
	r.b.For("t", 0, r.nT, func(t dsl.Val) { r.token(c, t, func() dsl.Val { return ring }) })
	wait()
	r.b.Comment("the taps after the last token into the ring: slot 0")
	r.last(c, ring)
}

// last stores channel c's taps after the last token into the ring: slot 0.
func (r *convRoll) last(c dsl.Val, ring dsl.Val) {
	win := *r.win
	r.b.Unrolled("j", 0, r.taps, func(j dsl.Val) { r.stateDst.Store(ring.Add(j), win.At(r.at(c, j))) })
}

// blockTokens runs a vectorRows block: every channel's cached taps
// (load), then the tokens over the block, each token's SiLU one VecSilu
// as the row's, then after the gather's wait the last taps.
func (r *convRoll) blockTokens(blockLen dsl.Val, load func(c dsl.Val), wait func()) {
	b := r.b
	*r.win = b.Array("windows", ir.F32, r.dconv.Mul(convThreads))
	b.For("c", r.c0, r.c0.Add(blockLen), load)
	b.For("t", 0, r.nT, func(t dsl.Val) {
		b.For("c", r.c0, r.c0.Add(blockLen), func(c dsl.Val) { r.token(c, t, func() dsl.Val { return r.ringOff(c) }) })
		b.If(r.silu, func() {
			b.VecSilu(r.dst.From(r.s.Mul(r.d2).Add(t.Mul(r.d1)).Add(r.c0)), r.act.From(0), blockLen)
		})
	})
	wait()
	b.Comment("the taps after the last token into the ring: slot 0")
	b.For("c", r.c0, r.c0.Add(blockLen), func(c dsl.Val) { r.last(c, r.ringOff(c)) })
}
