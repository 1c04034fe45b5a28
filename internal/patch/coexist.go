package patch

// cudaCacheFusionGuard keeps ggml-cuda's own GDN -> VIEW -> CPY fusion
// (ggml_cuda_try_gdn_cache_fusion, in ggml since llama.cpp#23940) off the
// in-place forms: it looks at neither src[6] nor src[7] and would run the
// plain kernel on the node, writing the state into the cache view of the
// following copy. Trees from before that fusion skip the edit.
var cudaCacheFusionGuard = Edit{
	Name: "upstream GDN cache fusion leaves the in-place forms alone", File: "src/ggml-cuda/ggml-cuda.cu", Place: After,
	Anchor: []string{"static int ggml_cuda_try_gdn_cache_fusion(", "const ggml_tensor * gdn = cgraph->nodes[node_idx];"},
	Text: `    // the in-place forms write their final state themselves (src[6], src[7]); their own kernels run them
    if (gdn->src[6] != nullptr) {
        return 0;
    }
`,
	OnlyIf: "static int ggml_cuda_try_gdn_cache_fusion(",
}
