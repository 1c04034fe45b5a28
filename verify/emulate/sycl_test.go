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
