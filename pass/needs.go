// Package pass holds what runs between building a kernel (dsl.Build) and
// lowering it (emit/*): a named, ordered list of passes, each reading facts
// about a kernel from its IR, run once per kernel (Of), so that emitters
// and the build steps after them read the facts instead of finding them
// again in printed text.
package pass

import (
	"math"

	"github.com/kernelgen/kernelgen/ir"
)

// Needs is what a kernel asks of a target beyond plain f32 arithmetic. Only
// the portable contract asks: native kernels take the target's arithmetic
// as it is.
type Needs struct {
	// ExactFMA: the kernel takes fmas that must round once. A target whose
	// fma may round twice (Vulkan's) spells them through doubles, so the
	// kernel needs the device's 64-bit floats.
	ExactFMA bool
	// DenormPreserve: the kernel holds f32 values whose denormals must
	// survive, so a target where flushing is the driver's choice builds it
	// a second time asking to keep them.
	DenormPreserve bool
	// ZeroAdd: the kernel adds a literal +0.0 to an f32 value to turn -0.0
	// into +0.0 (the conv's trailing + 0.0), which drivers fold away unless
	// it is spelled as IEEE rounds it.
	ZeroAdd bool
}

// needsOf reads k's needs from its IR (pass "needs").
func needsOf(k *ir.Kernel) Needs {
	var n Needs
	if k.Arith.Native {
		return n
	}
	ir.WalkStmts(k.Body, func(s ir.Stmt) {
		if l, ok := s.(*ir.Let); ok && l.Var.Type == ir.F32 {
			n.DenormPreserve = true
		}
		for _, e := range ir.StmtExprs(s) {
			ir.WalkExpr(e, func(x ir.Expr) {
				switch x := x.(type) {
				case *ir.Call:
					n.ExactFMA = n.ExactFMA || x.Fn == ir.FMA
				case *ir.Binary:
					if x.Op == ir.Add && x.X.Type() == ir.F32 && (positiveZero(x.X) || positiveZero(x.Y)) {
						n.ZeroAdd = true
					}
				}
			})
		}
	})
	return n
}

func positiveZero(e ir.Expr) bool {
	c, ok := e.(*ir.Const)
	return ok && c.T == ir.F32 && c.F == 0 && !math.Signbit(float64(c.F))
}
