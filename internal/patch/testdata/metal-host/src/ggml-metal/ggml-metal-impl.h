// stand-in for src/ggml-metal/ggml-metal-impl.h: the kargs structs shared by
// the host and the library (the neighbours' here, reduced to one field)
#pragma once

#include <stdint.h>

// the function constants' index bases of the library's kernels
#define FC_SSM_CONV                    900
#define FC_GATED_DELTA_NET             1600

typedef struct {
    int32_t ne00;
} ggml_metal_kargs_gated_delta_net;
