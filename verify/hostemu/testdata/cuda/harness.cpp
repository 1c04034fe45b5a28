// Harness for the CUDA test kernels: the "test" argument picks the kernel.
void hostemu_run(hostemu::Job& job) {
  using hostemu::cuda::launch;
  const unsigned sg = job.subgroup_width();
  switch (job.arg_u32("test")) {
    case 1: {  // one warp per block, two blocks
      const float* x = job.buffer<float>("x");
      float* out = job.buffer<float>("out");
      launch("reduce_kernel", dim3(2), dim3(sg), [&] { reduce_kernel(x, out); });
      break;
    }
    case 2: {
      int32_t* out = job.buffer<int32_t>("out");
      launch("shuffle_kernel", dim3(1), dim3(sg), [&] { shuffle_kernel(out); });
      break;
    }
    case 3: {
      int32_t* out = job.buffer<int32_t>("out");
      launch("barrier_kernel", dim3(2), dim3(job.arg_u32("n")), [&] { barrier_kernel(out); });
      break;
    }
    case 4: {  // blocks of (sg, 2, 2): four warps
      const float* x = job.buffer<float>("x");
      float* out = job.buffer<float>("out");
      launch("multi_warp_kernel", dim3(2), dim3(sg, 2, 2), [&] { multi_warp_kernel(x, out); });
      break;
    }
    case 5: {
      float* out = job.buffer<float>("out");
      launch("barrier_deadlock_kernel", dim3(1), dim3(64), [&] { barrier_deadlock_kernel(out); });
      break;
    }
    case 6: {
      float* out = job.buffer<float>("out");
      launch("shuffle_deadlock_kernel", dim3(1), dim3(64), [&] { shuffle_deadlock_kernel(out); });
      break;
    }
    case 7: {
      float* out = job.buffer<float>("out");
      launch("split_barrier_kernel", dim3(1), dim3(64), [&] { split_barrier_kernel(out); });
      break;
    }
    case 8: {
      float* out = job.buffer<float>("out");
      const uint32_t n = uint32_t(job.count("out"));
      launch("oob_kernel", dim3(1), dim3(1), [&] { oob_kernel(out, n); });
      break;
    }
    case 9: {
      float* out = job.buffer<float>("out");
      launch("spin_kernel", dim3(1), dim3(1), [&] { spin_kernel(out); });
      break;
    }
    case 10: {  // grid (2,3,1) of blocks (sg/2, 2, 3)
      uint32_t* out = job.buffer<uint32_t>("out");
      launch("position_kernel", dim3(2, 3, 1), dim3(sg / 2, 2, 3), [&] { position_kernel(out); });
      break;
    }
    case 11: {
      const float* in = job.buffer<float>("in");
      float* out = job.buffer<float>("out");
      launch("math_kernel", dim3(1), dim3(8), [&] { math_kernel(in, out); });
      break;
    }
    default:
      hostemu::detail::fail("unknown test %u", job.arg_u32("test"));
  }
}
