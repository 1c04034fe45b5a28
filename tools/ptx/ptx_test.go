package ptx

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

// A compile that succeeded runs no compiler the second time; another
// header or another instantiation compiles, and a failure compiles every
// time (it is not cached, so its message comes back).
func TestCachedCompiles(t *testing.T) {
	t.Setenv("KERNELGEN_CACHE", t.TempDir())
	ctx := context.Background()
	const one = "__global__ void k1(float * x) { x[0] = 1.0f; }\n"
	const two = one + "template <int N> __global__ void k2(float * x) { x[0] = N; }\n"
	inst := []string{"template __global__ void k2<3>(float * x);"}
	for _, c := range []struct {
		what   string
		header string
		tu     []string
		n      int   // kernel entries
		runs   int64 // compiler runs
		broken bool
	}{
		{"cold", one, nil, 1, 1, false},
		{"warm", one, nil, 1, 0, false},
		{"another header", two, inst, 2, 1, false},
		{"another instantiation", two, []string{"template __global__ void k2<4>(float * x);"}, 2, 1, false},
		{"warm again", two, inst, 2, 0, false},
		{"broken", one + "int broken(\n", nil, 0, 1, true},
		{"broken again", one + "int broken(\n", nil, 0, 1, true},
	} {
		before := compilerRuns.Load()
		n, err := Compile(ctx, "k.cuh", []byte(c.header), c.tu)
		if errors.Is(err, ErrNoClang) {
			if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
				t.Fatal(err)
			}
			t.Skip(err)
		}
		runs := compilerRuns.Load() - before
		switch {
		case c.broken && (err == nil || !strings.Contains(err.Error(), "generated/cuda/k.cuh")):
			t.Errorf("%s: %v, want clang's message naming the header", c.what, err)
		case !c.broken && err != nil:
			t.Errorf("%s: %v", c.what, err)
		case n != c.n || runs != c.runs:
			t.Errorf("%s: %d kernels after %d compiler runs, want %d after %d", c.what, n, runs, c.n, c.runs)
		}
	}
}
