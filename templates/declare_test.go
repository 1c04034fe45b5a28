package templates_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/registry"
	"github.com/kernelgen/kernelgen/templates"
)

// perKernel matches what the review glue declares once per kernel: an
// argument struct (Vulkan's push constants, Metal's kargs), a pipeline
// member and a shader registration.
var perKernel = regexp.MustCompile(`^(struct \w+ \{|} \w+;|\s*vk_pipeline pipeline_\w+\[|\s*string_to_spv\("\w+")`)

// Each kernel's declarations appear once in every backend's review glue,
// though several schedules of an op dispatch the same kernel (op B's
// chained compute runs in the chained schedule and after the split batched
// dispatch): a second struct or pipeline member would not compile.
func TestReviewGlueDeclaresEachKernelOnce(t *testing.T) {
	checked := 0
	for _, b := range registry.Implemented() {
		if b.Glue() == nil {
			continue
		}
		files, err := templates.Glue(b.Glue(), b.Integration.Heading)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			seen := map[string]bool{}
			for _, line := range strings.Split(string(f.Data), "\n") {
				m := perKernel.FindString(line)
				if m == "" || strings.HasPrefix(strings.TrimSpace(line), "} pc") {
					continue
				}
				checked++
				if seen[line] {
					t.Errorf("%s %s: declared twice: %s", b.Name, f.Name, strings.TrimSpace(line))
				}
				seen[line] = true
			}
		}
	}
	if checked == 0 {
		t.Error("no per-kernel declaration found in any review glue: the test checks nothing")
	}
}
