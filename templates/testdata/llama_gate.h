// A stand-in for the llama.cpp and ggml declarations the llama-gate sections
// (common/gate.tmpl) use, with the signatures of ggml.h, ggml-backend.h,
// ggml-cpp.h and llama.cpp's llama-impl.h, llama-hparams.h and
// llama-context.h (the fused builders as the series declares them), and
// small definitions so the probe can run: a device answers supports_op from
// what it is told it takes. Written for gate_test.go.
#pragma once
#include "ggml_fixture.h"

#include <cstdarg>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

enum ggml_log_level { GGML_LOG_LEVEL_NONE, GGML_LOG_LEVEL_DEBUG, GGML_LOG_LEVEL_INFO, GGML_LOG_LEVEL_WARN, GGML_LOG_LEVEL_ERROR };

struct ggml_init_params {
    size_t mem_size;
    void * mem_buffer;
    bool   no_alloc;
};

struct ggml_context {
    std::vector<std::unique_ptr<ggml_tensor>> tensors;
};

static size_t ggml_tensor_overhead(void) { return sizeof(ggml_tensor) + 16; }
static ggml_context * ggml_init(struct ggml_init_params) { return new ggml_context; }
static void ggml_free(ggml_context * ctx) { delete ctx; }

static ggml_tensor * ggml_new_tensor_4d(ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    ctx->tensors.emplace_back(new ggml_tensor);
    ggml_tensor * t = ctx->tensors.back().get();
    t->type = type;
    t->ne[0] = ne0; t->ne[1] = ne1; t->ne[2] = ne2; t->ne[3] = ne3;
    t->nb[0] = 4; t->nb[1] = 4*ne0; t->nb[2] = t->nb[1]*ne1; t->nb[3] = t->nb[2]*ne2;
    return t;
}
static ggml_tensor * ggml_new_tensor_3d(ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2) {
    return ggml_new_tensor_4d(ctx, type, ne0, ne1, ne2, 1);
}
static ggml_tensor * ggml_new_tensor_2d(ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1) {
    return ggml_new_tensor_4d(ctx, type, ne0, ne1, 1, 1);
}
static ggml_tensor * ggml_new_tensor_1d(ggml_context * ctx, enum ggml_type type, int64_t ne0) {
    return ggml_new_tensor_4d(ctx, type, ne0, 1, 1, 1);
}

static const char * ggml_op_desc(const struct ggml_tensor * t) {
    return t->op == GGML_OP_GATED_DELTA_NET ? "GATED_DELTA_NET" : t->op == GGML_OP_SSM_CONV ? "SSM_CONV" : "NONE";
}

// a node of op with its sources (nullptr ends them) and op_params
static ggml_tensor * node(ggml_context * ctx, ggml_op op, std::vector<ggml_tensor *> src, std::vector<int32_t> params) {
    ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    t->op = op;
    for (size_t i = 0; i < src.size(); i++) t->src[i] = src[i];
    for (size_t i = 0; i < params.size(); i++) t->op_params[i] = params[i];
    return t;
}

static ggml_tensor * ggml_gated_delta_net(ggml_context * ctx, ggml_tensor * q, ggml_tensor * k, ggml_tensor * v, ggml_tensor * g,
        ggml_tensor * beta, ggml_tensor * state, int64_t K) {
    return node(ctx, GGML_OP_GATED_DELTA_NET, {q, k, v, g, beta, state}, {(int32_t) K});
}
static ggml_tensor * ggml_gated_delta_net_inplace(ggml_context * ctx, ggml_tensor * q, ggml_tensor * k, ggml_tensor * v, ggml_tensor * g,
        ggml_tensor * beta, ggml_tensor * state, ggml_tensor * state_dst) {
    return node(ctx, GGML_OP_GATED_DELTA_NET, {q, k, v, g, beta, state, state_dst}, {1});
}
static ggml_tensor * ggml_gated_delta_net_inplace_ids(ggml_context * ctx, ggml_tensor * q, ggml_tensor * k, ggml_tensor * v, ggml_tensor * g,
        ggml_tensor * beta, ggml_tensor * state, ggml_tensor * state_dst, ggml_tensor * ids, int rs_head) {
    return node(ctx, GGML_OP_GATED_DELTA_NET, {q, k, v, g, beta, state, state_dst, ids}, {1, rs_head});
}
static ggml_tensor * ggml_ssm_conv(ggml_context * ctx, ggml_tensor * sx, ggml_tensor * c) {
    return node(ctx, GGML_OP_SSM_CONV, {sx, c}, {});
}
static ggml_tensor * ggml_ssm_conv_update_inplace(ggml_context * ctx, ggml_tensor * conv_states, ggml_tensor * conv_kernel,
        ggml_tensor * x_cur, ggml_tensor * conv_state_dst, bool fuse_silu) {
    return node(ctx, GGML_OP_SSM_CONV, {conv_states, conv_kernel, x_cur, conv_state_dst}, {fuse_silu});
}
static ggml_tensor * ggml_ssm_conv_update_inplace_ids(ggml_context * ctx, ggml_tensor * conv_states, ggml_tensor * conv_kernel,
        ggml_tensor * x_cur, ggml_tensor * conv_state_dst, ggml_tensor * ids, int rs_head, bool fuse_silu) {
    return node(ctx, GGML_OP_SSM_CONV, {conv_states, conv_kernel, x_cur, conv_state_dst, ids}, {fuse_silu, rs_head});
}

struct ggml_context_deleter { void operator()(ggml_context * ctx) { ggml_free(ctx); } };
typedef std::unique_ptr<ggml_context, ggml_context_deleter> ggml_context_ptr;

// A device takes the plain form of an op, or its fused forms, as it is told.
enum fused_form { FORM_PLAIN, FORM_A, FORM_B, FORM_C, FORM_D, FORM_COUNT };

struct ggml_backend_device {
    std::string name;
    bool takes[FORM_COUNT];
};
typedef struct ggml_backend_device * ggml_backend_dev_t;

struct ggml_backend {
    ggml_backend_dev_t device;
};
typedef struct ggml_backend * ggml_backend_t;

static ggml_backend_dev_t ggml_backend_get_device(ggml_backend_t backend) { return backend->device; }
static const char * ggml_backend_dev_name(ggml_backend_dev_t device) { return device->name.c_str(); }

enum ggml_backend_dev_type { GGML_BACKEND_DEVICE_TYPE_CPU, GGML_BACKEND_DEVICE_TYPE_GPU, GGML_BACKEND_DEVICE_TYPE_ACCEL };
// a device named CPU is the CPU, one named BLAS an accelerator, any other a GPU
static enum ggml_backend_dev_type ggml_backend_dev_type(ggml_backend_dev_t device) {
    return device->name == "CPU" ? GGML_BACKEND_DEVICE_TYPE_CPU : device->name == "BLAS" ? GGML_BACKEND_DEVICE_TYPE_ACCEL : GGML_BACKEND_DEVICE_TYPE_GPU;
}

static bool ggml_backend_dev_supports_op(ggml_backend_dev_t device, const struct ggml_tensor * op) {
    if (op->op == GGML_OP_GATED_DELTA_NET) {
        return device->takes[op->src[7] ? FORM_B : op->src[6] ? FORM_A : FORM_PLAIN];
    }
    if (op->op == GGML_OP_SSM_CONV) {
        return device->takes[op->src[4] ? FORM_D : op->src[3] ? FORM_C : FORM_PLAIN];
    }
    return true;
}

static void ggml_backend_free(ggml_backend_t backend) { delete backend; }
struct ggml_backend_deleter { void operator()(ggml_backend_t backend) { ggml_backend_free(backend); } };
typedef std::unique_ptr<ggml_backend, ggml_backend_deleter> ggml_backend_ptr;

// llama-impl.h
static std::string llama_log;

__attribute__((format(printf, 2, 3)))
static void llama_log_internal(ggml_log_level, const char * format, ...) {
    char buf[512];
    va_list args;
    va_start(args, format);
    vsnprintf(buf, sizeof buf, format, args);
    va_end(args);
    llama_log += buf;
}
#define LLAMA_LOG_INFO(...) llama_log_internal(GGML_LOG_LEVEL_INFO, __VA_ARGS__)

// llama-hparams.h, llama-cparams.h, llama-model.h, llama-context.h
struct llama_hparams {
    uint32_t ssm_d_conv  = 0;
    uint32_t ssm_d_inner = 0;
    uint32_t ssm_d_state = 0;
    uint32_t ssm_dt_rank = 0;
    uint32_t ssm_n_group = 0;
};

struct llama_cparams {
    bool fused_gdn_ar = true;
    bool fused_gdn_ch = true;
    bool auto_fgdn    = true;
    bool offload_kqv  = true;
};

struct llama_model {
    llama_hparams hparams;
};

struct llama_context {
    explicit llama_context(const llama_model & model) : model(model) {}
    void sched_reserve();

    const llama_model & model;
    llama_cparams cparams;
    std::vector<ggml_backend_ptr> backends;
};
