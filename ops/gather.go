package ops

import (
	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
)

// The gather copies a row in chunks of gatherChunk elements: each of a
// workgroup's gatherThreads threads loads gatherPerThread elements (a
// warp's loads of one step are contiguous) and only then stores them, so
// eight loads per thread are in flight instead of one. A row gets up to
// ceil(gatherMaxGroups / n_seqs) workgroups, each striding over the row's
// chunks: with few sequences a 2-3 MB GDN state row is spread over
// hundreds of workgroups (the whole device), with many the total stays
// near gatherMaxGroups, so the common case, where nothing aliases and
// every workgroup exits at once, stays a short launch. 1024 rather than
// 4096: on the H100 (bench/RESULTS.md, issue #21) the idle workgroups of
// identity ids delayed the compute kernel, op B by 4-11% at n_seqs 8-32
// and op D by 9-11% at 256 in graph replay (more on the H200); op B with
// every source aliasing pays 2-3%. 512 would cost op D with shuffled ids
// 5-9% for 1-5% more on identity.
const (
	gatherThreads   = 256
	gatherPerThread = 8
	gatherChunk     = gatherThreads * gatherPerThread
	gatherMaxGroups = 1024
)

// buildGather is phase 1 of the ids ops' two-phase semantics (docs/ops.md#fused-ops,
// docs/ops.md#aliasing). A sequence must not read, during the compute dispatch, a cache row
// that another sequence of the same dispatch writes: that is exactly a
// non-identity source inside the destination window [rs_head, rs_head +
// n_seqs) (the shared zeroed cell of docs/ops.md#aliasing). Those rows, and only those, are
// copied into scratch row s by this earlier dispatch, so the compute kernel
// sees their pre-op values. Every other source is read by the compute kernel
// directly: nothing in the op writes it. A pure copy: the same kernel under
// every contract.
//
// The kernel is the same for ops B and D: its cache and ids are the
// dispatching op's (ir.CallerRole), and a row is row_len elements of
// whatever the cache holds.
func buildGather(name string) (*ir.Kernel, error) {
	b := dsl.New(name, ir.Portable)
	b.ArithFree()
	rowLen := b.Arg("row_len", ir.U32, "elements per row (cache and scratch)")
	nSeqs := b.Arg("n_seqs", ir.U32, "sequences")
	rsHead := b.Arg("rs_head", ir.U32, "first destination slot")
	cache := b.Buffer("cache", ir.F32, ir.Read, ir.CallerRole, "the full cache, rows of row_len")
	ids := b.Buffer("ids", ir.I32, ir.Read, ir.CallerRole, "source slot of each sequence")
	scratch := b.Buffer("scratch", ir.F32, ir.Write, "scratch", "n_seqs rows of row_len")
	b.Workgroup(gatherThreads, 1, 1)
	groups := gatherGroups(b, rowLen, nSeqs)
	b.Grid(groups, nSeqs, 1)

	// Wait for the dispatches before, then let the compute dispatch start:
	// it reads its inputs at once (they are complete by then) and waits
	// (DepWait) only before touching scratch or a row the gather reads.
	b.DepWait()
	b.DepRelease()
	s := b.Let("s", b.GroupID(1))
	src := b.Let("src", ids.Load(s))
	b.If(aliasesDestination(b, src, s, rsHead, nSeqs), func() { copyRow(b, cache, scratch, src, s, rowLen, groups) })
	return b.Build()
}

// gatherGroups is the number of workgroups per row: up to
// ceil(gatherMaxGroups / n_seqs), at most one per chunk.
func gatherGroups(b *dsl.Builder, rowLen, nSeqs dsl.Val) dsl.Val {
	chunks := rowLen.Add(gatherChunk - 1).Div(gatherChunk)
	perRow := nSeqs.Add(gatherMaxGroups - 1).Div(nSeqs) // ceil(gatherMaxGroups / n_seqs) >= 1
	return b.Select(chunks.Lt(perRow), chunks, perRow)
}

// copyRow is a workgroup's share of copying cache row src into scratch row
// s, in chunks of gatherChunk, all loads before the stores.
func copyRow(b *dsl.Builder, cache, scratch dsl.Buf, src, s, rowLen, groups dsl.Val) {
	from := b.Let("from", cacheRow(src, rowLen))
	to := b.Let("to", s.Mul(rowLen))
	stride := b.Let("stride", groups.Mul(gatherChunk))
	first := b.Let("first", b.GroupID(0).Mul(gatherChunk).Add(b.LocalID(0)))
	vals := b.Array("vals", ir.F32, gatherPerThread)
	b.ForStep("c", first, rowLen, stride, func(c dsl.Val) {
		b.Unrolled("j", 0, gatherPerThread, func(j dsl.Val) {
			e := c.Add(j.Mul(gatherThreads))
			b.If(e.Lt(rowLen), func() { vals.Set(j, cache.Load(from.Add(e.U64()))) })
		})
		b.Unrolled("j", 0, gatherPerThread, func(j dsl.Val) {
			e := c.Add(j.Mul(gatherThreads))
			b.If(e.Lt(rowLen), func() { scratch.Store(to.Add(e), vals.At(j)) })
		})
	})
}

// aliasesDestination is true when sequence s reads a row that another
// sequence of the same op writes: a non-identity source inside the window
// [rs_head, rs_head + n_seqs). Only such sources go through scratch.
func aliasesDestination(b *dsl.Builder, src, s, rsHead, nSeqs dsl.Val) dsl.Val {
	notOwn := src.Ne(rsHead.Add(s).I32()) // not the sequence's own slot (identity)
	return notOwn.AndAlso(inWindow(src, rsHead, nSeqs))
}

func inWindow(src, rsHead, nSeqs dsl.Val) dsl.Val {
	return src.Ge(rsHead.I32()).AndAlso(src.Lt(rsHead.Add(nSeqs).I32()))
}

// aliasesOtherThanSelf is aliasesDestination where s is known not to be
// identity (the else of its test): the window alone, so that no backend's
// kernel reads "else if (!(a) && b)" after "if (a)".
func aliasesOtherThanSelf(st style, b *dsl.Builder, src, s, rsHead, nSeqs dsl.Val) dsl.Val {
	return inWindow(src, rsHead, nSeqs)
}

// GatherRowChunk is how many elements of a row one CPU task copies (64 KiB):
// a GDN state row (MBs) is split over every thread, a conv row is one task.
const GatherRowChunk = 16384

// RowGatherOp is the CPU form of the gather: the rows copied as a CPU
// thread does, its cache and ids the dispatching op's (ir.CallerRole).
const RowGatherOp = "gather_rows"

// Gather is the gather op the target runs before ops B and D: where its
// tuning says RowGather, the rows copied as a CPU thread does
// (RowGatherOp); else the lane-parallel chunked gather (GatherOp). Both
// families share it.
func (t Target) Gather() string {
	if t.tuning.RowGather {
		return RowGatherOp
	}
	return GatherOp
}

// buildGatherRows is buildGather as a CPU thread runs it: the same rows
// (aliasesDestination) copied to the same scratch rows, a task being one
// chunk of one row, copied element after element (a memcpy to the compiler).
func buildGatherRows(name string) (*ir.Kernel, error) {
	b := dsl.New(name, ir.Portable)
	b.ArithFree()
	rowLen := b.Arg("row_len", ir.U32, "elements per row (cache and scratch)")
	nSeqs := b.Arg("n_seqs", ir.U32, "sequences")
	rsHead := b.Arg("rs_head", ir.U32, "first destination slot")
	cache := b.Buffer("cache", ir.F32, ir.Read, ir.CallerRole, "the full cache, rows of row_len")
	ids := b.Buffer("ids", ir.I32, ir.Read, ir.CallerRole, "source slot of each sequence")
	scratch := b.Buffer("scratch", ir.F32, ir.Write, "scratch", "n_seqs rows of row_len")
	b.Workgroup(1, 1, 1)
	b.Grid(rowLen.Add(GatherRowChunk-1).Div(GatherRowChunk), nSeqs, 1)

	b.DepWait()
	b.DepRelease()
	s := b.Let("s", b.GroupID(1))
	src := b.Let("src", ids.Load(s))
	b.If(aliasesDestination(b, src, s, rsHead, nSeqs), func() {
		first := b.Let("first", b.GroupID(0).Mul(GatherRowChunk))
		left := b.Let("left", rowLen.Sub(first))
		last := b.Let("last", first.Add(b.Select(left.Lt(GatherRowChunk), left, b.U32(GatherRowChunk))))
		from := b.Let("from", cacheRow(src, rowLen))
		to := b.Let("to", s.Mul(rowLen))
		b.For("i", first, last, func(i dsl.Val) { scratch.Store(to.Add(i), cache.Load(from.Add(i.U64()))) })
	})
	return b.Build()
}
