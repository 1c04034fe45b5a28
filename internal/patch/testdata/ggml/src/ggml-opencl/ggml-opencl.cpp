// stand-in for src/ggml-opencl/ggml-opencl.cpp

#include <vector>
#include <regex>

bool ggml_cl_compute_forward(ggml_backend_t backend, struct ggml_tensor * tensor);

struct ggml_backend_opencl_context {
    cl_kernel kernel_ssm_conv_f32_f32, kernel_ssm_conv_f32_f32_4;
    cl_kernel kernel_gated_delta_net_f32[4][2][2] = {};
};

static cl_program build_program_from_source(cl_context ctx, cl_device_id dev, const char* program_buffer, const std::string &compile_opts) {
    return nullptr;
}

static void load_cl_kernels_argsort(ggml_backend_opencl_context *backend_ctx) {
}

static void load_cl_kernels(ggml_backend_opencl_context *backend_ctx) {
    cl_int err;
    std::string compile_opts = "";

    // gated_delta_net: one kernel per (S_V, KDA, tgpp) triple.
    {
    }

    // mul_mv_id_q4_0_f32_8x_flat
    {
    }
}

static bool ggml_opencl_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor * op) {
    switch (op->op) {
        default:
            return false;
    }
}

static void ggml_cl_gated_delta_net(ggml_backend_t backend, ggml_tensor * dst) {
}

static bool ggml_opencl_can_fuse(const struct ggml_cgraph * cgraph, int node_idx, std::initializer_list<enum ggml_op> ops) {
    return false;
}

static ggml_status ggml_backend_opencl_graph_compute(ggml_backend_t backend, ggml_cgraph * cgraph) {
    ggml_backend_opencl_context *backend_ctx = (ggml_backend_opencl_context *)backend->context;

    for (int i = 0; i < cgraph->n_nodes; i++) {
        ggml_tensor * node = cgraph->nodes[i];

        if ((node->flags & GGML_TENSOR_FLAG_COMPUTE) == 0) {
            continue;
        }

        bool ok = ggml_cl_compute_forward(backend, node);
    }

    return GGML_STATUS_SUCCESS;
}

bool ggml_cl_compute_forward(ggml_backend_t backend, struct ggml_tensor * tensor) {
    switch (tensor->op) {
        default:
            return false;
    }
    return true;
}
