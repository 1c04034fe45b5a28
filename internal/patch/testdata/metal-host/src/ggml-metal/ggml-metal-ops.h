// stand-in for src/ggml-metal/ggml-metal-ops.h
#pragma once

#include "ggml-metal-device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ggml_metal_op * ggml_metal_op_t;

int ggml_metal_op_encode(ggml_metal_op_t ctx, int idx);

int ggml_metal_op_ssm_conv       (ggml_metal_op_t ctx, int idx);
int ggml_metal_op_gated_delta_net(ggml_metal_op_t ctx, int idx);

#ifdef __cplusplus
}
#endif
