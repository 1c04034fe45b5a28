package cpu

import (
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/integration"
)

// A section's Defines are what its text defines: the manifest spells the
// entry points' heads, the lowering names them.
func TestDefinesAreWhatTheTextsDefine(t *testing.T) {
	ks, err := UpstreamKernels()
	if err != nil {
		t.Fatal(err)
	}
	text := map[string]string{}
	for _, k := range ks {
		text[k.Name] = string(k.Data)
	}
	n := 0
	for _, s := range append(append([]integration.Section(nil), Manifest.Ops...), Manifest.Sections...) {
		for _, d := range s.Defines {
			n++
			if !strings.Contains(text[s.Text.Kernel], d+"const ggml_compute_params * params, ggml_tensor * dst) {") {
				t.Errorf("section %q: its text (%s) does not define %q", s.Name, s.Text.Kernel, d)
			}
		}
	}
	if n == 0 {
		t.Error("no section defines anything")
	}
}

// Every text a section names is one the backend renders, and every text
// it renders is used.
func TestSectionsNameTheRenderedTexts(t *testing.T) {
	ks, err := UpstreamKernels()
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, s := range append(append([]integration.Section(nil), Manifest.Ops...), Manifest.Sections...) {
		used[s.Text.Kernel] = true
	}
	for _, k := range ks {
		if !used[k.Name] {
			t.Errorf("%q is rendered but no section splices it", k.Name)
		}
		delete(used, k.Name)
	}
	for name := range used {
		t.Errorf("a section splices %q, which is not rendered", name)
	}
}
