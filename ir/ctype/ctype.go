// Package ctype is the C family's one map from IR types to type names: the
// fixed-width C names that CUDA, SYCL, ggml-cpu and every host side (ggml's
// glue, the host-emulation harness, the benches) spell, and the short
// integer names the shading languages use instead. A language that names a
// type otherwise still says so in its own emitter (Dialect.With).
package ctype

import (
	"maps"

	"github.com/kernelgen/kernelgen/ir"
)

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
	// C is C, C++ and the C++ dialects of the GPU languages, device and
	// host side alike.
	C = Dialect{}
	// ShortInts names 32-bit integers by their short names, uint and int,
	// and 64-bit ones ulong, as the shading languages without <stdint.h>
	// (or whose kernels are written without it) do.
	ShortInts = Dialect{over: map[ir.Type]string{ir.U32: "uint", ir.I32: "int", ir.U64: "ulong"}}
)

// With is d, but spelling t as name: a language's own exception, declared
// by its emitter.
func (d Dialect) With(t ir.Type, name string) Dialect {
	over := maps.Clone(d.over)
	if over == nil {
		over = map[ir.Type]string{}
	}
	over[t] = name
	return Dialect{over: over}
}

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
