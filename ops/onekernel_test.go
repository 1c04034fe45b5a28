package ops_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// notYetShared are ops whose kernel another op builds too, but for names
// and the ggml slots of its buffers: each waits to be one kernel, bound as
// its callers' (ir.CallerRole, as the chain gather is), for the reason
// given. The list can only shrink.
var notYetShared = map[string]string{}

// rolesAndName are what may differ between two ops' kernels that are one:
// the kernel's name (in every line that spells it) and its buffers' roles.
var rolesAndName = regexp.MustCompile(` role=\S+`)

// A kernel is built by one op: two ops whose kernels differ only in names
// and buffer roles are one kernel, emitted once per backend (GatherOp, ChainGatherOp).
func TestOneKernelPerProgram(t *testing.T) {
	seen := map[string]string{} // kernel text, names and roles left out -> op
	used := map[string]bool{}
	for _, op := range ops.All() {
		for _, a := range op.Ariths() {
			k, err := op.Kernel(a)
			if err != nil {
				t.Fatal(err)
			}
			text := rolesAndName.ReplaceAllString(strings.ReplaceAll(ir.Print(k), op.Name, "K"), "")
			text += "\x00" + a.String()
			if first, ok := seen[text]; ok {
				if _, known := notYetShared[op.Name]; known {
					used[op.Name] = true
					continue
				}
				t.Errorf("%s@%s is %s's kernel: build it once, its buffers bound as the caller's (ir.CallerRole)", op.Name, a, first)
				continue
			}
			seen[text] = op.Name
		}
	}
	for name := range notYetShared {
		if !used[name] {
			t.Errorf("%s no longer builds another op's kernel: take it off notYetShared", name)
		}
	}
}
