package goref_test

import (
	"math"
	"testing"
)

// ulps is the distance in units in the last place between two finite float32s.
func ulps(a, b float32) int64 {
	ia, ib := int64(int32(math.Float32bits(a))), int64(int32(math.Float32bits(b)))
	if ia < 0 {
		ia = math.MinInt32 - ia
	}
	if ib < 0 {
		ib = math.MinInt32 - ib
	}
	d := ia - ib
	if d < 0 {
		d = -d
	}
	return d
}

// The portable routines are bit-reproducible by construction; this test shows
// they are also accurate where the ops use them, so portable results stay
// close to native ones. (The goref kernels use exactly these bits: the
// equivalence tests compare them with the oracle's restatement.)
func TestPortableExpAccuracy(t *testing.T) {
	t.Parallel()
	worst, at := int64(0), float32(0)
	for x := float32(-87); x < 88; x += 0.000731 {
		want := float32(math.Exp(float64(x)))
		if d := ulps(portableExp(x), want); d > worst {
			worst, at = d, x
		}
	}
	if worst > 2 {
		t.Errorf("portable exp is %d ulp off at %v; want <= 2", worst, at)
	}
	// The gate range of the tests (g in [-20, 0)) and the ends of the range.
	for _, c := range []struct{ x, want float32 }{{0, 1}, {-200, 0}, {100, float32(math.Inf(1))}} {
		if got := portableExp(c.x); got != c.want {
			t.Errorf("exp(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	t.Logf("portable exp: worst %d ulp (at %v) over [-87, 88)", worst, at)
}

// Wherever e^-y is finite in binary32 (y down to the float below -ln
// FLT_MAX, where the denominator leaves DivPortable's domain and is scaled),
// portable SiLU is within 4 ulp of y / (1 + e^-y); at the ends it is what
// SPEC's y / (1 + expf(-y)) is in binary32: -0 once expf overflows, y once
// the denominator is 1 (+Inf included). -Inf gives -0, the limit, where the
// native contracts' division gives NaN.
func TestPortableSiluAccuracy(t *testing.T) {
	t.Parallel()
	lowest := float32(-88.72283172607422) // -ln FLT_MAX rounded up: e^-y is finite
	if math.IsInf(math.Exp(-float64(lowest)), 0) || float32(math.Exp(-float64(math.Nextafter32(lowest, -100)))) <= math.MaxFloat32 {
		t.Fatalf("%v is not the lowest y whose e^-y is finite in binary32", lowest)
	}
	worst, at := int64(0), float32(0)
	for y := lowest; y < 89; y += 0.000613 {
		want := float32(float64(y) / (1 + math.Exp(-float64(y))))
		if d := ulps(portableSilu(y), want); d > worst {
			worst, at = d, y
		}
	}
	if worst > 4 {
		t.Errorf("portable silu is %d ulp off at %v; want <= 4", worst, at)
	}
	t.Logf("portable silu: worst %d ulp (at %v) over [%v, 89)", worst, at, lowest)

	negZero, inf := float32(math.Copysign(0, -1)), float32(math.Inf(1))
	for _, c := range []struct{ y, want float32 }{
		{math.Nextafter32(lowest, -100), negZero}, {-100, negZero}, {-1e38, negZero},
		{-math.MaxFloat32, negZero}, {-inf, negZero},
		{100, 100}, {1e38, 1e38}, {math.MaxFloat32, math.MaxFloat32}, {inf, inf},
		{0, 0}, {negZero, negZero},
	} {
		if got := portableSilu(c.y); math.Float32bits(got) != math.Float32bits(c.want) {
			t.Errorf("silu(%v) = %v (0x%08x), want %v (0x%08x)", c.y, got, math.Float32bits(got), c.want, math.Float32bits(c.want))
		}
	}
	if got := portableSilu(float32(math.NaN())); !math.IsNaN(float64(got)) {
		t.Errorf("silu(NaN) = %v, want NaN", got)
	}
}
