// Benchmarks of the generated CUDA kernels beside the hand-written series
// kernels (when built with KG_WITH_REFERENCE and a ggml tree), in one
// process, with the device-to-device copy rate measured in the same run.
// State pools are far larger than the H100's 50 MB L2 and every repetition
// moves to other rows, so DRAM traffic is what is measured.
#include "kg_harness.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <tuple>

#include "gated_delta_net.cuh"
#include "gather.cuh"
#include "gated_delta_net_inplace_ids.cuh"
#include "ssm_conv.cuh"
#include "ssm_conv_update_inplace.cuh"
#include "ssm_conv_update_inplace_ids.cuh"
#include "chain_gather.cuh"
#include "gated_delta_net_inplace_ids_chained.cuh"
#include "ssm_conv_update_inplace_ids_chained.cuh"
#include "gated_delta_net_inplace_ids_batched.cuh"
#include "gated_delta_net_block_gather.cuh"
#include "gated_delta_net_inplace_ids_blocks.cuh"

#ifdef KG_WITH_REFERENCE
#include "ggml-cuda/gated_delta_net.cu"
#include "ggml-cuda/ssm-conv.cu"
#endif

namespace {

constexpr int kReps = 30;
constexpr int kBlocks = 5; // timed blocks of kReps; the median is reported

__global__ void kg_empty() {}

// kg_stream is where the benchmark's launches go: the legacy stream, or the
// stream a graph is captured from.
cudaStream_t kg_stream = 0;

// kg_soft reports a failed call without ending the run (graph capture is
// timed on the side; a driver that cannot capture loses only those rows).
bool kg_soft(cudaError_t err, const char * what) {
    if (err == cudaSuccess) return true;
    fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(err));
    cudaGetLastError();
    return false;
}

double median(std::vector<double> xs) {
    std::sort(xs.begin(), xs.end());
    const size_t m = xs.size() / 2;
    return xs.size() % 2 ? xs[m] : (xs[m - 1] + xs[m]) / 2;
}

// Every generated kernel launches on the grid and block its header's
// <name>_grid and <name>_block give (the IR's, emit/cuda.GridName): the
// harness never repeats them.
constexpr int kSv = 128;

struct timer {
    cudaEvent_t a, b;
    timer() { KG_CHECK(cudaEventCreate(&a)); KG_CHECK(cudaEventCreate(&b)); }
    // us: per repetition, the median of kBlocks blocks of kReps launched
    // from the host between two events, after a warm-up block. f(rep) for
    // rep in 1..kReps runs one repetition (f(0) is spare).
    template <typename F> double us(F && f) {
        for (int i = 0; i < kReps; i++) f(i + 1); // warm-up
        KG_CHECK(cudaDeviceSynchronize());
        std::vector<double> t;
        for (int blk = 0; blk < kBlocks; blk++) {
            KG_CHECK(cudaEventRecord(a, kg_stream));
            for (int i = 0; i < kReps; i++) f(i + 1);
            KG_CHECK(cudaEventRecord(b, kg_stream));
            KG_CHECK(cudaEventSynchronize(b));
            float ms;
            KG_CHECK(cudaEventElapsedTime(&ms, a, b));
            KG_CHECK(cudaGetLastError());
            t.push_back(1000.0 * ms / kReps);
        }
        return median(t);
    }
    // graph_us: the same kReps repetitions captured once into a CUDA graph
    // (programmatic launches become programmatic edges), replayed: per
    // repetition, the median of kBlocks replays after a warm-up replay. This
    // is how ggml-cuda runs a decode step (CUDA graphs), with no host launch
    // cost in the timed interval. NaN if the driver cannot capture.
    template <typename F> double graph_us(F && f) {
        cudaStream_t s;
        KG_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        const cudaStream_t prev = kg_stream;
        kg_stream = s;
        double res = NAN;
        cudaGraph_t g = nullptr;
        cudaGraphExec_t ge = nullptr;
        if (kg_soft(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "graph capture")) {
            for (int i = 0; i < kReps; i++) f(i + 1);
            if (kg_soft(cudaStreamEndCapture(s, &g), "graph capture") &&
                kg_soft(cudaGraphInstantiate(&ge, g, 0), "graph instantiate") &&
                kg_soft(cudaGraphLaunch(ge, s), "graph launch") && kg_soft(cudaStreamSynchronize(s), "graph run")) {
                std::vector<double> t;
                for (int blk = 0; blk < kBlocks; blk++) {
                    KG_CHECK(cudaEventRecord(a, s));
                    KG_CHECK(cudaGraphLaunch(ge, s));
                    KG_CHECK(cudaEventRecord(b, s));
                    KG_CHECK(cudaEventSynchronize(b));
                    float ms;
                    KG_CHECK(cudaEventElapsedTime(&ms, a, b));
                    t.push_back(1000.0 * ms / kReps);
                }
                res = median(t);
            }
        }
        if (ge) cudaGraphExecDestroy(ge);
        if (g) cudaGraphDestroy(g);
        KG_CHECK(cudaStreamDestroy(s));
        kg_stream = prev;
        return res;
    }
};

// dev_f32: n random values in [-1, 1); past 4 Mi elements the first 4 Mi
// repeat (pools of up to 24 GiB fill in a second, and are never zeros).
float * dev_f32(size_t n, uint32_t seed) {
    const size_t m = std::min<size_t>(n, size_t(1) << 22);
    std::vector<float> h(m);
    std::mt19937 r(seed);
    std::uniform_real_distribution<float> d(-1, 1);
    for (auto & x : h) x = d(r);
    float * p;
    KG_CHECK(cudaMalloc(&p, n * 4));
    KG_CHECK(cudaMemcpy(p, h.data(), m * 4, cudaMemcpyHostToDevice));
    for (size_t off = m; off < n; off += m) KG_CHECK(cudaMemcpy(p + off, p, std::min(m, n - off) * 4, cudaMemcpyDeviceToDevice));
    return p;
}

int32_t * dev_i32(const std::vector<int32_t> & h) {
    int32_t * p;
    KG_CHECK(cudaMalloc(&p, h.size() * 4 + 4));
    KG_CHECK(cudaMemcpy(p, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
    return p;
}

double copy_rate_gbs() {
    const size_t bytes = size_t(1) << 30;
    void *a, *b;
    KG_CHECK(cudaMalloc(&a, bytes));
    KG_CHECK(cudaMalloc(&b, bytes));
    timer t;
    const double us = t.us([&](int) { KG_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); });
    KG_CHECK(cudaFree(a));
    KG_CHECK(cudaFree(b));
    return 2.0 * bytes / (us * 1e3); // read + write, GB/s
}

// One GDN op B problem: H heads, n sequences, a pool of slots; the
// destination window moves by n every repetition.
struct gdn_problem {
    int H, n, slots;
    size_t D;
    float *q, *k, *v, *g, *beta, *cache, *scratch, *dst;
    int32_t * ids[kReps + 1];      // steady decode: identity
    int32_t * permuted[kReps + 1]; // the window rotated by one: every source another sequence's destination
    int32_t * shuffled[kReps + 1]; // drawn from the whole pool: rarely in the window
    gdn_problem(int H_, int n_) : H(H_), n(n_) {
        D = size_t(kSv) * kSv * H;
        slots = std::max(n * (kReps + 2), int((size_t(1) << 30) / (D * 4)));
        q = dev_f32(size_t(kSv) * H * n, 1);
        k = dev_f32(size_t(kSv) * H * n, 2);
        v = dev_f32(size_t(kSv) * H * n, 3);
        g = dev_f32(size_t(H) * n, 4);
        beta = dev_f32(size_t(H) * n, 5);
        cache = dev_f32(D * slots, 6);
        KG_CHECK(cudaMalloc(&scratch, D * n * 4));
        KG_CHECK(cudaMalloc(&dst, (size_t(kSv) * H * n + D * n) * 4));
        std::mt19937 r(7);
        for (int rep = 0; rep <= kReps; rep++) {
            std::vector<int32_t> h(n), rot(n);
            for (int s = 0; s < n; s++) h[s] = rep_head(rep) + s;
            for (int s = 0; s < n; s++) rot[s] = rep_head(rep) + (s + 1) % n;
            std::vector<int32_t> perm(slots);
            std::iota(perm.begin(), perm.end(), 0);
            std::shuffle(perm.begin(), perm.end(), r);
            perm.resize(n);
            ids[rep] = dev_i32(h);
            permuted[rep] = dev_i32(rot);
            shuffled[rep] = dev_i32(perm);
        }
    }
    ~gdn_problem() {
        for (void * p : {(void *) q, (void *) k, (void *) v, (void *) g, (void *) beta, (void *) cache, (void *) scratch, (void *) dst}) cudaFree(p);
        for (auto * set : {&ids, &permuted, &shuffled})
            for (int32_t * p : *set) cudaFree(p);
    }
    // ids_of: the ids of repetition rep under a pattern.
    const int32_t * ids_of(const char * pattern, int rep) const {
        if (!strcmp(pattern, "permuted")) return permuted[rep];
        if (!strcmp(pattern, "shuffled")) return shuffled[rep];
        return ids[rep];
    }
    int rep_head(int rep) const { return (rep * n) % (slots - n); }
    double bytes() const { return 2.0 * D * n * 4; } // state read + written
};

// The generated pair, both launched with programmatic dependent launch as
// ggml-cuda launches its kernels: the compute kernel overlaps the gather and
// waits for it only where the IR says (DepWait).
template <int NW, int CPW>
void gdn_generated(const gdn_problem & p, int rep, bool gather = true, const char * pattern = "identity") {
    const int rs = p.rep_head(rep);
    const int32_t * ids = p.ids_of(pattern, rep);
    if (gather && p.n >= 2) { // the glue leaves it out at one sequence (ops.Guard)
        kg_launch_pdl(gather_f32, gather_grid(p.D, p.n), gather_block(), kg_stream,
            p.cache, ids, p.scratch, (uint32_t) p.D, (uint32_t) p.n, (uint32_t) rs);
    }
    const float scale = 1.0f / sqrtf((float) kSv);
    const uint32_t H = p.H, n = p.n;
    kg_launch_pdl(gated_delta_net_inplace_ids_f32<kSv, false, NW, CPW>, gated_delta_net_inplace_ids_grid<kSv, false, NW, CPW>(H, n),
        gated_delta_net_inplace_ids_block<kSv, false, NW, CPW>(), kg_stream,
        p.q, p.k, p.v, p.g, p.beta, p.cache, p.dst, p.cache + size_t(rs) * p.D, ids, p.scratch,
        H, 1u, n, H, 1u, (uint32_t) kSv, kSv * H, kSv * H, (uint32_t) kSv, kSv * H, kSv * H, 1u, H, H, 1u, H, H, scale,
        (uint32_t) p.D, (uint32_t) rs);
}

// The generated gather alone with every row aliasing (permuted ids): the
// copy the cliff of issue #21 was, timed on its own.
void gdn_gather_only(const gdn_problem & p, int rep) {
    kg_launch_pdl(gather_f32, gather_grid(p.D, p.n), gather_block(), kg_stream,
        p.cache, p.permuted[rep], p.scratch, (uint32_t) p.D, (uint32_t) p.n, (uint32_t) p.rep_head(rep));
}

// gather_check: the timed gather, run once more with every row aliasing,
// copied exactly: scratch row s equals cache row ids[s], bit for bit. The
// device-side check of what the timing runs (the kernel's own tests run it
// on the host: emit/goref, verify/emulate).
bool gather_check(const gdn_problem & p) {
    const int rep = 1;
    KG_CHECK(cudaMemset(p.scratch, 0xff, p.D * p.n * 4));
    gdn_gather_only(p, rep);
    KG_CHECK(cudaDeviceSynchronize());
    std::vector<uint32_t> got(p.D), want(p.D);
    for (int s = 0; s < p.n; s++) {
        const size_t src = size_t(p.rep_head(rep) + (s + 1) % p.n);
        KG_CHECK(cudaMemcpy(got.data(), p.scratch + size_t(s) * p.D, p.D * 4, cudaMemcpyDeviceToHost));
        KG_CHECK(cudaMemcpy(want.data(), p.cache + src * p.D, p.D * 4, cudaMemcpyDeviceToHost));
        if (got != want) {
            fprintf(stderr, "gather check: H %d n %d: scratch row %d differs from cache row %zu\n", p.H, p.n, s, src);
            return false;
        }
    }
    return true;
}


// Experiment (issue #21, every source aliasing): op B where each sequence
// reads another's destination (the window rotated by one). Today's schedule
// copies every aliasing row to scratch first (2x the op's bytes). The
// schedule modelled here copies one row per permutation cycle and orders
// the rest: a block takes a ticket (atomicAdd, so every smaller ticket's
// block has started, the forward-progress argument of decoupled look-back),
// tickets run sequence-major, a block flags its source slice read once its
// state is in registers and used, and waits, before storing, for the flag
// of the block that reads its destination slice (sequence s - 1, same head
// and columns; sequence n - 1 reads the cycle's one copied row). kg_gdn_model
// is a timing model of the generated kernel's work (S_v 128, KDA off, the
// same loads, recurrence and reductions, (NW, CPW) as the glue's tiling),
// not a checked kernel; CYCLE false is its identity-ids baseline.
__device__ __forceinline__ unsigned long long kg_ld_acquire(const unsigned long long * p) {
    unsigned long long v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void kg_st_release(unsigned long long * p, unsigned long long v) {
    asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

template <int NW, int CPW, bool CYCLE>
__global__ void __launch_bounds__(32 * NW, 2) kg_gdn_model(const float * q, const float * k, const float * v, const float * g,
        const float * beta, float * cache, const int32_t * ids, const float * scratch, float * dst, uint32_t H, uint32_t n,
        uint32_t rs, unsigned long long * ticket, unsigned long long * flags) {
    constexpr uint32_t S_v = 128, W = 32, R = 4, Z = S_v / (NW * CPW), block = S_v * S_v;
    const uint32_t total = H * n * Z;
    __shared__ unsigned long long t_sh;
    unsigned long long t = blockIdx.x;
    if (CYCLE) {
        if (threadIdx.x == 0 && threadIdx.y == 0) t_sh = atomicAdd(ticket, 1ull);
        __syncthreads();
        t = t_sh;
    }
    const uint32_t local = (uint32_t) (t % total);
    const unsigned long long launch = t / total + 1;
    const uint32_t s = local / (H * Z), h = (local / Z) % H, z = local % Z;
    const uint32_t lane = threadIdx.x, col0 = z * (NW * CPW) + threadIdx.y;
    const float * from = cache + ((size_t) ids[s] * H + h) * block;
    if (CYCLE && s == n - 1) from = scratch + (size_t) h * block; // the cycle's one copied row
    float sh[CPW * R];
#pragma unroll
    for (uint32_t cc = 0; cc < CPW; cc++)
#pragma unroll
        for (uint32_t r = 0; r < R; r++) sh[cc * R + r] = from[(col0 + cc * NW) * S_v + r * W + lane];
    const uint32_t qk = (s * H + h) * S_v;
    float q_reg[R], k_reg[R];
#pragma unroll
    for (uint32_t r = 0; r < R; r++) {
        q_reg[r] = q[qk + r * W + lane];
        k_reg[r] = k[qk + r * W + lane];
    }
    const float gate = expf(g[s * H + h]), beta_t = beta[s * H + h];
#pragma unroll
    for (uint32_t cc = 0; cc < CPW; cc++) {
        const uint32_t col = col0 + cc * NW;
        float kv = 0;
#pragma unroll
        for (uint32_t r = 0; r < R; r++) {
            sh[cc * R + r] *= gate;
            kv += sh[cc * R + r] * k_reg[r];
        }
#pragma unroll
        for (uint32_t o = W / 2; o > 0; o >>= 1) kv += __shfl_xor_sync(0xffffffffu, kv, o);
        const float delta = (v[qk + col] - kv) * beta_t;
        float attn = 0;
#pragma unroll
        for (uint32_t r = 0; r < R; r++) {
            sh[cc * R + r] += k_reg[r] * delta;
            attn += sh[cc * R + r] * q_reg[r];
        }
#pragma unroll
        for (uint32_t o = W / 2; o > 0; o >>= 1) attn += __shfl_xor_sync(0xffffffffu, attn, o);
        if (lane == 0) dst[qk + col] = attn * 0.08838835f;
    }
    if (CYCLE) {
        __syncthreads(); // every warp has read (and used) its slice of the source
        if (threadIdx.x == 0 && threadIdx.y == 0) {
            __threadfence();
            kg_st_release(&flags[local], launch);
            if (s > 0) { // sequence s - 1 reads this block's destination slice
                const unsigned long long * f = &flags[local - H * Z];
                while (kg_ld_acquire(f) < launch) __nanosleep(20);
            }
        }
        __syncthreads();
    }
    float * to = cache + ((size_t) (rs + s) * H + h) * block;
#pragma unroll
    for (uint32_t cc = 0; cc < CPW; cc++)
#pragma unroll
        for (uint32_t r = 0; r < R; r++) to[(col0 + cc * NW) * S_v + r * W + lane] = sh[cc * R + r];
}

struct cycle_state {
    unsigned long long *ticket, *flags;
    explicit cycle_state(const gdn_problem & p) {
        KG_CHECK(cudaMalloc(&ticket, 8));
        KG_CHECK(cudaMalloc(&flags, size_t(p.H) * p.n * kSv * 8));
        KG_CHECK(cudaMemset(ticket, 0, 8));
        KG_CHECK(cudaMemset(flags, 0, size_t(p.H) * p.n * kSv * 8));
    }
    ~cycle_state() { cudaFree(ticket); cudaFree(flags); }
};

// gdn_model: the model at (16, 4), the glue's tiling above one sequence;
// cycle: permuted ids, the one copy (row rs_head, read by sequence n - 1)
// then the ordered compute; else identity ids.
void gdn_model(const gdn_problem & p, int rep, bool cycle, const cycle_state & cs) {
    constexpr int NW = 16, CPW = 4;
    const int rs = p.rep_head(rep);
    const dim3 grid(p.H * p.n * (kSv / (NW * CPW))), blk(32, NW);
    if (cycle) {
        KG_CHECK(cudaMemcpyAsync(p.scratch, p.cache + size_t(rs) * p.D, p.D * 4, cudaMemcpyDeviceToDevice, kg_stream));
        kg_gdn_model<NW, CPW, true><<<grid, blk, 0, kg_stream>>>(p.q, p.k, p.v, p.g, p.beta, p.cache, p.permuted[rep], p.scratch, p.dst,
            (uint32_t) p.H, (uint32_t) p.n, (uint32_t) rs, cs.ticket, cs.flags);
    } else {
        kg_gdn_model<NW, CPW, false><<<grid, blk, 0, kg_stream>>>(p.q, p.k, p.v, p.g, p.beta, p.cache, p.ids[rep], p.scratch, p.dst,
            (uint32_t) p.H, (uint32_t) p.n, (uint32_t) rs, cs.ticket, cs.flags);
    }
}

#ifdef KG_WITH_REFERENCE
void gdn_reference(const gdn_problem & p, int rep, const char * pattern = "identity") {
    const int rs = p.rep_head(rep);
    const int32_t * ids = p.ids_of(pattern, rep);
    ggml_cuda_gdn_gather_nonident<float>(p.cache, ids, rs, p.scratch, p.D, p.n, kg_stream);
    launch_gdn_variant<kSv, false, false, GDN_DEFAULT_NW, GDN_DEFAULT_CPW, 2, false, false>(
        p.q, p.k, p.v, p.g, p.beta, p.scratch, p.dst, p.cache + size_t(rs) * p.D, ids, rs, gdn_hybrid_args{},
        p.H, 1, p.n, kSv, kSv * p.H, kSv * p.H, kSv, kSv * p.H, kSv * p.H, 1, p.H, p.H,
        init_fastdiv_values(p.H), init_fastdiv_values(1), 1.0f / sqrtf((float) kSv), 1, 32, kg_stream);
}
#endif

// One conv op D problem: C channels, d_conv 4, SiLU; ids a random
// permutation of pool cells (shuffled), the destination window moving.
struct conv_problem {
    int C, n, cells;
    size_t row;
    float *w, *x, *cache, *scratch, *dst, *states;
    int32_t * ids[kReps + 1];      // shuffled over the pool
    int32_t * permuted[kReps + 1]; // the window rotated by one
    int32_t * identity[kReps + 1]; // steady decode
    conv_problem(int C_, int n_) : C(C_), n(n_) {
        row = size_t(3) * C;
        cells = std::max(n * (kReps + 2), int((size_t(1) << 29) / (row * 4)));
        w = dev_f32(size_t(4) * C, 11);
        x = dev_f32(size_t(C) * n, 12);
        cache = dev_f32(row * cells, 13);
        states = dev_f32(row * n, 14);
        KG_CHECK(cudaMalloc(&scratch, row * n * 4));
        KG_CHECK(cudaMalloc(&dst, size_t(C) * n * 4));
        std::mt19937 r(99);
        for (int rep = 0; rep <= kReps; rep++) {
            std::vector<int32_t> perm(cells);
            std::iota(perm.begin(), perm.end(), 0);
            std::shuffle(perm.begin(), perm.end(), r);
            perm.resize(n);
            ids[rep] = dev_i32(perm);
            std::vector<int32_t> rot(n), h(n);
            for (int s = 0; s < n; s++) rot[s] = rep_head(rep) + (s + 1) % n;
            for (int s = 0; s < n; s++) h[s] = rep_head(rep) + s;
            permuted[rep] = dev_i32(rot);
            identity[rep] = dev_i32(h);
        }
    }
    ~conv_problem() {
        for (void * p : {(void *) w, (void *) x, (void *) cache, (void *) scratch, (void *) dst, (void *) states}) cudaFree(p);
        for (auto * set : {&ids, &permuted, &identity})
            for (int32_t * p : *set) cudaFree(p);
    }
    const int32_t * ids_of(const char * pattern, int rep) const {
        if (!strcmp(pattern, "permuted")) return permuted[rep];
        if (!strcmp(pattern, "identity")) return identity[rep];
        return ids[rep];
    }
    int rep_head(int rep) const { return (rep * n) % (cells - n); }
    double bytes() const { return 2.0 * row * n * 4; } // taps read + written
};

void conv_ids_generated(const conv_problem & p, int rep, const char * pattern = "shuffled") {
    const uint32_t rs = p.rep_head(rep), C = p.C, n = p.n, row = p.row;
    const int32_t * ids = p.ids_of(pattern, rep);
    if (n >= 2) { // the glue leaves it out at one sequence (ops.Guard)
        kg_launch_pdl(gather_f32, gather_grid(p.row, p.n), gather_block(), kg_stream, p.cache, ids, p.scratch, row, n, rs);
    }
    kg_launch_pdl(ssm_conv_update_inplace_ids_f32<4u, true>, ssm_conv_update_inplace_ids_grid<4u, true>(C, n), ssm_conv_update_inplace_ids_block<4u, true>(), kg_stream,
        p.cache, p.w, p.x, p.cache + size_t(rs) * p.row, ids, p.scratch, p.dst, C, n, 3u, row, 4u, C, row, C, rs);
}

// Op C reads its taps from a gathered copy in the model; here from rows of
// the same pool, away from the destination window, so both ops read DRAM.
const float * conv_states_of(const conv_problem & p, int rep) {
    return p.cache + size_t((p.rep_head(rep) + p.cells / 2) % (p.cells - p.n)) * p.row;
}

void conv_plain_generated(const conv_problem & p, int rep) {
    const uint32_t rs = p.rep_head(rep), C = p.C, n = p.n, row = p.row;
    kg_launch_pdl(ssm_conv_update_inplace_f32<4u, true>, ssm_conv_update_inplace_grid<4u, true>(C, n), ssm_conv_update_inplace_block<4u, true>(), kg_stream,
        conv_states_of(p, rep), p.w, p.x, p.cache + size_t(rs) * p.row, p.dst, C, n, 3u, row, 4u, C, row, C);
}

#ifdef KG_WITH_REFERENCE
void conv_ids_reference(const conv_problem & p, int rep, const char * pattern = "shuffled") {
    const int rs = p.rep_head(rep);
    const int32_t * ids = p.ids_of(pattern, rep);
    ssm_conv_gather_nonident_kernel<<<p.n, 256, 0, kg_stream>>>(p.cache, ids, rs, p.scratch, (int) p.row, p.n);
    ssm_conv_update_ids_f32<true, 4><<<dim3((p.C + 127) / 128, p.n), 128, 0, kg_stream>>>(p.scratch, p.w, p.x, p.cache + size_t(rs) * p.row, p.dst,
        ids, rs, p.C, (int) p.row, 4, p.C, p.C, (int) p.row);
}

void conv_plain_reference(const conv_problem & p, int rep) {
    const int rs = p.rep_head(rep);
    ssm_conv_update_f32<true, 4><<<dim3((p.C + 127) / 128, p.n), 128, 0, kg_stream>>>(conv_states_of(p, rep), p.w, p.x, p.cache + size_t(rs) * p.row, p.dst,
        p.C, (int) p.row, 4, p.C, p.C, (int) p.row);
}
#endif

// One GDN layer's decode step (T 1, identity ids: steady decode), the part
// the fused nodes replace: the conv state update and the GDN state update.
// Unfused, as the upstream graph runs it (llama.cpp's delta-net layer):
// get_rows of the conv states, concat with the new token's channels,
// ssm_conv, silu, cpy of the last d_conv-1 taps back into the cache; get_rows
// of the GDN states, gated_delta_net (final state into its dst), cpy of that
// state back into the cache. ggml's get_rows, concat, silu and cpy are stood
// in for by the plain one-element-per-thread kernels below (ggml's are of
// that kind); ssm_conv and gated_delta_net are the generated native-cuda
// kernels, bit for bit ggml-cuda's (bench/RESULTS.md), launched in stream
// order as ggml-cuda launches its non-fused kernels. Fused: op D and op B
// as the glue launches them. The projections, norms and gating around them
// are the same in both graphs and are left out.
__global__ void kg_get_rows(const float * src, const int32_t * ids, float * dst, uint32_t row) {
    const size_t from = (size_t) ids[blockIdx.y] * row, to = (size_t) blockIdx.y * row;
    for (uint32_t e = blockIdx.x * blockDim.x + threadIdx.x; e < row; e += gridDim.x * blockDim.x) dst[to + e] = src[from + e];
}

__global__ void kg_copy(const float * src, float * dst, size_t n) {
    for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x) dst[i] = src[i];
}

// conv_in[s][c] = (the d_conv-1 = 3 gathered taps of channel c, x[s][c]).
__global__ void kg_concat_taps(const float * taps, const float * x, float * conv_in, uint32_t C, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 4 * C * n) return;
    const uint32_t j = i % 4, sc = i / 4;
    conv_in[i] = j < 3 ? taps[sc * 3 + j] : x[sc];
}

// cache window[s][c] = the last three taps of conv_in[s][c].
__global__ void kg_store_taps(const float * conv_in, float * window, uint32_t C, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 3 * C * n) return;
    const uint32_t j = i % 3, sc = i / 3;
    window[i] = conv_in[sc * 4 + 1 + j];
}

__global__ void kg_silu(const float * x, float * y, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] / (1.0f + expf(-x[i]));
}

unsigned kg_blocks(size_t n) { return (unsigned) std::min<size_t>((n + 255) / 256, 65535); }

struct layer_problem {
    gdn_problem & g;
    conv_problem & c;
    float *conv_in, *act;
    layer_problem(gdn_problem & g_, conv_problem & c_) : g(g_), c(c_) {
        KG_CHECK(cudaMalloc(&conv_in, size_t(4) * c.C * c.n * 4));
        KG_CHECK(cudaMalloc(&act, size_t(c.C) * c.n * 4));
    }
    ~layer_problem() { cudaFree(conv_in); cudaFree(act); }
    double bytes() const { return g.bytes() + c.bytes(); } // the states' fewest bytes
};

void layer_unfused(const layer_problem & l, int rep) {
    const conv_problem & c = l.c;
    const gdn_problem & g = l.g;
    const uint32_t C = c.C, n = c.n, H = g.H;
    const int32_t * cids = c.identity[rep];
    kg_get_rows<<<dim3(kg_blocks(c.row), n), 256, 0, kg_stream>>>(c.cache, cids, c.scratch, (uint32_t) c.row);
    kg_concat_taps<<<kg_blocks(size_t(4) * C * n), 256, 0, kg_stream>>>(c.scratch, c.x, l.conv_in, C, n);
    kg_store_taps<<<kg_blocks(size_t(3) * C * n), 256, 0, kg_stream>>>(l.conv_in, c.cache + size_t(c.rep_head(rep)) * c.row, C, n);
    ssm_conv_f32<4u><<<ssm_conv_grid<4u>(C, 1u, n), ssm_conv_block<4u>(), 0, kg_stream>>>(l.conv_in, c.w, c.dst, C, 1u, n, 4u, 4 * C, 4u, C, C);
    kg_silu<<<kg_blocks(size_t(C) * n), 256, 0, kg_stream>>>(c.dst, l.act, C * n);
    kg_get_rows<<<dim3(kg_blocks(g.D), n), 256, 0, kg_stream>>>(g.cache, g.ids[rep], g.scratch, (uint32_t) g.D);
    const uint32_t s_off = kSv * H * n;
    gated_delta_net_f32<kSv, false, false, 16, 4><<<gated_delta_net_grid<kSv, false, false, 16, 4>(H, n), gated_delta_net_block<kSv, false, false, 16, 4>(), 0, kg_stream>>>(
        g.q, g.k, g.v, g.g, g.beta, g.scratch, g.dst, H, 1u, n, H, 1u, (uint32_t) kSv, kSv * H, kSv * H, (uint32_t) kSv, kSv * H, kSv * H,
        1u, H, H, 1u, H, H, 1.0f / sqrtf((float) kSv), 1u, s_off);
    kg_copy<<<kg_blocks(g.D * n), 256, 0, kg_stream>>>(g.dst + s_off, g.cache + size_t(g.rep_head(rep)) * g.D, g.D * n);
}

void layer_fused(const layer_problem & l, int rep) {
    conv_ids_generated(l.c, rep, "identity");
    if (l.g.n == 1) gdn_generated<8, 2>(l.g, rep); // the glue's small-n tiling (ops.GDNSmallTiling)
    else gdn_generated<16, 4>(l.g, rep);
}


// experiments: `kg_bench CSV exp`: the gather's workgroup cap (ops/gather.go,
// named in each row) on ops B and D under every ids
// pattern, and the one-copy-per-cycle model against its identity baseline.
int experiments(FILE * csv, double copy) {
    // The gather's cap on a row's workgroups, from its grid: one sequence of
    // a row longer than any cap takes the cap.
    char cap[48];
    snprintf(cap, sizeof cap, "cap %u", gather_grid(2048u * 65535u, 1u).x);
    auto row = [&](const char * bench, const char * shape, int n, std::string impl, double us, double bytes) {
        const double pct = 100.0 * bytes / (us * 1e3) / copy;
        fprintf(csv, "%s,%s,%d,\"%s\",%.2f,%.1f\n", bench, shape, n, impl.c_str(), us, pct);
        printf("%-10s %-8s n=%-4d %-36s %9.2f us %6.1f%% of copy\n", bench, shape, n, impl.c_str(), us, pct);
    };
    timer t;
    for (int H : {32, 48}) {
        char shape[32];
        snprintf(shape, sizeof shape, "H=%d", H);
        for (int n : {2, 8, 32, 128, 256}) {
            gdn_problem p(H, n);
            cycle_state cs(p);
            const std::string c = cap;
            row("gdn_ids", shape, n, "generated 16,4 " + c, t.us([&](int r) { gdn_generated<16, 4>(p, r); }), p.bytes());
            row("gdn_ids", shape, n, "generated 16,4 permuted " + c, t.us([&](int r) { gdn_generated<16, 4>(p, r, true, "permuted"); }), p.bytes());
            row("gdn_ids", shape, n, "generated 16,4 graph " + c, t.graph_us([&](int r) { gdn_generated<16, 4>(p, r); }), p.bytes());
            row("gdn_ids", shape, n, "generated 16,4 permuted graph " + c, t.graph_us([&](int r) { gdn_generated<16, 4>(p, r, true, "permuted"); }), p.bytes());
            row("gather", shape, n, "generated, every row aliasing " + c, t.us([&](int r) { gdn_gather_only(p, r); }), p.bytes());
            if (!gather_check(p)) return 1;
            row("gdn_ids", shape, n, "model identity graph", t.graph_us([&](int r) { gdn_model(p, r, false, cs); }), p.bytes());
            row("gdn_ids", shape, n, "model permuted one copy graph", t.graph_us([&](int r) { gdn_model(p, r, true, cs); }), p.bytes());
            row("gdn_ids", shape, n, "model identity", t.us([&](int r) { gdn_model(p, r, false, cs); }), p.bytes());
            row("gdn_ids", shape, n, "model permuted one copy", t.us([&](int r) { gdn_model(p, r, true, cs); }), p.bytes());
        }
    }
    for (int C : {8192, 10240}) {
        char shape[32];
        snprintf(shape, sizeof shape, "C=%d", C);
        for (int n : {8, 32, 128, 256}) {
            conv_problem p(C, n);
            for (const char * pat : {"identity", "shuffled", "permuted"}) {
                const std::string c = std::string(pat) + " " + cap;
                row("conv_ids", shape, n, "generated " + c, t.us([&](int r) { conv_ids_generated(p, r, pat); }), p.bytes());
                row("conv_ids", shape, n, "generated graph " + c, t.graph_us([&](int r) { conv_ids_generated(p, r, pat); }), p.bytes());
            }
        }
    }
    return 0;
}

// offsets: `kg_bench CSV offsets`: the rows the 64-bit cache offsets touch
// (issue #21), to run from two builds of the same harness (the kernels of
// two commits) side by side: op B at the glue's tilings (16,4; the small-n
// one at one sequence) and op D, identity and every source aliasing
// (permuted), stream order and graph replay, and the gather alone.
int offsets(FILE * csv, double copy) {
    auto row = [&](const char * bench, const char * shape, int n, const char * impl, double us, double bytes) {
        const double pct = 100.0 * bytes / (us * 1e3) / copy;
        fprintf(csv, "%s,%s,%d,\"%s\",%.2f,%.1f\n", bench, shape, n, impl, us, pct);
        printf("%-10s %-8s n=%-4d %-32s %9.2f us %6.1f%% of copy\n", bench, shape, n, impl, us, pct);
    };
    // The registers each kernel takes: where wider offsets would show first.
    auto regs = [](const char * name, const void * f) {
        cudaFuncAttributes a;
        KG_CHECK(cudaFuncGetAttributes(&a, f));
        printf("regs %-40s %d registers, %zu bytes local\n", name, a.numRegs, a.localSizeBytes);
    };
    regs("gather_f32", (const void *) gather_f32);
    regs("gated_delta_net_inplace_ids_f32<128,0,16,4>", (const void *) gated_delta_net_inplace_ids_f32<kSv, false, 16, 4>);
    regs("gated_delta_net_inplace_ids_f32<128,0,8,2>", (const void *) gated_delta_net_inplace_ids_f32<kSv, false, 8, 2>);
    regs("ssm_conv_update_inplace_ids_f32<4,1>", (const void *) ssm_conv_update_inplace_ids_f32<4u, true>);
    timer t;
    for (int H : {32, 48}) {
        char shape[32];
        snprintf(shape, sizeof shape, "H=%d", H);
        for (int n : {1, 2, 4, 8, 32, 128, 256}) {
            gdn_problem p(H, n);
            row("gdn_ids", shape, n, "identity", t.us([&](int r) { gdn_generated<16, 4>(p, r); }), p.bytes());
            row("gdn_ids", shape, n, "identity graph", t.graph_us([&](int r) { gdn_generated<16, 4>(p, r); }), p.bytes());
            if (n == 1) row("gdn_ids", shape, n, "identity 8,2 graph", t.graph_us([&](int r) { gdn_generated<8, 2>(p, r); }), p.bytes());
            if (n < 2) continue;
            row("gdn_ids", shape, n, "permuted", t.us([&](int r) { gdn_generated<16, 4>(p, r, true, "permuted"); }), p.bytes());
            row("gdn_ids", shape, n, "permuted graph", t.graph_us([&](int r) { gdn_generated<16, 4>(p, r, true, "permuted"); }), p.bytes());
            row("gather", shape, n, "every row aliasing", t.us([&](int r) { gdn_gather_only(p, r); }), p.bytes());
            if (!gather_check(p)) return 1;
        }
    }
    for (int C : {8192, 10240}) {
        char shape[32];
        snprintf(shape, sizeof shape, "C=%d", C);
        for (int n : {1, 2, 4, 8, 32, 128, 256}) {
            conv_problem p(C, n);
            for (const char * pat : {"identity", "permuted"}) {
                if (n < 2 && pat[0] == 'p') continue;
                const std::string g = std::string(pat) + " graph";
                row("conv_ids", shape, n, pat, t.us([&](int r) { conv_ids_generated(p, r, pat); }), p.bytes());
                row("conv_ids", shape, n, g.c_str(), t.graph_us([&](int r) { conv_ids_generated(p, r, pat); }), p.bytes());
            }
        }
    }
    return 0;
}

// ---- The chained schedule of ops B and D (ops/chain.go, issue #21 target 1) ----
//
// `kg_bench CSV chain [SPLITS [SEQS]]`: first a check on the device that the
// chained schedule (the chain gather, which plans the segments and copies
// the rows read across them, then the chained compute) leaves the cache
// (its window is state_dst, bound as the glue binds it) and dst bit for bit
// as the two-phase one (gather, compute) does, for every ids pattern below,
// n_seqs up to past the plan's 1024, portable and native-cuda; then graph
// replay timings of both schedules per pattern at each n of SEQS (default
// 2..256), the chained one at each ChainSplit of SPLITS (default 2,4,8,64),
// seg = ceil(n / split) as ops.ChainSeg. Op B's one-dispatch shapes
// (kBatchShapes) are checked and timed beside them where they take n.

// The ids patterns: where sequence s reads its prior state from.
enum chain_pattern { pat_identity, pat_rotation, pat_permutation, pat_shuffled, pat_forks, pat_mixed, pat_count };
const char * const chain_pattern_name[pat_count] = {"identity", "rotation", "permutation", "shuffled", "forks", "mixed"};

// chain_ids: the ids of one repetition (window [rs, rs + n) of a pool of
// slots rows). rotation: s reads s + 1's slot (one cycle of n); permutation:
// a random permutation of the window (cycles of random lengths); shuffled:
// slots drawn from the whole pool without repetition; forks: groups of four
// read their first's slot (it reads its own: three sequences fork from one
// row); mixed (checks only): each sequence its own slot, a random window
// slot (forks, cycles, paths) or a random pool slot.
std::vector<int32_t> chain_ids(int pat, int n, int rs, int slots, std::mt19937 & r) {
    std::vector<int32_t> ids(n);
    std::vector<int32_t> perm;
    if (pat == pat_permutation || pat == pat_shuffled) {
        perm.resize(pat == pat_shuffled ? slots : n);
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), r);
    }
    for (int s = 0; s < n; s++) {
        switch (pat) {
        case pat_identity: ids[s] = rs + s; break;
        case pat_rotation: ids[s] = rs + (s + 1) % n; break;
        case pat_permutation: ids[s] = rs + perm[s]; break;
        case pat_shuffled: ids[s] = perm[s]; break;
        case pat_forks: ids[s] = rs + s / 4 * 4; break;
        default: {
            const uint32_t k = r() % 3;
            ids[s] = k == 0 ? rs + s : k == 1 ? rs + int32_t(r() % n) : int32_t(r() % slots);
        }
        }
    }
    return ids;
}

// chain_seg is ops.ChainSeg: ceil(n / split), at least 1.
uint32_t chain_seg(int n, int split) { return (uint32_t) std::max(1, (n + split - 1) / split); }

// Op B, explicit buffers: the two schedules at the glue's tiling above one
// sequence, (16, 4). NATIVE picks native-cuda over portable.
struct gdn_bufs {
    const float *q, *k, *v, *g, *beta;
    float *cache, *dst, *scratch;
    int32_t * plan;
    int H, n;
    size_t D;
};

template <bool NATIVE>
void gdn_two(const gdn_bufs & b, const int32_t * ids, int rs, bool gather = true) {
    constexpr int NW = 16, CPW = 4;
    if (b.n >= 2 && gather) {
        kg_launch_pdl(gather_f32, gather_grid(b.D, b.n), gather_block(), kg_stream,
            (const float *) b.cache, ids, b.scratch, (uint32_t) b.D, (uint32_t) b.n, (uint32_t) rs);
    }
    auto k = NATIVE ? &gated_delta_net_inplace_ids_f32<kSv, false, NW, CPW> : &gated_delta_net_inplace_ids_f32_portable<kSv, false, NW, CPW>;
    const uint32_t H = b.H, n = b.n;
    kg_launch_pdl(k, gated_delta_net_inplace_ids_grid<kSv, false, NW, CPW>(H, n), gated_delta_net_inplace_ids_block<kSv, false, NW, CPW>(), kg_stream,
        b.q, b.k, b.v, b.g, b.beta, (const float *) b.cache, b.dst, b.cache + size_t(rs) * b.D, ids, (const float *) b.scratch,
        H, 1u, n, H, 1u, (uint32_t) kSv, kSv * H, kSv * H, (uint32_t) kSv, kSv * H, kSv * H, 1u, H, H, 1u, H, H,
        1.0f / sqrtf((float) kSv), (uint32_t) b.D, (uint32_t) rs);
}

// What a chained schedule's launch runs: the whole schedule; the chain
// gather alone (the plan and the copies); the chained compute alone (the
// plan written before).
enum chain_parts { parts_all, parts_gather, parts_compute };

// gdn_chain: the chain gather (it writes the plan), then the chained
// compute (parts: what runs).
// split: the chained compute alone, after a batched dispatch split by
// aliasing (aliased_batched 1: it runs no step where some source aliases).
template <bool NATIVE, int NW = 16, int CPW = 4> // the glue's tiling for many sequences by default
void gdn_chain(const gdn_bufs & b, const int32_t * ids, int rs, uint32_t seg, chain_parts parts = parts_all, bool split = false) {
    if (b.n >= 2 && parts != parts_compute) { // the gather's guard
        kg_launch_pdl(chain_gather_f32, chain_gather_grid(), chain_gather_block(), kg_stream,
            (const float *) b.cache, ids, b.plan, b.scratch, (uint32_t) b.D, (uint32_t) b.n, (uint32_t) rs, seg);
    }
    if (parts == parts_gather) return;
    auto k = NATIVE ? &gated_delta_net_inplace_ids_chained_f32<kSv, false, NW, CPW> : &gated_delta_net_inplace_ids_chained_f32_portable<kSv, false, NW, CPW>;
    const uint32_t H = b.H, n = b.n;
    kg_launch_pdl(k, gated_delta_net_inplace_ids_chained_grid<kSv, false, NW, CPW>(H, n), gated_delta_net_inplace_ids_chained_block<kSv, false, NW, CPW>(), kg_stream,
        b.q, b.k, b.v, b.g, b.beta, (const float *) b.cache, b.dst, b.cache + size_t(rs) * b.D, ids, (const float *) b.scratch,
        (const int32_t *) b.plan, H, 1u, n, H, 1u, (uint32_t) kSv, kSv * H, kSv * H, (uint32_t) kSv, kSv * H, kSv * H, 1u, H, H, 1u, H, H,
        1.0f / sqrtf((float) kSv), (uint32_t) b.D, (uint32_t) rs, split ? 1u : 0u);
}

// gdn_batched: op B's one-dispatch schedule (gated_delta_net_inplace_ids_batched)
// at (NW, CPW, NS, SPT), n <= NS * SPT: one workgroup per (head, column
// block) holds every sequence, SPT per row of threads; no gather. split:
// the split by aliasing (ops.Batch.Aliased): the batched dispatch runs the
// step only where some source aliases, the chained compute after it (at
// the glue's tiling) where none does; mode: 0 alone, 1 split, 2 split
// without the chained compute (the batched dispatch's part of the split).
template <bool NATIVE, int NW, int CPW, int NS, int SPT>
void gdn_batched(const gdn_bufs & b, const int32_t * ids, int rs, int mode) {
    const bool split = mode != 0;
    auto k = split ? (NATIVE ? &gated_delta_net_inplace_ids_batched_f32<kSv, false, NW, CPW, NS, SPT, true>
                             : &gated_delta_net_inplace_ids_batched_f32_portable<kSv, false, NW, CPW, NS, SPT, true>)
                   : (NATIVE ? &gated_delta_net_inplace_ids_batched_f32<kSv, false, NW, CPW, NS, SPT, false>
                             : &gated_delta_net_inplace_ids_batched_f32_portable<kSv, false, NW, CPW, NS, SPT, false>);
    const uint32_t H = b.H, n = b.n;
    const dim3 grid = split ? gated_delta_net_inplace_ids_batched_grid<kSv, false, NW, CPW, NS, SPT, true>(H)
                            : gated_delta_net_inplace_ids_batched_grid<kSv, false, NW, CPW, NS, SPT, false>(H);
    const dim3 block = split ? gated_delta_net_inplace_ids_batched_block<kSv, false, NW, CPW, NS, SPT, true>()
                             : gated_delta_net_inplace_ids_batched_block<kSv, false, NW, CPW, NS, SPT, false>();
    kg_launch_pdl(k, grid, block, kg_stream,
        b.q, b.k, b.v, b.g, b.beta, (const float *) b.cache, b.dst, b.cache + size_t(rs) * b.D, ids,
        H, 1u, n, H, 1u, (uint32_t) kSv, kSv * H, kSv * H, (uint32_t) kSv, kSv * H, kSv * H, 1u, H, H, 1u, H, H,
        1.0f / sqrtf((float) kSv), (uint32_t) b.D, (uint32_t) rs);
    if (mode == 1) gdn_chain<NATIVE>(b, ids, rs, 1, parts_compute, true);
}

// The batched shapes the chain mode checks and times (tuning runs),
// NWxCPWxNS, xSPT where a row holds more than one sequence.
struct batch_shape {
    int nw, cpw, ns, spt;
    void (*native)(const gdn_bufs &, const int32_t *, int, int);
    void (*portable)(const gdn_bufs &, const int32_t *, int, int);
    int seqs() const { return ns * spt; }
    std::string name() const {
        return std::to_string(nw) + "x" + std::to_string(cpw) + "x" + std::to_string(ns) + (spt > 1 ? "x" + std::to_string(spt) : "");
    }
};
// The last seven take 33..66 sequences, where the glue runs none (the
// chained schedule): they stay to show why (bench/RESULTS.md, call 39).
#define KG_BATCH(NW, CPW, NS, SPT) batch_shape{NW, CPW, NS, SPT, &gdn_batched<true, NW, CPW, NS, SPT>, &gdn_batched<false, NW, CPW, NS, SPT>}
const batch_shape kBatchShapes[] = {KG_BATCH(1, 4, 8, 1), KG_BATCH(1, 4, 16, 1), KG_BATCH(1, 4, 10, 2), KG_BATCH(1, 4, 12, 2),
    KG_BATCH(1, 4, 14, 2), KG_BATCH(1, 4, 16, 2), KG_BATCH(1, 2, 18, 2), KG_BATCH(1, 2, 20, 2), KG_BATCH(1, 2, 22, 2), KG_BATCH(1, 2, 24, 2), KG_BATCH(1, 2, 32, 2),
    KG_BATCH(1, 1, 32, 2), KG_BATCH(1, 2, 16, 3), KG_BATCH(1, 1, 16, 4), KG_BATCH(1, 1, 22, 3)};
#undef KG_BATCH

// gdn_blocks: op B's block schedule (docs/ops.md#blocks) at the tiling
// (NW, CPW): the block gather lays the ids chains out in blocks of NW
// sequences and copies the rows read across blocks; the blocks compute
// runs identity ids as the two-phase kernel does, aliasing ids a block per
// workgroup, a sequence per warp (parts: what runs, as gdn_chain's).
template <bool NATIVE, int NW, int CPW>
void gdn_blocks(const gdn_bufs & b, const int32_t * ids, int rs, chain_parts parts) {
    if (b.n >= 2 && parts != parts_compute) { // the gather's guard
        kg_launch_pdl(gated_delta_net_block_gather_f32, gated_delta_net_block_gather_grid(), gated_delta_net_block_gather_block(), kg_stream,
            (const float *) b.cache, ids, b.plan, b.scratch, (uint32_t) b.D, (uint32_t) b.n, (uint32_t) rs, (uint32_t) NW);
    }
    if (parts == parts_gather) return;
    auto k = NATIVE ? &gated_delta_net_inplace_ids_blocks_f32<kSv, false, NW, CPW> : &gated_delta_net_inplace_ids_blocks_f32_portable<kSv, false, NW, CPW>;
    const uint32_t H = b.H, n = b.n;
    kg_launch_pdl(k, gated_delta_net_inplace_ids_blocks_grid<kSv, false, NW, CPW>(H, n), gated_delta_net_inplace_ids_blocks_block<kSv, false, NW, CPW>(), kg_stream,
        b.q, b.k, b.v, b.g, b.beta, (const float *) b.cache, b.dst, b.cache + size_t(rs) * b.D, ids, (const float *) b.scratch,
        (const int32_t *) b.plan, H, 1u, n, H, 1u, (uint32_t) kSv, kSv * H, kSv * H, (uint32_t) kSv, kSv * H, kSv * H, 1u, H, H, 1u, H, H,
        1.0f / sqrtf((float) kSv), (uint32_t) b.D, (uint32_t) rs);
}

// The block schedule's tilings the chain mode checks and times, NWxCPW.
struct block_shape {
    int nw, cpw, ns;
    void (*native)(const gdn_bufs &, const int32_t *, int, chain_parts);
    void (*portable)(const gdn_bufs &, const int32_t *, int, chain_parts);
    std::string name() const { return std::to_string(nw) + "x" + std::to_string(cpw); }
};
#define KG_BLOCKS(NW, CPW) block_shape{NW, CPW, NW, &gdn_blocks<true, NW, CPW>, &gdn_blocks<false, NW, CPW>}
const block_shape kBlockShapes[] = {KG_BLOCKS(16, 4), KG_BLOCKS(8, 4), KG_BLOCKS(16, 8), KG_BLOCKS(8, 8)};
#undef KG_BLOCKS

// Op D, d_conv 4, SiLU: the same two schedules.
struct conv_bufs {
    const float *w, *x;
    float *cache, *dst, *scratch;
    int32_t * plan;
    int C, n;
    size_t row;
};

template <bool NATIVE>
void conv_two(const conv_bufs & b, const int32_t * ids, int rs, bool gather = true) {
    const uint32_t C = b.C, n = b.n, row = b.row;
    if (b.n >= 2 && gather) {
        kg_launch_pdl(gather_f32, gather_grid(b.row, b.n), gather_block(), kg_stream, (const float *) b.cache, ids, b.scratch, row, n, (uint32_t) rs);
    }
    auto k = NATIVE ? &ssm_conv_update_inplace_ids_f32<4u, true> : &ssm_conv_update_inplace_ids_f32_portable<4u, true>;
    kg_launch_pdl(k, ssm_conv_update_inplace_ids_grid<4u, true>(C, n), ssm_conv_update_inplace_ids_block<4u, true>(), kg_stream,
        (const float *) b.cache, b.w, b.x, b.cache + size_t(rs) * b.row, ids, (const float *) b.scratch, b.dst, C, n, 3u, row, 4u, C, row, C, (uint32_t) rs);
}

template <bool NATIVE>
void conv_chain(const conv_bufs & b, const int32_t * ids, int rs, uint32_t seg, chain_parts parts = parts_all) {
    const uint32_t C = b.C, n = b.n, row = b.row;
    if (b.n >= 2 && parts != parts_compute) { // the gather's guard
        kg_launch_pdl(chain_gather_f32, chain_gather_grid(), chain_gather_block(), kg_stream,
            (const float *) b.cache, ids, b.plan, b.scratch, row, n, (uint32_t) rs, seg);
    }
    if (parts == parts_gather) return;
    auto k = NATIVE ? &ssm_conv_update_inplace_ids_chained_f32<4u, true> : &ssm_conv_update_inplace_ids_chained_f32_portable<4u, true>;
    kg_launch_pdl(k, ssm_conv_update_inplace_ids_chained_grid<4u, true>(C, n), ssm_conv_update_inplace_ids_chained_block<4u, true>(), kg_stream,
        (const float *) b.cache, b.w, b.x, b.cache + size_t(rs) * b.row, ids, (const float *) b.scratch, (const int32_t *) b.plan, b.dst,
        C, n, 3u, row, 4u, C, row, C, (uint32_t) rs);
}

// kg_fill_hash: values in [-1, 1) from a hash of the index and seed.
__global__ void kg_fill_hash(float * p, size_t n, uint32_t seed) {
    for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x) {
        uint32_t h = (uint32_t) i * 2654435761u ^ (uint32_t) (i >> 32) * 2246822519u ^ seed * 3266489917u;
        h ^= h >> 15; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
        p[i] = (float) (h >> 8) * (2.0f / 16777216.0f) - 1.0f;
    }
}

__global__ void kg_count_diff(const uint32_t * a, const uint32_t * b, size_t n, unsigned long long * out) {
    unsigned long long c = 0;
    for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x) c += a[i] != b[i];
    if (c) atomicAdd(out, c);
}

// words_differ: how many 32-bit words of two device arrays differ.
unsigned long long words_differ(const float * a, const float * b, size_t n) {
    static unsigned long long * d = nullptr;
    if (!d) KG_CHECK(cudaMalloc(&d, 8));
    KG_CHECK(cudaMemset(d, 0, 8));
    kg_count_diff<<<1024, 256>>>((const uint32_t *) a, (const uint32_t *) b, n, d);
    unsigned long long h;
    KG_CHECK(cudaMemcpy(&h, d, 8, cudaMemcpyDeviceToHost));
    return h;
}

// chain_check: for op B (H 2 and one case at H 32) and op D (C 256), n
// 2..1100, every pattern, both contracts and ChainSplit 1, 2, 4 and 64:
// the whole pool and dst after the chained schedule equal, bit for bit,
// those after the two-phase one. A control runs the chain gather on
// rotated ids (where rows must be copied), poisons scratch again (its
// copies lost, its plan kept) and runs the chained compute: it must differ
// (the check can fail). Op B's batched shapes that take n run too, alone and
// split by aliasing (the chained compute after them, a stale plan of
// segments of one that must not run). The pool is small (2n + 9
// rows) with the window inside it, so shuffled sources lie on both sides.
int chain_check(FILE * log) {
    int failures = 0, runs = 0;
    std::mt19937 r(2026);
    const int splits[] = {1, 2, 4, 64};
    struct shape { bool gdn; int HC; int n; };
    std::vector<shape> shapes;
    for (int n : {2, 3, 5, 8, 16, 33, 100, 256, 1024, 1100}) shapes.push_back({true, 2, n});
    shapes.push_back({true, 32, 64});
    shapes.push_back({true, 32, 32});
    for (int n : {2, 3, 5, 8, 16, 33, 100, 256, 1024, 1100}) shapes.push_back({false, 256, n});
    for (const shape & sh : shapes) {
        const int n = sh.n, slots = 2 * n + 9, rs = n / 2 + 4;
        const size_t row = sh.gdn ? size_t(kSv) * kSv * sh.HC : size_t(3) * sh.HC;
        const size_t pool = row * slots, dst_len = sh.gdn ? size_t(kSv) * sh.HC * n + row * n : size_t(sh.HC) * n;
        float * init;
        KG_CHECK(cudaMalloc(&init, pool * 4));
        kg_fill_hash<<<1024, 256>>>(init, pool, 31u + n); // no repeating rows: a wrong row read shows
        float *a, *b, *dst_a, *dst_b, *scratch;
        int32_t * plan;
        KG_CHECK(cudaMalloc(&a, pool * 4));
        KG_CHECK(cudaMalloc(&b, pool * 4));
        KG_CHECK(cudaMalloc(&dst_a, dst_len * 4));
        KG_CHECK(cudaMalloc(&dst_b, dst_len * 4));
        KG_CHECK(cudaMalloc(&scratch, row * n * 4));
        KG_CHECK(cudaMalloc(&plan, n * 4));
        float *q = nullptr, *k = nullptr, *v = nullptr, *g = nullptr, *beta = nullptr, *w = nullptr, *x = nullptr;
        if (sh.gdn) {
            q = dev_f32(size_t(kSv) * sh.HC * n, 41);
            k = dev_f32(size_t(kSv) * sh.HC * n, 42);
            v = dev_f32(size_t(kSv) * sh.HC * n, 43);
            g = dev_f32(size_t(sh.HC) * n, 44);
            beta = dev_f32(size_t(sh.HC) * n, 45);
        } else {
            w = dev_f32(size_t(4) * sh.HC, 46);
            x = dev_f32(size_t(sh.HC) * n, 47);
        }
        // run: one schedule (split 0: two-phase) on pool to, dst to_dst;
        // lose_copies: scratch poisoned again between the chain gather and
        // the chained compute (the control).
        auto run = [&](bool native, int split, const int32_t * ids, float * to, float * to_dst, bool lose_copies, const batch_shape * bs = nullptr,
                       const block_shape * blk = nullptr) {
            KG_CHECK(cudaMemcpy(to, init, pool * 4, cudaMemcpyDeviceToDevice));
            KG_CHECK(cudaMemset(to_dst, 0, dst_len * 4));
            KG_CHECK(cudaMemset(scratch, 0xff, row * n * 4));
            if (bs && split) { // split by aliasing: a plan an earlier step left, every sequence a segment of one, which must not run
                const std::vector<int32_t> stale(n, 1 << 16);
                KG_CHECK(cudaMemcpy(plan, stale.data(), n * 4, cudaMemcpyHostToDevice));
            } else {
                KG_CHECK(cudaMemset(plan, 0, n * 4)); // the chain gather writes it only where some source aliases
            }
            KG_CHECK(cudaDeviceSynchronize());
            const uint32_t seg = chain_seg(n, std::max(split, 1));
            const gdn_bufs gb{q, k, v, g, beta, to, to_dst, scratch, plan, sh.HC, n, row};
            const conv_bufs cb{w, x, to, to_dst, scratch, plan, sh.HC, n, row};
            // chain: the chained schedule's parts on either op
            auto chain = [&](chain_parts parts) {
                if (sh.gdn) native ? gdn_chain<true>(gb, ids, rs, seg, parts) : gdn_chain<false>(gb, ids, rs, seg, parts);
                else native ? conv_chain<true>(cb, ids, rs, seg, parts) : conv_chain<false>(cb, ids, rs, seg, parts);
            };
            if (blk && lose_copies) { // the control: the block gather's copies lost, its plan kept
                (native ? blk->native : blk->portable)(gb, ids, rs, parts_gather);
                KG_CHECK(cudaStreamSynchronize(kg_stream));
                KG_CHECK(cudaMemset(scratch, 0xff, row * n * 4));
                KG_CHECK(cudaDeviceSynchronize());
                (native ? blk->native : blk->portable)(gb, ids, rs, parts_compute);
            } else if (blk) {
                (native ? blk->native : blk->portable)(gb, ids, rs, parts_all);
            } else if (bs) {
                (native ? bs->native : bs->portable)(gb, ids, rs, split != 0 ? 1 : 0);
            } else if (split == 0) {
                if (sh.gdn) native ? gdn_two<true>(gb, ids, rs) : gdn_two<false>(gb, ids, rs);
                else native ? conv_two<true>(cb, ids, rs) : conv_two<false>(cb, ids, rs);
            } else if (lose_copies) {
                chain(parts_gather);
                KG_CHECK(cudaStreamSynchronize(kg_stream));
                KG_CHECK(cudaMemset(scratch, 0xff, row * n * 4));
                KG_CHECK(cudaDeviceSynchronize());
                chain(parts_compute);
            } else {
                chain(parts_all);
            }
            KG_CHECK(cudaDeviceSynchronize());
        };
        for (int pat = 0; pat < pat_count; pat++) {
            int32_t * ids = dev_i32(chain_ids(pat, n, rs, slots, r));
            std::vector<int32_t> hplan(n);
            for (bool native : {false, true}) {
                run(native, 0, ids, a, dst_a, false);
                for (int split : splits) {
                    run(native, split, ids, b, dst_b, false);
                    const unsigned long long dp = words_differ(a, b, pool), dd = words_differ(dst_a, dst_b, dst_len);
                    KG_CHECK(cudaMemcpy(hplan.data(), plan, n * 4, cudaMemcpyDeviceToHost));
                    int copies = 0, segs = 0;
                    for (int32_t pl : hplan) copies += pl & 1, segs += pl >> 1 ? 1 : 0;
                    runs++;
                    const bool ok = dp == 0 && dd == 0;
                    failures += !ok;
                    char planned[64] = "no plan: no source aliases";
                    if (segs) snprintf(planned, sizeof planned, "%d segments, %d rows copied", segs, copies);
                    fprintf(log, "chain check %s %s=%d n %d %s %s split %d (seg %u): %s (%llu pool words, %llu dst words differ; %s)\n",
                        sh.gdn ? "op B" : "op D", sh.gdn ? "H" : "C", sh.HC, n, chain_pattern_name[pat], native ? "native-cuda" : "portable", split,
                        chain_seg(n, split), ok ? "same" : "DIFFERENT", dp, dd, planned);
                }
                for (const batch_shape & bs : kBatchShapes) { // op B's one-dispatch schedule where it takes n, alone and split by aliasing
                    if (!sh.gdn || n > bs.seqs()) continue;
                    for (int split : {0, 1}) {
                        run(native, split, ids, b, dst_b, false, &bs);
                        const unsigned long long dp = words_differ(a, b, pool), dd = words_differ(dst_a, dst_b, dst_len);
                        runs++;
                        const bool ok = dp == 0 && dd == 0;
                        failures += !ok;
                        fprintf(log, "batched check op B H=%d n %d %s %s %s%s: %s (%llu pool words, %llu dst words differ)\n", sh.HC, n,
                            chain_pattern_name[pat], native ? "native-cuda" : "portable", bs.name().c_str(), split ? " split" : "", ok ? "same" : "DIFFERENT", dp, dd);
                    }
                }
            }
            for (const block_shape & blk : kBlockShapes) { // op B's block schedule
                if (!sh.gdn) continue;
                for (bool native : {false, true}) {
                    run(native, 0, ids, a, dst_a, false);
                    run(native, 0, ids, b, dst_b, false, nullptr, &blk);
                    const unsigned long long dp = words_differ(a, b, pool), dd = words_differ(dst_a, dst_b, dst_len);
                    KG_CHECK(cudaMemcpy(hplan.data(), plan, n * 4, cudaMemcpyDeviceToHost));
                    int copies = 0;
                    for (int32_t pl : hplan) copies += (pl & 0xffff) ? 1 : 0;
                    runs++;
                    const bool ok = dp == 0 && dd == 0;
                    failures += !ok;
                    fprintf(log, "blocks check op B H=%d n %d %s %s %s: %s (%llu pool words, %llu dst words differ; %d sequences read scratch)\n", sh.HC, n,
                        chain_pattern_name[pat], native ? "native-cuda" : "portable", blk.name().c_str(), ok ? "same" : "DIFFERENT", dp, dd, copies);
                }
                if (pat == pat_rotation && n > blk.ns) { // the control: rows read across blocks must be copied
                    run(true, 0, ids, a, dst_a, false);
                    run(true, 0, ids, b, dst_b, true, nullptr, &blk);
                    const unsigned long long dp = words_differ(a, b, pool);
                    failures += dp == 0;
                    fprintf(log, "blocks check control op B n %d rotation %s, the block gather's copies lost: %s (%llu pool words differ)\n", n,
                        blk.name().c_str(), dp ? "differs, as it must" : "NOT CAUGHT", dp);
                }
            }
            if (pat == pat_rotation && n >= 3) { // the control: the plan kept, the copied rows lost
                run(true, 0, ids, a, dst_a, false);
                run(true, 4, ids, b, dst_b, true);
                const unsigned long long dp = words_differ(a, b, pool);
                const bool caught = dp != 0;
                failures += !caught;
                fprintf(log, "chain check control %s n %d rotation, the chain gather's copies lost: %s (%llu pool words differ)\n",
                    sh.gdn ? "op B" : "op D", n, caught ? "differs, as it must" : "NOT CAUGHT", dp);
            }
            KG_CHECK(cudaFree(ids));
        }
        for (void * p : {(void *) init, (void *) a, (void *) b, (void *) dst_a, (void *) dst_b, (void *) scratch, (void *) plan, (void *) q, (void *) k,
                 (void *) v, (void *) g, (void *) beta, (void *) w, (void *) x})
            if (p) cudaFree(p);
    }
    printf("chain check: %d runs, %d failures\n", runs, failures);
    fprintf(log, "chain check: %d runs, %d failures\n", runs, failures);
    return failures;
}

// chain_ids_set: a pattern's ids for every repetition of a timed problem.
struct chain_ids_set {
    int32_t * ids[kReps + 1];
    template <typename Head> chain_ids_set(int pat, int n, int slots, Head head, std::mt19937 & r) {
        for (int rep = 0; rep <= kReps; rep++) ids[rep] = dev_i32(chain_ids(pat, n, head(rep), slots, r));
    }
    ~chain_ids_set() {
        for (int32_t * p : ids) cudaFree(p);
    }
};

int chain_bench(FILE * csv, double copy, const std::vector<int> & splits, const std::vector<int> & seqs, bool check_only, bool tilings, bool blocks) {
    {
        // one line per check run: KG_CHAIN_LOG, else chain_check.txt here
        FILE * log = fopen(getenv("KG_CHAIN_LOG") ? getenv("KG_CHAIN_LOG") : "chain_check.txt", "w");
        const int bad = chain_check(log ? log : stdout);
        if (log) fclose(log);
        if (bad || check_only) return bad ? 1 : 0;
    }
    auto row = [&](const char * bench, const char * shape, int n, const std::string & impl, double us, double bytes) {
        const double pct = 100.0 * bytes / (us * 1e3) / copy;
        fprintf(csv, "%s,%s,%d,\"%s\",%.2f,%.1f\n", bench, shape, n, impl.c_str(), us, pct);
        printf("%-10s %-8s n=%-4d %-36s %9.2f us %6.1f%% of copy\n", bench, shape, n, impl.c_str(), us, pct);
        fflush(stdout);
    };
    timer t;
    // The floor of one more node in a graph: an empty kernel, one block.
    row("empty", "1 block", 0, "graph", t.graph_us([&](int) { kg_empty<<<1, 64, 0, kg_stream>>>(); }), 0);
    row("empty", "1 block", 0, "graph, PDL", t.graph_us([&](int) { kg_launch_pdl(kg_empty, dim3(1), dim3(64), kg_stream); }), 0);
    const int pats[] = {pat_identity, pat_rotation, pat_permutation, pat_shuffled, pat_forks};
    for (int H : {32, 48}) {
        char shape[32];
        snprintf(shape, sizeof shape, "H=%d", H);
        for (int n : seqs) {
            gdn_problem p(H, n);
            int32_t * plan = dev_i32(std::vector<int32_t>(n));
            const gdn_bufs b{p.q, p.k, p.v, p.g, p.beta, p.cache, p.dst, p.scratch, plan, H, n, p.D};
            std::mt19937 r(5 + n);
            for (int pat : pats) {
                chain_ids_set set(pat, n, p.slots, [&](int rep) { return p.rep_head(rep); }, r);
                const std::string pn = chain_pattern_name[pat];
                row("chain_gdn", shape, n, pn + " today", t.graph_us([&](int rep) { gdn_two<true>(b, set.ids[rep], p.rep_head(rep)); }), p.bytes());
                for (int split : splits) {
                    const uint32_t seg = chain_seg(n, split);
                    row("chain_gdn", shape, n, pn + " chained " + std::to_string(split),
                        t.graph_us([&](int rep) { gdn_chain<true>(b, set.ids[rep], p.rep_head(rep), seg); }), p.bytes());
                }
                if (tilings && n >= 33 && n <= 128) { // the chained compute at smaller tilings, splits 1..8
                    for (int split : {1, 2, 4, 8}) {
                        const uint32_t seg = chain_seg(n, split);
                        const std::string sp = pn + " chained " + std::to_string(split);
                        row("chain_gdn", shape, n, sp + " t8x4", t.graph_us([&](int rep) { gdn_chain<true, 8, 4>(b, set.ids[rep], p.rep_head(rep), seg); }), p.bytes());
                        row("chain_gdn", shape, n, sp + " t8x2", t.graph_us([&](int rep) { gdn_chain<true, 8, 2>(b, set.ids[rep], p.rep_head(rep), seg); }), p.bytes());
                        row("chain_gdn", shape, n, sp + " t4x2", t.graph_us([&](int rep) { gdn_chain<true, 4, 2>(b, set.ids[rep], p.rep_head(rep), seg); }), p.bytes());
                        row("chain_gdn", shape, n, sp + " t4x1", t.graph_us([&](int rep) { gdn_chain<true, 4, 1>(b, set.ids[rep], p.rep_head(rep), seg); }), p.bytes());
                        row("chain_gdn", shape, n, sp + " t2x1", t.graph_us([&](int rep) { gdn_chain<true, 2, 1>(b, set.ids[rep], p.rep_head(rep), seg); }), p.bytes());
                    }
                }
                for (const batch_shape & bs : kBatchShapes) {
                    if (n > bs.seqs() || blocks) continue;
                    row("chain_gdn", shape, n, pn + " batched " + bs.name(), t.graph_us([&](int rep) { bs.native(b, set.ids[rep], p.rep_head(rep), 0); }), p.bytes());
                    if (n >= 17) { // where the chained compute runs: split by aliasing, and its batched part alone
                        row("chain_gdn", shape, n, pn + " split " + bs.name(), t.graph_us([&](int rep) { bs.native(b, set.ids[rep], p.rep_head(rep), 1); }), p.bytes());
                        row("chain_gdn", shape, n, pn + " split batched part " + bs.name(), t.graph_us([&](int rep) { bs.native(b, set.ids[rep], p.rep_head(rep), 2); }), p.bytes());
                    }
                }
                if (pat == pat_identity || pat == pat_rotation) { // the plan and the copies
                    const uint32_t seg = chain_seg(n, 8);
                    row("chain_gdn", shape, n, pn + " chain gather alone 8", t.graph_us([&](int rep) { gdn_chain<true>(b, set.ids[rep], p.rep_head(rep), seg, parts_gather); }), 0);
                }
                if (blocks && n >= 17) { // op B's block schedule, and its gather alone
                    for (const block_shape & blk : kBlockShapes) {
                        row("chain_gdn", shape, n, pn + " blocks " + blk.name(), t.graph_us([&](int rep) { blk.native(b, set.ids[rep], p.rep_head(rep), parts_all); }), p.bytes());
                        if (pat != pat_identity)
                            row("chain_gdn", shape, n, pn + " block gather alone " + blk.name(),
                                t.graph_us([&](int rep) { blk.native(b, set.ids[rep], p.rep_head(rep), parts_gather); }), 0);
                    }
                }
                if (pat == pat_identity && n >= 16) { // where the identity cost goes
                    const uint32_t seg = chain_seg(n, 8);
                    row("chain_gdn", shape, n, pn + " today compute alone", t.graph_us([&](int rep) { gdn_two<true>(b, set.ids[rep], p.rep_head(rep), false); }), p.bytes());
                    gdn_chain<true>(b, set.ids[0], p.rep_head(0), seg, parts_gather); // the plan of identity ids
                    KG_CHECK(cudaDeviceSynchronize());
                    row("chain_gdn", shape, n, pn + " chained compute alone", t.graph_us([&](int rep) { gdn_chain<true>(b, set.ids[rep], p.rep_head(rep), seg, parts_compute); }), p.bytes());
                }
            }
            KG_CHECK(cudaFree(plan));
        }
    }
    for (int C : {8192, 10240}) {
        char shape[32];
        snprintf(shape, sizeof shape, "C=%d", C);
        for (int n : seqs) {
            conv_problem p(C, n);
            int32_t * plan = dev_i32(std::vector<int32_t>(n));
            const conv_bufs b{p.w, p.x, p.cache, p.dst, p.scratch, plan, C, n, p.row};
            std::mt19937 r(7 + n);
            for (int pat : pats) {
                chain_ids_set set(pat, n, p.cells, [&](int rep) { return p.rep_head(rep); }, r);
                const std::string pn = chain_pattern_name[pat];
                row("chain_conv", shape, n, pn + " today", t.graph_us([&](int rep) { conv_two<true>(b, set.ids[rep], p.rep_head(rep)); }), p.bytes());
                if (pat == pat_identity || pat == pat_rotation) { // the plan and the copies
                    const uint32_t seg = chain_seg(n, 8);
                    row("chain_conv", shape, n, pn + " chain gather alone 8", t.graph_us([&](int rep) { conv_chain<true>(b, set.ids[rep], p.rep_head(rep), seg, parts_gather); }), 0);
                }
                if (pat == pat_identity && n >= 16) { // where the identity cost goes
                    const uint32_t seg = chain_seg(n, 8);
                    row("chain_conv", shape, n, pn + " today compute alone", t.graph_us([&](int rep) { conv_two<true>(b, set.ids[rep], p.rep_head(rep), false); }), p.bytes());
                    conv_chain<true>(b, set.ids[0], p.rep_head(0), seg, parts_gather); // the plan of identity ids
                    KG_CHECK(cudaDeviceSynchronize());
                    row("chain_conv", shape, n, pn + " chained compute alone", t.graph_us([&](int rep) { conv_chain<true>(b, set.ids[rep], p.rep_head(rep), seg, parts_compute); }), p.bytes());
                }
                for (int split : splits) {
                    const uint32_t seg = chain_seg(n, split);
                    row("chain_conv", shape, n, pn + " chained " + std::to_string(split),
                        t.graph_us([&](int rep) { conv_chain<true>(b, set.ids[rep], p.rep_head(rep), seg); }), p.bytes());
                }
            }
            KG_CHECK(cudaFree(plan));
        }
    }
    return 0;
}

} // namespace

int main(int argc, char ** argv) {
    FILE * csv = argc > 1 ? fopen(argv[1], "w") : stdout;
    cudaDeviceProp prop;
    KG_CHECK(cudaGetDeviceProperties(&prop, 0));
    const double copy = copy_rate_gbs();
    printf("device: %s, %d SMs, L2 %d MB; device-to-device copy %.0f GB/s (read+write)\n", prop.name, prop.multiProcessorCount,
           prop.l2CacheSize >> 20, copy);
    fprintf(csv, "bench,shape,n_seqs,impl,us,pct_copy\n");
    if (argc > 2 && !strcmp(argv[2], "offsets")) {
        const int rc = offsets(csv, copy);
        if (csv != stdout) fclose(csv);
        return rc;
    }
    if (argc > 2 && (!strcmp(argv[2], "chain") || !strcmp(argv[2], "chaincheck"))) {
        auto ints = [](const char * f) {
            std::vector<int> out;
            while (*f) {
                out.push_back(atoi(f));
                while (*f && *f != ',') f++;
                if (*f) f++;
            }
            return out;
        };
        const std::vector<int> splits = ints(argc > 3 ? argv[3] : "2,4,8,64");
        const std::vector<int> seqs = ints(argc > 4 ? argv[4] : "2,4,8,16,32,64,128,256");
        // a fifth argument "tilings" also times the chained compute at smaller tilings (tuning runs);
        // "blocks" times op B's block schedule (and leaves out the batched shapes)
        const bool tilings = argc > 5 && !strcmp(argv[5], "tilings");
        const bool blocks = argc > 5 && !strcmp(argv[5], "blocks");
        const int rc = chain_bench(csv, copy, splits, seqs, !strcmp(argv[2], "chaincheck"), tilings, blocks);
        if (csv != stdout) fclose(csv);
        return rc;
    }
    if (argc > 2 && !strcmp(argv[2], "exp")) {
        const int rc = experiments(csv, copy);
        if (csv != stdout) fclose(csv);
        return rc;
    }
    auto row = [&](const char * bench, const char * shape, int n, const char * impl, double us, double bytes) {
        const double pct = 100.0 * bytes / (us * 1e3) / copy;
        // impl is quoted: it may hold commas ("generated NW=16,CPW=4"); a
        // failed graph capture (NaN) is written as nan.
        if (std::isnan(us)) fprintf(csv, "%s,%s,%d,\"%s\",nan,nan\n", bench, shape, n, impl);
        else fprintf(csv, "%s,%s,%d,\"%s\",%.2f,%.1f\n", bench, shape, n, impl, us, pct);
        printf("%-10s %-8s n=%-4d %-24s %9.2f us %6.1f%% of copy\n", bench, shape, n, impl, us, pct);
    };
    timer t;
    // The floor of a launch in stream order: an empty kernel, one block.
    row("empty", "1 block", 0, "stream order", t.us([&](int) { kg_empty<<<1, 64, 0, kg_stream>>>(); }), 0);
    row("empty", "1 block", 0, "graph", t.graph_us([&](int) { kg_empty<<<1, 64, 0, kg_stream>>>(); }), 0);
    for (int H : {32, 48}) {
        char shape[32];
        snprintf(shape, sizeof shape, "H=%d", H);
        for (int n : {1, 2, 4, 8, 32, 128, 256}) {
            gdn_problem p(H, n);
            row("gdn_ids", shape, n, "generated NW=4,CPW=1", t.us([&](int r) { gdn_generated<4, 1>(p, r); }), p.bytes());
            row("gdn_ids", shape, n, "generated NW=8,CPW=2", t.us([&](int r) { gdn_generated<8, 2>(p, r); }), p.bytes());
            row("gdn_ids", shape, n, "generated NW=16,CPW=2", t.us([&](int r) { gdn_generated<16, 2>(p, r); }), p.bytes());
            row("gdn_ids", shape, n, "generated NW=8,CPW=4", t.us([&](int r) { gdn_generated<8, 4>(p, r); }), p.bytes());
            row("gdn_ids", shape, n, "generated NW=16,CPW=4", t.us([&](int r) { gdn_generated<16, 4>(p, r); }), p.bytes());
            row("gdn_ids", shape, n, "generated NW=16,CPW=8", t.us([&](int r) { gdn_generated<16, 8>(p, r); }), p.bytes());
            row("gdn_ids", shape, n, "generated 16,2 no gather", t.us([&](int r) { gdn_generated<16, 2>(p, r, false); }), p.bytes());
            row("gdn_ids", shape, n, "generated 16,4 no gather", t.us([&](int r) { gdn_generated<16, 4>(p, r, false); }), p.bytes());
            row("gdn_ids", shape, n, "generated 16,4 graph", t.graph_us([&](int r) { gdn_generated<16, 4>(p, r); }), p.bytes());
            if (n <= 8) { // more workgroups per head at small n, as a graph replays them
                row("gdn_ids", shape, n, "generated 4,1 graph", t.graph_us([&](int r) { gdn_generated<4, 1>(p, r); }), p.bytes());
                row("gdn_ids", shape, n, "generated 8,2 graph", t.graph_us([&](int r) { gdn_generated<8, 2>(p, r); }), p.bytes());
                row("gdn_ids", shape, n, "generated 16,2 graph", t.graph_us([&](int r) { gdn_generated<16, 2>(p, r); }), p.bytes());
                row("gdn_ids", shape, n, "generated 8,4 graph", t.graph_us([&](int r) { gdn_generated<8, 4>(p, r); }), p.bytes());
            }
            if (n >= 2) { // ids patterns (issue #21 target 1): the same op, other sources
                row("gdn_ids", shape, n, "generated 16,4 permuted", t.us([&](int r) { gdn_generated<16, 4>(p, r, true, "permuted"); }), p.bytes());
                row("gdn_ids", shape, n, "generated 16,4 shuffled", t.us([&](int r) { gdn_generated<16, 4>(p, r, true, "shuffled"); }), p.bytes());
                row("gdn_ids", shape, n, "generated 16,4 permuted graph", t.graph_us([&](int r) { gdn_generated<16, 4>(p, r, true, "permuted"); }), p.bytes());
                row("gather", shape, n, "generated, every row aliasing", t.us([&](int r) { gdn_gather_only(p, r); }), p.bytes());
                if (!gather_check(p)) return 1;
                printf("gather check: H %d n %d: %d rows of %zu floats copied bit for bit\n", H, n, n, p.D);
            }
            // Stream order, no overlap: each dispatch waits for the last, as
            // Vulkan's barrier makes it (bench/vulkan).
            kg_pdl_enabled = false;
            row("gdn_ids", shape, n, "generated 16,4 serial", t.us([&](int r) { gdn_generated<16, 4>(p, r); }), p.bytes());
            row("gdn_ids", shape, n, "generated 16,4 no gather serial", t.us([&](int r) { gdn_generated<16, 4>(p, r, false); }), p.bytes());
            if (n == 1) row("gdn_ids", shape, n, "generated 8,2 serial", t.us([&](int r) { gdn_generated<8, 2>(p, r); }), p.bytes());
            kg_pdl_enabled = true;
#ifdef KG_WITH_REFERENCE
            row("gdn_ids", shape, n, "hand-written", t.us([&](int r) { gdn_reference(p, r); }), p.bytes());
            row("gdn_ids", shape, n, "hand-written graph", t.graph_us([&](int r) { gdn_reference(p, r); }), p.bytes());
            if (n >= 2) row("gdn_ids", shape, n, "hand-written permuted", t.us([&](int r) { gdn_reference(p, r, "permuted"); }), p.bytes());
#endif
        }
    }
    for (int C : {8192, 10240}) {
        char shape[32];
        snprintf(shape, sizeof shape, "C=%d", C);
        for (int n : {1, 2, 4, 8, 32, 128, 256}) {
            conv_problem p(C, n);
            row("conv_ids", shape, n, "generated", t.us([&](int r) { conv_ids_generated(p, r); }), p.bytes());
            row("conv", shape, n, "generated", t.us([&](int r) { conv_plain_generated(p, r); }), p.bytes());
            row("conv_ids", shape, n, "generated graph", t.graph_us([&](int r) { conv_ids_generated(p, r); }), p.bytes());
            row("conv", shape, n, "generated graph", t.graph_us([&](int r) { conv_plain_generated(p, r); }), p.bytes());
            row("conv_ids", shape, n, "generated identity", t.us([&](int r) { conv_ids_generated(p, r, "identity"); }), p.bytes());
            row("conv_ids", shape, n, "generated identity graph", t.graph_us([&](int r) { conv_ids_generated(p, r, "identity"); }), p.bytes());
            if (n >= 2) row("conv_ids", shape, n, "generated permuted", t.us([&](int r) { conv_ids_generated(p, r, "permuted"); }), p.bytes());
            kg_pdl_enabled = false; // stream order, as the hand-written kernels launch
            row("conv_ids", shape, n, "generated serial", t.us([&](int r) { conv_ids_generated(p, r); }), p.bytes());
            row("conv", shape, n, "generated serial", t.us([&](int r) { conv_plain_generated(p, r); }), p.bytes());
            kg_pdl_enabled = true;
#ifdef KG_WITH_REFERENCE
            row("conv_ids", shape, n, "hand-written", t.us([&](int r) { conv_ids_reference(p, r); }), p.bytes());
            row("conv", shape, n, "hand-written", t.us([&](int r) { conv_plain_reference(p, r); }), p.bytes());
            row("conv_ids", shape, n, "hand-written graph", t.graph_us([&](int r) { conv_ids_reference(p, r); }), p.bytes());
            row("conv", shape, n, "hand-written graph", t.graph_us([&](int r) { conv_plain_reference(p, r); }), p.bytes());
            row("conv_ids", shape, n, "hand-written identity", t.us([&](int r) { conv_ids_reference(p, r, "identity"); }), p.bytes());
#endif
        }
    }
    // One layer's decode step, Qwen 3.5/3.6 35B-A3B (H 32, C 8192) and 27B
    // (H 48, C 10240) shapes: unfused upstream graph against the fused nodes.
    for (auto [H, C, model] : {std::tuple{32, 8192, "35B-A3B"}, std::tuple{48, 10240, "27B"}}) {
        char shape[48];
        snprintf(shape, sizeof shape, "%s H=%d C=%d", model, H, C);
        for (int n : {1, 2, 4, 8, 16, 32, 64, 128, 256}) {
            gdn_problem g(H, n);
            conv_problem c(C, n);
            layer_problem l(g, c);
            row("layer", shape, n, "unfused", t.us([&](int r) { layer_unfused(l, r); }), l.bytes());
            row("layer", shape, n, "fused", t.us([&](int r) { layer_fused(l, r); }), l.bytes());
            row("layer", shape, n, "unfused graph", t.graph_us([&](int r) { layer_unfused(l, r); }), l.bytes());
            row("layer", shape, n, "fused graph", t.graph_us([&](int r) { layer_fused(l, r); }), l.bytes());
        }
    }
    if (csv != stdout) fclose(csv);
    return 0;
}
