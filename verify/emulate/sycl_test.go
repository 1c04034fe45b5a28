package emulate

import (
	"context"
	"errors"
	"flag"
	"os/exec"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/tools/toolchain"
)

var acppTargets = flag.String("acpp-targets", ACPPTargets, "acpp --acpp-targets for TestACPP (omp, generic, omp.library-only, ...)")

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
	tier, err := RealSYCL(ctx, impls, nil)
	if err != nil || tier != "no SYCL compiler on PATH (acpp or icpx; kernelgen doctor says how to get acpp)" {
		t.Errorf("no implementation: %q, %v", tier, err)
	}

	impls.ICPX = toolchain.Result{Found: true, Path: "/opt/intel/bin/icpx"}
	tier, err = RealSYCL(ctx, impls, nil)
	if err != nil || !strings.Contains(tier, "icpx found at /opt/intel/bin/icpx but not run") {
		t.Errorf("icpx only: %q, %v", tier, err)
	}

	impls.ACPP = toolchain.Result{Found: true, Path: "/opt/acpp/bin/acpp", Err: errors.New("exit status 1")}
	if tier, err = RealSYCL(ctx, impls, nil); err == nil || !strings.Contains(err.Error(), "acpp at /opt/acpp/bin/acpp is broken: exit status 1") {
		t.Errorf("broken acpp: %q, %v", tier, err)
	}
}

// TestACPP is the real-compiler tier itself: every SYCL kernel compiled
// by acpp and run against the Go reference. It needs AdaptiveCpp on PATH
// (never in CI; README, section SYCL, says how it was run here).
func TestACPP(t *testing.T) {
	path, err := exec.LookPath("acpp")
	if err != nil {
		t.Skip("acpp not on PATH: the real SYCL tier is run by hand (README, section SYCL)")
	}
	n, err := ACPP(context.Background(), path, *acppTargets, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("acpp --acpp-targets=%s: %d cases, every one equal to the Go reference", *acppTargets, n)
}
