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

#include "gated_delta_net_gather.cuh"
#include "gated_delta_net_inplace_ids.cuh"
#include "ssm_conv_gather.cuh"
#include "ssm_conv_update_inplace.cuh"
#include "ssm_conv_update_inplace_ids.cuh"

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

// The generated gathers' grid (ops/gather.go, as the glue computes it): a
// workgroup per 2048-element chunk of a row, at most ceil(4096 / n) per row.
dim3 gather_grid(size_t row, int n) {
    const size_t chunks = (row + 2047) / 2048, per_row = (n + 4095) / n;
    return dim3((unsigned) std::min(chunks, per_row), n);
}
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

float * dev_f32(size_t n, uint32_t seed) {
    std::vector<float> h(n);
    std::mt19937 r(seed);
    std::uniform_real_distribution<float> d(-1, 1);
    for (auto & x : h) x = d(r);
    float * p;
    KG_CHECK(cudaMalloc(&p, n * 4));
    KG_CHECK(cudaMemcpy(p, h.data(), n * 4, cudaMemcpyHostToDevice));
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
    int32_t * ids[kReps + 1];
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
        for (int rep = 0; rep <= kReps; rep++) {
            std::vector<int32_t> h(n);
            for (int s = 0; s < n; s++) h[s] = rep_head(rep) + s; // steady decode: identity
            ids[rep] = dev_i32(h);
        }
    }
    ~gdn_problem() {
        for (void * p : {(void *) q, (void *) k, (void *) v, (void *) g, (void *) beta, (void *) cache, (void *) scratch, (void *) dst}) cudaFree(p);
        for (int32_t * p : ids) cudaFree(p);
    }
    int rep_head(int rep) const { return (rep * n) % (slots - n); }
    double bytes() const { return 2.0 * D * n * 4; } // state read + written
};

// The generated pair, both launched with programmatic dependent launch as
// ggml-cuda launches its kernels: the compute kernel overlaps the gather and
// waits for it only where the IR says (DepWait).
template <int NW, int CPW>
void gdn_generated(const gdn_problem & p, int rep, bool gather = true) {
    const int rs = p.rep_head(rep);
    if (gather && p.n >= 2) { // the glue leaves it out at one sequence (ops.Guard)
        kg_launch_pdl(gated_delta_net_gather_f32, gather_grid(p.D, p.n), dim3(256), kg_stream,
            p.cache, p.ids[rep], p.scratch, (uint32_t) p.D, (uint32_t) p.n, (uint32_t) rs);
    }
    const float scale = 1.0f / sqrtf((float) kSv);
    const uint32_t H = p.H, n = p.n;
    kg_launch_pdl(gated_delta_net_inplace_ids_f32<kSv, false, NW, CPW>, dim3(p.H, p.n, kSv / (NW * CPW)), dim3(32, NW), kg_stream,
        p.q, p.k, p.v, p.g, p.beta, p.cache, p.dst, p.cache + size_t(rs) * p.D, p.ids[rep], p.scratch,
        H, 1u, n, H, 1u, (uint32_t) kSv, kSv * H, kSv * H, (uint32_t) kSv, kSv * H, kSv * H, 1u, H, H, 1u, H, H, scale,
        (uint32_t) p.D, (uint32_t) rs);
}

#ifdef KG_WITH_REFERENCE
void gdn_reference(const gdn_problem & p, int rep) {
    const int rs = p.rep_head(rep);
    ggml_cuda_gdn_gather_nonident<float>(p.cache, p.ids[rep], rs, p.scratch, p.D, p.n, 0);
    launch_gdn_variant<kSv, false, false, GDN_DEFAULT_NW, GDN_DEFAULT_CPW, 2, false, false>(
        p.q, p.k, p.v, p.g, p.beta, p.scratch, p.dst, p.cache + size_t(rs) * p.D, p.ids[rep], rs, gdn_hybrid_args{},
        p.H, 1, p.n, kSv, kSv * p.H, kSv * p.H, kSv, kSv * p.H, kSv * p.H, 1, p.H, p.H,
        init_fastdiv_values(p.H), init_fastdiv_values(1), 1.0f / sqrtf((float) kSv), 1, 32, 0);
}
#endif

// One conv op D problem: C channels, d_conv 4, SiLU; ids a random
// permutation of pool cells (shuffled), the destination window moving.
struct conv_problem {
    int C, n, cells;
    size_t row;
    float *w, *x, *cache, *scratch, *dst, *states;
    int32_t * ids[kReps + 1];
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
        }
    }
    ~conv_problem() {
        for (void * p : {(void *) w, (void *) x, (void *) cache, (void *) scratch, (void *) dst, (void *) states}) cudaFree(p);
        for (int32_t * p : ids) cudaFree(p);
    }
    int rep_head(int rep) const { return (rep * n) % (cells - n); }
    double bytes() const { return 2.0 * row * n * 4; } // taps read + written
};

void conv_ids_generated(const conv_problem & p, int rep) {
    const uint32_t rs = p.rep_head(rep), C = p.C, n = p.n, row = p.row;
    if (n >= 2) { // the glue leaves it out at one sequence (ops.Guard)
        kg_launch_pdl(ssm_conv_gather_f32, gather_grid(p.row, p.n), dim3(256), kg_stream, p.cache, p.ids[rep], p.scratch, row, n, rs);
    }
    kg_launch_pdl(ssm_conv_update_inplace_ids_f32<4u, true>, dim3((p.C + 127) / 128, p.n), dim3(128), kg_stream,
        p.cache, p.w, p.x, p.cache + size_t(rs) * p.row, p.ids[rep], p.scratch, p.dst, C, n, 3u, row, 4u, C, row, C, rs);
}

// Op C reads its taps from a gathered copy in the model; here from rows of
// the same pool, away from the destination window, so both ops read DRAM.
const float * conv_states_of(const conv_problem & p, int rep) {
    return p.cache + size_t((p.rep_head(rep) + p.cells / 2) % (p.cells - p.n)) * p.row;
}

void conv_plain_generated(const conv_problem & p, int rep) {
    const uint32_t rs = p.rep_head(rep), C = p.C, n = p.n, row = p.row;
    kg_launch_pdl(ssm_conv_update_inplace_f32<4u, true>, dim3((p.C + 127) / 128, p.n), dim3(128), kg_stream,
        conv_states_of(p, rep), p.w, p.x, p.cache + size_t(rs) * p.row, p.dst, C, n, 3u, row, 4u, C, row, C);
}

#ifdef KG_WITH_REFERENCE
void conv_ids_reference(const conv_problem & p, int rep) {
    const int rs = p.rep_head(rep);
    ssm_conv_gather_nonident_kernel<<<p.n, 256>>>(p.cache, p.ids[rep], rs, p.scratch, (int) p.row, p.n);
    ssm_conv_update_ids_f32<true, 4><<<dim3((p.C + 127) / 128, p.n), 128>>>(p.scratch, p.w, p.x, p.cache + size_t(rs) * p.row, p.dst,
        p.ids[rep], rs, p.C, (int) p.row, 4, p.C, p.C, (int) p.row);
}

void conv_plain_reference(const conv_problem & p, int rep) {
    const int rs = p.rep_head(rep);
    ssm_conv_update_f32<true, 4><<<dim3((p.C + 127) / 128, p.n), 128>>>(conv_states_of(p, rep), p.w, p.x, p.cache + size_t(rs) * p.row, p.dst,
        p.C, (int) p.row, 4, p.C, p.C, (int) p.row);
}
#endif

} // namespace

int main(int argc, char ** argv) {
    FILE * csv = argc > 1 ? fopen(argv[1], "w") : stdout;
    cudaDeviceProp prop;
    KG_CHECK(cudaGetDeviceProperties(&prop, 0));
    const double copy = copy_rate_gbs();
    printf("device: %s, %d SMs, L2 %d MB; device-to-device copy %.0f GB/s (read+write)\n", prop.name, prop.multiProcessorCount,
           prop.l2CacheSize >> 20, copy);
    fprintf(csv, "bench,shape,n_seqs,impl,us,pct_copy\n");
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
            // Stream order, no overlap: each dispatch waits for the last, as
            // Vulkan's barrier makes it (bench/vulkan).
            kg_pdl_enabled = false;
            row("gdn_ids", shape, n, "generated 16,4 serial", t.us([&](int r) { gdn_generated<16, 4>(p, r); }), p.bytes());
            row("gdn_ids", shape, n, "generated 16,4 no gather serial", t.us([&](int r) { gdn_generated<16, 4>(p, r, false); }), p.bytes());
            kg_pdl_enabled = true;
#ifdef KG_WITH_REFERENCE
            row("gdn_ids", shape, n, "hand-written", t.us([&](int r) { gdn_reference(p, r); }), p.bytes());
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
#ifdef KG_WITH_REFERENCE
            row("conv_ids", shape, n, "hand-written", t.us([&](int r) { conv_ids_reference(p, r); }), p.bytes());
            row("conv", shape, n, "hand-written", t.us([&](int r) { conv_plain_reference(p, r); }), p.bytes());
#endif
        }
    }
    if (csv != stdout) fclose(csv);
    return 0;
}
