package cuda

import (
	"github.com/kernelgen/kernelgen/ir"
)

// FastDivisors are the u32 args the kernel only ever divides by (x / a,
// x % a: a head or sequence broadcast ratio): ggml-cuda passes such a
// divisor as the uint3 that init_fastdiv_values precomputes on the host and
// divides with fastdiv / fastmodulo, as its own kernels do. Only the text
// ggml-cuda's .cu files take (UpstreamSource) has them so; kernelgen's own
// kernels and the upstream headers keep the operators.
func FastDivisors(k *ir.Kernel) map[*ir.Arg]bool {
	uses, divides := map[*ir.Arg]int{}, map[*ir.Arg]int{}
	ir.WalkStmts(k.Body, func(s ir.Stmt) {
		for _, e := range ir.StmtExprs(s) {
			ir.WalkExpr(e, func(x ir.Expr) {
				switch x := x.(type) {
				case *ir.ArgRef:
					uses[x.Arg]++
				case *ir.Binary:
					if a, ok := x.Y.(*ir.ArgRef); ok && (x.Op == ir.Div || x.Op == ir.Rem) && a.Arg.Type == ir.U32 {
						divides[a.Arg]++
					}
				}
			})
		}
	})
	out := map[*ir.Arg]bool{}
	for a, n := range divides {
		if uses[a] == n {
			out[a] = true
		}
	}
	return out
}

func (l upstreamLang) DividesBy(k *ir.Kernel, a *ir.Arg) bool { return l.fastdiv && FastDivisors(k)[a] }

func (upstreamLang) DivisorType() string { return "uint3" }

func (upstreamLang) Divide(op ir.BinOp, x, a string) string {
	if op == ir.Rem {
		return "fastmodulo(" + x + ", " + a + ")"
	}
	return "fastdiv(" + x + ", " + a + ")"
}
