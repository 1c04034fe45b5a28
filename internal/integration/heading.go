package integration

import (
	"fmt"
	"path"
	"strings"
)

// Heading is the review copy's heading of the named sections (Section.Name,
// base or revision), one line each: the file they change and their place,
// as the manifest says, so that the review copy cannot name another place
// than the one `kernelgen patch` splices into. A name the manifest lacks, or
// has twice, is an error naming it.
func (m *Manifest) Heading(names ...string) (string, error) {
	if len(names) == 0 {
		return "", fmt.Errorf("integration: %s: a review heading names no manifest section", m.Backend)
	}
	var lines []string
	for _, n := range names {
		s, count := m.section(n)
		if count > 1 {
			return "", fmt.Errorf("integration: %s: the review copy's heading names section %q, which the manifest has %d times: give each section a name of its own", m.Backend, n, count)
		}
		if count == 0 {
			return "", fmt.Errorf("integration: %s: the review copy's heading names section %q, which the manifest lacks: name one of %s, or give review-only text a heading of its own",
				m.Backend, n, strings.Join(m.sectionNames(), ", "))
		}
		lines = append(lines, "// == "+s.Where()+" ==")
	}
	return strings.Join(lines, "\n"), nil
}

// Where is the section's file (base name) and place: in the first anchor,
// after each next one, before or after the last (every anchor as written).
func (s Section) Where() string {
	where := path.Base(strings.TrimPrefix(s.File, "llama:"))
	for i, a := range s.Anchor {
		switch {
		case i == len(s.Anchor)-1:
			where += ", " + s.Place.String() + " `" + a + "`"
		case i == 0:
			where += ", in `" + a + "`"
		default:
			where += ", after `" + a + "`"
		}
	}
	return where
}

func (p Place) String() string {
	switch p {
	case Before:
		return "before"
	case Replace:
		return "in place of"
	}
	return "after"
}

// section is the section named name, and how many sections have that name.
func (m *Manifest) section(name string) (found Section, count int) {
	for _, s := range m.allSections() {
		if s.Name == name {
			found, count = s, count+1
		}
	}
	return found, count
}

func (m *Manifest) sectionNames() []string {
	var names []string
	for _, s := range m.allSections() {
		names = append(names, fmt.Sprintf("%q", s.Name))
	}
	return names
}

func (m *Manifest) allSections() []Section {
	all := append([]Section(nil), m.Sections...)
	for _, r := range m.Revisions {
		all = append(all, r.Sections...)
	}
	return all
}
