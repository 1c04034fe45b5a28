//go:build unix

package cli

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// leftovers lists the temporary files and directories kernelgen names
// .NAME.kernelgen-* below dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".kernelgen-") || strings.HasPrefix(d.Name(), "kernelgen-series-") {
			found = append(found, p)
		}
		return nil
	})
	return found
}

// helper is kernelgen run as a subprocess (this test binary, see TestMain),
// optionally paused at a step, whose stderr the test reads line by line.
type helper struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	mu     sync.Mutex
	stderr strings.Builder
	stdout strings.Builder
	done   chan struct{}
	err    error
}

// start runs kernelgen with args; pause names the step to stop at ("" for
// none), env is added to its environment.
func start(t *testing.T, pause string, env []string, args ...string) *helper {
	t.Helper()
	h := &helper{t: t, lines: make(chan string, 100), done: make(chan struct{})}
	h.cmd = exec.Command(os.Args[0], args...)
	h.cmd.Env = append(append(os.Environ(), gitEnv...), "KERNELGEN_TEST_MAIN=1", "KERNELGEN_TEST_PAUSE="+pause)
	h.cmd.Env = append(h.cmd.Env, env...)
	h.cmd.Stdout = &h.stdout
	var err error
	if h.stdin, err = h.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	errPipe, err := h.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			h.mu.Lock()
			h.stderr.WriteString(sc.Text() + "\n")
			h.mu.Unlock()
			select {
			case h.lines <- sc.Text():
			default:
			}
		}
		close(h.lines)
		h.err = h.cmd.Wait()
		close(h.done)
	}()
	t.Cleanup(func() {
		h.cmd.Process.Kill()
		<-h.done
	})
	return h
}

// waitFor reads stderr until a line holds want; the process ending first
// fails the test.
func (h *helper) waitFor(want string) {
	h.t.Helper()
	for l := range h.lines {
		if strings.Contains(l, want) {
			return
		}
	}
	<-h.done
	h.t.Fatalf("kernelgen %s never said %q: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(h.cmd.Args[1:], " "), want, h.err, h.stdout.String(), h.errText())
}

// errText is stderr so far.
func (h *helper) errText() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stderr.String()
}

func (h *helper) release()             { h.stdin.Close() }
func (h *helper) signal(sig os.Signal) { h.cmd.Process.Signal(sig) }
func (h *helper) wait() (int, string, string) {
	<-h.done
	code := 0
	var ee *exec.ExitError
	if errors.As(h.err, &ee) {
		code = ee.ExitCode() // -1: killed by a signal
	} else if h.err != nil {
		h.t.Fatal(h.err)
	}
	return code, h.stdout.String(), h.stderr.String()
}

// Two patch runs on one tree take turns: the second waits on the tree's
// lock (named) while the first holds it with its files staged, then finds
// the patch in place; the tree is patched once.
func TestPatchRunsTakeTurns(t *testing.T) {
	want := patched(t)
	root := gitTree(t)
	first := start(t, "staged", nil, "patch", "--tree", root, "--backend", "all")
	first.waitFor(pausedAt("staged"))
	second := start(t, "", nil, "patch", "--tree", root, "--backend", "all")
	second.waitFor("waiting for another kernelgen (pid ")
	if errs := second.errText(); !strings.Contains(errs, filepath.Join(root, ".git", "kernelgen.lock")) {
		t.Errorf("the waiting message does not name the lock file:\n%s", errs)
	}
	first.release()
	if code, out, errs := first.wait(); code != 0 || !strings.Contains(out, "patched ") {
		t.Fatalf("first: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := second.wait(); code != 0 || !strings.Contains(out, "already holds this patch") {
		t.Fatalf("second: exit %d\n%s%s", code, out, errs)
	}
	if diff := cmp.Diff(want, files(t, root)); diff != "" {
		t.Errorf("two runs at once left (-one run +two):\n%s", diff)
	}
	if l := leftovers(t, root); len(l) > 0 {
		t.Errorf("left behind: %v", l)
	}
}

// A signal while the files are staged stops the run: exit 2, the signal
// named, the tree as it was and no temporary file left.
func TestPatchInterruptedBeforeTheRenames(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		root := gitTree(t)
		before := files(t, root)
		h := start(t, "staged", nil, "patch", "--tree", root, "--backend", "all")
		h.waitFor(pausedAt("staged"))
		h.signal(sig)
		code, out, errs := h.wait()
		name := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP"}[sig]
		if code != 2 || !strings.Contains(errs, "interrupted by "+name) || !strings.Contains(errs, "nothing was changed") {
			t.Errorf("%s: exit %d\n%s%s", name, code, out, errs)
		}
		if diff := cmp.Diff(before, files(t, root)); diff != "" {
			t.Errorf("%s: the tree changed:\n%s", name, diff)
		}
		if st := sh(t, root, "git", "status", "--porcelain"); st != "" {
			t.Errorf("%s: git status:\n%s", name, st)
		}
	}
}

// A signal once the renames have begun lets them finish: exit 2, saying
// so, the tree whole patched and no temporary file left.
func TestPatchInterruptedDuringTheRenames(t *testing.T) {
	want := patched(t)
	root := gitTree(t)
	h := start(t, "renaming", nil, "patch", "--tree", root, "--backend", "all")
	h.waitFor(pausedAt("renaming"))
	h.signal(syscall.SIGTERM)
	code, out, errs := h.wait()
	if code != 2 || !strings.Contains(errs, "interrupted by SIGTERM while the files were renamed into place: the renames were finished") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
	if diff := cmp.Diff(want, files(t, root)); diff != "" {
		t.Errorf("the tree is not the patched one (-want +got):\n%s", diff)
	}
	if l := leftovers(t, root); len(l) > 0 {
		t.Errorf("left behind: %v", l)
	}
}

// An empty or blank --series (an unset shell variable) is refused, and the
// tree is not patched in its place.
func TestPatchSeriesEmptyIsRefused(t *testing.T) {
	root := gitTree(t)
	before := files(t, root)
	for _, arg := range []string{"", " ", "\t"} {
		code, out, errs := run(t, "patch", "--tree", root, "--backend", "all", "--series", arg)
		if code != 2 || !strings.Contains(errs, "--series is empty") {
			t.Errorf("--series %q: exit %d\n%s%s", arg, code, out, errs)
		}
	}
	if diff := cmp.Diff(before, files(t, root)); diff != "" {
		t.Errorf("the tree changed:\n%s", diff)
	}
}

// A signal once the series is made, before it is moved into place, leaves
// no series, no partial one and no temporary directory, beside OUT or in
// $TMPDIR.
func TestPatchSeriesInterrupted(t *testing.T) {
	root := gitTree(t)
	tmp, parent := t.TempDir(), t.TempDir()
	out := filepath.Join(parent, "series")
	h := start(t, "series-staged", []string{"TMPDIR=" + tmp}, "patch", "--tree", root, "--backend", "all", "--series", out)
	h.waitFor(pausedAt("series-staged"))
	h.signal(syscall.SIGTERM)
	code, stdout, errs := h.wait()
	if code != 2 || !strings.Contains(errs, "interrupted by SIGTERM: nothing was written") {
		t.Errorf("exit %d\n%s%s", code, stdout, errs)
	}
	for _, dir := range []string{parent, tmp} {
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Errorf("left in %s: %v", dir, entries)
		}
	}
}

// The git am hint is a command a shell runs as printed, for a series
// directory with spaces in its path too.
func TestPatchSeriesHintIsQuoted(t *testing.T) {
	root := gitTree(t)
	out := filepath.Join(t.TempDir(), "my series", "it's here")
	// the ops form, which the apply (patched) writes too
	code, stdout, errs := run(t, "patch", "--tree", root, "--backend", "all", "--form", "ops", "--series", out)
	_, hint, ok := strings.Cut(stdout, "(apply with: ")
	if code != 0 || !ok {
		t.Fatalf("exit %d\n%s%s", code, stdout, errs)
	}
	hint = strings.TrimSuffix(strings.TrimSpace(hint), ")")
	clone := filepath.Join(t.TempDir(), "clone")
	sh(t, root, "git", "clone", "-q", root, clone)
	sh(t, clone, "git", "config", "user.name", "A Contributor")
	sh(t, clone, "git", "config", "user.email", "contributor@example.com")
	sh(t, clone, "sh", "-c", hint)
	if diff := cmp.Diff(patched(t), files(t, clone)); diff != "" {
		t.Errorf("%s did not give the patched tree:\n%s", hint, diff)
	}
}

// A relative --tree and --series name the directories they name where
// kernelgen runs (the series is made in scratch trees with other working
// directories).
func TestPatchSeriesRelativePath(t *testing.T) {
	root := gitTree(t)
	t.Chdir(filepath.Dir(root))
	code, stdout, errs := run(t, "patch", "--tree", filepath.Base(root), "--backend", "all", "--series", "out/series")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, errs)
	}
	patches, err := filepath.Glob(filepath.Join("out", "series", "*.patch"))
	if err != nil || len(patches) == 0 {
		t.Fatalf("no patches in out/series (%v)\n%s", err, stdout)
	}
	if left, _ := filepath.Glob(filepath.Join("out", ".series.kernelgen-*")); len(left) > 0 {
		t.Errorf("scratch left beside the series: %v", left)
	}
}
