// stand-in for src/ggml-cuda/ggml-cuda.cu: ggml_cuda_can_fuse's SSM_CONV patterns
#include <initializer_list>
#include <cstddef>
#include <cstdint>

enum ggml_type { GGML_TYPE_F32, GGML_TYPE_I32 };
enum ggml_op { GGML_OP_NONE, GGML_OP_ADD, GGML_OP_UNARY, GGML_OP_SSM_CONV };
enum ggml_unary_op { GGML_UNARY_OP_SILU, GGML_UNARY_OP_GELU };

struct ggml_tensor {
    ggml_type type = GGML_TYPE_F32;
    int64_t ne[4] = {1, 1, 1, 1};
    ggml_op op = GGML_OP_NONE;
    int32_t op_params[16] = {};
    ggml_tensor * src[10] = {};
};

struct ggml_cgraph {
    int n_nodes;
    ggml_tensor ** nodes;
};

static ggml_unary_op ggml_get_unary_op(const ggml_tensor * t) { return (ggml_unary_op) t->op_params[0]; }

static bool ggml_cuda_can_fuse(const struct ggml_cgraph * cgraph, int node_idx, std::initializer_list<enum ggml_op> ops, std::initializer_list<enum ggml_unary_op> unary_ops) {
    if (node_idx + (int) ops.size() > cgraph->n_nodes) {
        return false;
    }
    for (size_t i = 0; i < ops.size(); i++) {
        if (cgraph->nodes[node_idx + i]->op != ops.begin()[i]) {
            return false;
        }
    }

    if (ops.size() == 2 && ops.begin()[0] == GGML_OP_SSM_CONV && ops.begin()[1] == GGML_OP_UNARY
     && unary_ops.size() == 1 && unary_ops.begin()[0] == GGML_UNARY_OP_SILU) {
        const ggml_tensor * ssm_conv = cgraph->nodes[node_idx];
        const ggml_tensor * silu     = cgraph->nodes[node_idx+1];
        if (ggml_get_unary_op(silu) != unary_ops.begin()[0]) {
            return false;
        }

        return ssm_conv->type == GGML_TYPE_F32 && silu->type == GGML_TYPE_F32;
    }

    if (ops.size() == 3 && ops.begin()[0] == GGML_OP_SSM_CONV && ops.begin()[1] == GGML_OP_ADD
     && ops.begin()[2] == GGML_OP_UNARY && unary_ops.size() == 1 && unary_ops.begin()[0] == GGML_UNARY_OP_SILU) {
        const ggml_tensor * ssm_conv = cgraph->nodes[node_idx];
        const ggml_tensor * add      = cgraph->nodes[node_idx+1];
        const ggml_tensor * silu     = cgraph->nodes[node_idx+2];
        if (ggml_get_unary_op(silu) != unary_ops.begin()[0]) {
            return false;
        }

        return ssm_conv->type == GGML_TYPE_F32 && add->type == GGML_TYPE_F32 && silu->type == GGML_TYPE_F32;
    }

    return false;
}
