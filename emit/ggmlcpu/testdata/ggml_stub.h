// What the lowered ggml-cpu kernels use of ggml, for the tests: the node
// and compute-params structs, a real barrier for real threads, and the
// native routines evaluated as the Go reference evaluates the IR (ExpNative
// as exp in double rounded once, vec_dot i ascending from +0.0, vec_silu per
// element). Compiled with -ffp-contract=off, so every product rounds on its
// own as in the Go reference.
#pragma once

#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#define GGML_MAX_SRC 10
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define GGML_ASSERT(x)                                          \
    do {                                                        \
        if (!(x)) {                                             \
            fprintf(stderr, "GGML_ASSERT(%s) failed\n", #x);    \
            abort();                                            \
        }                                                       \
    } while (0)

enum ggml_type { GGML_TYPE_F32 = 0, GGML_TYPE_I32 = 26 };

struct ggml_tensor {
    enum ggml_type type;
    int64_t ne[4];
    size_t nb[4];
    int32_t op_params[16];
    struct ggml_tensor * src[GGML_MAX_SRC];
    void * data;
};

// every thread waits until all n have arrived; reusable
struct ggml_threadpool {
    std::mutex mutex;
    std::condition_variable cv;
    int n;
    int arrived;
    unsigned generation;
};

struct ggml_compute_params {
    int ith, nth;
    size_t wsize;
    void * wdata;
    struct ggml_threadpool * threadpool;
};

static inline void ggml_barrier(struct ggml_threadpool * tp) {
    std::unique_lock<std::mutex> lock(tp->mutex);
    const unsigned generation = tp->generation;
    if (++tp->arrived == tp->n) {
        tp->arrived = 0;
        tp->generation++;
        tp->cv.notify_all();
        return;
    }
    tp->cv.wait(lock, [&] { return tp->generation != generation; });
}

static inline int32_t ggml_get_op_params_i32(const struct ggml_tensor * t, int i) { return t->op_params[i]; }

static inline float go_expf(float x) { return (float) exp((double) x); }
#define expf go_expf

static inline void ggml_vec_dot_f32(int n, float * s, size_t, const float * x, size_t, const float * y, size_t, int) {
    float sum = 0.0f;
    for (int i = 0; i < n; ++i) {
        sum += x[i] * y[i];
    }
    *s = sum;
}

static inline void ggml_vec_silu_f32(const int n, float * y, const float * x) {
    for (int i = 0; i < n; ++i) {
        y[i] = x[i] / (1.0f + expf(-x[i]));
    }
}

// ggml-cpu's routines of its plain GDN kernel, for the unfused reference
// (unfused_gdn.cpp): products rounded one by one, the multiply-add one FMA
// as ggml_vec_mad_f32 computes it on an FMA ISA (the native-cpu contract).
static inline void ggml_vec_scale_f32(const int n, float * y, const float v) {
    for (int i = 0; i < n; ++i) {
        y[i] *= v;
    }
}

static inline void ggml_vec_mul_f32(const int n, float * z, const float * x, const float * y) {
    for (int i = 0; i < n; ++i) {
        z[i] = x[i] * y[i];
    }
}

static inline void ggml_vec_mad_f32(const int n, float * y, const float * x, const float v) {
    for (int i = 0; i < n; ++i) {
        y[i] = fmaf(x[i], v, y[i]);
    }
}
