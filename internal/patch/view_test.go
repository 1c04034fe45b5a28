package patch

import (
	"testing"

	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/internal/registry"
)

// A plan for every backend builds each backend's glue view once, however
// many sections, files and generated kernels its steps read: a second plan
// builds none.
func TestPlanBuildsEachViewOnce(t *testing.T) {
	n0 := glue.ViewsBuilt()
	if _, err := Plan(registry.Integrations(), []string{"all"}); err != nil {
		t.Fatal(err)
	}
	n1 := glue.ViewsBuilt()
	if built := n1 - n0; built > int64(len(registry.Integrations())) {
		t.Errorf("patch --backend all built %d glue views for %d backends", built, len(registry.Integrations()))
	}
	if _, err := Plan(registry.Integrations(), []string{"all"}); err != nil {
		t.Fatal(err)
	}
	if again := glue.ViewsBuilt() - n1; again != 0 {
		t.Errorf("a second plan built %d glue views again", again)
	}
}
