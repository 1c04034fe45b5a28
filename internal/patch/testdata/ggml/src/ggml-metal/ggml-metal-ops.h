// stand-in for src/ggml-metal/ggml-metal-ops.h
#pragma once

#include "ggml-metal-device.h"

typedef struct ggml_metal_op * ggml_metal_op_t;

ggml_metal_op_t ggml_metal_op_init(
        ggml_metal_device_t dev,
        bool use_fusion,
        bool use_concurrency);
