// The hand-written series kernels as a reference, for the bit-exactness
// check of the generated native-cuda kernels. Built only when a patched ggml
// tree is given (KG_GGML=<tree> bench/cuda/run.sh): the two kernel sources are
// included from that tree; nothing of it is kept in this repository. Their
// host-side op functions reference the rest of ggml, which is never called,
// so the harness links with unresolved symbols ignored.
#include "ggml-cuda/gated_delta_net.cu"
#include "ggml-cuda/ssm-conv.cu"

#include "kg_harness.h"

namespace {

struct view {
    const kg_launch & l;
    const std::vector<void *> & bufs;
    int64_t p(const char * n) const { return l.params.at(n); }
    uint32_t a(const char * n) const {
        for (size_t i = 0; i < l.arg_names.size(); i++) if (l.arg_names[i] == n) return l.args[i];
        fprintf(stderr, "reference: %s has no arg %s\n", l.key.c_str(), n);
        exit(2);
    }
    template <typename T> T * b(const char * n) const {
        for (size_t i = 0; i < l.bind_names.size(); i++) if (l.bind_names[i] == n) return (T *) bufs[l.bind[i]];
        return nullptr;
    }
};

template <int S_v, bool KDA, bool KEEP, int NW, int CPW>
void gdn(const view & v, cudaStream_t st) {
    const bool ids_op = v.b<int32_t>("ids") != nullptr;
    const float * state = ids_op ? v.b<float>("scratch") : v.b<float>("state");
    const int64_t K = v.l.op == "gated_delta_net" ? v.a("K") : 1;
    launch_gdn_variant<S_v, KDA, KEEP, NW, CPW, 2, false, false>(
        v.b<float>("q"), v.b<float>("k"), v.b<float>("v"), v.b<float>("g"), v.b<float>("beta"), state,
        v.b<float>("dst"), v.b<float>("state_dst"), v.b<int32_t>("ids"), ids_op ? (int) v.a("rs_head") : 0, gdn_hybrid_args{},
        v.a("H"), v.a("n_tokens"), v.a("n_seqs"), v.a("sq1"), v.a("sq2"), v.a("sq3"),
        v.a("sv1"), v.a("sv2"), v.a("sv3"), v.a("sb1"), v.a("sb2"), v.a("sb3"),
        init_fastdiv_values(v.a("neq1")), init_fastdiv_values(v.a("rq3")), kg_f32(v.a("scale")), (int) K, 32, st);
}

template <int S_v, bool KDA, bool KEEP>
bool gdn_tiles(const view & v, cudaStream_t st) {
    const int64_t nw = v.p("NW"), cpw = v.p("CPW");
    if (nw == 4 && cpw == 1) { gdn<S_v, KDA, KEEP, 4, 1>(v, st); return true; }
    if constexpr (S_v == 128) {
        if (nw == 16 && cpw == 8) { gdn<S_v, KDA, KEEP, 16, 8>(v, st); return true; }
        if (nw == 16 && cpw == 4) { gdn<S_v, KDA, KEEP, 16, 4>(v, st); return true; }
    }
    return false;
}

template <int S_v>
bool gdn_sv(const view & v, cudaStream_t st) {
    const bool kda = v.p("KDA") != 0;
    const bool keep = v.l.op == "gated_delta_net" && v.p("KEEP_RS") != 0 && v.a("K") > 1;
    if (kda) return keep ? gdn_tiles<S_v, true, true>(v, st) : gdn_tiles<S_v, true, false>(v, st);
    return keep ? gdn_tiles<S_v, false, true>(v, st) : gdn_tiles<S_v, false, false>(v, st);
}

template <bool SILU, int K>
void conv_update(const view & v, cudaStream_t st) {
    const dim3 grid((v.a("n_ch") + 127) / 128, v.a("n_seqs"));
    if (v.b<int32_t>("ids")) {
        ssm_conv_update_ids_f32<SILU, K><<<grid, 128, 0, st>>>(v.b<float>("scratch"), v.b<float>("conv_kernel"), v.b<float>("x_cur"),
            v.b<float>("conv_state_dst"), v.b<float>("dst"), v.b<int32_t>("ids"), (int) v.a("rs_head"), (int) v.a("n_ch"),
            (int) v.a("cs2"), (int) v.a("w1"), (int) v.a("x2"), (int) v.a("d2"), (int) v.a("sd1"));
    } else {
        ssm_conv_update_f32<SILU, K><<<grid, 128, 0, st>>>(v.b<float>("conv_states"), v.b<float>("conv_kernel"), v.b<float>("x_cur"),
            v.b<float>("conv_state_dst"), v.b<float>("dst"), (int) v.a("n_ch"), (int) v.a("cs2"), (int) v.a("w1"),
            (int) v.a("x2"), (int) v.a("d2"), (int) v.a("sd1"));
    }
}

template <size_t K>
bool plain_conv(const view & v, cudaStream_t st) {
    const uint32_t C = v.a("n_ch");
    if (C % 128 != 0 || v.a("n_t") > 32) return false;
    ssm_conv_f32<false, 128, K><<<dim3(v.a("n_s"), C / 128), 128, 0, st>>>(v.b<float>("sx"), v.b<float>("conv_kernel"), nullptr,
        4, v.a("sx1") * 4, v.a("sx2") * 4, v.a("w1") * 4, v.b<float>("dst"), 4, v.a("d1") * 4, v.a("d2") * 4, v.a("n_t"));
    return true;
}

} // namespace

bool kg_reference_launch(const kg_launch & l, const std::vector<void *> & all, cudaStream_t st) {
    std::vector<void *> bufs;
    const view v{l, all};
    const std::string & op = l.op;
    if (op == "gated_delta_net" || op == "gated_delta_net_inplace" || op == "gated_delta_net_inplace_ids") {
        switch (v.p("S_v")) {
            case 16: return gdn_sv<16>(v, st);
            case 32: return gdn_sv<32>(v, st);
            case 64: return gdn_sv<64>(v, st);
            case 128: return gdn_sv<128>(v, st);
        }
        return false;
    }
    if (op == "gather") {
        // The series gathers every non-identity row (kernelgen only the aliasing ones); op B's
        // gather stands for op D's, the same copy.
        ggml_cuda_gdn_gather_nonident<float>(v.b<float>("cache"), v.b<int32_t>("ids"), (int) v.a("rs_head"), v.b<float>("scratch"),
            v.a("row_len"), v.a("n_seqs"), st);
        return true;
    }
    if (op == "ssm_conv_update_inplace" || op == "ssm_conv_update_inplace_ids") {
        const bool silu = v.p("SILU") != 0;
        switch (v.p("d_conv")) {
            case 3: silu ? conv_update<true, 3>(v, st) : conv_update<false, 3>(v, st); return true;
            case 4: silu ? conv_update<true, 4>(v, st) : conv_update<false, 4>(v, st); return true;
        }
        return false;
    }
    if (op == "ssm_conv") {
        switch (v.p("d_conv")) {
            case 3: return plain_conv<3>(v, st);
            case 4: return plain_conv<4>(v, st);
            case 5: return plain_conv<5>(v, st);
        }
        return false;
    }
    return false;
}
