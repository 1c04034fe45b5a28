package ops

import (
	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
)

// Ariths is every contract each arithmetic op is built under: portable,
// then each backend's native one (ops/backend_<name>.go).
func Ariths() []ir.Arith {
	out := []ir.Arith{ir.Portable}
	for _, be := range NativeBackends() {
		out = append(out, ir.Native(be))
	}
	return out
}

// style is what a contract decides about an op's arithmetic: the knobs
// docs/arithmetic.md lists per backend, each backend's set in its
// ops/backend_<name>.go. Op programs read these instead of testing backend
// names.
type style struct {
	portable bool
	// blockedRows: lane l owns rows l*R .. l*R+R-1 (Metal); otherwise rows r*W+l (strided).
	blockedRows bool
	// gateAfterReduce: the scalar gate multiplies the reduced dot of the
	// undecayed state, (v - g*kv)*beta (CUDA, SYCL); otherwise the state is decayed first.
	gateAfterReduce bool
	// gateOnPartial: the scalar gate multiplies each lane's partial dot of
	// the undecayed state before the reduction, kv = sum_l g*(sum_r S*k),
	// and the update is S = g*S + k*delta (ggml-opencl's kernel).
	gateOnPartial bool
	// lanes, when set, is the GDN reduction width W for S_v (otherwise
	// min(32, S_v)).
	lanes func(b *dsl.Builder, sv dsl.Val) dsl.Val
	// order of the column reductions.
	order ir.Order
	// convZero: the plain conv adds a zero bias after the taps (CUDA's `+ b`).
	convZero bool
	// convDot4 says when the plain conv sums taps with 4-wide dots.
	convDot4 func(dconv dsl.Val) dsl.Val
	// vectorRows: the backend's arithmetic is its vector routines over whole
	// rows (ggml-cpu: ggml_vec_dot_f32 on a state column, ggml_vec_silu_f32 on
	// a row of conv outputs). A GDN lane holds a whole column (W = 1) and
	// takes its dots with VecDot, nothing crosses lanes; the conv update
	// runs a block of channels per lane and applies VecSilu to the block.
	vectorRows bool
	// checksIds: the backend can stop on a bad input, and checks that an
	// id it reads the cache at names one of the cache's rows (ggml-cpu:
	// GGML_ASSERT, as its GET_ROWS checks each row id). A GPU kernel
	// cannot stop; there the caller owes ids in range (the builders' doc).
	checksIds bool
	// fusedMadd: the recurrence's multiply-adds are one FMA each, as
	// ggml-cpu's vector routines compute them on an FMA ISA
	// (ggml_vec_mad_f32's vector FMAs). The conv taps are not (convMadd).
	fusedMadd bool
}

// madd is acc + x*y: one FMA under the portable contract (and where the
// backend fuses it), the backend's natural (possibly contracted) expression
// under native.
func (st style) madd(b *dsl.Builder, x, y, acc dsl.Val) dsl.Val {
	if st.portable || st.fusedMadd {
		return b.FMA(x, y, acc)
	}
	return acc.Add(x.Mul(y))
}

// convMadd is one conv tap, acc + x*y: one FMA under the portable
// contract, as written under every native one. ggml-cpu's plain conv writes
// sumf += s*c and leaves the rest to its compiler, which decides per d_conv
// (GCC 12 -O3 -march=native: an FMA chain at d_conv 2 and 3, vector
// products summed in order at 4 and 8, both at 5-7; -O2 and Clang: FMAs):
// the fused kernels write the same sum, so the same compiler decides the
// same way for both.
func (st style) convMadd(b *dsl.Builder, x, y, acc dsl.Val) dsl.Val {
	if st.portable {
		return b.FMA(x, y, acc)
	}
	return acc.Add(x.Mul(y))
}

// exp is exp(x), unbound: where it is stored it is written into the store
// (no "float e = exp(x); g_reg[r] = e;"); letExp binds a value used again.
func (st style) exp(b *dsl.Builder, x dsl.Val) dsl.Val {
	if st.portable {
		return b.ExpPortable(x)
	}
	return b.ExpNative(x)
}

// letExp is exp(x) bound to name (no "gate = e" alias of exp's own let).
func (st style) letExp(b *dsl.Builder, name string, x dsl.Val) dsl.Val {
	if st.portable {
		return b.Let(name, b.ExpPortable(x))
	}
	return b.Let(name, b.ExpNative(x))
}

func (st style) silu(b *dsl.Builder, y dsl.Val) dsl.Val {
	if st.portable {
		return b.SiluPortable(y)
	}
	return b.SiluNative(y)
}
