package cpu

import (
	"fmt"

	"github.com/kernelgen/kernelgen/emit/ggmlcpu"
	"github.com/kernelgen/kernelgen/internal/upstream"
)

// The texts the manifest splices into ggml-cpu's sources (upstream.File
// names): the kernels of each family, each family's dispatch and the conv
// update's work size; on a tree with the series, the two-phase op D in
// place of its kernel, its dispatch and its work size.
const (
	gdnKernels    = "gated_delta_net_inplace"
	convKernels   = "ssm_conv_update_inplace"
	gdnDispatch   = "gated delta net dispatch"
	convDispatch  = "conv-update dispatch"
	workSizeDecl  = "conv-update work size declaration"
	workSizeCase  = "conv-update work size"
	fixKernel     = "ssm_conv_update_inplace_ids"
	fixDispatch   = "two-phase conv-update dispatch"
	fixSizeDecl   = "two-phase conv-update work size declaration"
	fixSizeCase   = "two-phase conv-update work size"
	replacedEntry = "ggml_compute_forward_ssm_conv_update_ids_f32(" // the series' op D, which the fix replaces
)

// kernelFiles are the texts that are kernels, which build writes under
// generated/cpu for review.
var kernelFiles = []string{gdnKernels, convKernels, fixKernel}

// UpstreamKernels are the texts the manifest splices, lowered from the
// native-cpu IR (emit/ggmlcpu).
func UpstreamKernels() ([]upstream.File, error) {
	gdn, err := family("AB")
	if err != nil {
		return nil, err
	}
	conv, err := family("CD")
	if err != nil {
		return nil, err
	}
	fix, err := single("D")
	if err != nil {
		return nil, err
	}
	texts := []struct{ name, text string }{
		{gdnKernels, string(gdn.source)},
		{convKernels, string(conv.source)},
		{gdnDispatch, dispatch(gdn.entries[0].Compute, 6, "the in-place forms: final state to src[6], with src[7] prior states from cache[ids[s]]")},
		{convDispatch, dispatch(conv.entries[0].Compute, 3, "the conv update: shifted taps to src[3], with src[4] prior taps from cache[ids[s]]")},
		{workSizeDecl, sizeDecl(conv.entries[1])},
		{workSizeCase, sizeCase(conv.entries[1])},
		{fixKernel, string(fix.source)},
		{fixDispatch, "                        " + fix.entries[0].Compute + "(params, dst);\n"},
		{fixSizeDecl, sizeDecl(fix.entries[0])},
		{fixSizeCase, sizeCase(fix.entries[0])},
	}
	var out []upstream.File
	for _, t := range texts {
		out = append(out, upstream.File{Name: t.name, Data: []byte(t.text), Spliced: true})
	}
	return out, nil
}

// dispatch routes a node whose src[slot] is set (the in-place forms, ids
// or not) to its family's entry point.
func dispatch(compute string, slot int, why string) string {
	return fmt.Sprintf(`    // %s
    if (dst->src[%d] != nullptr) {
        %s(params, dst);
        return;
    }
`, why, slot, compute)
}

// sizeDecl declares an op's work size function (ops.h).
func sizeDecl(e ggmlcpu.Entry) string {
	return fmt.Sprintf("size_t %s(const struct ggml_tensor * dst);\n", e.WorkSize)
}

// sizeCase counts an op's work size in ggml_graph_plan (for op D: its
// gather scratch, shared by the threads).
func sizeCase(e ggmlcpu.Entry) string {
	return fmt.Sprintf(`                case GGML_OP_SSM_CONV:
                    {
                        if (node->src[3] != NULL && node->src[4] != NULL) {
                            cur = %s(node);
                        }
                    } break;
`, e.WorkSize)
}

// isKernel: the text is a kernel file (kernelFiles).
func isKernel(name string) bool {
	for _, k := range kernelFiles {
		if k == name {
			return true
		}
	}
	return false
}

// entryHead is the head of a static function the texts define, as the
// manifest's Defines spell it.
func entryHead(compute string) string { return "static void " + compute + "(" }
