package patch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kernelgen/kernelgen/internal/integration"
	"github.com/kernelgen/kernelgen/internal/registry"
)

// A tree that lacks the anchor of a manifest's section is refused, the
// refusal naming the backend's manifest, the section and the file, and
// nothing is written: for every backend, its first section's anchor.
func TestManifestSectionWithoutAnchorIsRefused(t *testing.T) {
	for _, m := range registry.Integrations() {
		t.Run(m.Backend, func(t *testing.T) {
			s := m.Sections[0]
			if m.Ops != nil {
				s = m.Ops[0] // the reference's own commit is for a tree with the series (TestTreeWithTheSeries)
			}
			root := fixture(t, "")
			const gone = "/* the anchor is not here */"
			rewrite(t, root, s.File, s.Anchor[0], gone)
			before := snapshot(t, root)
			steps, err := Plan(registry.Integrations(), []string{m.Backend})
			if err != nil {
				t.Fatal(err)
			}
			_, err = Apply(context.Background(), open(t, root), steps)
			var prob *Problem
			if !errors.As(err, &prob) {
				t.Fatalf("want a refusal, got %v", err)
			}
			want := fmt.Sprintf("%s: %s manifest, section %q: anchor %q not found", s.File, m.Backend, s.Name, s.Anchor[0])
			for _, w := range []string{want, "nothing was changed"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the refusal does not say %q:\n%v", w, err)
				}
			}
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("a refused patch changed the tree:\n%s", diff)
			}
		})
	}
}

// A ggml revision whose file moved is a revision of the manifest that
// replaces the base section: the base applies to the old tree, the
// revision's section to the new one, each skipping the other, and neither
// entry changes for the other tree.
func TestRevisionReplacesTheSectionOfAMovedFile(t *testing.T) {
	const (
		old   = "src/ggml-sycl/ggml-sycl.cpp"
		moved = "src/ggml-sycl/ggml-sycl-main.cpp"
		head  = `#include "ggml-sycl/gated_delta_net.hpp"`
		text  = "// the line the section adds\n"
	)
	bs, err := registry.Resolve("sycl")
	if err != nil {
		t.Fatal(err)
	}
	m := &integration.Manifest{Backend: "moved", Subject: "moved : test", Body: "test\n", Dir: "src/ggml-sycl/", Glue: bs[0].Glue(),
		Sections: []integration.Section{{Name: "include", File: old, Place: integration.After, Anchor: []string{head}, Text: integration.Text{Literal: text}}},
		Revisions: []integration.Revision{{Name: "ggml whose sycl backend moved to ggml-sycl-main.cpp",
			Probe:    integration.Probe{File: moved, Text: head},
			Sections: []integration.Section{{Name: "include (moved)", File: moved, Place: integration.After, Anchor: []string{head}, Text: integration.Text{Literal: text}}},
			Replaces: []string{"include"}}},
	}
	step, err := manifestStep(m)
	if err != nil {
		t.Fatal(err)
	}
	step.Files = nil // only the sections are under test
	for _, tc := range []struct {
		name            string
		move            bool
		applies, skips  string
		why             string
		patched, absent string
	}{
		{"old tree", false, "include", "include (moved)", "the tree has no " + moved, old, moved},
		{"new tree", true, "include (moved)", "include", fmt.Sprintf("%s has %q: the sections of ggml whose sycl backend moved to ggml-sycl-main.cpp stand in", moved, head), moved, old},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fixture(t, "")
			if tc.move {
				run(t, root, "git", "mv", old, moved)
				commitAll(t, root)
			}
			reports, err := Check(context.Background(), open(t, root), []*Step{step})
			if err != nil {
				t.Fatal(err)
			}
			r := reports[0]
			if len(r.Edits) != 1 || r.Edits[0].Edit.Name != tc.applies || r.Edits[0].State != Pending {
				t.Errorf("want only %q found, got %+v", tc.applies, r.Edits)
			}
			if len(r.Skipped) != 1 || r.Skipped[0].Edit.Name != tc.skips || r.Skipped[0].Why != tc.why {
				t.Errorf("want %q skipped (%s), got %+v", tc.skips, tc.why, r.Skipped)
			}
			if _, err := Apply(context.Background(), open(t, root), []*Step{step}); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(tc.patched)))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(got), head+"\n"+text) {
				t.Errorf("%s does not hold the section's text", tc.patched)
			}
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(tc.absent))); err == nil {
				t.Errorf("%s was written", tc.absent)
			}
		})
	}
}

// A manifest that names a template section its backend lacks, or a
// revision that replaces no base section, is an error naming the manifest
// and the section.
func TestManifestMistakesAreNamed(t *testing.T) {
	bs, err := registry.Resolve("sycl")
	if err != nil {
		t.Fatal(err)
	}
	sec := integration.Section{Name: "include", File: "src/x.cpp", Anchor: []string{"x"}, Text: integration.Text{Section: "upstream-no-such-section"}}
	m := &integration.Manifest{Backend: "broken", Glue: bs[0].Glue(), Sections: []integration.Section{sec}}
	if _, err := manifestStep(m); err == nil || !strings.Contains(err.Error(), `broken manifest, section "include": the upstream templates of broken have no section "upstream-no-such-section"`) {
		t.Errorf("a missing template section: %v", err)
	}
	sec.Text = integration.Text{Literal: "x\n"}
	m.Sections = []integration.Section{sec}
	m.Revisions = []integration.Revision{{Name: "r", Probe: integration.Probe{File: "src/x.cpp", Text: "y"}, Replaces: []string{"includes"}}}
	if _, err := manifestStep(m); err == nil || !strings.Contains(err.Error(), `broken manifest, revision "r": replaces section "includes", which the base does not have`) {
		t.Errorf("a revision replacing nothing: %v", err)
	}
}

// The ops commit takes its kernels from the one manifest that declares
// Ops: without one, or with two, there is no plan.
func TestPlanNeedsOneReference(t *testing.T) {
	var ref *integration.Manifest
	var rest []*integration.Manifest
	for _, m := range registry.Integrations() {
		if m.Ops != nil {
			ref = m
			continue
		}
		rest = append(rest, m)
	}
	if ref == nil {
		t.Fatal("no manifest of the registry declares Ops")
	}
	if _, err := Plan(rest, []string{"all"}); err == nil || !strings.Contains(err.Error(), "no manifest declares the ops commit's kernels") {
		t.Errorf("without a reference: %v", err)
	}
	twin := *ref
	twin.Backend = "twin"
	if _, err := Plan(append([]*integration.Manifest{ref, &twin}, rest...), []string{"all"}); err == nil || !strings.Contains(err.Error(), "both declare the ops commit's kernels") {
		t.Errorf("with two references: %v", err)
	}
}
