// A buildable stand-in for the parts of src/ggml-opencl/ggml-opencl.cpp the
// fusion form's OpenCL steps edit: each anchor they place text by, in the
// order the real file has them, over the few types and functions the text
// calls (their signatures as ggml's and OpenCL's). Not ggml's text; written
// for opencl_host_test.go, which applies the steps' edits and compiles it.
// The OpenCL calls record what they are asked: with KG_DRIVER a test's
// driver.inc builds a graph and runs graph_compute, and the program prints
// each program built, each kernel enqueued with its arguments, and each
// node left to the plain ops, for the test to run the launches on a device.
#include "ggml.h"

#include <array> // ggml-impl.h's, in C++
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <map>
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

// each kernel's arguments as set, by index
static std::map<cl_kernel, std::map<cl_uint, std::vector<unsigned char>>> kg_args;

static cl_int clSetKernelArg(cl_kernel kernel, cl_uint arg_index, size_t arg_size, const void * arg_value) {
    const unsigned char * b = (const unsigned char *) arg_value;
    kg_args[kernel][arg_index].assign(b, b + arg_size);
    return 0;
}

// a kernel is its program's number: each program holds one
static cl_kernel clCreateKernel(cl_program program, const char * kernel_name, cl_int * errcode_ret) {
    (void) kernel_name;
    *errcode_ret = 0;
    return (cl_kernel) program;
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

// every buffer here is the device's
static ggml_backend_buffer_type_t ggml_backend_buffer_get_type(ggml_backend_buffer_t buffer) {
    return (ggml_backend_buffer_type_t) buffer;
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

    // prints "launch <program> <global> <local>", then each argument as "arg <hex bytes>"
    void enqueue_ndrange_kernel(cl_kernel kernel, cl_uint work_dim, size_t *global_work_size, size_t *local_work_size, const ggml_tensor * tensor) {
        (void) tensor;
        printf("launch %zu", (size_t) (uintptr_t) kernel);
        for (cl_uint d = 0; d < 3; d++) {
            printf(" %zu", d < work_dim ? global_work_size[d] : (size_t) 1);
        }
        for (cl_uint d = 0; d < 3; d++) {
            printf(" %zu", d < work_dim ? local_work_size[d] : (size_t) 1);
        }
        printf("\n");
        for (const auto & a : kg_args[kernel]) {
            printf("arg");
            for (unsigned char c : a.second) {
                printf(" %02x", c);
            }
            printf("\n");
        }
    }
};

struct ggml_tensor_extra_cl {
    cl_mem data_device;
    cl_ulong offset;
    size_t actual_size;
};

// a kernel source is its file's name here
static std::string read_file(const std::string & path) {
    return path;
}

// prints "program <number> <file> <options>"
static cl_program build_program_from_source(cl_context ctx, cl_device_id dev, const char* program_buffer, const std::string &compile_opts) {
    (void) ctx, (void) dev;
    static size_t n = 0;
    printf("program %zu %s %s\n", ++n, program_buffer, compile_opts.c_str());
    return (cl_program) (uintptr_t) n;
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

// prints "node <name>": a node the plain ops run
bool ggml_cl_compute_forward(ggml_backend_t backend, struct ggml_tensor * tensor) {
    (void) backend;
    printf("node %s\n", tensor->name);
    return true;
}

#ifdef KG_DRIVER
#include "driver.inc"
#else
int main() {
    ggml_backend_opencl_context ctx = {};
    ggml_backend backend = { nullptr, &ctx };
    ggml_cgraph graph = { 0, nullptr };
    load_cl_kernels(&ctx);
    return ggml_backend_opencl_graph_compute(&backend, &graph);
}
#endif
