// stand-in for src/ggml-metal/ggml-metal-common.cpp
#include "ggml-impl.h"
#include "ggml-backend-impl.h"

bool ggml_mem_ranges_add(ggml_mem_ranges_t mrs, const ggml_tensor * tensor) {
    return true;
}

bool ggml_mem_ranges_check(ggml_mem_ranges_t mrs, const ggml_tensor * tensor) {
    return true;
}

static std::vector<int> ggml_metal_graph_optimize_reorder(const std::vector<node_info> & nodes) {
    const auto & h_add = [](ggml_mem_ranges_t mrs, const node_info & node) {
        return true;
    };

    const auto & h_check = [](ggml_mem_ranges_t mrs, const node_info & node) {
        return true;
    };

    return {};
}
