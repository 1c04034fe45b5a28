package rt

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestBF16RoundTripAllPatterns(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		f := BF16ToF32(h)
		if math.Float32bits(f) != uint32(h)<<16 {
			t.Fatalf("BF16ToF32(%#04x) bits = %#08x", h, math.Float32bits(f))
		}
		got := F32ToBF16(f)
		if f != f {
			if g := BF16ToF32(got); g == g {
				t.Fatalf("NaN %#04x converted to non-NaN %#04x", h, got)
			}
			if got&0x0040 == 0 {
				t.Fatalf("NaN %#04x not quieted: %#04x", h, got)
			}
			if got != h|0x0040 {
				t.Fatalf("NaN %#04x lost sign or payload: %#04x", h, got)
			}
			continue
		}
		if got != h {
			t.Fatalf("F32ToBF16(BF16ToF32(%#04x)) = %#04x", h, got)
		}
	}
}

// bf16Value is the real value a bf16 pattern stands for when judging
// nearness; Inf counts as 2^128, which is where RNE's overflow threshold
// (max + half ulp) comes from.
func bf16Value(h uint16) float64 {
	if h&0x7fff == 0x7f80 {
		return math.Copysign(0x1p128, float64(BF16ToF32(h)))
	}
	return float64(BF16ToF32(h))
}

// refBF16 picks, of the two bf16 patterns around a finite x, the nearer one,
// ties to the even pattern.
func refBF16(x float32) uint16 {
	lo := uint16(math.Float32bits(x) >> 16) // truncation toward zero
	hi := lo + 1
	dlo := math.Abs(float64(x) - bf16Value(lo))
	dhi := math.Abs(float64(x) - bf16Value(hi))
	switch {
	case dlo < dhi:
		return lo
	case dhi < dlo:
		return hi
	case lo&1 == 0:
		return lo
	default:
		return hi
	}
}

func TestF32ToBF16Rounding(t *testing.T) {
	cases := []struct {
		in   uint32
		want uint16
	}{
		{0x3f800000, 0x3f80}, // 1
		{0x3f808000, 0x3f80}, // 1 + 2^-8: tie, even stays
		{0x3f818000, 0x3f82}, // tie, odd rounds up
		{0x3f808001, 0x3f81}, // just above tie
		{0x3f807fff, 0x3f80}, // just below tie
		{0xbf818000, 0xbf82}, // negative tie, magnitude to even
		{0x7f7fffff, 0x7f80}, // MaxFloat32 rounds to Inf
		{0x7f7f8000, 0x7f80}, // tie at the threshold: odd max rounds to Inf
		{0x7f7f7fff, 0x7f7f}, // below the threshold
		{0xff7fffff, 0xff80}, // -MaxFloat32 to -Inf
		{0x7f800000, 0x7f80}, // +Inf
		{0xff800000, 0xff80}, // -Inf
		{0x00000001, 0x0000}, // smallest denormal to +0
		{0x00008000, 0x0000}, // denormal tie to even 0
		{0x00008001, 0x0001},
		{0x00018000, 0x0002},
		{0x80008001, 0x8001},
		{0x80000000, 0x8000}, // -0
		{0x007fffff, 0x0080}, // largest denormal rounds to min normal
		{0x7f800001, 0x7fc0}, // signaling NaN whose payload truncation would make Inf
		{0xff800001, 0xffc0},
		{0x7fc00000, 0x7fc0},
		{0x7fa12345, 0x7fe1}, // payload top bits kept, quiet bit set
	}
	for _, tc := range cases {
		if got := F32ToBF16(math.Float32frombits(tc.in)); got != tc.want {
			t.Errorf("F32ToBF16(%#08x) = %#04x, want %#04x", tc.in, got, tc.want)
		}
	}
}

func TestF32ToBF16AgainstReference(t *testing.T) {
	check := func(u uint32) {
		if u&0x7f800000 == 0x7f800000 {
			return // Inf/NaN covered by table tests
		}
		x := math.Float32frombits(u)
		if got, want := F32ToBF16(x), refBF16(x); got != want {
			t.Fatalf("F32ToBF16(%#08x) = %#04x, want %#04x", u, got, want)
		}
	}
	// Every bf16 pattern with the low halves that matter most.
	for i := range 1 << 16 {
		for _, lo := range []uint32{0, 1, 0x7fff, 0x8000, 0x8001, 0xfffe, 0xffff} {
			check(uint32(i)<<16 | lo)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	n := 2_000_000
	if testing.Short() {
		n = 200_000
	}
	for range n {
		check(r.Uint32())
	}
}

func TestButterflyTreeOrder(t *testing.T) {
	x := []float32{1e8, 1, -1e8, 1}
	v := append([]float32(nil), x...)
	Butterfly(v, 4)
	// Step off=2 pairs lanes (0,2),(1,3); step off=1 pairs the results, so
	// lane 0 = (x0+x2)+(x1+x3); the other lanes add the same two partial
	// sums in the other order, and addition is commutative.
	lane0 := (x[0] + x[2]) + (x[1] + x[3])
	lane1 := (x[1] + x[3]) + (x[0] + x[2])
	lane2 := (x[2] + x[0]) + (x[3] + x[1])
	lane3 := (x[3] + x[1]) + (x[2] + x[0])
	want := []float32{lane0, lane1, lane2, lane3}
	for i := range v {
		if math.Float32bits(v[i]) != math.Float32bits(want[i]) {
			t.Errorf("lane %d = %g, want %g", i, v[i], want[i])
		}
	}
	if lane0 != 2 {
		t.Errorf("tree sum = %g, want 2", lane0)
	}
	// The sequential sum loses the 1 to rounding (ulp(1e8) is 8).
	seq := ((x[0] + x[1]) + x[2]) + x[3]
	if seq != 1 {
		t.Errorf("sequential sum = %g, want 1", seq)
	}
	if seq == v[0] {
		t.Errorf("sequential and butterfly sums should differ on this input")
	}
}

func TestButterflyWidth8AndClusters(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	vals := make([]float32, 24)
	for i := range vals {
		vals[i] = float32(r.NormFloat64()) * float32(math.Ldexp(1, r.IntN(40)-20))
	}
	got := append([]float32(nil), vals...)
	Butterfly(got, 8)
	for c := 0; c < len(vals); c += 8 {
		x := vals[c : c+8]
		for l := range 8 {
			// Lane l after off=4,2,1: s1(k) = x[k]+x[k^4];
			// s2(k) = s1(k)+s1(k^2); result = s2(l)+s2(l^1).
			s1 := func(k int) float32 { return x[k] + x[k^4] }
			s2 := func(k int) float32 { return s1(k) + s1(k^2) }
			want := s2(l) + s2(l^1)
			if math.Float32bits(got[c+l]) != math.Float32bits(want) {
				t.Errorf("cluster %d lane %d = %g, want %g", c/8, l, got[c+l], want)
			}
		}
	}
	// Lane 0 spelled out once: ((x0+x4)+(x2+x6)) + ((x1+x5)+(x3+x7)).
	x := vals[:8]
	want0 := ((x[0] + x[4]) + (x[2] + x[6])) + ((x[1] + x[5]) + (x[3] + x[7]))
	if got[0] != want0 {
		t.Errorf("lane 0 = %g, want %g", got[0], want0)
	}
}

func TestButterflyWidthOneAndEmpty(t *testing.T) {
	v := []float32{1, 2, 3}
	Butterfly(v, 1)
	if v[0] != 1 || v[1] != 2 || v[2] != 3 {
		t.Errorf("width 1 changed values: %v", v)
	}
	Butterfly(nil, 4) // zero clusters: nothing to do, no panic
	w := []float32{1, 2}
	Butterfly(w, 2)
	if w[0] != 3 || w[1] != 3 {
		t.Errorf("width 2 = %v, want [3 3]", w)
	}
}

func TestButterflyBadWidthPanics(t *testing.T) {
	cases := []struct {
		n, width int
		msg      string
	}{
		{8, 0, "not a positive power of two"},
		{8, -2, "not a positive power of two"},
		{6, 3, "not a positive power of two"},
		{6, 4, "does not divide"},
		{4, 8, "does not divide"},
	}
	for _, tc := range cases {
		func() {
			defer func() {
				r := recover()
				s, _ := r.(string)
				if r == nil || !strings.Contains(s, tc.msg) {
					t.Errorf("Butterfly(len %d, width %d): panic %v, want message containing %q", tc.n, tc.width, r, tc.msg)
				}
			}()
			Butterfly(make([]float32, tc.n), tc.width)
		}()
	}
}

func TestExpNative(t *testing.T) {
	if got := ExpNative(0); got != 1 {
		t.Errorf("ExpNative(0) = %g", got)
	}
	if got := ExpNative(float32(math.Inf(-1))); got != 0 {
		t.Errorf("ExpNative(-Inf) = %g", got)
	}
	if got := ExpNative(float32(math.Inf(1))); !math.IsInf(float64(got), 1) {
		t.Errorf("ExpNative(+Inf) = %g", got)
	}
	if got := ExpNative(100); !math.IsInf(float64(got), 1) {
		t.Errorf("ExpNative(100) = %g, want +Inf (beyond float32 range)", got)
	}
	if got := ExpNative(float32(math.NaN())); got == got {
		t.Errorf("ExpNative(NaN) = %g", got)
	}
	if got := ExpNative(-100); got == 0 || got >= 0x1p-126 {
		t.Errorf("ExpNative(-100) = %g, want a nonzero denormal", got)
	}
	if got, want := ExpNative(1), float32(math.E); got != want {
		t.Errorf("ExpNative(1) = %g, want %g", got, want)
	}
}

func TestBitsWrappers(t *testing.T) {
	for _, u := range []uint32{0, 0x80000000, 0x3f800000, 0x00000001, 0x7f800000, 0x7fc00001} {
		if got := F32ToBits(BitsToF32(u)); got != u {
			t.Errorf("round trip %#08x = %#08x", u, got)
		}
	}
	if BitsToF32(0x3f800000) != 1 || F32ToBits(-2) != 0xc0000000 {
		t.Errorf("wrappers do not match IEEE encodings")
	}
}

// VecDot sums i ascending and rounds every product: a pairwise tree would
// keep the 1 below, a fused product the 2^-24.
func TestVecDotOrder(t *testing.T) {
	if got := VecDot([]float32{1e8, 1, -1e8}, []float32{1, 1, 1}); got != 0 {
		t.Errorf("VecDot = %v, want 0 (1e8 + 1 rounds to 1e8 before -1e8)", got)
	}
	a := float32(1 + 1.0/4096)
	if got, want := VecDot([]float32{a, -1}, []float32{a, 1}), float32(1.0/2048); got != want {
		t.Errorf("VecDot = %g, want %g (the product rounded before the sum)", got, want)
	}
}

func TestVecSiluIsSiluPerElement(t *testing.T) {
	src := []float32{-3, -0.5, 0, 0.25, 7}
	dst := make([]float32, len(src))
	VecSilu(dst, src)
	for i, y := range src {
		if want := y / (1 + ExpNative(-y)); dst[i] != want {
			t.Errorf("VecSilu[%d] = %v, want %v", i, dst[i], want)
		}
	}
}
