// Package cases builds random problems for every op as backend-neutral data:
// named buffers, the kernel launches of the op (gather, then compute, for the
// ids variants) with their params, args and bindings, and the buffers the Go
// reference leaves behind. Every runner (host emulation, lavapipe, a GPU)
// replays the launches on its backend and compares with Expected.
package cases

import (
	"fmt"
	"math"
	"math/rand/v2"

	gen "github.com/kernelgen/kernelgen/generated/goref"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// Buffer is one named buffer: F32 or I32 data.
type Buffer struct {
	Name string
	Elem ir.Type
	F32  []float32
	I32  []int32
}

// Len is the element count.
func (b *Buffer) Len() int {
	if b.Elem == ir.I32 {
		return len(b.I32)
	}
	return len(b.F32)
}

// Bytes is the little-endian content.
func (b *Buffer) Bytes() []byte {
	out := make([]byte, 4*b.Len())
	for i := 0; i < b.Len(); i++ {
		var u uint32
		if b.Elem == ir.I32 {
			u = uint32(b.I32[i])
		} else {
			u = math.Float32bits(b.F32[i])
		}
		out[4*i], out[4*i+1], out[4*i+2], out[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
	return out
}

// Clone copies the buffer.
func (b *Buffer) Clone() *Buffer {
	return &Buffer{Name: b.Name, Elem: b.Elem, F32: append([]float32(nil), b.F32...), I32: append([]int32(nil), b.I32...)}
}

// Launch is one kernel dispatch of an op.
type Launch struct {
	Op        *ops.Op
	Kernel    *ir.Kernel
	Params    map[string]int64
	Args      map[string]uint32
	Bind      []string // case buffer bound to each kernel buffer, in the kernel's order
	Grid      [3]uint32
	Workgroup [3]uint32
}

// Case is one problem.
type Case struct {
	Name     string
	Op       string
	Arith    ir.Arith
	Variant  ops.Variant
	Buffers  []*Buffer // initial contents
	Launches []Launch
	Expected []*Buffer // after the Go reference ran the launches
}

// Buffer returns the named initial buffer.
func (c *Case) Buffer(name string) *Buffer {
	for _, b := range c.Buffers {
		if b.Name == name {
			return b
		}
	}
	return nil
}

// Size bounds the random shapes (emulated and device runs want smaller ones).
type Size struct {
	MaxHeads, MaxTokens, MaxSeqs, MaxChannels int
	// ChannelMultiple, when set, makes channel counts multiples of it
	// (ggml-cuda's kernels require multiples of 128).
	ChannelMultiple int
	// WindowIds, when set, makes half of op B's batched cases draw the
	// chained schedule's ids: whole cycles and paths through the window.
	// (Off, the cases, and every case drawn after them from one stream,
	// stay as they were.)
	WindowIds bool
}

// channels draws a channel count.
func (b *builder) channels() int {
	if m := b.sz.ChannelMultiple; m > 0 {
		return m * (1 + b.r.IntN(max(1, b.sz.MaxChannels/m)))
	}
	return 1 + b.r.IntN(b.sz.MaxChannels)
}

// Small suits host emulation and lavapipe.
var Small = Size{MaxHeads: 2, MaxTokens: 3, MaxSeqs: 3, MaxChannels: 200}

// sentinel marks memory no kernel may write: a NaN payload arithmetic never makes.
var sentinel = math.Float32frombits(0x7FA5A5A5)

type builder struct {
	r    *rand.Rand
	c    *Case
	sz   Size
	vals map[string]int64
}

func (b *builder) f32(name string, n int, lo, hi float32, special bool) *Buffer {
	buf := &Buffer{Name: name, Elem: ir.F32, F32: make([]float32, n)}
	for i := range buf.F32 {
		buf.F32[i] = lo + (hi-lo)*b.r.Float32()
		if special {
			switch b.r.IntN(50) {
			case 0:
				buf.F32[i] = float32(math.Copysign(0, -1))
			case 1:
				buf.F32[i] = math.Float32frombits(uint32(1 + b.r.IntN(1<<23-1)))
			}
		}
	}
	b.c.Buffers = append(b.c.Buffers, buf)
	return buf
}

// convEdges drive a conv output to SiLU's ends (docs/ops.md#fused-ops): sums whose
// e^-y overflows (-0), whose denominator leaves DivPortable's domain, and
// that overflow to an infinity. They are finite so that no input makes a
// NaN, whose payload the hardware picks: portable results stay comparable
// bit for bit on every device.
var convEdges = []float32{math.MaxFloat32, -math.MaxFloat32, 1e38, -1e38, 100, -100, -88.5, 89}

// withEdges puts an edge value in about one element of 20 of buf.
func (b *builder) withEdges(buf *Buffer) *Buffer {
	for i := range buf.F32 {
		if b.r.IntN(20) == 0 {
			buf.F32[i] = convEdges[b.r.IntN(len(convEdges))]
		}
	}
	return buf
}

func (b *builder) untouched(name string, n int) *Buffer {
	buf := &Buffer{Name: name, Elem: ir.F32, F32: make([]float32, n)}
	for i := range buf.F32 {
		buf.F32[i] = sentinel
	}
	b.c.Buffers = append(b.c.Buffers, buf)
	return buf
}

func (b *builder) ids(name string, n, slots, rsHead int) *Buffer {
	buf := &Buffer{Name: name, Elem: ir.I32, I32: make([]int32, n)}
	for s := range buf.I32 {
		switch x := b.r.IntN(3); {
		case x == 0:
			buf.I32[s] = int32(rsHead + s)
		case x == 1 || n == 1:
			buf.I32[s] = int32(b.r.IntN(slots))
		default:
			o := b.r.IntN(n - 1)
			if o >= s {
				o++
			}
			buf.I32[s] = int32(rsHead + o)
		}
	}
	b.c.Buffers = append(b.c.Buffers, buf)
	return buf
}

// plan adds a chain plan of n sequences holding what the chain gather
// writes where nothing aliases (2: every sequence a segment of one, no
// copy), so that a case run without its gather (TestGuardedLaunchesChangeNothing)
// computes wrong values instead of walking garbage.
func (b *builder) plan(n int) *Buffer {
	buf := &Buffer{Name: "plan", Elem: ir.I32, I32: make([]int32, n)}
	for i := range buf.I32 {
		buf.I32[i] = 2
	}
	b.c.Buffers = append(b.c.Buffers, buf)
	return buf
}

// chainIds draws ids the chained schedule must get right: the window
// permuted (cycles), rotated (one cycle), paths into rows outside it,
// rows several sequences read, or b.ids' mixture.
func (b *builder) chainIds(name string, n, slots, rsHead int) *Buffer {
	r := b.r
	buf := &Buffer{Name: name, Elem: ir.I32, I32: make([]int32, n)}
	perm := r.Perm(n)
	rot := r.IntN(n)
	for s := range buf.I32 {
		switch pattern := r.IntN(5); pattern {
		case 0:
			buf.I32[s] = int32(rsHead + perm[s])
		case 1:
			buf.I32[s] = int32(rsHead + (s+rot)%n)
		case 2:
			buf.I32[s] = int32(rsHead + (s+1)%n) // a path or a ring of successors
		case 3:
			buf.I32[s] = int32(rsHead + r.IntN(min(n, 3))) // rows several read
		default:
			buf.I32[s] = int32(r.IntN(slots))
		}
	}
	// Half the cases take one pattern for every sequence, where whole
	// cycles and long paths form.
	if r.IntN(2) == 0 {
		pattern := r.IntN(3)
		for s := range buf.I32 {
			switch pattern {
			case 0:
				buf.I32[s] = int32(rsHead + perm[s])
			case 1:
				buf.I32[s] = int32(rsHead + (s+rot)%n)
			default:
				buf.I32[s] = int32(rsHead + (s+1)%n)
			}
		}
	}
	b.c.Buffers = append(b.c.Buffers, buf)
	return buf
}

// launch adds a dispatch of op's kernel with the given args and bindings.
func (b *builder) launch(opName string, args map[string]int64, bind map[string]string) error {
	op, err := ops.Lookup(opName)
	if err != nil {
		return err
	}
	k, err := op.Kernel(b.c.Arith)
	if err != nil {
		return err
	}
	l := Launch{Op: op, Kernel: k, Params: map[string]int64{}, Args: map[string]uint32{}}
	vals := map[string]int64{}
	for _, p := range k.Params {
		if p.Derived == nil {
			v, ok := b.vals[p.Name]
			if !ok {
				return fmt.Errorf("%s: param %s has no value", k.ID(), p.Name)
			}
			l.Params[p.Name] = v
			vals[p.Name] = v
		}
	}
	for _, a := range k.Args {
		v, ok := args[a.Name]
		if !ok {
			return fmt.Errorf("%s: arg %s has no value", k.ID(), a.Name)
		}
		if a.Type == ir.F32 {
			l.Args[a.Name] = math.Float32bits(float32(math.Float64frombits(uint64(v))))
		} else {
			l.Args[a.Name] = uint32(v)
		}
		vals[a.Name] = v
	}
	for _, kb := range k.Buffers {
		name, ok := bind[kb.Name]
		if !ok {
			name = kb.Name
		}
		if b.c.Buffer(name) == nil {
			return fmt.Errorf("%s: buffer %s is bound to %s, which the case lacks", k.ID(), kb.Name, name)
		}
		l.Bind = append(l.Bind, name)
	}
	for d := 0; d < 3; d++ {
		g, ok1 := ir.EvalInt(k.Grid[d], vals)
		w, ok2 := ir.EvalInt(k.Workgroup[d], vals)
		if !ok1 || !ok2 {
			return fmt.Errorf("%s: launch geometry not computable", k.ID())
		}
		l.Grid[d], l.Workgroup[d] = uint32(g), uint32(w)
	}
	b.c.Launches = append(b.c.Launches, l)
	return nil
}

// f32arg encodes an f32 argument for launch.
func f32arg(x float32) int64 { return int64(math.Float64bits(float64(x))) }

// Random builds one case of op under contract a. variant picks from the
// variant table when nil.
func Random(opName string, a ir.Arith, r *rand.Rand, sz Size, variant *ops.Variant) (*Case, error) {
	c, err := RandomInputs(opName, a, r, sz, variant)
	if err != nil {
		return nil, err
	}
	return c, c.runReference()
}

// RandomInputs is Random without running the Go reference: the case's
// buffers and launches, no Expected. Comparing two revisions of a kernel
// (verify/diffexec) needs no reference. It draws what Random draws.
func RandomInputs(opName string, a ir.Arith, r *rand.Rand, sz Size, variant *ops.Variant) (*Case, error) {
	vs := ops.VariantsOf(opName)
	if len(vs) == 0 {
		return nil, fmt.Errorf("op %s has no variants", opName)
	}
	v := vs[r.IntN(len(vs))]
	if variant != nil {
		v = *variant
	}
	b := &builder{r: r, sz: sz, vals: v.Values, c: &Case{Op: opName, Arith: a, Variant: v}}
	var err error
	switch opName {
	case "gated_delta_net", "gated_delta_net_inplace", "gated_delta_net_inplace_ids", ops.SlotsOp, batchedOp, chainedOp, blocksOp:
		err = b.gdn(opName)
	case "ssm_conv":
		err = b.conv()
	case "ssm_conv_update_inplace", "ssm_conv_update_inplace_ids", ops.ConvSlotsOp, convBatchedOp, convChainedOp:
		err = b.convUpdate(opName)
	case ops.ChainGatherOp:
		err = b.planGather(opName, "seg", 9)
	case blockGatherOp:
		err = b.planGather(opName, "block_len", 40)
	case ops.GatherOp, ops.RowGatherOp:
		err = b.gather(opName)
	default:
		err = fmt.Errorf("no case generator for op %s", opName)
	}
	if err != nil {
		return nil, err
	}
	b.c.Name = fmt.Sprintf("%s@%s[%s]", opName, a, v)
	return b.c, nil
}

// runReference replays the launches on the Go reference.
func (c *Case) runReference() error {
	state := map[string]*Buffer{}
	for _, b := range c.Buffers {
		cl := b.Clone()
		state[b.Name] = cl
		c.Expected = append(c.Expected, cl)
	}
	for _, l := range c.Launches {
		bufs := map[string]any{}
		for i, kb := range l.Kernel.Buffers {
			b := state[l.Bind[i]]
			if b.Elem == ir.I32 {
				bufs[kb.Name] = b.I32
			} else {
				bufs[kb.Name] = b.F32
			}
		}
		run, ok := gen.Run[l.Op.Name]
		if !ok {
			return fmt.Errorf("the Go reference has no op %s", l.Op.Name)
		}
		if err := run(c.Arith.String(), l.Params, l.Args, bufs); err != nil {
			return fmt.Errorf("%s: %v", c.Name, err)
		}
	}
	return nil
}
