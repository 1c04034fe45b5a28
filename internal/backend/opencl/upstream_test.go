package opencl

import (
	"regexp"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/upstream"
	"github.com/kernelgen/kernelgen/ir"
)

// subgroupBranch opens each spelling of the reduction: the test of whether
// the subgroup covers its width.
const subgroupBranch = "SUBGROUP_SIZE >="

// macroHead is a function-like macro's first line, continued on the next.
var macroHead = regexp.MustCompile(`^#define (\w+)\(.*\\$`)

// Both forms' .cl files, as kernelgen patch writes them, spell the
// reduction once: one multi-line macro holds the file's only subgroup
// branch, and the kernel calls it once per reduction of its IR.
func TestUpstreamReductionSpelledOncePerFile(t *testing.T) {
	for _, form := range []struct {
		name    string
		kernels func(string) ([]upstream.Kernel, error)
		files   func() ([]upstream.File, error)
	}{
		{"ops", upstream.Kernels, UpstreamKernels},
		{"fusion", upstream.FusionKernels, FusionKernels},
	} {
		ks, err := form.kernels(name)
		if err != nil {
			t.Fatal(err)
		}
		files, err := form.files()
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != len(ks) {
			t.Fatalf("%s: %d files for %d kernels", form.name, len(files), len(ks))
		}
		reducing := 0
		for i, f := range files {
			reduces := 0
			ir.WalkStmts(ks[i].K.Body, func(s ir.Stmt) {
				if _, ok := s.(*ir.Reduce); ok {
					reduces++
				}
			})
			if reduces > 0 {
				reducing++
			}
			if n := strings.Count(string(f.Data), subgroupBranch); n != min(reduces, 1) {
				t.Errorf("%s form, %s: %q %d times for %d reductions, want once per file", form.name, f.Name, subgroupBranch, n, reduces)
				continue
			}
			if reduces == 0 {
				continue
			}
			macro, body, calls := macroOf(string(f.Data))
			if !strings.Contains(body, subgroupBranch) {
				t.Errorf("%s form, %s: the reduction is not in a macro of its own", form.name, f.Name)
				continue
			}
			if calls != reduces {
				t.Errorf("%s form, %s: %s called %d times for %d reductions", form.name, f.Name, macro, calls, reduces)
			}
		}
		if reducing == 0 {
			t.Errorf("%s form: no file reduces", form.name)
		}
	}
}

// macroOf finds src's multi-line macro that holds the subgroup branch: its
// name, its definition, and the number of its uses outside it.
func macroOf(src string) (name, def string, calls int) {
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		m := macroHead.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		j := i
		for j < len(lines) && strings.HasSuffix(lines[j], "\\") {
			j++
		}
		def = strings.Join(lines[i:j+1], "\n")
		if !strings.Contains(def, subgroupBranch) {
			i = j
			continue
		}
		rest := strings.Join(append(append([]string{}, lines[:i]...), lines[j+1:]...), "\n")
		return m[1], def, strings.Count(rest, m[1]+"(")
	}
	return "", "", 0
}
