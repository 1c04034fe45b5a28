package vulkan

import (
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ops/fusion"
)

// A descriptor's range ends with the tensor it is made from, and a kernel
// writes the snapshot slots past its slot 0 tensor (the conv's K copies are
// K views, each one slot long): every record function binds such a tensor
// through a range that reaches the last slot, or the slot stores fall
// outside it (lavapipe drops them; K > 1 cases then fail in test-backend-ops).
func TestFusionDispatchSpansTheSlots(t *testing.T) {
	texts, err := fusionTexts()
	if err != nil {
		t.Fatal(err)
	}
	spanned := 0
	for _, pt := range fusion.Patterns {
		record := "_record_" + pt.CName() + "("
		body := texts["dispatch"][strings.Index(texts["dispatch"], record):]
		body = body[:strings.Index(body, "\n}\n")]
		l, err := pt.Launch(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range l.KernelBinds {
			if !pt.SlotBound(b.Role) {
				continue
			}
			spanned++
			whole := "ggml_vk_tensor_subbuffer(ctx, m." + b.Role + ")"
			widened := b.Role + ".size += (size_t) (m." + fusion.SlotsArg + " - 1) * m." + fusion.SlotStrideArg + " * sizeof(float);"
			if !strings.Contains(body, widened) || strings.Contains(strings.ReplaceAll(body, "vk_subbuffer "+b.Role+" = "+whole, ""), whole) {
				t.Errorf("%s: %s is bound with its own range, not reaching the snapshot slots past it:\n%s", pt.Name, b.Role, body)
			}
		}
	}
	if spanned == 0 {
		t.Fatal("no pattern binds a slot node's tensor: the check checks nothing")
	}
}
