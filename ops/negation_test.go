package ops

import (
	"testing"

	"github.com/kernelgen/kernelgen/ir"
)

// No kernel negates a comparison: "src != x" is how a colleague writes it,
// and every backend prints the IR's comparison as it stands, so
// "!(src == x)" in the IR is "!(src == x)" in every language.
func TestNoNegatedComparison(t *testing.T) {
	var kernels []*ir.Kernel
	for _, a := range Ariths() {
		for _, op := range All() {
			k, err := op.Kernel(a)
			if err != nil {
				t.Fatal(err)
			}
			kernels = append(kernels, k)
		}
		for _, s := range SharedKernels() {
			k, err := s.Kernel(a)
			if err != nil {
				t.Fatal(err)
			}
			kernels = append(kernels, k)
		}
	}
	for _, k := range kernels {
		negated := func(e ir.Expr) {
			ir.WalkExpr(e, func(x ir.Expr) {
				if u, ok := x.(*ir.Unary); ok && u.Op == ir.Not {
					if b, ok := u.X.(*ir.Binary); ok && b.Op.IsCompare() {
						t.Errorf("%s: %s: !(%s): write the opposite comparison", k.ID(), u.At, ir.ExprString(b))
					}
				}
			})
		}
		for _, r := range k.Requires {
			negated(r.Cond)
		}
		ir.WalkStmts(k.Body, func(s ir.Stmt) {
			for _, e := range ir.StmtExprs(s) {
				negated(e)
			}
		})
	}
	if len(kernels) < 20 {
		t.Fatalf("checked %d kernels; too few", len(kernels))
	}
}
