// stand-in for src/ggml-vulkan/ggml-vulkan.cpp: ggml_vk_graph_optimize's reorder
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#define GGML_MAX_SRC 10

enum ggml_type { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_I32 };
enum ggml_op { GGML_OP_NONE, GGML_OP_ADD, GGML_OP_MUL, GGML_OP_VIEW, GGML_OP_GET_ROWS, GGML_OP_GATED_DELTA_NET, GGML_OP_SSM_CONV };

struct ggml_tensor {
    ggml_type type = GGML_TYPE_F32;
    int64_t ne[4] = {1, 1, 1, 1};
    size_t nb[4] = {4, 4, 4, 4};
    ggml_op op = GGML_OP_NONE;
    int32_t op_params[16] = {};
    ggml_tensor * src[GGML_MAX_SRC] = {};
    ggml_tensor * view_src = nullptr;
    const char * name = "";
};

struct ggml_cgraph {
    int n_nodes;
    ggml_tensor ** nodes;
};

static int32_t ggml_get_op_params_i32(const ggml_tensor * t, uint32_t i) { return t->op_params[i]; }

static bool ggml_is_contiguous(const ggml_tensor * t) {
    size_t next = 4;
    for (int i = 0; i < 4; i++) {
        if (t->ne[i] != 1 && t->nb[i] != next) return false;
        next = t->nb[i] * t->ne[i];
    }
    return true;
}

static bool ggml_are_same_shape(const ggml_tensor * a, const ggml_tensor * b) {
    for (int i = 0; i < 4; i++) if (a->ne[i] != b->ne[i]) return false;
    return true;
}

static bool ggml_are_same_stride(const ggml_tensor * a, const ggml_tensor * b) {
    for (int i = 0; i < 4; i++) if (a->nb[i] != b->nb[i]) return false;
    return true;
}

static bool ggml_is_contiguous_rows(const ggml_tensor * t) { return t->ne[0] == 1 || t->nb[0] == 4; }

#include "fused-supports.inc"

static void ggml_vk_graph_optimize(struct ggml_cgraph * graph)
{
    auto const &is_empty = [](ggml_tensor * node) -> bool {
        return node->op == GGML_OP_NONE || node->op == GGML_OP_VIEW;
    };

    auto const &is_src_of = [](const ggml_tensor *dst, const ggml_tensor *src) -> bool {
        for (uint32_t s = 0; s < GGML_MAX_SRC; ++s) {
            if (dst->src[s] == src) {
                return true;
            }
        }
        // implicit dependency if they view the same tensor
        const ggml_tensor *dst2 = dst->view_src ? dst->view_src : dst;
        const ggml_tensor *src2 = src->view_src ? src->view_src : src;
        return dst2 == src2;
    };

    std::vector<ggml_tensor *> new_order;
    std::vector<bool> used(graph->n_nodes, false);
    int first_unused = 0;
    while (first_unused < graph->n_nodes) {
        std::vector<int> current_set = { first_unused };
        const int NUM_TO_CHECK = 20;
        for (int pass = 0; pass < 2; pass++) {
            for (int j = first_unused+1; j < std::min(first_unused + NUM_TO_CHECK, graph->n_nodes); ++j) {
                if (used[j] || is_empty(graph->nodes[j]) != (pass == 1)) {
                    continue;
                }
                bool ok = true;
                for (int c = first_unused; c < j; ++c) {
                    const bool in_set = std::find(current_set.begin(), current_set.end(), c) != current_set.end();
                    if (!used[c] && is_src_of(graph->nodes[j], graph->nodes[c]) && !(pass == 1 && in_set)) {
                        ok = false;
                        break;
                    }
                }
                if (ok) {
                    current_set.push_back(j);
                }
            }
        }
        for (auto c : current_set) {
            new_order.push_back(graph->nodes[c]);
            used[c] = true;
        }
        while (first_unused < graph->n_nodes && used[first_unused]) {
            first_unused++;
        }
    }
    for (int i = 0; i < graph->n_nodes; ++i) {
        graph->nodes[i] = new_order[i];
    }
}
