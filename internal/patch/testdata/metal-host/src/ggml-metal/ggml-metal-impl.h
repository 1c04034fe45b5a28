// stand-in for src/ggml-metal/ggml-metal-impl.h: the kargs structs shared by
// the host and the library (the neighbours' here, reduced to one field)
#pragma once

#include <stdint.h>

typedef struct {
    int32_t ne00;
} ggml_metal_kargs_gated_delta_net;
