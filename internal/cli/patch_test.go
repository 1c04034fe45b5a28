package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The command's contract on the stand-in tree of internal/patch: --check
// exits 0 and lists every anchor as found, a missing anchor exits 1 and
// names it, bad flags exit 2 with what to do.
func TestPatchCommand(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root := t.TempDir()
	src := filepath.Join("..", "patch", "testdata", "ggml")
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(root, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}

	code, out, _ := run(t, "patch", "--tree", root, "--backend", "vulkan", "--check")
	if code != 0 || !strings.Contains(out, "found    src/ggml-vulkan/ggml-vulkan.cpp: supports_op") || strings.Contains(out, "MISSING") {
		t.Errorf("--check: exit %d\n%s", code, out)
	}

	p := filepath.Join(root, "src", "ggml-vulkan", "vulkan-shaders", "vulkan-shaders-gen.cpp")
	if err := os.WriteFile(p, []byte("void process_shaders() {\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
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
