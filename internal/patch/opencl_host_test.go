package patch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/registry"
)

const openCLCpp = "src/ggml-opencl/ggml-opencl.cpp"

// openCLFusionText is testdata/opencl-host/fusion.cpp with the first parts
// of the OpenCL fusion steps applied (the stand-in is the series pin's:
// build_program_from_source takes the cl_context, no <unordered_set>).
func openCLFusionText(t *testing.T, parts int) string {
	return fusionStandIn(t, "opencl", "opencl-host", openCLCpp, parts)
}

func compileOpenCLFusion(t *testing.T, text string) (string, bool) {
	return compileFusionStandIn(t, "ggml-opencl.cpp", text)
}

// The fusion form's OpenCL steps, placed in a stand-in of ggml-opencl.cpp
// (its anchors and the calls the steps make, with ggml's and OpenCL's
// signatures), compile: the kernel handles and their loading, the
// matchers, the enqueue functions over the loaded kernels, and the calls
// in graph_compute.
func TestOpenCLFusionStepCompiles(t *testing.T) {
	if out, ok := compileOpenCLFusion(t, openCLFusionText(t, 2)); !ok {
		t.Fatalf("the fusion step does not compile:\n%s", out)
	}
}

// Its first patch, the kernels and their programs, builds on its own.
func TestOpenCLFusionKernelsCompileAlone(t *testing.T) {
	if out, ok := compileOpenCLFusion(t, openCLFusionText(t, 1)); !ok {
		t.Fatalf("the kernels' step does not compile on its own:\n%s", out)
	}
}

// The fusion form's OpenCL steps follow the tree's revision as the ops
// form's does: the kernels load through the tree's build_program_from_source
// (the cl_context and device at the series pin, the backend context in
// newer trees), and <unordered_set> is included once, where the tree does
// not include it already (d99724f2 does).
func TestOpenCLFusionFollowsTheTreesRevision(t *testing.T) {
	const (
		fromDevice = "static cl_program build_program_from_source(cl_context ctx, cl_device_id dev, const char* program_buffer,"
		fromCtx    = "static cl_program build_program_from_source(ggml_backend_opencl_context * backend_ctx, const char* program_buffer,"
		byDevice   = "build_program_from_source(backend_ctx->context, backend_ctx->device, kernel_src.c_str()"
		byCtx      = "build_program_from_source(backend_ctx, kernel_src.c_str()"
		unordered  = "#include <unordered_set>\n"
	)
	steps, err := FusionPlan(registry.Fusions(), []string{"opencl"})
	if err != nil {
		t.Fatal(err)
	}
	applied := func(root string) string {
		t.Helper()
		if _, err := Apply(context.Background(), open(t, root), steps); err != nil {
			t.Fatal(err)
		}
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(openCLCpp)))
		if err != nil {
			t.Fatal(err)
		}
		return string(src)
	}
	src := applied(fixture(t, ""))
	if strings.Count(src, byDevice) != 3 || strings.Contains(src, byCtx) || strings.Count(src, unordered) != 1 {
		t.Errorf("the series pin's tree: %d loads through the cl_context (want 3), %d through the backend context (want 0), %d <unordered_set> (want 1)",
			strings.Count(src, byDevice), strings.Count(src, byCtx), strings.Count(src, unordered))
	}
	root := fixture(t, "")
	rewrite(t, root, openCLCpp, fromDevice, fromCtx)
	rewrite(t, root, openCLCpp, "#include <regex>\n", "#include <regex>\n"+unordered)
	src = applied(root)
	if strings.Count(src, byCtx) != 3 || strings.Contains(src, byDevice) || strings.Count(src, unordered) != 1 {
		t.Errorf("a newer tree: %d loads through the backend context (want 3), %d through the cl_context (want 0), %d <unordered_set> (want 1)",
			strings.Count(src, byCtx), strings.Count(src, byDevice), strings.Count(src, unordered))
	}
}
