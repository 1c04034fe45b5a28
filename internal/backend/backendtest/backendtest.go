// Package backendtest is what the backends' tests share: files as build
// writes them, altered after generation, to show that a backend's checks
// compile and run exactly those bytes; manifests with a section edited, to
// show that what derives from a manifest follows it.
package backendtest

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/backend"
	"github.com/kernelgen/kernelgen/internal/integration"
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

// EditedManifest is a copy of m whose section name (base or revision) edit
// changed; m is left as it is.
func EditedManifest(m *integration.Manifest, name string, edit func(*integration.Section)) *integration.Manifest {
	c := *m
	c.Sections = append([]integration.Section(nil), m.Sections...)
	c.Revisions = append([]integration.Revision(nil), m.Revisions...)
	sections := [][]integration.Section{c.Sections}
	for i := range c.Revisions {
		c.Revisions[i].Sections = append([]integration.Section(nil), c.Revisions[i].Sections...)
		sections = append(sections, c.Revisions[i].Sections)
	}
	for _, ss := range sections {
		for i := range ss {
			if ss[i].Name == name {
				edit(&ss[i])
			}
		}
	}
	return &c
}

// Moved is a section moved: its last anchor another line, its place the
// other side of it.
func Moved(s *integration.Section) {
	s.Anchor = append(append([]string(nil), s.Anchor[:len(s.Anchor)-1]...), s.Anchor[len(s.Anchor)-1]+" /* moved */")
	s.Place = 1 - s.Place
}
