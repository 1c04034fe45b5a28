// Harness for the SYCL test kernels: the "test" argument picks the launch.
void hostemu_run(hostemu::Job& job) {
  using hostemu::sycl::launch;
  sycl::queue q;
  const uint32_t sg = job.subgroup_width();
  switch (job.arg_u32("test")) {
    case 1:
      launch("reduce", [&] { reduce_launch(q, job.buffer<float>("x"), job.buffer<float>("out"), sg); });
      break;
    case 2:
      launch("shuffle", [&] { shuffle_launch(q, job.buffer<int32_t>("out"), sg); });
      break;
    case 3:
      launch("barrier", [&] { barrier_launch(q, job.buffer<int32_t>("out"), job.arg_u32("n")); });
      break;
    case 4:
      launch("multi", [&] { multi_launch(q, job.buffer<float>("x"), job.buffer<float>("out"), sg); });
      break;
    case 5:  // named by its SYCL kernel name
      barrier_deadlock_launch(q, job.buffer<float>("out"));
      break;
    case 6:
      launch("shuffle_deadlock", [&] { shuffle_deadlock_launch(q, job.buffer<float>("out")); });
      break;
    case 7:
      launch("split_barrier", [&] { split_barrier_launch(q, job.buffer<float>("out")); });
      break;
    case 10:
      launch("positions", [&] { positions_launch(q, job.buffer<uint32_t>("out"), sg); });
      break;
    case 11:
      launch("math", [&] { math_launch(q, job.buffer<float>("in"), job.buffer<float>("out")); });
      break;
    default:
      hostemu::detail::fail("unknown test %u", job.arg_u32("test"));
  }
}
