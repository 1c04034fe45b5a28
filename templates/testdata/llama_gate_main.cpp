// Runs the llama-gate sections (common/gate.tmpl, included as the files
// KG_PROBE and KG_GATE) in llama_context::sched_reserve over devices that
// take or refuse each form, and checks when the fused nodes stay on.
#include "llama_gate.h"

#include KG_PROBE

void llama_context::sched_reserve() {
#include KG_GATE
}

static int failures = 0;

// takes: the forms the device takes, in fused_form order (plain, A, B, C, D)
static ggml_backend_ptr device(const char * name, std::vector<bool> takes) {
    ggml_backend_dev_t dev = new ggml_backend_device{name, {}};
    for (size_t i = 0; i < takes.size(); i++) dev->takes[i] = takes[i];
    return ggml_backend_ptr(new ggml_backend{dev});
}

// Qwen3.5-like recurrent layers: S_v 128, 32 heads over 16, d_conv 4
static llama_model qwen() {
    llama_model m;
    m.hparams.ssm_d_state = 128;
    m.hparams.ssm_dt_rank = 32;
    m.hparams.ssm_n_group = 16;
    m.hparams.ssm_d_inner = 4096;
    m.hparams.ssm_d_conv  = 4;
    return m;
}

static void expect(const char * what, const llama_model & model, std::vector<ggml_backend_ptr> backends, bool on, bool start = true, bool offload_kqv = true) {
    llama_context lctx(model);
    lctx.cparams.offload_kqv = offload_kqv;
    lctx.cparams.fused_gdn_ar = lctx.cparams.fused_gdn_ch = lctx.cparams.auto_fgdn = start;
    lctx.backends = std::move(backends);
    llama_log.clear();
    lctx.sched_reserve();
    const llama_cparams & c = lctx.cparams;
    const bool logged = llama_log.find("disabled") != std::string::npos;
    if (c.fused_gdn_ar != on || c.fused_gdn_ch != on || c.auto_fgdn != on || logged != (start && !on)) {
        printf("FAIL %s: fused_gdn_ar %d, fused_gdn_ch %d, auto_fgdn %d, want %d; log: %s\n", what,
                c.fused_gdn_ar, c.fused_gdn_ch, c.auto_fgdn, on, llama_log.c_str());
        failures++;
    }
    for (ggml_backend_ptr & b : lctx.backends) {
        delete b->device;
    }
}

template <typename... T> static std::vector<ggml_backend_ptr> list(T... b) {
    std::vector<ggml_backend_ptr> v;
    (v.push_back(std::move(b)), ...);
    return v;
}

int main() {
    const llama_model m = qwen();
    const std::vector<bool> all = {true, true, true, true, true};
    expect("every device takes every form", m, list(device("GPU", all), device("CPU", all)), true);
    expect("a device without the plain ops is not asked", m, list(device("BLAS", {false}), device("CPU", all)), true);
    expect("a device without a device is skipped", m, list(ggml_backend_ptr(new ggml_backend{nullptr}), device("CPU", all)), true);
    expect("a GPU without op C", m, list(device("GPU", {true, true, true, false, true}), device("CPU", all)), false);
    expect("a GPU without op D", m, list(device("GPU", {true, true, true, true, false}), device("CPU", all)), false);
    expect("a GPU without op A", m, list(device("GPU", {true, false, true, true, true}), device("CPU", all)), false);
    expect("a GPU without op B", m, list(device("GPU", {true, true, false, true, true}), device("CPU", all)), false);
    expect("a GPU with the plain ops only", m, list(device("GPU", {true}), device("CPU", all)), false);
    expect("fusion already off stays off", m, list(device("GPU", {true}), device("CPU", all)), false, false);
    expect("a model without recurrent layers", llama_model(), list(device("GPU", {true}), device("CPU", all)), true);
    // without offload_kqv the recurrent cache stays in host memory while the layers run on the GPU
    expect("the cache in host memory, a GPU", m, list(device("GPU", all), device("CPU", all)), false, true, false);
    expect("the cache in host memory, the CPU only", m, list(device("CPU", all)), true, true, false);
    expect("the cache in host memory, BLAS and the CPU", m, list(device("BLAS", {false}), device("CPU", all)), true, true, false);
    printf("%d failures\n", failures);
    return failures != 0;
}
