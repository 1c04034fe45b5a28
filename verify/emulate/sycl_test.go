package emulate

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/tools/toolchain"
)

// Without acpp the real tier runs nothing and says why; icpx alone is
// named but not run; a broken acpp is an error.
func TestRealSYCLWithoutACPP(t *testing.T) {
	ctx := context.Background()
	t.Setenv("PATH", t.TempDir())
	impls, err := ProbeSYCL(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if impls.ACPP.Found || impls.ICPX.Found {
		t.Fatalf("ProbeSYCL on an empty PATH found %+v", impls)
	}
	tier, err := RealSYCL(ctx, impls, nil, nil)
	if err != nil || tier != "no SYCL compiler on PATH (acpp or icpx; kernelgen doctor says how to get acpp)" {
		t.Errorf("no implementation: %q, %v", tier, err)
	}

	impls.ICPX = toolchain.Result{Found: true, Path: "/opt/intel/bin/icpx"}
	tier, err = RealSYCL(ctx, impls, nil, nil)
	if err != nil || !strings.Contains(tier, "icpx found at /opt/intel/bin/icpx but not run") {
		t.Errorf("icpx only: %q, %v", tier, err)
	}

	impls.ACPP = toolchain.Result{Found: true, Path: "/opt/acpp/bin/acpp", Err: errors.New("exit status 1")}
	if tier, err = RealSYCL(ctx, impls, nil, nil); err == nil || !strings.Contains(err.Error(), "acpp at /opt/acpp/bin/acpp is broken: exit status 1") {
		t.Errorf("broken acpp: %q, %v", tier, err)
	}
}

// The acpp flows that compile the GDN kernels wrong are refused by name,
// alone or in a list, with the reason; the flow build uses is not.
func TestCheckACPPTargets(t *testing.T) {
	for _, ok := range []string{ACPPTargets, "cuda:sm_80", "omp.library-only;cuda:sm_80"} {
		if err := CheckACPPTargets(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"omp", "omp.accelerated", "generic", "omp.library-only; generic", "generic:x"} {
		err := CheckACPPTargets(bad)
		if err == nil || !strings.Contains(err.Error(), "refused: ") || !strings.Contains(err.Error(), "docs/runtimes.md") ||
			!strings.Contains(err.Error(), "use "+ACPPTargets) {
			t.Errorf("%s: %v", bad, err)
		}
	}
	// Each flow's refusal names its own bug.
	for flow, bug := range map[string]string{"omp": "a value loaded in a loop", "generic": "stores made after a loop of barriers"} {
		if err := CheckACPPTargets(flow); err == nil || !strings.Contains(err.Error(), bug) {
			t.Errorf("%s's reason: %v", flow, err)
		}
	}
	// ACPP refuses before it compiles anything (no acpp needed).
	if _, err := ACPP(context.Background(), "acpp", "generic", false, nil, nil); err == nil || !strings.Contains(err.Error(), "--acpp-targets=generic refused") {
		t.Errorf("ACPP with generic: %v", err)
	}
}
