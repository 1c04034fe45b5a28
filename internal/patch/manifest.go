package patch

import (
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/internal/integration"
	"github.com/kernelgen/kernelgen/templates"
)

// manifestStep renders a backend's integration manifest into its step: the
// new files (glue files and kernels below m.Dir) and one edit per section,
// its text rendered from the templates the section names. A revision's
// sections apply where its probe holds, and the base sections it replaces
// only where it does not.
func manifestStep(m *integration.Manifest) (*Step, error) {
	files, edit, err := renderManifest(m)
	if err != nil {
		return nil, err
	}
	step := &Step{Backend: m.Backend, Subject: m.Subject, Body: m.Body, Files: files, Manifest: true}
	if step.Edits, err = revisedEdits(m.Backend+" manifest, ", m.Sections, m.Revisions, edit); err != nil {
		return nil, err
	}
	if m.ForTree != nil {
		step.forTree = func(t *Tree) ([]*Step, error) {
			adapted, err := m.ForTree(m, t.readGGML)
			if err != nil {
				return nil, fmt.Errorf("%s manifest: %w", m.Backend, err)
			}
			once := *adapted
			once.ForTree = nil
			s, err := manifestStep(&once)
			return []*Step{s}, err
		}
	}
	return step, nil
}

// revisedEdits are sections' edits (by edit), then the revisions': a
// revision's sections apply where its probe holds, and the sections it
// replaces only where it does not. where heads a revision's refusals.
func revisedEdits(where string, sections []integration.Section, revisions []integration.Revision, edit func(integration.Section) (Edit, error)) ([]Edit, error) {
	var out []Edit
	replaced := map[string]*integration.Revision{}
	for i := range revisions {
		r := &revisions[i]
		for _, n := range r.Replaces {
			replaced[n] = r
		}
	}
	for _, s := range sections {
		e, err := edit(s)
		if err != nil {
			return nil, err
		}
		if r, ok := replaced[s.Name]; ok {
			e.Unless = &Probe{File: r.Probe.File, Text: r.Probe.Text, Revision: r.Name}
			delete(replaced, s.Name)
		}
		out = append(out, e)
	}
	for n, r := range replaced {
		return nil, fmt.Errorf("%srevision %q: replaces section %q, which the base does not have", where, r.Name, n)
	}
	for _, r := range revisions {
		if r.Probe.File == "" || r.Probe.Text == "" {
			return nil, fmt.Errorf("%srevision %q: its probe needs a file and a text", where, r.Name)
		}
		for _, s := range r.Sections {
			e, err := edit(s)
			if err != nil {
				return nil, err
			}
			e.Needs = &Probe{File: r.Probe.File, Text: r.Probe.Text, Revision: r.Name}
			out = append(out, e)
		}
	}
	return out, nil
}

// opsEdits are the reference backend's sections of the ops commit
// (integration.Manifest.Ops).
func opsEdits(m *integration.Manifest) ([]Edit, error) {
	_, edit, err := renderManifest(m)
	if err != nil {
		return nil, err
	}
	var out []Edit
	for _, s := range m.Ops {
		e, err := edit(s)
		if err != nil {
			return nil, err
		}
		e.Manifest = m.Backend
		out = append(out, e)
	}
	return out, nil
}

// renderManifest renders a manifest's new files, and returns how a section of it
// becomes an edit.
func renderManifest(m *integration.Manifest) ([]NewFile, func(integration.Section) (Edit, error), error) {
	where := func(sec string) string { return fmt.Sprintf("%s manifest, section %q", m.Backend, sec) }
	r, err := m.Render()
	if err != nil {
		return nil, nil, err
	}
	var files []NewFile
	for _, f := range r.Files {
		files = append(files, NewFile{Path: m.Dir + f.Name, Data: upstreamText(f.Data)})
	}
	up, spliced := r.Sections, map[string]string{}
	for name, text := range r.Spliced {
		spliced[name] = string(upstreamText([]byte(text)))
	}

	text := func(s integration.Section) (string, error) {
		t := s.Text
		var body string
		switch {
		case t.Section != "" && strings.HasPrefix(t.Section, "upstream-"):
			v, ok := up[t.Section]
			if !ok {
				return "", fmt.Errorf("%s: the upstream templates of %s have no section %q", where(s.Name), m.Backend, t.Section)
			}
			body = stripDocRefs(strings.TrimRight(v, "\n") + "\n")
		case t.Section != "" && m.Glue == nil:
			return "", fmt.Errorf("%s: %s has no glue templates to take section %q from", where(s.Name), m.Backend, t.Section)
		case t.Section != "":
			v, err := templates.Section(m.Glue, t.Section)
			if err != nil {
				return "", fmt.Errorf("%s: %w", where(s.Name), err)
			}
			body = stripDocRefs(strings.TrimRight(v, "\n") + "\n")
		case t.Kernel != "":
			v, ok := spliced[t.Kernel]
			if !ok {
				return "", fmt.Errorf("%s: %s renders no spliced kernel file %q", where(s.Name), m.Backend, t.Kernel)
			}
			body = v
		case t.Literal != "":
			if !strings.HasSuffix(t.Literal, "\n") {
				return "", fmt.Errorf("%s: a literal text must end in a newline (it inserts whole lines)", where(s.Name))
			}
			body = t.Literal
		default:
			return "", fmt.Errorf("%s: no text (name a template section, a kernel file or a literal)", where(s.Name))
		}
		if t.BlankBefore {
			body = "\n" + body
		}
		if t.BlankAfter {
			body += "\n"
		}
		return body, nil
	}
	edit := func(s integration.Section) (Edit, error) {
		if s.File == "" || len(s.Anchor) == 0 {
			return Edit{}, fmt.Errorf("%s: a section needs a file and an anchor path", where(s.Name))
		}
		body, err := text(s)
		if err != nil {
			return Edit{}, err
		}
		place := After
		switch s.Place {
		case integration.Before:
			place = Before
		case integration.Replace:
			if s.Until == "" {
				return Edit{}, fmt.Errorf("%s: a section that replaces lines needs the text that ends them (Until)", where(s.Name))
			}
			place = Replace
		}
		return Edit{Name: s.Name, File: s.File, Anchor: s.Anchor, Place: place, Text: body, Until: s.Until, Defines: s.Defines}, nil
	}

	return files, edit, nil
}

// Probe is a fact of a tree that selects a revision's sections: File holds
// Text.
type Probe struct {
	File, Text string
	Revision   string // the revision family it recognises, for reports
}
