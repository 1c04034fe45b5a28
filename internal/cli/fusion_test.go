package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/registry"
)

// TestFusionFormSeries: --form fusion writes the test-backend-ops cases,
// then two patches per backend that has a fusion step (every backend: the
// kernels, then the matchers and dispatch), nothing in ggml.h or ggml.c,
// and git am applies them; the default stays the ops form and an unknown form is an error.
func TestFusionFormSeries(t *testing.T) {
	root := gitTree(t)
	out := filepath.Join(t.TempDir(), "series")
	code, stdout, stderr := run(t, "patch", "--tree", root, "--backend", "all", "--form", "fusion", "--series", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	patches, _ := filepath.Glob(filepath.Join(out, "*.patch"))
	// the tests first, then each backend's kernels and its matchers and
	// dispatch (the backends in the series' order, which this does not fix;
	// the budgets are internal/patch's TestFusionSeriesPatchesFitTheirBudgets)
	byBackend := map[string][]string{}
	for _, p := range patches[1:] {
		for _, f := range registry.Fusions() {
			b := f.Backend
			if strings.Contains(filepath.Base(p), "-"+b+"-") {
				byBackend[b] = append(byBackend[b], filepath.Base(p))
			}
		}
	}
	ok := len(patches) == 1+2*len(registry.Fusions()) && strings.Contains(patches[0], "tests")
	for _, f := range registry.Fusions() {
		ok = ok && len(byBackend[f.Backend]) == 2 && strings.Contains(byBackend[f.Backend][0], "-add-")
	}
	if !ok {
		t.Fatalf("patches %v", patches)
	}
	for _, p := range patches {
		if pt, _ := os.ReadFile(p); regexp.MustCompile(`(?m)^diff --git a/(include/ggml\.h|src/ggml\.c) `).Match(pt) {
			t.Errorf("%s: the fusion form changes ggml.h or ggml.c", filepath.Base(p))
		}
	}
	sh(t, root, append([]string{"git", "am", "-q", "--whitespace=error"}, patches...)...)
	cu, _ := os.ReadFile(filepath.Join(root, "src", "ggml-cuda", "ggml-cuda.cu"))
	if !strings.Contains(string(cu), "ggml_cuda_fusion_find(cgraph,") || !strings.Contains(string(cu), "ggml_cuda_fusion_run(*cuda_ctx, gdn_fusion, node)") || !strings.Contains(string(cu), `#include "ggml-cuda/gdn-fusion.cuh"`) {
		t.Errorf("the applied patch lacks the call or the include:\n%s", cu)
	}
	vkcpp, _ := os.ReadFile(filepath.Join(root, "src", "ggml-vulkan", "ggml-vulkan.cpp"))
	for _, want := range []string{"ggml_vk_gdn_fusion_find(cgraph,", "ggml_vk_gdn_fusion_run(ctx, compute_ctx, node)", "ggml_vk_gdn_fusion_matches gdn_fusion;",
		"pipeline_gated_delta_net_inplace[", "ctx->gdn_fusion.fused.count(cgraph->nodes[i]) == 0"} {
		if !strings.Contains(string(vkcpp), want) {
			t.Errorf("the applied vulkan patch lacks %q", want)
		}
	}
	for file, wants := range map[string][]string{
		"ggml-metal-ops.cpp": {"if (ggml_metal_gdn_fusion_encode(ctx, node)) {", "this->gdn_fusion      = gdn_fusion;",
			"ggml_metal_get_buffer_id(m.window)", "ggml_metal_library_get_pipeline_gated_delta_net_inplace(ctx->lib, S_v, NW, CPW, m.KDA != 0, true)"},
		"ggml-metal-context.m": {"ggml_metal_gdn_fusion_match(ctx->gdn_fusion, ctx->dev, gf);", "            ctx->gdn_fusion,\n"},
		"ggml-metal.metal":     {"kernel void kernel_state_gather_f32(", "slot < args.K"},
	} {
		text, _ := os.ReadFile(filepath.Join(root, "src", "ggml-metal", file))
		for _, want := range wants {
			if !strings.Contains(string(text), want) {
				t.Errorf("the applied metal patches lack %q in %s", want, file)
			}
		}
	}
	sy, _ := os.ReadFile(filepath.Join(root, "src", "ggml-sycl", "ggml-sycl.cpp"))
	for _, want := range []string{`#include "ggml-sycl/gdn-fusion.hpp"`, "ggml_sycl_gdn_fusion_find(cgraph,", "ggml_sycl_gdn_fusion_run(*sycl_ctx, gdn_fusion, node)",
		`ggml_sycl_get_env("GGML_SYCL_ENABLE_FUSION", 1)`} {
		if !strings.Contains(string(sy), want) {
			t.Errorf("the applied sycl patch lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "src", "ggml-sycl", "gated_delta_net_inplace.hpp")); err != nil {
		t.Errorf("the applied sycl patch lacks its kernels: %v", err)
	}
	gen, _ := os.ReadFile(filepath.Join(root, "src", "ggml-vulkan", "vulkan-shaders", "vulkan-shaders-gen.cpp"))
	if !strings.Contains(string(gen), `"state_gather.comp"`) {
		t.Error("the applied vulkan patch does not build the gather shader")
	}
	clcpp, _ := os.ReadFile(filepath.Join(root, "src", "ggml-opencl", "ggml-opencl.cpp"))
	for _, want := range []string{"ggml_cl_gdn_fusion_find(cgraph,", "ggml_cl_gdn_fusion_run(backend_ctx, gdn_fusion, node)", "ggml_cl_gdn_fusion_matches gdn_fusion;",
		"backend_ctx->kernel_gated_delta_net_inplace[i][", `read_file("gated_delta_net_inplace.cl")`} {
		if !strings.Contains(string(clcpp), want) {
			t.Errorf("the applied opencl patches lack %q", want)
		}
	}
	tbo, _ := os.ReadFile(filepath.Join(root, "tests", "test-backend-ops.cpp"))
	if !strings.Contains(string(tbo), "struct test_gdn_decode_step ") || strings.Count(string(tbo), "for (ggml_tensor * t : expand_first)") != 2 {
		t.Errorf("the applied tests patch lacks the decode step or its expansion:\n%s", tbo)
	}

	for _, args := range [][]string{
		{"patch", "--tree", root, "--backend", "cuda", "--form", "graph", "--check"},
	} {
		if code, _, errOut := run(t, args...); code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
	if code, stdout, _ := run(t, "patch", "--tree", gitTree(t), "--backend", "cuda", "--check"); code != 0 || strings.Contains(stdout, "gdn-fusion") {
		t.Errorf("the default form is not the ops form: exit %d\n%s", code, stdout)
	}
}

// --series without --form: the fusion form on a tree that carries none of
// the fused ops, saying so; the ops form's next steps on a tree that
// carries them (LocalAI's).
func TestSeriesFormDefault(t *testing.T) {
	root := gitTree(t)
	out := filepath.Join(t.TempDir(), "series")
	code, stdout, stderr := run(t, "patch", "--tree", root, "--backend", "all", "--series", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	patches, _ := filepath.Glob(filepath.Join(out, "*.patch"))
	if len(patches) != 1+2*len(registry.Fusions()) || !strings.Contains(filepath.Base(patches[0]), "-tests-") || !strings.Contains(stderr, "writing the fusion form") {
		t.Errorf("a pristine tree: patches %v\n%s", patches, stderr)
	}

	ops := gitTree(t)
	if code, stdout, stderr := run(t, "patch", "--tree", ops, "--backend", "vulkan", "--form", "ops"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	sh(t, ops, "git", "add", "-A")
	sh(t, ops, "git", "commit", "-q", "-m", "the ops form")
	out = filepath.Join(t.TempDir(), "series")
	code, stdout, stderr = run(t, "patch", "--tree", ops, "--backend", "cuda", "--series", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	patches, _ = filepath.Glob(filepath.Join(out, "*.patch"))
	for _, p := range patches {
		if text, _ := os.ReadFile(p); strings.Contains(string(text), "gdn-fusion") || strings.Contains(stderr, "fusion form") {
			t.Errorf("a tree with the ops got the fusion form: %s\n%s", filepath.Base(p), stderr)
		}
	}
	if len(patches) == 0 || !strings.Contains(filepath.Base(patches[len(patches)-1]), "-cuda-add-fused-") {
		t.Errorf("a tree with the ops: patches %v", patches)
	}
}
