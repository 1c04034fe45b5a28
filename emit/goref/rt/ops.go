package rt

import "math"

// NegZero is -0.0, which Go constants cannot spell.
var NegZero = float32(math.Copysign(0, -1))

// Select helpers: the IR's select evaluates both operands, as these calls do.
func SelF32(c bool, x, y float32) float32 {
	if c {
		return x
	}
	return y
}

func SelU32(c bool, x, y uint32) uint32 {
	if c {
		return x
	}
	return y
}

func SelU64(c bool, x, y uint64) uint64 {
	if c {
		return x
	}
	return y
}

func SelI32(c bool, x, y int32) int32 {
	if c {
		return x
	}
	return y
}

func SelBool(c bool, x, y bool) bool {
	if c {
		return x
	}
	return y
}

// MinF32 is y < x ? y : x and MaxF32 is y > x ? y : x, the IR's definitions.
func MinF32(x, y float32) float32 {
	if y < x {
		return y
	}
	return x
}

func MaxF32(x, y float32) float32 {
	if y > x {
		return y
	}
	return x
}

// Dot4 is the Go reference's stand-in for a backend's 4-wide dot product:
// ((a0*b0 + a1*b1) + a2*b2) + a3*b3, every product and sum rounded.
func Dot4(a0, a1, a2, a3, b0, b1, b2, b3 float32) float32 {
	p0 := float32(a0 * b0)
	p1 := float32(a1 * b1)
	p2 := float32(a2 * b2)
	p3 := float32(a3 * b3)
	return ((p0 + p1) + p2) + p3
}

// VecDot is the Go reference's evaluation of ir.VecDot: i ascending from
// +0.0, every product and sum rounded on its own.
func VecDot(x, y []float32) float32 {
	var s float32
	for i := range x {
		s += float32(x[i] * y[i])
	}
	return s
}

// VecSilu is the Go reference's evaluation of ir.VecSilu: each element's
// y / (1 + exp(-y)) with ExpNative.
func VecSilu(dst, src []float32) {
	for i, y := range src {
		dst[i] = y / (1 + ExpNative(-y))
	}
}
