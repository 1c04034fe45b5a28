// hostemu CUDA skin: enough of the CUDA C++ device language for generated
// kernels to compile unmodified as host C++ over the hostemu core.
// warpSize is the emulated subgroup width (the job's), not always 32.
#pragma once

#include "core.h"
#include <math.h>  // the float overloads of exp, sqrt, ... in the global namespace, as CUDA has

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __constant__
#define __managed__
// Workgroups run one at a time, so function-scope static storage is exactly
// per-block shared memory. (`extern __shared__` dynamic shared memory is not
// supported: it does not compile.)
#define __shared__ static
// __restrict__ is already a GNU C++ keyword.

typedef hostemu::u3 uint3;

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return {x, y, z}; }
};

struct alignas(8) float2 { float x, y; };
struct float3 { float x, y, z; };
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) int2 { int x, y; };
struct int3 { int x, y, z; };
struct alignas(16) int4 { int x, y, z, w; };
struct alignas(8) uint2 { unsigned x, y; };
struct alignas(16) uint4 { unsigned x, y, z, w; };
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float3 make_float3(float x, float y, float z) { return {x, y, z}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline int2 make_int2(int x, int y) { return {x, y}; }
inline int3 make_int3(int x, int y, int z) { return {x, y, z}; }
inline int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }
inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return {x, y, z}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }

namespace hostemu::cuda {
inline const uint3& thread_idx() { return hostemu::pos("threadIdx").tid; }
inline const uint3& block_idx() { return hostemu::pos("blockIdx").gid; }
inline const uint3& block_dim() { return hostemu::pos("blockDim").bdim; }
inline const uint3& grid_dim() { return hostemu::pos("gridDim").gdim; }

// Launches `body` (usually a lambda calling the __global__ function) once per
// thread of a grid of `grid` blocks of `block` threads.
template <class F>
inline void launch(std::string_view name, dim3 grid, dim3 block, F&& body) {
  hostemu::launch(name, uint3(grid), uint3(block), std::forward<F>(body));
}

inline unsigned width_or_warp(int width) { return width <= 0 ? hostemu::pos("warpSize").sg_width : unsigned(width); }
}  // namespace hostemu::cuda

#define threadIdx (::hostemu::cuda::thread_idx())
#define blockIdx (::hostemu::cuda::block_idx())
#define blockDim (::hostemu::cuda::block_dim())
#define gridDim (::hostemu::cuda::grid_dim())
#define warpSize (int(::hostemu::subgroup_width()))

// Synchronization. Member masks are not checked: every lane of the subgroup
// must take part in each warp collective (the emulation's rule for all skins).
inline void __syncthreads(hostemu::loc l = hostemu::loc::current()) { hostemu::barrier("__syncthreads", l); }
inline void __syncwarp(unsigned = 0xffffffffu, hostemu::loc l = hostemu::loc::current()) {
  hostemu::subgroup_barrier("__syncwarp", l);
}
inline void __threadfence() {}
inline void __threadfence_block() {}

template <class T>
inline T __shfl_xor_sync(unsigned, T var, int laneMask, int width = 0, hostemu::loc l = hostemu::loc::current()) {
  return hostemu::shuffle_xor_width(var, unsigned(laneMask), hostemu::cuda::width_or_warp(width), "__shfl_xor_sync", l);
}

// srcLane is taken modulo width, within the caller's segment.
template <class T>
inline T __shfl_sync(unsigned, T var, int srcLane, int width = 0, hostemu::loc l = hostemu::loc::current()) {
  const unsigned w = hostemu::cuda::width_or_warp(width);
  const unsigned lane = hostemu::pos("__shfl_sync").lane;
  if ((w & (w - 1)) != 0 || w > hostemu::subgroup_width())
    hostemu::detail::fail("__shfl_sync: width %u is not a power of two in 1..%u", w, hostemu::subgroup_width());
  return hostemu::shuffle(var, (lane & ~(w - 1)) + (unsigned(srcLane) & (w - 1)), "__shfl_sync", l);
}

// Lanes whose source falls outside their segment keep their own value.
template <class T>
inline T __shfl_down_sync(unsigned, T var, unsigned delta, int width = 0, hostemu::loc l = hostemu::loc::current()) {
  const unsigned w = hostemu::cuda::width_or_warp(width);
  const unsigned lane = hostemu::pos("__shfl_down_sync").lane;
  const unsigned src = (lane & (w - 1)) + delta < w ? lane + delta : lane;
  return hostemu::shuffle(var, src, "__shfl_down_sync", l);
}

template <class T>
inline T __shfl_up_sync(unsigned, T var, unsigned delta, int width = 0, hostemu::loc l = hostemu::loc::current()) {
  const unsigned w = hostemu::cuda::width_or_warp(width);
  const unsigned lane = hostemu::pos("__shfl_up_sync").lane;
  const unsigned src = (lane & (w - 1)) >= delta ? lane - delta : lane;
  return hostemu::shuffle(var, src, "__shfl_up_sync", l);
}

inline unsigned __ballot_sync(unsigned, int pred, hostemu::loc l = hostemu::loc::current()) {
  if (hostemu::subgroup_width() > 32) hostemu::detail::fail("__ballot_sync needs warpSize <= 32");
  return unsigned(hostemu::ballot(pred != 0, "__ballot_sync", l));
}
inline int __any_sync(unsigned, int pred, hostemu::loc l = hostemu::loc::current()) {
  return hostemu::ballot(pred != 0, "__any_sync", l) != 0;
}
inline int __all_sync(unsigned, int pred, hostemu::loc l = hostemu::loc::current()) {
  const hostemu::ThreadPos& p = hostemu::pos("__all_sync");
  const uint64_t all = p.sg_size == 64 ? ~uint64_t(0) : (uint64_t(1) << p.sg_size) - 1;
  return hostemu::ballot(pred != 0, "__all_sync", l) == all;
}

// Atomics: fibers never run concurrently, so plain read-modify-write is atomic.
template <class T>
inline T atomicAdd(T* p, T v) {
  T o = *p;
  *p = o + v;
  return o;
}
template <class T>
inline T atomicMax(T* p, T v) {
  T o = *p;
  *p = o < v ? v : o;
  return o;
}
template <class T>
inline T atomicMin(T* p, T v) {
  T o = *p;
  *p = v < o ? v : o;
  return o;
}
template <class T>
inline T atomicExch(T* p, T v) {
  T o = *p;
  *p = v;
  return o;
}
template <class T>
inline T atomicCAS(T* p, T cmp, T v) {
  T o = *p;
  if (o == cmp) *p = v;
  return o;
}

// Intrinsics with explicit IEEE rounding: plain operations, never fused
// (the build passes -ffp-contract=off).
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __frcp_rn(float a) { return 1.0f / a; }
inline float __fsqrt_rn(float a) { return std::sqrt(a); }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __fdividef(float a, float b) { return a / b; }
// __expf is ex2.approx(x * log2 e) on the GPU; same structure here, but the
// host exp2f is not the GPU's approximation, so bits can differ.
inline float __expf(float x) { return exp2f(x * 1.44269504088896341f); }
inline float __logf(float x) { return logf(x); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }

inline float __int_as_float(int x) { return std::bit_cast<float>(x); }
inline int __float_as_int(float x) { return std::bit_cast<int>(x); }
inline float __uint_as_float(unsigned x) { return std::bit_cast<float>(x); }
inline unsigned __float_as_uint(float x) { return std::bit_cast<unsigned>(x); }
inline int __popc(unsigned x) { return std::popcount(x); }
inline int __clz(int x) { return std::countl_zero(unsigned(x)); }
inline int __ffs(int x) { return x == 0 ? 0 : std::countr_zero(unsigned(x)) + 1; }

// CUDA's global min/max overloads.
inline int min(int a, int b) { return a < b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline long min(long a, long b) { return a < b ? a : b; }
inline unsigned long min(unsigned long a, unsigned long b) { return a < b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline float min(float a, float b) { return fminf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long max(long a, long b) { return a > b ? a : b; }
inline unsigned long max(unsigned long a, unsigned long b) { return a > b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double max(double a, double b) { return fmax(a, b); }

// ggml-cuda's programmatic-dependent-launch hooks, which generated kernels call.
// Launches here run one after another, so both are no-ops. Define
// HOSTEMU_NO_GGML_CUDA to supply your own.
#ifndef HOSTEMU_NO_GGML_CUDA
inline void ggml_cuda_pdl_sync() {}
inline void ggml_cuda_pdl_lc() {}
// common.cuh's restrict qualifier, as it is where PDL is off
#define GGML_CUDA_RESTRICT __restrict__
// common.cuh's float sum over width lanes, the xor butterfly, which the
// kernels kernelgen hands upstream call.
template <int width = 32> inline float warp_reduce_sum(float x) {
  for (int offset = width / 2; offset > 0; offset >>= 1) x += __shfl_xor_sync(0xffffffff, x, offset, width);
  return x;
}
#endif
