// Runs every variant of the fused nodes (ops A-D) through the generated
// glue's supports_op and compute_forward, with the nodes built as ggml's
// builders build them in the memory common.hpp hides while work is
// submitted. The job's "nodes" buffer gets how many ran.
#include <vector>

static ggml_tensor * t(ggml_type type, int64_t n0, int64_t n1 = 1, int64_t n2 = 1, int64_t n3 = 1) {
    static std::vector<std::vector<float>> data;
    ggml_tensor * x = kg_host_arena::get().tensor();
    x->type = type;
    x->ne[0] = n0; x->ne[1] = n1; x->ne[2] = n2; x->ne[3] = n3;
    x->nb[0] = 4; x->nb[1] = 4 * n0; x->nb[2] = x->nb[1] * n1; x->nb[3] = x->nb[2] * n2;
    data.emplace_back(n0 * n1 * n2 * n3, type == GGML_TYPE_I32 ? 0.0f : 0.5f);
    x->data = data.back().data();
    return x;
}

// ids that make every sequence read the slot another one writes, so the
// gather copies
static ggml_tensor * ids(int64_t n) {
    ggml_tensor * x = t(GGML_TYPE_I32, n);
    for (int64_t s = 0; s < n; s++) {
        ((int32_t *) x->data)[s] = (int32_t) (n - 1 - s);
    }
    return x;
}

// form 'A' (final state in place) or 'B' (prior state from cache[ids[s]])
static ggml_tensor * gdn(int64_t sv, int64_t h, int64_t n, bool kda, char form) {
    ggml_tensor * op = t(GGML_TYPE_F32, sv * h, n + sv * n);
    op->op = GGML_OP_GATED_DELTA_NET;
    op->src[0] = t(GGML_TYPE_F32, sv, h, 1, n);
    op->src[1] = t(GGML_TYPE_F32, sv, h, 1, n);
    op->src[2] = t(GGML_TYPE_F32, sv, h, 1, n);
    op->src[3] = t(GGML_TYPE_F32, kda ? sv : 1, h, 1, n);
    op->src[4] = t(GGML_TYPE_F32, 1, h, 1, n);
    op->src[5] = t(GGML_TYPE_F32, sv, sv, h, form == 'B' ? n + 4 : n);
    op->src[6] = t(GGML_TYPE_F32, sv * sv * h, n);
    op->op_params[0] = 1;
    if (form == 'B') {
        op->src[7] = ids(n);
    }
    return op;
}

// form 'C' (window shifted in place) or 'D' (prior taps from cache[ids[s]])
static ggml_tensor * conv(int64_t k, int64_t c, int64_t n, char form, bool silu) {
    ggml_tensor * op = t(GGML_TYPE_F32, c, 1, n);
    op->op = GGML_OP_SSM_CONV;
    op->src[0] = t(GGML_TYPE_F32, k - 1, c, form == 'D' ? n + 3 : n);
    op->src[1] = t(GGML_TYPE_F32, k, c);
    op->src[2] = t(GGML_TYPE_F32, c, 1, n);
    op->src[3] = t(GGML_TYPE_F32, (k - 1) * c, n);
    op->op_params[0] = silu;
    if (form == 'D') {
        op->src[4] = ids(n);
    }
    return op;
}

void hostemu_run(hostemu::Job & job) {
    std::vector<ggml_tensor *> nodes;
    for (int64_t sv : {16, 32, 64, 128}) {
        for (bool kda : {false, true}) {
            nodes.push_back(gdn(sv, 2, 3, kda, 'A'));
            nodes.push_back(gdn(sv, 2, 3, kda, 'B'));
        }
    }
    for (int64_t k = 2; k <= 8; k++) {
        for (bool silu : {false, true}) {
            nodes.push_back(conv(k, 40, 3, 'C', silu));
            nodes.push_back(conv(k, 40, 3, 'D', silu));
        }
    }
    ggml_backend_sycl_context ctx;
    uint32_t ran = 0;
    for (ggml_tensor * node : nodes) {
        if (ggml_sycl_fused_supports_op(node) != 1) {
            hostemu::detail::fail("supports_op does not take node %u", ran);
        }
        if (!ggml_sycl_fused_compute_forward(ctx, node)) {
            hostemu::detail::fail("compute_forward did not run node %u", ran);
        }
        ran++;
    }
    job.buffer<uint32_t>("nodes")[0] = ran;
}
