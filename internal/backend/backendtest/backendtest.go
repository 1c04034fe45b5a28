// Package backendtest is what the backends' tests share: files as build
// writes them, altered after generation, to show that a backend's checks
// compile and run exactly those bytes.
package backendtest

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/internal/backend"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

// Written is b's generation's files (build's bytes, headers included).
func Written(t *testing.T, b *backend.Backend) []backend.File {
	t.Helper()
	g, err := b.Generation()
	if err != nil {
		t.Fatal(err)
	}
	return g.Written()
}

// Altered is a copy of files in which the file at path has every old
// replaced by new; it fails t when the file or old is not there, so an
// alteration that no longer applies cannot pass unnoticed.
func Altered(t *testing.T, files []backend.File, path, old, new string) []backend.File {
	t.Helper()
	out := append([]backend.File(nil), files...)
	for i, f := range out {
		if f.Path != path {
			continue
		}
		if !strings.Contains(string(f.Data), old) {
			t.Fatalf("%s does not contain %q", path, old)
		}
		out[i].Data = []byte(strings.ReplaceAll(string(f.Data), old, new))
		return out
	}
	t.Fatalf("no file %s was generated", path)
	return nil
}

// MustPass runs check on files (as written) and fails t unless it passes;
// it skips t when a tool the check needs is missing (the host C++
// compiler, or one of missing), and fails it instead where
// KERNELGEN_REQUIRE_TOOLS is set (CI).
func MustPass(t *testing.T, check func([]backend.File) error, files []backend.File, missing ...error) {
	t.Helper()
	err := check(files)
	if err == nil {
		return
	}
	var te *hostemu.ToolError
	absent := errors.As(err, &te)
	for _, m := range missing {
		absent = absent || errors.Is(err, m)
	}
	if absent && os.Getenv("KERNELGEN_REQUIRE_TOOLS") == "" {
		t.Skip(err)
	}
	t.Fatalf("as written: %v", err)
}

// MustFail runs check on files and fails t unless it fails with an error
// containing every one of want. Run it after MustPass, so a missing tool
// cannot pass for a failure.
func MustFail(t *testing.T, what string, check func([]backend.File) error, files []backend.File, want ...string) {
	t.Helper()
	err := check(files)
	if err == nil {
		t.Errorf("%s: the check passed", what)
		return
	}
	t.Logf("%s: %v", what, err)
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: the check failed, but its error lacks %q:\n%v", what, w, err)
			return
		}
	}
}

// Families is each shared kernel's upstream view under n (its Own part
// built by n.Family), failing t on an error; each has one table row per
// dispatch case, keyed as the dispatch is, and the two bools the
// backends' pipeline and kernel arrays are indexed by.
func Families(t *testing.T, n glue.Names) []glue.FamilyView {
	t.Helper()
	fams, err := glue.NewFamilyViews(n)
	if err != nil {
		t.Fatal(err)
	}
	if len(fams) == 0 {
		t.Fatal("no shared kernel has a view")
	}
	for _, fv := range fams {
		tb := fv.Table
		if len(tb.Rows) != len(fv.Cases) || len(tb.Columns) == 0 || tb.Columns[0] != fv.Key || len(tb.Bools) != 2 {
			t.Errorf("%s: %d rows for %d cases, columns %v keyed by %s, bools %v", fv.Name, len(tb.Rows), len(fv.Cases), tb.Columns, fv.Key, tb.Bools)
		}
	}
	return fams
}

// RefusesOneBool shows that newFamily (a backend's Names.Family) refuses a
// kernel whose variants its two-bool table cannot index, with an error
// containing want.
func RefusesOneBool(t *testing.T, newFamily func(glue.FamilyParts) (any, error), want string) {
	t.Helper()
	k := &ir.Kernel{Name: "k", Params: []*ir.Param{{Name: "S", Type: ir.I32}, {Name: "IDS", Type: ir.Bool}}}
	fv := &glue.FamilyView{Name: "k", Key: "S", Table: glue.VariantTable{Columns: []string{"S"}, Bools: []string{"IDS"}, BoolIndex: []string{"ids"}}}
	_, err := newFamily(glue.FamilyParts{View: fv, Kernel: k})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("one bool: got %v, want an error containing %q", err, want)
	}
}
