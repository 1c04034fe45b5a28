package opencl

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/kernelgen/kernelgen/internal/tier"

	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/clrun"
)

// sample runs the subset `kernelgen build --check` runs (Sample) instead of
// every variant: seconds where PoCL's cache is cold, against ~2 minutes of
// CPU for all of them.
var sample = flag.Bool("sample", false, "run the sample of variants (Sample), not every variant the OpenCL backend builds")

func skipOrFail(t *testing.T, err error) {
	t.Helper()
	if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
		t.Fatal(err)
	}
	t.Skip(err)
}

func runner(t *testing.T) *clrun.Runner {
	t.Helper()
	ctx := tier.Context(t)
	r, err := clrun.Build(ctx)
	if err != nil {
		if errors.Is(err, clrun.ErrMissingTool) {
			skipOrFail(t, err)
		}
		t.Fatal(err)
	}
	if _, err := r.Devices(ctx); err != nil {
		if errors.Is(err, clrun.ErrNoDevice) {
			skipOrFail(t, err)
		}
		t.Fatal(err)
	}
	return r
}

// Every op under both OpenCL contracts, every variant the backend builds
// (the sample with -args -sample): one random case each, portable bit for bit with the
// Go reference, native within NMSE.
func TestCasesMatchReference(t *testing.T) {
	tier.FullOnly(t, "every variant on PoCL; build --check in scripts/test.sh runs the sample and builds every program")
	r := runner(t)
	start := time.Now()
	rep, err := Check(tier.Context(t), r, nil, !*sample, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d programs built, %d cases: %d portable bit for bit, %d native within NMSE (%.1f s)", rep.Programs, rep.Cases, rep.BitExact, rep.Native, time.Since(start).Seconds())
}

// The native contract's promise, as verify/vulkan checks it on lavapipe:
// each fused op the OpenCL backend builds (every variant in the full tier,
// the sample in the fast one or with -args -sample; SiLU off, as ggml runs SiLU after ssm_conv) and its
// non-fused counterpart run in one job and agree bit for bit, under both
// contracts; the fused op also matches the Go reference.
func TestFusedMatchesUnfused(t *testing.T) {
	r := runner(t)
	var cs []*cases.Case
	checks := map[*cases.Case]func(map[string][]byte) error{}
	for _, fused := range cases.FusedOps {
		op, err := ops.Lookup(fused)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range Contracts {
			for _, v := range Variants(op, tier.Full() && !*sample) {
				if v.Values["SILU"] == 1 {
					continue
				}
				name := fmt.Sprintf("fused %s@%s[%s]", fused, a, v)
				c, err := cases.Random(fused, a, rand.New(rand.NewPCG(Seed(name), 5)), cases.Small, &v)
				if err != nil {
					t.Fatal(err)
				}
				if checks[c], err = cases.AddUnfused(c, "opencl"); err != nil {
					t.Fatal(err)
				}
				cs = append(cs, c)
			}
		}
	}
	if len(cs) == 0 {
		t.Fatal("no fused variant is built on opencl")
	}
	err := RunCases(tier.Context(t), r, nil, cs, 2, nil, func(c *cases.Case, got map[string][]byte) error {
		if err := checks[c](got); err != nil {
			return fmt.Errorf("%s: fused and non-fused differ: %v", c.Name, err)
		}
		return c.Compare(got)
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d fused cases equal their non-fused counterparts bit for bit", len(cs))
}
