// metal-fusion: the fusion form's Metal encode of one GDN layer's decode step.
//
// Built with the patched ggml-metal-ops.cpp, ggml-metal-device.cpp and
// ggml-metal-common.cpp of the stand-in, and graph.inc, which
// metal_fusion_test.go writes from ops/fusion's decode graph (build_graph:
// the tensors in one arena, each in buffers[] by the buffer it names):
//
//   c++ -std=c++17 -Iinclude -Isrc -Isrc/ggml-metal -Itests metal-fusion.cpp src/ggml-metal/ggml-metal-{ops,device,common}.cpp
//
// It matches the graph as ggml_metal_graph_compute does (unless the mode is
// "off", GGML_METAL_FUSION_DISABLE's), with the caches in a buffer of this
// device ("fused") or of another one ("other"), then encodes every node as
// ggml_metal_set_n_cb's block does and prints what the encoder records: a
// node encoded by its own encoder, each barrier, pipeline, kargs (as 32-bit
// words), buffer binding (the buffer's index in buffers[] and the byte
// offset) and dispatch.

#include "ggml.h"
#include "ggml-impl.h"
#include "ggml-backend-impl.h"
#include "ggml-metal-device.h"
#include "ggml-metal-ops.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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

int64_t ggml_nelements(const struct ggml_tensor * t) {
    return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
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

bool ggml_is_empty(const struct ggml_tensor * t) {
    return ggml_nelements(t) == 0;
}

struct ggml_tensor * ggml_graph_node(struct ggml_cgraph * cgraph, int i) {
    return cgraph->nodes[i];
}

enum ggml_unary_op ggml_get_unary_op(const struct ggml_tensor * t) {
    return (enum ggml_unary_op) t->op_params[0];
}

size_t ggml_backend_buft_get_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor * t) {
    GGML_UNUSED(buft);
    return ggml_nbytes(t);
}

static std::vector<char> arena;
static ggml_backend_buffer buffers[8];

#include "graph.inc"

// the device's calls, recorded

static int index_of(const void * buffer) {
    for (int i = 0; i < 8; i++) {
        if (buffer == &buffers[i]) {
            return i;
        }
    }
    return -1;
}

struct ggml_metal_buffer_id ggml_metal_buffer_get_id(void * buf_ctx, const struct ggml_tensor * t) {
    return { buf_ctx, (size_t) ((const char *) t->data - arena.data()) };
}

ggml_metal_cv_t ggml_metal_cv_init(void) {
    return nullptr;
}

void ggml_metal_cv_free(ggml_metal_cv_t cv) {
    GGML_UNUSED(cv);
}

void ggml_metal_cv_set_bool(ggml_metal_cv_t cv, bool value, int32_t idx) {
    GGML_UNUSED(cv);
    GGML_UNUSED(value);
    GGML_UNUSED(idx);
}

struct ggml_metal_pipeline_with_params ggml_metal_library_get_pipeline(ggml_metal_library_t lib, const char * name) {
    GGML_UNUSED(lib);
    GGML_UNUSED(name);
    return {};
}

static std::vector<std::string> names;

struct ggml_metal_pipeline_with_params ggml_metal_library_compile_pipeline(ggml_metal_library_t lib, const char * base, const char * name, ggml_metal_cv_t cv) {
    GGML_UNUSED(lib);
    GGML_UNUSED(base);
    GGML_UNUSED(cv);
    names.push_back(name);
    struct ggml_metal_pipeline_with_params res = {};
    res.pipeline = (ggml_metal_pipeline_t) (uintptr_t) names.size();
    return res;
}

void ggml_metal_encoder_set_pipeline(ggml_metal_encoder_t encoder, struct ggml_metal_pipeline_with_params pipeline) {
    GGML_UNUSED(encoder);
    printf("pipeline %s\n", names[(uintptr_t) pipeline.pipeline - 1].c_str());
}

void ggml_metal_encoder_set_bytes(ggml_metal_encoder_t encoder, void * data, size_t size, int idx) {
    GGML_UNUSED(encoder);
    printf("bytes %d", idx);
    for (size_t i = 0; i + 4 <= size; i += 4) {
        uint32_t word;
        memcpy(&word, (const char *) data + i, 4);
        printf(" %u", word);
    }
    printf("\n");
}

void ggml_metal_encoder_set_buffer(ggml_metal_encoder_t encoder, struct ggml_metal_buffer_id buffer, int idx) {
    GGML_UNUSED(encoder);
    printf("buffer %d %d %zu\n", idx, index_of(buffer.metal), buffer.offs);
}

void ggml_metal_encoder_dispatch_threadgroups(ggml_metal_encoder_t encoder, int tg0, int tg1, int tg2, int tptg0, int tptg1, int tptg2) {
    GGML_UNUSED(encoder);
    printf("dispatch %d %d %d %d %d %d\n", tg0, tg1, tg2, tptg0, tptg1, tptg2);
}

void ggml_metal_encoder_memory_barrier(ggml_metal_encoder_t encoder) {
    GGML_UNUSED(encoder);
    printf("barrier\n");
}

// the nodes' own encoders

static std::vector<ggml_tensor *> kept; // the non-empty nodes, which the encode context indexes

static int encoded(int idx) {
    printf("node %s\n", kept[idx]->name);
    return 1;
}

int ggml_metal_op_ssm_conv(ggml_metal_op_t ctx, int idx) {
    GGML_UNUSED(ctx);
    return encoded(idx);
}

int ggml_metal_op_gated_delta_net(ggml_metal_op_t ctx, int idx) {
    GGML_UNUSED(ctx);
    return encoded(idx);
}

int ggml_metal_op_other(ggml_metal_op_t ctx, int idx) {
    GGML_UNUSED(ctx);
    return encoded(idx);
}

int main(int argc, char ** argv) {
    const std::string mode = argc > 1 ? argv[1] : "fused";

    struct ggml_backend_device devs[2] = {};
    struct ggml_backend_buffer_type bufts[2] = {};
    ggml_metal_device_t dev = (ggml_metal_device_t) &devs[0]; // a stand-in: the device is only compared
    devs[0].context = dev;
    devs[1].context = &devs[1];
    bufts[0].device = &devs[0];
    bufts[1].device = &devs[1];
    for (int i = 0; i < 8; i++) {
        buffers[i].buft = &bufts[mode == "other" && i == cache_buffer ? 1 : 0];
        buffers[i].context = &buffers[i];
    }

    ggml_cgraph * graph = build_graph();
    for (int i = 0; i < graph->n_nodes; i++) {
        if (!ggml_op_is_empty(graph->nodes[i]->op) && !ggml_is_empty(graph->nodes[i])) {
            kept.push_back(graph->nodes[i]);
        }
    }

    // ggml_metal_graph_compute: matched once, on the whole graph
    ggml_metal_gdn_fusion_t fusion = ggml_metal_gdn_fusion_init();
    if (mode != "off") {
        ggml_metal_gdn_fusion_match(fusion, dev, graph);
    }
    // ggml_metal_set_n_cb's block: one encode context, every node
    ggml_metal_op_t ctx = ggml_metal_op_init(dev, nullptr, nullptr, graph, mode != "off", fusion, true);
    for (int idx = 0; idx < (int) kept.size(); idx++) {
        idx += ggml_metal_op_encode(ctx, idx) - 1;
    }
    ggml_metal_op_free(ctx);
    ggml_metal_gdn_fusion_free(fusion);
    return 0;
}
