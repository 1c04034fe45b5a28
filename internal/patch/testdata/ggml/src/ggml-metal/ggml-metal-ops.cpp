// stand-in for src/ggml-metal/ggml-metal-ops.cpp
#include "ggml-metal-impl.h"
#include "ggml-metal-device.h"

static int ggml_metal_op_encode_impl(ggml_metal_op_t ctx, int idx) {
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
