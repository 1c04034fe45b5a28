// stand-in for src/ggml-vulkan/ggml-vulkan.cpp

#include <unordered_map>
#include <vector>

struct vk_device_struct {
    vk_pipeline pipeline_gated_delta_net[4][2];
    vk_pipeline pipeline_ssm_conv_f32;
    vk_pipeline pipeline_ssm_conv_silu_f32;
    vk_pipeline pipeline_ssm_conv_bias_silu_f32;
    vk_pipeline pipeline_opt_step_adamw_f32;
};

struct vk_op_ssm_conv_push_constants {
    uint32_t placeholder;
};

struct ggml_backend_vk_context {
    std::string name;

    vk_device device;
};

static void ggml_vk_load_shaders(vk_device& device, vk_pipeline requested) {
    ggml_vk_create_pipeline(device, device->pipeline_ssm_conv_f32, "ssm_conv_f32" /* placeholder */);
    ggml_vk_create_pipeline(device, device->pipeline_ssm_conv_bias_silu_f32, "ssm_conv_f32" /* placeholder */);
}

static void ggml_vk_ssm_conv(ggml_backend_vk_context * ctx, vk_context& subctx, const struct ggml_cgraph * cgraph, int node_idx) {
    // placeholder
}

static bool ggml_vk_build_graph(ggml_backend_vk_context * ctx, ggml_cgraph * cgraph, int node_idx, ggml_tensor *node_begin) {
        // For all fused ops, check if the destination node or any of the source
        // nodes require synchronization.
        for (int32_t i = 0; i < ctx->num_additional_fused_ops + 1 && !need_sync; ++i) {
            for (uint32_t j = 0; j < GGML_MAX_SRC; ++j) {
                // placeholder
            }
        }
        // Add all fused nodes to the unsynchronized lists.
        for (int32_t i = 0; i < ctx->num_additional_fused_ops + 1; ++i) {
            for (uint32_t j = 0; j < GGML_MAX_SRC; ++j) {
                // placeholder
            }
        }

    switch (node->op) {
    case GGML_OP_GATED_DELTA_NET:
        ggml_vk_gated_delta_net(ctx, compute_ctx, node);

        break;

    case GGML_OP_SSM_CONV:
        ggml_vk_ssm_conv(ctx, compute_ctx, cgraph, node_idx);

        break;
    }
}

static size_t ggml_backend_vk_buffer_type_get_alloc_size(ggml_backend_buffer_type_t buft, const ggml_tensor * tensor) {
    return ggml_nbytes(tensor);
}

static bool ggml_vk_can_fuse_ssm_conv(const ggml_backend_vk_context * ctx, const struct ggml_cgraph * cgraph,
                                      int node_idx, int num_extra) {
    const ggml_tensor * conv = cgraph->nodes[node_idx];
    if (conv->op != GGML_OP_SSM_CONV) {
        return false;
    }

    const ggml_tensor * silu = nullptr;
    return true;
}

static bool ggml_backend_vk_device_supports_op(ggml_backend_dev_t dev, const ggml_tensor * op) {
    // placeholder preamble

    switch (op->op) {
        default:
            return false;
    }
}

static void ggml_vk_graph_optimize(ggml_backend_t backend, struct ggml_cgraph * graph)
{
    auto const &is_src_of = [](const ggml_tensor *dst, const ggml_tensor *src) -> bool {
        // placeholder
        // implicit dependency if they view the same tensor
        return false;
    };
}

static ggml_status ggml_backend_vk_graph_compute(ggml_backend_t backend, ggml_cgraph * cgraph) {
    ggml_backend_vk_context * ctx = (ggml_backend_vk_context *)backend->context;

    // Reserve tensor context space for all nodes
    ctx->tensor_ctxs.resize(cgraph->n_nodes);

    for (int i = 0; i < cgraph->n_nodes; i++) {
        const char *fusion_string {};
        if (!ctx->device->disable_fusion) {
            // placeholder
        }
    }
}
