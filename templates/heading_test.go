package templates_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/backend/backendtest"
	"github.com/kernelgen/kernelgen/internal/integration"
	"github.com/kernelgen/kernelgen/internal/registry"
	"github.com/kernelgen/kernelgen/templates"
)

// The review copy's headings come from the integration manifest: every
// backend's review copy heads its sections with {{placement}}, a section the
// manifest moves (another anchor, the other side of it) moves the heading
// and nothing else, and a heading that names a section the manifest lacks is
// an error naming it.
func TestReviewHeadingsFollowTheManifest(t *testing.T) {
	for _, b := range registry.Implemented() {
		m := b.Integration
		if m == nil || m.Glue == nil || m.Glue.Template == "" {
			continue // no review template (a backend whose review copy is its upstream glue's sections)
		}
		t.Run(b.Name, func(t *testing.T) {
			var named []string
			base := review(t, m, func(names ...string) (string, error) {
				named = append(named, names...)
				return m.Heading(names...)
			})
			if len(named) == 0 {
				t.Fatalf("%s's review copy has no heading placed by its manifest ({{placement \"section\"}})", m.Glue.Template)
			}
			for _, n := range named {
				old, err := m.Heading(n)
				if err != nil {
					t.Fatal(err)
				}
				moved := backendtest.EditedManifest(m, n, backendtest.Moved)
				now, err := moved.Heading(n)
				if err != nil {
					t.Fatal(err)
				}
				out := review(t, m, moved.Heading)
				if !strings.Contains(out, now) || strings.Contains(out, old) {
					t.Errorf("section %q moved in the manifest, but the review copy does not say %q instead of %q", n, now, old)
				}
				if strings.ReplaceAll(out, now, old) != base {
					t.Errorf("section %q moved in the manifest changed more of the review copy than its heading", n)
				}

				gone := backendtest.EditedManifest(m, n, func(s *integration.Section) { s.Name += " (renamed)" })
				_, err = templates.Glue(m.Glue, gone.Heading)
				if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", n)) {
					t.Errorf("a heading naming %q, which the manifest lacks: got %v, want an error naming it", n, err)
				}
			}
		})
	}
}

func review(t *testing.T, m *integration.Manifest, place templates.Placement) string {
	t.Helper()
	files, err := templates.Glue(m.Glue, place)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, f := range files {
		b.Write(f.Data)
	}
	return b.String()
}
