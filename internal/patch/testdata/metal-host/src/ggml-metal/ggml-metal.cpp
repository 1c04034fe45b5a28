// stand-in for src/ggml-metal/ggml-metal.cpp: the buffer type's alloc size
#include "ggml-impl.h"
#include "ggml-backend-impl.h"

#include "ggml-metal-device.h"
#include "ggml-metal-ops.h"

size_t ggml_backend_metal_alloc_size(ggml_backend_buffer_type_t buft, const ggml_tensor * tensor);

static size_t ggml_backend_metal_buffer_type_get_alloc_size(ggml_backend_buffer_type_t buft, const ggml_tensor * tensor) {
    size_t res = ggml_nbytes(tensor);

    // some ops keep scratch data after their output
    switch (tensor->op) {
        default:
            break;
    }

    GGML_UNUSED(buft);

    return res;
}

size_t ggml_backend_metal_alloc_size(ggml_backend_buffer_type_t buft, const ggml_tensor * tensor) {
    return ggml_backend_metal_buffer_type_get_alloc_size(buft, tensor);
}
