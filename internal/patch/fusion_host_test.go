package patch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/registry"
	"github.com/kernelgen/kernelgen/internal/tier"
)

// fusionStandIn is a backend's stand-in (testdata/<dir>/fusion.cpp: the
// anchors of its one source file and the calls its steps make) with the
// first parts of the backend's fusion steps applied (its kernels, then the
// matchers and dispatch): every edit of file placed as the patch places it
// in ggml's tree, one step after another, a revision's only where its
// probe holds.
func fusionStandIn(t *testing.T, backend, dir, file string, parts int) string {
	t.Helper()
	steps, err := FusionPlan(registry.Fusions(), []string{backend})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 3 {
		t.Fatalf("%d steps for %s, want the tests, the kernels and the dispatch", len(steps), backend)
	}
	data, err := os.ReadFile(filepath.Join("testdata", dir, "fusion.cpp"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	edits := 0
	for _, s := range steps[1 : 1+parts] {
		var ls []Located
		for _, e := range s.Edits {
			if e.File != file || (e.Needs != nil && !strings.Contains(text, e.Needs.Text)) || (e.Unless != nil && strings.Contains(text, e.Unless.Text)) {
				continue
			}
			l := locate(e, text)
			if l.State != Pending {
				t.Fatalf("edit %q is %v in the stand-in: %s", e.Name, l.State, l.Why)
			}
			ls = append(ls, l)
		}
		edits += len(ls)
		text = insertAll(text, ls)
	}
	if edits < 3*parts {
		t.Fatalf("%d edits of %s: the test no longer sees the step", edits, file)
	}
	return text
}

// compileFusionStandIn compiles text as the stand-in source name, over
// ops/fusion's stand-in ggml.h, with the warnings ggml's build turns on as
// errors; it returns the compiler's output where that fails.
func compileFusionStandIn(t *testing.T, name, text string) (string, bool) {
	t.Helper()
	cxx := hostCXX(t)
	dir := t.TempDir()
	stand, err := os.ReadFile(filepath.Join("..", "..", "ops", "fusion", "testdata", "ggml.h"))
	if err != nil {
		t.Fatal(err)
	}
	for n, data := range map[string]string{"ggml.h": string(stand), name: text} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := append(append([]string{}, cxx[1:]...), "-std=c++17", "-Wall", "-Wextra", "-Wpedantic", "-Wcast-qual", "-Wmissing-declarations", "-Werror",
		"-fsyntax-only", "-I", dir, filepath.Join(dir, name))
	out, err := exec.CommandContext(tier.Context(t), cxx[0], args...).CombinedOutput()
	return string(out), err == nil
}
