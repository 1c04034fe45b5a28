// stand-in for src/ggml-impl.h
#pragma once

#include "ggml.h"

#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ggml_log_level {
    GGML_LOG_LEVEL_DEBUG = 1,
};

void ggml_log_internal(enum ggml_log_level level, const char * format, ...);

#define GGML_LOG_DEBUG(...) ggml_log_internal(GGML_LOG_LEVEL_DEBUG, __VA_ARGS__)

struct ggml_cgraph {
    int size;
    int n_nodes;
    int n_leafs;

    struct ggml_tensor ** nodes;
    struct ggml_tensor ** leafs;
};

// the ops that only change how a tensor is viewed: no kernel, nothing read or written
static inline bool ggml_op_is_empty(enum ggml_op op) {
    switch (op) {
        case GGML_OP_NONE:
        case GGML_OP_RESHAPE:
        case GGML_OP_TRANSPOSE:
        case GGML_OP_VIEW:
        case GGML_OP_PERMUTE:
            return true;
        default:
            return false;
    }
}

static inline int32_t ggml_get_op_params_i32(const struct ggml_tensor * tensor, uint32_t i) {
    return tensor->op_params[i];
}

#ifdef __cplusplus
}
#endif

// the real one checks that the nodes from node_idx on have these ops and that
// each result is only used by the next one; the stand-in never fuses
// (the hazard test's graphs have no ADD or NORM chain to fuse)
static inline bool ggml_can_fuse(const struct ggml_cgraph * cgraph, int node_idx, const enum ggml_op * ops, int num_ops) {
    GGML_UNUSED(cgraph);
    GGML_UNUSED(node_idx);
    GGML_UNUSED(ops);
    GGML_UNUSED(num_ops);
    return false;
}
