// Builds the ops step's test-backend-ops cases (tbo.inc: the classes the
// series adds) over a stand-in of test_case and the ggml calls they make,
// and checks what each build_graph returns: in test mode the read after the
// in-place write (so the written slots are compared), in perf mode the fused
// node itself, which eval_perf repeats and times. Written for
// builders_test.go; the names follow ggml's and test-backend-ops.cpp's.
#include "ggml_builders.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>

#define GGML_UNUSED(x) (void) (x)
enum { GGML_OP_ADD = 100, GGML_OP_VIEW, GGML_OP_RESHAPE, GGML_OP_SCALE, GGML_OP_SUM_ROWS, GGML_OP_L2_NORM };

static ggml_tensor * node(ggml_context * ctx, int op, ggml_tensor * a, ggml_tensor * b = nullptr) {
    ggml_tensor * t = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, a->ne);
    t->op = (ggml_op) op;
    t->src[0] = a;
    t->src[1] = b;
    return t;
}
static ggml_tensor * ggml_new_tensor_1d(ggml_context * ctx, ggml_type type, int64_t a) { return ggml_new_tensor_3d(ctx, type, a, 1, 1); }
static ggml_tensor * ggml_new_tensor_2d(ggml_context * ctx, ggml_type type, int64_t a, int64_t b) { return ggml_new_tensor_3d(ctx, type, a, b, 1); }
static ggml_tensor * ggml_new_tensor_4d(ggml_context * ctx, ggml_type type, int64_t a, int64_t b, int64_t c, int64_t d) {
    const int64_t ne[4] = { a, b, c, d };
    return ggml_new_tensor(ctx, type, 4, ne);
}
static void ggml_set_name(ggml_tensor * t, const char * name) { snprintf(t->name, sizeof(t->name), "%s", name); }
static int64_t ggml_nelements(const ggml_tensor * t) { return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3]; }
static size_t ggml_nbytes(const ggml_tensor * t) { return ggml_nelements(t) * 4; }
static ggml_tensor * ggml_l2_norm(ggml_context * ctx, ggml_tensor * a, float) { return node(ctx, GGML_OP_L2_NORM, a); }
static ggml_tensor * ggml_view_1d(ggml_context * ctx, ggml_tensor * a, int64_t n, size_t) {
    ggml_tensor * t = node(ctx, GGML_OP_VIEW, a);
    t->ne[0] = n; t->ne[1] = t->ne[2] = t->ne[3] = 1;
    t->view_src = a;
    return t;
}
static ggml_tensor * ggml_view_2d(ggml_context * ctx, ggml_tensor * a, int64_t n0, int64_t n1, size_t nb1, size_t) {
    ggml_tensor * t = ggml_view_1d(ctx, a, n0, 0);
    t->ne[1] = n1;
    t->nb[1] = nb1; t->nb[2] = t->nb[3] = nb1 * n1;
    return t;
}
static ggml_tensor * ggml_reshape_1d(ggml_context * ctx, ggml_tensor * a, int64_t n) { ggml_tensor * t = node(ctx, GGML_OP_RESHAPE, a); t->ne[0] = n; t->ne[1] = t->ne[2] = t->ne[3] = 1; return t; }
static ggml_tensor * ggml_sum_rows(ggml_context * ctx, ggml_tensor * a) { ggml_tensor * t = node(ctx, GGML_OP_SUM_ROWS, a); t->ne[0] = 1; return t; }
static ggml_tensor * ggml_scale(ggml_context * ctx, ggml_tensor * a, float) { return node(ctx, GGML_OP_SCALE, a); }
static ggml_tensor * ggml_add(ggml_context * ctx, ggml_tensor * a, ggml_tensor * b) { return node(ctx, GGML_OP_ADD, a, b); }
static ggml_tensor * ggml_get_first_tensor(ggml_context * ctx) { return ctx->tensors.empty() ? nullptr : ctx->tensors[0]; }
static ggml_tensor * ggml_get_next_tensor(ggml_context * ctx, ggml_tensor * t) {
    auto it = std::find(ctx->tensors.begin(), ctx->tensors.end(), t);
    return it + 1 == ctx->tensors.end() ? nullptr : *(it + 1);
}
static bool ggml_is_view_op(int op) { return op == GGML_OP_VIEW || op == GGML_OP_RESHAPE; }
static void ggml_backend_tensor_set(ggml_tensor *, const void *, size_t, size_t) {}
static void init_tensor_uniform(ggml_tensor *, float = -1.0f, float = 1.0f) {}
#define VARS_TO_STR6(a, b, c, d, e, f) std::string()
#define VARS_TO_STR7(a, b, c, d, e, f, g) std::string()

enum test_mode { MODE_TEST, MODE_PERF, MODE_GRAD, MODE_SUPPORT };

struct test_case {
    virtual ~test_case() {}
    virtual std::string op_desc(ggml_tensor * t) = 0;
    virtual std::string vars() = 0;
    virtual bool run_whole_graph() { return false; }
    virtual std::vector<ggml_tensor *> fusion_test_nodes() { return {}; }
    virtual ggml_tensor * build_graph(ggml_context * ctx) = 0;
    virtual void initialize_tensors(ggml_context * ctx) = 0;
    test_mode mode = MODE_TEST;
};

#include "builders.inc"
#include "tbo.inc"

static int failures = 0;

static void expect(const char * what, test_case * tc, int fused_op) {
    for (test_mode mode : {MODE_TEST, MODE_PERF}) {
        ggml_context ctx;
        tc->mode = mode;
        ggml_tensor * out = tc->build_graph(&ctx);
        const int want = mode == MODE_PERF ? fused_op : GGML_OP_ADD;
        if (out->op != want) {
            printf("FAIL %s, %s mode: build_graph returns op %d (%s), want %d\n", what, mode == MODE_PERF ? "perf" : "test",
                    (int) out->op, out->name, want);
            failures++;
        }
    }
    delete tc;
}

int main() {
    expect("GATED_DELTA_NET in place", new test_gated_delta_net_inplace(4, 64, 2, false, false, 1), GGML_OP_GATED_DELTA_NET);
    expect("GATED_DELTA_NET in place with ids", new test_gated_delta_net_inplace(4, 64, 2, false, true, 1), GGML_OP_GATED_DELTA_NET);
    expect("SSM_CONV update", new test_ssm_conv_update_state(4, 256, 2, false, 1), GGML_OP_SSM_CONV);
    expect("SSM_CONV update with ids", new test_ssm_conv_update_state(4, 256, 2, true, 1), GGML_OP_SSM_CONV);
    printf("%d failures\n", failures);
    return failures != 0;
}
