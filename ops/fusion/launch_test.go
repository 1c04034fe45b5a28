package fusion

import (
	"testing"

	"github.com/kernelgen/kernelgen/ops"
)

// Every buffer of the shared kernel and the gather that run each pattern is
// bound by the plan, on every backend with upstream kernels; a plan that
// leaves one unbound is refused.
func TestLaunchBindsEveryBuffer(t *testing.T) {
	runs := map[string]string{ops.SlotsOp: "gated_delta_net_inplace_ids"}
	for _, backend := range []string{"cuda", "vulkan"} {
		for _, pt := range Patterns {
			l, err := pt.Launch(backend, runs)
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
	if _, err := broken.Launch("vulkan", runs); err == nil {
		t.Errorf("a plan without %s's bind launches", StatePattern.Buffers[0].Buffer)
	}
	if _, err := StatePattern.Launch("vulkan", nil); err == nil {
		t.Error("the slots op launches without an upstream kernel")
	}
}
