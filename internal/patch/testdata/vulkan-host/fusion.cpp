// A buildable stand-in for the parts of src/ggml-vulkan/ggml-vulkan.cpp the
// fusion form's Vulkan step edits: each anchor it places text by, in the
// order the real file has them, over the few types and functions the text
// calls (their signatures as ggml's, bodies empty). Not ggml's text; written
// for vulkan_host_test.go, which applies the step's edits and compiles it.
#include "ggml.h"

#include <array>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

struct ggml_backend_buffer {
    void * context;
};

struct ggml_backend {
    void * context;
};
typedef ggml_backend * ggml_backend_t;

enum ggml_status { GGML_STATUS_SUCCESS = 0 };

extern const uint64_t ssm_conv_bias_silu_f32_len;
extern const unsigned char ssm_conv_bias_silu_f32_data[];
extern const uint64_t state_gather_f32_len;
extern const unsigned char state_gather_f32_data[];
extern const uint64_t gated_delta_net_inplace_f32_len;
extern const unsigned char gated_delta_net_inplace_f32_data[];
extern const uint64_t ssm_conv_update_inplace_f32_len;
extern const unsigned char ssm_conv_update_inplace_f32_data[];

struct vk_pipeline_struct {};
typedef std::shared_ptr<vk_pipeline_struct> vk_pipeline;

struct vk_device_struct;
typedef std::shared_ptr<vk_device_struct> vk_device;

struct vk_buffer_struct {
    vk_device device;
};
typedef std::shared_ptr<vk_buffer_struct> vk_buffer;

struct vk_subbuffer {
    vk_buffer buffer;
    uint64_t offset;
    uint64_t size;
};

struct vk_context_struct {};
typedef std::shared_ptr<vk_context_struct> vk_context;

struct vk_device_struct {
    uint32_t subgroup_size;
    bool disable_fusion;
    vk_pipeline pipeline_ssm_conv_bias_silu_f32;
    vk_pipeline pipeline_opt_step_adamw_f32;
};

struct vk_op_ssm_conv_push_constants {
    uint32_t nc, ncs, nr, n_t, n_s;
};

struct ggml_backend_vk_context {
    std::string name;

    vk_device device;

    std::vector<vk_context> tensor_ctxs;
    std::vector<const ggml_tensor *> unsynced_nodes_written;
    std::vector<const ggml_tensor *> unsynced_nodes_read;
};

struct ggml_backend_vk_buffer_context {
    vk_buffer dev_buffer;
};

static void ggml_pipeline_request_descriptor_sets(ggml_backend_vk_context * ctx, vk_pipeline & pipeline, uint32_t n) {
    (void) ctx, (void) pipeline, (void) n;
}

static void ggml_vk_sync_buffers(ggml_backend_vk_context * ctx, vk_context & subctx) {
    (void) ctx, (void) subctx;
}

static void ggml_vk_load_shaders(vk_device& device, vk_pipeline requested) {
    (void) requested;
    auto const &ggml_vk_create_pipeline = [&](vk_device& device, vk_pipeline& base_pipeline, const char *name, size_t spv_size, const void* spv_data, const char *entrypoint,
                                              uint32_t parameter_count, uint32_t push_constant_size, std::array<uint32_t, 3> wg_denoms, const std::vector<uint32_t>& specialization_constants,
                                              uint32_t align, bool disable_robustness = false, bool require_full_subgroups = false, uint32_t required_subgroup_size = 0) {
        (void) device, (void) base_pipeline, (void) name, (void) spv_size, (void) spv_data, (void) entrypoint, (void) parameter_count, (void) push_constant_size;
        (void) wg_denoms, (void) specialization_constants, (void) align, (void) disable_robustness, (void) require_full_subgroups, (void) required_subgroup_size;
    };
    auto const &ggml_vk_create_pipeline2 = [&](vk_device& device, vk_pipeline& pipeline, const std::string &name, size_t spv_size, const void* spv_data, const char *entrypoint,
                                              uint32_t parameter_count, uint32_t push_constant_size, std::array<uint32_t, 3> wg_denoms, const std::vector<uint32_t>& specialization_constants,
                                              uint32_t align, bool disable_robustness = false, bool require_full_subgroups = false, uint32_t required_subgroup_size = 0) {
        return ggml_vk_create_pipeline(device, pipeline, name.c_str(), spv_size, spv_data, entrypoint,
                                       parameter_count, push_constant_size, wg_denoms, specialization_constants,
                                       align, disable_robustness, require_full_subgroups, required_subgroup_size);
    };
    (void) ggml_vk_create_pipeline2;
    ggml_vk_create_pipeline(device, device->pipeline_ssm_conv_bias_silu_f32, "ssm_conv_bias_silu_f32", ssm_conv_bias_silu_f32_len, ssm_conv_bias_silu_f32_data, "main", 4, sizeof(vk_op_ssm_conv_push_constants), {32, 1, 1}, {32}, 1);
}

static vk_subbuffer ggml_vk_tensor_subbuffer(
    const ggml_backend_vk_context * ctx, const ggml_tensor * tensor, bool allow_misalign = false) {
    (void) ctx, (void) allow_misalign;
    auto buf_ctx = (ggml_backend_vk_buffer_context *)tensor->buffer->context;
    return vk_subbuffer{buf_ctx->dev_buffer, tensor->view_offs, ggml_nbytes(tensor)};
}

template <typename T>
static void ggml_vk_dispatch_pipeline(ggml_backend_vk_context* ctx, vk_context& subctx, vk_pipeline& pipeline, std::initializer_list<vk_subbuffer> const& descriptor_buffer_infos, const T &push_constants, std::array<uint32_t, 3> elements) {
    (void) ctx, (void) subctx, (void) pipeline, (void) descriptor_buffer_infos, (void) push_constants, (void) elements;
}

static void ggml_vk_ssm_conv(ggml_backend_vk_context * ctx, vk_context& subctx, const struct ggml_cgraph * cgraph, int node_idx) {
    (void) ctx, (void) subctx, (void) cgraph, (void) node_idx;
}

static bool ggml_vk_build_graph(ggml_backend_vk_context * ctx, ggml_cgraph * cgraph, int node_idx, ggml_tensor *node_begin, int node_idx_begin, bool last_node, bool almost_ready, bool submit){
    (void) node_begin, (void) node_idx_begin, (void) last_node, (void) almost_ready, (void) submit;
    ggml_tensor * node = cgraph->nodes[node_idx];
    vk_context compute_ctx = ctx->tensor_ctxs[node_idx];

    switch (node->op) {
    case GGML_OP_SSM_CONV:
        ggml_vk_ssm_conv(ctx, compute_ctx, cgraph, node_idx);

        break;
    default:
        return false;
    }
    return true;
}

static bool ggml_backend_buffer_is_vk(ggml_backend_buffer_t buffer) {
    return buffer != nullptr;
}

static ggml_status ggml_backend_vk_graph_compute(ggml_backend_t backend, ggml_cgraph * cgraph) {
    ggml_backend_vk_context * ctx = (ggml_backend_vk_context *)backend->context;

    // Reserve tensor context space for all nodes
    ctx->tensor_ctxs.resize(cgraph->n_nodes);

    for (int i = 0; i < cgraph->n_nodes; i++) {
        int num_additional_fused_ops = 0;
        if (!ctx->device->disable_fusion) {
            num_additional_fused_ops = 1;
        }
        ggml_vk_build_graph(ctx, cgraph, i, cgraph->nodes[i], i, false, false, num_additional_fused_ops > 0);
    }
    return GGML_STATUS_SUCCESS;
}

int main() {
    ggml_backend_vk_context ctx;
    ggml_backend backend = { &ctx };
    ggml_cgraph graph = { 0, nullptr };
    ggml_vk_load_shaders(ctx.device, nullptr);
    return ggml_backend_vk_graph_compute(&backend, &graph);
}
