package rt

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

// bigPrec holds a*b+c exactly: the operands' bits span at most ~560 binary
// places (2^-298 .. 2^256).
const bigPrec = 2000

func bigOf(f float64) *big.Float {
	return new(big.Float).SetPrec(bigPrec).SetMode(big.ToNearestEven).SetFloat64(f)
}

// refFMA is an independent oracle: special values by the IEEE rules spelled
// out here, finite values exactly with math/big rounded once to float32.
func refFMA(a, b, c float32) float32 {
	fa, fb, fc := float64(a), float64(b), float64(c)
	nan := float32(math.NaN())
	if math.IsNaN(fa) || math.IsNaN(fb) || math.IsNaN(fc) {
		return nan
	}
	if (math.IsInf(fa, 0) && fb == 0) || (math.IsInf(fb, 0) && fa == 0) {
		return nan
	}
	if math.IsInf(fa, 0) || math.IsInf(fb, 0) {
		neg := math.Signbit(fa) != math.Signbit(fb)
		if math.IsInf(fc, 0) && math.Signbit(fc) != neg {
			return nan
		}
		if neg {
			return float32(math.Inf(-1))
		}
		return float32(math.Inf(1))
	}
	if math.IsInf(fc, 0) {
		return c
	}
	x := bigOf(fa)
	x.Mul(x, bigOf(fb))
	pNeg, pZero := x.Signbit(), x.Sign() == 0
	x.Add(x, bigOf(fc))
	if x.Sign() == 0 {
		// Exact zero sum: -0 only when both addends are -0 (RNE).
		if pZero && fc == 0 && pNeg && math.Signbit(fc) {
			return float32(math.Copysign(0, -1))
		}
		return 0
	}
	r, _ := x.Float32()
	return r
}

func sameF32(x, y float32) bool {
	if x != x || y != y {
		return x != x && y != y
	}
	return math.Float32bits(x) == math.Float32bits(y)
}

// The oracle relies on big.Float.Float32 rounding to nearest-even across the
// denormal range and at the overflow threshold; its doc only promises
// "nearest", so pin the behaviour down on hand-checked values.
func TestBigFloat32RoundsLikeIEEE(t *testing.T) {
	pow := func(e int) *big.Float { return new(big.Float).SetPrec(bigPrec).SetMantExp(big.NewFloat(1), e) }
	sum := func(xs ...*big.Float) *big.Float {
		z := new(big.Float).SetPrec(bigPrec)
		for _, x := range xs {
			z.Add(z, x)
		}
		return z
	}
	neg := func(x *big.Float) *big.Float { return new(big.Float).SetPrec(bigPrec).Neg(x) }
	maxF := new(big.Float).SetPrec(bigPrec).SetFloat64(math.MaxFloat32)
	cases := []struct {
		name string
		x    *big.Float
		want uint32
	}{
		{"half smallest denormal ties to +0", pow(-150), 0x00000000},
		{"negative half smallest ties to -0", neg(pow(-150)), 0x80000000},
		{"just above half smallest", sum(pow(-150), pow(-300)), 0x00000001},
		{"quarter smallest", pow(-151), 0x00000000},
		{"1.5 denormal ulps ties to even 2", sum(pow(-149), pow(-150)), 0x00000002},
		{"2.5 denormal ulps ties to even 2", sum(pow(-148), pow(-150)), 0x00000002},
		{"3.5 denormal ulps ties to even 4", sum(pow(-148), pow(-149), pow(-150)), 0x00000004},
		{"largest denormal plus half ulp ties to min normal", sum(pow(-126), neg(pow(-150))), 0x00800000},
		{"one plus half ulp ties to one", sum(pow(0), pow(-24)), 0x3f800000},
		{"one plus just over half ulp", sum(pow(0), pow(-24), pow(-80)), 0x3f800001},
		{"max plus half ulp ties to inf", sum(maxF, pow(103)), 0x7f800000},
		{"max plus under half ulp stays max", sum(maxF, pow(102), pow(101)), 0x7f7fffff},
		{"minus max minus half ulp ties to -inf", neg(sum(maxF, pow(103))), 0xff800000},
	}
	for _, tc := range cases {
		got, _ := tc.x.Float32()
		if math.Float32bits(got) != tc.want {
			t.Errorf("%s: Float32() = %#08x, want %#08x", tc.name, math.Float32bits(got), tc.want)
		}
	}
}

func TestFMASpecialCases(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	negZero := float32(math.Copysign(0, -1))
	tiny := math.Float32frombits(1) // 2^-149
	maxF := float32(math.MaxFloat32)
	cases := []struct {
		a, b, c float32
		want    float32
	}{
		// Signs of exact zeros.
		{0, 1, negZero, 0},
		{negZero, 1, negZero, negZero},
		{1, negZero, negZero, negZero},
		{1, negZero, 0, 0},
		{negZero, negZero, negZero, 0},
		{negZero, negZero, 0, 0},
		{1, 1, -1, 0},
		{-1, 1, 1, 0},
		{3, -2, 6, 0},
		// Products below the denormal range still carry a sign.
		{tiny, tiny, negZero, 0},
		{-tiny, tiny, 0, negZero},
		{-tiny, tiny, negZero, negZero},
		{tiny, tiny, tiny, tiny},
		{-tiny, tiny, tiny, tiny},
		// 2^-75 squared is exactly half the smallest denormal.
		{0x1p-75, 0x1p-75, 0, 0},
		{0x1p-75, 0x1p-75, tiny, 0x1p-148},
		{-0x1p-75, 0x1p-75, 0, negZero},
		// Infinities and NaNs.
		{inf, 0, 1, nan},
		{0, -inf, 1, nan},
		{inf, 1, -inf, nan},
		{-inf, 1, inf, nan},
		{inf, 2, inf, inf},
		{inf, -2, 5, -inf},
		{1, 1, inf, inf},
		{1, 1, -inf, -inf},
		{nan, 1, 1, nan},
		{1, nan, 1, nan},
		{1, 1, nan, nan},
		{0, inf, nan, nan},
		// Overflow, and its absence when the exact sum is in range.
		{maxF, 2, 0, inf},
		{-maxF, 2, 0, -inf},
		{maxF, 2, -maxF, maxF},
		{maxF, 1, maxF, inf},
		{maxF, 1, 0x1p103, inf},           // tie at the threshold rounds to even (Inf)
		{maxF, 1, 0x1p102, maxF},          // below the threshold
		{maxF, 1, 0x1p103 - 0x1p79, maxF}, // just below the threshold
		// Double rounding trap: 24929*673 = 2^24+1 is a float32 tie; a tiny
		// addend decides it, but float64 rounding would erase the addend.
		{24929, 673, 0x1p-40, 16777218},
		{24929, 673, -0x1p-40, 16777216},
		{24929, 673, 0, 16777216},
		{1, 1, 0x1p-24, 1},
		{1, 1, 0x1p-24 + 0x1p-47, 0x1.000002p0},
	}
	for _, tc := range cases {
		got := FMA(tc.a, tc.b, tc.c)
		if !sameF32(got, tc.want) {
			t.Errorf("FMA(%g, %g, %g) = %g (%#08x), want %g (%#08x)",
				tc.a, tc.b, tc.c, got, math.Float32bits(got), tc.want, math.Float32bits(tc.want))
		}
		if ref := refFMA(tc.a, tc.b, tc.c); !sameF32(ref, tc.want) {
			t.Errorf("oracle disagrees with table: refFMA(%g, %g, %g) = %g, want %g", tc.a, tc.b, tc.c, ref, tc.want)
		}
	}
}

// Naive double rounding is wrong on the trap case; FMA must not be.
func TestFMAIsNotDoubleRounded(t *testing.T) {
	a, b, c := float32(24929), float32(673), float32(0x1p-40)
	naive := float32(math.FMA(float64(a), float64(b), float64(c)))
	if naive != 16777216 {
		t.Fatalf("expected float32(math.FMA) to double-round to 16777216, got %g", naive)
	}
	if got := FMA(a, b, c); got != 16777218 {
		t.Fatalf("FMA = %g, want 16777218", got)
	}
}

// randMant returns a float32 with a random 24-bit significand, exponent in
// [lo, hi] (of the leading bit) and random sign; the conversion to float32
// rounds exponents below -126 into denormals, which is intended.
func randMant(r *rand.Rand, lo, hi int) float32 {
	m := float64(r.Uint32()&0xffffff | 0x800000)
	e := lo + r.IntN(hi-lo+1)
	v := float32(math.Ldexp(m, e-23))
	if r.IntN(2) == 0 {
		v = -v
	}
	return v
}

// nudge moves x by a few ulps (possibly zero) in either direction.
func nudge(r *rand.Rand, x float32) float32 {
	k := r.IntN(4)
	dir := float32(math.Inf(1))
	if r.IntN(2) == 0 {
		dir = -dir
	}
	for range k {
		x = math.Nextafter32(x, dir)
	}
	return x
}

// halfway builds a, b, c with a*b+c exactly on (or a few ulps of c off) a
// float32 rounding tie. ok is false when the construction did not yield an
// exactly representable c.
func halfway(r *rand.Rand) (a, b, c float32, ok bool) {
	var t float32
	switch r.IntN(3) {
	case 0:
		t = math.Float32frombits(r.Uint32() & 0x7f7fffff) // any finite magnitude
	case 1:
		t = math.Float32frombits(r.Uint32() & 0x007fffff) // denormal
	default:
		t = randMant(r, -30, 30)
	}
	t = float32(math.Abs(float64(t)))
	next := math.Nextafter32(t, float32(math.Inf(1)))
	if math.IsInf(float64(next), 0) {
		return 0, 0, 0, false
	}
	h := (float64(t) + float64(next)) / 2 // exact: one extra bit
	if r.IntN(2) == 0 {
		h = -h
	}
	a = randMant(r, -10, 10)
	b = float32(h / float64(a))
	if b == 0 || math.IsInf(float64(b), 0) {
		return 0, 0, 0, false
	}
	p := float64(float64(a) * float64(b))
	d := h - p // exact when b kept its bits, so p lies within an ulp of h
	c = float32(d)
	if float64(c) != d {
		return 0, 0, 0, false
	}
	if r.IntN(3) == 0 {
		c = nudge(r, c)
	}
	return a, b, c, true
}

// genCase draws one input triple from a mix of distributions aimed at the
// places where an FMA goes wrong.
func genCase(r *rand.Rand) (a, b, c float32) {
	switch r.IntN(9) {
	case 0: // raw bit patterns, including Inf/NaN and denormals
		return math.Float32frombits(r.Uint32()), math.Float32frombits(r.Uint32()), math.Float32frombits(r.Uint32())
	case 1: // cancellation: c close to -a*b
		a, b = randMant(r, -40, 40), randMant(r, -40, 40)
		c = nudge(r, -float32(float64(a)*float64(b)))
		return a, b, c
	case 2: // cancellation with a lower-order c of the opposite sign
		a, b = randMant(r, -20, 20), randMant(r, -20, 20)
		c = -float32(float64(a) * float64(b))
		c = nudge(r, c+randMant(r, -70, -40))
		return a, b, c
	case 3: // denormal operands and results
		a = randMant(r, -150, -120)
		b = randMant(r, -5, 30)
		c = randMant(r, -160, -110)
		return a, b, c
	case 4: // products far below the denormal range added to denormals
		return randMant(r, -149, -60), randMant(r, -149, -60), randMant(r, -160, -120)
	case 5: // products near overflow
		a = randMant(r, 60, 127)
		b = randMant(r, 127-int(math.Ilogb(math.Abs(float64(a))))-2, 127-int(math.Ilogb(math.Abs(float64(a))))+1)
		c = randMant(r, 120, 127)
		return a, b, c
	case 6: // wildly mixed exponents
		return randMant(r, -149, 127), randMant(r, -149, 127), randMant(r, -149, 127)
	case 7: // small integers and short significands: many exact results
		f := func() float32 { return float32(r.IntN(2001)-1000) * float32(math.Ldexp(1, r.IntN(9)-4)) }
		return f(), f(), f()
	default:
		for {
			if a, b, c, ok := halfway(r); ok {
				return a, b, c
			}
		}
	}
}

func TestFMARandomAgainstBig(t *testing.T) {
	n := 4_000_000
	if testing.Short() {
		n = 300_000
	}
	workers := runtime.GOMAXPROCS(0)
	per := n / workers
	var mu sync.Mutex
	var fails []string
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 0x9e3779b97f4a7c15))
			for range per {
				a, b, c := genCase(r)
				got, want := FMA(a, b, c), refFMA(a, b, c)
				if !sameF32(got, want) {
					mu.Lock()
					if len(fails) < 20 {
						fails = append(fails, fmt.Sprintf("FMA(%#08x, %#08x, %#08x) = %#08x, want %#08x",
							math.Float32bits(a), math.Float32bits(b), math.Float32bits(c),
							math.Float32bits(got), math.Float32bits(want)))
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for _, f := range fails {
		t.Error(f)
	}
}

// The halfway generator must really produce ties, and on some of them naive
// double rounding must fail, or the random test would prove little.
func TestHalfwayGeneratorHitsTies(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ties, naiveWrong := 0, 0
	for range 20000 {
		a, b, c, ok := halfway(r)
		if !ok {
			continue
		}
		x := bigOf(float64(a))
		x.Mul(x, bigOf(float64(b)))
		x.Add(x, bigOf(float64(c)))
		f, acc := x.Float32()
		if acc != big.Exact {
			// A tie sits exactly halfway: |x-f| equals half the gap to the
			// neighbour on the other side.
			g := math.Nextafter32(f, float32(math.Inf(1)))
			if acc == big.Above {
				g = math.Nextafter32(f, float32(math.Inf(-1)))
			}
			mid := new(big.Float).SetPrec(bigPrec).Add(bigOf(float64(f)), bigOf(float64(g)))
			mid.Quo(mid, big.NewFloat(2))
			if mid.Cmp(x) == 0 {
				ties++
			}
		}
		if float32(math.FMA(float64(a), float64(b), float64(c))) != refFMA(a, b, c) {
			naiveWrong++
		}
	}
	if ties < 5000 {
		t.Errorf("only %d exact ties generated", ties)
	}
	if naiveWrong == 0 {
		t.Errorf("naive double rounding never failed on near-tie inputs")
	}
	t.Logf("ties=%d naiveWrong=%d", ties, naiveWrong)
}
