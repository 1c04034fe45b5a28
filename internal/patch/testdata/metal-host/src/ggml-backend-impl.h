// stand-in for src/ggml-backend-impl.h
#pragma once

#include "ggml-backend.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ggml_backend_device {
    void * context;
};

struct ggml_backend_buffer_type {
    ggml_backend_dev_t device;
    void * context;
};

struct ggml_backend_buffer {
    ggml_backend_buffer_type_t buft;
    void * context;
    size_t size;
};

#ifdef __cplusplus
}
#endif
