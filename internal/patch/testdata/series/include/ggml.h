// stand-in for include/ggml.h of a tree with the series' builders

    GGML_API struct ggml_tensor * ggml_ssm_conv(
            struct ggml_context * ctx,
            struct ggml_tensor  * sx,
            struct ggml_tensor  * c);

    GGML_API struct ggml_tensor * ggml_ssm_conv_update_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * conv_states,
            struct ggml_tensor  * conv_kernel,
            struct ggml_tensor  * x_cur,
            struct ggml_tensor  * conv_state_dst,
            bool                  fuse_silu);

    GGML_API struct ggml_tensor * ggml_ssm_conv_update_inplace_ids(
            struct ggml_context * ctx,
            struct ggml_tensor  * conv_states,
            struct ggml_tensor  * conv_kernel,
            struct ggml_tensor  * x_cur,
            struct ggml_tensor  * conv_state_dst,
            struct ggml_tensor  * ids,
            int                   rs_head,
            bool                  fuse_silu);

    GGML_API struct ggml_tensor * ggml_gated_delta_net(
            struct ggml_context * ctx,
            struct ggml_tensor  * q,
            struct ggml_tensor  * k,
            struct ggml_tensor  * v,
            struct ggml_tensor  * g,
            struct ggml_tensor  * beta,
            struct ggml_tensor  * state,
            int64_t               K);

    GGML_API struct ggml_tensor * ggml_gated_delta_net_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * q,
            struct ggml_tensor  * k,
            struct ggml_tensor  * v,
            struct ggml_tensor  * g,
            struct ggml_tensor  * beta,
            struct ggml_tensor  * state,
            struct ggml_tensor  * state_dst);

    GGML_API struct ggml_tensor * ggml_gated_delta_net_inplace_ids(
            struct ggml_context * ctx,
            struct ggml_tensor  * q,
            struct ggml_tensor  * k,
            struct ggml_tensor  * v,
            struct ggml_tensor  * g,
            struct ggml_tensor  * beta,
            struct ggml_tensor  * state,
            struct ggml_tensor  * state_dst,
            struct ggml_tensor  * ids,
            int                   rs_head);
