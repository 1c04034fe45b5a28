package interp_test

import (
	"flag"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/emit/goref/rt"
	gen "github.com/kernelgen/kernelgen/generated/goref"
	"github.com/kernelgen/kernelgen/internal/tier"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ir/irtext"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/interp"
)

var (
	seed  = flag.Uint64("seed", 1, "random seed of the problems")
	count = flag.Int("cases", 1, "problems per op, contract and variant")
)

// runCase replays a case's launches through the interpreter, each kernel
// read back from its IR text, and returns the buffers it leaves.
func runCase(t *testing.T, c *cases.Case) map[string]*cases.Buffer {
	t.Helper()
	state := map[string]*cases.Buffer{}
	for _, b := range c.Buffers {
		state[b.Name] = b.Clone()
	}
	for _, l := range c.Launches {
		k, err := irtext.Parse(l.Kernel.ID()+".ir", ir.Print(l.Kernel))
		if err != nil {
			t.Fatal(err)
		}
		p, err := interp.Compile(k)
		if err != nil {
			t.Fatal(err)
		}
		bufs := map[string]any{}
		for i, kb := range k.Buffers {
			b := state[l.Bind[i]]
			if b.Elem == ir.I32 {
				bufs[kb.Name] = b.I32
			} else {
				bufs[kb.Name] = b.F32
			}
		}
		if err := p.Run(l.Params, l.Args, bufs); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
	}
	return state
}

// The interpreter computes what the generated Go reference computes, bit for
// bit, for every op and contract, and every variant in the full tier (two
// sampled per op and contract in the fast one), the native contracts
// included: both evaluate exp, dot4, native reductions and the vector
// operations the same documented way.
func TestInterpreterMatchesTheGoReference(t *testing.T) {
	for _, op := range ops.All() {
		for _, a := range op.Ariths() {
			t.Run(op.Name+"@"+a.String(), func(t *testing.T) {
				t.Parallel()
				h := fnv.New64a()
				h.Write([]byte(t.Name()))
				rng := rand.New(rand.NewPCG(*seed, h.Sum64()))
				variants := ops.VariantsOf(op.Name)
				n := 0
				for _, vi := range tier.Sample(t, len(variants), 2) {
					v := variants[vi]
					for i := 0; i < *count; i++ {
						c, err := cases.Random(op.Name, a, rng, cases.Small, &v)
						if err != nil {
							t.Fatal(err)
						}
						got := runCase(t, c)
						for _, want := range c.Expected {
							g := got[want.Name]
							for j := 0; j < want.Len(); j++ {
								var wb, gb uint32
								if want.Elem == ir.I32 {
									wb, gb = uint32(want.I32[j]), uint32(g.I32[j])
								} else {
									wb, gb = math.Float32bits(want.F32[j]), math.Float32bits(g.F32[j])
								}
								if wb != gb {
									t.Fatalf("%s: %s[%d] = 0x%08x, the Go reference has 0x%08x", c.Name, want.Name, j, gb, wb)
								}
							}
						}
						n++
					}
				}
				t.Logf("%d problems, every buffer equal to the Go reference's", n)
			})
		}
	}
}

// construct builds a one-workgroup-row kernel over in and out (32 threads,
// grid n) for the IR features the ops use only in part.
func construct(t *testing.T, body func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val)) *interp.Program {
	t.Helper()
	b := dsl.New("k", ir.Native("cuda"))
	n := b.Arg("n", ir.U32, "")
	in := b.Buffer("in", ir.F32, ir.Read, "src0", "")
	out := b.Buffer("out", ir.F32, ir.Write, "dst", "")
	b.Workgroup(32, 1, 1)
	b.Grid(n, 1, 1)
	body(b, in, out, n)
	k := b.MustBuild()
	k, err := irtext.Parse("k.ir", ir.Print(k))
	if err != nil {
		t.Fatal(err)
	}
	p, err := interp.Compile(k)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func runConstruct(t *testing.T, p *interp.Program, n uint32) ([]float32, []float32, error) {
	in := make([]float32, 64*32)
	for i := range in {
		in[i] = float32(i%61) - 20.5
	}
	out := make([]float32, 64*32)
	for i := range out {
		out[i] = -1
	}
	err := p.Run(nil, map[string]uint32{"n": n}, map[string]any{"in": in, "out": out})
	return in, out, err
}

// Constructs beyond the ops, against expectations written in plain Go:
// shared memory across a barrier, a reduction inside a loop, strided
// integer loops with branches, and conversions and shifts at their edges.
func TestConstructs(t *testing.T) {
	t.Run("shared_reversed", func(t *testing.T) {
		p := construct(t, func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
			tile := b.SharedArray("tile", ir.F32, 32)
			lane := b.Let("lane", b.LocalID(0))
			g := b.Let("g", b.GroupID(0))
			tile.Set(lane, in.Load(g.Mul(32).Add(lane)))
			b.Barrier()
			out.Store(g.Mul(32).Add(lane), tile.At(b.U32(31).Sub(lane)))
		})
		in, out, err := runConstruct(t, p, 3)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 96; i++ {
			if want := in[i/32*32+31-i%32]; out[i] != want {
				t.Fatalf("out[%d] = %v, want %v", i, out[i], want)
			}
		}
	})
	t.Run("reduce_in_loop", func(t *testing.T) {
		p := construct(t, func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
			lane := b.Let("lane", b.LocalID(0))
			acc := b.Var("acc", b.F32(0))
			b.For("r", 0, 3, func(r dsl.Val) {
				s := b.Reduce("s", in.Load(r.Mul(32).Add(lane)), 8, ir.Butterfly)
				acc.Set(acc.Get().Mul(0.5).Add(s))
			})
			out.Store(b.GroupID(0).Mul(32).Add(lane), acc.Get())
		})
		in, out, err := runConstruct(t, p, 1)
		if err != nil {
			t.Fatal(err)
		}
		for l := 0; l < 32; l++ {
			acc := float32(0)
			for r := 0; r < 3; r++ {
				x := make([]float32, 8)
				copy(x, in[r*32+l/8*8:r*32+l/8*8+8])
				for off := 4; off > 0; off /= 2 {
					y := append([]float32(nil), x...)
					for j := range x {
						x[j] = y[j] + y[j^off]
					}
				}
				acc = float32(acc*0.5) + x[l%8]
			}
			if out[l] != acc {
				t.Fatalf("out[%d] = %v, want %v", l, out[l], acc)
			}
		}
	})
	t.Run("integer_edges", func(t *testing.T) {
		p := construct(t, func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
			lane := b.Let("lane", b.LocalID(0))
			signed := b.Let("signed", lane.I32().Sub(16))
			acc := b.Var("acc", b.F32(0))
			b.ForStep("j", lane, n, 32, func(j dsl.Val) {
				b.IfElse(j.Rem(3).Eq(0).OrElse(j.BitAnd(4).Ne(0)), func() { acc.Set(acc.Get().Add(in.Load(j))) },
					func() { acc.Set(acc.Get().Sub(in.Load(j))) })
			})
			wrap := b.Let("wrap", lane.Sub(40).Shr(3).BitOr(lane.Shl(31)))
			trunc := b.Let("trunc", in.Load(lane).Mul(float32(3.7)).I32().Shr(signed.BitAnd(7)))
			out.Store(lane, acc.Get().Add(wrap.F32()).Add(trunc.F32()).Add(signed.Div(3).Add(signed.Rem(5)).F32()))
		})
		in, out, err := runConstruct(t, p, 100)
		if err != nil {
			t.Fatal(err)
		}
		for l := uint32(0); l < 32; l++ {
			acc := float32(0)
			for j := l; j < 100; j += 32 {
				if j%3 == 0 || j&4 != 0 {
					acc += in[j]
				} else {
					acc -= in[j]
				}
			}
			signed := int32(l) - 16
			wrap := (l-40)>>3 | l<<31
			trunc := int32(float32(in[l]*float32(3.7))) >> (signed & 7)
			want := float32(float32(acc+float32(wrap))+float32(trunc)) + float32(signed/3+signed%5)
			if out[l] != want {
				t.Fatalf("out[%d] = %v, want %v", l, out[l], want)
			}
		}
	})
}

// The vector operations over every kind of span (private and shared arrays,
// buffers, overlapping source and destination) do what the Go reference's
// runtime does to the slices the Go reference passes it.
func TestVectorOperations(t *testing.T) {
	const threads = 8
	b := dsl.New("vec", ir.Native("cpu"))
	in := b.Buffer("in", ir.F32, ir.Read, "src0", "")
	out := b.Buffer("out", ir.F32, ir.ReadWrite, "dst", "")
	b.Workgroup(threads, 1, 1)
	b.Grid(1, 1, 1)
	lane := b.Let("lane", b.LocalID(0))
	row := b.Array("row", ir.F32, 8)
	tile := b.SharedArray("tile", ir.F32, 2*threads)
	b.Unrolled("i", 0, 8, func(i dsl.Val) { row.Set(i, in.Load(lane.Mul(8).Add(i))) })
	tile.Set(lane, in.Load(lane.Add(64)))
	tile.Set(lane.Add(threads), in.Load(lane.Add(64+threads)))
	b.Barrier()
	out.Store(lane, b.VecDot(row.From(1), in.From(lane.Mul(8).Add(100)), 7))
	out.Store(lane.Add(threads), b.VecDot(tile.From(lane), row.From(0), 8))
	b.VecSilu(out.From(lane.Mul(8).Add(16)), row.From(0), 8)
	b.VecSilu(row.From(1), row.From(0), 7)
	b.Unrolled("i", 0, 8, func(i dsl.Val) { out.Store(lane.Mul(8).Add(80).Add(i), row.At(i)) })
	b.VecSilu(row.From(0), in.From(lane.Mul(8).Add(200)), 8)
	b.Unrolled("i", 0, 8, func(i dsl.Val) { out.Store(lane.Mul(8).Add(144).Add(i), row.At(i)) })
	b.VecSilu(out.From(lane.Mul(9).Add(209)), out.From(lane.Mul(9).Add(208)), 8)
	k, err := irtext.Parse("vec.ir", ir.Print(b.MustBuild()))
	if err != nil {
		t.Fatal(err)
	}
	p, err := interp.Compile(k)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(*seed, 7))
	inBuf, outBuf := make([]float32, 512), make([]float32, 512)
	for i := range inBuf {
		inBuf[i] = rng.Float32()*16 - 8
		outBuf[i] = rng.Float32()*16 - 8
	}
	want := append([]float32(nil), outBuf...)
	if err := p.Run(nil, nil, map[string]any{"in": inBuf, "out": outBuf}); err != nil {
		t.Fatal(err)
	}
	// The Go reference: private arrays hold every thread's elements, one
	// thread after another.
	rowAll := make([]float32, threads*8)
	tileAll := make([]float32, 2*threads)
	for l := 0; l < threads; l++ {
		copy(rowAll[l*8:], inBuf[l*8:l*8+8])
		tileAll[l], tileAll[l+threads] = inBuf[64+l], inBuf[64+threads+l]
	}
	for l := 0; l < threads; l++ {
		row := rowAll[l*8 : l*8+8]
		want[l] = rt.VecDot(row[1:8], inBuf[l*8+100:l*8+107])
		want[l+threads] = rt.VecDot(tileAll[l:l+8], row)
		rt.VecSilu(want[l*8+16:l*8+24], row)
		rt.VecSilu(row[1:8], row[0:7])
		copy(want[l*8+80:], row)
		rt.VecSilu(row, inBuf[l*8+200:l*8+208])
		copy(want[l*8+144:], row)
		rt.VecSilu(want[l*9+209:l*9+217], want[l*9+208:l*9+216])
	}
	for i := range want {
		if math.Float32bits(outBuf[i]) != math.Float32bits(want[i]) {
			t.Fatalf("out[%d] = %v, want %v", i, outBuf[i], want[i])
		}
	}
}

// Faults the Go reference would panic on are errors, naming the kernel.
func TestFaultsAreErrors(t *testing.T) {
	p := construct(t, func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
		out.Store(b.LocalID(0).Mul(n), in.Load(b.LocalID(0)))
	})
	if _, _, err := runConstruct(t, p, 1000); err == nil || !strings.Contains(err.Error(), "index out of range") || !strings.Contains(err.Error(), "k@native-cuda") {
		t.Errorf("an out-of-range store: %v", err)
	}
	p = construct(t, func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
		out.Store(b.LocalID(0), b.LocalID(0).Div(n.Sub(1)).F32())
	})
	if _, _, err := runConstruct(t, p, 1); err == nil || !strings.Contains(err.Error(), "divide by zero") {
		t.Errorf("a division by zero: %v", err)
	}
	p = construct(t, func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
		out.Store(b.LocalID(0), b.VecDot(in.From(b.LocalID(0).Mul(n)), in.From(0), 4))
	})
	if _, _, err := runConstruct(t, p, 100); err == nil || !strings.Contains(err.Error(), "slice bounds out of range") {
		t.Errorf("a vec_dot past the end of its buffer: %v", err)
	}
	p = construct(t, func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
		b.ForStep("j", 0, 1, 0, func(j dsl.Val) {})
	})
	p.IterationLimit = 1e6
	if _, _, err := runConstruct(t, p, 1); err == nil || !strings.Contains(err.Error(), "loop iterations") {
		t.Errorf("a loop that never ends: %v", err)
	}
	p = construct(t, func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
		b.Assert(b.LocalID(0).Lt(n))
		out.Store(b.LocalID(0), in.Load(0))
	})
	if _, _, err := runConstruct(t, p, 4); err == nil || !strings.Contains(err.Error(), "assert local_id.x < n failed") {
		t.Errorf("a failed assert: %v", err)
	}
}

// BenchmarkGDN128 is the interpreter on the largest kernel shape the
// problems use (S_v 128); compare with BenchmarkGDN128Goref.
func BenchmarkGDN128(b *testing.B) {
	c, p := gdn128(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runOn(b, c, p)
	}
}

func gdn128(b *testing.B) (*cases.Case, *interp.Program) {
	v := ops.VariantsOf("gated_delta_net_inplace")[8]
	c, err := cases.Random("gated_delta_net_inplace", ir.Portable, rand.New(rand.NewPCG(1, 2)), cases.Small, &v)
	if err != nil {
		b.Fatal(err)
	}
	p, err := interp.Compile(c.Launches[0].Kernel)
	if err != nil {
		b.Fatal(err)
	}
	return c, p
}

func runOn(b *testing.B, c *cases.Case, p *interp.Program) {
	l := c.Launches[0]
	bufs := map[string]any{}
	for i, kb := range l.Kernel.Buffers {
		bufs[kb.Name] = c.Buffer(l.Bind[i]).Clone().F32
	}
	if err := p.Run(l.Params, l.Args, bufs); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkGDN128Goref(b *testing.B) {
	c, _ := gdn128(b)
	l := c.Launches[0]
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bufs := map[string]any{}
		for j, kb := range l.Kernel.Buffers {
			bufs[kb.Name] = c.Buffer(l.Bind[j]).Clone().F32
		}
		if err := gen.Run[l.Op.Name](c.Arith.String(), l.Params, l.Args, bufs); err != nil {
			b.Fatal(err)
		}
	}
}

// CheckRaces finds what the interpreter's schedule hides: a shared tile
// read across lanes with no barrier after the writes, a buffer element one
// thread writes and another reads in one barrier interval, threads or two
// workgroups writing different values to one element, and a reduction
// standing in for a barrier. With a barrier between, each thread on its own
// elements, or every thread writing the same value, none is reported.
func TestCheckRaces(t *testing.T) {
	for _, tc := range []struct {
		name string
		body func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val)
		race string // in the error; "" for none
	}{
		{"shared tile with a barrier", func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
			tile := b.SharedArray("tile", ir.F32, 32)
			lane := b.Let("lane", b.LocalID(0))
			tile.Set(lane, in.Load(b.GroupID(0).Mul(32).Add(lane)))
			b.Barrier()
			out.Store(b.GroupID(0).Mul(32).Add(lane), tile.At(b.U32(31).Sub(lane)))
		}, ""},
		{"shared tile without one", func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
			tile := b.SharedArray("tile", ir.F32, 32)
			lane := b.Let("lane", b.LocalID(0))
			tile.Set(lane, in.Load(b.GroupID(0).Mul(32).Add(lane)))
			out.Store(b.GroupID(0).Mul(32).Add(lane), tile.At(b.U32(31).Sub(lane)))
		}, "a data race on tile["},
		{"own elements read then written", func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
			i := b.Let("i", b.GroupID(0).Mul(32).Add(b.LocalID(0)))
			out.Store(i, out.Load(i).Add(1))
		}, ""},
		{"a neighbour's element, reduction between", func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
			i := b.Let("i", b.GroupID(0).Mul(32).Add(b.LocalID(0)))
			x := b.Let("x", out.Load(b.GroupID(0).Mul(32).Add(b.LocalID(0).Add(1).Rem(32))))
			s := b.Reduce("s", x, 32, ir.Butterfly)
			out.Store(i, s)
		}, "a data race on out["},
		{"a neighbour's element, barrier between", func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
			i := b.Let("i", b.GroupID(0).Mul(32).Add(b.LocalID(0)))
			x := b.Let("x", out.Load(b.GroupID(0).Mul(32).Add(b.LocalID(0).Add(1).Rem(32))))
			b.DeviceBarrier()
			out.Store(i, x)
		}, ""},
		{"a flag every thread sets to 1", func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
			flag := b.SharedArray("flag", ir.I32, 1)
			lane := b.Let("lane", b.LocalID(0))
			b.If(lane.Eq(0), func() { flag.Set(0, b.I32(0)) })
			b.Barrier()
			flag.Set(0, b.I32(1))
			b.Barrier()
			out.Store(b.GroupID(0).Mul(32).Add(lane), flag.At(0).F32())
		}, ""},
		{"threads writing different values to one element", func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
			out.Store(b.GroupID(0).Mul(32), b.LocalID(0).F32())
		}, "a data race on out["},
		{"two workgroups, one element", func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
			b.If(b.LocalID(0).Eq(0), func() { out.Store(0, b.GroupID(0).F32()) })
		}, "a data race on out[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := dsl.New("k", ir.Native("cuda"))
			n := b.Arg("n", ir.U32, "")
			in := b.Buffer("in", ir.F32, ir.Read, "src0", "")
			out := b.Buffer("out", ir.F32, ir.ReadWrite, "dst", "") // read back, unlike construct's
			b.Workgroup(32, 1, 1)
			b.Grid(n, 1, 1)
			tc.body(b, in, out, n)
			p, err := interp.Compile(b.MustBuild())
			if err != nil {
				t.Fatal(err)
			}
			p.CheckRaces = true
			_, _, err = runConstruct(t, p, 2)
			switch {
			case tc.race == "" && err != nil:
				t.Fatalf("reported %v", err)
			case tc.race != "" && (err == nil || !strings.Contains(err.Error(), tc.race)):
				t.Fatalf("got %v, want a race on %q", err, tc.race)
			}
		})
	}
}
