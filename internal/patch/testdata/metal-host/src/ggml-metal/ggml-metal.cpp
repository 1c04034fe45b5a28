// stand-in for src/ggml-metal/ggml-metal.cpp: the buffer type's alloc size and the device's supports_op
#include "ggml-impl.h"
#include "ggml-backend-impl.h"

#include "ggml-metal-device.h"
#include "ggml-metal-ops.h"

size_t ggml_backend_metal_alloc_size(ggml_backend_buffer_type_t buft, const ggml_tensor * tensor);
bool ggml_backend_metal_supports_op(ggml_backend_dev_t dev, const ggml_tensor * op);

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

static bool ggml_backend_metal_device_supports_op(ggml_backend_dev_t dev, const ggml_tensor * op) {
    ggml_metal_device_t ctx_dev = (ggml_metal_device_t)dev->context;

    return ggml_metal_device_supports_op(ctx_dev, op);
}

size_t ggml_backend_metal_alloc_size(ggml_backend_buffer_type_t buft, const ggml_tensor * tensor) {
    return ggml_backend_metal_buffer_type_get_alloc_size(buft, tensor);
}

bool ggml_backend_metal_supports_op(ggml_backend_dev_t dev, const ggml_tensor * op) {
    return ggml_backend_metal_device_supports_op(dev, op);
}
