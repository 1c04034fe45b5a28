package patch

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/registry"
)

// The fusion form on a llama.cpp tree: the backends' patches land under
// ggml/src, the test cases in the root's tests/, and git am applies the
// whole series as it does on a ggml tree; ggml.h and ggml.c stay as they are.
func TestFusionSeriesOnALlamaCppTree(t *testing.T) {
	root := fixture(t, "ggml/")
	steps, err := FusionPlan(registry.Fusions(), []string{"all"})
	if err != nil {
		t.Fatal(err)
	}
	names, err := Series(context.Background(), open(t, root), steps, filepath.Join(t.TempDir(), "series"))
	if err != nil {
		t.Fatal(err)
	}
	touched := map[string]bool{}
	diff := regexp.MustCompile(`(?m)^diff --git a/(\S+) `)
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range diff.FindAllStringSubmatch(string(data), -1) {
			touched[m[1]] = true
		}
	}
	for _, want := range []string{"tests/test-backend-ops.cpp", "ggml/src/ggml-cuda/ggml-cuda.cu", "ggml/src/ggml-vulkan/ggml-vulkan.cpp",
		"ggml/src/ggml-metal/ggml-metal-ops.cpp", "ggml/src/ggml-metal/ggml-metal-context.m", "ggml/src/ggml-metal/ggml-metal.metal",
		"ggml/src/ggml-opencl/ggml-opencl.cpp", "ggml/src/ggml-sycl/ggml-sycl.cpp"} {
		if !touched[want] {
			t.Errorf("the series does not change %s", want)
		}
	}
	for p := range touched {
		if p != "tests/test-backend-ops.cpp" && !strings.HasPrefix(p, "ggml/src/") {
			t.Errorf("the series changes %s, outside ggml/src and the cases", p)
		}
	}
	amTree := filepath.Join(t.TempDir(), "am")
	run(t, root, "git", "clone", "-q", root, amTree)
	run(t, amTree, append([]string{"git", "am", "-q", "--whitespace=error"}, names...)...)
}
