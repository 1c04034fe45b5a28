// stand-in for src/ggml-metal/ggml-metal-impl.h
typedef struct {
    int32_t ne00;
} ggml_metal_kargs_gated_delta_net;

typedef struct {
    int32_t ne00;
} ggml_metal_kargs_solve_tri;
