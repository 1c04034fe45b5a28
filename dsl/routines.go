package dsl

import (
	"math"

	"github.com/kernelgen/kernelgen/ir"
)

// The portable routines below expand into exactly specified IR operations
// (FMA, add, mul, Select, integer ops, Bitcast), so every backend and the Go
// reference compute the same bits. They are accurate to a few ulp over the
// ranges the ops use; bit-reproducibility, not correct rounding, is the goal.
// Each constant is written as the binary32 value it is.

const (
	expHi    = float32(88.72283935546875)     // 0x42B17218: just above ln(FLT_MAX)
	expLo    = float32(-103.97208404541016)   // below this exp rounds to 0 in binary32
	log2e    = float32(1.4426950408889634)    // 0x3FB8AA3B
	roundMag = float32(12582912)              // 1.5 * 2^23: adding it rounds to an integer
	ln2Hi    = float32(0.693145751953125)     // 0x3F317200: kf*ln2Hi is exact for |kf| <= 256
	ln2Lo    = float32(1.4286067653301870e-6) // 0x35BFBE8E: ln 2 - ln2Hi
	// divTop is the top of DivPortable's domain (2^126); SiluPortable scales
	// a larger denominator, and its numerator, by divScale (exact) into it.
	divTop   = float32(0x1p126)
	divScale = float32(0x1p-4)
	maxF32   = float32(math.MaxFloat32)
	// rcpMagic gives a first reciprocal guess within about 12% from the bits of d.
	rcpMagic = 0x7EF311C3
)

// Taylor coefficients of e^r, highest degree first, rounded to binary32.
var expPoly = [...]float32{1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1, 1}

// ExpPortable is e^x built from exact operations: clamp, split x = k*ln2 + r
// with |r| <= ln2/2, a degree-7 polynomial in r by Horner FMAs, and scaling by
// 2^k in two exact power-of-two steps so the result underflows to denormals
// and overflows to +Inf exactly as binary32 multiplication does.
func (b *Builder) ExpPortable(x Val) Val {
	c := b.Let("exp_x", b.Select(x.Gt(expHi), expHi, x))
	c = b.Let("exp_x", b.Select(c.Lt(expLo), expLo, c))
	kf := b.Let("exp_kf", b.FMA(c, log2e, roundMag).Sub(roundMag))
	r := b.Let("exp_r", b.FMA(kf, -ln2Hi, c))
	r = b.Let("exp_r", b.FMA(kf, -ln2Lo, r))
	p := b.Var("exp_p", b.F32(expPoly[0]))
	for _, coef := range expPoly[1:] {
		p.Set(b.FMA(p.Get(), r, coef))
	}
	n := b.Let("exp_n", kf.I32())
	// n is in [-150, 128]; halves n1 and n2 are in [-75, 64], so 2^n1 and 2^n2 are normal.
	n1 := b.Let("exp_n1", n.Add(150).Shr(1).Sub(75))
	n2 := b.Let("exp_n2", n.Sub(n1))
	s1 := b.Let("exp_s1", n1.Add(127).Shl(23).Bitcast(ir.F32))
	s2 := b.Let("exp_s2", n2.Add(127).Shl(23).Bitcast(ir.F32))
	return b.Let("exp", p.Get().Mul(s1).Mul(s2))
}

// DivPortable is n/d for d in [1, 2^126] (the domain SiluPortable uses) and
// any n, zeros and infinities included: a reciprocal guess from the bits of
// d, three Newton steps by FMA, then one FMA-based correction of the
// quotient, which a zero or infinite quotient skips (the correction would
// turn -0 into +0 and an infinity into NaN).
func (b *Builder) DivPortable(n, d Val) Val {
	r := b.Var("div_r", b.I32(rcpMagic).Sub(d.Bitcast(ir.I32)).Bitcast(ir.F32))
	for i := 0; i < 3; i++ {
		e := b.Let("div_e", b.FMA(d.Neg(), r.Get(), 1.0))
		r.Set(b.FMA(r.Get(), e, r.Get()))
	}
	q := b.Let("div_q", n.Mul(r.Get()))
	rem := b.Let("div_rem", b.FMA(d.Neg(), q, n))
	exact := q.Eq(float32(0)).OrElse(q.Gt(maxF32)).OrElse(q.Lt(-maxF32))
	return b.Let("div", b.Select(exact, q, b.FMA(rem, r.Get(), q)))
}

// SiluPortable is y / (1 + e^-y) from the portable routines, with binary32's
// meaning at the ends: where e^-y overflows to +Inf (y below about -88.72,
// -Inf included) the quotient is -0; where it underflows the denominator is
// 1 and the quotient y (+Inf stays +Inf). A denominator above DivPortable's
// domain (y below about -87.34) is scaled with y by 2^-4 first, which is
// exact and leaves the quotient as it is.
func (b *Builder) SiluPortable(y Val) Val {
	d := b.Let("silu_d", b.F32(1).Add(b.ExpPortable(y.Neg())))
	s := b.Let("silu_s", b.Select(d.Gt(divTop), divScale, float32(1)))
	q := b.DivPortable(b.Let("silu_n", y.Mul(s)), b.Let("silu_m", d.Mul(s)))
	return b.Select(d.Gt(maxF32), float32(math.Copysign(0, -1)), q)
}

// SiluNative is y / (1 + exp(-y)) with the backend's exp and division, the
// expression ggml's silu uses on every GPU backend.
func (b *Builder) SiluNative(y Val) Val {
	return y.Div(b.F32(1).Add(b.ExpNative(y.Neg())))
}
