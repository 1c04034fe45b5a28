package vulkan

import (
	"github.com/kernelgen/kernelgen/internal/integration"
)

// The files the Vulkan commit changes, and the function most sections
// splice into.
const (
	vkCpp      = "src/ggml-vulkan/ggml-vulkan.cpp"
	vkGen      = "src/ggml-vulkan/vulkan-shaders/vulkan-shaders-gen.cpp"
	buildGraph = "static bool ggml_vk_build_graph(ggml_backend_vk_context * ctx, ggml_cgraph * cgraph,"
)

// Manifest is Vulkan's integration with a ggml tree (internal/integration):
// the commit of the series that carries its kernels and glue. It adds the
// upstream shaders (UpstreamKernels: one module per family and the gather,
// variants as specialization constants) and splices the compact glue into
// ggml-vulkan.cpp and vulkan-shaders-gen.cpp (docs/ggml.md#vulkan). The
// batched one-dispatch op B of generated/vulkan stays kernelgen's own: it
// is a speed feature, and the gather then the compute is its fallback. So
// does the chained schedule of op B (ops/chain.go): its shaders alone,
// rendered as UpstreamKernels renders, would take this patch from 569 lines
// to about 1000, past its Budget (measured when the plan was its own
// kernel: plan 186 lines, chain gather 43, chained GDN 197; the plan is now
// the chain gather's).
var Manifest = &integration.Manifest{
	Backend: name, Budget: 800,
	Subject: "vulkan : add fused gated delta net and conv-update kernels",
	Body: `Add Vulkan kernels for the four fused decode nodes: GATED_DELTA_NET with
the final state written in place (src[6]) and its ids variant reading
the prior state from cache[ids[s]] (src[7]), and SSM_CONV's conv-update
that writes the shifted taps back in place (src[3]) and its ids variant
(src[4]). Each pair is one shader, the ids form picked by a
specialization constant. The ids variants first copy the non-identity
source slots into a scratch (the unused state region of the GDN output;
bytes after the conv output, added by get_alloc_size), then a barrier,
then compute. With one sequence no source can be another sequence's
destination, so the copy and its barrier are left out.

supports_op accepts a fused node only when its kernel exists, so a node
outside the kernels' table is refused instead of running the plain
kernel on it, and only when each source fits one binding
(maxStorageBufferRange): the shaders index with 32-bit offsets. The
in-place targets are recorded as written for the barrier tracking in
ggml_vk_build_graph and in ggml_vk_graph_optimize, which keeps a node
that touches the cache on its side of the write, and the SSM_CONV+SILU
graph fusion leaves conv-update nodes alone (they apply SiLU
themselves).

Shaders keep the non-fused path's arithmetic (subgroup shuffles, GLSL
exp); the GDN pipelines ask for the device's subgroup size, as the
plain GDN pipelines do, and for full subgroups where a column's lanes
fill one (S_v 32 and up on subgroups of 32).
`,
	Dir:     "src/ggml-vulkan/vulkan-shaders/",
	Glue:    glueTarget,
	Kernels: UpstreamKernels,
	Sections: []integration.Section{
		{Name: "push-constant structs", File: vkCpp, Place: integration.After,
			Anchor: []string{"struct vk_op_ssm_conv_push_constants {", "};"},
			Text:   integration.Text{Section: "upstream-push-constants", BlankBefore: true}},
		{Name: "pipeline members", File: vkCpp, Place: integration.After,
			Anchor: []string{"struct vk_device_struct {", "vk_pipeline pipeline_ssm_conv_bias_silu_f32;"},
			Text:   integration.Text{Section: "upstream-pipeline-members"}},
		{Name: "pipeline creation", File: vkCpp, Place: integration.After,
			Anchor: []string{"static void ggml_vk_load_shaders(vk_device& device, vk_pipeline requested) {",
				"ggml_vk_create_pipeline(device, device->pipeline_ssm_conv_bias_silu_f32,"},
			Text: integration.Text{Section: "upstream-create-pipelines"}},
		{Name: "supports and dispatch functions", File: vkCpp, Place: integration.Before,
			Anchor: []string{"static void ggml_vk_ssm_conv(ggml_backend_vk_context * ctx, vk_context& subctx, const struct ggml_cgraph * cgraph, int node_idx) {"},
			Text:   integration.Text{Section: "upstream-functions", BlankAfter: true}},
		{Name: "sync check of the in-place target", File: vkCpp, Place: integration.Before,
			Anchor: []string{buildGraph, "// For all fused ops, check if the destination node or any of the source", "for (uint32_t j = 0; j < GGML_MAX_SRC; ++j) {"},
			Text:   integration.Text{Section: "vk-sync-check"}},
		{Name: "in-place target recorded as written", File: vkCpp, Place: integration.Before,
			Anchor: []string{buildGraph, "// Add all fused nodes to the unsynchronized lists.", "for (uint32_t j = 0; j < GGML_MAX_SRC; ++j) {"},
			Text:   integration.Text{Section: "vk-sync-record"}},
		{Name: "in-place target kept in order by graph_optimize", File: vkCpp, Place: integration.Before,
			Anchor: []string{"static void ggml_vk_graph_optimize(", "auto const &is_src_of = [](const ggml_tensor *dst, const ggml_tensor *src) -> bool {", "// implicit dependency if they view the same tensor"},
			Text:   integration.Text{Section: "upstream-graph-optimize"}},
		{Name: "GATED_DELTA_NET case", File: vkCpp, Place: integration.Before,
			Anchor: []string{buildGraph, "case GGML_OP_GATED_DELTA_NET:", "ggml_vk_gated_delta_net(ctx, compute_ctx, node);"},
			Text:   integration.Text{Section: "vk-build-graph-case"}},
		{Name: "SSM_CONV case", File: vkCpp, Place: integration.Before,
			Anchor: []string{buildGraph, "case GGML_OP_SSM_CONV:", "ggml_vk_ssm_conv(ctx, compute_ctx, cgraph, node_idx);"},
			Text:   integration.Text{Section: "vk-build-graph-case"}},
		{Name: "alloc size with gather scratch", File: vkCpp, Place: integration.After,
			Anchor: []string{"static size_t ggml_backend_vk_buffer_type_get_alloc_size(ggml_backend_buffer_type_t buft, const ggml_tensor * tensor) {"},
			Text:   integration.Text{Section: "vk-alloc-size"}},
		{Name: "SSM_CONV+SILU fusion skips conv-update", File: vkCpp, Place: integration.Before,
			Anchor: []string{"static bool ggml_vk_can_fuse_ssm_conv(", "if (conv->op != GGML_OP_SSM_CONV) {", "const ggml_tensor * silu = nullptr;"},
			Text:   integration.Text{Section: "vk-can-fuse", BlankAfter: true}},
		{Name: "supports_op", File: vkCpp, Place: integration.Before,
			Anchor: []string{"static bool ggml_backend_vk_device_supports_op(ggml_backend_dev_t dev, const ggml_tensor * op) {", "switch (op->op) {"},
			Text:   integration.Text{Section: "vk-supports-op", BlankAfter: true}},
		{Name: "shader-gen entries", File: vkGen, Place: integration.After,
			Anchor: []string{"void process_shaders() {", `string_to_spv("ssm_conv_f32", "ssm_conv.comp",`},
			Text:   integration.Text{Section: "upstream-shader-gen", BlankBefore: true}},
	},
}
