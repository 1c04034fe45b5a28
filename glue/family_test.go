package glue

import (
	"errors"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// A backend's own part of a family (Names.Family) is built once per shared
// kernel from the finished common view, lands in FamilyView.Own, and its
// error stops the views.
func TestFamilyOwnPart(t *testing.T) {
	n := Names{Backend: "cuda", Function: func(k *ir.Kernel) string { return "f_" + k.Name }}
	calls := 0
	n.Family = func(p FamilyParts) (any, error) {
		calls++
		fv := p.View
		if fv.Key == "" || len(fv.Cases) == 0 || fv.Function != "f_"+p.Kernel.Name || fv.Own != nil {
			t.Errorf("%s: the view is not filled before its own part: key %q, %d cases, function %q", fv.Name, fv.Key, len(fv.Cases), fv.Function)
		}
		for _, l := range fv.Locals {
			if l.Name != fv.Key && l.CType != "bool" {
				t.Errorf("%s: local %s is past the final cut of Locals", fv.Name, l.Name)
			}
		}
		// every buffer binds; the ids form's own tensor is not the plain form's
		own := 0
		for _, b := range p.Kernel.Buffers {
			bind, inPlain := p.Bind(b)
			if bind == nil {
				t.Errorf("%s: buffer %s (%s) has no binding", fv.Name, b.Name, b.Role)
				continue
			}
			if !inPlain && bind.Tensor != "scratch" {
				own++
			}
		}
		if own == 0 {
			t.Errorf("%s: no buffer is the ids form's alone", fv.Name)
		}
		if len(p.Args) != len(p.Kernel.Args) || len(p.GatherArgs) != len(p.Gather.Kernel.Args) {
			t.Errorf("%s: %d of %d args, %d of %d gather args over the node", fv.Name, len(p.Args), len(p.Kernel.Args), len(p.GatherArgs), len(p.Gather.Kernel.Args))
		}
		return fv.Name + "/" + fv.Key, nil
	}
	fams, err := NewFamilyViews(n)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(ops.SharedKernels()); calls != want || len(fams) != want {
		t.Fatalf("%d calls, %d families; want %d", calls, len(fams), want)
	}
	for _, f := range fams {
		if f.Own != f.Name+"/"+f.Key {
			t.Errorf("%s: Own is %v", f.Name, f.Own)
		}
	}

	n.Family = func(FamilyParts) (any, error) { return nil, errors.New("no pipeline table") }
	if _, err := NewFamilyViews(n); err == nil || !strings.Contains(err.Error(), "no pipeline table") {
		t.Errorf("the own part's error is lost: %v", err)
	}
	n.Family = nil
	fams, err = NewFamilyViews(n)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.Own != nil {
			t.Errorf("%s: Own is %v without Names.Family", f.Name, f.Own)
		}
	}
}

// The variant table holds one row per dispatch case, in the dispatch's
// order and spelling, under the launcher's non-bool params (the switch key
// first), and the bools the launcher picks the kernel by.
func TestFamilyTable(t *testing.T) {
	for _, backend := range []string{"vulkan", "opencl"} {
		fams, err := NewFamilyViews(Names{Backend: backend, Function: func(k *ir.Kernel) string { return k.Name }})
		if err != nil {
			t.Fatal(err)
		}
		for _, fv := range fams {
			tb := fv.Table
			if len(tb.Rows) != len(fv.Cases) {
				t.Fatalf("%s/%s: %d rows for %d cases", backend, fv.Name, len(tb.Rows), len(fv.Cases))
			}
			for i, c := range fv.Cases {
				if want := "{" + c.TemplateArgs + "}"; tb.Rows[i] != want {
					t.Errorf("%s/%s: row %d is %s, the case %s", backend, fv.Name, i, tb.Rows[i], want)
				}
			}
			var launch []string
			for _, p := range strings.Split(fv.LaunchParams, ", ") {
				launch = append(launch, p[strings.LastIndex(p, " ")+1:])
			}
			if got := strings.Join(tb.Columns, ", "); len(tb.Columns) == 0 || tb.Columns[0] != fv.Key || got != strings.Join(launch, ", ") {
				t.Errorf("%s/%s: columns %s, key %s, launcher params %s", backend, fv.Name, got, fv.Key, fv.LaunchParams)
			}
			if got := strings.Join(tb.Bools, ", "); got != fv.BoolArgs || len(tb.BoolIndex) != len(tb.Bools) {
				t.Fatalf("%s/%s: bools %s (indices %v), the launcher's %s", backend, fv.Name, got, tb.BoolIndex, fv.BoolArgs)
			}
			for i, b := range tb.Bools {
				if tb.BoolIndex[i] != strings.ToLower(b) {
					t.Errorf("%s/%s: bool %s is indexed by %s", backend, fv.Name, b, tb.BoolIndex[i])
				}
			}
		}
	}
}
