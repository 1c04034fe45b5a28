package ctype

import (
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ir"
)

// Every value type has a name in every dialect: a type the IR gains without
// a row here would print as <type> and fail only at a compiler.
func TestEveryValueTypeIsNamed(t *testing.T) {
	dialects := map[string]Dialect{"C": C, "ShortInts": ShortInts, "ShortInts with u64 uint": ShortInts.With(ir.U64, "uint")}
	for name, d := range dialects {
		for ty := ir.Type(0); ty < 32; ty++ {
			if !ty.IsValue() {
				continue
			}
			if s := d.Of(ty); s == "" || strings.HasPrefix(s, "<") {
				t.Errorf("%s has no name for %s (got %q)", name, ty, s)
			}
		}
	}
}

// The dialects differ from C only where they say so.
func TestOverrides(t *testing.T) {
	cases := []struct {
		d    Dialect
		ty   ir.Type
		want string
	}{
		{C, ir.U32, "uint32_t"}, {C, ir.I32, "int32_t"}, {C, ir.F32, "float"}, {C, ir.Bool, "bool"},
		{ShortInts, ir.U32, "uint"}, {ShortInts, ir.F32, "float"}, {ShortInts, ir.I32, "int"},
		{C, ir.U64, "uint64_t"},
		{ShortInts.With(ir.U64, "uint"), ir.U64, "uint"}, {ShortInts.With(ir.U64, "uint"), ir.U32, "uint"},
		{ShortInts, ir.U64, "ulong"}, // With left its receiver as it was
		{C, ir.BF16, "<bf16>"},
	}
	for _, c := range cases {
		if got := c.d.Of(c.ty); got != c.want {
			t.Errorf("Of(%s) = %q, want %q", c.ty, got, c.want)
		}
	}
}
