package patch

import (
	upkernels "github.com/kernelgen/kernelgen/internal/upstream"
)

const (
	clCpp   = "src/ggml-opencl/ggml-opencl.cpp"
	clCmake = "src/ggml-opencl/CMakeLists.txt"
	clLoad  = "static void load_cl_kernels(ggml_backend_opencl_context *backend_ctx) {"
)

// clLoadAnchor is where the kernels load: after gated_delta_net's.
var clLoadAnchor = []string{clLoad, "// gated_delta_net: one kernel per (S_V, KDA, tgpp) triple.", "// mul_mv_id_q4_0_f32_8x_flat"}

// openclStep adds ggml-opencl's kernels (internal/upstream: the gather and
// one .cl per family, built per variant with defines) to its kernel list,
// and splices the glue (templates/opencl) into ggml-opencl.cpp: the kernel
// handles in the context, their loading beside gated_delta_net's (embedded
// or from file; build_program_from_source takes the cl_context and device
// at the series pin, the backend context in newer trees), supports_op and
// the dispatch ahead of the plain kernels.
func openclStep() (*Step, error) {
	files, up, err := upstreamFiles("opencl", "src/ggml-opencl/kernels/", upkernels.OpenCL)
	if err != nil {
		return nil, err
	}
	return &Step{
		Backend: "opencl",
		Subject: "opencl : add fused gated delta net and conv-update kernels",
		Body: `Add OpenCL kernels for the four fused decode nodes: GATED_DELTA_NET with
the final state written in place (src[6]) and its ids variant reading
the prior state from cache[ids[s]] (src[7]), and SSM_CONV's conv-update
that writes the shifted taps back in place (src[3]) and its ids variant
(src[4]). Each pair is one kernel source, built once per variant with
IDS among its defines. The ids variants first copy the non-identity
source slots into a scratch (the unused state region of the GDN output,
a preallocated buffer for the conv), then compute; the queue is in
order, so the copy finishes first.

supports_op used to accept these nodes on types alone and the plain
kernels would then have run them without the in-place write. It now
accepts a fused node only when its kernel exists and says no to the
hybrid per-head state form (src[8]/src[9]) and bf16 state.

Reductions use the subgroup shuffles where the device has them and
local memory otherwise.
`,
		Files: files,
		Edits: []Edit{
			{Name: "kernel handles", File: clCpp, Place: After,
				Anchor: []string{"struct ggml_backend_opencl_context {", "cl_kernel kernel_gated_delta_net_f32[4][2][2] = {};"},
				Text:   up["upstream-kernel-members"]},
			{Name: "variant tables and supports function", File: clCpp, Place: Before,
				Anchor: []string{clLoad},
				Text:   up["upstream-declarations"] + "\n"},
			{Name: "kernel loading", File: clCpp, Place: Before,
				Anchor: clLoadAnchor, Text: up["upstream-load-kernels"] + "\n",
				OnlyIf: "static cl_program build_program_from_source(cl_context ctx, cl_device_id dev,"},
			{Name: "kernel loading (programs built from the backend context)", File: clCpp, Place: Before,
				Anchor: clLoadAnchor, Text: up["upstream-load-kernels-backend-ctx"] + "\n",
				OnlyIf: "static cl_program build_program_from_source(ggml_backend_opencl_context * backend_ctx,"},
			{Name: "supports_op", File: clCpp, Place: Before,
				Anchor: []string{"static bool ggml_opencl_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor * op) {", "switch (op->op) {"},
				Text:   up["upstream-supports-op"] + "\n"},
			{Name: "dispatch functions", File: clCpp, Place: Before,
				Anchor: []string{"static void ggml_cl_gated_delta_net(ggml_backend_t backend, ggml_tensor * dst) {"},
				Text:   up["upstream-functions"] + "\n"},
			{Name: "compute_forward", File: clCpp, Place: Before,
				Anchor: []string{"bool ggml_cl_compute_forward(ggml_backend_t backend, struct ggml_tensor * tensor) {", "switch (tensor->op) {"},
				Text:   up["upstream-compute-forward"] + "\n"},
			{Name: "kernel list", File: clCmake, Place: After,
				Anchor: []string{"set(GGML_OPENCL_KERNELS", "    gated_delta_net"},
				Text:   up["upstream-cmake-kernels"]},
		},
	}, nil
}
