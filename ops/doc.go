// Package ops holds every kernel of docs/ops.md written once in the DSL, the
// variant table (variants.go), and the registry the CLI and emitters read.
//
// # Kernels
//
//   - gated_delta_net: the base recurrence (docs/ops.md#gdn), scalar gate or KDA,
//     K = 1 (final state into dst's state region) or KEEP_RS (snapshot slot k
//     = state after token T-1-k; slots with T-1-k < 0 are left as they are).
//     GQA and sequence broadcast: value head h reads q/k head h % neq1,
//     sequence s reads q/k sequence s / rq3.
//   - gated_delta_net_inplace (op A): the same, final state into state_dst row s.
//   - gated_delta_net_inplace_ids (op B) and gather (GatherOp, which op D runs too): two-phase.
//   - gated_delta_net_inplace_ids_batched: op B in one dispatch, for up to
//     NS*SPT sequences where state_dst is the cache's window; a backend's
//     tiers pick the shape by n_seqs (GDNBatch, GDNBatchSpans; Vulkan, CUDA);
//     an Aliased tier runs a step only where some source aliases, the
//     chained compute after it where none does (docs/ops.md#split-by-aliasing).
//   - gated_delta_net_inplace_ids_slots (SlotsOp): op B that also writes K
//     snapshot slots in place (slot n_tokens-1-t, 1 <= slot < K, at slot*ss
//     in state_dst; slot 0 is the final state): the graph fusion's
//     (ops/fusion), which keeps llama.cpp's MTP rollback fused.
//   - ssm_conv: the plain conv, the non-fused path of ops C and D.
//   - ssm_conv_update_inplace (op C), ssm_conv_update_inplace_ids (op D) and
//     gather; ssm_conv_update_inplace_ids_batched, op D in one
//     dispatch as op B's (ConvBatch; Vulkan).
//   - ssm_conv_update_inplace_ids_slots (ConvSlotsOp): op D over n_t tokens
//     (x_cur and dst [n_ch, n_t, n_seqs]) on a rolling window that also
//     writes the taps after token t to slot n_t-1-t, 1 <= slot < K, at
//     slot*ss in conv_state_dst (slot 0 is the last taps): the graph
//     fusion's, the conv side of the MTP step.
//
// # The ids variants (ops B and D), docs/ops.md#aliasing decided
//
// Sequence s is identity when ids[s] == rs_head + s. Every read of prior
// state sees the value from before the op, whatever the order sequences run
// in. Three sources:
//
//   - identity: its own destination row (state_dst / conv_state_dst;
//     "identity reads the dst view", docs/ops.md#aliasing). The workgroup that
//     writes a row read it into registers first.
//   - a source inside the destination window [rs_head, rs_head + n_seqs)
//     (another sequence's destination, the shared zeroed cell of docs/ops.md#aliasing): the
//     gather dispatch, which runs before the compute dispatch, copied the
//     row into scratch row s; the compute kernel reads scratch.
//   - any other source: read from the cache directly; nothing in the op
//     writes it, so it is pre-op by construction. (CUDA's series kernels
//     gather every non-identity row; reading these in place saves the copy
//     and gives the same values.)
//
// So when ids[s] names another sequence's destination, s reads that row's
// pre-op value whether that sequence runs before or after it. This is the
// CUDA behaviour; the CPU reference of op D, which reads the updated row when
// that sequence comes first, diverges from it and is the one to fix. The
// gathers are pure copies. The output state region of ops A and B is never
// written.
//
// With one sequence the window is the sequence's own row, so the gather
// copies nothing: its Guard lets backends leave it out, and the compute
// kernel then waits for the dispatches before it itself (DepWait under
// n_seqs < 2), which the gather otherwise did.
//
// The batched kernel orders the reads without a gather. Sources alias
// destinations only element for element (the same head, column and row of
// another row), so a workgroup that owns one (head, column block) of every
// sequence holds every reader and writer of its elements: it holds NS*SPT
// sequences, NS rows of threads of SPT sequences each (row z runs z + j*NS,
// a register shard per j). Each thread reads the prior state of every one of
// its sequences and runs its tokens, a device barrier, then the final states
// are written. That needs state_dst to be the cache's rows
// from rs_head, so that a source inside the window can be read through
// state_dst, the binding the writes use (a compiler may reorder accesses to
// two bindings it assumes distinct); the glue checks the layout
// (glue.stateDstIsWindow) and otherwise runs the two dispatches.
//
// # Arithmetic contracts
//
// Every op except the gathers is built under each contract; the contract picks
// the arithmetic, never the semantics (and, for native-cpu, a shape that runs
// well one thread at a time). native-cpu's GDN madd is an fma, as ggml-cpu's
// vector routines compute it on an FMA ISA; on an ISA without FMA ggml-cpu
// rounds twice and the fused ops differ from it in the last bits. Notation:
// mul, add, sub round once each; fma rounds once; madd(x, y, acc) is
// fma(x, y, acc) under portable and in native-cpu's GDN and acc + x*y (two
// roundings, contractible by the backend's compiler) under the other native
// contracts and native-cpu's conv taps. Each value column j of a GDN head is reduced over W = min(32, S_v)
// lanes (native-opencl: 8 at S_v 128, ggml-opencl's LANES_PER_COLUMN; native-sycl: min(16, S_v),
// ggml-sycl's WARP_SIZE on Intel); lane l holds R = S_v/W rows: rows r*W + l (strided) on every contract
// but native-metal, whose lane holds rows l*R .. l*R+R-1 (blocked), and
// native-cpu, where W = 1: a lane holds whole columns and each reduction is
// one VecDot over the column (ggml_vec_dot_f32 in ggml-cpu, whose order is
// the ISA's; the Go reference sums i ascending), nothing crosses lanes. Lane
// partials accumulate r ascending from +0.0 and are summed by the butterfly
// (reduce order "native" on Metal and Vulkan, evaluated as the butterfly by
// the Go reference).
//
// GDN per token, column j, gate e_i = exp(g_i) (KDA) or e = exp(g) (scalar):
//
//	decay first (portable, native-metal, native-vulkan, native-cpu; KDA there
//	and on native-opencl too):
//	  S'[i][j] = mul(e_i, S[i][j]); kv = reduce(madd(S', k, .));
//	  delta = mul(sub(v[j], kv), beta); S[i][j] = madd(k[i], delta, S'[i][j])
//	gate after the reduction (native-cuda and native-sycl, scalar gate):
//	  kv = reduce(madd(S, k, .)); delta = mul(sub(v[j], mul(e, kv)), beta);
//	  S[i][j] = add(mul(e, S[i][j]), mul(k[i], delta))
//	gate on each lane's partial (native-opencl, scalar gate; ggml-opencl's
//	kv_shard *= g_val): kv = reduce(mul(madd(S, k, .), e));
//	  delta = mul(sub(v[j], kv), beta); S[i][j] = madd(k[i], delta, mul(e, S[i][j]))
//	KDA on native-cuda and native-sycl (ggml-cuda's contractions, pinned):
//	  kv = reduce(fma(mul(e_i, S), k, .)); delta = mul(sub(v[j], kv), beta);
//	  S[i][j] = fma(k[i], delta, mul(e_i, S[i][j])) when R == 1,
//	            fma(e_i, S[i][j], mul(k[i], delta)) when R > 1
//	then attn[j] = mul(reduce(madd(S, q, .)), scale).
//
// Conv taps, window oldest tap first and the current token last:
//
//	portable:      y = +0.0; y = fma(win[j], w[j], y) for j ascending; y = add(y, +0.0)
//	native-cuda:   y = +0.0; y = add(y, mul(win[j], w[j])) ascending; y = add(y, +0.0)
//	native-sycl:   as native-cuda without the final + 0.0
//	native-metal:  d_conv % 4 == 0: y = +0.0; y = add(y, dot4(chunk)) per 4 taps; else as sycl
//	native-vulkan: d_conv == 4: y = +0.0 + dot4(all); else as sycl
//	native-opencl: as native-metal (ggml-opencl's float4 kernel where d_conv % 4 == 0)
//	native-cpu:    as native-sycl, as written: ggml-cpu's plain conv (docs/ops.md#conv) writes sumf += s*c and its compiler decides the
//	               contraction per d_conv (GCC 12 -O3 -march=native: fma chain at
//	               2-3, products summed in order at 4 and 8, both at 5-7; -O2 and
//	               Clang: fma chain). The fused kernels write the same sum, for the
//	               same compiler to decide; the Go reference checks it uncontracted.
//
// exp is dsl.ExpPortable under portable and the backend's exp under native;
// SiLU is dsl.SiluPortable (y / (1 + exp(-y)) from exact operations) or
// y / (1 + exp(-y)) with the backend's division. Both are -0 once exp(-y)
// overflows and +Inf at +Inf; at -Inf portable gives -0 (the limit), the
// native division NaN. native-cpu's conv update
// runs a block of 128 channels per lane and applies one VecSilu to the block
// (ggml_vec_silu_f32, as the unfused path's row-wise SiLU: a block starts a
// multiple of 128 channels into the row, so every channel takes the same
// vector or scalar step as there).
package ops
