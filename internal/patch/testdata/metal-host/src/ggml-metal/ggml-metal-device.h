// stand-in for src/ggml-metal/ggml-metal-device.h: the C declarations the
// encode code calls (the real ones are implemented in Objective-C)
#pragma once

#include "ggml.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ggml_metal_buffer_id {
    void * metal; // id<MTLBuffer>
    size_t offs;
};

typedef struct ggml_metal_cv       * ggml_metal_cv_t;
typedef struct ggml_metal_pipeline * ggml_metal_pipeline_t;
typedef struct ggml_metal_encoder  * ggml_metal_encoder_t;
typedef struct ggml_metal_library  * ggml_metal_library_t;
typedef struct ggml_metal_device   * ggml_metal_device_t;

ggml_metal_cv_t ggml_metal_cv_init(void);
void ggml_metal_cv_free(ggml_metal_cv_t cv);
void ggml_metal_cv_set_bool(ggml_metal_cv_t cv, bool value, int32_t idx);

bool ggml_metal_device_supports_op(ggml_metal_device_t dev, const struct ggml_tensor * op);

struct ggml_metal_pipeline_with_params {
    ggml_metal_pipeline_t pipeline;

    int nsg;

    int nr0;
    int nr1;

    size_t smem;
};

void ggml_metal_encoder_set_pipeline(ggml_metal_encoder_t encoder, struct ggml_metal_pipeline_with_params pipeline);
void ggml_metal_encoder_set_bytes   (ggml_metal_encoder_t encoder, void * data, size_t size, int idx);
void ggml_metal_encoder_set_buffer  (ggml_metal_encoder_t encoder, struct ggml_metal_buffer_id buffer, int idx);
void ggml_metal_encoder_dispatch_threadgroups(ggml_metal_encoder_t encoder, int tg0, int tg1, int tg2, int tptg0, int tptg1, int tptg2);
void ggml_metal_encoder_memory_barrier(ggml_metal_encoder_t encoder);

struct ggml_metal_pipeline_with_params ggml_metal_library_get_pipeline    (ggml_metal_library_t lib, const char * name);
struct ggml_metal_pipeline_with_params ggml_metal_library_compile_pipeline(ggml_metal_library_t lib, const char * base, const char * name, ggml_metal_cv_t cv);

struct ggml_metal_pipeline_with_params ggml_metal_library_get_pipeline_gated_delta_net   (ggml_metal_library_t lib, const struct ggml_tensor * op);

struct ggml_metal_buffer_id ggml_metal_buffer_get_id(void * buf_ctx, const struct ggml_tensor * t);

#ifdef __cplusplus
}
#endif
