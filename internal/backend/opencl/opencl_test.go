package opencl

import (
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/backend/backendtest"
	"github.com/kernelgen/kernelgen/internal/integration"
	"github.com/kernelgen/kernelgen/verify/clrun"
)

// The checks build and run the bytes build writes: the written
// ssm_conv.cl with its sums started at 1 instead of 0 gives results that
// differ from the Go reference.
func TestVerifyRunsTheWrittenBytes(t *testing.T) {
	check, files := backendtest.Check(Backend), backendtest.Written(t, Backend)
	backendtest.MustFail(t, "a kernel changed after generation", check,
		backendtest.SumsFromOne(t, files, name+"/ssm_conv.cl"), []error{clrun.ErrMissingTool, clrun.ErrNoDevice},
		"ssm_conv@portable[d_conv=3]", "(bit for bit)")
}

// The review copy heads each section with the place the manifest gives it:
// a section moved in the manifest moves its heading and nothing else, and a
// section it splices is in the review copy.
func TestReviewHeadingsFollowTheManifest(t *testing.T) {
	review := func(m *integration.Manifest) string {
		files, err := withGlue(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		return string(files[len(files)-1].Data)
	}
	base := review(Manifest)
	placed := 0
	for _, s := range Manifest.Sections {
		if s.Text.Section == "" {
			continue
		}
		placed++
		moved := backendtest.EditedManifest(Manifest, s.Name, backendtest.Moved)
		old, err := Manifest.Heading(s.Name)
		if err != nil {
			t.Fatal(err)
		}
		now, err := moved.Heading(s.Name)
		if err != nil {
			t.Fatal(err)
		}
		out := review(moved)
		if !strings.Contains(base, old+"\n") || !strings.Contains(out, now+"\n") || strings.Contains(out, old+"\n") {
			t.Errorf("section %q moved in the manifest, but the review copy does not say %q instead of %q", s.Name, now, old)
		}
		if strings.ReplaceAll(out, now, old) != base {
			t.Errorf("section %q moved in the manifest changed more of the review copy than its heading", s.Name)
		}
	}
	if placed == 0 || strings.Count(base, "\n// == ") != placed {
		t.Errorf("the review copy has %d headings for the manifest's %d glue sections", strings.Count(base, "\n// == "), placed)
	}
}
