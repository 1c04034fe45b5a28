// A small stand-in for the parts of ggml.h and ggml-impl.h that the generated
// supports_op header uses, so the test can compile and run it without a ggml
// tree. Written for this test; the names follow ggml's.
#pragma once
#include <cstddef>
#include <cstdint>

#define GGML_MAX_SRC 10

enum ggml_type { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_I32 };
enum ggml_op { GGML_OP_NONE, GGML_OP_GATED_DELTA_NET, GGML_OP_SSM_CONV };

struct ggml_backend_buffer;

struct ggml_tensor {
    ggml_type type = GGML_TYPE_F32;
    int64_t ne[4] = {1, 1, 1, 1};
    size_t nb[4] = {4, 4, 4, 4};
    ggml_op op = GGML_OP_NONE;
    int32_t op_params[16] = {};
    ggml_tensor * src[10] = {};
    void * data = nullptr;
    ggml_backend_buffer * buffer = nullptr; // supports_path_main.cpp defines it
    ggml_tensor * view_src = nullptr;
};

// ggml_nbytes of a type of one element per block
static inline size_t ggml_nbytes(const ggml_tensor * t) {
    size_t n = t->type == GGML_TYPE_F16 || t->type == GGML_TYPE_BF16 ? 2 : 4;
    for (int i = 0; i < 4; i++) n += (t->ne[i] - 1) * t->nb[i];
    return n;
}

static inline int32_t ggml_get_op_params_i32(const ggml_tensor * t, uint32_t i) { return t->op_params[i]; }

static inline bool ggml_is_contiguous(const ggml_tensor * t) {
    size_t next = 4;
    for (int i = 0; i < 4; i++) {
        if (t->ne[i] != 1 && t->nb[i] != next) return false;
        next = t->nb[i] * t->ne[i];
    }
    return true;
}

static inline bool ggml_are_same_shape(const ggml_tensor * a, const ggml_tensor * b) {
    for (int i = 0; i < 4; i++) if (a->ne[i] != b->ne[i]) return false;
    return true;
}

static inline bool ggml_are_same_stride(const ggml_tensor * a, const ggml_tensor * b) {
    for (int i = 0; i < 4; i++) if (a->nb[i] != b->nb[i]) return false;
    return true;
}

static inline bool ggml_is_contiguous_rows(const ggml_tensor * t) { return t->ne[0] == 1 || t->nb[0] == 4; }
