// The fused GDN node of the family unit (fused_gdn, defined before this file
// is included) against ggml-cpu's unfused path for it: the prior states
// gathered as get_rows does (from the cache as it was before the node), then
// the plain kernel's loops (each step over every row of the transposed
// state before the next, ggml's vector routines), compared bit for bit: the
// attention and the state rows written in place, and the cache rows outside
// the window left as they were. Random shapes from a seed: S_v from 1 to
// 256, GQA and sequence broadcast, KDA, q and k with strides of their own,
// ids that read their own row, another sequence's destination or a row
// outside the window, 1 to 4 threads.
//   usage: unfused_gdn SEED CASES; prints "ok N" or the first difference.
#include <algorithm>
#include <random>
#include <thread>
#include <vector>

static std::mt19937 rng;

static int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

static void fill(std::vector<float> & x, float lo, float hi) {
    std::uniform_real_distribution<float> u(lo, hi);
    for (float & f : x) f = u(rng);
}

// a tensor of ne over data, rows of ne[0] contiguous, strides in elements
static ggml_tensor view(float * data, const int64_t (&ne)[4], const int64_t (&st)[4]) {
    ggml_tensor t;
    memset(&t, 0, sizeof(t));
    t.type = GGML_TYPE_F32;
    for (int d = 0; d < 4; ++d) {
        t.ne[d] = ne[d];
        t.nb[d] = 4 * st[d];
    }
    t.data = data;
    return t;
}

// dense strides of ne, with pad extra elements after each row of dim 0
static void strides(const int64_t (&ne)[4], int64_t pad, int64_t (&st)[4]) {
    st[0] = 1;
    st[1] = ne[0] + pad;
    st[2] = st[1] * ne[1];
    st[3] = st[2] * ne[2];
}

static const float * at(const ggml_tensor & t, int64_t i1, int64_t i2, int64_t i3) {
    return (const float *) ((const char *) t.data + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3]);
}

// ggml-cpu's plain GDN (K = 1) on the gathered prior states: attn [S_v, H,
// T, n], final [S_v*S_v*H, n]
static void unfused(const ggml_tensor & q, const ggml_tensor & k, const ggml_tensor & v, const ggml_tensor & g,
                    const ggml_tensor & beta, const std::vector<float> & prior, std::vector<float> & attn,
                    std::vector<float> & final_state) {
    const int64_t S = v.ne[0], H = v.ne[1], T = v.ne[2], n = v.ne[3];
    const bool kda = g.ne[0] == S;
    const float scale = 1.0f / sqrtf((float) S);
    std::vector<float> delta(S);
    final_state = prior;
    for (int64_t s = 0; s < n; ++s) {
        for (int64_t h = 0; h < H; ++h) {
            float * M = final_state.data() + (s * H + h) * S * S; // row j: column j of the state
            for (int64_t t = 0; t < T; ++t) {
                const float * qd = at(q, h % q.ne[1], t, s / (n / q.ne[3]));
                const float * kd = at(k, h % k.ne[1], t, s / (n / k.ne[3]));
                const float * vd = at(v, h, t, s);
                const float * gd = at(g, h, t, s);
                const float b = *at(beta, h, t, s);
                if (kda) {
                    for (int64_t i = 0; i < S; ++i) delta[i] = expf(gd[i]);
                    for (int64_t j = 0; j < S; ++j) ggml_vec_mul_f32(S, M + j * S, M + j * S, delta.data());
                } else {
                    ggml_vec_scale_f32(S * S, M, expf(gd[0]));
                }
                for (int64_t j = 0; j < S; ++j) {
                    float sum = 0.0f;
                    ggml_vec_dot_f32(S, &sum, 0, M + j * S, 0, kd, 0, 1);
                    delta[j] = (vd[j] - sum) * b;
                }
                for (int64_t j = 0; j < S; ++j) ggml_vec_mad_f32(S, M + j * S, kd, delta[j]);
                for (int64_t j = 0; j < S; ++j) {
                    float sum = 0.0f;
                    ggml_vec_dot_f32(S, &sum, 0, M + j * S, 0, qd, 0, 1);
                    attn[((s * T + t) * H + h) * S + j] = sum * scale;
                }
            }
        }
    }
}

static void run_threads(ggml_tensor * node, int nth) {
    ggml_threadpool pool;
    pool.n = nth;
    pool.arrived = 0;
    pool.generation = 0;
    std::vector<std::thread> threads;
    for (int ith = 0; ith < nth; ++ith) {
        threads.emplace_back([&, ith] {
            ggml_compute_params params = { ith, nth, 0, nullptr, &pool };
            fused_gdn(&params, node);
        });
    }
    for (auto & t : threads) t.join();
}

static int64_t first_diff(const float * a, const float * b, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        if (memcmp(a + i, b + i, 4) != 0) return i;
    }
    return -1;
}

// one random case; false (and a line on stdout) where a value differs
static bool one_case(int c) {
    const int64_t svs[] = { 1, 2, 7, 16, 32, 48, 64, 100, 128, 256 };
    const int64_t S = svs[pick(0, 9)];
    const int64_t hk = pick(1, 3), H = hk * pick(1, 2), T = pick(1, 3);
    const int64_t nq = pick(1, 3), n = nq * pick(1, 2);
    const bool kda = pick(0, 1), ids_form = pick(0, 1);
    const int nth = pick(1, 4);

    const int64_t qne[4] = { S, hk, T, nq };
    int64_t qst[4], kst[4];
    strides(qne, pick(0, 3), qst);
    strides(qne, pick(0, 5), kst); // k has strides of its own
    if (pick(0, 1)) { // and its sequences inside its tokens
        kst[3] = kst[1] * hk;
        kst[2] = kst[3] * nq;
    }
    std::vector<float> qd(qst[3] * nq), kd(std::max(kst[2] * T, kst[3] * nq));
    fill(qd, -1, 1);
    fill(kd, -1, 1);
    const int64_t vne[4] = { S, H, T, n }, gne[4] = { kda ? S : 1, H, T, n }, bne[4] = { 1, H, T, n };
    int64_t vst[4], gst[4], bst[4];
    strides(vne, pick(0, 2), vst);
    strides(gne, 0, gst);
    strides(bne, 0, bst);
    std::vector<float> vd(vst[3] * n), gd(gst[3] * n), bd(bst[3] * n);
    fill(vd, -0.3f, 5);
    fill(gd, -20, -1e-4f);
    fill(bd, 0, 1);

    const int64_t D = S * S * H; // one row of the cache
    const int rs_head = pick(0, 2);
    const int64_t rows = ids_form ? rs_head + n + pick(0, 3) : n;
    std::vector<float> state(rows * D), dst_rows(n * D);
    fill(state, -1, 1);
    fill(dst_rows, -1, 1);
    std::vector<int32_t> ids(n);
    std::vector<float> prior(n * D);
    for (int64_t s = 0; s < n; ++s) {
        const int m = pick(0, 3); // its own row, another's destination, a row outside the window
        ids[s] = m == 0 ? rs_head + s : m == 1 ? rs_head + pick(0, n - 1) : (int32_t) pick(0, rows - 1);
        const float * from = ids_form ? &state[ids[s] * D] : &state[s * D];
        std::copy(from, from + D, &prior[s * D]);
    }
    const std::vector<float> before = state;

    ggml_tensor q = view(qd.data(), qne, qst), k = view(kd.data(), qne, kst), v = view(vd.data(), vne, vst);
    ggml_tensor g = view(gd.data(), gne, gst), beta = view(bd.data(), bne, bst);
    const int64_t cache_ne[4] = { S, S, H, rows }, cache_st[4] = { 1, S, S * S, D };
    ggml_tensor cache = view(state.data(), cache_ne, cache_st);
    const int64_t rows_ne[4] = { D, n, 1, 1 }, rows_st[4] = { 1, D, D * n, D * n };
    ggml_tensor sdst = view(ids_form ? state.data() + rs_head * D : dst_rows.data(), rows_ne, rows_st);
    const int64_t id_ne[4] = { n, 1, 1, 1 }, id_st[4] = { 1, n, n, n };
    ggml_tensor idt = view((float *) ids.data(), id_ne, id_st);
    idt.type = GGML_TYPE_I32;
    const int64_t attn_len = S * H * T * n;
    std::vector<float> out(attn_len + D * n);
    const int64_t len = (int64_t) out.size();
    const int64_t out_ne[4] = { S * H, T * n + S * n, 1, 1 }, out_st[4] = { 1, S * H, len, len };
    ggml_tensor node = view(out.data(), out_ne, out_st);
    ggml_tensor * srcs[8] = { &q, &k, &v, &g, &beta, &cache, &sdst, ids_form ? &idt : nullptr };
    for (int i = 0; i < 8; ++i) node.src[i] = srcs[i];
    node.op_params[0] = 1;
    node.op_params[1] = rs_head;
    run_threads(&node, nth);

    std::vector<float> attn(attn_len), final_state;
    unfused(q, k, v, g, beta, prior, attn, final_state);
    char what[160];
    snprintf(what, sizeof(what), "case %d: S_v %lld, H %lld/%lld, T %lld, n %lld/%lld, KDA %d, ids %d, %d threads",
             c, (long long) S, (long long) H, (long long) hk, (long long) T, (long long) n, (long long) nq, kda, ids_form, nth);
    int64_t i = first_diff(out.data(), attn.data(), attn_len);
    if (i >= 0) {
        printf("%s: attention[%lld] = %a, unfused %a\n", what, (long long) i, out[i], attn[i]);
        return false;
    }
    if ((i = first_diff((const float *) sdst.data, final_state.data(), n * D)) >= 0) {
        printf("%s: state_dst[%lld] = %a, unfused %a\n", what, (long long) i, ((const float *) sdst.data)[i], final_state[i]);
        return false;
    }
    if (ids_form) {
        for (int64_t r = 0; r < rows; ++r) {
            if ((r < rs_head || r >= rs_head + n) && first_diff(&state[r * D], &before[r * D], D) >= 0) {
                printf("%s: cache row %lld outside the window was written\n", what, (long long) r);
                return false;
            }
        }
    }
    return true;
}

int main(int argc, char ** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s SEED CASES\n", argv[0]);
        return 2;
    }
    rng.seed((unsigned) atoi(argv[1]));
    const int n = atoi(argv[2]);
    for (int c = 0; c < n; ++c) {
        if (!one_case(c)) return 1;
    }
    printf("ok %d\n", n);
    return 0;
}
