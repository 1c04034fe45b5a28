// Package ctype is the C family's one map from IR types to type names: the
// fixed-width C names that CUDA, SYCL, ggml-cpu and every host side (ggml's
// glue, the host-emulation harness, the benches) spell, and for each
// language that names a type otherwise (MSL, OpenCL C, GLSL) only what it
// overrides.
package ctype

import "github.com/kernelgen/kernelgen/ir"

// Dialect is a language's spelling of the IR's value and element types.
type Dialect struct {
	// over holds the types this language names unlike C.
	over map[ir.Type]string
}

// c is C's spelling, the table the dialects override.
var c = map[ir.Type]string{
	ir.F32:  "float",
	ir.U32:  "uint32_t",
	ir.I32:  "int32_t",
	ir.U64:  "uint64_t",
	ir.Bool: "bool",
}

var (
	// C is C, C++, CUDA and SYCL, device and host side alike.
	C = Dialect{}
	// MSL names 32-bit integers by their short names (uint32_t is a
	// typedef there too, but kernels are written with uint and int).
	MSL = Dialect{over: map[ir.Type]string{ir.U32: "uint", ir.I32: "int", ir.U64: "ulong"}}
	// OpenCL C has no <stdint.h>: its integers are uint, int and ulong.
	OpenCL = Dialect{over: map[ir.Type]string{ir.U32: "uint", ir.I32: "int", ir.U64: "ulong"}}
	// GLSL's integers are uint and int. The IR's u64 is an element offset
	// (ir.U64), and GLSL spells it uint: a Vulkan storage-buffer binding
	// spans at most maxStorageBufferRange bytes, a uint32_t, so every
	// offset inside one fits 32 bits and 64-bit integers, an optional
	// device feature (shaderInt64), buy nothing. This is the one place
	// that decides it.
	GLSL = Dialect{over: map[ir.Type]string{ir.U32: "uint", ir.I32: "int", ir.U64: "uint"}}
)

// Of is the dialect's name of t; a type the dialect cannot spell prints
// as <t>, which no compiler takes.
func (d Dialect) Of(t ir.Type) string {
	if s, ok := d.over[t]; ok {
		return s
	}
	if s, ok := c[t]; ok {
		return s
	}
	return "<" + t.String() + ">"
}
