// Runs the ops step's builders (ggml.c's ggml_ssm_conv_update_impl and
// ggml_gated_delta_net_inplace_impl, included as builders.inc) over a
// stand-in of the ggml.h they use, in which GGML_ASSERT throws the condition
// it checked, and checks that each malformed call is refused by the assert
// naming what is wrong. Written for builders_test.go; the names follow ggml's.
#include "ggml_builders.h"

#include <cstdio>

#include "builders.inc"

static ggml_context ctx;

static ggml_tensor * t(ggml_type type, int64_t n0, int64_t n1 = 1, int64_t n2 = 1, int64_t n3 = 1) {
    const int64_t ne[4] = { n0, n1, n2, n3 };
    return ggml_new_tensor(&ctx, type, 4, ne);
}

// a decode step's tensors: S_v 64, 4 heads, 1 token, 3 sequences over a cache of 8 rows
struct gdn_args {
    ggml_tensor * q = t(GGML_TYPE_F32, 64, 4, 1, 3), * k = t(GGML_TYPE_F32, 64, 4, 1, 3), * v = t(GGML_TYPE_F32, 64, 4, 1, 3);
    ggml_tensor * g = t(GGML_TYPE_F32, 1, 4, 1, 3), * beta = t(GGML_TYPE_F32, 1, 4, 1, 3);
    ggml_tensor * cache = t(GGML_TYPE_F32, 64, 64, 4, 8), * state_dst = t(GGML_TYPE_F32, 64*64*4, 3);
    ggml_tensor * ids = t(GGML_TYPE_I32, 3);
    int rs_head = 5;
};

// d_conv 4, 16 channels, 3 sequences over a cache of 8 rows
struct conv_args {
    ggml_tensor * taps = t(GGML_TYPE_F32, 3, 16, 8), * w = t(GGML_TYPE_F32, 4, 16), * x = t(GGML_TYPE_F32, 16, 1, 3);
    ggml_tensor * ring = t(GGML_TYPE_F32, 3*16, 3), * ids = t(GGML_TYPE_I32, 3);
    int rs_head = 5;
};

static int failures = 0;

template <typename F> static void expect(const char * what, F build, const char * want) {
    std::string got;
    try {
        build();
    } catch (const std::string & cond) {
        got = cond;
    }
    if (got != want) {
        printf("FAIL %s: %s, want GGML_ASSERT(%s)\n", what, got.empty() ? "built" : ("GGML_ASSERT(" + got + ")").c_str(), want);
        failures++;
    }
}

static void gdn(const gdn_args & a) {
    ggml_gated_delta_net_inplace_ids(&ctx, a.q, a.k, a.v, a.g, a.beta, a.cache, a.state_dst, a.ids, a.rs_head);
}
static void conv(const conv_args & a) {
    ggml_ssm_conv_update_inplace_ids(&ctx, a.taps, a.w, a.x, a.ring, a.ids, a.rs_head, true);
}

int main() {
    expect("a well-formed GDN node", [] { gdn(gdn_args()); }, "");
    expect("a well-formed conv node", [] { conv(conv_args()); }, "");
    expect("GDN with S_k 32, S_v 64", [] { gdn_args a; a.q = t(GGML_TYPE_F32, 32, 4, 1, 3); a.k = t(GGML_TYPE_F32, 32, 4, 1, 3); gdn(a); }, "q->ne[0] == S_v");
    expect("GDN with k of other strides than q", [] { gdn_args a; a.k = t(GGML_TYPE_F32, 64, 4, 1, 3); a.k->nb[1] *= 2; a.k->nb[2] *= 2; a.k->nb[3] *= 2; gdn(a); }, "ggml_are_same_stride(q, k)");
    expect("GDN with k of another shape than q", [] { gdn_args a; a.k = t(GGML_TYPE_F32, 64, 2, 1, 3); gdn(a); }, "ggml_are_same_shape(q, k)");
    expect("GDN with a gate of 2 tokens", [] { gdn_args a; a.g = t(GGML_TYPE_F32, 1, 4, 2, 3); gdn(a); }, "g->ne[2] == n_tokens");
    expect("GDN with beta of 2 heads", [] { gdn_args a; a.beta = t(GGML_TYPE_F32, 1, 2, 1, 3); gdn(a); }, "beta->ne[1] == H");
    expect("GDN with 4 ids for 3 sequences", [] { gdn_args a; a.ids = t(GGML_TYPE_I32, 4); gdn(a); }, "ids->ne[0] == n_seqs");
    expect("GDN with a negative rs_head", [] { gdn_args a; a.rs_head = -1; gdn(a); }, "rs_head >= 0");
    expect("GDN writing rows 6..8 of an 8-row cache", [] { gdn_args a; a.rs_head = 6; gdn(a); }, "rs_head + n_seqs <= state->ne[3]");
    expect("conv with a strided x", [] { conv_args a; a.x->nb[0] = 8; conv(a); }, "x_cur->nb[0] == sizeof(float)");
    expect("conv with a strided kernel", [] { conv_args a; a.w->nb[0] = 8; conv(a); }, "conv_kernel->nb[0] == sizeof(float)");
    expect("conv with 4 ids for 3 sequences", [] { conv_args a; a.ids = t(GGML_TYPE_I32, 4); conv(a); }, "ids->ne[0] == n_s");
    expect("conv with a negative rs_head", [] { conv_args a; a.rs_head = -2; conv(a); }, "rs_head >= 0");
    expect("conv writing rows 6..8 of an 8-row cache", [] { conv_args a; a.rs_head = 6; conv(a); }, "rs_head + n_s <= conv_states->ne[2]");
    expect("conv with a cache of 2 taps for d_conv 4", [] { conv_args a; a.taps = t(GGML_TYPE_F32, 2, 16, 8); conv(a); }, "conv_states->ne[0] == d_conv - 1");
    printf("%d failures\n", failures);
    return failures != 0;
}
