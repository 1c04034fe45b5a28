package patch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kernelgen/kernelgen/internal/registry"
)

// gitEnv gives the test repositories an identity and a fixed date, whatever
// the machine's git configuration.
var gitEnv = []string{
	"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
	"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
	"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), gitEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// fixture copies testdata/ggml into a new git repository and returns its
// root. With sub "ggml/" it lays the tree out as llama.cpp does: ggml's
// sources below ggml/, its tests at the root, and llama.cpp's own files from
// testdata/llama.cpp.
func fixture(t *testing.T, sub string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root := t.TempDir()
	copyTree(t, "testdata/ggml", root, func(rel string) string {
		if sub != "" && !strings.HasPrefix(rel, "tests/") {
			return sub + rel
		}
		return rel
	})
	if sub != "" {
		copyTree(t, "testdata/llama.cpp", root, nil)
	}
	run(t, root, "git", "init", "-q")
	// the series' commits carry the tree's own identity, as a user's would
	// (without one they carry a placeholder)
	run(t, root, "git", "config", "user.name", "A Contributor")
	run(t, root, "git", "config", "user.email", "contributor@example.com")
	commitAll(t, root)
	return root
}

// copyTree copies the files below from into root, each at where(its path),
// or at its own path when where is nil.
func copyTree(t *testing.T, from, root string, where func(rel string) string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		rel = filepath.ToSlash(rel)
		if where != nil {
			rel = where(rel)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		target := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func commitAll(t *testing.T, root string) {
	run(t, root, "git", "add", "-A")
	run(t, root, "git", "commit", "-q", "-m", "tree")
}

// snapshot reads every file below root except .git.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
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

func plan(t *testing.T) []*Step {
	t.Helper()
	steps, err := Plan(registry.Integrations(), []string{"all"})
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

// stepOf is the named backend's step of the plan for every backend.
func stepOf(t *testing.T, backend string) *Step {
	t.Helper()
	for _, s := range plan(t) {
		if s.Backend == backend {
			return s
		}
	}
	t.Fatalf("no %s step in the plan", backend)
	return nil
}

// editOf is the step's edit of the given name.
func editOf(t *testing.T, s *Step, name string) Edit {
	t.Helper()
	for _, e := range s.Edits {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("the %s step has no edit %q", s.Backend, name)
	return Edit{}
}

func open(t *testing.T, root string) *Tree {
	t.Helper()
	tr, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestCheckFindsEveryAnchorInTheFixture(t *testing.T) {
	root := fixture(t, "")
	reports, err := Check(context.Background(), open(t, root), plan(t))
	if err != nil {
		t.Fatal(err)
	}
	var backends []string
	for _, r := range reports {
		backends = append(backends, r.Step.Backend)
		missing, pending, applied := r.counts()
		if len(r.Skipped) > 0 && len(r.Edits)+len(r.Files) == 0 {
			continue // llama.cpp's own files, on a ggml tree
		}
		if missing != 0 || applied != 0 || pending == 0 {
			t.Errorf("%s: missing %d, pending %d, applied %d; want everything pending", r.Step.Backend, missing, pending, applied)
		}
		for _, l := range r.Edits {
			if l.State != Pending {
				t.Errorf("%s: %s: %v %s", r.Step.Backend, l.Edit.Name, l.State, l.Why)
			}
		}
	}
	// the series order of the seed's plan
	if diff := cmp.Diff([]string{"ops", "metal", "sycl", "vulkan", "cuda", "opencl", "llama"}, backends); diff != "" {
		t.Errorf("step order (-want +got):\n%s", diff)
	}
}

func TestApplyThenApplyAgainChangesNothing(t *testing.T) {
	root := fixture(t, "")
	before := snapshot(t, root)
	o, err := Apply(context.Background(), open(t, root), plan(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Written) == 0 {
		t.Fatal("first apply wrote nothing")
	}
	after := snapshot(t, root)
	changed := 0
	for p, s := range after {
		if before[p] != s {
			changed++
		}
	}
	if changed != len(o.Written) {
		t.Errorf("%d files changed, Apply reported %d", changed, len(o.Written))
	}
	// every edit's text is now in the file, at its anchor
	reports, err := Check(context.Background(), open(t, root), plan(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reports {
		if missing, pending, _ := r.counts(); missing+pending != 0 {
			t.Errorf("%s: after apply, %d missing and %d pending", r.Step.Backend, missing, pending)
		}
	}
	// the tree is now dirty, but the patch is in place: a second run is a no-op
	o2, err := Apply(context.Background(), open(t, root), plan(t))
	if err != nil {
		t.Fatalf("second apply: %v", err)
	}
	if len(o2.Written) != 0 {
		t.Errorf("second apply wrote %v", o2.Written)
	}
	if diff := cmp.Diff(after, snapshot(t, root)); diff != "" {
		t.Errorf("second apply changed the tree:\n%s", diff)
	}
}

func TestMissingAnchorIsRefusedAndNothingChanges(t *testing.T) {
	root := fixture(t, "")
	p := filepath.Join(root, "src", "ggml-vulkan", "ggml-vulkan.cpp")
	src, _ := os.ReadFile(p)
	// a tree whose supports_op was renamed
	src = bytes.Replace(src, []byte("static bool ggml_backend_vk_device_supports_op("), []byte("static bool ggml_backend_vk_device_supports_op_renamed("), 1)
	if err := os.WriteFile(p, src, 0o644); err != nil {
		t.Fatal(err)
	}
	commitAll(t, root)
	before := snapshot(t, root)
	_, err := Apply(context.Background(), open(t, root), plan(t))
	var prob *Problem
	if !errors.As(err, &prob) {
		t.Fatalf("want a refusal, got %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"src/ggml-vulkan/ggml-vulkan.cpp", "supports_op", `"static bool ggml_backend_vk_device_supports_op(ggml_backend_dev_t dev, const ggml_tensor * op) {" not found`, "nothing was changed"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal does not say %q:\n%s", want, msg)
		}
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("a refused patch changed the tree:\n%s", diff)
	}
	// --check reports the same anchor as missing and the others as found,
	// and the refusal the apply gives
	reports, err := Check(context.Background(), open(t, root), plan(t))
	if !errors.As(err, &prob) || !strings.Contains(err.Error(), "apply would refuse") || !strings.Contains(err.Error(), "supports_op") {
		t.Fatalf("want the apply's refusal, got %v", err)
	}
	missing := 0
	for _, r := range reports {
		m, _, _ := r.counts()
		missing += m
	}
	if missing != 1 {
		t.Errorf("check found %d missing anchors, want 1", missing)
	}
}

func TestAmbiguousAnchorIsRefused(t *testing.T) {
	e := Edit{Name: "x", File: "f", Anchor: []string{"int f() {"}, Text: "x\n"}
	l := locate(e, "int f() {\n}\nint f() {\n}\n")
	if l.State != Missing || !strings.Contains(l.Why, "found 2 times") {
		t.Errorf("got %v %q", l.State, l.Why)
	}
	l = locate(Edit{Name: "x", File: "f", Anchor: []string{"int f() {", "return 1;"}, Text: "x\n"}, "int f() {\n}\nint g() {\n}\n")
	if l.State != Missing || !strings.Contains(l.Why, `"return 1;" not found after "int f() {"`) {
		t.Errorf("got %v %q", l.State, l.Why)
	}
}

func TestDirtyTreeIsRefused(t *testing.T) {
	root := fixture(t, "")
	p := filepath.Join(root, "src", "ggml.c")
	src, _ := os.ReadFile(p)
	if err := os.WriteFile(p, append(src, "// local change\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, root)
	_, err := Apply(context.Background(), open(t, root), plan(t))
	if err == nil || !strings.Contains(err.Error(), "uncommitted changes") || !strings.Contains(err.Error(), "src/ggml.c") {
		t.Fatalf("want a refusal naming src/ggml.c, got %v", err)
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("a refused patch changed the tree:\n%s", diff)
	}
}

func TestPartlyPatchedTreeIsRefused(t *testing.T) {
	root := fixture(t, "")
	if _, err := Apply(context.Background(), open(t, root), plan(t)); err != nil {
		t.Fatal(err)
	}
	// as if an earlier kernelgen had written a different push-constant block
	p := filepath.Join(root, "src", "ggml-vulkan", "ggml-vulkan.cpp")
	src, _ := os.ReadFile(p)
	src = bytes.Replace(src, []byte(" rs_head;"), []byte(" rs_head_old;"), 1)
	if err := os.WriteFile(p, src, 0o644); err != nil {
		t.Fatal(err)
	}
	commitAll(t, root)
	before := snapshot(t, root)
	_, err := Apply(context.Background(), open(t, root), plan(t))
	if err == nil || !strings.Contains(err.Error(), "vulkan: the tree is partly patched") {
		t.Fatalf("want a partly-patched refusal, got %v", err)
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("a refused patch changed the tree:\n%s", diff)
	}
}

// Check judges a tree as Apply does: for each state of the tree it
// refuses exactly when Apply does, with the same items, and changes
// nothing.
func TestCheckPredictsApply(t *testing.T) {
	edit := func(root, rel, from, to string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, bytes.Replace(src, []byte(from), []byte(to), 1), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, want string
		make       func(root string)
	}{
		{"clean", "", func(string) {}},
		{"dirty", "the tree has uncommitted changes", func(root string) { edit(root, "src/ggml.c", "", "// local change\n") }},
		{"partly patched", "vulkan: the tree is partly patched (", func(root string) {
			if _, err := Apply(context.Background(), open(t, root), plan(t)); err != nil {
				t.Fatal(err)
			}
			edit(root, "src/ggml-vulkan/ggml-vulkan.cpp", " rs_head;", " rs_head_old;")
			commitAll(t, root)
		}},
		{"half written", "partly patched", func(root string) {
			if _, err := Apply(context.Background(), open(t, root), []*Step{stepOf(t, "vulkan")}); err != nil {
				t.Fatal(err)
			}
			run(t, root, "git", "checkout", "--", "src/ggml-vulkan/ggml-vulkan.cpp")
			commitAll(t, root)
		}},
		{"missing anchor", `"supports_op": anchor`, func(root string) {
			edit(root, "src/ggml-vulkan/ggml-vulkan.cpp", "static bool ggml_backend_vk_device_supports_op(", "static bool renamed(")
			commitAll(t, root)
		}},
		{"already patched", "", func(root string) {
			if _, err := Apply(context.Background(), open(t, root), plan(t)); err != nil {
				t.Fatal(err)
			}
		}},
		{"link out of the tree", "outside the tree", func(root string) {
			outside := filepath.Join(t.TempDir(), "ggml.c")
			if err := os.Rename(filepath.Join(root, "src", "ggml.c"), outside); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(root, "src", "ggml.c")); err != nil {
				t.Fatal(err)
			}
			commitAll(t, root)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fixture(t, "")
			tc.make(root)
			before := snapshot(t, root)
			_, checked := Check(context.Background(), open(t, root), plan(t))
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Fatalf("check changed the tree:\n%s", diff)
			}
			_, applied := Apply(context.Background(), open(t, root), plan(t))
			if tc.want == "" {
				if checked != nil || applied != nil {
					t.Errorf("check: %v\napply: %v", checked, applied)
				}
				return
			}
			if checked == nil || applied == nil || !strings.Contains(checked.Error(), tc.want) {
				t.Fatalf("want %q from both\ncheck: %v\napply: %v", tc.want, checked, applied)
			}
			c, a := checked.(*Problem).Lines, applied.(*Problem).Lines
			if diff := cmp.Diff(a[1:], c[1:]); diff != "" {
				t.Errorf("check and apply name other problems (-apply +check):\n%s", diff)
			}
		})
	}
}

// A symbolic link in the tree is followed: the file it leads to is
// patched, the link stays a link.
func TestSymlinkIsFollowed(t *testing.T) {
	want := fixture(t, "")
	if _, err := Apply(context.Background(), open(t, want), plan(t)); err != nil {
		t.Fatal(err)
	}
	root := fixture(t, "")
	link := filepath.Join(root, "src", "ggml-vulkan", "ggml-vulkan.cpp")
	if err := os.Rename(link, filepath.Join(root, "src", "ggml-vulkan", "real.cpp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.cpp", link); err != nil {
		t.Fatal(err)
	}
	commitAll(t, root)
	if _, err := Check(context.Background(), open(t, root), plan(t)); err != nil {
		t.Fatalf("check: %v", err)
	}
	if _, err := Apply(context.Background(), open(t, root), plan(t)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link is no longer a link: %v", err)
	}
	got, _ := os.ReadFile(filepath.Join(root, "src", "ggml-vulkan", "real.cpp"))
	if diff := cmp.Diff(snapshot(t, want)["src/ggml-vulkan/ggml-vulkan.cpp"], string(got)); diff != "" {
		t.Errorf("the link's target is not patched:\n%s", diff)
	}
}

func TestNewFileWithOtherContentsIsRefused(t *testing.T) {
	root := fixture(t, "")
	p := filepath.Join(root, "src", "ggml-sycl", "fused-ops.hpp")
	if err := os.WriteFile(p, []byte("// someone else's file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	commitAll(t, root)
	_, err := Apply(context.Background(), open(t, root), plan(t))
	if err == nil || !strings.Contains(err.Error(), "src/ggml-sycl/fused-ops.hpp: the file exists with other contents") {
		t.Fatalf("want a refusal naming the file, got %v", err)
	}
}

func TestFailedWriteRestoresTheTree(t *testing.T) {
	root := fixture(t, "")
	before := snapshot(t, root)
	n := 0
	beforeWrite = func(rel string) error {
		n++
		if n == 5 {
			return errors.New("disk full")
		}
		return nil
	}
	defer func() { beforeWrite = nil }()
	_, err := Apply(context.Background(), open(t, root), plan(t))
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("want the injected failure, got %v", err)
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("a failed write left the tree changed:\n%s", diff)
	}
	if out := run(t, root, "git", "status", "--porcelain"); out != "" {
		t.Errorf("git status after a failed write:\n%s", out)
	}
}

// An apply whose context has already ended (a signal during start-up)
// changes nothing and says so, without claiming it waited for a lock.
func TestApplyInterruptedBeforeItStarts(t *testing.T) {
	root := fixture(t, "")
	before := snapshot(t, root)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupted by SIGTERM"))
	_, err := Apply(ctx, open(t, root), plan(t))
	if err == nil || err.Error() != "interrupted by SIGTERM: nothing was changed" {
		t.Errorf("got %v", err)
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("the tree changed:\n%s", diff)
	}
}

// A rename that fails halfway through the rename step puts back the files
// already renamed: the tree is as it was, with no temporary file left.
func TestFailedRenameRestoresTheTree(t *testing.T) {
	root := fixture(t, "")
	before := snapshot(t, root)
	n := 0
	beforeRename = func(rel string) error {
		if n++; n == 3 {
			return errors.New("rename refused")
		}
		return nil
	}
	defer func() { beforeRename = nil }()
	_, err := Apply(context.Background(), open(t, root), plan(t))
	if err == nil || !strings.Contains(err.Error(), "rename refused") || !strings.Contains(err.Error(), "put back") {
		t.Fatalf("want the injected failure, got %v", err)
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("a failed rename left the tree changed:\n%s", diff)
	}
	if out := run(t, root, "git", "status", "--porcelain"); out != "" {
		t.Errorf("git status after a failed rename:\n%s", out)
	}
}

func TestLlamaCppTreeIsPatchedBelowGGML(t *testing.T) {
	root := fixture(t, "ggml/")
	tr := open(t, root)
	if tr.Kind != "llama.cpp" {
		t.Fatalf("kind %q", tr.Kind)
	}
	o, err := Apply(context.Background(), tr, plan(t))
	if err != nil {
		t.Fatal(err)
	}
	// ggml's sources below ggml/, its tests at the root, and llama.cpp's gate
	atRoot := map[string]bool{"tests/test-backend-ops.cpp": false, "src/llama-context.cpp": false}
	for _, p := range o.Written {
		if _, ok := atRoot[p]; ok {
			atRoot[p] = true
		} else if !strings.HasPrefix(p, "ggml/") {
			t.Errorf("wrote %s outside ggml/", p)
		}
	}
	for p, written := range atRoot {
		if !written {
			t.Errorf("%s was not written", p)
		}
	}
}

func TestNotATreeIsRefused(t *testing.T) {
	_, err := Open(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "neither a ggml tree") {
		t.Fatalf("got %v", err)
	}
}

// The series applies with git am onto the tree's HEAD, gives the same tree
// as Apply, is byte-identical when made twice, and carries no kernelgen
// markers.
func TestSeriesAppliesWithGitAm(t *testing.T) {
	root := fixture(t, "")
	out1 := filepath.Join(t.TempDir(), "series")
	names, err := Series(context.Background(), open(t, root), plan(t), out1)
	if err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if strings.Contains(strings.ToLower(text), "kernelgen") || strings.Contains(text, "DO NOT EDIT") {
			t.Errorf("%s carries a kernelgen marker", filepath.Base(n))
		}
		for _, doc := range []string{"docs/ops.md", "docs/arithmetic.md", "docs/ggml.md", "docs/architecture.md", "SPEC.md", "GLUE.md"} {
			if strings.Contains(text, doc) {
				t.Errorf("%s points into kernelgen's %s, which the target tree does not have", filepath.Base(n), doc)
			}
		}
		lines := strings.Split(text, "\n")
		for i, l := range lines {
			if s, ok := strings.CutPrefix(l, "Subject: "); ok {
				for i+1 < len(lines) && strings.HasPrefix(lines[i+1], " ") { // folded header
					i++
					s += lines[i]
				}
				subjects = append(subjects, s)
			}
		}
	}
	want := []string{
		"[PATCH 1/6] ggml : add in-place gated delta net and conv-update ops",
		"[PATCH 2/6] metal : add fused gated delta net and conv-update kernels",
		"[PATCH 3/6] sycl : add fused gated delta net and conv-update kernels",
		"[PATCH 4/6] vulkan : add fused gated delta net and conv-update kernels",
		"[PATCH 5/6] cuda : add fused gated delta net and conv-update kernels",
		"[PATCH 6/6] opencl : add fused gated delta net and conv-update kernels",
	}
	if diff := cmp.Diff(want, subjects); diff != "" {
		t.Errorf("subjects (-want +got):\n%s", diff)
	}
	if out := run(t, root, "git", "status", "--porcelain"); out != "" {
		t.Errorf("--series touched the tree:\n%s", out)
	}

	// same inputs, same bytes
	out2 := filepath.Join(t.TempDir(), "series")
	if _, err := Series(context.Background(), open(t, root), plan(t), out2); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		a, _ := os.ReadFile(n)
		b, _ := os.ReadFile(filepath.Join(out2, filepath.Base(n)))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs", filepath.Base(n))
		}
	}

	// git am on a clone gives what Apply gives
	amTree := filepath.Join(t.TempDir(), "am")
	run(t, root, "git", "clone", "-q", root, amTree)
	args := append([]string{"git", "am", "-q", "--whitespace=error"}, names...)
	run(t, amTree, args...)
	applied := fixture(t, "")
	if _, err := Apply(context.Background(), open(t, applied), plan(t)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(snapshot(t, applied), snapshot(t, amTree)); diff != "" {
		t.Errorf("git am result differs from Apply:\n%s", diff)
	}
	// and kernelgen sees the patch in place
	o, err := Apply(context.Background(), open(t, amTree), plan(t))
	if err != nil || len(o.Written) != 0 {
		t.Errorf("apply after git am: wrote %v, err %v", o.Written, err)
	}

	// a non-empty output directory is refused
	if _, err := Series(context.Background(), open(t, root), plan(t), out1); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("series into a non-empty directory: %v", err)
	}
}

// The user's git configuration does not reach the series (format-patch's
// suffix, cover letter, numbering, sign-off and prefixes; commit's cleanup;
// diff's prefixes): the series is byte for byte the one a clean
// configuration gives, with the user's identity.
func TestSeriesIgnoresTheUsersGitConfig(t *testing.T) {
	root := fixture(t, "")
	clean := filepath.Join(t.TempDir(), "clean")
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	want, err := Series(context.Background(), open(t, root), plan(t), clean)
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(config, []byte(`[format]
	suffix = .txt
	coverLetter = true
	numbered = false
	signOff = true
	subjectPrefix = RFC
	thread = shallow
[diff]
	noprefix = true
	mnemonicPrefix = true
[commit]
	cleanup = scissors
[core]
	abbrev = 20
`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", config)
	t.Setenv("GIT_CONFIG_PARAMETERS", "'format.suffix'='.diff'")
	out := filepath.Join(t.TempDir(), "series")
	got, err := Series(context.Background(), open(t, root), plan(t), out)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d patches with the user's config, %d without: %v", len(got), len(want), got)
	}
	for i := range want {
		a, _ := os.ReadFile(want[i])
		b, _ := os.ReadFile(got[i])
		if filepath.Base(want[i]) != filepath.Base(got[i]) || !bytes.Equal(a, b) {
			t.Errorf("%s: the user's git config changed the patch (%s):\n%s", filepath.Base(want[i]), filepath.Base(got[i]), firstDiff(string(a), string(b)))
		}
		if !bytes.Contains(b, []byte("From: A Contributor <contributor@example.com>")) {
			t.Errorf("%s does not carry the tree's identity", filepath.Base(got[i]))
		}
	}
}

// firstDiff is the first line where a and b differ.
func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d: %q vs %q", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("%d lines vs %d", len(la), len(lb))
}

// An empty --series is refused before anything is read or written.
func TestSeriesRefusesAnEmptyDirectory(t *testing.T) {
	root := fixture(t, "")
	for _, out := range []string{"", " ", "\t\n"} {
		if _, err := Series(context.Background(), open(t, root), plan(t), out); err == nil || !strings.Contains(err.Error(), "--series is empty") {
			t.Errorf("--series %q: %v", out, err)
		}
	}
}

// Upstream text carries no generated-file header: the files a plan adds
// come from the backends' own text, which only build marks.
func TestUpstreamHasNoGeneratedHeader(t *testing.T) {
	steps := plan(t)
	n := 0
	for _, s := range steps {
		for _, f := range s.Files {
			n++
			if strings.Contains(string(f.Data), "Code generated") || strings.Contains(string(f.Data), "DO NOT EDIT") {
				t.Errorf("%s step: %s is marked as generated", s.Backend, f.Path)
			}
		}
	}
	if n == 0 {
		t.Fatal("the plan adds no files")
	}
}

// Edits that share an anchor line keep plan order, and a second locate sees
// each one applied.
func TestInsertAllKeepsPlanOrder(t *testing.T) {
	src := "a\nb\nc\n"
	es := []Edit{
		{Name: "1", Anchor: []string{"b"}, Place: After, Text: "x\n"},
		{Name: "2", Anchor: []string{"c"}, Place: Before, Text: "y\n"},
		{Name: "3", Anchor: []string{"a"}, Place: Before, Text: "z\n"},
	}
	var ls []Located
	for _, e := range es {
		ls = append(ls, locate(e, src))
	}
	got := insertAll(src, ls)
	if got != "z\na\nb\nx\ny\nc\n" {
		t.Errorf("got %q", got)
	}
	var states []string
	for _, e := range es {
		states = append(states, locate(e, got).State.String())
	}
	sort.Strings(states)
	if diff := cmp.Diff([]string{"applied", "applied", "applied"}, states); diff != "" {
		t.Error(diff)
	}
}

// Pointers into kernelgen's documents go, the sentence around them stays.
func TestStripDocRefs(t *testing.T) {
	for in, want := range map[string]string{
		"// S_k == S_v (not asserted by the builder, docs/ops.md#builder-checks)\n": "// S_k == S_v (not asserted by the builder)\n",
		"// would lose the in-place write, docs/ggml.md#gate), and -1\n":            "// would lose the in-place write), and -1\n",
		"// treat that slot as written (docs/ggml.md#hazards).\n":                   "// treat that slot as written.\n",
		"// Hook points (docs/ggml.md#cuda):\n":                                     "// Hook points:\n",
		"//   ranges (ggml-metal-common.cpp, docs/ggml.md#hazards);\n":              "//   ranges (ggml-metal-common.cpp);\n",
		"// the gather's size (docs/ops.md#scratch).\n":                             "// the gather's size.\n",
		"// nothing to strip: docs is a word, ops.md a name\n":                      "// nothing to strip: docs is a word, ops.md a name\n",
	} {
		if got := stripDocRefs(in); got != want {
			t.Errorf("stripDocRefs(%q) = %q, want %q", in, got, want)
		}
	}
}

// A series refused for a missing anchor names the user's tree, not the
// temporary clone it is made in.
func TestSeriesErrorsNameTheUsersTree(t *testing.T) {
	root := fixture(t, "")
	p := filepath.Join(root, "src", "ggml-vulkan", "ggml-vulkan.cpp")
	src, _ := os.ReadFile(p)
	src = bytes.Replace(src, []byte("static bool ggml_backend_vk_device_supports_op("), []byte("static bool ggml_backend_vk_device_supports_op_renamed("), 1)
	if err := os.WriteFile(p, src, 0o644); err != nil {
		t.Fatal(err)
	}
	commitAll(t, root)
	_, err := Series(context.Background(), open(t, root), plan(t), filepath.Join(t.TempDir(), "series"))
	if err == nil || !strings.Contains(err.Error(), "cannot write a series for "+root+" (its HEAD)") ||
		!strings.Contains(err.Error(), "src/ggml-vulkan/ggml-vulkan.cpp") || strings.Contains(err.Error(), ".kernelgen-") {
		t.Errorf("got %v", err)
	}
}

// A repository another user owns is git's safe.directory refusal, with the
// command that lifts it, not "not a git work tree".
func TestDubiousOwnershipNamesSafeDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a repository another user owns needs root")
	}
	root := fixture(t, "")
	err := filepath.WalkDir(root, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, 54321, 54321)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null") // no safe.directory of this machine's
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	before := snapshot(t, root)
	_, err = Apply(context.Background(), open(t, root), plan(t))
	if err == nil || !strings.Contains(err.Error(), "git config --global --add safe.directory "+root) || strings.Contains(err.Error(), "not a git work tree") {
		t.Errorf("got %v", err)
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("a refused patch changed the tree:\n%s", diff)
	}
}
