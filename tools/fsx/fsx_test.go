package fsx

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func bytesMap(m map[string]string) map[string][]byte {
	out := map[string][]byte{}
	for k, v := range m {
		out[k] = []byte(v)
	}
	return out
}

func mustRead(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	m, err := ReadTree(dir)
	if err != nil {
		t.Fatalf("ReadTree(%s): %v", dir, err)
	}
	return m
}

func sameTree(a, b map[string][]byte) bool {
	return maps.EqualFunc(a, b, func(x, y []byte) bool { return string(x) == string(y) })
}

// siblings lists the entries of dir other than keep.
func siblings(t *testing.T, dir string, keep ...string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if !slices.Contains(keep, e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestReplaceDirCreates(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "a", "b", "out") // parents do not exist yet
	files := bytesMap(map[string]string{
		"top.go":          "package top\n",
		"empty.txt":       "",
		"sub/x.go":        "x",
		"sub/deep/y/z.cu": "z",
	})
	if err := ReplaceDir(target, files); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, target); !sameTree(got, files) {
		t.Fatalf("tree = %q, want %q", got, files)
	}
	if s := siblings(t, filepath.Dir(target), "out"); len(s) != 0 {
		t.Errorf("leftover siblings: %v", s)
	}
	if runtime.GOOS == "windows" {
		return
	}
	for _, p := range []string{"top.go", "empty.txt", "sub/deep/y/z.cu"} {
		fi, err := os.Stat(filepath.Join(target, p))
		if err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, err %v; want 0644", p, fi.Mode().Perm(), err)
		}
	}
	for _, p := range []string{".", "sub", "sub/deep", "sub/deep/y"} {
		fi, err := os.Stat(filepath.Join(target, p))
		if err != nil || fi.Mode().Perm() != 0o755 {
			t.Errorf("dir %s: mode %v, err %v; want 0755", p, fi.Mode().Perm(), err)
		}
	}
}

func TestReplaceDirReplacesExisting(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "out")
	old := bytesMap(map[string]string{"keep.go": "old", "gone.go": "bye", "olddir/f": "1"})
	if err := ReplaceDir(target, old); err != nil {
		t.Fatal(err)
	}
	// A stray file not written by ReplaceDir must vanish too.
	if err := os.WriteFile(filepath.Join(target, "stray"), []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	next := bytesMap(map[string]string{"keep.go": "new", "newdir/g": "2"})
	if err := ReplaceDir(target, next); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, target); !sameTree(got, next) {
		t.Fatalf("tree = %q, want %q", got, next)
	}
	if _, err := os.Stat(filepath.Join(target, "olddir")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("olddir survived: %v", err)
	}
	if s := siblings(t, root, "out"); len(s) != 0 {
		t.Errorf("leftover siblings: %v", s)
	}
	// An empty map yields an empty directory.
	if err := ReplaceDir(target, nil); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, target); len(got) != 0 {
		t.Errorf("after empty replace: %q", got)
	}
	if fi, err := os.Stat(target); err != nil || !fi.IsDir() {
		t.Errorf("target should be an empty dir: %v", err)
	}
}

func TestReplaceDirRejectsBadPaths(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "out")
	old := bytesMap(map[string]string{"a.go": "A", "d/b.go": "B"})
	if err := ReplaceDir(target, old); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		files map[string]string
		frag  string
	}{
		{map[string]string{"": "x"}, "empty"},
		{map[string]string{"/abs/x": "x"}, "/abs/x"},
		{map[string]string{"../x": "x"}, "../x"},
		{map[string]string{"a/../../x": "x"}, "a/../../x"},
		{map[string]string{"a/../b": "x"}, "a/../b"},
		{map[string]string{"a//b": "x"}, "a//b"},
		{map[string]string{"a/": "x"}, "a/"},
		{map[string]string{"./a": "x"}, "./a"},
		{map[string]string{"a/.": "x"}, "a/."},
		{map[string]string{`a\b`: "x"}, `a\\b`},
		{map[string]string{"ok.go": "x", "..": "y"}, ".."},
		{map[string]string{"p": "file", "p/q": "x"}, `"p"`},
	}
	for _, tc := range bad {
		err := ReplaceDir(target, bytesMap(tc.files))
		if err == nil {
			t.Errorf("%q: accepted", tc.files)
			continue
		}
		if !strings.Contains(err.Error(), tc.frag) {
			t.Errorf("%q: error %q does not mention %q", tc.files, err, tc.frag)
		}
		if got := mustRead(t, target); !sameTree(got, old) {
			t.Fatalf("%q: target changed to %q", tc.files, got)
		}
		if s := siblings(t, root, "out"); len(s) != 0 {
			t.Fatalf("%q: leftover siblings %v", tc.files, s)
		}
	}
}

func TestReplaceDirFailureMidWrite(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "out")
	old := bytesMap(map[string]string{"a.go": "A", "d/b.go": "B", "d/e/c.go": "C"})
	if err := ReplaceDir(target, old); err != nil {
		t.Fatal(err)
	}
	injected := errors.New("disk full (injected)")
	var written []string
	beforeWrite = func(i int, rel string) error {
		if i == 2 {
			return injected
		}
		written = append(written, rel)
		return nil
	}
	defer func() { beforeWrite = nil }()

	next := bytesMap(map[string]string{"a.go": "new", "b.go": "x", "c/d.go": "y", "z.go": "z"})
	err := ReplaceDir(target, next)
	if !errors.Is(err, injected) {
		t.Fatalf("err = %v, want the injected error", err)
	}
	// Sorted order is a.go, b.go, c/d.go, z.go: the third write failed.
	if !strings.Contains(err.Error(), "c/d.go") || len(written) != 2 {
		t.Errorf("err %q, written %v: failure should name c/d.go after two writes", err, written)
	}
	if got := mustRead(t, target); !sameTree(got, old) {
		t.Fatalf("old tree changed: %q", got)
	}
	if s := siblings(t, root, "out"); len(s) != 0 {
		t.Errorf("leftover siblings: %v", s)
	}

	// Same with no previous tree: nothing may appear at all.
	fresh := filepath.Join(root, "fresh")
	if err := ReplaceDir(fresh, next); !errors.Is(err, injected) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Lstat(fresh); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("fresh target exists after failure: %v", err)
	}
	if s := siblings(t, root, "out"); len(s) != 0 {
		t.Errorf("leftover siblings: %v", s)
	}
}

func TestReplaceDirTargetIsFile(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "out")
	if err := os.WriteFile(target, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := ReplaceDir(target, bytesMap(map[string]string{"a": "b"}))
	if err == nil || !strings.Contains(err.Error(), target) {
		t.Fatalf("err = %v, want an error naming %s", err, target)
	}
	if b, _ := os.ReadFile(target); string(b) != "precious" {
		t.Errorf("file clobbered: %q", b)
	}
	if s := siblings(t, root, "out"); len(s) != 0 {
		t.Errorf("leftover siblings: %v", s)
	}
}

func TestReplaceDirParentIsFile(t *testing.T) {
	root := t.TempDir()
	blocker := filepath.Join(root, "blocker")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := ReplaceDir(filepath.Join(blocker, "out"), bytesMap(map[string]string{"a": "b"}))
	if err == nil || !strings.Contains(err.Error(), "blocker") {
		t.Fatalf("err = %v, want an error naming the blocking path", err)
	}
}

func TestBadTargets(t *testing.T) {
	for _, target := range []string{".", "..", "/", "a/.."} {
		if err := ReplaceDir(target, nil); err == nil {
			t.Errorf("ReplaceDir(%q) accepted", target)
		}
		if err := CleanStale(target); err == nil {
			t.Errorf("CleanStale(%q) accepted", target)
		}
	}
}

func TestReadTree(t *testing.T) {
	root := t.TempDir()
	if m, err := ReadTree(filepath.Join(root, "missing")); err != nil || m == nil || len(m) != 0 {
		t.Errorf("missing dir: %v, %v; want empty map", m, err)
	}
	dir := filepath.Join(root, "d")
	for p, c := range map[string]string{"x": "1", "s/y": "2", "s/t/.hidden": "3", "s/empty": ""} {
		fp := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(fp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fp, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "emptydir"), 0o755); err != nil {
		t.Fatal(err)
	}
	want := bytesMap(map[string]string{"x": "1", "s/y": "2", "s/t/.hidden": "3", "s/empty": ""})
	if got := mustRead(t, dir); !sameTree(got, want) {
		t.Errorf("ReadTree = %q, want %q", got, want)
	}
	if _, err := ReadTree(filepath.Join(dir, "x")); err == nil {
		t.Errorf("ReadTree on a file should fail")
	}
	if runtime.GOOS == "windows" {
		return
	}
	link := filepath.Join(dir, "s", "link")
	if err := os.Symlink("y", link); err != nil {
		t.Fatal(err)
	}
	_, err := ReadTree(dir)
	if err == nil || !strings.Contains(err.Error(), link) {
		t.Errorf("symlink: err = %v, want an error naming %s", err, link)
	}
}

// stale builds the sibling a crashed ReplaceDir would leave.
func stale(t *testing.T, target, prefix, suffix string, files map[string]string) string {
	t.Helper()
	p := filepath.Join(filepath.Dir(target), prefix+suffix)
	for rel, c := range files {
		fp := filepath.Join(p, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(fp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fp, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCleanStaleRestoresBackup(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "out")
	// Crash between the renames: old tree moved to the backup, new tree
	// still in a temp dir, target missing.
	stale(t, target, bakPrefix(target), "123", map[string]string{"a.go": "old", "d/b.go": "oldb"})
	stale(t, target, tmpPrefix(target), "123", map[string]string{"a.go": "half"})
	stale(t, target, tmpPrefix(target), "999", nil)
	// Unrelated siblings, including look-alikes for other targets.
	stale(t, target, ".out2"+tmpTag, "1", map[string]string{"k": "k"})
	stale(t, target, "other", "", map[string]string{"k": "k"})

	if err := CleanStale(target); err != nil {
		t.Fatal(err)
	}
	want := bytesMap(map[string]string{"a.go": "old", "d/b.go": "oldb"})
	if got := mustRead(t, target); !sameTree(got, want) {
		t.Errorf("restored tree = %q, want %q", got, want)
	}
	s := siblings(t, root, "out")
	slices.Sort(s)
	if !slices.Equal(s, []string{".out2.tmp-1", "other"}) {
		t.Errorf("siblings after clean = %v", s)
	}
	// Idempotent.
	if err := CleanStale(target); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, target); !sameTree(got, want) {
		t.Errorf("second clean changed tree: %q", got)
	}
}

func TestCleanStaleKeepsExistingTarget(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "out")
	cur := bytesMap(map[string]string{"a.go": "current"})
	if err := ReplaceDir(target, cur); err != nil {
		t.Fatal(err)
	}
	// Crash after the swap but before the backup was removed.
	stale(t, target, bakPrefix(target), "1", map[string]string{"a.go": "older"})
	stale(t, target, tmpPrefix(target), "2", map[string]string{"junk": "j"})
	if err := CleanStale(target); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, target); !sameTree(got, cur) {
		t.Errorf("target changed: %q", got)
	}
	if s := siblings(t, root, "out"); len(s) != 0 {
		t.Errorf("leftover siblings: %v", s)
	}
}

func TestCleanStaleNothingToDo(t *testing.T) {
	root := t.TempDir()
	if err := CleanStale(filepath.Join(root, "no", "such", "out")); err != nil {
		t.Errorf("missing parent: %v", err)
	}
	target := filepath.Join(root, "out")
	if err := CleanStale(target); err != nil {
		t.Errorf("no siblings: %v", err)
	}
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("CleanStale created target: %v", err)
	}
}

// While a build runs, the only new sibling is the temp dir, named with the
// prefix CleanStale looks for.
func TestReplaceDirSiblingNames(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "out")
	var seen []string
	beforeWrite = func(int, string) error {
		ents, _ := os.ReadDir(root)
		for _, e := range ents {
			seen = append(seen, e.Name())
		}
		return nil
	}
	defer func() { beforeWrite = nil }()
	if err := ReplaceDir(target, bytesMap(map[string]string{"a": "1"})); err != nil {
		t.Fatal(err)
	}
	if err := ReplaceDir(target, bytesMap(map[string]string{"a": "2"})); err != nil {
		t.Fatal(err)
	}
	for _, n := range seen {
		if n != "out" && !strings.HasPrefix(n, ".out.tmp-") {
			t.Errorf("unexpected sibling %q during build", n)
		}
	}
	if !slices.ContainsFunc(seen, func(n string) bool { return strings.HasPrefix(n, ".out.tmp-") }) {
		t.Errorf("temp dir not seen during build: %v", seen)
	}
}

// RemoveStale takes only directories with the prefix that nothing has
// touched for StaleAge.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-StaleAge - time.Minute)
	for _, name := range []string{".build-old", ".build-new", "keep-old", "key123"} {
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, "old") || name == "key123" {
			os.Chtimes(filepath.Join(dir, name), old, old)
		}
	}
	os.WriteFile(filepath.Join(dir, ".build-file"), nil, 0o644)
	os.Chtimes(filepath.Join(dir, ".build-file"), old, old)
	RemoveStale(dir, ".build-")
	if got := siblings(t, dir); !slices.Equal(got, []string{".build-file", ".build-new", "keep-old", "key123"}) {
		t.Errorf("left: %v", got)
	}
}
