package metal

import (
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/backend/backendtest"
)

// Each shared kernel's view carries the metal part its upstream template
// reads: the kargs, a buffer id per kernel buffer and the pipeline names.
func TestFamilyOwnPart(t *testing.T) {
	for _, fv := range backendtest.Families(t, glueTarget.Names) {
		f, ok := fv.Own.(*family)
		if !ok {
			t.Errorf("%s: Own is %T, not the metal part", fv.Name, fv.Own)
			continue
		}
		if !strings.Contains(f.KargsDef, f.KargsType) || !strings.Contains(f.GatherKargsDef, f.GatherKargsType) {
			t.Errorf("%s: kargs definitions %q / %q do not define %s / %s", fv.Name, f.KargsDef, f.GatherKargsDef, f.KargsType, f.GatherKargsType)
		}
		if len(f.BufferIDs) == 0 || !strings.HasPrefix(f.HostNameFormat, fv.Function) || f.GatherHostName == "" || f.GatherCall == "" {
			t.Errorf("%s: buffer ids %v, pipeline %q (function %s), gather %q called with %q", fv.Name, f.BufferIDs, f.HostNameFormat, fv.Function, f.GatherHostName, f.GatherCall)
		}
	}
}
