// Package rt is the runtime imported by generated Go reference kernels.
//
// Everything here follows IEEE-754 binary32 semantics bit for bit:
// round-to-nearest-even, denormals kept, no flush-to-zero. The Go spec lets
// a compiler fuse x*y+z into one FMA unless the product is explicitly
// converted, so every product whose rounding matters is written as
// float32(...) or float64(...).
package rt

import (
	"fmt"
	"math"
)

// FMA returns a*b+c computed exactly and rounded once to float32
// (round-to-nearest-even), as a hardware single-precision FMA does.
//
// float32(math.FMA(...)) would round twice (to 53 bits, then to 24), which
// is wrong for sums lying just off a float32 halfway point. Instead the
// double sum is rounded to odd, after which rounding to 24 bits is correct
// because 53 >= 24+2.
func FMA(a, b, c float32) float32 {
	// A product of two float32 values has at most 48 significant bits and an
	// exponent well inside float64's normal range, so it is exact.
	p := float64(float64(a) * float64(b))
	q := float64(c)
	if math.IsInf(p, 0) || math.IsNaN(p) || math.IsInf(q, 0) || math.IsNaN(q) {
		return float32(p + q)
	}
	if p == 0 || q == 0 {
		// Adding a zero is exact (and float64 addition applies IEEE's rules
		// for the sign of a zero sum), so one rounding to float32 remains.
		return float32(p + q)
	}
	// TwoSum: s is the rounded sum and e the exact error, s+e == p+q. No
	// step can overflow or underflow: |p|,|q| lie in [2^-298, 2^256).
	s := p + q
	bv := s - p
	av := s - bv
	e := (p - av) + (q - bv)
	if e != 0 && math.Float64bits(s)&1 == 0 {
		// Round to odd: of the two doubles around p+q, take the odd one.
		// Neighbouring doubles have consecutive bit patterns, so the other
		// neighbour is odd. s cannot be zero here (the sum is exact then).
		if e > 0 {
			s = math.Nextafter(s, math.Inf(1))
		} else {
			s = math.Nextafter(s, math.Inf(-1))
		}
	}
	return float32(s)
}

// BF16ToF32 widens a bfloat16 bit pattern to float32; this is exact because
// bfloat16 is the top half of a binary32.
func BF16ToF32(h uint16) float32 {
	return math.Float32frombits(uint32(h) << 16)
}

// F32ToBF16 rounds x to bfloat16 with round-to-nearest-even. NaNs stay NaN
// (sign and top payload bits kept, quiet bit set so truncation cannot turn
// them into Inf); infinities are preserved and finite values too large
// round to Inf as RNE dictates.
func F32ToBF16(x float32) uint16 {
	u := math.Float32bits(x)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x0040
	}
	// Adding 0x7fff plus the lowest kept bit rounds half to even; a carry out
	// of the mantissa correctly bumps the exponent (up to Inf).
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

// Butterfly sums vals in place within each aligned cluster of width
// consecutive entries, as a GPU xor-shuffle reduction does: for
// off = width/2, ..., 2, 1 every lane l becomes old[l] + old[l^off], all
// lanes reading the values from before that step. Afterwards every lane
// holds its cluster's sum in that tree order (lane 0 of width 4 gets
// (x0+x2)+(x1+x3)). width must be a power of two dividing len(vals).
func Butterfly(vals []float32, width int) {
	if width <= 0 || width&(width-1) != 0 {
		panic(fmt.Sprintf("rt.Butterfly: width %d is not a positive power of two", width))
	}
	if len(vals)%width != 0 {
		panic(fmt.Sprintf("rt.Butterfly: width %d does not divide len(vals) = %d", width, len(vals)))
	}
	old := make([]float32, width)
	for base := 0; base < len(vals); base += width {
		cl := vals[base : base+width]
		for off := width / 2; off >= 1; off /= 2 {
			copy(old, cl)
			for l := range cl {
				cl[l] = old[l] + old[l^off]
			}
		}
	}
}

// ExpNative is the Go reference's stand-in for a backend's native
// (approximate) exp: exp evaluated in float64 and rounded to float32. It
// is not claimed to match any backend's instruction bit for bit.
func ExpNative(x float32) float32 {
	return float32(math.Exp(float64(x)))
}

// BitsToF32 reinterprets an IEEE-754 binary32 bit pattern as float32.
func BitsToF32(u uint32) float32 { return math.Float32frombits(u) }

// F32ToBits returns the IEEE-754 binary32 bit pattern of f.
func F32ToBits(f float32) uint32 { return math.Float32bits(f) }
