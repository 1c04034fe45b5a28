// Runs the Vulkan step's pipeline creation (ggml_vk_load_shaders' loops over
// the fused kernels' variant tables, create.inc) over a stand-in of the
// creation functions that records what each pipeline asks for, on devices of
// subgroup size 32 and 64. Vulkan allows full subgroups only where the
// workgroup's x size is a multiple of the subgroup size; the plain GDN
// pipelines ask for them where they shuffle, and so must these where the
// shape allows. Written for vulkan_host_test.go; the names follow ggml's.
#include <array>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

struct vk_pipeline_struct {};
typedef std::shared_ptr<vk_pipeline_struct> vk_pipeline;

struct vk_device_struct {
    uint32_t subgroup_size;
#include "members.inc"
};
typedef std::shared_ptr<vk_device_struct> vk_device;

#include "push.inc"

static const unsigned char state_gather_f32_data[4] = {};
static const unsigned char gated_delta_net_inplace_f32_data[4] = {};
static const unsigned char ssm_conv_update_inplace_f32_data[4] = {};
static const size_t state_gather_f32_len = 4, gated_delta_net_inplace_f32_len = 4, ssm_conv_update_inplace_f32_len = 4;

static int failures = 0, full = 0, created = 0;

// check is one created pipeline: the local size x is specialization constant
// x_id of the shuffling GDN shader (KG_GDN_X_ID), set by its spec constants
static void check(const vk_device & device, const std::string & name, const std::vector<uint32_t> & spec, bool require_full, uint32_t subgroup) {
    created++;
    const bool gdn = name.rfind("gated_delta_net_inplace", 0) == 0;
    if (!gdn) {
        if (require_full || subgroup != 0) {
            printf("FAIL %s: a shader that does not shuffle asks for full subgroups %d, subgroup size %u\n", name.c_str(), require_full, subgroup);
            failures++;
        }
        return;
    }
    const uint32_t x = spec.at(KG_GDN_X_ID);
    if (subgroup != device->subgroup_size) {
        printf("FAIL %s: subgroup size %u, want the device's %u\n", name.c_str(), subgroup, device->subgroup_size);
        failures++;
    }
    if (require_full != (x % device->subgroup_size == 0)) {
        printf("FAIL %s at subgroup size %u: local size x %u, full subgroups %d\n", name.c_str(), device->subgroup_size, x, require_full);
        failures++;
    }
    full += require_full;
}

static void load(vk_device & device) {
    auto const & ggml_vk_create_pipeline = [&](vk_device & dev, vk_pipeline & pipeline, const char * name, size_t, const void *, const char *,
            uint32_t, uint32_t, std::array<uint32_t, 3>, const std::vector<uint32_t> & spec, uint32_t,
            bool disable_robustness = false, bool require_full_subgroups = false, uint32_t required_subgroup_size = 0) {
        (void) disable_robustness;
        pipeline = std::make_shared<vk_pipeline_struct>();
        check(dev, name, spec, require_full_subgroups, required_subgroup_size);
    };
    auto const & ggml_vk_create_pipeline2 = [&](vk_device & dev, vk_pipeline & pipeline, const std::string & name, size_t spv_size, const void * spv_data, const char * entrypoint,
            uint32_t parameter_count, uint32_t push_constant_size, std::array<uint32_t, 3> wg_denoms, const std::vector<uint32_t> & spec, uint32_t align,
            bool disable_robustness = false, bool require_full_subgroups = false, uint32_t required_subgroup_size = 0) {
        ggml_vk_create_pipeline(dev, pipeline, name.c_str(), spv_size, spv_data, entrypoint, parameter_count, push_constant_size, wg_denoms, spec, align,
            disable_robustness, require_full_subgroups, required_subgroup_size);
    };
#include "create.inc"
}

int main() {
    int full_at[2] = {};
    for (uint32_t i = 0; i < 2; i++) {
        vk_device device = std::make_shared<vk_device_struct>();
        device->subgroup_size = i == 0 ? 32 : 64;
        full = 0;
        load(device);
        full_at[i] = full;
    }
    // subgroups of 32: every GDN column of 32 lanes (S_v 32, 64, 128) is one full subgroup;
    // of 64: none is (a column reduces within half a subgroup)
    if (full_at[0] == 0 || full_at[1] != 0) {
        printf("FAIL full-subgroup pipelines: %d at subgroup size 32, %d at 64\n", full_at[0], full_at[1]);
        failures++;
    }
    printf("%d pipelines, %d failures\n", created, failures);
    return failures != 0;
}
