package ir_test

import (
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ir"
)

// An instance spells its values in one place: Literal with the type's
// suffix (templates, defines), Bare without (Metal's instantiations, the
// upstream glue's tables); derived params are not template arguments.
func TestInstanceSpellsItsValues(t *testing.T) {
	sv := &ir.Param{Name: "S_v", Type: ir.U32}
	k := kernel()
	k.Params = []*ir.Param{
		sv,
		{Name: "KDA", Type: ir.Bool},
		{Name: "OFF", Type: ir.I32},
		{Name: "W", Type: ir.U32, Derived: &ir.ParamRef{Param: sv}},
	}
	in := ir.Instance{Kernel: k, Values: map[string]int64{"S_v": 128, "KDA": 1, "OFF": -2}}
	for _, c := range []struct {
		got  []string
		want string
	}{
		{in.TemplateArgs(), "128u, true, -2"},
		{in.BareTemplateArgs(), "128, true, -2"},
	} {
		if got := strings.Join(c.got, ", "); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
	in.Values["KDA"] = 0
	if got := in.Literal(k.Params[1]) + " " + in.Bare(k.Params[1]); got != "false false" {
		t.Errorf("KDA 0 spelled %q", got)
	}
}
