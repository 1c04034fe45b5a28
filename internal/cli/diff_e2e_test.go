package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/tier"
	"github.com/kernelgen/kernelgen/ops"
)

// End to end, as a reviewer runs it: a copy of this module in a scratch git
// repository, one edit to ops/ committed with its regenerated IR (by the
// copy's own kernelgen build), and kernelgen diff --json HEAD~1 HEAD. The
// edit suite (internal/verdict) covers the kinds of edits; this covers the
// command: revisions read through git, the JSON shape, the exit code.
func TestDiffRevisionsEndToEnd(t *testing.T) {
	tier.FullOnly(t, "diff through git on a module copy rebuilt by its own kernelgen build (a cold build of kernelgen); the fast tier runs diff on this checkout's revisions (diff_safety_test.go) and on directories (TestDiffVerdicts)")
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	list, err := exec.Command("git", "-C", root, "ls-files", "-co", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	dir := t.TempDir()
	for _, f := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		data, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sh := func(name string, args ...string) {
		t.Helper()
		c := exec.Command(name, args...)
		c.Dir = dir
		c.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GOWORK=off", "GOFLAGS=")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	sh("git", "init", "-q")
	sh("git", "add", "-A")
	sh("git", "commit", "-qm", "base")
	sh("git", "tag", "base")
	conv := filepath.Join(dir, "ops", "conv.go")
	src, err := os.ReadFile(conv)
	if err != nil {
		t.Fatal(err)
	}
	const from = "stateDst.Store(ring.Add(j), win.At(j.Add(1))) })\n\t}\n\tsequence := func() {"
	if strings.Count(string(src), from) != 1 {
		t.Fatalf("ops/conv.go no longer holds %q; update the edit", from)
	}
	edited := strings.Replace(string(src), from, "stateDst.Store(ring.Add(j), win.At(j)) })\n\t}\n\tsequence := func() {", 1)
	if err := os.WriteFile(conv, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	sh("go", "run", "./cmd/kernelgen", "build", "--backend", "ir")
	sh("git", "commit", "-qam", "conv: ring no longer shifted")
	t.Chdir(dir)

	code, out, errs := run(t, "diff", "--json", "--problems", "1", "HEAD~1", "HEAD")
	out0 := strings.Replace(out, `"a": "HEAD~1"`, `"a": "base"`, 1)
	if code != ExitStale {
		t.Fatalf("exit %d, want %d\n%s%s", code, ExitStale, out, errs)
	}
	var rep struct {
		A, B    string
		Same    bool
		Files   []struct{ Path, Op, Backend string }
		Kernels []struct {
			Kernel, Op, Verdict string
			Categories          []string
			Differences         []struct {
				Category string
				A, B     *struct {
					File string
					Line int
					Text string
				}
			}
			Execution struct {
				Result           string
				Problems, Differ int
				First            struct {
					Problem, Buffer, A, B string
					Index                 int
				}
			}
		}
		SourceOnly []string `json:"source_only"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, out)
	}
	if rep.A != "HEAD~1" || rep.B != "HEAD" || rep.Same || len(rep.Files) == 0 || rep.SourceOnly == nil {
		t.Errorf("report head: %+v", rep)
	}
	if want := 3 * len(ops.Ariths()); len(rep.Kernels) != want {
		t.Errorf("%d kernels judged, want the %d of ops C, D and D chained (one per contract)", len(rep.Kernels), want)
	}
	for _, k := range rep.Kernels {
		if !strings.HasPrefix(k.Kernel, "ssm_conv_update_inplace") || k.Verdict != "changed" || strings.Join(k.Categories, ",") != "memory" {
			t.Errorf("%s: %s %v", k.Kernel, k.Verdict, k.Categories)
		}
		if len(k.Differences) != 1 || k.Differences[0].A == nil || !strings.Contains(k.Differences[0].A.Text, "window[j") || !strings.Contains(k.Differences[0].B.Text, "store conv_state_dst") {
			t.Errorf("%s: differences %+v", k.Kernel, k.Differences)
		}
		e := k.Execution
		if e.Result != "differ" || e.Differ == 0 || e.First.Buffer != "conv_state_dst" || e.First.A == e.First.B {
			t.Errorf("%s: execution %+v", k.Kernel, e)
		}
	}
	if code, out, _ := run(t, "diff", "--stat", "HEAD", "HEAD"); code != 0 || !strings.Contains(out, "generate the same kernels") {
		t.Errorf("a revision against itself: exit %d\n%s", code, out)
	}

	// From a subdirectory the revisions' generated/ is still the module
	// root's (git alone would look for ops/generated).
	t.Chdir(filepath.Join(dir, "ops"))
	code, sub, errs := run(t, "diff", "--json", "--problems", "1", "base", "HEAD")
	if code != ExitStale || sub != out0 {
		t.Errorf("diff from ops/: exit %d, output differs from the root's: %v\n%.400s%s", code, sub != out0, sub, errs)
	}
	// Revisions complete: the tag, HEAD and its ancestors; after two
	// arguments nothing.
	_, comp, _ := run(t, "__complete", "diff", "")
	for _, want := range []string{"HEAD\n", "HEAD~1\n", "base\n"} {
		if !strings.Contains(comp, want) {
			t.Errorf("diff completes %q, missing %q", comp, want)
		}
	}
	if _, comp, _ = run(t, "__complete", "diff", "HEAD", "ba"); !strings.HasPrefix(comp, "base\n") {
		t.Errorf("diff HEAD ba completes %q", comp)
	}
	if _, comp, _ = run(t, "__complete", "diff", "HEAD", "base", ""); strings.Contains(comp, "HEAD") {
		t.Errorf("a third argument completes %q", comp)
	}
}
