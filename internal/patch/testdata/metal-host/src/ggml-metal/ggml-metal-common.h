// stand-in for src/ggml-metal/ggml-metal-common.h
#pragma once

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ggml_tensor;
struct ggml_cgraph;

enum ggml_mem_range_type {
    MEM_RANGE_TYPE_SRC = 0,
    MEM_RANGE_TYPE_DST = 1,
};

// the memory ranges read (src) and written (dst) by a set of nodes encoded to run concurrently
typedef struct ggml_mem_ranges * ggml_mem_ranges_t;

ggml_mem_ranges_t ggml_mem_ranges_init(int debug);
void ggml_mem_ranges_free(ggml_mem_ranges_t mrs);
void ggml_mem_ranges_reset(ggml_mem_ranges_t mrs);

// record the ranges a node reads and writes
bool ggml_mem_ranges_add(ggml_mem_ranges_t mrs, const struct ggml_tensor * tensor);

// false when the node reads a recorded dst range or writes any recorded range
bool ggml_mem_ranges_check(ggml_mem_ranges_t mrs, const struct ggml_tensor * tensor);

// reorder the graph's nodes so that more of them can run concurrently
void ggml_graph_optimize(struct ggml_cgraph * gf);

#ifdef __cplusplus
}
#endif
