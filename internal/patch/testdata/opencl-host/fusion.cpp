// A buildable stand-in for the parts of src/ggml-opencl/ggml-opencl.cpp the
// fusion form's OpenCL steps edit: each anchor they place text by, in the
// order the real file has them, over the few types and functions the text
// calls (their signatures as ggml's and OpenCL's, bodies empty). Not ggml's
// text; written for opencl_host_test.go, which applies the steps' edits and
// compiles it.
#include "ggml.h"

#include <array> // ggml-impl.h's, in C++
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>
#include <regex>

typedef struct _cl_context * cl_context;
typedef struct _cl_device_id * cl_device_id;
typedef struct _cl_program * cl_program;
typedef struct _cl_kernel * cl_kernel;
typedef struct _cl_mem * cl_mem;
typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;

static cl_int clSetKernelArg(cl_kernel kernel, cl_uint arg_index, size_t arg_size, const void * arg_value) {
    (void) kernel, (void) arg_index, (void) arg_size, (void) arg_value;
    return 0;
}

static cl_kernel clCreateKernel(cl_program program, const char * kernel_name, cl_int * errcode_ret) {
    (void) program, (void) kernel_name;
    *errcode_ret = 0;
    return nullptr;
}

static cl_int clReleaseProgram(cl_program program) {
    (void) program;
    return 0;
}

#define CL_CHECK(err) do { if ((err) != 0) { std::abort(); } } while (0)
#define GGML_LOG_CONT(...) ggml_log_standin(__VA_ARGS__)

enum ggml_status { GGML_STATUS_SUCCESS = 0 };

constexpr int32_t GGML_TENSOR_FLAG_COMPUTE = 16;

struct ggml_backend_device;
typedef ggml_backend_device * ggml_backend_dev_t;
struct ggml_backend_buffer_type;
typedef ggml_backend_buffer_type * ggml_backend_buffer_type_t;

struct ggml_backend {
    ggml_backend_dev_t device;
    void * context;
};
typedef ggml_backend * ggml_backend_t;

static ggml_backend_buffer_type_t ggml_backend_buffer_get_type(ggml_backend_buffer_t buffer) {
    (void) buffer;
    return nullptr;
}

static bool ggml_backend_dev_supports_buft(ggml_backend_dev_t device, ggml_backend_buffer_type_t buft) {
    return device != nullptr && buft != nullptr;
}

bool ggml_cl_compute_forward(ggml_backend_t backend, struct ggml_tensor * tensor);

struct ggml_backend_opencl_context {
    cl_context context;
    cl_device_id device;
    bool disable_fusion;

    cl_kernel kernel_gated_delta_net_f32[4][2][2] = {};

    void enqueue_ndrange_kernel(cl_kernel kernel, cl_uint work_dim, size_t *global_work_size, size_t *local_work_size, const ggml_tensor * tensor) {
        (void) kernel, (void) work_dim, (void) global_work_size, (void) local_work_size, (void) tensor;
    }
};

struct ggml_tensor_extra_cl {
    cl_mem data_device;
    cl_ulong offset;
    size_t actual_size;
};

static std::string read_file(const std::string & path) {
    return path;
}

static cl_program build_program_from_source(cl_context ctx, cl_device_id dev, const char* program_buffer, const std::string &compile_opts) {
    (void) ctx, (void) dev, (void) program_buffer, (void) compile_opts;
    return nullptr;
}

static void load_cl_kernels(ggml_backend_opencl_context *backend_ctx) {
    cl_int err;
    std::string compile_opts = "";

    // gated_delta_net: one kernel per (S_V, KDA, tgpp) triple.
    {
        CL_CHECK((backend_ctx->kernel_gated_delta_net_f32[0][0][0] = clCreateKernel(nullptr, "kernel_gated_delta_net_f32", &err), err));
    }

    // mul_mv_id_q4_0_f32_8x_flat
    {
    }
}

static bool ggml_opencl_can_fuse(const struct ggml_cgraph * cgraph, int node_idx, std::initializer_list<enum ggml_op> ops) {
    (void) cgraph, (void) node_idx, (void) ops;
    return false;
}

static ggml_status ggml_backend_opencl_graph_compute(ggml_backend_t backend, ggml_cgraph * cgraph) {
    ggml_backend_opencl_context *backend_ctx = (ggml_backend_opencl_context *)backend->context;

    for (int i = 0; i < cgraph->n_nodes; i++) {
        ggml_tensor * node = cgraph->nodes[i];

        if ((node->flags & GGML_TENSOR_FLAG_COMPUTE) == 0) {
            continue;
        }

        if (!backend_ctx->disable_fusion && ggml_opencl_can_fuse(cgraph, i, { GGML_OP_RMS_NORM, GGML_OP_MUL })) {
            continue;
        }

        if (!ggml_cl_compute_forward(backend, node)) {
            return GGML_STATUS_SUCCESS;
        }
    }

    return GGML_STATUS_SUCCESS;
}

bool ggml_cl_compute_forward(ggml_backend_t backend, struct ggml_tensor * tensor) {
    (void) backend, (void) tensor;
    return true;
}

int main() {
    ggml_backend_opencl_context ctx = {};
    ggml_backend backend = { nullptr, &ctx };
    ggml_cgraph graph = { 0, nullptr };
    load_cl_kernels(&ctx);
    return ggml_backend_opencl_graph_compute(&backend, &graph);
}
