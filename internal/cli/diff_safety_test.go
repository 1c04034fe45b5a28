//go:build unix

package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// --generated must name a generated directory (with its MANIFEST) at the
// revisions: a file, a directory of something else or an empty flag is
// refused with what is wrong, never compared as "the same kernels".
func TestDiffGeneratedFlagIsChecked(t *testing.T) {
	if err := exec.Command("git", "rev-parse", "--verify", "-q", "HEAD").Run(); err != nil {
		t.Skip("not in a git checkout")
	}
	for flag, want := range map[string]string{
		"go.mod":    "HEAD:go.mod is a file, not a generated directory",
		"README.md": "HEAD:README.md is a file, not a generated directory",
		"cmd":       "HEAD:cmd has no MANIFEST: not a generated directory",
		"":          "--generated is empty",
		"  ":        "--generated is empty",
	} {
		code, out, errs := run(t, "diff", "--generated", flag, "HEAD", "HEAD")
		if code != 2 || !strings.Contains(errs, want) || strings.Contains(out, "same kernels") {
			t.Errorf("--generated %q: exit %d\n%s%s", flag, code, out, errs)
		}
	}
}

// Ctrl-C stops diff while it runs the kernels: exit 2, saying so, before
// the comparison it would otherwise have finished: no further kernel is
// run (the run is paused before the first kernel's problems, and
// interrupted there), no verdicts, no table.
func TestDiffInterrupted(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	src := filepath.Join("..", "..", "generated")
	irs, err := filepath.Glob(filepath.Join(src, "ir", "gated_delta_net@*.ir"))
	if err != nil || len(irs) < 2 {
		t.Fatalf("no gated_delta_net IR in %s: %v", src, err)
	}
	for _, side := range []string{a, b} {
		if err := os.MkdirAll(filepath.Join(side, "ir"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, p := range append(irs, filepath.Join(src, "MANIFEST")) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if side == b && strings.HasSuffix(p, ".ir") {
				data = append([]byte("// edited\n"), data...) // names/layout only: every kernel runs
			}
			rel, _ := filepath.Rel(src, p)
			if err := os.WriteFile(filepath.Join(side, rel), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	h := start(t, "diff-problems", nil, "diff", "--stat", "--problems", "4", a, b)
	h.waitFor(pausedAt("diff-problems"))
	h.signal(syscall.SIGINT)
	code, out, errs := h.wait()
	if code != 2 || !strings.Contains(errs, "interrupted by SIGINT: the comparison was stopped") || strings.Contains(out, "files differ") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
	if n := strings.Count(errs, reachedAgain("diff-problems")); n > 0 {
		t.Errorf("after the interrupt, %d more kernels ran\n%s", n, errs)
	}
}
