// The fused ops on ggml's CPU backend against the unfused path (get_rows of the cache as it was before
// the node, then the plain GATED_DELTA_NET or SSM_CONV (+ SILU)), bit for bit. Without arguments no source
// row is another sequence's destination; --aliasing uses the ids of the test-backend-ops cases, where
// they are (the reference then is the two-phase semantics). --plain-conv-order says in which order this
// build's plain ssm_conv sums the taps.
#include "ggml.h"
#include "ggml-cpu.h"
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

static std::mt19937 rng(7);

static void fill(ggml_tensor * t, float lo, float hi) {
    std::uniform_real_distribution<float> u(lo, hi);
    float * p = (float *) t->data;
    for (int64_t i = 0; i < ggml_nelements(t); i++) p[i] = u(rng);
}

static int64_t diff_bits(const float * a, const float * b, int64_t n) {
    int64_t d = 0;
    for (int64_t i = 0; i < n; i++) d += memcmp(a + i, b + i, 4) != 0;
    return d;
}

static bool aliasing = false;

// ids: identity or a row after the window (never another sequence's destination); with aliasing, by s % 4
// as the test-backend-ops cases do: own row, the row of s-1, a row after the window, the row of s+1
static void fill_ids(ggml_tensor * ids, int rs_head, int n) {
    int32_t * p = (int32_t *) ids->data;
    for (int s = 0; s < n; s++) {
        if (aliasing) {
            const int m = s % 4;
            p[s] = m == 0 ? rs_head + s : m == 1 ? rs_head + s - 1 : m == 2 ? rs_head + n + s : rs_head + (s + 1) % n;
        } else {
            p[s] = (rng() % 2) ? rs_head + s : rs_head + n + (int) (rng() % (unsigned) n);
        }
    }
}

static int64_t conv_case(int K, int C, int n, int nth, bool silu) {
    ggml_init_params ip = { 256u*1024*1024, nullptr, false };
    ggml_context * ctx = ggml_init(ip);
    const int rs_head = 1, n_cells = rs_head + 2*n;
    ggml_tensor * cache_a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, K - 1, C, n_cells);
    fill(cache_a, -1, 1);
    ggml_tensor * cache_b = ggml_dup_tensor(ctx, cache_a);
    memcpy(cache_b->data, cache_a->data, ggml_nbytes(cache_a));
    ggml_tensor * w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, C);
    ggml_tensor * x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, C, 1, n);
    ggml_tensor * ids = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n);
    fill(w, -1, 1); fill(x, -1, 1); fill_ids(ids, rs_head, n);

    ggml_tensor * dst_rows = ggml_view_2d(ctx, cache_a, (K - 1)*C, n, cache_a->nb[2], rs_head*cache_a->nb[2]);
    ggml_tensor * fused = ggml_ssm_conv_update_inplace_ids(ctx, cache_a, w, x, dst_rows, ids, rs_head, silu);

    ggml_tensor * taps = ggml_reshape_3d(ctx, ggml_get_rows(ctx, ggml_reshape_2d(ctx, cache_b, (K - 1)*C, n_cells), ids), K - 1, C, n);
    ggml_tensor * sx = ggml_concat(ctx, taps, ggml_transpose(ctx, x), 0);
    ggml_tensor * plain = ggml_ssm_conv(ctx, sx, w);
    if (silu) plain = ggml_silu(ctx, plain);

    ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, fused);
    ggml_build_forward_expand(gf, plain);
    ggml_build_forward_expand(gf, sx);
    ggml_graph_compute_with_ctx(ctx, gf, nth);

    int64_t d = diff_bits((float *) fused->data, (float *) plain->data, C*n);
    // the ring: row rs_head+s holds sx[1..K-1] of each channel
    for (int s = 0; s < n; s++) for (int c = 0; c < C; c++) for (int j = 0; j < K - 1; j++) {
        const float a = ((float *) cache_a->data)[((rs_head + s)*C + c)*(K - 1) + j];
        const float b = *(float *) ((char *) sx->data + s*sx->nb[2] + c*sx->nb[1] + (j + 1)*sx->nb[0]);
        d += memcmp(&a, &b, 4) != 0;
    }
    ggml_free(ctx);
    return d;
}

static int64_t gdn_case(int S, int H, int T, int n, bool kda, bool ids_form, int nth) {
    ggml_init_params ip = { 512u*1024*1024, nullptr, false };
    ggml_context * ctx = ggml_init(ip);
    const int rs_head = 1, n_cells = rs_head + 2*n;
    const int64_t D = (int64_t) S*S*H;
    ggml_tensor * q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, S, H, T, n);
    ggml_tensor * k = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, S, H, T, n);
    ggml_tensor * v = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, S, H, T, n);
    ggml_tensor * g = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, kda ? S : 1, H, T, n);
    ggml_tensor * beta = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 1, H, T, n);
    ggml_tensor * cache_a = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, S, S, H, n_cells);
    fill(q, -1, 1); fill(k, -1, 1); fill(v, -0.3f, 5); fill(g, -20, -1e-4f); fill(beta, 0, 1); fill(cache_a, -1, 1);
    ggml_tensor * cache_b = ggml_dup_tensor(ctx, cache_a);
    memcpy(cache_b->data, cache_a->data, ggml_nbytes(cache_a));
    ggml_tensor * ids = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n);
    fill_ids(ids, rs_head, n);
    if (!ids_form) for (int s = 0; s < n; s++) ((int32_t *) ids->data)[s] = rs_head + n + s; // op A: a gathered state

    ggml_tensor * dst_rows = ggml_view_2d(ctx, cache_a, D, n, cache_a->nb[3], rs_head*cache_a->nb[3]);
    ggml_tensor * state = ggml_reshape_4d(ctx, ggml_get_rows(ctx, ggml_reshape_2d(ctx, cache_b, D, n_cells), ids), S, S, H, n);
    ggml_tensor * fused = ids_form
        ? ggml_gated_delta_net_inplace_ids(ctx, q, k, v, g, beta, cache_a, dst_rows, ids, rs_head)
        : ggml_gated_delta_net_inplace(ctx, q, k, v, g, beta, state, dst_rows);
    ggml_tensor * plain = ggml_gated_delta_net(ctx, q, k, v, g, beta, state, 1);

    ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, plain);
    ggml_build_forward_expand(gf, fused);
    ggml_graph_compute_with_ctx(ctx, gf, nth);

    const int64_t n_attn = (int64_t) S*H*T*n;
    int64_t d = diff_bits((float *) fused->data, (float *) plain->data, n_attn);
    d += diff_bits((float *) cache_a->data + rs_head*D, (float *) plain->data + n_attn, D*n);
    ggml_free(ctx);
    return d;
}


// which order upstream's plain ssm_conv sums the taps in, as this compiler built it: an fma chain, products
// rounded then added in order, or neither (a mix); the native-cpu kernels write the same sum and leave the
// choice to the same compiler
static void plain_conv_order() {
    std::uniform_real_distribution<float> u(-1, 1);
    for (int K = 2; K <= 8; K++) {
        const int C = 1024, n = 2;
        ggml_init_params ip = { 64u*1024*1024, nullptr, false };
        ggml_context * ctx = ggml_init(ip);
        ggml_tensor * sx = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, K, C, n);
        ggml_tensor * w  = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, C);
        fill(sx, -1, 1); fill(w, -1, 1);
        ggml_tensor * y = ggml_ssm_conv(ctx, sx, w);
        ggml_cgraph * gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, y);
        ggml_graph_compute_with_ctx(ctx, gf, 1);
        int fma_ok = 0, muladd_ok = 0;
        for (int s = 0; s < n; s++) for (int c = 0; c < C; c++) {
            const float * a = (float *) sx->data + (s*C + c)*K;
            const float * b = (float *) w->data + c*K;
            float f = 0, m = 0;
            for (int j = 0; j < K; j++) {
                f = fmaf(a[j], b[j], f);
                volatile float p = a[j]*b[j];
                m = m + p;
            }
            const float got = ((float *) y->data)[s*C + c];
            fma_ok    += memcmp(&got, &f, 4) == 0;
            muladd_ok += memcmp(&got, &m, 4) == 0;
        }
        printf("plain ssm_conv, d_conv %d: equals the fma chain at %d of %d outputs, mul-then-add at %d\n", K, fma_ok, C*n, muladd_ok);
        ggml_free(ctx);
    }
}

int main(int argc, char ** argv) {
    if (argc > 1 && strcmp(argv[1], "--plain-conv-order") == 0) {
        plain_conv_order();
        return 0;
    }
    aliasing = argc > 1 && strcmp(argv[1], "--aliasing") == 0;
    int cases = 0, bad = 0;
    for (int K = 2; K <= 8; K++) for (int C : {5, 128, 200, 1024}) for (int n : {1, 2, 3, 5}) for (int nth : {1, 3}) for (bool silu : {false, true}) {
        int64_t d = conv_case(K, C, n, nth, silu);
        cases++;
        if (d) { bad++; printf("conv K=%d C=%d n=%d nth=%d silu=%d: %lld values differ\n", K, C, n, nth, silu, (long long) d); }
    }
    for (int S : {16, 32, 48, 64, 128, 256}) for (int H : {1, 3}) for (int T : {1, 2}) for (int n : {1, 3, 4}) for (bool kda : {false, true}) for (bool idf : {false, true}) {
        if (aliasing && !idf) continue;
        int64_t d = gdn_case(S, H, T, n, kda, idf, 1 + (S + H) % 3);
        cases++;
        if (d) { bad++; printf("gdn S=%d H=%d T=%d n=%d kda=%d ids=%d: %lld values differ\n", S, H, T, n, kda, idf, (long long) d); }
    }
    printf("%s: %d cases, %d with any bit differing\n", aliasing ? "ids aliasing rows of the same node (reference: get_rows of the cache before the node)" : "no aliasing", cases, bad);
    return bad != 0;
}
