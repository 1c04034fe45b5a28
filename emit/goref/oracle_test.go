package goref_test

// The oracle: the ops written straight from docs/ops.md's formulas (#gdn,
// #conv, #fused-ops and the two-phase rule of #aliasing) in plain matrix form, with the
// rounding order of each contract as ops/doc.go states it. It shares no code
// with the IR, the DSL or the Go lowering; its only helper from the project
// is rt.FMA, which rt's own tests check against exact math/big arithmetic.

import (
	"math"

	"github.com/kernelgen/kernelgen/emit/goref/rt"
)

// contract knobs, restated from ops/doc.go.
type contract struct {
	name            string
	portable        bool
	blocked         bool             // Metal: lane l owns rows l*R..l*R+R-1
	gateAfterReduce bool             // CUDA, SYCL scalar gate
	gateOnPartial   bool             // OpenCL scalar gate: each lane's partial times e, then the reduction
	lanes           func(sv int) int // W where it is not min(32, S_v) (OpenCL: 8 at S_v 128)
	convZero        bool             // CUDA plain conv: + 0.0f after the taps
	dot4            func(K int) bool
	wholeColumns    bool // CPU: one lane holds a whole column (W = 1), so dots run i ascending
	fusedMadd       bool // CPU: the recurrence's multiply-adds are fmas (the conv taps are not)
}

var contracts = []contract{
	{name: "portable", portable: true, convZero: true},
	{name: "native-cuda", gateAfterReduce: true, convZero: true},
	{name: "native-metal", blocked: true, dot4: func(K int) bool { return K%4 == 0 }},
	{name: "native-vulkan", dot4: func(K int) bool { return K == 4 }},
	// ggml-sycl's WARP_SIZE on Intel, 16: a column's lanes stay in one sub-group
	{name: "native-sycl", gateAfterReduce: true, lanes: func(sv int) int { return min(sv, 16) }},
	{name: "native-cpu", wholeColumns: true, fusedMadd: true},
	{name: "native-opencl", gateOnPartial: true, dot4: func(K int) bool { return K%4 == 0 },
		lanes: func(sv int) int {
			if sv == 128 {
				return 8
			}
			return min(sv, 32)
		}},
}

func mul(a, b float32) float32 { return float32(a * b) }

// madd is acc + x*y: one fused operation under portable, two roundings under native.
func (c contract) madd(x, y, acc float32) float32 {
	if c.portable || c.fusedMadd {
		return rt.FMA(x, y, acc)
	}
	return acc + mul(x, y)
}

// dot is one step of a column's dot product: madd, except where a lane
// holds whole columns and the dot is the backend's vector dot, which the Go
// reference evaluates i ascending with every product rounded.
func (c contract) dot(x, y, acc float32) float32 {
	if c.wholeColumns {
		return acc + mul(x, y)
	}
	return c.madd(x, y, acc)
}

func (c contract) exp(x float32) float32 {
	if c.portable {
		return portableExp(x)
	}
	return float32(math.Exp(float64(x)))
}

func (c contract) silu(y float32) float32 {
	if c.portable {
		return portableSilu(y)
	}
	return y / (1 + c.exp(-y))
}

// portableExp restates the portable exp routine: clamp, x = k ln2 + r, a
// degree-7 Taylor polynomial by Horner FMAs, then two exact scalings by 2^k/2.
func portableExp(x float32) float32 {
	const hi, lo = float32(88.72283935546875), float32(-103.97208404541016)
	if x > hi {
		x = hi
	}
	if x < lo {
		x = lo
	}
	const magic = float32(12582912)
	k := rt.FMA(x, float32(math.Log2E), magic) - magic
	r := rt.FMA(k, -float32(0.693145751953125), x)
	r = rt.FMA(k, -float32(1.4286067653301870e-6), r)
	coef := []float32{1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1, 1}
	p := coef[0]
	for _, c := range coef[1:] {
		p = rt.FMA(p, r, c)
	}
	n := int(k)
	n1 := (n+150)/2 - 75
	n2 := n - n1
	return mul(mul(p, float32(math.Ldexp(1, n1))), float32(math.Ldexp(1, n2)))
}

// portableDiv restates the portable division for d in [1, 2^126]: a zero
// or infinite first quotient is the result.
func portableDiv(n, d float32) float32 {
	r := math.Float32frombits(uint32(int32(0x7EF311C3) - int32(math.Float32bits(d))))
	for i := 0; i < 3; i++ {
		e := rt.FMA(-d, r, 1)
		r = rt.FMA(r, e, r)
	}
	q := mul(n, r)
	if q == 0 || math.IsInf(float64(q), 0) {
		return q
	}
	rem := rt.FMA(-d, q, n)
	return rt.FMA(rem, r, q)
}

// portableSilu restates the portable SiLU: -0 where e^-y overflows, and a
// denominator above 2^126 scaled with y by 2^-4 into portableDiv's domain.
func portableSilu(y float32) float32 {
	d := 1 + portableExp(-y)
	switch {
	case math.IsInf(float64(d), 1):
		return rt.NegZero
	case d > 0x1p126:
		return portableDiv(mul(y, 0x1p-4), mul(d, 0x1p-4))
	}
	return portableDiv(y, d)
}

// butterfly sums per-lane partials: for off = W/2..1, x[l] = x[l] + x[l^off].
func butterfly(x []float32) float32 {
	w := len(x)
	cur := append([]float32(nil), x...)
	for off := w / 2; off >= 1; off /= 2 {
		next := make([]float32, w)
		for l := range cur {
			next[l] = cur[l] + cur[l^off]
		}
		cur = next
	}
	return cur[0]
}

// gdnProblem is one GDN call in ggml terms (docs/ops.md#gdn).
type gdnProblem struct {
	sv, heads, headsQK, tokens, seqs, seqsQK int
	kda                                      bool
	q, k                                     func(i, hq, t, sq int) float32
	v                                        func(j, h, t, s int) float32
	g                                        func(i, h, t, s int) float32 // i = 0 for the scalar gate
	beta                                     func(h, t, s int) float32
	scale                                    float32
}

// gdnResult: attention o[j,h,t,s] and the state after each token per (h, s):
// states[s][h][t] is the matrix after token t, S[i][j] at index j*S_v+i.
type gdnResult struct {
	attn   []float32
	states [][][][]float32
}

// oracleGDN runs docs/ops.md#gdn from prior(s, h), the S_v*S_v block in
// transposed layout, for every head and sequence.
func oracleGDN(c contract, p gdnProblem, prior func(s, h int) []float32) gdnResult {
	sv := p.sv
	w := sv
	if w > 32 {
		w = 32
	}
	if c.lanes != nil {
		w = c.lanes(sv)
	}
	if c.wholeColumns {
		w = 1
	}
	rows := sv / w
	lanes := func(l, r int) int {
		if c.blocked {
			return l*rows + r
		}
		return r*w + l
	}
	res := gdnResult{attn: make([]float32, sv*p.heads*p.tokens*p.seqs), states: make([][][][]float32, p.seqs)}
	for s := 0; s < p.seqs; s++ {
		res.states[s] = make([][][]float32, p.heads)
		sq := s / (p.seqs / p.seqsQK)
		for h := 0; h < p.heads; h++ {
			hq := h % p.headsQK
			S := append([]float32(nil), prior(s, h)...)
			at := func(i, j int) *float32 { return &S[j*sv+i] }
			for t := 0; t < p.tokens; t++ {
				q := make([]float32, sv)
				k := make([]float32, sv)
				gate := make([]float32, sv)
				for i := 0; i < sv; i++ {
					q[i], k[i] = p.q(i, hq, t, sq), p.k(i, hq, t, sq)
					if p.kda {
						gate[i] = c.exp(p.g(i, h, t, s))
					} else {
						gate[i] = c.exp(p.g(0, h, t, s))
					}
				}
				beta := p.beta(h, t, s)
				for j := 0; j < sv; j++ {
					part := make([]float32, w)
					var delta float32
					if c.gateAfterReduce && p.kda {
						// CUDA's KDA form, contractions pinned (ops/doc.go).
						for l := 0; l < w; l++ {
							for r := 0; r < rows; r++ {
								i := lanes(l, r)
								part[l] = rt.FMA(mul(gate[i], *at(i, j)), k[i], part[l])
							}
						}
						kv := butterfly(part)
						delta = mul(p.v(j, h, t, s)-kv, beta)
						for i := 0; i < sv; i++ {
							if rows == 1 {
								*at(i, j) = rt.FMA(k[i], delta, mul(gate[i], *at(i, j)))
							} else {
								*at(i, j) = rt.FMA(gate[i], *at(i, j), mul(k[i], delta))
							}
						}
					} else if c.gateOnPartial && !p.kda {
						ga := gate[0]
						for l := 0; l < w; l++ {
							for r := 0; r < rows; r++ {
								i := lanes(l, r)
								part[l] = c.madd(*at(i, j), k[i], part[l])
							}
							part[l] = mul(part[l], ga)
						}
						kv := butterfly(part)
						delta = mul(p.v(j, h, t, s)-kv, beta)
						for i := 0; i < sv; i++ {
							*at(i, j) = c.madd(k[i], delta, mul(ga, *at(i, j)))
						}
					} else if c.gateAfterReduce {
						ga := gate[0]
						for l := 0; l < w; l++ {
							for r := 0; r < rows; r++ {
								i := lanes(l, r)
								part[l] = c.madd(*at(i, j), k[i], part[l])
							}
						}
						kv := butterfly(part)
						delta = mul(p.v(j, h, t, s)-mul(ga, kv), beta)
						for i := 0; i < sv; i++ {
							*at(i, j) = mul(ga, *at(i, j)) + mul(k[i], delta)
						}
					} else {
						for i := 0; i < sv; i++ {
							*at(i, j) = mul(gate[i], *at(i, j))
						}
						for l := 0; l < w; l++ {
							for r := 0; r < rows; r++ {
								i := lanes(l, r)
								part[l] = c.dot(*at(i, j), k[i], part[l])
							}
						}
						kv := butterfly(part)
						delta = mul(p.v(j, h, t, s)-kv, beta)
						for i := 0; i < sv; i++ {
							*at(i, j) = c.madd(k[i], delta, *at(i, j))
						}
					}
					for l := range part {
						part[l] = 0
					}
					for l := 0; l < w; l++ {
						for r := 0; r < rows; r++ {
							i := lanes(l, r)
							part[l] = c.dot(*at(i, j), q[i], part[l])
						}
					}
					res.attn[j+sv*(h+p.heads*(t+p.tokens*s))] = mul(butterfly(part), p.scale)
				}
				res.states[s][h] = append(res.states[s][h], append([]float32(nil), S...))
			}
		}
	}
	return res
}

// convWindow: the taps of (c, s) oldest first, then the current token.
// oracleConvTaps is sum_j win[j]*w[j] in the contract's plain-conv order.
func oracleConvTaps(c contract, win, w []float32) float32 {
	K := len(win)
	var y float32
	if c.dot4 != nil && c.dot4(K) {
		for j := 0; j < K; j += 4 {
			d := ((mul(win[j], w[j]) + mul(win[j+1], w[j+1])) + mul(win[j+2], w[j+2])) + mul(win[j+3], w[j+3])
			y = y + d
		}
	} else {
		for j := 0; j < K; j++ {
			if c.fusedMadd { // the CPU's taps: as written, uncontracted
				y = y + mul(win[j], w[j])
			} else {
				y = c.madd(win[j], w[j], y)
			}
		}
	}
	if c.convZero {
		y = y + 0
	}
	return y
}
