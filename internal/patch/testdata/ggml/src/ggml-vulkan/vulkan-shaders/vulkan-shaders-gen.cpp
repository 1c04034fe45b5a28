// stand-in for vulkan-shaders-gen.cpp

void process_shaders() {
    string_to_spv("ssm_conv_f32", "ssm_conv.comp", {{"A_TYPE", "float"}});
    string_to_spv("opt_step_adamw_f32", "opt_step_adamw.comp", {});
}
