package glsl_test

import (
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/emit/glsl"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/pass"
)

// The helpers a shader declares follow pass.Facts.Needs; what its body calls
// follows the printer. Over every op under both Vulkan contracts the two
// agree: a helper is declared exactly when the body uses it, and each need
// is seen both present and absent.
func TestNeedsMatchWhatTheBodyUses(t *testing.T) {
	seen := map[string][2]int{}
	for _, op := range ops.All() {
		for _, a := range []ir.Arith{ir.Portable, ir.Native("vulkan")} {
			k, err := op.Kernel(a)
			if err != nil {
				t.Fatal(err)
			}
			src, err := glsl.Emit(ir.Unit{Op: op.Name, Summary: op.Summary, Kernels: []*ir.Kernel{k}})
			if err != nil {
				t.Fatal(err)
			}
			body := string(src[strings.Index(string(src), "void main() {"):])
			n := pass.Of(k).Needs
			for _, c := range []struct {
				name string
				need bool
				use  string
			}{
				{"ExactFMA", n.ExactFMA, "kg_fma("},
				{"ZeroAdd", n.ZeroAdd, "kg_add_zero("},
				{"DenormPreserve", n.DenormPreserve, "precise float"},
			} {
				if used := strings.Contains(body, c.use); used != c.need {
					t.Errorf("%s: %s is %v, but the body uses %s: %v", k.ID(), c.name, c.need, c.use, used)
				}
				s := seen[c.name]
				if c.need {
					s[1]++
				} else {
					s[0]++
				}
				seen[c.name] = s
			}
		}
	}
	for name, s := range seen {
		if s[0] == 0 || s[1] == 0 {
			t.Errorf("%s: %d kernels without, %d with: the ops do not exercise it both ways", name, s[0], s[1])
		}
	}
}
