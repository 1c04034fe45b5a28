package sycl

import (
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/backend/backendtest"
)

// Each shared kernel's view carries the sycl part its upstream template
// reads: a template parameter per variant param, one lambda parameter per
// bool and a call of that lambda per combination.
func TestFamilyOwnPart(t *testing.T) {
	for _, fv := range backendtest.Families(t, glueTarget.Names) {
		f, ok := fv.Own.(*family)
		if !ok {
			t.Errorf("%s: Own is %T, not the sycl part", fv.Name, fv.Own)
			continue
		}
		n := len(fv.Table.Bools)
		if got, want := len(strings.Split(f.TemplateParams, ", ")), len(fv.Table.Columns)+n; got != want {
			t.Errorf("%s: TemplateParams %q has %d params, the table %d", fv.Name, f.TemplateParams, got, want)
		}
		if got := strings.Count(f.BoolTypes, "auto "); got != n {
			t.Errorf("%s: BoolTypes %q has %d params for %d bools", fv.Name, f.BoolTypes, got, n)
		}
		if got := strings.Count(f.BoolValues, "run("); got != 1<<n {
			t.Errorf("%s: BoolValues %q calls run %d times for %d bools", fv.Name, f.BoolValues, got, n)
		}
	}
}
