package fusion

// Layer is one GDN layer's decode step as llama.cpp builds it
// (src/models/delta-net-base.cpp's build_conv_state and
// build_recurrent_attn over llm_graph_context::build_rs): the shape, the
// cache's place and the ubatch's ids. It builds the graph the matcher
// reads and the tests run.
type Layer struct {
	SV, H, HK  int  // value head size, value heads, q/k heads (GQA: HK < H)
	KDA        bool // a gate per key row
	Seqs, T    int  // sequences, tokens per sequence
	K          int  // snapshot slots (1: none; MTP/NextN rollback keeps K)
	DConv, C   int  // conv width and channels
	MemSize    int  // cache rows of one slot (llama's mem_size)
	KVHead     int  // first destination row (rs_head)
	Bias       bool // the conv's ADD of a bias (some models)
	Extra      int  // build_rs's extra states: rows [KVHead+Seqs, KVHead+Seqs+Extra) copied in between
	RowZero    int  // the row build_rs zeroes before the read, -1 none
	CacheBuf   string
	StateCache string // buffer of ssm_states_all when it differs from CacheBuf
}

// Built is the graph of a Layer with the tensors a test reads by name.
type Built struct {
	G                          *Graph
	StateCache, ConvCache, Ids *Tensor
	Attn, ConvOut              *Tensor // what the layer's later nodes read
	Inputs                     []*Tensor
}

// Build makes the graph in llama.cpp's order: the conv state read (build_rs)
// and its chain, projections in between, the state read, GDN and its copy.
func (l Layer) Build() *Built {
	g := &Graph{}
	buf := l.CacheBuf
	if buf == "" {
		buf = "cache"
	}
	sbuf := l.StateCache
	if sbuf == "" {
		sbuf = buf
	}
	k := max(l.K, 1)
	D := int64(l.SV * l.SV * l.H)
	row := int64((l.DConv - 1) * l.C)
	mem, n, T := int64(l.MemSize), int64(l.Seqs), int64(l.T)
	b := &Built{G: g}
	b.StateCache = Leaf("ssm_states_all", "f32", sbuf, D*mem*int64(k))
	b.ConvCache = Leaf("conv_states_all", "f32", buf, row*mem*int64(k))
	b.Ids = Leaf("s_copy_main", "i32", "input", n)
	extraIds := Leaf("s_copy_extra", "i32", "input", int64(l.Extra))
	qkv := Leaf("qkv_mixed", "f32", "compute", int64(l.C), T, n)
	kernel := Leaf("conv_kernel", "f32", "weights", int64(l.DConv), int64(l.C))
	b.Inputs = []*Tensor{qkv, kernel}

	rs := func(cache *Tensor, rowLen int64, tag string) *Tensor {
		states := g.Reshape(tag+"_states", cache, rowLen, mem*int64(k))
		if l.RowZero >= 0 {
			z := g.View(tag+"_zero", states, []int64{rowLen}, nil, int64(l.RowZero)*rowLen*4)
			g.ScaleInplace(tag+"_zeroed", z, 0)
		}
		out := g.GetRows(tag+"_rows", states, b.Ids)
		extra := g.GetRows(tag+"_extra", states, extraIds)
		g.Cpy(tag+"_extra_cpy", extra, g.View(tag+"_extra_dst", cache, []int64{rowLen * int64(l.Extra)}, nil, (int64(l.KVHead)+n)*rowLen*4))
		return out
	}

	// conv (build_conv_state)
	taps := g.Reshape("conv_taps", rs(b.ConvCache, row, "conv"), int64(l.DConv-1), int64(l.C), n)
	g.Compute("proj_z", "MUL_MAT", []int64{int64(l.C), T, n}) // projections between read and use
	ci := g.Concat("conv_input", taps, g.Transpose("qkv_t", qkv))
	for i := 0; i < k; i++ {
		last := g.View("conv_last", ci, []int64{int64(l.DConv - 1), int64(l.C), n}, []int64{ci.Nb[1], ci.Nb[2]}, (T-int64(i))*4)
		dst := g.View("conv_dst", b.ConvCache, []int64{row * n}, nil, (int64(l.KVHead)+int64(i)*mem)*row*4)
		g.Cpy("conv_cpy", last, dst)
	}
	y := g.SsmConv("conv_out", ci, kernel)
	if l.Bias {
		bias := Leaf("conv_bias", "f32", "weights", int64(l.C))
		b.Inputs = append(b.Inputs, bias)
		y = g.Compute("conv_bias_add", "ADD", y.Ne[:3], y, bias)
	}
	b.ConvOut = g.Compute("conv_silu", "SILU", y.Ne[:3], y)

	// state (build_recurrent_attn)
	sv, h, hk := int64(l.SV), int64(l.H), int64(l.HK)
	gd := int64(1)
	if l.KDA {
		gd = sv
	}
	q := g.Compute("q", "L2_NORM", []int64{sv, hk, T, n}, b.ConvOut)
	kk := g.Compute("k", "L2_NORM", []int64{sv, hk, T, n}, b.ConvOut)
	v := g.Compute("v", "CONT", []int64{sv, h, T, n}, b.ConvOut)
	gate := g.Compute("gate", "MUL", []int64{gd, h, T, n})
	beta := g.Compute("beta", "SIGMOID", []int64{1, h, T, n})
	s := g.Reshape("state_prior", rs(b.StateCache, D, "state"), sv, sv, h, n)
	out := g.GatedDeltaNet("gdn", q, kk, v, gate, beta, s, k)
	attnElems := sv * h * T * n
	b.Attn = g.View("attn", out, []int64{sv, h, T, n}, []int64{sv * 4, sv * h * 4, sv * h * T * 4}, 0)
	// the newest min(T, K) slots are written and copied (slot 0 newest)
	written := min(T, int64(k))
	ns := g.View("state_new", out, []int64{D, n, written}, []int64{D * 4, D * n * 4}, attnElems*4)
	dst := g.View("state_dst", b.StateCache, []int64{D, n, written}, []int64{D * 4, D * mem * 4}, int64(l.KVHead)*D*4)
	g.Cpy("state_cpy", ns, dst)
	g.Compute("o_norm", "RMS_NORM", []int64{sv, h, T, n}, b.Attn)
	return b
}
