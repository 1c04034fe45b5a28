package ops

import (
	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
)

// OpenCL (the opencl backend): ggml-opencl's arithmetic.
func init() {
	declare(native{backend: "opencl",
		// ggml-opencl: strided rows over LANES_PER_COLUMN lanes (8 at
		// S_v 128; min(S_v, 32) below, its Intel subgroup of 32: Adreno's
		// 64 differs at S_v 64), KDA decays first, the plain conv's taps in
		// float4 dots where d_conv is a multiple of 4 (its _4 kernel).
		style: style{gateOnPartial: true, order: ir.Butterfly,
			lanes: func(b *dsl.Builder, sv dsl.Val) dsl.Val {
				return b.Select(sv.Eq(128), b.U32(8), b.Select(sv.Lt(32), sv, b.U32(32)))
			},
			convDot4: func(k dsl.Val) dsl.Val { return k.Rem(4).Eq(0) }}})
}
