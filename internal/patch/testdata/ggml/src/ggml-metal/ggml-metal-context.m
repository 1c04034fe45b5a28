// stand-in for src/ggml-metal/ggml-metal-context.m
#import "ggml-metal-ops.h"

struct ggml_metal {
    bool use_fusion;

    int debug_fusion;

    struct ggml_cgraph * gf;
};

ggml_metal_t ggml_metal_init(ggml_metal_device_t dev) {
    ggml_metal_t res = calloc(1, sizeof(struct ggml_metal));

    res->pipelines_ext = ggml_metal_pipelines_init();

    return res;
}

void ggml_metal_free(ggml_metal_t ctx) {
    if (ctx->pipelines_ext) {
        ggml_metal_pipelines_free(ctx->pipelines_ext);
        ctx->pipelines_ext = nil;
    }

    free(ctx);
}

enum ggml_status ggml_metal_graph_compute(ggml_metal_t ctx, struct ggml_cgraph * gf) {
    @autoreleasepool {
        ctx->gf = gf;
    }

    return GGML_STATUS_SUCCESS;
}

void ggml_metal_set_n_cb(ggml_metal_t ctx, int n_cb) {
    ctx->encode_async = Block_copy(^(size_t iter) {
        ggml_metal_op_t ctx_op = ggml_metal_op_init(
            ctx->dev,
            ctx->use_fusion,
            ctx->use_concurrency);

        ggml_metal_op_free(ctx_op);
    });
}
