package sycl

import (
	"context"
	"flag"
	"os/exec"
	"testing"

	"github.com/kernelgen/kernelgen/internal/backend"
	"github.com/kernelgen/kernelgen/internal/backend/backendtest"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/verify/emulate"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

// The checks run the bytes build writes, not a second emission: the
// written ssm_conv.hpp with its sums started at 1 instead of 0 gives
// results that differ from the Go reference.
func TestVerifyRunsTheWrittenBytes(t *testing.T) {
	check, files := backendtest.Check(Backend), backendtest.Written(t, Backend)
	backendtest.MustFail(t, "a kernel changed after generation", check,
		backendtest.SumsFromOne(t, files, name+"/ssm_conv.hpp"), nil,
		"differ from the Go reference", "ssm_conv@portable[d_conv=2]", "ssm_conv@native-"+name)
}

var (
	acppTargets = flag.String("acpp-targets", emulate.ACPPTargets, "acpp --acpp-targets for TestACPP (omp, generic, omp.library-only, ...)")
	acppAnyway  = flag.Bool("acpp-anyway", false, "run TestACPP with a flow kernelgen refuses (emulate.CheckACPPTargets), to reproduce its failure")
)

// TestACPP is the real-compiler tier itself: every SYCL file build writes
// compiled by acpp and run against the Go reference. It needs AdaptiveCpp
// on PATH (never in CI; README, section SYCL, says how it was run here).
func TestACPP(t *testing.T) {
	path, err := exec.LookPath("acpp")
	if err != nil {
		t.Skip("acpp not on PATH: the real SYCL tier is run by hand (README, section SYCL)")
	}
	written := backend.Emulated(backendtest.Written(t, Backend), ".hpp")
	n, err := emulate.ACPP(context.Background(), path, *acppTargets, *acppAnyway, written, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("acpp --acpp-targets=%s: %d cases, every one equal to the Go reference", *acppTargets, n)
}

// The written kernels also run right at the subgroup widths build --check
// does not run them at (it runs emulationWidth).
func TestWrittenKernelsAtOtherWidths(t *testing.T) {
	backendtest.OtherWidths(t, Backend, hostemu.SYCL, ".hpp", emulationWidth)
}

// ggml-sycl builds with WARP_SIZE 16 on Intel (32 elsewhere): every GDN
// kernel of SYCL's contract reduces a column over at most 16 lanes, so
// xor_reduce_sum stays within one sub-group at every WARP_SIZE instead of
// taking its local-memory path.
func TestGDNLanesFitIntelSubgroup(t *testing.T) {
	checked := 0
	_, err := backend.PerOp(name, name, func(u ir.Unit) ([]backend.File, error) {
		for _, k := range u.Kernels {
			if k.Arith != ir.Native(name) {
				continue
			}
			for _, p := range k.Params {
				if p.Name != "W" || p.Derived == nil {
					continue
				}
				for _, sv := range []int64{16, 32, 64, 128} {
					w, ok := ir.EvalInt(p.Derived, map[string]int64{"S_v": sv})
					if !ok || w > 16 || 16%w != 0 {
						t.Errorf("%s: W at S_v %d = %d (%v), want a divisor of 16", k.ID(), sv, w, ok)
					}
				}
				checked++
			}
		}
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no GDN kernel of SYCL's contract has a derived W")
	}
	t.Logf("%d kernels", checked)
}
