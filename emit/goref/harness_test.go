package goref_test

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernelgen/kernelgen/internal/tier"
	"github.com/kernelgen/kernelgen/ops"
)

var (
	seed  = flag.Uint64("seed", 1, "seed of the random-shape tests")
	cases = flag.Int("cases", 0, "random shapes per op (default: 1000 in the full tier, 200 in the fast one, 100 with -short)")
)

// numCases is the number of random shapes per op: -cases, else 1000 in the
// full tier (the bit-exactness claim's count), 200 in the fast tier, 100
// with -short.
func numCases() int {
	switch {
	case *cases > 0:
		return *cases
	case testing.Short():
		return 100
	}
	return tier.Pick(200, 1000)
}

func newRand(op string) *rand.Rand {
	var h uint64 = 14695981039346656037
	for _, c := range op {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return rand.New(rand.NewPCG(*seed, h))
}

// sentinel fills memory a kernel must not write; it is a NaN payload that no
// arithmetic produces.
const sentinelBits = 0x7FA5A5A5

var sentinel = math.Float32frombits(sentinelBits)

// guarded is a buffer with guard elements on both sides; data is the part the
// kernel sees, capped so that any access past it panics.
type guarded struct {
	all  []float32
	data []float32
	n    int
}

const guard = 64

func newGuarded(n int) *guarded {
	all := make([]float32, n+2*guard)
	for i := range all {
		all[i] = sentinel
	}
	return &guarded{all: all, data: all[guard : guard+n : guard+n], n: n}
}

// value draws an input: mostly U(lo, hi), sometimes -0.0, +0.0 or a denormal.
func value(r *rand.Rand, lo, hi float32, special bool) float32 {
	if special {
		switch r.IntN(40) {
		case 0:
			return float32(math.Copysign(0, -1))
		case 1:
			return 0
		case 2:
			return math.Float32frombits(uint32(1 + r.IntN(1<<23-1)))
		case 3:
			return -math.Float32frombits(uint32(1 + r.IntN(1<<23-1)))
		}
	}
	return lo + (hi-lo)*r.Float32()
}

// fill sets every element of g.data.
func (g *guarded) fill(r *rand.Rand, lo, hi float32, special bool) {
	for i := range g.data {
		g.data[i] = value(r, lo, hi, special)
	}
}

// edgeValues drive a conv output to SiLU's ends (docs/ops.md#fused-ops): sums whose
// e^-y overflows (-0), whose denominator leaves DivPortable's domain, that
// overflow to an infinity, and infinities themselves.
var edgeValues = []float32{
	float32(math.Inf(1)), float32(math.Inf(-1)), math.MaxFloat32, -math.MaxFloat32,
	1e38, -1e38, 100, -100, -88.5, 89,
}

// fillEdges is fill with special values, and an edge value in about one
// element of 20.
func (g *guarded) fillEdges(r *rand.Rand, lo, hi float32) {
	g.fill(r, lo, hi, true)
	for i := range g.data {
		if r.IntN(20) == 0 {
			g.data[i] = edgeValues[r.IntN(len(edgeValues))]
		}
	}
}

// snapshot copies the whole buffer, guards included.
func (g *guarded) snapshot() []float32 { return append([]float32(nil), g.all...) }

// checkBits compares want and got bit for bit at every index of the whole
// buffer (guards included) and reports the first mismatches with labels.
func checkBits(t *testing.T, what string, want, got []float32, label func(i int) string) bool {
	t.Helper()
	if len(want) != len(got) {
		t.Errorf("%s: length %d, want %d", what, len(got), len(want))
		return false
	}
	bad := 0
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			if bad < 5 {
				t.Errorf("%s[%d] (%s) = %v (0x%08x), want %v (0x%08x)", what, i, label(i), got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d mismatches in all", what, bad)
	}
	return bad == 0
}

// pick returns a random variant of op from the variant table.
func pick(r *rand.Rand, op string) ops.Variant {
	vs := ops.VariantsOf(op)
	return vs[r.IntN(len(vs))]
}

func pickContract(r *rand.Rand, i int) contract { return contracts[i%len(contracts)] }

func divisors(n int) []int {
	var out []int
	for d := 1; d <= n; d++ {
		if n%d == 0 {
			out = append(out, d)
		}
	}
	return out
}

func describe(format string, args ...any) string { return fmt.Sprintf(format, args...) }
