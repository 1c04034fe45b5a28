package patch

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// notUpstream are words a commit message of the ops form's series must not
// hold: how the text was made, and checks only the fork's tree has (its
// per-head hybrid state in src[8]/src[9], its bf16 state).
var notUpstream = regexp.MustCompile(`(?i)kernelgen|generat|\bfork\b|localai|per-head|hybrid|bf16|src\[8\]|src\[9\]`)

// measured is a figure with its card: microseconds and the GPU they were taken on.
var measured = regexp.MustCompile(`\d+\.\d+ us`)

// The ops form's commit messages read as a contributor's: nothing about how
// they were made or about the fork's own checks, and the backend whose
// decode step was timed as the series runs it (CUDA: bench/RESULTS.md,
// "one layer's decode step"; Vulkan's timing ran other schedules, see
// TestSeriesTextReadsAsAColleagues) gives the figures, naming the card.
func TestSeriesMessagesReadAsAContributors(t *testing.T) {
	root := fixture(t, "")
	names, err := Series(context.Background(), open(t, root), plan(t), filepath.Join(t.TempDir(), "series"))
	if err != nil {
		t.Fatal(err)
	}
	timed := map[string]bool{"cuda": false}
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		msg, _, ok := strings.Cut(string(data), "\n---\n")
		if !ok {
			t.Fatalf("%s: no end of the message", filepath.Base(n))
		}
		_, msg, _ = strings.Cut(msg, "Subject: ")
		if w := notUpstream.FindAllString(msg, -1); len(w) > 0 {
			t.Errorf("%s: the message says %q", filepath.Base(n), w)
		}
		backend := patchBackend(string(data))
		if _, ok := timed[backend]; ok {
			timed[backend] = measured.MatchString(msg) && strings.Contains(msg, "H100")
		}
	}
	for backend, ok := range timed {
		if !ok {
			t.Errorf("the %s message gives no decode-step figure (us) naming the card", backend)
		}
	}
}
