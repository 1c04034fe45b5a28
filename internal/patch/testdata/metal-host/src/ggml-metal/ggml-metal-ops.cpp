// stand-in for src/ggml-metal/ggml-metal-ops.cpp: the encode context and the
// encode switch, around the cases kernelgen patch anchors on
#include "ggml-metal-ops.h"

#include "ggml.h"
#include "ggml-impl.h"
#include "ggml-backend-impl.h"

#include "ggml-metal-impl.h"
#include "ggml-metal-common.h"
#include "ggml-metal-device.h"

#include <cassert>
#include <algorithm>
#include <cmath>
#include <vector>

static ggml_metal_buffer_id ggml_metal_get_buffer_id(const ggml_tensor * t) {
    if (!t) {
        return { nullptr, 0 };
    }

    ggml_backend_buffer_t buffer = t->view_src ? t->view_src->buffer : t->buffer;

    return ggml_metal_buffer_get_id(buffer->context, t);
}

struct ggml_metal_op {
    ggml_metal_op(
        ggml_metal_device_t dev,
        ggml_metal_library_t lib,
        ggml_metal_encoder_t enc,
        ggml_cgraph * gf,
        bool use_fusion,
        bool use_concurrency) {
        this->dev             = dev;
        this->lib             = lib;
        this->enc             = enc;
        this->mem_ranges      = use_concurrency ? ggml_mem_ranges_init(0) : nullptr;
        this->use_fusion      = use_fusion;
        this->use_concurrency = use_concurrency;
        this->gf              = gf;

        for (int i = 0; i < gf->n_nodes; i++) {
            if (!ggml_op_is_empty(gf->nodes[i]->op) && !ggml_is_empty(gf->nodes[i])) {
                idxs.push_back(i);
            }
        }
    }

    ~ggml_metal_op() {
        ggml_mem_ranges_free(this->mem_ranges);
    }

    ggml_tensor * node(int i) const {
        assert(i >= 0 && i < (int) idxs.size());
        return ggml_graph_node(gf, idxs[i]);
    }

    ggml_metal_device_t  dev;
    ggml_metal_library_t lib;
    ggml_metal_encoder_t enc;
    ggml_mem_ranges_t    mem_ranges;

    bool use_fusion;
    bool use_concurrency;

    int debug_fusion;

private:
    ggml_cgraph * gf;

    std::vector<int> idxs;
};

ggml_metal_op_t ggml_metal_op_init(
        ggml_metal_device_t dev,
        ggml_metal_library_t lib,
        ggml_metal_encoder_t enc,
        ggml_cgraph * gf,
        bool use_fusion,
        bool use_concurrency) {
    ggml_metal_op_t res = new ggml_metal_op(
        dev,
        lib,
        enc,
        gf,
        use_fusion,
        use_concurrency);

    return res;
}

void ggml_metal_op_free(ggml_metal_op_t ctx) {
    delete ctx;
}

static bool ggml_metal_op_concurrency_reset(ggml_metal_op_t ctx) {
    if (!ctx->mem_ranges) {
        return true;
    }

    ggml_metal_encoder_memory_barrier(ctx->enc);
    ggml_mem_ranges_reset(ctx->mem_ranges);

    return true;
}

static bool ggml_metal_op_concurrency_check(ggml_metal_op_t ctx, const ggml_tensor * node) {
    return ctx->mem_ranges && ggml_mem_ranges_check(ctx->mem_ranges, node);
}

static bool ggml_metal_op_concurrency_add(ggml_metal_op_t ctx, const ggml_tensor * node) {
    return !ctx->mem_ranges || ggml_mem_ranges_add(ctx->mem_ranges, node);
}

static int ggml_metal_op_encode_impl(ggml_metal_op_t ctx, int idx) {
    struct ggml_tensor * node = ctx->node(idx);

    if ((node->flags & GGML_TENSOR_FLAG_COMPUTE) == 0) {
        return 1;
    }

    // a node that cannot run with the ones encoded since the last barrier gets a new barrier
    if (!ggml_metal_op_concurrency_check(ctx, node)) {
        ggml_metal_op_concurrency_reset(ctx);
    }

    int n_fuse = 1;

    switch (node->op) {
        case GGML_OP_SSM_CONV:
            {
                n_fuse = ggml_metal_op_ssm_conv(ctx, idx);
            } break;
        case GGML_OP_GATED_DELTA_NET:
            {
                n_fuse = ggml_metal_op_gated_delta_net(ctx, idx);
            } break;
        default:
            {
                // the other ops' encoders, one for all in the stand-in
                n_fuse = ggml_metal_op_other(ctx, idx);
            } break;
    }

    for (int i = 0; i < n_fuse; ++i) {
        if (!ggml_metal_op_concurrency_add(ctx, ctx->node(idx + i))) {
            ggml_metal_op_concurrency_reset(ctx);
        }
    }

    return n_fuse;
}

int ggml_metal_op_encode(ggml_metal_op_t ctx, int idx) {
    return ggml_metal_op_encode_impl(ctx, idx);
}
