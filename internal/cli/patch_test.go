package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The command's contract on the stand-in tree of internal/patch: --check
// exits 0 and lists every anchor as found, a missing anchor exits 1 and
// names it, bad flags exit 2 with what to do.
func TestPatchCommand(t *testing.T) {
	root := gitTree(t)

	code, out, _ := run(t, "patch", "--tree", root, "--backend", "vulkan", "--check")
	if code != 0 || !strings.Contains(out, "found    src/ggml-vulkan/ggml-vulkan.cpp: supports_op") || strings.Contains(out, "MISSING") {
		t.Errorf("--check: exit %d\n%s", code, out)
	}

	p := filepath.Join(root, "src", "ggml-vulkan", "vulkan-shaders", "vulkan-shaders-gen.cpp")
	if err := os.WriteFile(p, []byte("void process_shaders() {\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sh(t, root, "git", "commit", "-qam", "a tree without the anchor")
	code, out, errOut := run(t, "patch", "--tree", root, "--backend", "vulkan", "--check")
	if code != 1 || !strings.Contains(out, "MISSING  src/ggml-vulkan/vulkan-shaders/vulkan-shaders-gen.cpp: shader-gen entries") || !strings.Contains(errOut, "1 anchor(s) missing") {
		t.Errorf("--check with a missing anchor: exit %d\n%s\n%s", code, out, errOut)
	}

	for _, args := range [][]string{
		{"patch", "--backend", "vulkan"},
		{"patch", "--tree", root},
		{"patch", "--tree", root, "--backend", "webgpu"},
		{"patch", "--tree", t.TempDir(), "--backend", "vulkan"},
		{"patch", "--tree", root, "--backend", "vulkan", "--check", "--series", t.TempDir()},
	} {
		if code, _, errOut := run(t, args...); code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// gitEnv keeps the machine's git configuration out of the fixture trees.
var gitEnv = []string{"GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_CONFIG_NOSYSTEM=1"}

// gitTree copies internal/patch's ggml stand-in into a new git repository
// (one commit, its own identity) and returns its root.
func gitTree(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root := t.TempDir()
	copyDir(t, filepath.Join("..", "patch", "testdata", "ggml"), root)
	sh(t, root, "git", "init", "-q")
	sh(t, root, "git", "config", "user.name", "A Contributor")
	sh(t, root, "git", "config", "user.email", "contributor@example.com")
	sh(t, root, "git", "add", "-A")
	sh(t, root, "git", "commit", "-q", "-m", "tree")
	return root
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(to, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func sh(t *testing.T, dir string, args ...string) string {
	t.Helper()
	c := exec.Command(args[0], args[1:]...)
	c.Dir = dir
	c.Env = append(os.Environ(), gitEnv...)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// files reads every file below root but .git's.
func files(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// patched is what the whole patch makes of a fresh fixture tree.
func patched(t *testing.T) map[string]string {
	t.Helper()
	root := gitTree(t)
	if code, _, errs := run(t, "patch", "--tree", root, "--backend", "all"); code != 0 {
		t.Fatalf("patch: exit %d: %s", code, errs)
	}
	return files(t, root)
}

// --check judges the tree as the apply does: where the apply refuses (a
// dirty tree, a partly patched one), --check exits 1 with the same
// reasons, not "every anchor found".
func TestPatchCheckPredictsApply(t *testing.T) {
	dirty := gitTree(t)
	p := filepath.Join(dirty, "src", "ggml.c")
	src, _ := os.ReadFile(p)
	if err := os.WriteFile(p, append(src, "// local change\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	partly := gitTree(t)
	if code, _, errs := run(t, "patch", "--tree", partly, "--backend", "vulkan"); code != 0 {
		t.Fatalf("patch: %s", errs)
	}
	sh(t, partly, "git", "checkout", "--", "src/ggml-vulkan/ggml-vulkan.cpp")
	sh(t, partly, "git", "add", "-A")
	sh(t, partly, "git", "commit", "-qm", "half of the vulkan patch")
	for root, want := range map[string]string{dirty: " M src/ggml.c", partly: "vulkan: the tree is partly patched ("} {
		before := files(t, root)
		code, out, checkErr := run(t, "patch", "--tree", root, "--backend", "all", "--check")
		if code != 1 || !strings.Contains(checkErr, "apply would refuse to patch "+root) || !strings.Contains(checkErr, want) {
			t.Errorf("--check: exit %d\n%s%s", code, out, checkErr)
		}
		code, _, applyErr := run(t, "patch", "--tree", root, "--backend", "all")
		if code != 2 || !strings.Contains(applyErr, "refusing to patch "+root) || !strings.Contains(applyErr, want) {
			t.Errorf("apply: exit %d\n%s", code, applyErr)
		}
		_, checkItems, _ := strings.Cut(checkErr, ":\n")
		_, applyItems, _ := strings.Cut(applyErr, ":\n")
		if checkItems != applyItems {
			t.Errorf("--check and the apply give other reasons:\n%s\n%s", checkErr, applyErr)
		}
		if diff := cmp.Diff(before, files(t, root)); diff != "" {
			t.Errorf("the tree changed:\n%s", diff)
		}
	}
}
