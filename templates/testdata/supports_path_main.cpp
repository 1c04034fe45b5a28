// Runs a backend's whole supports_op path for the fused nodes (its helper,
// included through KG_SUPPORTS, and the text spliced into its supports_op,
// supports_path.inc, followed by a plain switch that takes every
// GATED_DELTA_NET and SSM_CONV node as the plain cases would) on nodes built
// like ggml's builders build them, then a stand-in of ggml_backend_sched's
// placement over {this device, the CPU} with the cache in host memory.
// Written for supports_path_test.go; the names follow ggml's.
#include "ggml_fixture.h"

// a buffer type belongs to one device; a device uses the buffer types it is told it supports
struct ggml_backend_buffer_type { const char * name; };
typedef ggml_backend_buffer_type * ggml_backend_buffer_type_t;
struct ggml_backend_buffer { ggml_backend_buffer_type_t buft; };
typedef ggml_backend_buffer * ggml_backend_buffer_t;
struct ggml_backend_device { ggml_backend_buffer_type_t bufts[2]; };
typedef ggml_backend_device * ggml_backend_dev_t;

static ggml_backend_buffer_type_t ggml_backend_buffer_get_type(ggml_backend_buffer_t buffer) { return buffer->buft; }
static bool ggml_backend_dev_supports_buft(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft) {
    return buft == dev->bufts[0] || buft == dev->bufts[1];
}

#include KG_SUPPORTS

#include <cstdio>
#include <vector>

enum { REFUSED = 0, FUSED = 1, PLAIN = 2 };

// supports_path is the device's supports_op: FUSED where the splice accepts
// the node, REFUSED where it (or the backend's own check) says no, PLAIN where
// the node falls through to the plain cases and their kernel.
static int supports_path(ggml_backend_dev_t dev, const ggml_tensor * op) {
#include "supports_locals.inc"
#include "supports_path.inc"
    switch (op->op) {
        case GGML_OP_GATED_DELTA_NET:
        case GGML_OP_SSM_CONV:
            return PLAIN;
        default:
            return REFUSED;
    }
}

static ggml_backend_buffer_type device_buft = { "device" };
static ggml_backend_buffer_type host_buft   = { "host" };
static ggml_backend_buffer device_buffer    = { &device_buft };
static ggml_backend_buffer host_buffer      = { &host_buft };
static ggml_backend_device device           = { { &device_buft, nullptr } };
static ggml_backend_device cpu              = { { &host_buft, nullptr } };

static std::vector<ggml_tensor *> pool;

static ggml_tensor * t(ggml_type type, int64_t n0, int64_t n1 = 1, int64_t n2 = 1, int64_t n3 = 1) {
    ggml_tensor * x = new ggml_tensor;
    x->type = type;
    const size_t es = type == GGML_TYPE_BF16 ? 2 : 4;
    x->ne[0] = n0; x->ne[1] = n1; x->ne[2] = n2; x->ne[3] = n3;
    x->nb[0] = es; x->nb[1] = es * n0; x->nb[2] = x->nb[1] * n1; x->nb[3] = x->nb[2] * n2;
    x->buffer = &device_buffer;
    pool.push_back(x);
    return x;
}

// a view of the cache as the model graph takes it: no buffer of its own until allocated
static ggml_tensor * view(ggml_tensor * cache, int64_t n0, int64_t n1) {
    ggml_tensor * v = t(cache->type, n0, n1);
    v->buffer = nullptr;
    v->view_src = cache;
    v->data = cache->data;
    return v;
}

// gdn builds a GDN node: S_v, H, n_seqs; form 'P' (plain), 'A', 'B'.
static ggml_tensor * gdn(int64_t sv, int64_t h, int64_t n, char form) {
    ggml_tensor * op = t(GGML_TYPE_F32, sv * h, n + sv * n);
    op->op = GGML_OP_GATED_DELTA_NET;
    op->src[0] = t(GGML_TYPE_F32, sv, h, 1, n);
    op->src[1] = t(GGML_TYPE_F32, sv, h, 1, n);
    op->src[2] = t(GGML_TYPE_F32, sv, h, 1, n);
    op->src[3] = t(GGML_TYPE_F32, 1, h, 1, n);
    op->src[4] = t(GGML_TYPE_F32, 1, h, 1, n);
    op->src[5] = t(GGML_TYPE_F32, sv, sv, h, form == 'B' ? n + 4 : n);
    op->op_params[0] = 1;
    if (form != 'P') op->src[6] = view(t(GGML_TYPE_F32, sv * sv * h, n + 4), sv * sv * h, n);
    if (form == 'B') op->src[7] = t(GGML_TYPE_I32, n);
    return op;
}

static ggml_tensor * conv(int64_t k, int64_t c, int64_t n, char form) {
    ggml_tensor * op = t(GGML_TYPE_F32, c, 1, n);
    op->op = GGML_OP_SSM_CONV;
    op->src[0] = t(GGML_TYPE_F32, k - 1, c, form == 'D' ? n + 3 : n);
    op->src[1] = t(GGML_TYPE_F32, k, c);
    op->src[2] = t(GGML_TYPE_F32, c, 1, n);
    op->op_params[0] = 1;
    if (form != 'P') op->src[3] = view(t(GGML_TYPE_F32, (k - 1) * c, n + 3), (k - 1) * c, n);
    if (form == 'D') op->src[4] = t(GGML_TYPE_I32, n);
    return op;
}

static int failures = 0;
static void expect(const char * what, const ggml_tensor * op, int want) {
    static const char * names[] = { "refused", "run by the fused kernel", "handed to the plain kernel" };
    const int got = supports_path(&device, op);
    if (got != want) {
        printf("FAIL %s: %s, want %s\n", what, names[got], names[want]);
        failures++;
    }
}

// The cache after one step of graph {node}, placed as ggml_backend_sched
// places it: on the first backend (device, then CPU) whose supports_op takes
// it; a source in a buffer that backend cannot use is copied into its memory
// first (the split's input copy), and the node runs on the copy. The node
// stands in for the fused op: it adds 1 to each row it writes in place. The
// unfused graph (the plain op, then a copy of its state into the cache)
// leaves the cache plus 1.
static void sched_step(const char * what, ggml_tensor * op, int slot) {
    ggml_tensor * written = op->src[slot];
    ggml_tensor * cache = written->view_src;
    cache->buffer = &host_buffer;
    std::vector<float> rows(written->ne[0] * written->ne[1], 0.0f);
    cache->data = written->data = rows.data();

    ggml_backend_dev_t backend = supports_path(&device, op) != REFUSED ? &device : &cpu;
    std::vector<float> copy;
    float * target = (float *) written->data;
    if (!ggml_backend_dev_supports_buft(backend, ggml_backend_buffer_get_type(cache->buffer))) {
        copy = rows;
        target = copy.data();
    }
    for (size_t i = 0; i < rows.size(); i++) {
        target[i] += 1.0f;
    }
    for (size_t i = 0; i < rows.size(); i++) {
        if (rows[i] != 1.0f) {
            printf("FAIL %s: the cache in host memory after the step is %g, the unfused graph's is 1 (the node ran on %s)\n",
                what, rows[i], backend == &cpu ? "the CPU" : "the device");
            failures++;
            break;
        }
    }
    cache->buffer = &device_buffer;
}

int main() {
    expect("plain GDN", gdn(128, 4, 2, 'P'), PLAIN);
    expect("plain conv", conv(4, 256, 2, 'P'), PLAIN);
    for (int64_t sv : {16, 32, 64, 128}) {
        expect("op A", gdn(sv, 4, 2, 'A'), FUSED);
        expect("op B", gdn(sv, 4, 2, 'B'), FUSED);
    }
    expect("op C", conv(4, 256, 2, 'C'), FUSED);
    expect("op D", conv(4, 100, 3, 'D'), FUSED);

    // fused nodes outside the variant table: refused, never run by the plain kernel
    expect("op A with S_v 48", gdn(48, 4, 2, 'A'), REFUSED);
    expect("op A with S_v 256", gdn(256, 4, 2, 'A'), REFUSED);
    ggml_tensor * qk = gdn(64, 4, 2, 'A');
    qk->src[1] = t(GGML_TYPE_F32, 64, 4, 1, 2);
    qk->src[1]->nb[1] = 2 * qk->src[1]->nb[1]; // k a view of every other head
    expect("op A with q and k of different strides", qk, REFUSED);
    ggml_tensor * short_ids = gdn(64, 4, 3, 'B');
    short_ids->src[7] = t(GGML_TYPE_I32, 2);
    expect("op B with 2 ids for 3 sequences", short_ids, REFUSED);
    expect("op C with d_conv 9", conv(9, 256, 2, 'C'), REFUSED);
    ggml_tensor * long_ids = conv(4, 100, 3, 'D');
    long_ids->src[4] = t(GGML_TYPE_I32, 5);
    expect("op D with 5 ids for 3 sequences", long_ids, REFUSED);

    // the written tensor in memory this device cannot use: refused
    ggml_tensor * host_state = gdn(128, 4, 2, 'A');
    host_state->src[6]->view_src->buffer = &host_buffer;
    expect("op A with the state cache in host memory", host_state, REFUSED);
    ggml_tensor * host_ring = conv(4, 256, 2, 'D');
    host_ring->src[3]->view_src->buffer = &host_buffer;
    expect("op D with the conv cache in host memory", host_ring, REFUSED);

#if KG_MAX_BINDING
    // a cache past what one binding of the device spans (its kernels index a binding in 32 bits): refused
    ggml_tensor * big_state = gdn(128, 4, 2, 'B');
    big_state->src[5] = t(GGML_TYPE_F32, 128, 128, 4, 1000);
    expect("op B with a 250 MiB state cache", big_state, REFUSED);
    ggml_tensor * big_ring = conv(4, 256, 3, 'D');
    big_ring->src[0] = t(GGML_TYPE_F32, 3, 256, 100000);
    expect("op D with a 293 MiB conv cache", big_ring, REFUSED);
#endif

    sched_step("op A, state cache in host memory", gdn(128, 4, 2, 'A'), 6);
    sched_step("op B, state cache in host memory", gdn(128, 4, 2, 'B'), 6);
    sched_step("op C, conv cache in host memory", conv(4, 256, 2, 'C'), 3);
    sched_step("op D, conv cache in host memory", conv(4, 100, 3, 'D'), 3);

    printf("%d failures\n", failures);
    return failures != 0;
}
