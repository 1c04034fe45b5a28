// stand-in for src/llama-context.cpp of a llama.cpp tree with the series' backend gate

void llama_context::sched_reserve() {
    // RISKY-1 guard: the fused/in-place Gated Delta Net op and the discriminated
    if (cparams.fused_gdn_ar || cparams.fused_gdn_ch) {
        bool fgdn_backend_ok = true;

        if (!fgdn_backend_ok) {
            LLAMA_LOG_INFO("%s: fused Gated Delta Net / discriminated SSM_CONV disabled "
                    "(compute backend is not CUDA/HIP/CPU)\n", __func__);
        }
    }

    if (cparams.auto_fgdn) {
    }
}
