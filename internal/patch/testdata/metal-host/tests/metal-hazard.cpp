// metal-hazard: the concurrency and reorder decisions of ggml-metal-common.cpp
// on decode-shaped graphs with the fused nodes that write a src in place.
//
// Built with ggml-metal-common.cpp of a patched tree (the stand-in of
// testdata/metal-host in CI, a real ggml tree by hand) and its headers:
//
//   c++ -std=c++17 -Iinclude -Isrc -Isrc/ggml-metal metal-hazard.cpp src/ggml-metal/ggml-metal-common.cpp
//
// For every fused writer W (conv update: src[3], the conv cache; GDN: src[6],
// the recurrent state) and every other node R that touches the tensor W
// writes, it checks that
//   - the encoder never puts R in W's concurrent set (no barrier between them),
//   - ggml_graph_optimize keeps R on the same side of W;
// and that a node writing the bytes after op D's output (its gather scratch,
// counted by the alloc size the ranges take) is not in D's concurrent set.
// The encoder is modelled by its per-node decision only (check, else barrier;
// then add); the barrier the ids variants put between their gather and
// compute is left out, so the model has no more barriers than the real one.
// Exit status 1 and a line per violation when a check fails.

#include "ggml.h"
#include "ggml-impl.h"
#include "ggml-backend-impl.h"
#include "ggml-metal-common.h"
#include "fused-ops-supports.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

// link stand-ins for what ggml-metal-common.cpp calls outside the file

void ggml_abort(const char * file, int line, const char * fmt, ...) {
    va_list args;
    va_start(args, fmt);
    fprintf(stderr, "%s:%d: ", file, line);
    vfprintf(stderr, fmt, args);
    fprintf(stderr, "\n");
    va_end(args);
    abort();
}

void ggml_log_internal(enum ggml_log_level level, const char * format, ...) {
    GGML_UNUSED(level);
    GGML_UNUSED(format);
}

size_t ggml_nbytes(const struct ggml_tensor * t) {
    size_t n = sizeof(float); // every tensor here is f32 or i32
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (t->ne[i] <= 0) {
            return 0;
        }
        n += (t->ne[i] - 1) * t->nb[i];
    }
    return n;
}

bool ggml_are_same_shape(const struct ggml_tensor * t0, const struct ggml_tensor * t1) {
    return memcmp(t0->ne, t1->ne, sizeof(t0->ne)) == 0;
}

bool ggml_are_same_stride(const struct ggml_tensor * t0, const struct ggml_tensor * t1) {
    return memcmp(t0->nb, t1->nb, sizeof(t0->nb)) == 0;
}

bool ggml_is_contiguous_rows(const struct ggml_tensor * tensor) {
    return tensor->ne[0] == 1 || tensor->nb[0] == sizeof(float);
}

// what the patched ggml-metal.cpp get_alloc_size returns: the op D gather scratch after the output
size_t ggml_backend_buft_get_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor * t) {
    GGML_UNUSED(buft);
    return ggml_nbytes(t) + ggml_metal_fused_scratch_bytes(t);
}

namespace {

// a graph in one buffer: tensors, views of them and nodes
struct graph {
    std::deque<ggml_tensor> tensors;
    std::vector<ggml_tensor *> nodes;
    std::vector<int> written; // per node: the src slot it writes in place, or -1

    ggml_backend_buffer buf = {};
    size_t top = 0x10000;

    ggml_tensor * tensor(const char * name, int64_t ne0, int64_t ne1 = 1, int64_t ne2 = 1, int64_t ne3 = 1, ggml_type type = GGML_TYPE_F32) {
        tensors.emplace_back();
        ggml_tensor * t = &tensors.back();
        memset(t, 0, sizeof(*t));
        t->type = type;
        const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
        size_t nb = sizeof(float);
        for (int i = 0; i < 4; i++) {
            t->ne[i] = ne[i];
            t->nb[i] = nb;
            nb *= ne[i];
        }
        snprintf(t->name, sizeof(t->name), "%s", name);
        t->buffer = &buf;
        t->data = (void *) top;
        top += 4096 * ((ggml_backend_buft_get_alloc_size(nullptr, t) + 4095) / 4096);
        return t;
    }

    ggml_tensor * view(ggml_tensor * base, const char * name) {
        tensors.push_back(*base);
        ggml_tensor * v = &tensors.back();
        v->view_src = base;
        v->op = GGML_OP_VIEW;
        snprintf(v->name, sizeof(v->name), "%s", name);
        return v;
    }

    // a node writing dst from srcs; written is the src slot it also writes, or -1
    ggml_tensor * node(ggml_op op, ggml_tensor * dst, std::vector<ggml_tensor *> srcs, int written_src = -1) {
        dst->op = op;
        for (size_t i = 0; i < srcs.size(); i++) {
            dst->src[i] = srcs[i];
        }
        nodes.push_back(dst);
        written.push_back(written_src);
        return dst;
    }
};

const ggml_tensor * base_of(const ggml_tensor * t) {
    return t->view_src ? t->view_src : t;
}

bool touches(const ggml_tensor * node, const ggml_tensor * base) {
    if (base_of(node) == base) {
        return true;
    }
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        if (node->src[i] && base_of(node->src[i]) == base) {
            return true;
        }
    }
    return false;
}

// the concurrent set of each node as the encoder would form them, in order
std::vector<int> concurrent_sets(const std::vector<ggml_tensor *> & order) {
    ggml_mem_ranges_t mrs = ggml_mem_ranges_init(0);
    std::vector<int> set(order.size());
    int s = 0;
    for (size_t i = 0; i < order.size(); i++) {
        if (!ggml_mem_ranges_check(mrs, order[i])) {
            ggml_mem_ranges_reset(mrs);
            s++;
        }
        ggml_mem_ranges_add(mrs, order[i]);
        set[i] = s;
    }
    ggml_mem_ranges_free(mrs);
    return set;
}

int index_of(const std::vector<ggml_tensor *> & order, const ggml_tensor * t) {
    for (size_t i = 0; i < order.size(); i++) {
        if (order[i] == t) {
            return (int) i;
        }
    }
    return -1;
}

int check(const char * what, graph & g) {
    int bad = 0;
    const std::vector<ggml_tensor *> before = g.nodes;

    for (size_t w = 0; w < before.size(); w++) {
        if (ggml_metal_fused_written_src(before[w]) != g.written[w]) {
            printf("%s: ggml_metal_fused_written_src(%s) is %d, the node writes src[%d]\n",
                    what, before[w]->name, ggml_metal_fused_written_src(before[w]), g.written[w]);
            bad++;
        }
    }

    ggml_cgraph gf = {};
    gf.n_nodes = (int) g.nodes.size();
    gf.size = gf.n_nodes;
    gf.nodes = g.nodes.data();
    ggml_graph_optimize(&gf);
    const std::vector<ggml_tensor *> after(gf.nodes, gf.nodes + gf.n_nodes);

    const std::vector<ggml_tensor *> * orders[2] = { &before, &after };
    const char * order_names[2] = { "graph order", "reordered" };
    for (int o = 0; o < 2; o++) {
        const std::vector<ggml_tensor *> & order = *orders[o];
        const std::vector<int> set = concurrent_sets(order);
        printf("%s, %s:", what, order_names[o]);
        for (size_t i = 0; i < order.size(); i++) {
            printf(" %s[%d]", order[i]->name, set[i]);
        }
        printf("\n");

        for (size_t w = 0; w < before.size(); w++) {
            if (g.written[w] < 0) {
                continue;
            }
            const ggml_tensor * cache = base_of(before[w]->src[g.written[w]]);
            const int iw = index_of(order, before[w]);
            for (size_t r = 0; r < before.size(); r++) {
                if (r == w || !touches(before[r], cache)) {
                    continue;
                }
                const int ir = index_of(order, before[r]);
                if (set[ir] == set[iw]) {
                    printf("HAZARD %s, %s: %s shares concurrent set %d with %s, which writes %s\n",
                            what, order_names[o], before[r]->name, set[ir], before[w]->name, cache->name);
                    bad++;
                }
                if (o == 1 && (ir < iw) != (r < w)) {
                    printf("HAZARD %s: the reorder moved %s %s %s, which writes %s\n",
                            what, before[r]->name, ir < iw ? "before" : "after", before[w]->name, cache->name);
                    bad++;
                }
            }
        }
    }
    return bad;
}

// one decode step of a hybrid layer: input projection, the conv update (writes
// the conv cache), a node reading the conv cache, the GDN (writes the
// recurrent state), a node reading the recurrent state; ids: the ids variants
int decode_step(bool ids) {
    graph g;
    const int64_t d_conv = 4, n_ch = 64, n_seqs = 2, S_v = 16, H = 2;

    ggml_tensor * h       = g.tensor("h", n_ch);
    ggml_tensor * w_in    = g.tensor("w_in", n_ch, n_ch);
    ggml_tensor * conv    = g.tensor("conv_cache", d_conv - 1, n_ch, n_seqs);
    ggml_tensor * conv_w  = g.tensor("conv_w", d_conv, n_ch);
    ggml_tensor * rs      = g.tensor("rs_cache", S_v * S_v * H, n_seqs);
    ggml_tensor * seq_ids = g.tensor("ids", n_seqs, 1, 1, 1, GGML_TYPE_I32);

    ggml_tensor * x = g.node(GGML_OP_MUL_MAT, g.tensor("x", n_ch, 1, n_seqs), { w_in, h });

    std::vector<ggml_tensor *> conv_srcs = { g.view(conv, "conv_taps"), conv_w, x, g.view(conv, "conv_window") };
    if (ids) {
        conv_srcs.push_back(seq_ids);
    }
    ggml_tensor * conv_out = g.node(GGML_OP_SSM_CONV, g.tensor(ids ? "conv_update_ids" : "conv_update", n_ch, 1, n_seqs), conv_srcs, 3);

    g.node(GGML_OP_SCALE, g.tensor("conv_reader", d_conv - 1, n_ch, n_seqs), { g.view(conv, "conv_read") });

    ggml_tensor * q = g.node(GGML_OP_MUL, g.tensor("q", S_v, H, 1, n_seqs), { conv_out, w_in });
    ggml_tensor * k    = g.tensor("k", S_v, H, 1, n_seqs);
    ggml_tensor * v    = g.tensor("v", S_v, H, 1, n_seqs);
    ggml_tensor * gate = g.tensor("g", 1, H, 1, n_seqs);
    ggml_tensor * beta = g.tensor("beta", 1, H, 1, n_seqs);

    std::vector<ggml_tensor *> gdn_srcs = { q, k, v, gate, beta, g.view(rs, "state_in"), g.view(rs, "state_dst") };
    if (ids) {
        gdn_srcs.push_back(seq_ids);
    }
    g.node(GGML_OP_GATED_DELTA_NET, g.tensor(ids ? "gdn_ids" : "gdn", S_v * H * n_seqs + S_v * S_v * H * n_seqs), gdn_srcs, 6);

    g.node(GGML_OP_SCALE, g.tensor("state_reader", S_v * S_v * H, n_seqs), { g.view(rs, "state_read") });

    return check(ids ? "decode step (ids variants)" : "decode step", g);
}

// a node reads each cache before the fused node that writes it, with nothing
// else between them: only the written src can order them
int read_then_update() {
    graph g;
    const int64_t d_conv = 4, n_ch = 64, n_seqs = 1, S_v = 16, H = 2;

    ggml_tensor * conv = g.tensor("conv_cache", d_conv - 1, n_ch, n_seqs);
    ggml_tensor * rs   = g.tensor("rs_cache", S_v * S_v * H, n_seqs);

    g.node(GGML_OP_SCALE, g.tensor("conv_reader", d_conv - 1, n_ch, n_seqs), { g.view(conv, "conv_read") });
    g.node(GGML_OP_SCALE, g.tensor("state_reader", S_v * S_v * H, n_seqs), { g.view(rs, "state_read") });

    g.node(GGML_OP_SSM_CONV, g.tensor("conv_update", n_ch, 1, n_seqs),
            { g.view(conv, "conv_taps"), g.tensor("conv_w", d_conv, n_ch), g.tensor("x", n_ch, 1, n_seqs), g.view(conv, "conv_window") }, 3);

    g.node(GGML_OP_GATED_DELTA_NET, g.tensor("gdn", S_v * H * n_seqs + S_v * S_v * H * n_seqs),
            { g.tensor("q", S_v, H, 1, n_seqs), g.tensor("k", S_v, H, 1, n_seqs), g.tensor("v", S_v, H, 1, n_seqs),
              g.tensor("g", 1, H, 1, n_seqs), g.tensor("beta", 1, H, 1, n_seqs), g.view(rs, "state_in"), g.view(rs, "state_dst") }, 6);

    return check("read then update", g);
}

// op D keeps its gather scratch in the bytes after its output (its alloc
// size): a node whose output lies there must not run with it either
int scratch_after_output() {
    graph g;
    const int64_t d_conv = 4, n_ch = 64, n_seqs = 2;

    ggml_tensor * conv = g.tensor("conv_cache", d_conv - 1, n_ch, n_seqs);
    ggml_tensor * d = g.node(GGML_OP_SSM_CONV, g.tensor("conv_update_ids", n_ch, 1, n_seqs),
            { g.view(conv, "conv_taps"), g.tensor("conv_w", d_conv, n_ch), g.tensor("x", n_ch, 1, n_seqs), g.view(conv, "conv_window"),
              g.tensor("ids", n_seqs, 1, 1, 1, GGML_TYPE_I32) }, 3);

    ggml_tensor * z = g.tensor("in_scratch", 16);
    z->data = (char *) d->data + ggml_nbytes(d);
    g.node(GGML_OP_SCALE, z, { g.tensor("y", 16) });

    if (ggml_metal_fused_scratch_bytes(d) < ggml_nbytes(z)) {
        printf("scratch after output: op D has %zu bytes of scratch, the test needs %zu\n", ggml_metal_fused_scratch_bytes(d), ggml_nbytes(z));
        return 1;
    }
    const std::vector<int> set = concurrent_sets(g.nodes);
    printf("scratch after output: %s[%d] %s[%d]\n", d->name, set[0], z->name, set[1]);
    if (set[0] == set[1]) {
        printf("HAZARD scratch after output: %s writes the gather scratch of %s in its concurrent set\n", z->name, d->name);
        return 1;
    }
    return 0;
}

} // namespace

int main() {
    const int bad = decode_step(false) + decode_step(true) + read_then_update() + scratch_after_output();
    if (bad) {
        printf("%d hazard(s)\n", bad);
        return 1;
    }
    printf("ok: no node touching a written cache shares a concurrent set with its writer or changes sides in the reorder\n");
    return 0;
}
