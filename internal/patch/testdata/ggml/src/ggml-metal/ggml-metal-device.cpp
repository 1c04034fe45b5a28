// stand-in for src/ggml-metal/ggml-metal-device.cpp
#include "ggml-metal-device.h"

ggml_metal_pipeline_with_params ggml_metal_library_get_pipeline_gated_delta_net(ggml_metal_library_t lib, const ggml_tensor * op) {
    ggml_metal_pipeline_with_params res = ggml_metal_library_get_pipeline(lib, "placeholder");

    return res;
}

ggml_metal_pipeline_with_params ggml_metal_library_get_pipeline_solve_tri(ggml_metal_library_t lib, const ggml_tensor * op) {
    ggml_metal_pipeline_with_params res = ggml_metal_library_get_pipeline(lib, "placeholder");

    return res;
}
