package opencl

import (
	"github.com/kernelgen/kernelgen/internal/integration"
)

// The files the OpenCL commit changes, and the functions its sections
// splice into.
const (
	clCpp   = "src/ggml-opencl/ggml-opencl.cpp"
	clCmake = "src/ggml-opencl/CMakeLists.txt"
	clLoad  = "static void load_cl_kernels(ggml_backend_opencl_context *backend_ctx) {"
	// build_program_from_source's two signatures: the series pin's takes
	// the cl_context and device, newer trees (d99724f2) the backend context.
	buildFromDevice  = "static cl_program build_program_from_source(cl_context ctx, cl_device_id dev,"
	buildFromContext = "static cl_program build_program_from_source(ggml_backend_opencl_context * backend_ctx,"
)

// loadAnchor is where the kernels load, after gated_delta_net's, in a tree
// whose build_program_from_source has signature sig (defined above
// load_cl_kernels): a tree with neither signature is refused, not given a
// loading block that does not compile.
func loadAnchor(sig string) []string {
	return []string{sig, clLoad, "// gated_delta_net: one kernel per (S_V, KDA, tgpp) triple.", "// mul_mv_id_q4_0_f32_8x_flat"}
}

// Manifest is OpenCL's integration with a ggml tree (internal/integration):
// the commit of the series that carries its kernels and glue. It adds the
// upstream kernels (UpstreamKernels: the gather and one .cl per family,
// built per variant with defines) to ggml-opencl's kernel list and splices
// the glue (templates/opencl) into ggml-opencl.cpp: the kernel handles in
// the context, their loading beside gated_delta_net's (embedded or from
// file), supports_op and the dispatch ahead of the plain kernels.
//
// Budget: like Vulkan's, the commit carries whole kernel sources (three
// .cl files, about 330 lines) beside a glue that binds each scalar with its
// own clSetKernelArg, as ggml-opencl does everywhere (about 60 lines of
// it); 693 lines at its first series, and 750 leaves no room for a second
// copy of either.
var Manifest = &integration.Manifest{
	Backend: name, Budget: 750,
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
accepts a fused node only when its kernel exists.

Reductions use the subgroup shuffles where the device has them and
local memory otherwise.
`,
	Dir:     "src/ggml-opencl/kernels/",
	Glue:    glueTarget,
	Kernels: UpstreamKernels,
	Sections: []integration.Section{
		{Name: "kernel handles", File: clCpp, Place: integration.After,
			Anchor: []string{"struct ggml_backend_opencl_context {", "cl_kernel kernel_gated_delta_net_f32[4][2][2] = {};"},
			Text:   integration.Text{Section: "upstream-kernel-members"}},
		{Name: "variant tables and supports function", File: clCpp, Place: integration.Before,
			Anchor: []string{clLoad},
			Text:   integration.Text{Section: "upstream-declarations", BlankAfter: true}},
		{Name: "kernel loading", File: clCpp, Place: integration.Before,
			Anchor: loadAnchor(buildFromDevice),
			Text:   integration.Text{Section: "upstream-load-kernels", BlankAfter: true}},
		{Name: "supports_op", File: clCpp, Place: integration.Before,
			Anchor: []string{"static bool ggml_opencl_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor * op) {", "switch (op->op) {"},
			Text:   integration.Text{Section: "upstream-supports-op", BlankAfter: true}},
		{Name: "dispatch functions", File: clCpp, Place: integration.Before,
			Anchor: []string{"static void ggml_cl_gated_delta_net(ggml_backend_t backend, ggml_tensor * dst) {"},
			Text:   integration.Text{Section: "upstream-functions", BlankAfter: true}},
		{Name: "compute_forward", File: clCpp, Place: integration.Before,
			Anchor: []string{"bool ggml_cl_compute_forward(ggml_backend_t backend, struct ggml_tensor * tensor) {", "switch (tensor->op) {"},
			Text:   integration.Text{Section: "upstream-compute-forward", BlankAfter: true}},
		{Name: "kernel list", File: clCmake, Place: integration.After,
			Anchor: []string{"set(GGML_OPENCL_KERNELS", "    gated_delta_net"},
			Text:   integration.Text{Section: "upstream-cmake-kernels"}},
	},
	Revisions: []integration.Revision{
		// Newer trees build a program from the backend context (it retries
		// and names a failing build): the loading block calls it so.
		{Name: "ggml whose build_program_from_source takes the backend context (d99724f2 has it, d9b30952 not)",
			Probe:    integration.Probe{File: clCpp, Text: buildFromContext},
			Replaces: []string{"kernel loading"},
			Sections: []integration.Section{
				{Name: "kernel loading (programs built from the backend context)", File: clCpp, Place: integration.Before,
					Anchor: loadAnchor(buildFromContext),
					Text:   integration.Text{Section: "upstream-load-kernels-backend-ctx", BlankAfter: true}},
			}},
	},
}
