// Package fusion describes, once and as data, the graph fusions of
// llama.cpp's own GDN decode graph that run our fused kernels (ops B and D)
// with no new ggml op: the nodes llama.cpp builds (Pattern.Nodes), the
// conditions under which the fused dispatch gives the graph's results bit
// for bit (Pattern.Conditions), and the dispatch (Pattern.Kernel and
// Gather, their buffers, args and params bound to the pattern's tensors).
// The reference matcher here (Pattern.At) reads that description; a
// backend's matcher text is generated from it and adds only its spelling
// (the names of its tensors, its launch). docs/fusion.md has the why.
//
// A graph is ggml's as a backend sees it (Graph, Tensor: op, srcs, shape,
// strides, view_src/view_offs, buffer, output flag); Layer builds the
// decode step as llama.cpp does, for the tests.
//
// # The state: op B at the GATED_DELTA_NET's place
//
//	role    node                                   becomes
//	rows    GET_ROWS(cache, ids)                   skipped: the kernel reads cache[ids[s]]
//	prior   RESHAPE(rows) = gdn.src[5]             skipped
//	gdn     GATED_DELTA_NET(q,k,v,g,beta,prior;K)  gather + op B with slots (ops.SlotsOp)
//	tail    VIEW(gdn) at the state region          skipped
//	store   CPY(tail, window)                      skipped: the kernel wrote window
//	cache   rows.src[0], a view of ssm_states_all  buffer cache (whole)
//	ids     rows.src[1], s_copy_main               buffer ids
//	window  store.src[1], rows [kv_head, +n_seqs)  buffer state_dst; rs_head = offs / row bytes;
//	        (K slots: nb[2] apart)                 K = op_params[0], ss = nb[2] / 4
//	q..beta gdn.src[0..4]                          buffers q, k, v, g, beta; strides nb/4
//	                                               buffer dst = gdn (the attention)
//	                                               buffer scratch = gdn's state region
//
// # The conv: op D at the SSM_CONV's place
//
//	role    node                                   becomes
//	rows    GET_ROWS(cache, ids)                   skipped
//	taps    RESHAPE(rows) [d_conv-1, C, n_seqs]    skipped
//	xt      TRANSPOSE(x), x = qkv [C, T, n_seqs]   skipped: the kernel reads x_cur = x
//	input   CONCAT(taps, xt)                       skipped; buffer scratch (its memory)
//	last    VIEW(input), slot i's d_conv-1 taps    skipped (a Slot node: one per slot i,
//	        from token offset T-i                  K of them; K = their count)
//	store   CPY(last, window)                      skipped: the kernel wrote window (Slot)
//	conv    SSM_CONV(input, kernel)                gather + op D with slots (ops.ConvSlotsOp)
//	silu    SILU(conv), optional                   fused: SILU = 1, dst = silu
//	cache, ids, window                             as for the state; rows of (d_conv-1)*C;
//	        (a Slot node: slot i's rows)           ss = slot 1's offset past slot 0's / 4
//
// Where an ADD of a bias sits between SSM_CONV and SILU, SILU is 0, dst is
// the SSM_CONV's and the ADD and SILU run as they are.
//
// The fused kernels keep ops B and D's semantics (ops/doc.go): sequence s
// reads cache[ids[s]] as it was before the node (the gather copies the
// sources that are another sequence's destination into scratch), writes its
// new state into window row s, and a row outside the window is read in place
// and never written. That is what the graph computes: GET_ROWS reads every
// row before the CPY writes any.
//
// K > 1 (MTP/NextN): op B writes snapshot slot i of sequence s in place, at
// window row s plus i*ss (ss: the window's nb[2], mem_size rows), and op D
// with slots writes slot i's taps (the window after token T-1-i) i*ss past
// the window too (ss: slot 1's destination past slot 0's), so both stay
// fused (docs/fusion.md#snapshots). llama's ids name cells in [0,
// mem_size), so no gather reads a slot row.
package fusion
