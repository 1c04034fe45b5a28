package ops

import (
	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
)

// Silu is the plain SILU node (ggml_silu) as contract a computes it: the
// unfused path of op D's SILU, for the graph-fusion reference (ops/fusion).
// It is no op of the registry: no backend emits it. One element per thread
// with the contract's silu; a vectorRows contract applies the vector
// routine to rows of row elements, as ggml-cpu does per row.
func Silu(a ir.Arith) (*ir.Kernel, error) {
	st := styleOf(a)
	b := dsl.New("silu", a)
	n := b.Arg("n", ir.U32, "elements")
	row := b.Arg("row", ir.U32, "elements per row (ne[0])")
	src := b.Buffer("src", ir.F32, ir.Read, "src0", "input, packed")
	dst := b.Buffer("dst", ir.F32, ir.Write, "dst", "output, packed")
	const threads = 64
	b.Workgroup(threads, 1, 1)
	work := n
	if st.vectorRows {
		work = n.Div(row)
	}
	b.Grid(work.Add(threads-1).Div(threads), 1, 1)
	i := b.Let("i", b.GroupID(0).Mul(threads).Add(b.LocalID(0)))
	b.If(i.Lt(work), func() {
		if st.vectorRows {
			b.VecSilu(dst.From(i.Mul(row)), src.From(i.Mul(row)), row)
			return
		}
		dst.Store(i, st.silu(b, src.Load(i)))
	})
	return b.Build()
}
