package ops

import (
	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
)

// Metal (the metal backend): ggml-metal's arithmetic.
func init() {
	declare(native{backend: "metal",
		style: style{blockedRows: true, order: ir.NativeOrder,
			convDot4: func(k dsl.Val) dsl.Val { return k.Rem(4).Eq(0) }}})
}
