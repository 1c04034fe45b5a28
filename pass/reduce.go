package pass

import "github.com/kernelgen/kernelgen/ir"

// Exchange is the lowering of a kernel's reductions (ir.Reduce) for a
// target whose subgroup may be narrower than a reduction's width: each
// reduction is an xor butterfly over offsets width/2 .. 1, through subgroup
// shuffles where the subgroup covers the width and otherwise through
// workgroup memory, every thread writing its partial sum at its linear
// index and adding its partner's (index xor offset), a barrier around each
// exchange. The entities here are those every such reduction of the kernel
// shares; their names are these and nowhere else. A target that assumes
// subgroups at least as wide as every reduction (ggml's own kernels, its
// warp_reduce_sum) needs none.
type Exchange struct {
	// Shared is the workgroup array the lanes exchange through: one f32
	// per thread of the workgroup (Len: the workgroup's thread count).
	Shared *ir.Array
	// Lin is a thread's linear index in its workgroup, x fastest: its
	// slot in Shared.
	Lin *ir.Var
	// Off is the butterfly's xor offset, the loop variable of both the
	// shuffle steps and the exchange through Shared.
	Off *ir.Var
}

// lowerReduce returns the exchange k's reductions go through, or nil when
// k does not reduce.
func lowerReduce(k *ir.Kernel) *Exchange {
	if !ir.HasReduce(k) {
		return nil
	}
	return &Exchange{
		Shared: &ir.Array{Name: "kg_red", Elem: ir.F32, Len: threads(k), Space: ir.Shared, At: k.At},
		Lin:    &ir.Var{Name: "kg_lin", Type: ir.U32, At: k.At},
		Off:    &ir.Var{Name: "kg_off", Type: ir.U32, Mutable: true, At: k.At},
	}
}

// threads is the workgroup's thread count: the product of its dimensions
// other than 1.
func threads(k *ir.Kernel) ir.Expr {
	var n ir.Expr
	for _, w := range k.Workgroup {
		if c, ok := w.(*ir.Const); ok && c.I == 1 {
			continue
		}
		if n == nil {
			n = w
			continue
		}
		n = &ir.Binary{Op: ir.Mul, X: n, Y: w, At: w.Pos()}
	}
	if n == nil {
		return &ir.Const{T: ir.U32, I: 1, At: k.At}
	}
	return n
}
