// Force-included instead of the SYCL skin when a program is built with a real
// SYCL implementation (Options.RealSYCL: acpp, icpx). <sycl/sycl.hpp> is the
// implementation's own; hostemu keeps only the job protocol (Job, guarded
// buffers, main), so kernels run as the implementation runs them. The
// harness passes job buffers as plain pointers: that holds on a device
// sharing the host's memory (a CPU device), not on a GPU.
#pragma once
#include <sycl/sycl.hpp>

#include "core.h"

namespace hostemu::sycl {
// Runs body, which submits kernels to a queue, naming them in the launch
// trace and in errors; a SYCL exception becomes a runtime error.
template <class F>
inline void launch(std::string_view name, F&& body) {
  detail::rt.kernel_name.assign(name);
  if (detail::rt.kernel_name != detail::rt.last_traced) {
    std::fprintf(stderr, "hostemu: launch %s\n", detail::rt.kernel_name.c_str());
    std::fflush(stderr);
    detail::rt.last_traced = detail::rt.kernel_name;
  }
  detail::rt.in_launch = true;
  try {
    body();
  } catch (const ::sycl::exception& e) {
    detail::fail("SYCL exception: %s", e.what());
  }
  detail::rt.in_launch = false;
}
}  // namespace hostemu::sycl
