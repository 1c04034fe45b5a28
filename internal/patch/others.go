package patch

import (
	"sort"
	"strings"

	upkernels "github.com/kernelgen/kernelgen/internal/upstream"
	"github.com/kernelgen/kernelgen/templates"
)

func syclStep() (*Step, error) {
	files, t, err := upstreamFiles("sycl", "src/ggml-sycl/", upkernels.SYCL)
	if err != nil {
		return nil, err
	}
	const cpp = "src/ggml-sycl/ggml-sycl.cpp"
	return &Step{
		Backend: "sycl",
		Subject: "sycl : add fused gated delta net and conv-update kernels",
		Body: `Add SYCL kernels for the four fused decode nodes (GATED_DELTA_NET with
src[6] / src[6]+src[7], SSM_CONV with src[3] / src[3]+src[4]). The ids
variants copy the non-identity source slots into a pool scratch first;
work is in order on the device queue, so the copy finishes before the
compute starts.

supports_op answers for these nodes: it accepts them only where a kernel
exists and says no to the hybrid per-head state (src[8]/src[9]) and to
bf16 state, which the plain GATED_DELTA_NET path would misread as f32.
The kernels keep the non-fused path's arithmetic (sub-group XOR
butterfly, sycl::native::exp).
`,
		Files: files,
		Edits: []Edit{
			{Name: "include", File: cpp, Place: After,
				Anchor: []string{`#include "ggml-sycl/gated_delta_net.hpp"`},
				Text:   "#include \"ggml-sycl/fused-ops.hpp\"\n"},
			{Name: "compute_forward", File: cpp, Place: Before,
				Anchor: []string{"static bool ggml_sycl_compute_forward(ggml_backend_sycl_context & ctx, struct ggml_tensor * dst) try {", "switch (dst->op) {"},
				Text:   t["upstream-compute-forward"] + "\n"},
			{Name: "supports_op", File: cpp, Place: Before,
				Anchor: []string{"static bool do_ggml_backend_sycl_device_supports_op(ggml_backend_dev_t dev, const ggml_tensor * op) {", "switch (op->op) {"},
				Text:   t["upstream-supports-op"] + "\n"},
		},
	}, nil
}

// upstreamFiles are a backend's new files, its kernels (kernels, nil where
// they join an existing source) and the glue its sources include, all under
// dir, and the glue's sections for those sources.
func upstreamFiles(backend, dir string, kernels func() ([]upkernels.File, error)) ([]NewFile, map[string]string, error) {
	var ks []upkernels.File
	if kernels != nil {
		var err error
		if ks, err = kernels(); err != nil {
			return nil, nil, err
		}
	}
	var inGlue [][]byte
	for _, f := range ks {
		if f.InGlue {
			inGlue = append(inGlue, f.Data)
		}
	}
	g, err := glueOf(backend)
	if err != nil {
		return nil, nil, err
	}
	glueFiles, t, err := templates.UpstreamGlue(g, inGlue...)
	if err != nil {
		return nil, nil, err
	}
	var files []NewFile
	for _, f := range glueFiles {
		files = append(files, NewFile{Path: dir + f.Name, Data: upstreamText(f.Data)})
	}
	for _, f := range ks {
		if !f.InGlue {
			files = append(files, NewFile{Path: dir + f.Name, Data: upstreamText(f.Data)})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	for k, v := range t {
		t[k] = stripDocRefs(strings.TrimRight(v, "\n") + "\n")
	}
	return files, t, nil
}

func cudaStep() (*Step, error) {
	files, t, err := upstreamFiles("cuda", "src/ggml-cuda/", upkernels.CUDA)
	if err != nil {
		return nil, err
	}
	const cu = "src/ggml-cuda/ggml-cuda.cu"
	return &Step{
		Backend: "cuda",
		Subject: "cuda : use generated kernels for fused gated delta net and conv-update",
		Body: `Route the four fused decode nodes to kernels generated from the same
description as the Metal, SYCL and Vulkan ones. Their results equal the
hand-written kernels bit for bit (same fma order, same warp butterfly,
same __expf); the ids variants gather only the non-identity slots, and
the conv-update ids kernel is faster at every batch size measured.

The forms the generated kernels do not cover (hybrid per-head state,
bf16 state) keep the existing kernels and checks.
`,
		Files: files,
		Edits: []Edit{
			{Name: "include", File: cu, Place: After,
				Anchor: []string{`#include "ggml-cuda/gated_delta_net.cuh"`},
				Text:   "#include \"ggml-cuda/fused-ops.cuh\"\n"},
			{Name: "compute_forward", File: cu, Place: Before,
				Anchor: []string{"static bool ggml_cuda_compute_forward(ggml_backend_cuda_context & ctx, struct ggml_tensor * dst) {", "switch (dst->op) {"},
				Text:   t["upstream-compute-forward"] + "\n"},
			{Name: "supports_op", File: cu, Place: Before,
				Anchor: []string{"static bool ggml_backend_cuda_device_supports_op(ggml_backend_dev_t dev, const ggml_tensor * op) {", "switch (op->op) {"},
				Text:   t["upstream-supports-op"] + "\n"},
			cudaCacheFusionGuard,
		},
	}, nil
}

func metalStep() (*Step, error) {
	// The kernels join ggml-metal.metal, which is compiled as one library
	// (host emulation runs the same text, internal/upstream's tests).
	lib, err := upkernels.Metal()
	if err != nil {
		return nil, err
	}
	kernels := "\n" + string(upstreamText(lib))
	files, t, err := upstreamFiles("metal", "src/ggml-metal/", nil)
	if err != nil {
		return nil, err
	}
	// the memory ranges' written-src splices (the hazard fix) live beside
	// the generated glue's sections
	ranges, err := sections("metal", "metal-ranges-add-written-src", "metal-ranges-check-written-src",
		"metal-ranges-add", "metal-ranges-check", "metal-reorder-add", "metal-reorder-check")
	if err != nil {
		return nil, err
	}
	const (
		ops     = "src/ggml-metal/ggml-metal-ops.cpp"
		device  = "src/ggml-metal/ggml-metal-device.m"
		metal   = "src/ggml-metal/ggml-metal.metal"
		backend = "src/ggml-metal/ggml-metal.cpp"
		encode  = "static int ggml_metal_op_encode_impl(ggml_metal_op_t ctx, int idx) {"
		common  = "src/ggml-metal/ggml-metal-common.cpp"
		add     = "bool ggml_mem_ranges_add(ggml_mem_ranges_t mrs, const ggml_tensor * tensor) {"
		check   = "bool ggml_mem_ranges_check(ggml_mem_ranges_t mrs, const ggml_tensor * tensor) {"
		reorder = "static std::vector<int> ggml_metal_graph_optimize_reorder("
	)
	return &Step{
		Backend: "metal",
		Subject: "metal : add fused gated delta net and conv-update kernels",
		Body: `Add Metal kernels for the four fused decode nodes (GATED_DELTA_NET with
src[6] / src[6]+src[7], SSM_CONV with src[3] / src[3]+src[4]), with a
concurrency reset between the gather of the ids variants and their
compute. The conv ids variant's gather scratch is allocated after its
output (get_alloc_size); GDN uses the unused state region of its output.

The fused nodes write the conv cache (src[3]) and the recurrent state
(src[6]) in place. The memory ranges that decide concurrency and the
graph reorder now record that src as written, so a node reading the
cache after the update is neither encoded concurrently with it nor
moved before it.

supports_op answers for these nodes: it accepts them only where a kernel
exists and says no to the hybrid per-head state (src[8]/src[9]) and to
bf16 state, which used to be accepted and then hit an assert.
`,
		Files: files,
		Edits: []Edit{
			{Name: "kernels", File: metal, Place: After,
				Anchor: []string{`template [[host_name("kernel_gated_delta_net_f32_4")]] kernel kernel_gated_delta_net_t kernel_gated_delta_net_impl<4>;`},
				Text:   kernels},
			{Name: "include", File: ops, Place: Before,
				Anchor: []string{encode},
				Text:   "#include \"fused-ops.h\"\n\n"},
			{Name: "SSM_CONV case", File: ops, Place: Before,
				Anchor: []string{encode, "case GGML_OP_SSM_CONV:", "n_fuse = ggml_metal_op_ssm_conv(ctx, idx);"},
				Text:   t["upstream-encode-case"]},
			{Name: "GATED_DELTA_NET case", File: ops, Place: Before,
				Anchor: []string{encode, "case GGML_OP_GATED_DELTA_NET:", "n_fuse = ggml_metal_op_gated_delta_net(ctx, idx);"},
				Text:   t["upstream-encode-case"]},
			{Name: "supports include", File: device, Place: After,
				Anchor: []string{"#include <stdatomic.h>"},
				Text:   "\n#include \"fused-ops-supports.h\"\n"},
			{Name: "supports_op", File: device, Place: After,
				Anchor: []string{"bool ggml_metal_device_supports_op(ggml_metal_device_t dev, const struct ggml_tensor * op) {", "const bool has_bfloat"},
				Text:   "\n" + t["upstream-supports-op"]},
			{Name: "ranges include", File: common, Place: After,
				Anchor: []string{`#include "ggml-backend-impl.h"`},
				Text:   "#include \"fused-ops-supports.h\"\n"},
			{Name: "written src add helper", File: common, Place: Before,
				Anchor: []string{add},
				Text:   ranges["metal-ranges-add-written-src"] + "\n"},
			{Name: "written src in ranges add", File: common, Place: After,
				Anchor: []string{add},
				Text:   ranges["metal-ranges-add"] + "\n"},
			{Name: "written src check helper", File: common, Place: Before,
				Anchor: []string{check},
				Text:   ranges["metal-ranges-check-written-src"] + "\n"},
			{Name: "written src in ranges check", File: common, Place: After,
				Anchor: []string{check},
				Text:   ranges["metal-ranges-check"] + "\n"},
			{Name: "written src in reorder add", File: common, Place: After,
				Anchor: []string{reorder, "const auto & h_add = [](ggml_mem_ranges_t mrs, const node_info & node) {"},
				Text:   ranges["metal-reorder-add"] + "\n"},
			{Name: "written src in reorder check", File: common, Place: After,
				Anchor: []string{reorder, "const auto & h_check = [](ggml_mem_ranges_t mrs, const node_info & node) {"},
				Text:   ranges["metal-reorder-check"] + "\n"},
			{Name: "alloc-size include", File: backend, Place: After,
				Anchor: []string{`#include "ggml-metal-ops.h"`},
				Text:   "#include \"fused-ops-supports.h\"\n"},
			{Name: "alloc size with gather scratch", File: backend, Place: After,
				Anchor: []string{"static size_t ggml_backend_metal_buffer_type_get_alloc_size(ggml_backend_buffer_type_t buft, const ggml_tensor * tensor) {", "size_t res = ggml_nbytes(tensor);"},
				Text:   "\n" + t["upstream-alloc-size"]},
		},
	}, nil
}
