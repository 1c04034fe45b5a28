package ctype

import (
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ir"
)

// Every value type has a name in every dialect: a type the IR gains without
// a row here would print as <type> and fail only at a compiler.
func TestEveryValueTypeIsNamed(t *testing.T) {
	dialects := map[string]Dialect{"C": C, "MSL": MSL, "OpenCL": OpenCL, "GLSL": GLSL}
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
		{MSL, ir.U32, "uint"}, {MSL, ir.F32, "float"},
		{OpenCL, ir.I32, "int"}, {GLSL, ir.U32, "uint"},
		{C, ir.U64, "uint64_t"}, {MSL, ir.U64, "ulong"}, {OpenCL, ir.U64, "ulong"}, {GLSL, ir.U64, "uint"},
		{C, ir.BF16, "<bf16>"},
	}
	for _, c := range cases {
		if got := c.d.Of(c.ty); got != c.want {
			t.Errorf("Of(%s) = %q, want %q", c.ty, got, c.want)
		}
	}
}
