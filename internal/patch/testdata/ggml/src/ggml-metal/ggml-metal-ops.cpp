// stand-in for src/ggml-metal/ggml-metal-ops.cpp
#include "ggml-metal-ops.h"
#include "ggml-metal-impl.h"
#include "ggml-metal-device.h"

#include <cassert>
#include <cmath>

struct ggml_metal_op {
    ggml_metal_op(
        ggml_metal_device_t dev,
        bool use_fusion,
        bool use_concurrency) {
        this->dev             = dev;
        this->use_fusion      = use_fusion;
        this->use_concurrency = use_concurrency;
    }

    ggml_metal_device_t  dev;

    bool use_fusion;
    bool use_concurrency;

    int debug_fusion;
};

ggml_metal_op_t ggml_metal_op_init(
        ggml_metal_device_t dev,
        bool use_fusion,
        bool use_concurrency) {
    ggml_metal_op_t res = new ggml_metal_op(
        dev,
        use_fusion,
        use_concurrency);

    return res;
}

static int ggml_metal_op_encode_impl(ggml_metal_op_t ctx, int idx) {
    struct ggml_tensor * node = ctx->node(idx);

    if ((node->flags & GGML_TENSOR_FLAG_COMPUTE) == 0) {
        return 1;
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
    }
    return n_fuse;
}
