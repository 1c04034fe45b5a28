// stand-in for src/ggml-cpu/ops.cpp of a tree with the series

// Patch 0028: CPU reference for ggml_ssm_conv_update_inplace_ids (placeholder)
static void ggml_compute_forward_ssm_conv_update_ids_f32(
        const ggml_compute_params * params,
        ggml_tensor * dst) {
    for (int64_t s = 0; s < n_seqs; ++s) {
    }
}

void ggml_compute_forward_ssm_conv(
        const ggml_compute_params * params,
        ggml_tensor * dst) {
    switch (dst->src[0]->type) {
        case GGML_TYPE_F32:
            {
                if (dst->src[3] != nullptr) {
                    if (dst->src[4] != nullptr) {
                        ggml_compute_forward_ssm_conv_update_ids_f32(params, dst);
                    } else {
                        ggml_compute_forward_ssm_conv_update_f32(params, dst);
                    }
                }
            } break;
        default:
            break;
    }
}

void ggml_compute_forward_gated_delta_net(
        const ggml_compute_params * params,
        ggml_tensor * dst) {
    const ggml_tensor * src0 = dst->src[0];

    switch (src0->type) {
        default:
            break;
    }
}
