package patch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// withSeries is the ggml fixture with the series' builders and CPU op D
// (testdata/series over testdata/ggml).
func withSeries(t *testing.T) string {
	t.Helper()
	root := fixture(t, "")
	copyTree(t, "testdata/series", root, nil)
	commitAll(t, root)
	return root
}

func stepNames(t *testing.T, tr *Tree) []string {
	t.Helper()
	reports, err := Check(context.Background(), tr, plan(t))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range reports {
		names = append(names, r.Step.Backend)
	}
	return names
}

// series writes the fixture's series and returns the patch files.
func series(t *testing.T, root string) []string {
	t.Helper()
	names, err := Series(context.Background(), open(t, root), plan(t), filepath.Join(t.TempDir(), "series"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// On a pristine tree the series opens with the ops step, within its budget.
func TestOpsStepBudget(t *testing.T) {
	names := series(t, fixture(t, ""))
	if !strings.Contains(names[0], "ggml-add-in-place-gated-delta-net") {
		t.Fatalf("first patch %s, want the ops step", filepath.Base(names[0]))
	}
	data, err := os.ReadFile(names[0])
	if err != nil {
		t.Fatal(err)
	}
	// its budget is asserted with the backends' (budgets, from their manifests); this guards
	// against a step that lost its kernels or cases
	if n := insertions(string(data)); n < 500 {
		t.Errorf("ops step: %d insertions, want the whole step (more than 500)", n)
	}
}

// A tree with the series gets the cases, then the CPU op D fix, then the
// backends; applying twice changes nothing; the series equals Apply.
func TestTreeWithTheSeries(t *testing.T) {
	root := withSeries(t)
	if diff := cmp.Diff([]string{"common", "cpu", "metal", "sycl", "vulkan", "cuda", "opencl", "llama"}, stepNames(t, open(t, root))); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	names := series(t, root)
	if !strings.Contains(names[0], "tests-add-cases") || !strings.Contains(names[1], "ggml-cpu-read-the-prior-conv-taps") {
		t.Errorf("the failing cases come before the CPU fix: %s, %s", filepath.Base(names[0]), filepath.Base(names[1]))
	}
	amTree := filepath.Join(t.TempDir(), "am")
	run(t, root, "git", "clone", "-q", root, amTree)
	run(t, amTree, append([]string{"git", "am", "-q", "--whitespace=error"}, names...)...)

	if _, err := Apply(context.Background(), open(t, root), plan(t)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(snapshot(t, root), snapshot(t, amTree)); diff != "" {
		t.Errorf("git am result differs from Apply:\n%s", diff)
	}
	ops, _ := os.ReadFile(filepath.Join(root, "src", "ggml-cpu", "ops.cpp"))
	for _, gone := range []string{"Patch 0028: CPU reference", "ggml_compute_forward_ssm_conv_update_ids_f32("} {
		if strings.Contains(string(ops), gone) {
			t.Errorf("ops.cpp still holds %q", gone)
		}
	}
	for _, want := range []string{"ggml_barrier(params->threadpool);", "ggml_compute_forward_ssm_conv_update_inplace_ids(params, dst);"} {
		if !strings.Contains(string(ops), want) {
			t.Errorf("ops.cpp lacks %q", want)
		}
	}
	before := snapshot(t, root)
	o, err := Apply(context.Background(), open(t, root), plan(t))
	if err != nil || len(o.Written) != 0 {
		t.Errorf("second apply: wrote %v, err %v", o.Written, err)
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("second apply changed the tree:\n%s", diff)
	}
}

// A llama.cpp tree: cases at the root's tests/, the gate replaced; applying
// twice changes nothing and the series equals Apply. Without the series'
// gate the gate step is skipped and says why.
func TestLlamaCppLayout(t *testing.T) {
	root := fixture(t, "ggml/")
	names := series(t, root)
	amTree := filepath.Join(t.TempDir(), "am")
	run(t, root, "git", "clone", "-q", root, amTree)
	run(t, amTree, append([]string{"git", "am", "-q", "--whitespace=error"}, names...)...)
	if _, err := Apply(context.Background(), open(t, root), plan(t)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(snapshot(t, root), snapshot(t, amTree)); diff != "" {
		t.Errorf("git am result differs from Apply:\n%s", diff)
	}
	ctx, _ := os.ReadFile(filepath.Join(root, "src", "llama-context.cpp"))
	if strings.Contains(string(ctx), "fgdn_backend_ok") || strings.Contains(string(ctx), "RISKY-1") || !strings.Contains(string(ctx), "!llama_fused_decode_supported(backends, model.hparams, cparams.offload_kqv)") {
		t.Errorf("the backend-name list is not replaced by the probe:\n%s", ctx)
	}
	before := snapshot(t, root)
	if o, err := Apply(context.Background(), open(t, root), plan(t)); err != nil || len(o.Written) != 0 {
		t.Errorf("second apply: wrote %v, err %v", o.Written, err)
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("second apply changed the tree:\n%s", diff)
	}

	plain := fixture(t, "ggml/")
	if err := os.WriteFile(filepath.Join(plain, "src", "llama-context.cpp"), []byte("void llama_context::sched_reserve() {\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	commitAll(t, plain)
	reports, err := Check(context.Background(), open(t, plain), plan(t))
	if err != nil {
		t.Fatal(err)
	}
	gate := reports[len(reports)-1]
	if gate.Step.Backend != "llama" || len(gate.Skipped) != 2 || len(gate.Edits) != 0 || !strings.Contains(gate.Skipped[0].Why, `src/llama-context.cpp has no "fgdn_backend_ok"`) {
		t.Errorf("gate on a tree without it: %+v", gate)
	}
}

// refused applies the plan and wants a refusal saying each of want, with
// the tree left as it was.
func refused(t *testing.T, root string, want ...string) {
	t.Helper()
	before := snapshot(t, root)
	_, err := Apply(context.Background(), open(t, root), plan(t))
	var prob *Problem
	if !errors.As(err, &prob) {
		t.Fatalf("want a refusal, got %v", err)
	}
	for _, w := range append(want, "nothing was changed") {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("refusal does not say %q:\n%v", w, err)
		}
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("a refused patch changed the tree:\n%s", diff)
	}
}

func rewrite(t *testing.T, root, rel, old, new string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	src, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), old) {
		t.Fatalf("%s holds no %q", rel, old)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(src), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	commitAll(t, root)
}

func TestBuildersOfAnotherSignatureAreRefused(t *testing.T) {
	root := withSeries(t)
	rewrite(t, root, "include/ggml.h", "            struct ggml_tensor  * ids,\n            int                   rs_head,\n            bool                  fuse_silu);",
		"            struct ggml_tensor  * ids,\n            bool                  fuse_silu);")
	refused(t, root, "include/ggml.h: ggml_ssm_conv_update_inplace_ids takes (struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, bool)")
}

func TestPartOfTheBuildersIsRefused(t *testing.T) {
	root := withSeries(t)
	rewrite(t, root, "include/ggml.h", "ggml_gated_delta_net_inplace_ids(", "ggml_gated_delta_net_other(")
	refused(t, root, "include/ggml.h declares ggml_gated_delta_net_inplace, ggml_ssm_conv_update_inplace, ggml_ssm_conv_update_inplace_ids but not the rest")
}

// A pristine tree that took an older kernelgen series' cases (which call
// builders it lacks) is refused rather than given a second copy.
func TestOlderKernelgenCasesAreRefused(t *testing.T) {
	root := fixture(t, "")
	rewrite(t, root, "tests/test-backend-ops.cpp", "// GGML_OP_GATED_DELTA_NET\n",
		"struct test_gated_delta_net_inplace : public test_case {\n};\n\n// GGML_OP_GATED_DELTA_NET\n")
	refused(t, root, `tests/test-backend-ops.cpp: test cases for the in-place fused nodes: the file already holds "struct test_gated_delta_net_inplace "`)
}

// The CUDA step guards upstream's own GDN cache fusion where the tree has it.
func TestCudaCacheFusionGuard(t *testing.T) {
	root := fixture(t, "")
	rewrite(t, root, "src/ggml-cuda/ggml-cuda.cu", "static bool ggml_cuda_compute_forward(",
		"static int ggml_cuda_try_gdn_cache_fusion(\n        const ggml_cgraph * cgraph, int node_idx) {\n    const ggml_tensor * gdn = cgraph->nodes[node_idx];\n    return 0;\n}\n\nstatic bool ggml_cuda_compute_forward(")
	if _, err := Apply(context.Background(), open(t, root), plan(t)); err != nil {
		t.Fatal(err)
	}
	cu, _ := os.ReadFile(filepath.Join(root, "src", "ggml-cuda", "ggml-cuda.cu"))
	if !strings.Contains(string(cu), "const ggml_tensor * gdn = cgraph->nodes[node_idx];\n"+editOf(t, stepOf(t, "cuda"), "upstream GDN cache fusion leaves the in-place forms alone").Text) {
		t.Errorf("no guard in ggml_cuda_try_gdn_cache_fusion:\n%s", cu)
	}
}

// The OpenCL step loads its kernels in the spelling of the tree's
// build_program_from_source: the cl_context and device at the series pin
// (the fixture), the backend context in newer trees; a tree with neither is
// refused.
func TestOpenCLLoadingFollowsBuildProgramSignature(t *testing.T) {
	const (
		cpp        = "src/ggml-opencl/ggml-opencl.cpp"
		fromDevice = "static cl_program build_program_from_source(cl_context ctx, cl_device_id dev, const char* program_buffer,"
		fromCtx    = "static cl_program build_program_from_source(ggml_backend_opencl_context * backend_ctx, const char* program_buffer,"
	)
	step := stepOf(t, "opencl")
	device := editOf(t, step, "kernel loading").Text
	backendCtx := editOf(t, step, "kernel loading (programs built from the backend context)").Text
	if device == backendCtx || !strings.Contains(device, "backend_ctx->context") || strings.Contains(backendCtx, "backend_ctx->context") {
		t.Fatalf("the two loading blocks do not differ in how they build programs:\n%s\n----\n%s", device, backendCtx)
	}
	loaded := func(root string) string {
		t.Helper()
		if _, err := Apply(context.Background(), open(t, root), plan(t)); err != nil {
			t.Fatal(err)
		}
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(cpp)))
		if err != nil {
			t.Fatal(err)
		}
		return string(src)
	}
	if src := loaded(fixture(t, "")); !strings.Contains(src, device) || strings.Contains(src, backendCtx) {
		t.Errorf("the series pin's tree does not get the cl_context loading block alone")
	}
	root := fixture(t, "")
	rewrite(t, root, cpp, fromDevice, fromCtx)
	if src := loaded(root); !strings.Contains(src, backendCtx) || strings.Contains(src, device) {
		t.Errorf("a tree building from the backend context does not get its loading block alone")
	}
	root = fixture(t, "")
	rewrite(t, root, cpp, fromDevice, "static cl_program build_program(cl_context ctx, cl_device_id dev, const char* program_buffer,")
	refused(t, root, cpp+`: opencl manifest, section "kernel loading": anchor "static cl_program build_program_from_source(cl_context ctx, cl_device_id dev," not found`)
}

// Replace edits: the lines from the anchor through Until give way to the
// text, and a file holding the text counts as applied.
func TestReplaceEdit(t *testing.T) {
	e := Edit{Name: "x", File: "f", Place: Replace, Anchor: []string{"int f() {", "old();"}, Until: "\n", Text: "    new();\n"}
	src := "int f() {\n    old();\n    keep();\n}\n"
	l := locate(e, src)
	if l.State != Pending {
		t.Fatalf("%v %s", l.State, l.Why)
	}
	got := insertAll(src, []Located{l})
	if want := "int f() {\n    new();\n    keep();\n}\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if l := locate(e, got); l.State != Applied {
		t.Errorf("after the replace: %v %s", l.State, l.Why)
	}
}
