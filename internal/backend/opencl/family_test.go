package opencl

import (
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/ir"
)

// Each shared kernel's view carries the opencl part its upstream template
// reads: one table row per dispatch case, keyed as the dispatch is.
func TestFamilyOwnPart(t *testing.T) {
	fams, err := glue.NewFamilyViews(glueTarget.Names)
	if err != nil {
		t.Fatal(err)
	}
	for _, fv := range fams {
		f, ok := fv.Own.(*family)
		if !ok {
			t.Fatalf("%s: Own is %T, not the opencl part", fv.Name, fv.Own)
		}
		if len(f.Rows) != len(fv.Cases) || f.Columns[0] != fv.Key || len(f.Bools) != 2 {
			t.Errorf("%s: %d rows for %d cases, columns %v keyed by %s, bools %v", fv.Name, len(f.Rows), len(fv.Cases), f.Columns, fv.Key, f.Bools)
		}
	}
}

// A kernel whose variants the table cannot index is refused, saying why.
func TestFamilyNeedsTwoBools(t *testing.T) {
	k := &ir.Kernel{Name: "k", Params: []*ir.Param{{Name: "S", Type: ir.I32}, {Name: "IDS", Type: ir.Bool}}}
	_, err := newFamily(glue.FamilyParts{View: &glue.FamilyView{Name: "k", Key: "S"}, Kernel: k})
	if err == nil || !strings.Contains(err.Error(), "by two bools, the kernel has 1") {
		t.Errorf("got %v", err)
	}
}
