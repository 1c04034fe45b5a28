package ops

import "github.com/kernelgen/kernelgen/ir"

// ggml-cpu (the ops step of kernelgen patch; not a backend of generated/
// yet): its vector routines' arithmetic.
func init() {
	declare(native{backend: "cpu",
		style: style{order: ir.NativeOrder, vectorRows: true, fusedMadd: true, checksIds: true},
		// its gathers copy whole rows in chunks over the threads
		tuning: Tuning{RowGather: true}})
}
