// stand-in for src/ggml-sycl/ggml-sycl.cpp
#include "ggml-sycl/ssm_conv.hpp"
#include "ggml-sycl/gated_delta_net.hpp"

static bool ggml_sycl_compute_forward(ggml_backend_sycl_context & ctx, struct ggml_tensor * dst) try {
    switch (dst->op) {
        default:
            return false;
    }
    return true;
}

static bool do_ggml_backend_sycl_device_supports_op(ggml_backend_dev_t dev, const ggml_tensor * op) {
    switch (op->op) {
        default:
            return false;
    }
}
