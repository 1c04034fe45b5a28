// Asks the stand-in's ggml_cuda_can_fuse (ggml-cuda.cu, patched or not)
// whether ggml-cuda's SSM_CONV(+ADD)+SILU fusion takes a conv-update node
// (src[3] set, fuse_silu off) followed by SILU: it must not, since the
// fused path runs the plain SSM_CONV kernel, which ignores x_cur and the
// cache it writes. A plain SSM_CONV followed by SILU is still fused.
#include "ggml-cuda.cu"

#include <cstdio>

int main() {
    int failures = 0;
    for (bool update : {false, true}) {
        ggml_tensor taps, w, x, ring, bias, conv, add, silu;
        conv.op = GGML_OP_SSM_CONV;
        conv.src[0] = &taps;
        conv.src[1] = &w;
        if (update) {
            conv.src[2] = &x;
            conv.src[3] = &ring;
        }
        add.op = GGML_OP_ADD;
        add.src[0] = &conv;
        add.src[1] = &bias;
        silu.op = GGML_OP_UNARY;
        silu.op_params[0] = GGML_UNARY_OP_SILU;
        const char * what = update ? "a conv-update node" : "a plain SSM_CONV node";

        ggml_tensor * two[] = { &conv, &silu };
        silu.src[0] = &conv;
        ggml_cgraph g2 = { 2, two };
        if (ggml_cuda_can_fuse(&g2, 0, { GGML_OP_SSM_CONV, GGML_OP_UNARY }, { GGML_UNARY_OP_SILU }) == update) {
            printf("FAIL %s then SILU: %s\n", what, update ? "fused into the plain SSM_CONV+SILU path" : "not fused");
            failures++;
        }
        ggml_tensor * three[] = { &conv, &add, &silu };
        silu.src[0] = &add;
        ggml_cgraph g3 = { 3, three };
        if (ggml_cuda_can_fuse(&g3, 0, { GGML_OP_SSM_CONV, GGML_OP_ADD, GGML_OP_UNARY }, { GGML_UNARY_OP_SILU }) == update) {
            printf("FAIL %s then ADD and SILU: %s\n", what, update ? "fused into the plain SSM_CONV+ADD+SILU path" : "not fused");
            failures++;
        }
    }
    printf("%d failures\n", failures);
    return failures != 0;
}
