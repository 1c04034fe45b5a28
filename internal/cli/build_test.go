package cli

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernelgen/kernelgen/internal/backend"
	"github.com/kernelgen/kernelgen/internal/gentree"
	"github.com/kernelgen/kernelgen/internal/registry"
	"github.com/kernelgen/kernelgen/internal/tier"
	"github.com/kernelgen/kernelgen/tools/fsx"
)

// checkWhole fails unless dir is a whole generated tree: a MANIFEST listing
// every file there with its hash, no file it does not list, and nothing
// left beside it (temporary trees, backups, the lock file).
func checkWhole(t *testing.T, dir string) {
	t.Helper()
	tree, err := fsx.ReadTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := tree[gentree.ManifestName]
	if !ok {
		t.Fatalf("%s has %d files and no MANIFEST", dir, len(tree))
	}
	if bad := gentree.Verify(tree); len(bad) > 0 {
		t.Fatalf("%s: %s", dir, strings.Join(bad, "; "))
	}
	entries, _ := gentree.Parse(m)
	if len(entries)+1 != len(tree) {
		t.Fatalf("%s holds %d files, its MANIFEST lists %d", dir, len(tree), len(entries))
	}
	ents, _ := os.ReadDir(filepath.Dir(dir))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "."+filepath.Base(dir)) {
			t.Fatalf("left beside %s: %s", dir, e.Name())
		}
	}
}

// Builds of different backends, and --check runs, into one -o at once, in
// random interleavings, round after round: every run exits 0 (the builds
// take turns; a check sees the tree before or after a build, both fresh),
// and the tree is whole after every round, holding every backend any run
// built.
func TestConcurrentBuildsIntoOneDirectory(t *testing.T) {
	rounds := tier.Pick(4, 12) // random interleavings: more rounds, more of them
	if testing.Short() {
		rounds = 3
	}
	r := rand.New(rand.NewPCG(22, 1))
	runs := [][]string{
		{"build", "--backend", "all", "--no-compile"},
		{"build", "--backend", "go", "--no-compile"},
		{"build", "--backend", "ir,metal", "--no-compile"},
		{"build", "--backend", "all", "--no-compile", "--check"},
	}
	for round := 0; round < rounds; round++ {
		dir := filepath.Join(t.TempDir(), "gen")
		if round%2 == 1 {
			// Half the rounds start from a whole tree, half from nothing
			// (then --check may find the directory missing: exit 1).
			if code, out, errs := run(t, "build", "--no-compile", "-o", dir); code != 0 {
				t.Fatalf("seed build: %d %s %s", code, out, errs)
			}
		}
		var wg sync.WaitGroup
		results := make([]string, len(runs))
		for i, args := range runs {
			delay := time.Duration(r.IntN(400)) * time.Millisecond
			wg.Add(1)
			go func(i int, args []string) {
				defer wg.Done()
				time.Sleep(delay)
				code, out, errs := run(t, append(args, "-o", dir, "--color", "never")...)
				isCheck := args[len(args)-1] == "--check"
				if code != 0 && !(isCheck && code == 1 && round%2 == 0) {
					results[i] = fmt.Sprintf("%v: exit %d\n%s%s", args, code, out, errs)
				}
			}(i, args)
		}
		wg.Wait()
		for _, res := range results {
			if res != "" {
				t.Fatalf("round %d: %s", round, res)
			}
		}
		checkWhole(t, dir)
		if code, out, _ := run(t, "build", "--no-compile", "--check", "-o", dir); code != 0 {
			t.Fatalf("round %d: the tree is not what a build writes:\n%s", round, out)
		}
	}
}

// fakeModule is a directory whose go.mod is kernelgen's, with a subdirectory
// sub, so a test can build into its default output without touching the
// repository's.
func fakeModule(t *testing.T) (root string) {
	t.Helper()
	root = t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module "+gentree.Module+"\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

// Without -o, build writes generated/ at the module root however deep it is
// run, says where, and --check's diff names files as git would; outside a
// kernelgen module it is an error that says so and names -o.
func TestDefaultOutputIsTheModuleRoot(t *testing.T) {
	root := fakeModule(t)
	t.Chdir(filepath.Join(root, "sub"))
	code, out, errs := run(t, "build", "--backend", "go", "--no-compile")
	if code != 0 || !strings.HasPrefix(out, "wrote ../generated (go)") {
		t.Fatalf("build from sub/: exit %d %q %s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(root, "sub", "generated")); !os.IsNotExist(err) {
		t.Errorf("build from sub/ wrote sub/generated")
	}
	checkWhole(t, filepath.Join(root, "generated"))
	victim := filepath.Join(root, "generated", "goref", "ssm_conv.go")
	if err := os.WriteFile(victim, []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = run(t, "build", "--backend", "go", "--no-compile", "--check", "--color", "never")
	if code != 1 || !strings.Contains(out, "--- a/generated/goref/ssm_conv.go\n+++ b/generated/goref/ssm_conv.go\n") {
		t.Errorf("--check from sub/: exit %d\n%.300s", code, out)
	}

	t.Chdir(t.TempDir())
	code, _, errs = run(t, "build", "--backend", "go", "--no-compile", "--check")
	if code != 2 || !strings.Contains(errs, "not in a kernelgen checkout") || !strings.Contains(errs, "-o") {
		t.Errorf("outside a module: exit %d %q", code, errs)
	}
}

// A damaged MANIFEST stops a build, naming the line and the fix, and
// changes nothing; the fix (--backend all --force) restores a whole tree.
func TestDamagedManifest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gen")
	if code, out, errs := run(t, "build", "--no-compile", "-o", dir); code != 0 {
		t.Fatalf("build: %d %s %s", code, out, errs)
	}
	m := filepath.Join(dir, gentree.ManifestName)
	good, _ := os.ReadFile(m)
	for _, damage := range [][]byte{
		good[:len(good)/2],
		append(append([]byte(nil), good...), "<<<<<<< HEAD\n"...),
	} {
		if err := os.WriteFile(m, damage, 0o644); err != nil {
			t.Fatal(err)
		}
		before, _ := fsx.ReadTree(dir)
		for _, args := range [][]string{{"build", "--backend", "go", "--no-compile"}, {"build", "--no-compile", "--check"}} {
			code, _, errs := run(t, append(args, "-o", dir)...)
			if code != 2 || !strings.Contains(errs, "MANIFEST is damaged") || !strings.Contains(errs, "kernelgen build --backend all --force") {
				t.Errorf("%v with a damaged MANIFEST: exit %d %q", args, code, errs)
			}
		}
		if after, _ := fsx.ReadTree(dir); len(after) != len(before) || string(after[gentree.ManifestName]) != string(damage) {
			t.Error("a refused build changed the tree")
		}
		if code, out, errs := run(t, "build", "--backend", "all", "--force", "--no-compile", "-o", dir); code != 0 {
			t.Fatalf("--force: exit %d %s %s", code, out, errs)
		}
		checkWhole(t, dir)
		if now, _ := os.ReadFile(m); string(now) != string(good) {
			t.Error("--force did not restore the MANIFEST")
		}
	}
}

// Flags are checked before any generation or compilation: --check with
// -o - fails on the flags even where the compile checks would fail first.
func TestBuildFlagsCheckedFirst(t *testing.T) {
	t.Setenv("CXX", filepath.Join(t.TempDir(), "no-such-compiler"))
	code, _, errs := run(t, "build", "--backend", "metal", "--check", "-o", "-")
	if code != 2 || !strings.Contains(errs, "cannot be used with -o -") {
		t.Errorf("exit %d %q", code, errs)
	}
}

// --backend takes a list (comma-separated or repeated), as patch does, and
// the help lists every backend, ir included.
func TestBuildBackendList(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gen")
	code, out, errs := run(t, "build", "--backend", "ir,go", "--backend", "go", "--no-compile", "-o", dir)
	if code != 0 || !strings.HasPrefix(out, "wrote "+dir+" (go, ir)") {
		t.Fatalf("exit %d %q %s", code, out, errs)
	}
	tree, _ := fsx.ReadTree(dir)
	entries, _ := gentree.Parse(tree[gentree.ManifestName])
	seen := map[string]bool{}
	for _, e := range entries {
		seen[e.Backend] = true
	}
	if len(seen) != 2 || !seen["go"] || !seen["ir"] {
		t.Errorf("backends in the MANIFEST: %v", seen)
	}
	if code, _, errs := run(t, "build", "--backend", "go,webgpu", "-o", dir); code != 2 || !strings.Contains(errs, `unknown backend "webgpu"`) {
		t.Errorf("a bad name in the list: %d %q", code, errs)
	}
	_, help, _ := run(t, "build", "--help")
	if !strings.Contains(help, "go, ir, metal, sycl, vulkan, cuda, opencl") {
		t.Errorf("build --help does not list every backend:\n%s", help)
	}
	_, comp, _ := run(t, "__complete", "build", "--backend", "go,")
	if !strings.Contains(comp, "go,metal\n") || strings.Contains(comp, "go,go\n") {
		t.Errorf("completing after go,: %q", comp)
	}
}

// Off a terminal, a backend's checks print a line, with the time taken, at
// each quarter (the summary line follows the last).
func TestProgressLinesOffTerminal(t *testing.T) {
	var b strings.Builder
	p := progressLine(&b, "metal", time.Now())
	for i := 1; i <= 136; i++ {
		p(i, 136)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "metal: 34 of 136 checked (") || !strings.HasSuffix(lines[2], "s)") {
		t.Errorf("progress off a terminal:\n%s", b.String())
	}
}

// A compiler that is missing is reported as such, with the fix, and never
// as kernels that differ; nothing is written.
func TestBuildNamesAMissingCompiler(t *testing.T) {
	t.Setenv("CXX", "/nonexistent/g++")
	dir := filepath.Join(t.TempDir(), "gen")
	code, _, errs := run(t, "build", "--backend", "sycl", "-o", dir)
	if code != 2 || !strings.Contains(errs, `CXX="/nonexistent/g++" was not found`) || !strings.Contains(errs, "set CXX") || strings.Contains(errs, "differ") {
		t.Errorf("exit %d: %s", code, errs)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a failed build wrote %s", dir)
	}
}

// Ctrl-C during the emulation checks is an interruption, not a verdict on
// the kernels, and nothing is written.
func TestBuildInterrupted(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no POSIX system")
	}
	dir := filepath.Join(t.TempDir(), "gen")
	cmd := exec.Command(os.Args[0], "build", "--backend", "sycl", "-o", dir)
	// A cold cache: the checks compile for a while.
	cmd.Env = append(os.Environ(), "KERNELGEN_TEST_MAIN=1", "KERNELGEN_CACHE="+t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "interrupted during the sycl checks; nothing was written") || strings.Contains(stderr.String(), "differ") {
		t.Errorf("exit %v:\n%s", err, stderr.String())
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("an interrupted build wrote %s", dir)
	}
}

// A build, and a --check, generate each backend once: the files written or
// compared are the files its checks run (internal/backend.Generation).
func TestBuildGeneratesEachBackendOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gen")
	want := int64(len(registry.Implemented()))
	for _, args := range [][]string{
		{"build", "--backend", "all", "--no-compile", "-o", dir},
		{"build", "--backend", "all", "--no-compile", "--check", "-o", dir},
	} {
		n0 := backend.Generations()
		if code, _, errs := run(t, args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, errs)
		}
		if n := backend.Generations() - n0; n != want {
			t.Errorf("%s: %d generations, want one per backend (%d)", strings.Join(args, " "), n, want)
		}
	}
}
