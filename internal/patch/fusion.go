package patch

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kernelgen/kernelgen/internal/integration"
)

// FusionPlan returns the fusion form's steps for the named backends ("all"
// for every backend with a fusion step), in series order: one per backend,
// no ops step and no gate, since the form adds no op (docs/fusion.md).
func FusionPlan(forms []*integration.Fusion, names []string) ([]*Step, error) {
	fs := append([]*integration.Fusion(nil), forms...)
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Order < fs[j].Order })
	want := map[string]bool{}
	for _, n := range names {
		known := n == "all"
		for _, f := range fs {
			known = known || f.Backend == n
			want[f.Backend] = want[f.Backend] || n == "all" || f.Backend == n
		}
		if !known {
			var have []string
			for _, f := range fs {
				have = append(have, f.Backend)
			}
			return nil, fmt.Errorf("no fusion form for %q yet: it has %s (the ops form, --form ops, has every backend)", n, strings.Join(have, ", "))
		}
	}
	var steps []*Step
	for _, f := range fs {
		if !want[f.Backend] {
			continue
		}
		s, err := fusionStep(f)
		if err != nil {
			return nil, fmt.Errorf("%s fusion: %w", f.Backend, err)
		}
		steps = append(steps, s)
	}
	return steps, nil
}

func fusionStep(f *integration.Fusion) (*Step, error) {
	step := &Step{Backend: f.Backend, Subject: f.Subject, Body: f.Body, Manifest: true}
	files, err := f.Files()
	if err != nil {
		return nil, err
	}
	for _, nf := range files {
		step.Files = append(step.Files, NewFile{Path: f.Dir + nf.Name, Data: upstreamText(nf.Data)})
	}
	for _, s := range f.Sections {
		if s.File == "" || len(s.Anchor) == 0 || !strings.HasSuffix(s.Text.Literal, "\n") {
			return nil, fmt.Errorf("section %q: a file, an anchor path and literal lines", s.Name)
		}
		body := s.Text.Literal
		if s.Text.BlankBefore {
			body = "\n" + body
		}
		if s.Text.BlankAfter {
			body += "\n"
		}
		place := After
		if s.Place == integration.Before {
			place = Before
		}
		step.Edits = append(step.Edits, Edit{Name: s.Name, File: s.File, Anchor: s.Anchor, Place: place, Text: body})
	}
	return step, nil
}
