package canon_test

import (
	"testing"

	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ir/canon"
)

// checked is a native-cpu kernel that asserts its id before the read it
// guards; strict false weakens the bound by one.
func checked(t *testing.T, strict bool) *ir.Kernel {
	b := dsl.New("checked", ir.Native("cpu"))
	rows := b.Arg("n_rows", ir.U32, "")
	ids := b.Buffer("ids", ir.I32, ir.Read, "src0", "")
	cache := b.Buffer("cache", ir.F32, ir.Read, "src1", "")
	out := b.Buffer("out", ir.F32, ir.Write, "dst", "")
	b.Workgroup(1, 1, 1)
	b.Grid(1, 1, 1)
	src := b.Let("src", ids.Load(0))
	if strict {
		b.Assert(src.Lt(rows.I32()))
	} else {
		b.Assert(src.Le(rows.I32()))
	}
	out.Store(0, cache.Load(src.U32()))
	return b.MustBuild()
}

// An assert is an effect of the kernel: a changed condition is a difference,
// the same one none.
func TestAssertIsAnEffect(t *testing.T) {
	a := form(t, checked(t, true))
	if ds := canon.Compare(a, form(t, checked(t, true))); len(ds) != 0 {
		t.Errorf("the same kernel: %s", canon.String(ds))
	}
	ds := canon.Compare(a, form(t, checked(t, false)))
	if len(ds) == 0 {
		t.Fatal("a weaker assert compares equal")
	}
	t.Logf("a weaker assert: %s", canon.String(ds))
}
