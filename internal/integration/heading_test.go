package integration

import (
	"strings"
	"testing"
)

// A heading says the section's file (base name) and place, every anchor as
// the manifest writes it; a name the manifest lacks, or has twice, is an
// error naming it.
func TestHeading(t *testing.T) {
	m := &Manifest{Backend: "example",
		Sections: []Section{
			{Name: "one", File: "src/a/b.cpp", Place: Before, Anchor: []string{"void f() {"}},
			{Name: "three", File: "src/a/b.cpp", Place: After, Anchor: []string{"void g() {", "case X:", "break;"}},
		},
		Revisions: []Revision{{Name: "newer", Sections: []Section{
			{Name: "moved", File: "llama:src/c.cpp", Place: After, Anchor: []string{"int h;"}},
		}}},
	}
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"one"}, "// == b.cpp, before `void f() {` =="},
		{[]string{"three"}, "// == b.cpp, in `void g() {`, after `case X:`, after `break;` =="},
		{[]string{"moved"}, "// == c.cpp, after `int h;` =="},
		{[]string{"one", "moved"}, "// == b.cpp, before `void f() {` ==\n// == c.cpp, after `int h;` =="},
	} {
		got, err := m.Heading(c.names...)
		if err != nil || got != c.want {
			t.Errorf("Heading(%q) = %q, %v; want %q", c.names, got, err, c.want)
		}
	}
	for _, names := range [][]string{{"two"}, {"one", "two"}} {
		_, err := m.Heading(names...)
		if err == nil || !strings.Contains(err.Error(), `"two"`) || !strings.Contains(err.Error(), `"one", "three", "moved"`) {
			t.Errorf("Heading(%q): got %v, want an error naming \"two\" and the sections there are", names, err)
		}
	}
	m.Sections = append(m.Sections, Section{Name: "one", File: "src/d.cpp", Anchor: []string{"x"}})
	if _, err := m.Heading("one"); err == nil || !strings.Contains(err.Error(), `"one", which the manifest has 2 times`) {
		t.Errorf("Heading of a name two sections have: got %v, want an error naming it", err)
	}
	if _, err := m.Heading(); err == nil {
		t.Error("Heading(): got no error for a heading naming no section")
	}
}
