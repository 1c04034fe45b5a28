package ops

import (
	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
)

const gatherThreads = 256

// buildGather is the non-identity gather of ops B and D, phase 1 of their
// two-phase semantics (SPEC.md 5, 7, 8.2): for every sequence s whose source
// slot ids[s] is not its own destination rs_head+s, copy the cache row ids[s]
// into scratch row s. It runs as its own dispatch before the compute kernel,
// so it sees only pre-op values even when ids[s] is another sequence's
// destination. A pure copy: the same kernel under every contract.
func buildGather(name string) (*ir.Kernel, error) {
	b := dsl.New(name, ir.Portable)
	rowLen := b.Arg("row_len", ir.U32, "elements per row (cache and scratch)")
	nSeqs := b.Arg("n_seqs", ir.U32, "sequences")
	rsHead := b.Arg("rs_head", ir.U32, "first destination slot")
	cache := b.Buffer("cache", ir.F32, ir.Read, "src0", "the full cache, rows of row_len")
	ids := b.Buffer("ids", ir.I32, ir.Read, "ids", "source slot of each sequence")
	scratch := b.Buffer("scratch", ir.F32, ir.Write, "scratch", "n_seqs rows of row_len")
	b.Workgroup(gatherThreads, 1, 1)
	b.Grid(nSeqs, 1, 1)

	s := b.Let("s", b.GroupID(0))
	src := b.Let("src", ids.Load(s))
	b.If(src.Ne(rsHead.Add(s).I32()), func() {
		from := b.Let("from", src.U32().Mul(rowLen))
		to := b.Let("to", s.Mul(rowLen))
		b.ForStep("base", 0, rowLen, gatherThreads, func(base dsl.Val) {
			e := b.Let("e", base.Add(b.LocalID(0)))
			b.If(e.Lt(rowLen), func() { scratch.Store(to.Add(e), cache.Load(from.Add(e))) })
		})
	})
	return b.Build()
}
