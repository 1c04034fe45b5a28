package ir_test

import (
	"testing"

	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
)

// build makes a tiny reduction kernel in variations a reviewer cares about.
func build(t *testing.T, rename, moveData, reassociate, newLoad bool) *ir.Kernel {
	t.Helper()
	b := dsl.New("k", ir.Portable)
	n := b.Arg("n", ir.U32, "")
	in := b.Buffer("in", ir.F32, ir.Read, "src0", "")
	out := b.Buffer("out", ir.F32, ir.Write, "dst", "")
	b.Workgroup(32, 1, 1)
	b.Grid(n, 1, 1)
	name := "x"
	if rename {
		name = "value"
	}
	stride := 1
	if moveData {
		stride = 2
	}
	lid := b.Let("lid", b.LocalID(0))
	x := b.Let(name, in.Load(lid.Mul(stride)))
	y := b.Let("y", in.Load(lid.Mul(stride).Add(1)))
	var sum dsl.Val
	if reassociate {
		sum = b.Let("s", y.Add(x.Mul(x)))
	} else {
		sum = b.Let("s", x.Mul(x).Add(y))
	}
	if newLoad {
		sum = b.Let("s2", sum.Add(in.Load(lid.Add(100))))
	}
	r := b.Reduce("r", sum, 32, ir.Butterfly)
	b.If(lid.Eq(0), func() { out.Store(b.GroupID(0), r) })
	k, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSignatureSeparatesArithmeticFromNamesAndLayout(t *testing.T) {
	base := ir.Sign(build(t, false, false, false, false))
	renamed := ir.Sign(build(t, true, false, false, false))
	if base != renamed {
		t.Errorf("renaming a variable changed the signature:\n%s\nvs\n%s", base.Text(), renamed.Text())
	}
	moved := ir.Sign(build(t, false, true, false, false))
	if moved.Arithmetic != base.Arithmetic || moved.Memory == base.Memory {
		t.Errorf("a layout change must change the memory part only")
	}
	reassoc := ir.Sign(build(t, false, false, true, false))
	if reassoc.Arithmetic == base.Arithmetic {
		t.Errorf("reordering an addition did not change the arithmetic part")
	}
	extra := ir.Sign(build(t, false, false, false, true))
	if extra.Arithmetic == base.Arithmetic || extra.Memory == base.Memory {
		t.Errorf("a new load feeding the sum must change arithmetic and memory")
	}
	back, err := ir.ParseSignature(base.Text())
	if err != nil || back != base {
		t.Errorf("ParseSignature(Text()) = %+v, %v", back, err)
	}
}
