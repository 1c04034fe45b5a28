// stand-in for src/ggml-metal/ggml-metal-ops.h
#pragma once

#include "ggml-metal-device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ggml_metal_op * ggml_metal_op_t;

ggml_metal_op_t ggml_metal_op_init(
        ggml_metal_device_t dev,
        ggml_metal_library_t lib,
        ggml_metal_encoder_t enc,
        struct ggml_cgraph * gf,
        bool use_fusion,
        bool use_concurrency);

void ggml_metal_op_free(ggml_metal_op_t ctx);

int ggml_metal_op_encode(ggml_metal_op_t ctx, int idx);

int ggml_metal_op_ssm_conv       (ggml_metal_op_t ctx, int idx);
int ggml_metal_op_gated_delta_net(ggml_metal_op_t ctx, int idx);
int ggml_metal_op_other          (ggml_metal_op_t ctx, int idx);

#ifdef __cplusplus
}
#endif
