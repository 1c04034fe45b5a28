// A stand-in for the parts of ggml.h the ops step's builders use, in which
// GGML_ASSERT throws the condition it checked. Written for builders_test.go
// and perf_test's driver; the names follow ggml's.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#define GGML_ASSERT(x) do { if (!(x)) throw std::string(#x); } while (0)

enum ggml_type { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_I32 };
enum ggml_op { GGML_OP_NONE, GGML_OP_SSM_CONV, GGML_OP_GATED_DELTA_NET };

struct ggml_context { std::vector<struct ggml_tensor *> tensors; };
struct ggml_tensor {
    ggml_type type = GGML_TYPE_F32;
    int64_t ne[4] = {1, 1, 1, 1};
    size_t nb[4] = {4, 4, 4, 4};
    ggml_op op = GGML_OP_NONE;
    int32_t op_params[16] = {};
    ggml_tensor * src[10] = {};
    ggml_tensor * view_src = nullptr;
    char name[64] = "";
};

static std::vector<ggml_tensor *> pool;

static ggml_tensor * ggml_new_tensor(ggml_context * ctx, ggml_type type, int n_dims, const int64_t * ne) {
    ggml_tensor * t = new ggml_tensor;
    ctx->tensors.push_back(t);
    t->type = type;
    for (int i = 0; i < n_dims; i++) t->ne[i] = ne[i];
    const size_t es = type == GGML_TYPE_F16 ? 2 : 4;
    t->nb[0] = es;
    for (int i = 1; i < 4; i++) t->nb[i] = t->nb[i-1] * t->ne[i-1];
    pool.push_back(t);
    return t;
}
static ggml_tensor * ggml_new_tensor_3d(ggml_context * ctx, ggml_type type, int64_t a, int64_t b, int64_t c) {
    const int64_t ne[4] = { a, b, c, 1 };
    return ggml_new_tensor(ctx, type, 3, ne);
}
static void ggml_set_op_params_i32(ggml_tensor * t, uint32_t i, int32_t v) { t->op_params[i] = v; }
static bool ggml_is_3d(const ggml_tensor * t) { return t->ne[3] == 1; }
static bool ggml_is_matrix(const ggml_tensor * t) { return t->ne[2] == 1 && t->ne[3] == 1; }
static bool ggml_is_contiguous_rows(const ggml_tensor * t) { return t->ne[0] == 1 || t->nb[0] == 4 || t->nb[0] == 2; }
static bool ggml_is_contiguous(const ggml_tensor * t) {
    size_t next = t->nb[0];
    for (int i = 0; i < 4; i++) {
        if (t->ne[i] != 1 && t->nb[i] != next) return false;
        next = t->nb[i] * t->ne[i];
    }
    return true;
}
static bool ggml_are_same_shape(const ggml_tensor * a, const ggml_tensor * b) {
    for (int i = 0; i < 4; i++) if (a->ne[i] != b->ne[i]) return false;
    return true;
}
static bool ggml_are_same_stride(const ggml_tensor * a, const ggml_tensor * b) {
    for (int i = 0; i < 4; i++) if (a->nb[i] != b->nb[i]) return false;
    return true;
}

