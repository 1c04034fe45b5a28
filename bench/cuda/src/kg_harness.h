// Shared declarations of the CUDA verification harness (kernelgen bench/cuda).
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include <cstring>

#ifdef KG_USE_GGML_HEADERS
#include "ggml-cuda/common.cuh" // ggml's own programmatic-dependent-launch helpers
#else
// What ggml-cuda's helpers do on Hopper with PDL on: wait for the previous
// kernel / let the next one start.
static __device__ __forceinline__ void ggml_cuda_pdl_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
static __device__ __forceinline__ void ggml_cuda_pdl_lc() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}
#endif

// kg_pdl_enabled: off, kg_launch_pdl launches in plain stream order, each
// kernel starting after the previous one ended (what a Vulkan barrier does).
static bool kg_pdl_enabled = true;

// kg_launch_pdl launches a kernel that may overlap the previous one on the
// stream (programmatic dependent launch), as ggml-cuda does on Hopper.
template <typename... Params, typename... Args>
static void kg_launch_pdl(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream, Args... args) {
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.stream = stream;
    cfg.attrs = &attr;
    cfg.numAttrs = kg_pdl_enabled ? 1 : 0;
    cudaLaunchKernelEx(&cfg, kernel, static_cast<Params>(args)...);
}

#define KG_CHECK(x)                                                                       \
    do {                                                                                  \
        cudaError_t kg_err = (x);                                                         \
        if (kg_err != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(kg_err)); \
            exit(2);                                                                      \
        }                                                                                 \
    } while (0)

// A launcher runs one kernel instance: buffers in the kernel's order, args in
// the kernel's order as 32-bit patterns.
typedef void (*kg_launcher)(void ** bufs, const uint32_t * args, dim3 grid, dim3 block, cudaStream_t stream);

std::map<std::string, kg_launcher> & kg_registry();

struct kg_register {
    kg_register(const char * key, kg_launcher fn) { kg_registry()[key] = fn; }
};

static inline float kg_f32(uint32_t bits) {
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

// One launch of a case, as read from the case file.
struct kg_launch {
    std::string key;     // "<kernel>@<contract> <variant>"
    std::string op;      // op name
    std::map<std::string, int64_t> params;
    std::vector<std::string> arg_names;
    std::vector<uint32_t> args;
    std::vector<std::string> bind_names; // the kernel's buffer names
    std::vector<uint32_t> bind;          // case buffer index per kernel buffer
    std::vector<uint32_t> access;        // 1 read, 2 write, 3 read-write
    dim3 grid, block;
};

// The hand-written series kernels, when the harness is built with a ggml
// tree (KG_WITH_REFERENCE): runs one launch with them; false if the
// reference has no kernel for it.
bool kg_reference_launch(const kg_launch & l, const std::vector<void *> & bufs, cudaStream_t stream);
