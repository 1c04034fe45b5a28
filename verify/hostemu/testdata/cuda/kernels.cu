// Test kernels for the hostemu CUDA skin, written as generated code would be.
#include <cstdint>

#define FULL_MASK 0xffffffffu

// Butterfly sum written with shuffles: m = warpSize/2 .. 1, x = x + other.
__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int m = warpSize / 2; m > 0; m >>= 1) {
    x = __fadd_rn(x, __shfl_xor_sync(FULL_MASK, x, m, warpSize));
  }
  return x;
}

__global__ void reduce_kernel(const float* __restrict__ x, float* __restrict__ out) {
  ggml_cuda_pdl_lc();  // ggml's launch hooks, as generated kernels call them
  ggml_cuda_pdl_sync();
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = warp_sum(x[i]);
}

// Row k of out (k = mask-1) holds __shfl_xor_sync(lane*10, mask) for masks
// 1..warpSize-1; then the same with width warpSize/2; then shfl_down by 1,
// shfl from lane 3 within width 4, and shfl_up by 2.
__global__ void shuffle_kernel(int32_t* __restrict__ out) {
  const int lane = threadIdx.x % warpSize;
  const int v = lane * 10;
  int row = 0;
  for (int m = 1; m < warpSize; m++, row++) out[row * warpSize + lane] = __shfl_xor_sync(FULL_MASK, v, m);
  for (int m = 1; m < warpSize; m++, row++)
    out[row * warpSize + lane] = __shfl_xor_sync(FULL_MASK, v, m, warpSize / 2);
  out[row++ * warpSize + lane] = __shfl_down_sync(FULL_MASK, v, 1);
  out[row++ * warpSize + lane] = __shfl_sync(FULL_MASK, v, 3, 4);
  out[row++ * warpSize + lane] = __shfl_up_sync(FULL_MASK, v, 2);
  const float f = __shfl_xor_sync(FULL_MASK, float(v) + 0.5f, 1);
  out[row++ * warpSize + lane] = __float_as_int(f);
}

// Write, barrier, read a neighbour's value; then overwrite and read again, so
// a missing second barrier is visible too.
__global__ void barrier_kernel(int32_t* __restrict__ out) {
  __shared__ int32_t sh[1024];
  const uint32_t t = threadIdx.x, n = blockDim.x;
  const int32_t v = int32_t(blockIdx.x * 1000 + t);
  sh[t] = v;
  __syncthreads();
  const int32_t a = sh[(t + 1) % n];
  __syncthreads();
  sh[t] = v + 100000;
  __syncthreads();
  const int32_t b = sh[(t + 2) % n];
  out[2 * (blockIdx.x * n + t)] = a;
  out[2 * (blockIdx.x * n + t) + 1] = b;
}

// A 2-D block of several warps: per warp, the sum of its x values, the value
// of its lane 0 and of its last lane, and the warp index.
__global__ void multi_warp_kernel(const float* __restrict__ x, float* __restrict__ out) {
  const uint32_t t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const uint32_t nt = blockDim.x * blockDim.y * blockDim.z;
  const uint32_t g = blockIdx.x * nt + t;
  const float v = x[g];
  const float s = warp_sum(v);
  const float first = __shfl_sync(FULL_MASK, v, 0);
  const float last = __shfl_sync(FULL_MASK, v, warpSize - 1);
  out[4 * g + 0] = s;
  out[4 * g + 1] = first;
  out[4 * g + 2] = last;
  out[4 * g + 3] = float(t / warpSize);
}

__global__ void position_kernel(uint32_t* __restrict__ out) {
  const uint32_t t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const uint32_t b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  uint32_t* o = out + 16 * (b * blockDim.x * blockDim.y * blockDim.z + t);
  o[0] = threadIdx.x; o[1] = threadIdx.y; o[2] = threadIdx.z;
  o[3] = blockIdx.x; o[4] = blockIdx.y; o[5] = blockIdx.z;
  o[6] = blockDim.x; o[7] = blockDim.y; o[8] = blockDim.z;
  o[9] = gridDim.x; o[10] = gridDim.y; o[11] = gridDim.z;
  o[12] = uint32_t(warpSize);
  o[13] = t % warpSize;
  o[14] = __shfl_sync(FULL_MASK, t, 0);
  o[15] = 0xC0DA;
}

__global__ void barrier_deadlock_kernel(float* __restrict__ out) {
  if (threadIdx.x < 3) {
    __syncthreads();
  }
  out[threadIdx.x] = 1.0f;
}

__global__ void shuffle_deadlock_kernel(float* __restrict__ out) {
  float v = float(threadIdx.x);
  if (threadIdx.x % warpSize < 3) {
    v = __shfl_xor_sync(FULL_MASK, v, 1);
  }
  out[threadIdx.x] = v;
}

__global__ void split_barrier_kernel(float* __restrict__ out) {
  if (threadIdx.x < 32) {
    __syncthreads();
  } else {
    __syncthreads();
  }
  out[threadIdx.x] = 1.0f;
}

__global__ void oob_kernel(float* __restrict__ out, uint32_t n) {
  out[n + threadIdx.x] = 1.0f;  // one past the end for thread 0
}

__device__ volatile int spin_forever = 1;
__global__ void spin_kernel(float* __restrict__ out) {
  while (spin_forever) {
  }
  out[0] = 1.0f;
}

// Math and intrinsics, 13 results per thread (layout shared with the other skins).
__global__ void __launch_bounds__(64) math_kernel(const float* __restrict__ in, float* __restrict__ out) {
  const uint32_t i = threadIdx.x;
  const float a = in[3 * i], b = in[3 * i + 1], c = in[3 * i + 2];
  float* o = out + 13 * i;
  o[0] = fmaf(a, b, c);
  o[1] = a * b + c;  // never contracted into an fma (no other use of a*b)
  o[2] = __fmul_rn(b, c);
  o[3] = __fadd_rn(a, b);
  o[4] = __fsub_rn(a, b);
  o[5] = __fdiv_rn(a, b);
  o[6] = sqrtf(fabsf(a));
  o[7] = expf(c);
  o[8] = __expf(c);
  o[9] = __uint_as_float(__float_as_uint(a) ^ 0x80000000u);
  o[10] = min(a, b);
  o[11] = max(a, b);
  o[12] = ((a * a + b * b) + c * c) + 1.0f * 2.0f;
  __syncwarp();
  const int64_t wide = int64_t(__float_as_int(a)) * 2;
  if (wide != int64_t(__float_as_int(a)) * 2) o[0] = __int_as_float(0x7fc00000);
}
__host__ __device__ inline int unused_host_device() { return 0; }
