package ops

import "github.com/kernelgen/kernelgen/ir"

// SYCL (the sycl backend): ggml-sycl's arithmetic.
func init() {
	declare(native{backend: "sycl", listed: 4,
		style: style{gateAfterReduce: true, order: ir.Butterfly}})
}
