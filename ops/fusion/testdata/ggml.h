// A stand-in for what the fusion matchers read of ggml.h and ggml-impl.h:
// the tensor fields, the op and type names they test, the graph. Not
// ggml's text; enough to compile and run the matchers on a host.
#pragma once
#include <cstddef>
#include <cstdint>

#define GGML_MAX_SRC 10
#define GGML_MAX_OP_PARAMS 64

enum ggml_type { GGML_TYPE_F32 = 0, GGML_TYPE_F16 = 1, GGML_TYPE_I32 = 26 };

enum ggml_op {
    GGML_OP_NONE, GGML_OP_VIEW, GGML_OP_RESHAPE, GGML_OP_TRANSPOSE, GGML_OP_PERMUTE,
    GGML_OP_GET_ROWS, GGML_OP_CPY, GGML_OP_CONCAT, GGML_OP_SSM_CONV, GGML_OP_ADD, GGML_OP_UNARY,
    GGML_OP_GATED_DELTA_NET, GGML_OP_SCALE, GGML_OP_MUL_MAT, GGML_OP_L2_NORM, GGML_OP_CONT,
    GGML_OP_MUL, GGML_OP_SIGMOID, GGML_OP_RMS_NORM, GGML_OP_SUM, GGML_OP_COUNT,
};

enum ggml_unary_op { GGML_UNARY_OP_SILU = 10 };

enum ggml_tensor_flag { GGML_TENSOR_FLAG_OUTPUT = 2 };

struct ggml_backend_buffer;

struct ggml_tensor {
    ggml_type type = GGML_TYPE_F32;
    ggml_backend_buffer * buffer = nullptr;
    int64_t ne[4] = { 1, 1, 1, 1 };
    size_t nb[4] = {};
    ggml_op op = GGML_OP_NONE;
    int32_t op_params[GGML_MAX_OP_PARAMS / sizeof(int32_t)] = {};
    int32_t flags = 0;
    ggml_tensor * src[GGML_MAX_SRC] = {};
    ggml_tensor * view_src = nullptr;
    size_t view_offs = 0;
    void * data = nullptr;
    void * extra = nullptr; // a backend's own (ggml-opencl: the tensor's cl_mem and offset)
    char name[64] = {};
};

struct ggml_cgraph {
    int n_nodes;
    ggml_tensor ** nodes;
};

static inline int64_t ggml_nelements(const ggml_tensor * t) { return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3]; }

static inline size_t ggml_nbytes(const ggml_tensor * t) {
    if (ggml_nelements(t) == 0) {
        return 0;
    }
    size_t n = 4;
    for (int i = 0; i < 4; ++i) {
        n += (t->ne[i] - 1) * t->nb[i];
    }
    return n;
}

static inline int32_t ggml_get_op_params_i32(const ggml_tensor * t, uint32_t i) { return t->op_params[i]; }

static inline ggml_unary_op ggml_get_unary_op(const ggml_tensor * t) { return (ggml_unary_op) t->op_params[0]; }

typedef ggml_backend_buffer * ggml_backend_buffer_t;

// as ggml's: a call, whose arguments are evaluated
static inline void ggml_log_standin(const char *, ...) {}
#define GGML_LOG_DEBUG(...) ggml_log_standin(__VA_ARGS__)
