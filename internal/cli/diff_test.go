package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/internal/gentree"
	"github.com/kernelgen/kernelgen/ir"
)

// kernelText builds a one-line-of-arithmetic kernel, with a variable name
// and an evaluation order to vary, and returns its IR text.
func kernelText(t *testing.T, name string, reassociate bool) string {
	t.Helper()
	b := dsl.New("k", ir.Portable)
	in := b.Buffer("in", ir.F32, ir.Read, "src0", "")
	out := b.Buffer("out", ir.F32, ir.Write, "dst", "")
	b.Workgroup(32, 1, 1)
	b.Grid(1, 1, 1)
	lid := b.Let("lid", b.LocalID(0))
	x := b.Let(name, in.Load(lid))
	y := b.Let("y", in.Load(lid.Add(32)))
	s := x.Mul(x).Add(y)
	if reassociate {
		s = y.Add(x.Mul(x))
	}
	out.Store(lid, s)
	k, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return ir.Print(k)
}

// writeTree writes a small generated tree: the kernel's IR and a "CUDA
// source" that is just the IR text, with a MANIFEST.
func writeTree(t *testing.T, irText string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string][]byte{
		"ir/k@portable.ir": []byte(irText),
		"cuda/k.cuh":       []byte("// " + strings.ReplaceAll(irText, "\n", "\n// ") + "\n"),
	}
	var entries []gentree.Entry
	for p, data := range files {
		be := strings.Split(p, "/")[0]
		entries = append(entries, gentree.Entry{Path: p, Hash: gentree.Hash(data), Backend: be, Op: "k"})
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, gentree.ManifestName), gentree.Render(entries), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestDiffVerdicts(t *testing.T) {
	baseIR := kernelText(t, "x", false)
	renIR := kernelText(t, "value", false)
	reIR := kernelText(t, "x", true)
	base := writeTree(t, baseIR)

	code, out, _ := run(t, "diff", base, writeTree(t, baseIR))
	if code != 0 || !strings.Contains(out, "generate the same kernels") {
		t.Errorf("identical trees: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "diff", "--stat", base, writeTree(t, renIR))
	if code != 1 || !strings.Contains(out, "k@portable") || !strings.Contains(out, "names/layout only") || strings.Contains(out, "arithmetic") {
		t.Errorf("renamed variable: exit %d\n%s", code, out)
	}
	// k is no op of this kernelgen: there are no problems to run it on.
	if !strings.Contains(out, "not run: this kernelgen has no op k") {
		t.Errorf("renamed variable: no word on execution\n%s", out)
	}
	code, out, _ = run(t, "diff", "--color", "never", base, writeTree(t, reIR))
	if code != 1 || !strings.Contains(out, "k@portable                                     arithmetic;") || !strings.Contains(out, "--- a/cuda/k.cuh") {
		t.Errorf("reassociated sum: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "a: a/ir/k@portable.ir:") || !strings.Contains(out, "store out[lid] = y + x * x") {
		t.Errorf("reassociated sum: no first differing line\n%s", out)
	}
	if !strings.Contains(out, "KERNEL") || !strings.Contains(out, "CUDA") || !strings.Contains(out, "IR") {
		t.Errorf("no summary table:\n%s", out)
	}
	code, _, errs := run(t, "diff", base, t.TempDir())
	if code != 2 || !strings.Contains(errs, "not a generated tree") {
		t.Errorf("a directory without MANIFEST: exit %d %q", code, errs)
	}
	code, _, errs = run(t, "diff", base, "no-such-revision-or-dir")
	if code != 2 || !strings.Contains(errs, "neither a directory nor a git revision") {
		t.Errorf("bad revision: exit %d %q", code, errs)
	}
}
