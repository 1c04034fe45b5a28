package fusion

import (
	"testing"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// Every buffer of the shared kernel and the gather that run each pattern is
// bound by the plan, on every backend with upstream kernels; a plan that
// leaves one unbound is refused.
func TestLaunchBindsEveryBuffer(t *testing.T) {
	for _, backend := range []string{"cuda", "vulkan"} {
		for _, pt := range Patterns {
			l, err := pt.Launch(backend)
			if err != nil {
				t.Fatalf("%s %s: %v", backend, pt.Name, err)
			}
			if len(l.KernelBinds) != len(l.Kernel.Buffers) || len(l.GatherBinds) != len(l.Gather.Buffers) || len(l.KernelBinds) == 0 {
				t.Errorf("%s %s: %d of %d kernel buffers, %d of %d gather buffers bound", backend, pt.Name,
					len(l.KernelBinds), len(l.Kernel.Buffers), len(l.GatherBinds), len(l.Gather.Buffers))
			}
			for b, bind := range l.KernelBinds {
				if bind.Role == "" {
					t.Errorf("%s %s: buffer %s binds no role", backend, pt.Name, b)
				}
			}
		}
	}
	broken := *StatePattern
	broken.Buffers = broken.Buffers[1:]
	if _, err := broken.Launch("vulkan"); err == nil {
		t.Errorf("a plan without %s's bind launches", StatePattern.Buffers[0].Buffer)
	}
	// the state runs the family kernel that writes the snapshot slots
	l, err := StatePattern.Launch("vulkan")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := l.KernelBinds["state_dst"]; !ok || !hasArg(l.Kernel, "K") || !hasArg(l.Kernel, "ss") || l.Shared.Slots != ops.SlotsOp {
		t.Errorf("the state's kernel %s takes no snapshot slots", l.Kernel.Name)
	}
}

func hasArg(k *ir.Kernel, name string) bool {
	for _, a := range k.Args {
		if a.Name == name {
			return true
		}
	}
	return false
}
