// stand-in for src/ggml-metal/ggml-metal-impl.h
#define FC_SSM_CONV                    900
#define FC_GATED_DELTA_NET             1600

typedef struct {
    int32_t ne00;
} ggml_metal_kargs_gated_delta_net;

typedef struct {
    int32_t ne00;
} ggml_metal_kargs_solve_tri;
