package fusion

// Tensor is a ggml tensor as a matcher sees it in a backend's graph: its op
// and srcs, its shape and byte strides, where a view points, and the two
// flags a fusion must respect (the buffer it lives in, output).
type Tensor struct {
	Name   string
	Op     string // ggml's op without GGML_OP_; "NONE" for a leaf
	Type   string // "f32", "f16", "i32"
	Ne     [4]int64
	Nb     [4]int64 // bytes
	Src    []*Tensor
	Params []int32 // op_params
	// ViewSrc and ViewOffs as ggml resolves them: the root tensor that
	// owns the memory (never itself a view) and the byte offset into it.
	ViewSrc  *Tensor
	ViewOffs int64
	// Buffer names the backend buffer holding the memory (a view's is its
	// root's): the scheduler places a node with it.
	Buffer string
	Output bool
}

// Graph is a backend's graph: its nodes in execution order. Leaves (the
// caches, ids, weights) are reached through srcs only, as in ggml_cgraph.
type Graph struct {
	Nodes []*Tensor
}

// Root is the tensor owning t's memory.
func (t *Tensor) Root() *Tensor {
	if t.ViewSrc != nil {
		return t.ViewSrc
	}
	return t
}

// Elems is the element count.
func (t *Tensor) Elems() int64 { return t.Ne[0] * t.Ne[1] * t.Ne[2] * t.Ne[3] }

// Contiguous: rows packed, as ggml_is_contiguous.
func (t *Tensor) Contiguous() bool {
	want := int64(4)
	for i := 0; i < 4; i++ {
		if t.Ne[i] != 1 && t.Nb[i] != want {
			return false
		}
		want *= t.Ne[i]
	}
	return true
}

// Bytes is the half-open byte range [lo, hi) of the root t touches; empty
// (lo == hi) for a tensor without elements.
func (t *Tensor) Bytes() (lo, hi int64) {
	if t.Elems() == 0 {
		return t.ViewOffs, t.ViewOffs
	}
	hi = t.ViewOffs + 4
	for i := 0; i < 4; i++ {
		hi += (t.Ne[i] - 1) * t.Nb[i]
	}
	return t.ViewOffs, hi
}

// IsView: the node computes nothing (ggml's views and reshapes).
func (t *Tensor) IsView() bool {
	switch t.Op {
	case "VIEW", "RESHAPE", "TRANSPOSE", "PERMUTE":
		return true
	}
	return false
}

// Readers are the nodes of g with t among their srcs.
func (g *Graph) Readers(t *Tensor) []*Tensor {
	var out []*Tensor
	for _, n := range g.Nodes {
		for _, s := range n.Src {
			if s == t {
				out = append(out, n)
				break
			}
		}
	}
	return out
}

// Index is t's position in g, -1 when t is not a node.
func (g *Graph) Index(t *Tensor) int {
	for i, n := range g.Nodes {
		if n == t {
			return i
		}
	}
	return -1
}

// The constructors below build tensors as ggml's builders of the same names
// do (shapes, strides, views), appending each node to the graph.

func packed(ne [4]int64) [4]int64 {
	nb := [4]int64{4}
	for i := 1; i < 4; i++ {
		nb[i] = nb[i-1] * ne[i-1]
	}
	return nb
}

func shape(ne ...int64) [4]int64 {
	out := [4]int64{1, 1, 1, 1}
	copy(out[:], ne)
	return out
}

// Leaf is a tensor of no op (a cache, an input, a weight) in buffer.
func Leaf(name, typ, buffer string, ne ...int64) *Tensor {
	s := shape(ne...)
	return &Tensor{Name: name, Op: "NONE", Type: typ, Ne: s, Nb: packed(s), Buffer: buffer}
}

// Compute appends a node of op over srcs with a fresh f32 result.
func (g *Graph) Compute(name, op string, ne []int64, srcs ...*Tensor) *Tensor {
	s := shape(ne...)
	t := &Tensor{Name: name, Op: op, Type: "f32", Ne: s, Nb: packed(s), Src: srcs, Buffer: "compute"}
	g.Nodes = append(g.Nodes, t)
	return t
}

func (g *Graph) view(name, op string, a *Tensor, ne, nb [4]int64, offs int64) *Tensor {
	r := a.Root()
	t := &Tensor{Name: name, Op: op, Type: a.Type, Ne: ne, Nb: nb, Src: []*Tensor{a}, ViewSrc: r, ViewOffs: a.ViewOffs + offs, Buffer: r.Buffer}
	g.Nodes = append(g.Nodes, t)
	return t
}

// View is ggml_view_Nd: ne, the byte strides nb[1..] and a byte offset into a.
func (g *Graph) View(name string, a *Tensor, ne []int64, nb []int64, offs int64) *Tensor {
	s := shape(ne...)
	b := packed(s)
	copy(b[1:], nb)
	return g.view(name, "VIEW", a, s, b, offs)
}

// Reshape is ggml_reshape_Nd of a contiguous a.
func (g *Graph) Reshape(name string, a *Tensor, ne ...int64) *Tensor {
	s := shape(ne...)
	return g.view(name, "RESHAPE", a, s, packed(s), 0)
}

// Transpose is ggml_transpose: dims 0 and 1 swapped.
func (g *Graph) Transpose(name string, a *Tensor) *Tensor {
	ne, nb := a.Ne, a.Nb
	ne[0], ne[1] = ne[1], ne[0]
	nb[0], nb[1] = nb[1], nb[0]
	return g.view(name, "TRANSPOSE", a, ne, nb, 0)
}

// GetRows is ggml_get_rows of a 2-D a by a 1-D ids: [a.ne0, len(ids)].
func (g *Graph) GetRows(name string, a, ids *Tensor) *Tensor {
	return g.Compute(name, "GET_ROWS", []int64{a.Ne[0], ids.Ne[0]}, a, ids)
}

// Cpy is ggml_cpy: a written into b; the node is a view of b.
func (g *Graph) Cpy(name string, a, b *Tensor) *Tensor {
	r := b.Root()
	t := &Tensor{Name: name, Op: "CPY", Type: b.Type, Ne: b.Ne, Nb: b.Nb, Src: []*Tensor{a, b}, ViewSrc: r, ViewOffs: b.ViewOffs, Buffer: r.Buffer}
	g.Nodes = append(g.Nodes, t)
	return t
}

// Concat is ggml_concat along dim 0.
func (g *Graph) Concat(name string, a, b *Tensor) *Tensor {
	return g.Compute(name, "CONCAT", []int64{a.Ne[0] + b.Ne[0], a.Ne[1], a.Ne[2], a.Ne[3]}, a, b)
}

// SsmConv is ggml_ssm_conv(sx [d_conv-1+T, C, n_s], c [d_conv, C]): [C, T, n_s].
func (g *Graph) SsmConv(name string, sx, c *Tensor) *Tensor {
	return g.Compute(name, "SSM_CONV", []int64{c.Ne[1], sx.Ne[0] - c.Ne[0] + 1, sx.Ne[2]}, sx, c)
}

// GatedDeltaNet is ggml_gated_delta_net(q, k, v, g, beta, state, K):
// [S_v*H, T*n_seqs + K*S_v*n_seqs], attention then K state slots.
func (g *Graph) GatedDeltaNet(name string, q, k, v, gate, beta, state *Tensor, K int) *Tensor {
	sv, h, tok, n := v.Ne[0], v.Ne[1], v.Ne[2], v.Ne[3]
	t := g.Compute(name, "GATED_DELTA_NET", []int64{sv * h, tok*n + int64(K)*sv*n}, q, k, v, gate, beta, state)
	t.Params = []int32{int32(K)}
	return t
}

// ScaleInplace is ggml_scale_inplace(a, s): the node is a view of a.
func (g *Graph) ScaleInplace(name string, a *Tensor, s float32) *Tensor {
	t := g.view(name, "SCALE", a, a.Ne, a.Nb, 0)
	t.Src = []*Tensor{a}
	t.Params = []int32{int32(s)}
	return t
}
