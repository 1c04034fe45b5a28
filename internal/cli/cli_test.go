package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/tools/fsx"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// The committed generated/ tree must be what the code generates now.
func TestCommittedGeneratedIsFresh(t *testing.T) {
	code, out, errs := run(t, "build", "--backend", "all", "--no-compile", "--check", "-o", filepath.Join("..", "..", "generated"), "--color", "never")
	if code != 0 {
		t.Fatalf("generated/ is stale; run `go run ./cmd/kernelgen build` and commit (exit %d):\n%s%s", code, out, errs)
	}
}

func TestBuildIsDeterministicAndChecks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gen")
	if code, out, errs := run(t, "build", "--no-compile", "-o", dir); code != 0 {
		t.Fatalf("build: %d %s %s", code, out, errs)
	}
	first, err := fsx.ReadTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := first["MANIFEST"]; !ok || len(first) < len(ops.All())+1 {
		t.Fatalf("tree has %d files and no MANIFEST", len(first))
	}
	// A second build writes nothing and says so; a second tree is byte-identical.
	if code, out, _ := run(t, "build", "--no-compile", "-o", dir); code != 0 || !strings.Contains(out, "up to date") {
		t.Errorf("rebuild: %d %q", code, out)
	}
	dir2 := filepath.Join(t.TempDir(), "gen")
	run(t, "build", "--no-compile", "-o", dir2)
	second, _ := fsx.ReadTree(dir2)
	if len(first) != len(second) {
		t.Fatalf("two builds differ in file count")
	}
	for p, b := range first {
		if !bytes.Equal(b, second[p]) {
			t.Errorf("%s differs between two builds", p)
		}
	}
	if code, out, _ := run(t, "build", "--no-compile", "--check", "-o", dir); code != 0 || !strings.Contains(out, "up to date") {
		t.Errorf("--check on a fresh tree: %d %q", code, out)
	}

	// A hand edit is stale: exit 1 with a unified diff naming the file.
	victim := filepath.Join(dir, "goref", "ssm_conv.go")
	orig, _ := os.ReadFile(victim)
	if err := os.WriteFile(victim, append([]byte("// hand edit\n"), orig...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := run(t, "build", "--no-compile", "--check", "--color", "never", "-o", dir)
	if code != 1 || !strings.Contains(out, "--- a/"+filepath.ToSlash(dir)+"/goref/ssm_conv.go") || !strings.Contains(out, "-// hand edit") {
		t.Errorf("--check on an edited tree: exit %d, output:\n%s", code, out)
	}
	// --check never writes.
	if now, _ := os.ReadFile(victim); !bytes.HasPrefix(now, []byte("// hand edit")) {
		t.Error("--check modified the tree")
	}
	// A build repairs it.
	if code, _, _ := run(t, "build", "--no-compile", "-o", dir); code != 0 {
		t.Fatal("rebuild failed")
	}
	if now, _ := os.ReadFile(victim); !bytes.Equal(now, orig) {
		t.Error("build did not restore the edited file")
	}
}

func TestBuildRefusesForeignFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gen")
	run(t, "build", "--no-compile", "-o", dir)
	mine := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(mine, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := fsx.ReadTree(dir)
	code, _, errs := run(t, "build", "--no-compile", "-o", dir)
	if code != 2 || !strings.Contains(errs, "notes.txt") || !strings.Contains(errs, "--force") {
		t.Fatalf("build over a foreign file: exit %d, %q", code, errs)
	}
	after, _ := fsx.ReadTree(dir)
	if len(before) != len(after) || !bytes.Equal(after["notes.txt"], []byte("mine")) {
		t.Error("a refused build changed the tree")
	}
	if code, _, _ := run(t, "build", "--no-compile", "--check", "-o", dir); code != 1 {
		t.Errorf("--check with a foreign file: exit %d, want 1", code)
	}
	if code, _, _ := run(t, "build", "--no-compile", "--force", "-o", dir); code != 0 {
		t.Fatalf("--force failed")
	}
	if _, err := os.Stat(mine); !os.IsNotExist(err) {
		t.Error("--force kept the foreign file")
	}
	// An unrelated non-empty directory with no MANIFEST is refused too.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "main.go"), []byte("package main"), 0o644)
	if code, _, _ := run(t, "build", "--no-compile", "-o", other); code != 2 {
		t.Errorf("build into a foreign directory: exit %d, want 2", code)
	}
}

func TestBadInputExitsTwoWithValidNames(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"build", "--backend", "webgpu"}, "valid: all, go, ir, metal, sycl, vulkan, cuda, opencl"},
		{[]string{"ir", "gdn"}, "valid ops: gated_delta_net"},
		{[]string{"ir", "ssm_conv", "--arith", "fast"}, "want portable or native-<backend>"},
		{[]string{"ir", "ssm_conv", "--arith", "native-webgpu"}, "valid: portable, native-metal"},
		{[]string{"ir"}, "which kernel?"},
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"build", "--check", "-o", "-"}, "cannot be used with -o -"},
		{[]string{"build", "--check", "--color", "rainbow", "-o", "does-not-exist"}, "--color"},
	}
	for _, c := range cases {
		code, _, errs := run(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 saying %q", c.args, code, errs, c.want)
		}
	}
}

func TestListAndIRCoverEveryKernel(t *testing.T) {
	code, out, _ := run(t, "list", "-v")
	if code != 0 {
		t.Fatal(out)
	}
	for _, op := range ops.All() {
		if !strings.Contains(out, op.Name) {
			t.Errorf("list does not show %s", op.Name)
		}
		for _, a := range op.Ariths() {
			code, text, errs := run(t, "ir", op.Name, "--arith", a.String())
			if code != 0 || !strings.HasPrefix(text, "kernel "+op.Name+" arith="+a.String()) {
				t.Errorf("ir %s --arith %s: exit %d %q %q", op.Name, a, code, text[:min(len(text), 80)], errs)
			}
		}
	}
	for _, want := range []string{"S_v=128,KDA=1", "d_conv=8,SILU=1", "metal   generates"} {
		if !strings.Contains(out, want) {
			t.Errorf("list -v does not show %q", want)
		}
	}
	// The batched ids ops are generated only for the backends whose glue
	// runs them (and Go, IR): op B's for Vulkan and CUDA, op D's for Vulkan.
	batchedBy := map[string]string{"gated_delta_net_inplace_ids_batched": "yes yes - - yes yes - -", "ssm_conv_update_inplace_ids_batched": "yes yes - - yes - - -"}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && strings.HasSuffix(f[0], "_batched") {
			if got := strings.Join(f[len(f)-8:], " "); got != batchedBy[f[0]] {
				t.Errorf("list: %s generated by (go ir metal sycl vulkan cuda opencl cpu) %q, want %q", f[0], got, batchedBy[f[0]])
			}
		}
	}
	kernels := 0
	for _, op := range ops.All() {
		kernels += len(op.Ariths())
	}
	code, all, _ := run(t, "ir", "--all")
	if code != 0 || strings.Count(all, "\nkernel ")+1 != kernels {
		t.Errorf("ir --all printed %d kernels, want %d", strings.Count(all, "\nkernel ")+1, kernels)
	}
}

func TestArchiveToStdout(t *testing.T) {
	code, out, _ := run(t, "build", "--backend", "go", "-o", "-")
	// files in path order: chain_gather.go, doc.go, ...
	if code != 0 || !strings.HasPrefix(out, "-- goref/chain_gather.go --\n") || !strings.Contains(out, "-- goref/doc.go --\n") || !strings.Contains(out, "-- goref/ssm_conv.go --\n// Code generated by kernelgen. DO NOT EDIT.") {
		t.Errorf("archive: exit %d, starts %q", code, out[:min(len(out), 100)])
	}
}

func TestVersionAndCompletion(t *testing.T) {
	if code, out, _ := run(t, "--version"); code != 0 || !strings.HasPrefix(out, "kernelgen ") {
		t.Errorf("--version: %d %q", code, out)
	}
	code, out, _ := run(t, "__complete", "build", "--backend", "")
	if code != 0 || !strings.Contains(out, "metal") || !strings.Contains(out, "all") {
		t.Errorf("backend completion: %d %q", code, out)
	}
	if code, out, _ := run(t, "completion", "bash"); code != 0 || !strings.Contains(out, "kernelgen") {
		t.Errorf("completion bash: %d", code)
	}
}
