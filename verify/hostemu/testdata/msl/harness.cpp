// Harness for the MSL test kernels: the "test" argument picks the kernel.
void hostemu_run(hostemu::Job& job) {
  using hostemu::msl::launch;
  using hostemu::msl::pos;
  const uint sg = job.subgroup_width();
  switch (job.arg_u32("test")) {
    case 1: {
      const float* x = job.buffer<float>("x");
      float* out = job.buffer<float>("out");
      launch("kernel_reduce_f32", uint3(2, 1, 1), uint3(sg, 1, 1),
             [&](const pos& p) { kernel_reduce<1>(x, out, p.tgpig, p.tiisg, p.tpsg); });
      break;
    }
    case 2: {
      int* out = job.buffer<int>("out");
      launch("kernel_shuffle", uint3(1, 1, 1), uint3(sg, 1, 1),
             [&](const pos& p) { kernel_shuffle(out, p.tiisg, p.tpsg); });
      break;
    }
    case 3: {
      int* out = job.buffer<int>("out");
      launch("kernel_barrier", uint3(2, 1, 1), uint3(job.arg_u32("n"), 1, 1),
             [&](const pos& p) { kernel_barrier(out, p.tgpig, p.tpitg, p.ntg); });
      break;
    }
    case 4: {
      const float* x = job.buffer<float>("x");
      float* out = job.buffer<float>("out");
      launch("kernel_multi", uint3(2, 1, 1), uint3(sg, 4, 1), [&](const pos& p) {
        kernel_multi(x, out, p.tgpig, p.tiitg, p.ntg, p.sgitg, p.tiisg, p.tpsg);
      });
      break;
    }
    case 5: {
      float* out = job.buffer<float>("out");
      launch("kernel_barrier_deadlock", uint3(1, 1, 1), uint3(64, 1, 1),
             [&](const pos& p) { kernel_barrier_deadlock(out, p.tpitg); });
      break;
    }
    case 6: {
      float* out = job.buffer<float>("out");
      launch("kernel_shuffle_deadlock", uint3(1, 1, 1), uint3(64, 1, 1),
             [&](const pos& p) { kernel_shuffle_deadlock(out, p.tiitg, p.tiisg); });
      break;
    }
    case 7: {
      float* out = job.buffer<float>("out");
      launch("kernel_split_barrier", uint3(1, 1, 1), uint3(64, 1, 1),
             [&](const pos& p) { kernel_split_barrier(out, p.tiitg); });
      break;
    }
    case 10: {  // grid (2,3,1) of threadgroups (sg/2, 2, 3)
      uint* out = job.buffer<uint>("out");
      FC_tag = job.arg_u32("fc");
      launch("kernel_positions", uint3(2, 3, 1), uint3(sg / 2, 2, 3), [&](const pos& p) {
        kernel_positions(out, p.tgpig, p.tpitg, p.tpig, p.ntg, p.tgpg, p.tiitg, p.sgitg, p.tiisg, p.tpsg);
      });
      break;
    }
    case 11: {
      const float* in = job.buffer<float>("in");
      float* out = job.buffer<float>("out");
      launch("kernel_math", uint3(1, 1, 1), uint3(8, 1, 1), [&](const pos& p) { kernel_math(in, out, p.tiitg); });
      break;
    }
    default:
      hostemu::detail::fail("unknown test %u", job.arg_u32("test"));
  }
}
