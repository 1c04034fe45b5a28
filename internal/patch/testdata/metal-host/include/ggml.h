// stand-in for include/ggml.h: the types and helpers the Metal host code uses
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GGML_MAX_DIMS      4
#define GGML_MAX_SRC       10
#define GGML_MAX_OP_PARAMS 64
#define GGML_MAX_NAME      64

#define GGML_UNUSED(x) (void)(x)

#define GGML_ABORT(...) ggml_abort(__FILE__, __LINE__, __VA_ARGS__)
#define GGML_ASSERT(x) if (!(x)) GGML_ABORT("GGML_ASSERT(%s) failed", #x)

#ifdef __cplusplus
extern "C" {
#endif

void ggml_abort(const char * file, int line, const char * fmt, ...);

enum ggml_type {
    GGML_TYPE_F32  = 0,
    GGML_TYPE_F16  = 1,
    GGML_TYPE_I32  = 26,
    GGML_TYPE_BF16 = 30,
};

enum ggml_op {
    GGML_OP_NONE = 0,
    GGML_OP_ADD,
    GGML_OP_SUB,
    GGML_OP_MUL,
    GGML_OP_DIV,
    GGML_OP_NORM,
    GGML_OP_RMS_NORM,
    GGML_OP_MUL_MAT,
    GGML_OP_SCALE,
    GGML_OP_CPY,
    GGML_OP_RESHAPE,
    GGML_OP_VIEW,
    GGML_OP_PERMUTE,
    GGML_OP_TRANSPOSE,
    GGML_OP_GET_ROWS,
    GGML_OP_CONCAT,
    GGML_OP_SSM_CONV,
    GGML_OP_GATED_DELTA_NET,
    GGML_OP_UNARY,
    GGML_OP_CONT,
    GGML_OP_L2_NORM,
    GGML_OP_SIGMOID,
    GGML_OP_COUNT,
};

enum ggml_unary_op {
    GGML_UNARY_OP_SILU = 10,
};

enum ggml_tensor_flag {
    GGML_TENSOR_FLAG_OUTPUT  = 2,
    GGML_TENSOR_FLAG_COMPUTE = 16,
};

typedef struct ggml_backend_buffer * ggml_backend_buffer_t;

struct ggml_tensor {
    enum ggml_type type;

    struct ggml_backend_buffer * buffer;

    int64_t ne[GGML_MAX_DIMS];
    size_t  nb[GGML_MAX_DIMS];

    enum ggml_op op;

    int32_t op_params[GGML_MAX_OP_PARAMS / sizeof(int32_t)];

    int32_t flags;

    struct ggml_tensor * src[GGML_MAX_SRC];

    struct ggml_tensor * view_src;
    size_t               view_offs;

    void * data;

    char name[GGML_MAX_NAME];
};

struct ggml_cgraph;

int64_t ggml_nelements(const struct ggml_tensor * tensor);
size_t  ggml_nbytes(const struct ggml_tensor * tensor);
bool   ggml_is_empty(const struct ggml_tensor * tensor);
bool   ggml_is_contiguous(const struct ggml_tensor * tensor);
bool   ggml_are_same_shape(const struct ggml_tensor * t0, const struct ggml_tensor * t1);
bool   ggml_are_same_stride(const struct ggml_tensor * t0, const struct ggml_tensor * t1);
bool   ggml_is_contiguous_rows(const struct ggml_tensor * tensor);

struct ggml_tensor * ggml_graph_node(struct ggml_cgraph * cgraph, int i);

enum ggml_unary_op ggml_get_unary_op(const struct ggml_tensor * tensor);

#ifdef __cplusplus
}
#endif
