package integration

import "testing"

// The kernels' step is a patch of the same backend, with its files in the
// same directory and the same budget: Parts gives it the step's own.
func TestPartsGiveTheKernelsTheStepsBackendDirAndBudget(t *testing.T) {
	f := &Fusion{Backend: "b", Dir: "src/b/", Budget: 7, Subject: "fuse", Kernels: &Fusion{Subject: "kernels"}}
	parts := f.Parts()
	if len(parts) != 2 || parts[0].Subject != "kernels" || parts[1] != f {
		t.Fatalf("parts %v: want the kernels' step, then the step", parts)
	}
	if k := parts[0]; k.Backend != "b" || k.Dir != "src/b/" || k.Budget != 7 {
		t.Errorf("the kernels' step: backend %q, dir %q, budget %d", k.Backend, k.Dir, k.Budget)
	}
	if f.Kernels.Backend != "" {
		t.Errorf("Parts changed the step's Kernels")
	}
	if parts := (&Fusion{Backend: "b"}).Parts(); len(parts) != 1 {
		t.Errorf("a step without kernels has %d parts", len(parts))
	}
}
