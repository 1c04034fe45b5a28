package pass_test

import (
	"testing"

	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/pass"
)

func reducing(t *testing.T, reduce bool) *ir.Kernel {
	t.Helper()
	b := dsl.New("k", ir.Portable)
	w := b.Param("W", ir.U32, 32)
	out := b.Buffer("out", ir.F32, ir.Write, "dst", "")
	b.Workgroup(w, 4, 1)
	b.Grid(1, 1, 1)
	v := b.LocalID(0).F32()
	if reduce {
		v = b.Reduce("sum", v, w, ir.Butterfly)
	}
	out.Store(b.LocalID(0), v)
	k, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// The lowering holds one f32 per thread of the workgroup, indexed by a u32
// linear id, and an offset; a kernel without reductions has none.
func TestLowerReduce(t *testing.T) {
	if x := pass.Of(reducing(t, false)).Exchange; x != nil {
		t.Fatalf("a kernel without reductions lowers to %+v", x)
	}
	x := pass.Of(reducing(t, true)).Exchange
	if x == nil {
		t.Fatal("no lowering for a reducing kernel")
	}
	if got := ir.ExprString(x.Shared.Len); got != "W * 4u" {
		t.Errorf("shared array of %s elements, want W * 4u (one per thread)", got)
	}
	if x.Shared.Space != ir.Shared || x.Shared.Elem != ir.F32 || x.Lin.Type != ir.U32 || x.Off.Type != ir.U32 {
		t.Errorf("lowering %+v %+v %+v: want a shared f32 array, u32 linear id and offset", x.Shared, x.Lin, x.Off)
	}
}
