package metal

import (
	"github.com/kernelgen/kernelgen/internal/integration"
)

// The files the Metal commit changes, and anchors more than one section uses.
const (
	metalLib    = "src/ggml-metal/" + libraryFile
	opsCpp      = "src/ggml-metal/ggml-metal-ops.cpp"
	device      = "src/ggml-metal/ggml-metal-device.m"
	backendCpp  = "src/ggml-metal/ggml-metal.cpp"
	common      = "src/ggml-metal/ggml-metal-common.cpp"
	impl        = "src/ggml-metal/ggml-metal-impl.h"
	deviceCpp   = "src/ggml-metal/ggml-metal-device.cpp"
	deviceH     = "src/ggml-metal/ggml-metal-device.h"
	encode      = "static int ggml_metal_op_encode_impl(ggml_metal_op_t ctx, int idx) {"
	rangesAdd   = "bool ggml_mem_ranges_add(ggml_mem_ranges_t mrs, const ggml_tensor * tensor) {"
	rangesCheck = "bool ggml_mem_ranges_check(ggml_mem_ranges_t mrs, const ggml_tensor * tensor) {"
	reorder     = "static std::vector<int> ggml_metal_graph_optimize_reorder("
)

// Manifest is Metal's integration with a ggml tree (internal/integration):
// the commit of the series that carries its kernels and glue. The kernels
// join ggml-metal.metal, which is compiled as one library (host emulation
// runs the same text, internal/upstream's tests); the memory ranges'
// written-src splices (the hazard fix) live beside the generated glue's
// sections.
var Manifest = &integration.Manifest{
	Backend: name, Budget: 600,
	Subject: "metal : add fused gated delta net and conv-update kernels",
	Body: `Add Metal kernels for the four fused decode nodes (GATED_DELTA_NET with
src[6] / src[6]+src[7], SSM_CONV with src[3] / src[3]+src[4]), with a
concurrency reset between the gather of the ids variants and their
compute. The conv ids variant's gather scratch is allocated after its
output (get_alloc_size); GDN uses the unused state region of its output.
Each kernel is a template over what sizes its arrays (S_v and its
tiling, d_conv) and takes the ids form, KDA and SiLU as function
constants, which the pipeline getters set.

The fused nodes write the conv cache (src[3]) and the recurrent state
(src[6]) in place. The memory ranges that decide concurrency and the
graph reorder now record that src as written, so a node reading the
cache after the update is neither encoded concurrently with it nor
moved before it.

supports_op answers for these nodes: it accepts them only where a kernel
exists, so a node outside the kernels' table is refused instead of being
run by the plain kernel, which would ignore the slot it writes.
`,
	Dir:     "src/ggml-metal/",
	Glue:    glueTarget,
	ForTree: manifestForTree,
	Kernels: UpstreamKernels,
	Sections: []integration.Section{
		{Name: "kernels", File: metalLib, Place: integration.After,
			// after the #if 1 ... #else ... #endif of kernel_gated_delta_net_impl, not inside its first branch
			Anchor: []string{`template [[host_name("kernel_gated_delta_net_f32_4")]] kernel kernel_gated_delta_net_t kernel_gated_delta_net_impl<float4, 4>;`, "#endif"},
			Text:   integration.Text{Kernel: libraryFile, BlankBefore: true}},
		// after the tree's highest index base, the pinned trees' here (manifestForTree)
		{Name: constantsSection, File: impl, Place: integration.After,
			Anchor: []string{pinnedBase.Define},
			Text:   integration.Text{Section: "upstream-function-constants"}},
		{Name: "kargs", File: impl, Place: integration.After,
			Anchor: []string{"} ggml_metal_kargs_gated_delta_net;"},
			Text:   integration.Text{Section: "upstream-kargs", BlankBefore: true}},
		{Name: "pipeline getters", File: deviceCpp, Place: integration.After,
			Anchor: []string{"ggml_metal_pipeline_with_params ggml_metal_library_get_pipeline_gated_delta_net(ggml_metal_library_t lib, const ggml_tensor * op) {", "return res;", "}"},
			Text:   integration.Text{Section: "upstream-pipelines", BlankBefore: true}},
		{Name: "pipeline getter declarations", File: deviceH, Place: integration.After,
			Anchor: []string{"struct ggml_metal_pipeline_with_params ggml_metal_library_get_pipeline_gated_delta_net "},
			Text:   integration.Text{Section: "upstream-pipeline-decls"}},
		{Name: "encoders include", File: opsCpp, Place: integration.After,
			Anchor: []string{`#include "ggml-metal-device.h"`},
			Text:   integration.Text{Literal: "#include \"fused-ops-supports.h\"\n"}},
		// beside the static helpers the encoders use, before the switch that calls them
		{Name: "encoders", File: opsCpp, Place: integration.Before,
			Anchor: []string{encode},
			Text:   integration.Text{Section: "upstream-encoders", BlankAfter: true}},
		{Name: "SSM_CONV case", File: opsCpp, Place: integration.Before,
			Anchor: []string{encode, "case GGML_OP_SSM_CONV:", "n_fuse = ggml_metal_op_ssm_conv(ctx, idx);"},
			Text:   integration.Text{Section: "upstream-encode-case"}},
		{Name: "GATED_DELTA_NET case", File: opsCpp, Place: integration.Before,
			Anchor: []string{encode, "case GGML_OP_GATED_DELTA_NET:", "n_fuse = ggml_metal_op_gated_delta_net(ctx, idx);"},
			Text:   integration.Text{Section: "upstream-encode-case"}},
		{Name: "supports include", File: device, Place: integration.After,
			Anchor: []string{"#include <stdatomic.h>"},
			Text:   integration.Text{Literal: "\n#include \"fused-ops-supports.h\"\n"}},
		{Name: "supports_op: the written buffer", File: backendCpp, Place: integration.After,
			Anchor: []string{"static bool ggml_backend_metal_device_supports_op(ggml_backend_dev_t dev, const ggml_tensor * op) {", "ggml_metal_device_t ctx_dev = (ggml_metal_device_t)dev->context;"},
			Text:   integration.Text{Section: "upstream-backend-supports-op", BlankBefore: true}},
		{Name: "supports_op", File: device, Place: integration.After,
			Anchor: []string{"bool ggml_metal_device_supports_op(ggml_metal_device_t dev, const struct ggml_tensor * op) {", "const bool has_bfloat"},
			Text:   integration.Text{Section: "upstream-supports-op", BlankBefore: true}},
		{Name: "ranges include", File: common, Place: integration.After,
			Anchor: []string{`#include "ggml-backend-impl.h"`},
			Text:   integration.Text{Literal: "#include \"fused-ops-supports.h\"\n"}},
		{Name: "written src add helper", File: common, Place: integration.Before,
			Anchor: []string{rangesAdd},
			Text:   integration.Text{Section: "metal-ranges-add-written-src", BlankAfter: true}},
		{Name: "written src in ranges add", File: common, Place: integration.After,
			Anchor: []string{rangesAdd},
			Text:   integration.Text{Section: "metal-ranges-add", BlankAfter: true}},
		{Name: "written src check helper", File: common, Place: integration.Before,
			Anchor: []string{rangesCheck},
			Text:   integration.Text{Section: "metal-ranges-check-written-src", BlankAfter: true}},
		{Name: "written src in ranges check", File: common, Place: integration.After,
			Anchor: []string{rangesCheck},
			Text:   integration.Text{Section: "metal-ranges-check", BlankAfter: true}},
		{Name: "written src in reorder add", File: common, Place: integration.After,
			Anchor: []string{reorder, "const auto & h_add = [](ggml_mem_ranges_t mrs, const node_info & node) {"},
			Text:   integration.Text{Section: "metal-reorder-add", BlankAfter: true}},
		{Name: "written src in reorder check", File: common, Place: integration.After,
			Anchor: []string{reorder, "const auto & h_check = [](ggml_mem_ranges_t mrs, const node_info & node) {"},
			Text:   integration.Text{Section: "metal-reorder-check", BlankAfter: true}},
		{Name: "alloc-size include", File: backendCpp, Place: integration.After,
			Anchor: []string{`#include "ggml-metal-ops.h"`},
			Text:   integration.Text{Literal: "#include \"fused-ops-supports.h\"\n"}},
		{Name: "alloc size with gather scratch", File: backendCpp, Place: integration.After,
			Anchor: []string{"static size_t ggml_backend_metal_buffer_type_get_alloc_size(ggml_backend_buffer_type_t buft, const ggml_tensor * tensor) {", "size_t res = ggml_nbytes(tensor);"},
			Text:   integration.Text{Section: "upstream-alloc-size", BlankBefore: true}},
	},
}
