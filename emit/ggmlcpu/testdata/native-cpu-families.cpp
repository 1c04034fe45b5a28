static float dot_f32(int n, const float * x, const float * y) {
    float sum;
    ggml_vec_dot_f32(n, &sum, 0, x, 0, y, 0, 1);
    return sum;
}

// gather_rows: the ids gather as ggml-cpu runs it: the rows another sequence overwrites (prior states, conv taps) copied to scratch in chunks over the threads
static void ggml_compute_forward_gated_delta_net_inplace_gather_rows_f32(const ggml_compute_params * params, ggml_tensor * dst) {
    const uint32_t row_len = dst->src[2]->ne[0] * dst->src[2]->ne[0] * dst->src[2]->ne[1];
    const uint32_t n_seqs = dst->src[2]->ne[3];
    const uint32_t rs_head = ggml_get_op_params_i32(dst, 1);
    const float * cache = (const float *) dst->src[5]->data;
    const int32_t * ids = (const int32_t *) dst->src[7]->data;
    float * scratch = (float *) dst->data + dst->src[2]->ne[0] * dst->src[2]->ne[1] * dst->src[2]->ne[2] * dst->src[2]->ne[3];

    const int64_t groups_x = (row_len + 16383u) / 16384u;
    const int64_t groups_y = n_seqs;
    const int64_t n_groups = groups_x * groups_y;

    for (int64_t group = params->ith; group < n_groups; group += params->nth) {
        const uint32_t group_x = group % groups_x;
        const uint32_t s = group / groups_x;
        const int32_t src = ids[s];
        if (src != (int32_t) (rs_head + s) && (src >= (int32_t) rs_head && src < (int32_t) (rs_head + n_seqs))) {
            const uint32_t first = group_x * 16384u;
            const uint32_t left = row_len - first;
            const uint32_t last = first + (left < 16384u ? left : 16384u);
            const uint64_t from = (uint64_t) src * row_len;
            const uint32_t to = s * row_len;
            for (uint32_t i = first; i < last; ++i) {
                scratch[to + i] = cache[from + i];
            }
        }
    }
}

// gated_delta_net_inplace: gated delta net writing the final state in place (src[6]); with IDS, sequence s reads its prior state from row ids[s] (src[7]), which the gather first copied to scratch where another sequence overwrites it
static void ggml_compute_forward_gated_delta_net_inplace_f32(const ggml_compute_params * params, ggml_tensor * dst) {
    const uint32_t S_v = dst->src[2]->ne[0];
    const bool KDA = dst->src[3]->ne[0] == dst->src[2]->ne[0];
    const bool IDS = dst->src[7] != NULL;
    const uint32_t H = dst->src[2]->ne[1];
    const uint32_t n_tokens = dst->src[2]->ne[2];
    const uint32_t n_seqs = dst->src[2]->ne[3];
    const uint32_t neq1 = dst->src[0]->ne[1];
    const uint32_t rq3 = dst->src[2]->ne[3] / dst->src[0]->ne[3];
    const uint32_t sq1 = dst->src[0]->nb[1] / 4;
    const uint32_t sq2 = dst->src[0]->nb[2] / 4;
    const uint32_t sq3 = dst->src[0]->nb[3] / 4;
    const uint32_t sk1 = dst->src[1]->nb[1] / 4;
    const uint32_t sk2 = dst->src[1]->nb[2] / 4;
    const uint32_t sk3 = dst->src[1]->nb[3] / 4;
    const uint32_t sv1 = dst->src[2]->nb[1] / 4;
    const uint32_t sv2 = dst->src[2]->nb[2] / 4;
    const uint32_t sv3 = dst->src[2]->nb[3] / 4;
    const uint32_t sg1 = dst->src[3]->nb[1] / 4;
    const uint32_t sg2 = dst->src[3]->nb[2] / 4;
    const uint32_t sg3 = dst->src[3]->nb[3] / 4;
    const uint32_t sb1 = dst->src[4]->nb[1] / 4;
    const uint32_t sb2 = dst->src[4]->nb[2] / 4;
    const uint32_t sb3 = dst->src[4]->nb[3] / 4;
    const float scale = 1.0f / sqrtf((float) dst->src[2]->ne[0]);
    const uint32_t sd1 = dst->src[6]->nb[1] / 4;
    const uint32_t rs_head = ggml_get_op_params_i32(dst, 1);
    const uint32_t n_rows = dst->src[5]->ne[3];
    const float * q = (const float *) dst->src[0]->data;
    const float * k = (const float *) dst->src[1]->data;
    const float * v = (const float *) dst->src[2]->data;
    const float * g = (const float *) dst->src[3]->data;
    const float * beta = (const float *) dst->src[4]->data;
    const float * state = (const float *) dst->src[5]->data;
    float * dst_data = (float *) dst->data;
    float * state_dst = (float *) dst->src[6]->data;
    const int32_t * ids = IDS ? (const int32_t *) dst->src[7]->data : nullptr;
    const float * scratch = (const float *) dst->data + dst->src[2]->ne[0] * dst->src[2]->ne[1] * dst->src[2]->ne[2] * dst->src[2]->ne[3];

    const int64_t groups_x = H;
    const int64_t groups_y = n_seqs;
    const int64_t n_groups = groups_x * groups_y;

    for (int64_t group = params->ith; group < n_groups; group += params->nth) {
        const uint32_t h = group % groups_x;
        const uint32_t s = group / groups_x;
        const uint32_t hq = h % neq1;
        const uint32_t sq = s / rq3;
        const uint32_t block = S_v * S_v;
        const uint32_t row = s * sd1 + h * block;
        // copy the prior state to where the final state goes, and update it there
        if (IDS) {
            const int32_t src = ids[s];
            if (src != (int32_t) (rs_head + s)) {
                if (src >= (int32_t) rs_head && src < (int32_t) (rs_head + n_seqs)) {
                    for (uint32_t i = 0u; i < block; ++i) {
                        state_dst[row + i] = scratch[(s * H + h) * block + i];
                    }
                } else {
                    GGML_ASSERT(src >= 0);
                    GGML_ASSERT(src < (int32_t) n_rows);
                    for (uint32_t i = 0u; i < block; ++i) {
                        state_dst[row + i] = state[((uint64_t) src * H + h) * block + i];
                    }
                }
            }
        } else {
            for (uint32_t i = 0u; i < block; ++i) {
                state_dst[row + i] = state[(s * H + h) * block + i];
            }
        }
        for (uint32_t t = 0u; t < n_tokens; ++t) {
            const uint32_t q_off = sq * sq3 + t * sq2 + hq * sq1;
            const uint32_t k_off = sq * sk3 + t * sk2 + hq * sk1;
            const uint32_t g_off = s * sg3 + t * sg2 + h * sg1;
            const float beta_t = beta[s * sb3 + t * sb2 + h * sb1];
            const uint32_t v_off = s * sv3 + t * sv2 + h * sv1;
            const uint32_t attn_off = ((s * n_tokens + t) * H + h) * S_v;
            if (KDA) {
                // KDA: key i's gate scales element i of every row
                for (uint32_t i = 0u; i < S_v; ++i) {
                    const float gate = expf(g[g_off + i]);
                    for (uint32_t j = 0u; j < S_v; ++j) {
                        state_dst[row + (j * S_v + i)] = gate * state_dst[row + (j * S_v + i)];
                    }
                }
            } else {
                const float gate = expf(g[g_off]);
                for (uint32_t i = 0u; i < block; ++i) {
                    state_dst[row + i] = gate * state_dst[row + i];
                }
            }
            for (uint32_t j = 0u; j < S_v; ++j) {
                const uint32_t r = row + j * S_v;
                const float kv = dot_f32(S_v, state_dst + r, k + k_off);
                const float delta = (v[v_off + j] - kv) * beta_t;
                for (uint32_t i = 0u; i < S_v; ++i) {
                    state_dst[r + i] = fmaf(k[k_off + i], delta, state_dst[r + i]);
                }
                const float attn = dot_f32(S_v, state_dst + r, q + q_off);
                dst_data[attn_off + j] = attn * scale;
            }
        }
    }
}

static void ggml_compute_forward_gated_delta_net_inplace(const ggml_compute_params * params, ggml_tensor * dst) {
    // only the ids form gathers; with one sequence no source is another sequence's destination: the gather copies nothing
    if (dst->src[7] != NULL && dst->src[2]->ne[3] >= 2) {
        ggml_compute_forward_gated_delta_net_inplace_gather_rows_f32(params, dst);
        ggml_barrier(params->threadpool);
    }
    ggml_compute_forward_gated_delta_net_inplace_f32(params, dst);
}

// gather_rows: the ids gather as ggml-cpu runs it: the rows another sequence overwrites (prior states, conv taps) copied to scratch in chunks over the threads
static void ggml_compute_forward_ssm_conv_update_inplace_gather_rows_f32(const ggml_compute_params * params, ggml_tensor * dst) {
    const uint32_t row_len = dst->src[0]->nb[2] / 4;
    const uint32_t n_seqs = dst->src[2]->ne[2];
    const uint32_t rs_head = ggml_get_op_params_i32(dst, 1);
    const float * cache = (const float *) dst->src[0]->data;
    const int32_t * ids = (const int32_t *) dst->src[4]->data;
    float * scratch = (float *) params->wdata;

    const int64_t groups_x = (row_len + 16383u) / 16384u;
    const int64_t groups_y = n_seqs;
    const int64_t n_groups = groups_x * groups_y;

    for (int64_t group = params->ith; group < n_groups; group += params->nth) {
        const uint32_t group_x = group % groups_x;
        const uint32_t s = group / groups_x;
        const int32_t src = ids[s];
        if (src != (int32_t) (rs_head + s) && (src >= (int32_t) rs_head && src < (int32_t) (rs_head + n_seqs))) {
            const uint32_t first = group_x * 16384u;
            const uint32_t left = row_len - first;
            const uint32_t last = first + (left < 16384u ? left : 16384u);
            const uint64_t from = (uint64_t) src * row_len;
            const uint32_t to = s * row_len;
            for (uint32_t i = first; i < last; ++i) {
                scratch[to + i] = cache[from + i];
            }
        }
    }
}

// ssm_conv_update_inplace: conv over the cached taps and the new token (SiLU folded), the taps shifted in place (src[3]); with IDS, sequence s reads its taps from row ids[s] (src[4]), which the gather first copied to scratch where another sequence overwrites it
static void ggml_compute_forward_ssm_conv_update_inplace_f32(const ggml_compute_params * params, ggml_tensor * dst) {
    const uint32_t d_conv = dst->src[1]->ne[0];
    const bool SILU = ggml_get_op_params_i32(dst, 0) != 0;
    const bool IDS = dst->src[4] != NULL;
    const uint32_t n_ch = dst->src[1]->ne[1];
    const uint32_t n_seqs = dst->src[2]->ne[2];
    const uint32_t cs1 = dst->src[0]->nb[1] / 4;
    const uint32_t cs2 = dst->src[0]->nb[2] / 4;
    const uint32_t w1 = dst->src[1]->nb[1] / 4;
    const uint32_t x2 = dst->src[2]->nb[2] / 4;
    const uint32_t sd1 = dst->src[3]->nb[1] / 4;
    const uint32_t d2 = dst->nb[2] / 4;
    const uint32_t rs_head = ggml_get_op_params_i32(dst, 1);
    const uint32_t n_rows = dst->src[0]->ne[2];
    const float * conv_states = (const float *) dst->src[0]->data;
    const float * conv_kernel = (const float *) dst->src[1]->data;
    const float * x_cur = (const float *) dst->src[2]->data;
    float * conv_state_dst = (float *) dst->src[3]->data;
    const int32_t * ids = IDS ? (const int32_t *) dst->src[4]->data : nullptr;
    const float * scratch = (const float *) params->wdata;
    float * dst_data = (float *) dst->data;

    GGML_ASSERT(d_conv <= 8);
    const int64_t groups_x = (n_ch + 127u) / 128u;
    const int64_t groups_y = n_seqs;
    const int64_t n_groups = groups_x * groups_y;

    for (int64_t group = params->ith; group < n_groups; group += params->nth) {
        const uint32_t group_x = group % groups_x;
        const uint32_t c0 = group_x * 128u;
        const uint32_t s = group / groups_x;
        const uint32_t taps = d_conv - 1u;
        const uint32_t left = n_ch - c0;
        const uint32_t block_len = (left < 128u ? left : 128u);
        float act[128];
        for (uint32_t c = c0; c < c0 + block_len; ++c) {
            float window[8];
            // assemble the whole window before any write: cached taps, then the current token
            const uint32_t ring_off = s * sd1 + c * taps;
            if (IDS) {
                const int32_t src = ids[s];
                if (src == (int32_t) (rs_head + s)) {
                    for (uint32_t j = 0u; j < taps; ++j) {
                        window[j] = conv_state_dst[ring_off + j];
                    }
                } else {
                    if (src >= (int32_t) rs_head && src < (int32_t) (rs_head + n_seqs)) {
                        for (uint32_t j = 0u; j < taps; ++j) {
                            window[j] = scratch[s * cs2 + c * cs1 + j];
                        }
                    } else {
                        GGML_ASSERT(src >= 0);
                        GGML_ASSERT(src < (int32_t) n_rows);
                        for (uint32_t j = 0u; j < taps; ++j) {
                            window[j] = conv_states[(uint64_t) src * cs2 + c * cs1 + j];
                        }
                    }
                }
            } else {
                for (uint32_t j = 0u; j < taps; ++j) {
                    window[j] = conv_states[s * cs2 + c * cs1 + j];
                }
            }
            window[taps] = x_cur[s * x2 + c];
            float y = 0.0f;
            for (uint32_t j = 0u; j < d_conv; ++j) {
                y = y + window[j] * conv_kernel[c * w1 + j];
            }
            if (SILU) {
                act[c - c0] = y;
            } else {
                dst_data[s * d2 + c] = y;
            }
            // shift the window by one token into the ring
            for (uint32_t j = 0u; j < taps; ++j) {
                conv_state_dst[ring_off + j] = window[j + 1u];
            }
        }
        if (SILU) {
            ggml_vec_silu_f32(block_len, dst_data + (s * d2 + c0), act);
        }
    }
}

static void ggml_compute_forward_ssm_conv_update_inplace(const ggml_compute_params * params, ggml_tensor * dst) {
    // only the ids form gathers; with one sequence no source is another sequence's destination: the gather copies nothing
    if (dst->src[4] != NULL && dst->src[2]->ne[2] >= 2) {
        ggml_compute_forward_ssm_conv_update_inplace_gather_rows_f32(params, dst);
        ggml_barrier(params->threadpool);
    }
    ggml_compute_forward_ssm_conv_update_inplace_f32(params, dst);
}

size_t ggml_ssm_conv_update_inplace_work_size(const ggml_tensor * dst) {
    return dst->src[0]->nb[2] / 4 * dst->src[2]->ne[2] * sizeof(float);
}
