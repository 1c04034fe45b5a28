package patch

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/registry"
)

// opLetter is a mention of our own names for the fused ops ("op D",
// "ops B and D", "op B's"), which no ggml reader knows.
var opLetter = regexp.MustCompile(`\bops? [A-D]\b`)

// No added line of either form's series names an op by our letters: a
// comment says what the code does in ggml's terms (the state gather, the
// conv kernel), not which of our ops it is.
func TestSeriesNamesNoOpLetters(t *testing.T) {
	root := fixture(t, "")
	fusion, err := FusionPlan(registry.Fusions(), []string{"all"})
	if err != nil {
		t.Fatal(err)
	}
	for form, steps := range map[string][]*Step{"ops": plan(t), "fusion": fusion} {
		names, err := Series(context.Background(), open(t, root), steps, filepath.Join(t.TempDir(), form))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			data, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(data), "\n") {
				if strings.HasPrefix(line, "+") && opLetter.MatchString(line) {
					t.Errorf("%s form, %s:%d names an op by our letter (%q): %s", form, filepath.Base(n), i+1, opLetter.FindString(line), line)
				}
			}
		}
	}
}

// The fusion form's tests message names how to turn each backend's
// fusions off (integration.Fusion.Off), so a reader can run the cases both
// ways on any backend; every backend with a step has a setting.
func TestFusionTestsMessageNamesEachSwitch(t *testing.T) {
	steps, err := FusionPlan(registry.Fusions(), []string{"all"})
	if err != nil {
		t.Fatal(err)
	}
	message := strings.Join(strings.Fields(steps[0].Body), " ")
	for _, f := range registry.Fusions() {
		if f.Off == "" {
			t.Errorf("%s: no setting that turns its fusions off (Off)", f.Backend)
		}
		if !strings.Contains(message, f.Off) {
			t.Errorf("the tests' message does not name %s's %s:\n%s", f.Backend, f.Off, steps[0].Body)
		}
	}
}
