package opencl

import (
	"context"
	"errors"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/kernelgen/kernelgen/verify/clrun"
)

var all = flag.Bool("all", false, "run every variant the OpenCL backend builds, not the sample (Sample)")

func skipOrFail(t *testing.T, err error) {
	t.Helper()
	if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
		t.Fatal(err)
	}
	t.Skip(err)
}

func runner(t *testing.T) *clrun.Runner {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
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

// Every op under both OpenCL contracts, the sample of variants (or every
// one with -args -all): one random case each, portable bit for bit with the
// Go reference, native within NMSE.
func TestCasesMatchReference(t *testing.T) {
	r := runner(t)
	start := time.Now()
	rep, err := Check(context.Background(), r, *all, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d programs built, %d cases: %d portable bit for bit, %d native within NMSE (%.1f s)", rep.Programs, rep.Cases, rep.BitExact, rep.Native, time.Since(start).Seconds())
}
