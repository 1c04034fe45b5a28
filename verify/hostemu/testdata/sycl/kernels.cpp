// Test kernels for the hostemu SYCL skin, written as generated code would be:
// host functions that submit nd_range kernels to a queue.
#include <sycl/sycl.hpp>
#include <cstdint>

// The real kernels would carry [[sycl::reqd_sub_group_size(N)]]; the host
// compiler ignores it, and the job says which width to emulate.
void reduce_launch(sycl::queue& q, const float* x, float* out, uint32_t sg) {
  q.parallel_for(sycl::nd_range<1>(sycl::range<1>(2 * sg), sycl::range<1>(sg)),
                 [=](sycl::nd_item<1> it) [[sycl::reqd_sub_group_size(32)]] {
                   const size_t i = it.get_global_id(0);
                   out[i] = sycl::reduce_over_group(it.get_sub_group(), x[i], sycl::plus<>());
                 })
      .wait();
}

// Rows: permute_group_by_xor for masks 1..SG-1, then select_from_group(3),
// shift_group_left(1), shift_group_right(2), group_broadcast(SG-1), and the
// bits of permute_group_by_xor(float, 1).
void shuffle_launch(sycl::queue& q, int32_t* out, uint32_t sg) {
  q.parallel_for(sycl::nd_range<1>(sycl::range<1>(sg), sycl::range<1>(sg)), [=](sycl::nd_item<1> it) {
     const sycl::sub_group g = it.get_sub_group();
     const uint32_t lane = g.get_local_linear_id();
     const uint32_t n = g.get_max_local_range()[0];
     const int32_t v = int32_t(lane) * 10;
     uint32_t row = 0;
     for (uint32_t m = 1; m < n; m++, row++) out[row * n + lane] = sycl::permute_group_by_xor(g, v, m);
     out[row++ * n + lane] = sycl::select_from_group(g, v, 3);
     out[row++ * n + lane] = sycl::shift_group_left(g, v, 1);
     out[row++ * n + lane] = sycl::shift_group_right(g, v, 2);
     out[row++ * n + lane] = sycl::group_broadcast(g, v, n - 1);
     out[row++ * n + lane] = sycl::bit_cast<int32_t>(sycl::permute_group_by_xor(g, float(v) + 0.5f, 1));
   }).wait();
}

void barrier_launch(sycl::queue& q, int32_t* out, uint32_t n) {
  q.submit([&](sycl::handler& h) {
     sycl::local_accessor<int32_t, 1> sh(sycl::range<1>(n), h);
     h.parallel_for(sycl::nd_range<1>(sycl::range<1>(2 * n), sycl::range<1>(n)), [=](sycl::nd_item<1> it) {
       const uint32_t t = it.get_local_id(0);
       const int32_t v = int32_t(it.get_group(0) * 1000 + t);
       sh[t] = v;
       sycl::group_barrier(it.get_group());
       const int32_t a = sh[(t + 1) % n];
       sycl::group_barrier(it.get_group());
       sh[t] = v + 100000;
       sycl::group_barrier(it.get_group());
       const int32_t b = sh[(t + 2) % n];
       out[2 * (it.get_group(0) * n + t)] = a;
       out[2 * (it.get_group(0) * n + t) + 1] = b;
     });
   }).wait();
}

// nd_range<3> with local range (1, 4, SG): four sub-groups along dimension 1,
// two work-groups along dimension 0.
void multi_launch(sycl::queue& q, const float* x, float* out, uint32_t sg) {
  q.parallel_for(sycl::nd_range<3>(sycl::range<3>(2, 4, sg), sycl::range<3>(1, 4, sg)), [=](sycl::nd_item<3> it) {
     const sycl::sub_group g = it.get_sub_group();
     const size_t gi = it.get_group_linear_id() * 4 * sg + it.get_local_linear_id();
     const float v = x[gi];
     out[4 * gi + 0] = sycl::reduce_over_group(g, v, sycl::plus<>());
     out[4 * gi + 1] = sycl::group_broadcast(g, v);
     out[4 * gi + 2] = sycl::select_from_group(g, v, g.get_local_range()[0] - 1);
     out[4 * gi + 3] = float(g.get_group_linear_id());
   }).wait();
}

// nd_range<3>: global (4, 3, 2*SG), local (2, 3, SG). Dimension 2 is the
// fastest, so get_local_id(2) is the sub-group lane.
void positions_launch(sycl::queue& q, uint32_t* out, uint32_t sg) {
  q.parallel_for(sycl::nd_range<3>(sycl::range<3>(4, 3, 2 * sg), sycl::range<3>(2, 3, sg)), [=](sycl::nd_item<3> it) {
     const size_t slot = it.get_group_linear_id() * it.get_group().get_local_linear_range() + it.get_local_linear_id();
     uint32_t* o = out + 24 * slot;
     for (int d = 0; d < 3; d++) {
       o[d] = it.get_local_id(d);
       o[3 + d] = it.get_group(d);
       o[6 + d] = it.get_local_range(d);
       o[9 + d] = it.get_group_range(d);
       o[12 + d] = it.get_global_id(d);
     }
     const sycl::sub_group g = it.get_sub_group();
     o[15] = it.get_local_linear_id();
     o[16] = it.get_group_linear_id();
     o[17] = it.get_global_linear_id();
     o[18] = g.get_local_linear_id();
     o[19] = g.get_local_id()[0];
     o[20] = g.get_group_linear_id();
     o[21] = g.get_max_local_range()[0];
     o[22] = g.get_local_range()[0];
     const sycl::float4 a(1.0f, 2.0f, 3.0f, 4.0f);
     o[23] = sycl::bit_cast<uint32_t>(sycl::dot(a, sycl::float4(float(it.get_local_id(2)), 1.0f, 1.0f, 1.0f)));
   }).wait();
}

void barrier_deadlock_launch(sycl::queue& q, float* out) {
  q.parallel_for<class barrier_deadlock_kernel>(sycl::nd_range<1>(sycl::range<1>(64), sycl::range<1>(64)),
                                                [=](sycl::nd_item<1> it) {
                                                  if (it.get_local_id(0) < 3) {
                                                    sycl::group_barrier(it.get_group());
                                                  }
                                                  out[it.get_local_id(0)] = 1.0f;
                                                })
      .wait();
}

void shuffle_deadlock_launch(sycl::queue& q, float* out) {
  q.parallel_for(sycl::nd_range<1>(sycl::range<1>(64), sycl::range<1>(64)), [=](sycl::nd_item<1> it) {
     const sycl::sub_group g = it.get_sub_group();
     float v = float(it.get_local_id(0));
     if (g.get_local_linear_id() < 3) {
       v = sycl::permute_group_by_xor(g, v, 1);
     }
     out[it.get_local_id(0)] = v;
   }).wait();
}

void split_barrier_launch(sycl::queue& q, float* out) {
  q.parallel_for(sycl::nd_range<1>(sycl::range<1>(64), sycl::range<1>(64)), [=](sycl::nd_item<1> it) {
     if (it.get_local_id(0) < 32) {
       sycl::group_barrier(it.get_group());
     } else {
       sycl::group_barrier(it.get_group());
     }
     out[it.get_local_id(0)] = 1.0f;
   }).wait();
}

// Math, 13 results per thread (layout shared with the other skins).
void math_launch(sycl::queue& q, const float* in, float* out) {
  q.parallel_for(sycl::nd_range<1>(sycl::range<1>(8), sycl::range<1>(8)), [=](sycl::nd_item<1> it) {
     const size_t i = it.get_local_id(0);
     const float a = in[3 * i], b = in[3 * i + 1], c = in[3 * i + 2];
     float* o = out + 13 * i;
     o[0] = sycl::fma(a, b, c);
     o[1] = a * b + c;
     o[2] = b * c;
     o[3] = a + b;
     o[4] = a - b;
     o[5] = a / b;
     o[6] = sycl::sqrt(sycl::fabs(a));
     o[7] = sycl::exp(c);
     o[8] = sycl::native::exp(c);
     o[9] = sycl::bit_cast<float>(sycl::bit_cast<uint32_t>(a) ^ 0x80000000u);
     o[10] = sycl::min(a, b);
     o[11] = sycl::max(a, b);
     o[12] = sycl::dot(sycl::float4(a, b, c, 1.0f), sycl::float4(a, b, c, 2.0f));
     sycl::group_barrier(it.get_sub_group());
   }).wait();
}
