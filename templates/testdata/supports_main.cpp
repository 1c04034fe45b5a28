// Runs the generated supports_op header (included through KG_SUPPORTS) on
// nodes built like ggml's builders build them, and checks every answer.
#include "ggml_fixture.h"
#include KG_SUPPORTS

#include <cstdio>
#include <vector>

static std::vector<ggml_tensor *> pool;

static ggml_tensor * t(ggml_type type, int64_t n0, int64_t n1 = 1, int64_t n2 = 1, int64_t n3 = 1) {
    ggml_tensor * x = new ggml_tensor;
    x->type = type;
    const size_t es = type == GGML_TYPE_BF16 ? 2 : 4;
    x->ne[0] = n0; x->ne[1] = n1; x->ne[2] = n2; x->ne[3] = n3;
    x->nb[0] = es; x->nb[1] = es * n0; x->nb[2] = x->nb[1] * n1; x->nb[3] = x->nb[2] * n2;
    pool.push_back(x);
    return x;
}

// gdn builds a GDN node: S_v, H, T, n_seqs; kda; state type; form 'P' (plain), 'A', 'B'.
static ggml_tensor * gdn(int64_t sv, int64_t h, int64_t tt, int64_t n, bool kda, ggml_type st, char form, int32_t K = 1) {
    ggml_tensor * op = t(GGML_TYPE_F32, sv * h, tt * n + sv * n);
    op->op = GGML_OP_GATED_DELTA_NET;
    op->src[0] = t(GGML_TYPE_F32, sv, h, tt, n);
    op->src[1] = t(GGML_TYPE_F32, sv, h, tt, n);
    op->src[2] = t(GGML_TYPE_F32, sv, h, tt, n);
    op->src[3] = t(GGML_TYPE_F32, kda ? sv : 1, h, tt, n);
    op->src[4] = t(GGML_TYPE_F32, 1, h, tt, n);
    op->src[5] = t(st, sv, sv, h, form == 'B' ? n + 4 : n);
    op->op_params[0] = K;
    if (form != 'P') op->src[6] = t(st, sv * sv * h, n);
    if (form == 'B') op->src[7] = t(GGML_TYPE_I32, n);
    return op;
}

static ggml_tensor * conv(int64_t k, int64_t c, int64_t n, char form, bool silu = true) {
    ggml_tensor * op = t(GGML_TYPE_F32, c, 1, n);
    op->op = GGML_OP_SSM_CONV;
    op->src[0] = t(GGML_TYPE_F32, k - 1, c, form == 'D' ? n + 3 : n);
    op->src[1] = t(GGML_TYPE_F32, k, c);
    op->src[2] = t(GGML_TYPE_F32, c, 1, n);
    op->op_params[0] = silu;
    if (form != 'P') op->src[3] = t(GGML_TYPE_F32, (k - 1) * c, n);
    if (form == 'D') op->src[4] = t(GGML_TYPE_I32, n);
    return op;
}

static int failures = 0;
static void expect(const char * what, int got, int want) {
    if (got != want) {
        printf("FAIL %s: got %d, want %d\n", what, got, want);
        failures++;
    }
}

#define S(op) KG_PREFIX(op)

int main() {
    expect("plain GDN is left to the backend", S(gdn(128, 4, 1, 2, false, GGML_TYPE_F32, 'P')), -1);
    ggml_tensor * hybrid = gdn(128, 4, 1, 2, false, GGML_TYPE_F32, 'P');
    hybrid->src[9] = t(GGML_TYPE_I32, 4);
    expect("plain hybrid GDN is refused", S(hybrid), 0);
    expect("plain GDN with bf16 state is refused", S(gdn(128, 4, 1, 2, false, GGML_TYPE_BF16, 'P')), 0);
    for (int64_t sv : {16, 32, 64, 128}) {
        expect("op A", S(gdn(sv, 4, 1, 2, false, GGML_TYPE_F32, 'A')), 1);
        expect("op A, KDA", S(gdn(sv, 4, 3, 2, true, GGML_TYPE_F32, 'A')), 1);
        expect("op B", S(gdn(sv, 4, 1, 2, false, GGML_TYPE_F32, 'B')), 1);
    }
    expect("op A with S_v 48", S(gdn(48, 4, 1, 2, false, GGML_TYPE_F32, 'A')), 0);
    expect("op A with S_v 256", S(gdn(256, 4, 1, 2, false, GGML_TYPE_F32, 'A')), 0);
    expect("op A with bf16 state", S(gdn(128, 4, 1, 2, false, GGML_TYPE_BF16, 'A')), 0);
    expect("op A with snapshots", S(gdn(128, 4, 1, 2, false, GGML_TYPE_F32, 'A', 4)), 0);
    ggml_tensor * hb = gdn(128, 4, 1, 2, false, GGML_TYPE_F32, 'B');
    hb->src[9] = t(GGML_TYPE_I32, 4);
    hb->src[8] = t(GGML_TYPE_BF16, 128, 128, 2, 2);
    expect("hybrid op B", S(hb), 0);
    ggml_tensor * bad_ids = gdn(128, 4, 1, 2, false, GGML_TYPE_F32, 'B');
    bad_ids->src[7]->type = GGML_TYPE_F32;
    expect("op B with f32 ids", S(bad_ids), 0);
    ggml_tensor * gqa = gdn(64, 8, 1, 2, false, GGML_TYPE_F32, 'A');
    gqa->src[0] = t(GGML_TYPE_F32, 64, 3, 1, 2);
    gqa->src[1] = t(GGML_TYPE_F32, 64, 3, 1, 2);
    expect("op A with 8 heads over 3 q/k heads", S(gqa), 0);
    expect("plain conv is left to the backend", S(conv(4, 256, 2, 'P')), -1);
    for (int64_t k = 2; k <= 8; k++) {
        expect("op C", S(conv(k, 256, 2, 'C')), 1);
        expect("op D", S(conv(k, 100, 3, 'D', false)), 1);
    }
    expect("op C with d_conv 9", S(conv(9, 256, 2, 'C')), 0);
    ggml_tensor * d = conv(4, 256, 3, 'D');
    d->src[4] = t(GGML_TYPE_I32, 5);
    expect("op D with 5 ids for 3 sequences", S(d), 0);
#ifdef KG_WRITTEN // a glue with no dependency tracking (ggml-opencl's in-order queue) has none
    expect("written slot of op A", KG_WRITTEN(gdn(128, 4, 1, 2, false, GGML_TYPE_F32, 'A')), 6);
    expect("written slot of op D", KG_WRITTEN(conv(4, 256, 3, 'D')), 3);
    expect("written slot of a plain node", KG_WRITTEN(conv(4, 256, 3, 'P')), -1);
#endif
    printf("%d failures\n", failures);
    return failures != 0;
}
