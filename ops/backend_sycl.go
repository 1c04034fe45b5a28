package ops

import "github.com/kernelgen/kernelgen/ir"

// SYCL (the sycl backend): ggml-sycl's arithmetic.
func init() {
	declare(native{backend: "sycl",
		style: style{gateAfterReduce: true, order: ir.Butterfly}})
}
