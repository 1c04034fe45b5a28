package glue

import "testing"

// A term prints over the node as the glue always wrote its args, and over
// a backend's names field by field; C text with no fields (a chain
// schedule's seg) cannot be printed over names, so a backend naming the
// node's tensors never passes a source read through op.
func TestTermPrintsOverTheNodeOrOverNames(t *testing.T) {
	named := func(f Field) string {
		return map[FieldKind]string{FieldNe: "ne", FieldStride: "nb / sizeof(float)"}[f.Kind] + string(rune('0'+f.Dim))
	}
	for _, c := range []struct {
		term      Term
		c, byName string
	}{
		{gdnArgs["sq2"], "op->src[0]->nb[2] / 4", "nb / sizeof(float)2"},
		{gdnArgs["rq3"], "op->src[2]->ne[3] / op->src[0]->ne[3]", "ne3 / ne3"},
		{convArgs(2)["d2"], "op->nb[2] / 4", "nb / sizeof(float)2"},
	} {
		if got := c.term.C(); got != c.c {
			t.Errorf("C() = %q, want %q", got, c.c)
		}
		if got, err := c.term.In(named); err != nil || got != c.byName {
			t.Errorf("In = %q, %v, want %q", got, err, c.byName)
		}
	}
	seg := withArg(gdnArgs, "seg", "(op->src[2]->ne[3] + 1) / 2")["seg"]
	if got := seg.C(); got != "(op->src[2]->ne[3] + 1) / 2" {
		t.Errorf("raw C() = %q", got)
	}
	if _, err := seg.In(named); err == nil {
		t.Error("a raw term printed over names")
	}
}
