package ops

import (
	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
)

// The chained schedule of the ids ops (docs/ops.md#chained) moves what the
// two-phase gather moves only where it must. Sequence s reads row ids[s]
// and writes row s; where ids[s] is another sequence t of the window, s
// must read row t before t writes it. The gather satisfies that by copying
// every such row first (the op then moves its state twice); the chained
// schedule instead runs s and t in one workgroup, s first: a workgroup
// takes a segment of the chain s -> t -> ids[t] ... and runs its members in
// order, each reading the row the next one writes. Only a row read by a
// sequence outside its segment is copied: one per permutation cycle (which
// has no first member), one per segment boundary, and the rows several
// sequences read (all readers but the lowest). The chain gather finds the
// segments from ids on the device and, where some source aliases, writes
// one int per sequence:
//
//	plan[s] = len << 16 | from
//
// len: the number of sequences of the segment s starts (0 when s is not a
// segment's first); from: 0 where s reads no scratch, else s reads its
// prior state from scratch row from - 1, where the chain gather copied row
// ids[s]: window row t into scratch row t, once however many read it (past
// planMax sequences, every aliasing s's source into scratch row s). A
// segment's members after s are
// ids[s] - rs_head, then that one's, and so on. Where no source aliases
// there is no plan: the compute kernels look first (anyAliases).
const (
	// planThreads is the chain gather's workgroup; each thread plans
	// planPerThread sequences (strided), planMax in all. Above planMax the
	// plan is the gather's: every aliasing row copied, segments of one.
	planThreads   = gatherThreads
	planPerThread = 4
	planMax       = planThreads * planPerThread
	// planRounds of pointer jumping cover a chain of planMax sequences
	// (fewer run where n_seqs is smaller).
	planRounds = 10
	// chainGroups is the chain gather's grid: each of its workgroups
	// plans, so fewer than the gather's (up to gatherMaxGroups), and copies
	// its share of every cut row (a few rows, ceil(n_seqs / seg) for a
	// permutation of the window).
	chainGroups = 256
	// cutRowsInFlight rows' loads are issued before their stores: a
	// row at a time kept about one row in flight across the device, a
	// memory round trip per cut row. On the H200 (bench/RESULTS.md) 8
	// took op B's worst ids pattern from 1.44-1.73x its identity to
	// 1.22-1.51x on CUDA (33..256 sequences), 4 to 1.27-1.55x.
	cutRowsInFlight = 8
	// A plan entry is len << planLenShift | from: from 0, s reads no
	// scratch; else scratch row from - 1.
	planLenShift = 16
	planFromMask = 1<<planLenShift - 1
)

// aliasedBatchedArg is the chained compute's arg that splits a step with
// the batched kernel before it (its splitParam), for the n_seqs where the
// batched dispatch bounds every aliasing pattern but costs identity ids
// more than the chained compute (Batch.Aliased): the batched dispatch runs
// the step where some source is another sequence's destination and the
// chained compute, launched after it, where none is. Each looks at ids
// itself (anyAliases), so no plan and no chain gather run; identity ids
// pay the batched dispatch's look, as they pay the chain gather's.
const (
	aliasedBatchedArg = "aliased_batched"
	aliasedBatchedDoc = "1: the batched dispatch before ran the step where some source aliases (split by aliasing); 0: the chained schedule"
)

// buildChainGather is the chain gather: it plans the segments and copies
// the rows the plan cuts, in chainGroups workgroups. Each first looks
// whether any source aliases (with identity ids none does, and every
// workgroup exits: steady decode pays a short launch). Where one does,
// each workgroup plans in shared memory, its own copy of the same plan
// (one workgroup's work, a few microseconds, in parallel), copies its share
// of every row the plan cuts, and the first writes the plan for the
// compute kernel. In shared memory, next[s] is the sequence whose row s
// reads (-1: none, s reads its own row or one outside the window; -2: a cut
// edge, s reads scratch) and prev[t] the one kept reader of t's row.
//
//  1. A row several sequences read keeps its lowest reader; the others are
//     cut (an O(n) scan per sequence: without atomics the lowest is found
//     by looking).
//  2. Every chain is now a path or a cycle. Pointer jumping along next
//     (ceil(log2 n) rounds) leaves a cycle's members with a jump target (a
//     path ends before) and the cycle's lowest member; the edge into it is
//     cut.
//  3. Pointer jumping along prev ranks every sequence from its path's head;
//     every seg-th is cut from its reader and starts a segment.
//  4. Every row a cut edge reads is flagged, and the first workgroup
//     stores the plan: a segment's first walks it for its length.
//  5. The flagged rows are listed (a prefix sum) and copied
//     cutRowsInFlight at a time.
//
// Past planMax sequences every aliasing row is copied (segments of one).
//
// The kernel is the same for every op with a chained schedule: its cache
// and ids are the op's (ir.CallerRole), and a row is row_len elements of
// whatever the cache holds.
func buildChainGather(name string) (*ir.Kernel, error) {
	return buildPlanGather(name, ir.CallerRole, ir.CallerRole, chainLayout)
}

// buildBlockGather is the block gather of op B's block schedule
// (docs/ops.md#blocks): it plans as the chain gather does through step 2,
// then lays the paths out one after another and cuts them into blocks of
// `block` sequences, one workgroup of the compute kernel each. A sequence
// reads scratch only where the row it reads lies in another block; within
// a block every read comes before one barrier and every write after it,
// so a cycle or a row several read needs no copy there.
//
//  3. Pointer jumping along prev ranks every sequence from its path's
//     head and finds the head.
//  4. A prefix sum over the paths' lengths (stored at their heads) places
//     each path; a sequence's position is its path's start plus its rank.
//  5. Every edge whose ends lie in different blocks is cut and its row
//     flagged; the first workgroup stores plan[pos] = s << 16 | from.
//  6. The flagged rows are listed and copied, as in the chain gather.
//
// Past planMax sequences every aliasing row is copied, each sequence at
// its own position.
func buildBlockGather(name, cacheRole, idsRole string) (*ir.Kernel, error) {
	return buildPlanGather(name, cacheRole, idsRole, blockLayout)
}

// planLayout is what a plan gather lays out: the chained schedule's
// segments, or the block schedule's blocks.
type planLayout int

const (
	chainLayout planLayout = iota
	blockLayout
)

func buildPlanGather(name, cacheRole, idsRole string, layout planLayout) (*ir.Kernel, error) {
	b := dsl.New(name, ir.Portable)
	b.ArithFree()
	rowLen := b.Arg("row_len", ir.U32, "elements per row (cache and scratch)")
	nSeqs := b.Arg("n_seqs", ir.U32, "sequences")
	rsHead := b.Arg("rs_head", ir.U32, "first destination slot")
	var seg, block dsl.Val
	planDoc := "len << 16 | from per sequence, written where some source aliases"
	if layout == chainLayout {
		seg = b.Arg("seg", ir.U32, "most sequences a segment runs, at least 1 (1: every aliasing row copied)")
	} else {
		block = b.Arg("block_len", ir.U32, "sequences a block holds (the blocks compute's NW), at least 1")
		planDoc = "s << 16 | from per position, written where some source aliases"
	}
	cache := b.Buffer("cache", ir.F32, ir.Read, cacheRole, "the full cache, rows of row_len")
	ids := b.Buffer("ids", ir.I32, ir.Read, idsRole, "source slot of each sequence")
	plan := b.Buffer("plan", ir.I32, ir.Write, "plan", planDoc)
	scratch := b.Buffer("scratch", ir.F32, ir.Write, "scratch", "n_seqs rows of row_len")
	b.Workgroup(gatherThreads, 1, 1)
	b.Grid(chainGroups, 1, 1)
	b.DepWait()
	b.DepRelease()

	lid := b.Let("lid", b.LocalID(0))
	// target is the window sequence whose row u reads, or -1.
	target := func(u dsl.Val) dsl.Val {
		su := b.Let("id", ids.Load(u))
		return b.Select(aliasesDestination(b, su, u, rsHead, nSeqs), su.Sub(rsHead.I32()), b.I32(-1))
	}
	// copyRows copies this workgroup's share of every row r where cut(r).
	copyRows := func(cut func(r dsl.Val) dsl.Val) {
		b.For("r", b.U32(0), nSeqs, func(r dsl.Val) {
			b.If(cut(r), func() {
				src := b.Let("src", ids.Load(r))
				copyRow(b, cache, scratch, src, r, rowLen, b.U32(chainGroups))
			})
		})
	}
	b.If(anyAliases(b, lid, b.U32(planThreads), ids, rsHead, nSeqs), func() {
		b.IfElse(nSeqs.Gt(planMax), func() {
			b.Comment("too many sequences to plan: every aliasing row is copied")
			b.If(b.GroupID(0).Eq(0), func() {
				b.ForStep("t", lid, nSeqs, b.U32(planThreads), func(t dsl.Val) {
					// s reads its source from scratch row s: a segment of
					// one, or a block position of its own
					from := b.Select(target(t).Ge(0), t.I32().Add(1), b.I32(0))
					if layout == chainLayout {
						plan.Store(t, from.Add(1<<planLenShift))
					} else {
						plan.Store(t, from.Add(t.I32().Shl(planLenShift)))
					}
				})
			})
			copyRows(func(r dsl.Val) dsl.Val { return target(r).Ge(0) })
		}, func() {
			p := planPaths(b, lid, nSeqs, target)
			var flags, free dsl.Arr
			if layout == chainLayout {
				flags, free = p.segments(seg, plan)
			} else {
				flags, free = p.blocks(block, plan)
			}
			list, count := cutRows(b, lid, nSeqs, flags, free)
			copyCutRows(b, cache, scratch, list, count, rsHead, rowLen)
		})
	})
	return b.Build()
}

// planner is a plan in shared memory: next[s] and prev[t] as in
// buildChainGather, jump and val for the pointer-jumping passes; each
// thread keeps source[j], the row its j-th sequence reads (target).
// Four arrays of planMax: more shared memory would cost the gather
// occupancy on NVIDIA's Vulkan driver (0.35 us more with identity ids, 8
// us with rotated, on the H200: bench/RESULTS.md).
type planner struct {
	b                      *dsl.Builder
	lid, nSeqs             dsl.Val
	next, prev, jump, val  dsl.Arr
	held, heldJump, source dsl.Arr
}

func (p *planner) each(f func(u, j dsl.Val)) { forPlanned(p.b, p.lid, p.nSeqs, f) }

// jumpRounds doubles jump[] until it spans n_seqs, combining val[] with
// combine(own, the jumped-to's) on the way. sticky: a jump to a head (jump
// -1) stays there, so that jump[] ends at each one's head (the head's val
// must be combine's identity).
func (p *planner) jumpRounds(combine func(own, far dsl.Val) dsl.Val, sticky bool) {
	b, jump, val := p.b, p.jump, p.val
	b.For("round", 0, planRounds, func(round dsl.Val) {
		b.If(b.U32(1).Shl(round).Lt(p.nSeqs), func() {
			p.each(func(u, j dsl.Val) {
				to := b.Let("to", jump.At(u))
				p.held.Set(j, val.At(u))
				p.heldJump.Set(j, to)
				b.If(to.Ge(0), func() {
					p.held.Set(j, combine(val.At(u), val.At(to.U32())))
					far := jump.At(to.U32())
					if sticky {
						far = b.Select(far.Ge(0), far, to)
					}
					p.heldJump.Set(j, far)
				})
			})
			b.Barrier()
			p.each(func(u, j dsl.Val) {
				val.Set(u, p.held.At(j))
				jump.Set(u, p.heldJump.At(j))
			})
			b.Barrier()
		})
	})
}

// planPaths runs steps 1 and 2 of buildChainGather: afterwards every
// kept edge (next[s] >= 0, prev[next[s]] == s) lies on a path.
func planPaths(b *dsl.Builder, lid, nSeqs dsl.Val, target func(dsl.Val) dsl.Val) *planner {
	p := &planner{b: b, lid: lid, nSeqs: nSeqs}
	p.next = b.SharedArray("next", ir.I32, planMax)
	p.prev = b.SharedArray("prev", ir.I32, planMax)
	p.jump = b.SharedArray("jump", ir.I32, planMax)
	p.val = b.SharedArray("val", ir.I32, planMax)
	p.held = b.Array("held", ir.I32, planPerThread)
	p.heldJump = b.Array("held_jump", ir.I32, planPerThread)
	p.source = b.Array("source", ir.I32, planPerThread) // the row u reads (target), kept
	next, prev, jump, val, held := p.next, p.prev, p.jump, p.val, p.held
	p.each(func(u, j dsl.Val) {
		p.source.Set(j, target(u))
		next.Set(u, p.source.At(j))
		prev.Set(u, b.I32(-1))
	})
	b.Barrier()

	b.Comment("a row read by several sequences keeps its lowest reader; the others read scratch")
	p.each(func(u, j dsl.Val) {
		t := b.Let("t", next.At(u))
		kept := b.Var("kept", t.Ge(0))
		b.If(kept.Get(), func() {
			b.For("v", b.U32(0), u, func(v dsl.Val) {
				b.If(next.At(v).Eq(t), func() { kept.Set(b.Bool(false)) })
			})
		})
		held.Set(j, b.Select(kept.Get(), t, b.Select(t.Ge(0), b.I32(-2), b.I32(-1))))
	})
	b.Barrier()
	p.each(func(u, j dsl.Val) {
		t := b.Let("t", held.At(j))
		next.Set(u, t)
		b.If(t.Ge(0), func() { prev.Set(t.U32(), u.I32()) })
	})
	b.Barrier()

	b.Comment("cycles: after the rounds only a cycle's members still jump; the edge into its lowest is cut")
	p.each(func(u, _ dsl.Val) {
		jump.Set(u, b.Select(next.At(u).Ge(0), next.At(u), b.I32(-1)))
		val.Set(u, u.I32())
	})
	b.Barrier()
	p.jumpRounds(func(own, far dsl.Val) dsl.Val { return b.Select(far.Lt(own), far, own) }, false)
	p.each(func(u, _ dsl.Val) {
		b.If(jump.At(u).Ge(0).AndAlso(val.At(u).Eq(u.I32())), func() {
			r := b.Let("r", prev.At(u))
			next.Set(r.U32(), b.I32(-2))
			prev.Set(u, b.I32(-1))
		})
	})
	b.Barrier()
	return p
}

// segments runs steps 3 and 4 of buildChainGather; the first workgroup
// stores the plan. It returns the window rows to copy (flags[t] 1: a cut
// edge reads row t, 0: none) and an array of planMax it no longer needs.
func (p *planner) segments(seg dsl.Val, plan dsl.Buf) (flags, free dsl.Arr) {
	b, next, prev, jump, val := p.b, p.next, p.prev, p.jump, p.val
	b.Comment("rank each sequence from its path's head; every seg-th starts a segment, cut from its reader")
	p.each(func(u, _ dsl.Val) {
		jump.Set(u, prev.At(u))
		val.Set(u, b.Select(prev.At(u).Ge(0), b.I32(1), b.I32(0)))
	})
	b.Barrier()
	p.jumpRounds(func(own, far dsl.Val) dsl.Val { return own.Add(far) }, false)
	p.each(func(u, _ dsl.Val) {
		rank := b.Let("rank", val.At(u).U32())
		b.If(rank.Gt(0).AndAlso(rank.Rem(seg).Eq(0)), func() { next.Set(prev.At(u).U32(), b.I32(-2)) })
	})
	b.Barrier()

	// A cut edge's row is copied into the scratch row of its own index,
	// once however many read it: a flag per row, set by every cut reader
	// (the same value from each), no search for a lowest reader.
	b.Comment("a row cut readers read is copied once, into its own scratch row")
	p.each(func(u, j dsl.Val) {
		jump.Set(u, b.I32(0))
		prev.Set(u, b.Select(next.At(u).Eq(-2), p.source.At(j), b.I32(-1)))
	})
	b.Barrier()
	p.each(func(u, j dsl.Val) {
		b.If(next.At(u).Eq(-2), func() { jump.Set(p.source.At(j).U32(), b.I32(1)) })
	})
	b.Barrier()

	b.If(b.GroupID(0).Eq(0), func() {
		b.Comment("a segment's first walks it for its length")
		p.each(func(u, _ dsl.Val) {
			n := b.Var("len", b.I32(0))
			b.If(val.At(u).U32().Rem(seg).Eq(0), func() {
				n.Set(b.I32(1))
				at := b.Var("at", next.At(u))
				b.For("k", b.U32(1), seg, func(dsl.Val) {
					b.If(at.Get().Ge(0), func() {
						n.Set(n.Get().Add(1))
						at.Set(next.At(at.Get().U32()))
					})
				})
			})
			plan.Store(u, n.Get().Shl(planLenShift).Add(prev.At(u).Add(1)))
		})
	})
	b.Barrier() // val is free from here (cutRows reuses it)
	return jump, val
}

// blocks runs steps 3 to 5 of buildBlockGather; the first workgroup stores
// the plan. It returns the rows to copy and a free array, as segments does.
func (p *planner) blocks(block dsl.Val, plan dsl.Buf) (flags, free dsl.Arr) {
	b, next, prev, jump, val := p.b, p.next, p.prev, p.jump, p.val
	rank := b.Array("rank", ir.I32, planPerThread)
	head := b.Array("head", ir.I32, planPerThread)
	tail := b.Array("tail", ir.I32, planPerThread)
	b.Comment("rank each sequence from its path's head, and find the head")
	p.each(func(u, _ dsl.Val) {
		jump.Set(u, prev.At(u))
		val.Set(u, b.Select(prev.At(u).Ge(0), b.I32(1), b.I32(0)))
	})
	b.Barrier()
	p.jumpRounds(func(own, far dsl.Val) dsl.Val { return own.Add(far) }, true)
	p.each(func(u, j dsl.Val) {
		rank.Set(j, val.At(u))
		head.Set(j, b.Select(jump.At(u).Ge(0), jump.At(u), u.I32()))
		tail.Set(j, b.Select(next.At(u).Lt(0), b.I32(1), b.I32(0)))
	})
	b.Barrier()

	b.Comment("lay the paths out one after another: each starts at the sum of the lengths of the paths of lower heads")
	p.each(func(u, _ dsl.Val) { prev.Set(u, b.I32(0)) })
	b.Barrier()
	p.each(func(u, j dsl.Val) {
		b.If(tail.At(j).Eq(1), func() { prev.Set(head.At(j).U32(), rank.At(j).Add(1)) })
	})
	b.Barrier()
	p.each(func(u, _ dsl.Val) { next.Set(u, prev.At(u)) })
	b.Barrier()
	prefixSum(b, p.lid, p.nSeqs, next, p.held)
	p.each(func(u, j dsl.Val) {
		h := head.At(j).U32()
		val.Set(u, next.At(h).Sub(prev.At(h)).Add(rank.At(j)))
	})
	b.Barrier()

	b.Comment("an edge between blocks is cut: its row is copied once, into its own scratch row")
	p.each(func(u, _ dsl.Val) { jump.Set(u, b.I32(0)) })
	b.Barrier()
	cut := b.Array("cut", ir.I32, planPerThread)
	p.each(func(u, j dsl.Val) {
		t := b.Let("t", p.source.At(j))
		cut.Set(j, b.I32(0))
		b.If(t.Ge(0), func() {
			b.If(val.At(u).U32().Div(block).Ne(val.At(t.U32()).U32().Div(block)), func() {
				cut.Set(j, b.I32(1))
				jump.Set(t.U32(), b.I32(1))
			})
		})
	})
	b.Barrier()
	b.If(b.GroupID(0).Eq(0), func() {
		p.each(func(u, j dsl.Val) {
			from := b.Select(cut.At(j).Eq(1), p.source.At(j).Add(1), b.I32(0))
			plan.Store(val.At(u).U32(), u.I32().Shl(planLenShift).Add(from))
		})
	})
	b.Barrier() // val is free from here (cutRows reuses it)
	return jump, val
}

// forPlanned runs f for every sequence u this thread plans (the j-th of
// its planPerThread, strided by planThreads).
func forPlanned(b *dsl.Builder, lid, nSeqs dsl.Val, f func(u, j dsl.Val)) {
	b.Unrolled("j", 0, planPerThread, func(j dsl.Val) {
		u := b.Let("u", j.Mul(planThreads).Add(lid))
		b.If(u.Lt(nSeqs), func() { f(u, j) })
	})
}

// cutRows lists the flagged rows (flags[t] 1) in list, in order, and
// returns its length: a prefix sum over the flags in place, each flagged
// row then storing itself at its rank. flags and list are shared arrays of
// planMax.
func cutRows(b *dsl.Builder, lid, nSeqs dsl.Val, flags, list dsl.Arr) (dsl.Arr, dsl.Val) {
	held := b.Array("held_rank", ir.I32, planPerThread)
	flagged := b.Array("flagged", ir.I32, planPerThread)
	each := func(f func(u, j dsl.Val)) { forPlanned(b, lid, nSeqs, f) }
	each(func(u, j dsl.Val) { flagged.Set(j, flags.At(u)) })
	rank := flags
	prefixSum(b, lid, nSeqs, rank, held)
	each(func(u, j dsl.Val) {
		b.If(flagged.At(j).Eq(1), func() { list.Set(rank.At(u).Sub(1).U32(), u.I32()) })
	})
	b.Barrier()
	return list, b.Let("cut_count", rank.At(nSeqs.Sub(1)).U32())
}

// prefixSum turns the shared array a (of planMax) into its inclusive
// prefix sum over n_seqs, by doubling (ceil(log2 n_seqs) rounds); held is
// a thread's planPerThread registers.
func prefixSum(b *dsl.Builder, lid, nSeqs dsl.Val, a, held dsl.Arr) {
	each := func(f func(u, j dsl.Val)) { forPlanned(b, lid, nSeqs, f) }
	b.For("round", 0, planRounds, func(round dsl.Val) {
		d := b.Let("d", b.U32(1).Shl(round))
		b.If(d.Lt(nSeqs), func() {
			each(func(u, j dsl.Val) {
				held.Set(j, a.At(u))
				b.If(u.Ge(d), func() { held.Set(j, held.At(j).Add(a.At(u.Sub(d)))) })
			})
			b.Barrier()
			each(func(u, j dsl.Val) { a.Set(u, held.At(j)) })
			b.Barrier()
		})
	})
}

// copyCutRows copies this workgroup's share of every listed window row t
// (cache row rs_head + t) into scratch row t, the loads of
// cutRowsInFlight rows issued before their stores.
func copyCutRows(b *dsl.Builder, cache, scratch dsl.Buf, list dsl.Arr, count, rsHead, rowLen dsl.Val) {
	stride := b.Let("stride", b.U32(chainGroups).Mul(gatherChunk))
	first := b.Let("first", b.GroupID(0).Mul(gatherChunk).Add(b.LocalID(0)))
	vals := b.Array("vals", ir.F32, cutRowsInFlight*gatherPerThread)
	b.ForStep("k", b.U32(0), count, b.U32(cutRowsInFlight), func(k dsl.Val) {
		b.ForStep("c", first, rowLen, stride, func(c dsl.Val) {
			b.Unrolled("i", 0, cutRowsInFlight, func(i dsl.Val) {
				b.If(k.Add(i).Lt(count), func() {
					r := b.Let("r", list.At(k.Add(i)).U32())
					from := b.Let("from", cacheRow(rsHead.Add(r), rowLen))
					b.Unrolled("j", 0, gatherPerThread, func(j dsl.Val) {
						e := c.Add(j.Mul(gatherThreads))
						b.If(e.Lt(rowLen), func() { vals.Set(i.Mul(gatherPerThread).Add(j), cache.Load(from.Add(e.U64()))) })
					})
				})
			})
			b.Unrolled("i", 0, cutRowsInFlight, func(i dsl.Val) {
				b.If(k.Add(i).Lt(count), func() {
					to := b.Let("to", list.At(k.Add(i)).U32().Mul(rowLen))
					b.Unrolled("j", 0, gatherPerThread, func(j dsl.Val) {
						e := c.Add(j.Mul(gatherThreads))
						b.If(e.Lt(rowLen), func() { scratch.Store(to.Add(e), vals.At(i.Mul(gatherPerThread).Add(j))) })
					})
				})
			})
		})
	})
}

// runSegments is a chained compute kernel's outer loop: the workgroup of
// sequence GroupID(1) runs the segment it starts, if any. With no source
// aliasing the chain gather wrote no plan, and every sequence is a segment
// of one, as in the two-phase kernel. lid and threads are the workgroup's
// linear thread index and size; rows names what a sequence owns ("row",
// "ring"). It sets *aliased and then *member, the sequence sequence runs
// (sequence returns its index); the next member is the one whose row it
// read. byAliasing (the zero Val: the kernel has no such arg) is the
// aliasedBatchedArg: where it is set and some source aliases, the batched
// dispatch before ran the step and no segment runs.
func runSegments(b *dsl.Builder, plan, ids dsl.Buf, rsHead, nSeqs, lid, threads dsl.Val, rows string, aliased *dsl.Val, member *dsl.Mut, byAliasing dsl.Val, sequence func() dsl.Val) {
	first := b.Let("first", b.GroupID(1))
	*aliased = anyAliases(b, lid, threads, ids, rsHead, nSeqs)
	segLen := b.Var("seg_len", b.U32(1))
	b.If(*aliased, func() {
		b.DepWait() // the plan, scratch and the rows the segment reads are ready
		if byAliasing.Expr() == nil {
			segLen.Set(segmentLen(plan, first))
			return
		}
		b.IfElse(byAliasing.Ne(0),
			func() { segLen.Set(b.U32(0)) }, // the batched dispatch ran the step; its wait above keeps the launches in order
			func() { segLen.Set(segmentLen(plan, first)) })
	})
	b.Comment("run the segment this sequence starts, if any: each member reads the %s the next one writes", rows)
	*member = b.Var("member", first)
	b.For("m", b.U32(0), segLen.Get(), func(dsl.Val) {
		s := sequence()
		member.Set(ids.Load(s).U32().Sub(rsHead))
	})
}

// anyAliases is true, for the whole workgroup, where some sequence reads
// another's destination row (threads: the workgroup's size, lid the
// thread's linear index): the chained compute kernels read the plan only
// then, since the chain gather writes it only then.
func anyAliases(b *dsl.Builder, lid, threads dsl.Val, ids dsl.Buf, rsHead, nSeqs dsl.Val) dsl.Val {
	flag := b.SharedArray("aliased", ir.I32, 1)
	b.If(lid.Eq(0), func() { flag.Set(0, b.I32(0)) })
	b.Barrier()
	b.ForStep("t", lid, nSeqs, threads, func(t dsl.Val) {
		id := b.Let("id", ids.Load(t))
		b.If(aliasesDestination(b, id, t, rsHead, nSeqs), func() { flag.Set(0, b.I32(1)) })
	})
	b.Barrier()
	return b.Let("aliased", flag.At(0).Ne(0))
}

// readsScratch is true where the plan has sequence s read scratch (the
// chain gather copied its source there, into scratchRow).
func readsScratch(b *dsl.Builder, plan dsl.Buf, s dsl.Val) dsl.Val {
	return plan.Load(s).BitAnd(planFromMask).Ne(0)
}

// scratchRow is the scratch row the plan has sequence s read.
func scratchRow(b *dsl.Builder, plan dsl.Buf, s dsl.Val) dsl.Val {
	return b.Let("from_row", plan.Load(s).BitAnd(planFromMask).Sub(1).U32())
}

// segmentLen is the length of the segment the plan has s start (0: none).
func segmentLen(plan dsl.Buf, s dsl.Val) dsl.Val {
	return plan.Load(s).U32().Shr(planLenShift)
}
