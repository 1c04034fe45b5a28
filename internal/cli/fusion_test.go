package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestFusionFormSeries: --form fusion writes the test-backend-ops cases,
// then one patch per backend that has a fusion step (cuda, vulkan), nothing
// in ggml.h or ggml.c, within the backend's budget, and git am applies
// them; the default stays the ops form and an unknown form or a backend
// without a fusion step is an error.
func TestFusionFormSeries(t *testing.T) {
	root := gitTree(t)
	out := filepath.Join(t.TempDir(), "series")
	code, stdout, stderr := run(t, "patch", "--tree", root, "--backend", "all", "--form", "fusion", "--series", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	patches, _ := filepath.Glob(filepath.Join(out, "*.patch"))
	// the tests first, then one per backend (in the series' order, which this does not fix)
	byBackend := map[string]string{}
	for _, p := range patches[1:] {
		for _, b := range []string{"cuda", "vulkan"} {
			if strings.Contains(filepath.Base(p), "-"+b+"-") {
				byBackend[b] = p
			}
		}
	}
	if len(patches) != 3 || !strings.Contains(patches[0], "tests") || len(byBackend) != 2 {
		t.Fatalf("patches %v", patches)
	}
	text, err := os.ReadFile(byBackend["cuda"])
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range patches {
		if pt, _ := os.ReadFile(p); regexp.MustCompile(`(?m)^diff --git a/(include/ggml\.h|src/ggml\.c) `).Match(pt) {
			t.Errorf("%s: the fusion form changes ggml.h or ggml.c", filepath.Base(p))
		}
	}
	// the budget holds the matchers and the dispatch; the kernels are the
	// ops form's text, counted apart (docs/fusion.md, the series)
	m := regexp.MustCompile(`(\d+) insertions?\(\+\)`).FindSubmatch(text)
	kernels := 0
	for _, f := range []string{"state_gather.cuh", "gated_delta_net_inplace.cuh", "ssm_conv_update_inplace.cuh"} {
		k := regexp.MustCompile(`src/ggml-cuda/` + regexp.QuoteMeta(f) + ` +\| +(\d+) `).FindSubmatch(text)
		if k == nil {
			t.Fatalf("the patch lacks the kernel %s", f)
		}
		n, _ := strconv.Atoi(string(k[1]))
		kernels += n
	}
	if n, _ := strconv.Atoi(string(m[1])); m == nil || n-kernels > 500 {
		t.Errorf("cuda's fusion patch inserts %s lines, %d past its kernels; the budget is 500", m[1], n-kernels)
	}
	vk, err := os.ReadFile(byBackend["vulkan"])
	if err != nil {
		t.Fatal(err)
	}
	shaders := 0
	for _, k := range regexp.MustCompile(`(?m)^ \S+\.comp +\| +(\d+) `).FindAllSubmatch(vk, -1) {
		n, _ := strconv.Atoi(string(k[1]))
		shaders += n
	}
	if mv := regexp.MustCompile(`(\d+) insertions?\(\+\)`).FindSubmatch(vk); mv == nil || shaders == 0 {
		t.Error("the vulkan patch has no diffstat or no shaders")
	} else if n, _ := strconv.Atoi(string(mv[1])); n-shaders > 800 {
		t.Errorf("vulkan's fusion patch inserts %d lines, %d past its shaders; the budget is 800", n, n-shaders)
	}
	sh(t, root, append([]string{"git", "am", "-q"}, patches...)...)
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
	gen, _ := os.ReadFile(filepath.Join(root, "src", "ggml-vulkan", "vulkan-shaders", "vulkan-shaders-gen.cpp"))
	if !strings.Contains(string(gen), `"state_gather.comp"`) {
		t.Error("the applied vulkan patch does not build the gather shader")
	}
	tbo, _ := os.ReadFile(filepath.Join(root, "tests", "test-backend-ops.cpp"))
	if !strings.Contains(string(tbo), "struct test_gdn_decode_step ") || strings.Count(string(tbo), "for (ggml_tensor * t : expand_first)") != 2 {
		t.Errorf("the applied tests patch lacks the decode step or its expansion:\n%s", tbo)
	}

	for _, args := range [][]string{
		{"patch", "--tree", root, "--backend", "metal", "--form", "fusion", "--check"},
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
