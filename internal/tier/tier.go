// Package tier tells a test which tier of the suite runs, and gives it what
// the fast tier needs to stay fast without losing its reach: counts that
// scale, deterministic samples, and contexts bounded by go test's own
// deadline instead of a figure tuned on an idle machine.
//
// The fast tier is the default (`go test ./...`, `bash scripts/test.sh`):
// every op, every backend's compiler and runtime, a sample of the variant
// matrix. The full tier (KERNELGEN_FULL=1, `bash scripts/test.sh --full`,
// CI) runs the whole matrix. A sample is drawn from KERNELGEN_SEED (1 by
// default) and the test's name, and logged, so a failure replays alone.
package tier

import (
	"context"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

// Env is the variable that selects the full tier.
const Env = "KERNELGEN_FULL"

// SeedEnv is the variable that seeds the fast tier's samples.
const SeedEnv = "KERNELGEN_SEED"

// Full reports whether the full tier runs (KERNELGEN_FULL set to anything
// but "", "0" or "false").
func Full() bool {
	switch os.Getenv(Env) {
	case "", "0", "false":
		return false
	}
	return true
}

// Pick is full under the full tier and fast otherwise: a count of random
// problems, a list of widths.
func Pick[T any](fast, full T) T {
	if Full() {
		return full
	}
	return fast
}

// Seed is the seed of the fast tier's samples: KERNELGEN_SEED, else 1.
func Seed() uint64 {
	if s, err := strconv.ParseUint(os.Getenv(SeedEnv), 10, 64); err == nil {
		return s
	}
	return 1
}

// Rand is a random stream of its own for t, from Seed and t's name.
func Rand(t testing.TB) *rand.Rand { return randOf(t.Name()) }

func randOf(name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(Seed(), h.Sum64()))
}

// Sample is k of the indices 0..n-1, ascending, drawn from Rand(t); every
// index under the full tier or when k >= n. It logs what it chose, so a
// failing sample is named with the seed that reproduces it.
func Sample(t testing.TB, n, k int) []int {
	t.Helper()
	return SampleOf(t, "", n, k)
}

// SampleOf is Sample for one of several draws in t, told apart by key (an
// op's name, say): each key draws its own sample.
func SampleOf(t testing.TB, key string, n, k int) []int {
	t.Helper()
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	if Full() || k >= n {
		return all
	}
	k = max(k, 1)
	randOf(t.Name()+"\x00"+key).Shuffle(n, func(i, j int) { all[i], all[j] = all[j], all[i] })
	out := slices.Clone(all[:k])
	slices.Sort(out)
	if key != "" {
		key += ": "
	}
	t.Logf("fast tier: %s%d of %d, indices %v (%s=%d; %s=1 runs all)", key, k, n, out, SeedEnv, Seed(), Env)
	return out
}

// FullOnly skips t in the fast tier; why says what the test covers that no
// fast test does.
func FullOnly(t testing.TB, why string) {
	t.Helper()
	if !Full() {
		t.Skipf("full tier only (%s=1): %s", Env, why)
	}
}

// Context is t's context bounded by go test's own deadline (-timeout), not
// by a fixed figure: a wait in a test ends when the test binary would.
func Context(t testing.TB) context.Context {
	ctx := t.Context()
	if tt, ok := t.(interface {
		Deadline() (deadline time.Time, ok bool)
	}); ok {
		if d, ok := tt.Deadline(); ok {
			c, cancel := context.WithDeadline(ctx, d)
			t.Cleanup(cancel)
			return c
		}
	}
	return ctx
}
