package ops

import (
	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
)

// SYCL (the sycl backend): ggml-sycl's arithmetic. A column's lanes are at
// most 16, ggml-sycl's WARP_SIZE on Intel: they reduce within one sub-group
// at every WARP_SIZE it builds with (16, 32), never through local memory.
func init() {
	declare(native{backend: "sycl",
		style: style{gateAfterReduce: true, order: ir.Butterfly,
			lanes: func(b *dsl.Builder, sv dsl.Val) dsl.Val {
				return b.Select(sv.Lt(16), sv, b.U32(16))
			}}})
}
