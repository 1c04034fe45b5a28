package cuda

import (
	"github.com/kernelgen/kernelgen/internal/integration"
)

const (
	cu             = "src/ggml-cuda/ggml-cuda.cu"
	gdnCU          = "src/ggml-cuda/gated_delta_net.cu"
	gdnH           = "src/ggml-cuda/gated_delta_net.cuh"
	convCU         = "src/ggml-cuda/ssm-conv.cu"
	convH          = "src/ggml-cuda/ssm-conv.cuh"
	gdnCacheFusion = "static int ggml_cuda_try_gdn_cache_fusion("
)

// Manifest is CUDA's integration with a ggml tree (internal/integration):
// the commit of the series that carries its kernels and glue. The chained
// schedule of op B (ops/chain.go) stays in generated/cuda: its kernels,
// rendered as UpstreamKernels renders, would take this patch from 406 lines
// past its Budget (measured when the plan was its own kernel: plan 177
// lines, chain gather 34, chained GDN 151; the plan is now the chain
// gather's).
var Manifest = &integration.Manifest{
	Backend: name, Budget: 500,
	Subject: "cuda : add fused gated delta net and conv-update kernels",
	Body: `Add CUDA kernels for the four fused decode nodes (GATED_DELTA_NET with
src[6] / src[6]+src[7], SSM_CONV with src[3] / src[3]+src[4]), keeping
the non-fused path's arithmetic (warp butterfly, __expf) on 32-wide
warps; a column reduces over min(S_v, 32) lanes, within one warp on
64-wide wavefronts too. Each sits in gated_delta_net.cu or ssm-conv.cu
beside the plain kernel, with its launcher. The ids variants first copy
only the rows that another sequence of the node overwrites
(state-gather.cu).

supports_op answers for these nodes: a node outside the kernels' table is
refused instead of being run by the plain kernel, which would ignore the
slot it writes, and so is a node whose written cache lives in a buffer this
device cannot use. The SSM_CONV(+ADD)+SILU fusion leaves conv-update nodes
to their kernel.

One layer's decode step (conv update, then GDN; Qwen3.5-35B-A3B shapes:
32 heads of 128, 8192 channels; identity ids), replayed from a CUDA
graph on an H100: 27.60 us unfused against 11.67 us fused at 4
sequences, 681.56 against 209.93 us at 128 (2.2-3.4x from 2 to 256
sequences, the 27B's 48 heads and 10240 channels alike). The unfused
side's get_rows, concat, cpy and silu were one-element-per-thread
stand-ins around the plain ssm_conv and gated_delta_net kernels.
`,
	Dir:     "src/ggml-cuda/",
	Glue:    glueTarget,
	Kernels: UpstreamSources,
	Sections: []integration.Section{
		{Name: "declare the in-place GATED_DELTA_NET", File: gdnH, Place: integration.After,
			Anchor: []string{"void ggml_cuda_op_gated_delta_net(ggml_backend_cuda_context & ctx, ggml_tensor * dst);"},
			Text:   integration.Text{Section: "upstream-gated-delta-net-declaration", BlankBefore: true}},
		{Name: "include the gather (GATED_DELTA_NET)", File: gdnCU, Place: integration.After,
			Anchor: []string{`#include "ggml-cuda/common.cuh"`},
			Text:   integration.Text{Literal: "#include \"ggml-cuda/state-gather.cuh\"\n"}},
		{Name: "the in-place GATED_DELTA_NET kernel and launcher", File: gdnCU, Place: integration.Before,
			Anchor: []string{"void ggml_cuda_op_gated_delta_net(ggml_backend_cuda_context & ctx, ggml_tensor * dst) {"},
			Text:   integration.Text{Section: "upstream-gated-delta-net-source", BlankAfter: true}},
		{Name: "declare the in-place SSM_CONV", File: convH, Place: integration.After,
			Anchor: []string{"void ggml_cuda_op_ssm_conv(ggml_backend_cuda_context & ctx, ggml_tensor * dst,"},
			Text:   integration.Text{Section: "upstream-ssm-conv-declaration", BlankBefore: true}},
		{Name: "include the gather (SSM_CONV)", File: convCU, Place: integration.After,
			Anchor: []string{`#include "ssm-conv.cuh"`},
			Text:   integration.Text{Literal: "#include \"state-gather.cuh\"\n"}},
		{Name: "the in-place SSM_CONV kernel and launcher", File: convCU, Place: integration.Before,
			Anchor: []string{"void ggml_cuda_op_ssm_conv(ggml_backend_cuda_context & ctx, ggml_tensor * dst, ggml_tensor * bias_add_node, ggml_tensor * silu_dst) {"},
			Text:   integration.Text{Section: "upstream-ssm-conv-source", BlankAfter: true}},
		{Name: "the in-place forms' supports helper", File: cu, Place: integration.Before,
			Anchor: []string{"static bool ggml_cuda_compute_forward(ggml_backend_cuda_context & ctx, struct ggml_tensor * dst) {"},
			Text:   integration.Text{Section: "upstream-supports", BlankAfter: true}},
		{Name: "compute_forward", File: cu, Place: integration.Before,
			Anchor: []string{"static bool ggml_cuda_compute_forward(ggml_backend_cuda_context & ctx, struct ggml_tensor * dst) {", "switch (dst->op) {"},
			Text:   integration.Text{Section: "upstream-compute-forward", BlankAfter: true}},
		{Name: "SSM_CONV+SILU fusion leaves conv-update alone", File: cu, Place: integration.After,
			Anchor: []string{"ops.size() == 2 && ops.begin()[0] == GGML_OP_SSM_CONV && ops.begin()[1] == GGML_OP_UNARY", "const ggml_tensor * ssm_conv = cgraph->nodes[node_idx];"},
			Text:   integration.Text{Section: "upstream-ssm-conv-fusion-guard"}},
		{Name: "SSM_CONV+ADD+SILU fusion leaves conv-update alone", File: cu, Place: integration.After,
			Anchor: []string{"ops.size() == 3 && ops.begin()[0] == GGML_OP_SSM_CONV && ops.begin()[1] == GGML_OP_ADD", "const ggml_tensor * ssm_conv = cgraph->nodes[node_idx];"},
			Text:   integration.Text{Section: "upstream-ssm-conv-fusion-guard"}},
		{Name: "supports_op", File: cu, Place: integration.Before,
			Anchor: []string{"static bool ggml_backend_cuda_device_supports_op(ggml_backend_dev_t dev, const ggml_tensor * op) {", "switch (op->op) {"},
			Text:   integration.Text{Section: "upstream-supports-op", BlankAfter: true}},
	},
	Revisions: []integration.Revision{
		// ggml-cuda's own GDN -> VIEW -> CPY fusion (ggml_cuda_try_gdn_cache_fusion,
		// llama.cpp#23940) looks at neither src[6] nor src[7] and would run the
		// plain kernel on an in-place node, writing the state into the cache
		// view of the following copy: it has to leave those nodes alone.
		{Name: "ggml with the GDN cache fusion (llama.cpp#23940; d99724f2 has it, d9b30952 not)",
			Probe: integration.Probe{File: cu, Text: gdnCacheFusion},
			Sections: []integration.Section{
				{Name: "upstream GDN cache fusion leaves the in-place forms alone", File: cu, Place: integration.After,
					Anchor: []string{gdnCacheFusion, "const ggml_tensor * gdn = cgraph->nodes[node_idx];"},
					Text:   integration.Text{Section: "upstream-gdn-cache-fusion-guard"}},
			}},
	},
}
