package hostemu

// SYCL's skin (internal/backend/sycl owns this file).

// SYCL is SYCL 2020 under hostemu/sycl.h, or, under Options.Real, under
// the compiler's own implementation (AdaptiveCpp's acpp) with
// hostemu/sycl_real.h keeping the job protocol; the skin's sycl/sycl.hpp
// then gives way to the implementation's.
var SYCL = &Lang{name: "sycl", skin: "hostemu/sycl.h", real: "hostemu/sycl_real.h", realOwn: "sycl"}
