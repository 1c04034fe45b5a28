package cpu

import (
	"github.com/kernelgen/kernelgen/internal/integration"
)

// The files of ggml-cpu the kernels go into, below the ggml root.
const (
	opsCpp = "src/ggml-cpu/ops.cpp"
	opsH   = "src/ggml-cpu/ops.h"
	cpuC   = "src/ggml-cpu/ggml-cpu.c"

	convForward = "void ggml_compute_forward_ssm_conv(\n"
	gdnForward  = "void ggml_compute_forward_gated_delta_net(\n"
)

// The entry points the texts define (a test holds them to the lowered units).
const (
	gdnEntry  = "ggml_compute_forward_gated_delta_net_inplace_f32"
	convEntry = "ggml_compute_forward_ssm_conv_update_inplace_f32"
)

// Manifest is ggml-cpu's integration with a ggml tree. Its Ops join the
// commit that adds the fused ops: the kernels before the plain op's entry
// point, a dispatch at its top for a node that carries the written src,
// and the conv update's work size in ggml_graph_plan. Its own commit is
// what a tree that already carries the series' ops gets: op D, which read
// a source row another sequence of the node may already have written,
// replaced by the two-phase kernel.
var Manifest = &integration.Manifest{
	Backend: name,
	Subject: "ggml-cpu : read the prior conv taps of all sequences before any write",
	Body: `ggml_ssm_conv_update_inplace_ids reads sequence s's prior taps from
cache[ids[s]], and that row can be the destination of another sequence
of the same node (two sequences starting in one ubatch: ids = [10, 10,
12] with rs_head 10). The CPU kernel read it while the channel loop
was writing: a sequence after its source's owner saw the updated taps,
one before it the old ones, while CUDA reads the old ones for both.

Copy the rows of non-identity sequences to the work buffer first, wait
on the barrier, then compute, as the GDN ids op does.
`,
	Dir:     "src/ggml-cpu/",
	Kernels: UpstreamKernels,
	Ops: []integration.Section{
		{Name: "conv-update kernels", File: opsCpp, Place: integration.Before,
			Anchor:  []string{convForward},
			Text:    integration.Text{Kernel: convKernels, BlankAfter: true},
			Defines: []string{entryHead(convEntry)}},
		{Name: "conv-update dispatch", File: opsCpp, Place: integration.Before,
			Anchor: []string{convForward, "switch (dst->src[0]->type) {"},
			Text:   integration.Text{Kernel: convDispatch, BlankAfter: true}},
		{Name: "GDN kernels", File: opsCpp, Place: integration.Before,
			Anchor:  []string{gdnForward},
			Text:    integration.Text{Kernel: gdnKernels, BlankAfter: true},
			Defines: []string{entryHead(gdnEntry)}},
		{Name: "GDN dispatch", File: opsCpp, Place: integration.Before,
			Anchor: []string{gdnForward, "switch (src0->type) {"},
			Text:   integration.Text{Kernel: gdnDispatch, BlankAfter: true}},
		workSize(workSizeDecl),
		workSizeIn(workSizeCase),
	},
	Sections: []integration.Section{
		{Name: "two-phase conv-update ids kernel", File: opsCpp, Place: integration.Replace,
			Anchor: []string{"// Patch 0028: CPU reference for ggml_ssm_conv_update_inplace_ids"},
			Until:  "\n}\n",
			Text:   integration.Text{Kernel: fixKernel}},
		{Name: "its dispatch", File: opsCpp, Place: integration.Replace,
			Anchor: []string{convForward, replacedEntry + "params, dst);"},
			Until:  "\n",
			Text:   integration.Text{Kernel: fixDispatch}},
		workSize(fixSizeDecl),
		workSizeIn(fixSizeCase),
	},
}

// workSize declares a work size function in ops.h.
func workSize(decl string) integration.Section {
	return integration.Section{Name: "conv-update work size declaration", File: opsH, Place: integration.After,
		Anchor: []string{"void ggml_compute_forward_ssm_conv(const struct ggml_compute_params * params, struct ggml_tensor * dst);"},
		Text:   integration.Text{Kernel: decl}}
}

// workSizeIn counts it in ggml_graph_plan.
func workSizeIn(text string) integration.Section {
	return integration.Section{Name: "conv-update work size", File: cpuC, Place: integration.Before,
		Anchor: []string{"struct ggml_cplan ggml_graph_plan(", "case GGML_OP_GATED_DELTA_NET:"},
		Text:   integration.Text{Kernel: text}}
}
