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
// sequences read (all readers but the lowest). The plan kernel finds the
// segments from ids on the device; its output, one int per sequence, is
//
//	plan[s] = 2*len + copy
//
// len: the number of sequences of the segment s starts (0 when s is not a
// segment's first); copy: s reads its prior state from scratch row s, where
// the chain gather copied row ids[s]. A segment's members after s are
// ids[s] - rs_head, then that one's, and so on.
const (
	// planThreads is the plan kernel's one workgroup; each thread plans
	// planPerThread sequences (strided), planMax in all. Above planMax the
	// plan is the gather's: every aliasing row copied, segments of one.
	planThreads   = 256
	planPerThread = 4
	planMax       = planThreads * planPerThread
	// planRounds of pointer jumping cover a chain of planMax sequences.
	planRounds = 10
)

// buildChainPlan is the plan kernel of the chained schedule: one workgroup
// that finds every sequence's segment. In shared memory, next[s] is the
// sequence whose row s reads (-1: none, s reads its own row or one outside
// the window; -2: a cut edge, s reads scratch) and prev[t] the one kept
// reader of t's row.
//
//  1. A row several sequences read keeps its lowest reader; the others are
//     cut (an O(n) scan per sequence: without atomics the lowest is found
//     by looking).
//  2. Every chain is now a path or a cycle. Pointer jumping along next for
//     planRounds rounds leaves a cycle's members with a jump target (a path
//     ends before) and the cycle's lowest member; the edge into it is cut.
//  3. Pointer jumping along prev ranks every sequence from its path's head;
//     every seg-th is cut from its reader and starts a segment.
//  4. A segment's first walks it for its length.
func buildChainPlan(name, idsRole string) (*ir.Kernel, error) {
	b := dsl.New(name, ir.Portable)
	b.ArithFree()
	nSeqs := b.Arg("n_seqs", ir.U32, "sequences")
	rsHead := b.Arg("rs_head", ir.U32, "first destination slot")
	seg := b.Arg("seg", ir.U32, "most sequences a segment runs, at least 1 (1: the gather's plan)")
	ids := b.Buffer("ids", ir.I32, ir.Read, idsRole, "source slot of each sequence")
	plan := b.Buffer("plan", ir.I32, ir.Write, "plan", "2*len + copy per sequence")
	b.Workgroup(planThreads, 1, 1)
	b.Grid(1, 1, 1)
	b.DepWait()
	b.DepRelease()

	lid := b.Let("lid", b.LocalID(0))
	// target is the window sequence whose row s reads, or -1.
	target := func(s dsl.Val) dsl.Val {
		src := b.Let("src", ids.Load(s))
		return b.Select(aliasesDestination(b, src, s, rsHead, nSeqs), src.Sub(rsHead.I32()), b.I32(-1))
	}
	b.IfElse(nSeqs.Gt(planMax), func() {
		b.Comment("too many sequences to plan: every aliasing row is copied")
		b.ForStep("s", lid, nSeqs, b.U32(planThreads), func(s dsl.Val) {
			plan.Store(s, b.Select(target(s).Ge(0), b.I32(3), b.I32(2)))
		})
	}, func() {
		next := b.SharedArray("next", ir.I32, planMax)
		prev := b.SharedArray("prev", ir.I32, planMax)
		jump := b.SharedArray("jump", ir.I32, planMax)
		val := b.SharedArray("val", ir.I32, planMax)
		held := b.Array("held", ir.I32, planPerThread)
		heldJump := b.Array("held_jump", ir.I32, planPerThread)
		// each runs f for every sequence this thread plans.
		each := func(f func(s dsl.Val, j dsl.Val)) {
			b.Unrolled("j", 0, planPerThread, func(j dsl.Val) {
				s := b.Let("s", j.Mul(planThreads).Add(lid))
				b.If(s.Lt(nSeqs), func() { f(s, j) })
			})
		}
		each(func(s, _ dsl.Val) {
			next.Set(s, target(s))
			prev.Set(s, b.I32(-1))
		})
		b.Barrier()

		b.Comment("a row read by several sequences keeps its lowest reader; the others read scratch")
		each(func(s, j dsl.Val) {
			t := b.Let("t", next.At(s))
			kept := b.Var("kept", t.Ge(0))
			b.If(kept.Get(), func() {
				b.For("u", b.U32(0), s, func(u dsl.Val) {
					b.If(next.At(u).Eq(t), func() { kept.Set(b.Bool(false)) })
				})
			})
			held.Set(j, b.Select(kept.Get(), t, b.Select(t.Ge(0), b.I32(-2), b.I32(-1))))
		})
		b.Barrier()
		each(func(s, j dsl.Val) {
			t := b.Let("t", held.At(j))
			next.Set(s, t)
			b.If(t.Ge(0), func() { prev.Set(t.U32(), s.I32()) })
		})
		b.Barrier()

		// jumpRounds doubles jump[] planRounds times, combining val[] with
		// combine(own, the jumped-to's) on the way.
		jumpRounds := func(combine func(own, far dsl.Val) dsl.Val) {
			b.For("round", 0, planRounds, func(dsl.Val) {
				each(func(s, j dsl.Val) {
					to := b.Let("to", jump.At(s))
					held.Set(j, val.At(s))
					heldJump.Set(j, to)
					b.If(to.Ge(0), func() {
						held.Set(j, combine(val.At(s), val.At(to.U32())))
						heldJump.Set(j, jump.At(to.U32()))
					})
				})
				b.Barrier()
				each(func(s, j dsl.Val) {
					val.Set(s, held.At(j))
					jump.Set(s, heldJump.At(j))
				})
				b.Barrier()
			})
		}

		b.Comment("cycles: after the rounds only a cycle's members still jump; the edge into its lowest is cut")
		each(func(s, _ dsl.Val) {
			jump.Set(s, b.Select(next.At(s).Ge(0), next.At(s), b.I32(-1)))
			val.Set(s, s.I32())
		})
		b.Barrier()
		jumpRounds(func(own, far dsl.Val) dsl.Val { return b.Select(far.Lt(own), far, own) })
		each(func(s, _ dsl.Val) {
			b.If(jump.At(s).Ge(0).AndAlso(val.At(s).Eq(s.I32())), func() {
				r := b.Let("r", prev.At(s))
				next.Set(r.U32(), b.I32(-2))
				prev.Set(s, b.I32(-1))
			})
		})
		b.Barrier()

		b.Comment("rank each sequence from its path's head; every seg-th starts a segment, cut from its reader")
		each(func(s, _ dsl.Val) {
			jump.Set(s, prev.At(s))
			val.Set(s, b.Select(prev.At(s).Ge(0), b.I32(1), b.I32(0)))
		})
		b.Barrier()
		jumpRounds(func(own, far dsl.Val) dsl.Val { return own.Add(far) })
		each(func(s, _ dsl.Val) {
			rank := b.Let("rank", val.At(s).U32())
			b.If(rank.Gt(0).AndAlso(rank.Rem(seg).Eq(0)), func() { next.Set(prev.At(s).U32(), b.I32(-2)) })
		})
		b.Barrier()

		b.Comment("a segment's first walks it for its length")
		each(func(s, _ dsl.Val) {
			n := b.Var("len", b.I32(0))
			b.If(val.At(s).U32().Rem(seg).Eq(0), func() {
				n.Set(b.I32(1))
				at := b.Var("at", next.At(s))
				b.For("k", b.U32(1), seg, func(dsl.Val) {
					b.If(at.Get().Ge(0), func() {
						n.Set(n.Get().Add(1))
						at.Set(next.At(at.Get().U32()))
					})
				})
			})
			plan.Store(s, n.Get().Mul(2).Add(b.Select(next.At(s).Eq(-2), b.I32(1), b.I32(0))))
		})
	})
	return b.Build()
}

// readsScratch is true where the plan has sequence s read scratch (the
// chain gather copied its source there).
func readsScratch(b *dsl.Builder, plan dsl.Buf, s dsl.Val) dsl.Val {
	return plan.Load(s).BitAnd(1).Ne(0)
}
