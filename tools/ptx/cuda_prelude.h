// The few declarations the CUDA SDK would provide, so that clang can compile
// generated kernels to PTX with -nocudainc on machines without the SDK.
// Test support only: ggml builds the kernels with nvcc and its own headers.
#pragma once
#include <__clang_cuda_builtin_vars.h>

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))

typedef unsigned int uint32_t;
typedef int int32_t;
typedef unsigned long long uint64_t;

// The SDK's launch geometry type, which the headers' geometry helpers return.
struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};

static __device__ __forceinline__ float __shfl_xor_sync(unsigned mask, float v, int lane_mask, int width) {
    return __nvvm_shfl_sync_bfly_f32(mask, v, lane_mask, ((32 - width) << 8) | 0x1f);
}
static __device__ __forceinline__ float fmaf(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
// What expf becomes under ggml's -use_fast_math: the approximate exp2 of x*log2(e).
static __device__ __forceinline__ float expf(float x) { return __nvvm_ex2_approx_f(x * 1.4426950408889634f); }
static __device__ __forceinline__ float __fadd_rn(float a, float b) { return __nvvm_add_rn_f(a, b); }
static __device__ __forceinline__ float __fsub_rn(float a, float b) { return __nvvm_add_rn_f(a, -b); }
static __device__ __forceinline__ float __fmul_rn(float a, float b) { return __nvvm_mul_rn_f(a, b); }
static __device__ __forceinline__ float __int_as_float(int x) { return __builtin_bit_cast(float, x); }
static __device__ __forceinline__ float __uint_as_float(unsigned x) { return __builtin_bit_cast(float, x); }
static __device__ __forceinline__ int __float_as_int(float x) { return __builtin_bit_cast(int, x); }
static __device__ __forceinline__ unsigned __float_as_uint(float x) { return __builtin_bit_cast(unsigned, x); }
// ggml-cuda's programmatic-dependent-launch helpers.
static __device__ __forceinline__ void ggml_cuda_pdl_sync() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
static __device__ __forceinline__ void ggml_cuda_pdl_lc() { asm volatile("griddepcontrol.launch_dependents;" :::); }
