package vulkan

import (
	"testing"

	"github.com/kernelgen/kernelgen/internal/backend/backendtest"
)

// Each shared kernel's view carries the vulkan part its upstream template
// reads, beside a table it can index.
func TestFamilyOwnPart(t *testing.T) {
	for _, fv := range backendtest.Families(t, glueTarget.Names) {
		if _, ok := fv.Own.(*family); !ok {
			t.Errorf("%s: Own is %T, not the vulkan part", fv.Name, fv.Own)
		}
	}
}

// A kernel whose variants the table cannot index is refused, saying why.
func TestFamilyNeedsTwoBools(t *testing.T) {
	backendtest.RefusesOneBool(t, newFamily, "vulkan: k: the upstream glue indexes pipelines by two bools, the kernel has 1")
}
