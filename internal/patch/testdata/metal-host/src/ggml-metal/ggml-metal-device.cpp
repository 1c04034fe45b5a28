// stand-in for src/ggml-metal/ggml-metal-device.cpp: the pipeline getters,
// in the real file's shape (the plain GDN getter's function constants left out)
#include "ggml-metal-device.h"
#include "ggml-metal-impl.h"
#include "ggml-impl.h"

#include <cstdio>

ggml_metal_pipeline_with_params ggml_metal_library_get_pipeline_gated_delta_net(ggml_metal_library_t lib, const ggml_tensor * op) {
    char name[256];

    snprintf(name, 256, "kernel_gated_delta_net_f32_%d", (int) (op->src[2]->ne[0]/32));

    ggml_metal_pipeline_with_params res = ggml_metal_library_get_pipeline(lib, name);
    if (!res.pipeline) {
        res = ggml_metal_library_compile_pipeline(lib, name, name, nullptr);
    }

    return res;
}
