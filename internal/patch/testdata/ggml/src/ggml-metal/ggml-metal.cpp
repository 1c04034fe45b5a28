// stand-in for src/ggml-metal/ggml-metal.cpp
#include "ggml-metal-ops.h"

static size_t ggml_backend_metal_buffer_type_get_alloc_size(ggml_backend_buffer_type_t buft, const ggml_tensor * tensor) {
    size_t res = ggml_nbytes(tensor);

    return res;
}
