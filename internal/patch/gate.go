package patch

// llamaContext is llama.cpp's own file that decides whether the model
// graph uses the fused decode nodes.
const llamaContext = "llama:src/llama-context.cpp"

// gateStep replaces the backend-name allow-list the series adds to
// llama_context::sched_reserve (its patch 0030) by a probe of each device's
// supports_op on nodes of the fused forms. A llama.cpp tree without that
// list is left alone (the edits are skipped), as is a ggml tree.
func gateStep() (*Step, error) {
	t, err := commonSections("llama-probe", "llama-gate")
	if err != nil {
		return nil, err
	}
	const reserve = "void llama_context::sched_reserve() {"
	return &Step{
		Backend: "llama",
		Subject: "llama : keep the fused decode nodes where every device supports them",
		Body: `sched_reserve switched the fused gated delta net and conv-update nodes
off unless every non-CPU backend was registered as CUDA, ROCm or MUSA:
a list of names, which also turned them off next to an accelerator
such as BLAS, and kept them off on backends that have the kernels.

Ask instead: build one node of each fused form with the model's shapes
and keep the fusion only where every device that takes the plain op
also takes the fused one, so a node is never handed to a device that
would run the plain op on it. Without offload_kqv the recurrent cache
stays in host memory while the layers run on the GPU, and the fused
nodes would write into the scheduler's copies of it: keep them off there.
`,
		Edits: []Edit{
			{Name: "supports_op probe", File: llamaContext, Place: Before,
				Anchor:  []string{reserve},
				Text:    t["llama-probe"] + "\n",
				Defines: []string{"static bool llama_fused_decode_supported("},
				OnlyIf:  "fgdn_backend_ok"},
			{Name: "the probe instead of the backend-name list", File: llamaContext, Place: Replace,
				Anchor: []string{reserve, "// RISKY-1 guard: the fused/in-place Gated Delta Net op"},
				Until:  "(compute backend is not CUDA/HIP/CPU)\\n\", __func__);\n        }\n    }\n",
				Text:   t["llama-gate"],
				OnlyIf: "fgdn_backend_ok"},
		},
	}, nil
}
