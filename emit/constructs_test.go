package emit_test

import (
	"bytes"
	"flag"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/emit/glsl"
	"github.com/kernelgen/kernelgen/emit/goref"
	"github.com/kernelgen/kernelgen/emit/goref/rt"
	"github.com/kernelgen/kernelgen/emit/msl"
	"github.com/kernelgen/kernelgen/emit/opencl"
	"github.com/kernelgen/kernelgen/emit/sycl"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

var update = flag.Bool("update", false, "rewrite testdata/constructs/*.txtar")

// construct is one IR feature in a kernel small enough to read in all languages.
type construct struct {
	name  string
	arith ir.Arith
	body  func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val)
	// params are the values of the params body declares: the one variant
	// the MSL instantiation and the GLSL defines are built for.
	params map[string]int64
	// expect is what the construct writes to out, written independently
	// of the emitters in plain Go (run_test.go), given in and n.
	expect func(in []float32, n uint32, out []float32)
}

var constructs = []construct{
	{"fma_portable", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
		i := b.Let("i", b.GroupID(0).Mul(32).Add(b.LocalID(0)))
		x := b.Let("x", in.Load(i))
		// a*b + c written out: two roundings, no contraction; then one fused operation.
		two := b.Let("two", x.Mul(x).Add(1.0))
		out.Store(i, b.FMA(x, two, x.Neg()))
	}, nil, func(in []float32, n uint32, out []float32) {
		for i := 0; i < int(n)*32; i++ {
			x := in[i]
			out[i] = rt.FMA(x, float32(x*x)+1, -x) // float32(): Go may not fuse it
		}
	}},
	{"muladd_native", ir.Native("cuda"), func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
		i := b.Let("i", b.GroupID(0).Mul(32).Add(b.LocalID(0)))
		x := b.Let("x", in.Load(i))
		out.Store(i, x.Mul(x).Add(b.ExpNative(x.Neg())))
	}, nil, func(in []float32, n uint32, out []float32) {
		for i := 0; i < int(n)*32; i++ {
			x := in[i]
			out[i] = float32(x*x) + float32(math.Exp(float64(-x)))
		}
	}},
	{"reduce_butterfly", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
		lane := b.Let("lane", b.LocalID(0))
		s := b.Reduce("sum", in.Load(lane), 32, ir.Butterfly)
		b.If(lane.Eq(0), func() { out.Store(b.GroupID(0), s) })
	}, nil, func(in []float32, n uint32, out []float32) {
		x := slices.Clone(in[:32])
		for off := 16; off > 0; off /= 2 {
			next := slices.Clone(x)
			for l := range x {
				next[l] = x[l] + x[l^off]
			}
			x = next
		}
		for g := 0; g < int(n); g++ {
			out[g] = x[0]
		}
	}},
	{"reduce_native", ir.Native("metal"), func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
		lane := b.Let("lane", b.LocalID(0))
		s := b.Reduce("sum", in.Load(lane), 32, ir.NativeOrder)
		b.If(lane.Eq(0), func() { out.Store(b.GroupID(0), s) })
	}, nil, func(in []float32, n uint32, out []float32) {
		sum := float32(0)
		for _, x := range in[:32] {
			sum += x
		}
		for g := 0; g < int(n); g++ {
			out[g] = sum
		}
	}},
	{"shared_barrier", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
		tile := b.SharedArray("tile", ir.F32, 32)
		lane := b.Let("lane", b.LocalID(0))
		tile.Set(lane, in.Load(lane))
		b.Barrier()
		out.Store(lane, tile.At(b.U32(31).Sub(lane)))
	}, nil, func(in []float32, n uint32, out []float32) {
		for l := 0; l < 32; l++ {
			out[l] = in[31-l]
		}
	}},
	{"unrolled_registers", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
		regs := b.Array("regs", ir.F32, 4)
		lane := b.Let("lane", b.LocalID(0))
		b.Unrolled("r", 0, 4, func(r dsl.Val) { regs.Set(r, in.Load(r.Mul(32).Add(lane))) })
		acc := b.Var("acc", b.F32(0))
		b.Unrolled("r", 0, 4, func(r dsl.Val) { acc.Set(b.FMA(regs.At(r), regs.At(r), acc.Get())) })
		out.Store(lane, acc.Get())
	}, nil, func(in []float32, n uint32, out []float32) {
		for l := 0; l < 32; l++ {
			acc := float32(0)
			for r := 0; r < 4; r++ {
				acc = rt.FMA(in[r*32+l], in[r*32+l], acc)
			}
			out[l] = acc
		}
	}},
	{"bits_select_minmax", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
		lane := b.Let("lane", b.LocalID(0))
		x := b.Let("x", in.Load(lane))
		bits := b.Let("bits", x.Bitcast(ir.I32).Add(1))
		y := b.Let("y", b.Select(lane.Lt(n), bits.Bitcast(ir.F32), b.Max(x, 0.5)))
		out.Store(lane, b.Min(y, lane.F32()))
	}, nil, func(in []float32, n uint32, out []float32) {
		for l := 0; l < 32; l++ {
			x := in[l]
			y := x
			if 0.5 > x {
				y = 0.5
			}
			if uint32(l) < n {
				y = math.Float32frombits(math.Float32bits(x) + 1)
			}
			out[l] = y
			if float32(l) < y {
				out[l] = float32(l)
			}
		}
	}},
	// Locals named after each language's keywords and builtins: every
	// emitter renames its own clashes (name_) and keeps the rest.
	{"reserved_names", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
		lane := b.Let("threadIdx", b.LocalID(0))
		x := b.Let("kernel", in.Load(lane))
		y := b.Let("item", x.Add(x))
		z := b.Let("exp", y.Add(b.Let("template", x)))
		w := b.Let("gl_x", z.Add(b.Let("simd_x", x)))
		// range_ first: Go's rename of range must not take it.
		u := b.Let("range_", w)
		out.Store(lane, u.Add(b.Let("x__y", b.Let("range", x))))
	}, nil, func(in []float32, n uint32, out []float32) {
		for l := 0; l < 32; l++ {
			k := in[l]
			out[l] = k + k + k + k + k
		}
	}},
	// Loops, branches, mutable locals and the integer and logical
	// operators, which the op programs use only in part.
	{"integer_control_flow", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
		lane := b.Let("lane", b.LocalID(0))
		signed := b.Let("signed", lane.I32().Sub(16))
		acc := b.Var("acc", b.F32(0))
		b.Comment("a strided walk that is not unrolled")
		b.ForStep("j", lane, n, 32, func(j dsl.Val) {
			b.IfElse(j.Rem(3).Eq(0).OrElse(j.BitAnd(4).Ne(0).AndAlso(j.Lt(n).Not().Not())), func() {
				acc.Set(acc.Get().Add(in.Load(j)))
			}, func() {
				acc.Set(acc.Get().Sub(in.Load(j)))
			})
		})
		mixed := b.Let("mixed", lane.Shl(2).BitOr(lane.Shr(1)).Div(3))
		b.DeviceBarrier()
		out.Store(lane, acc.Get().Add(mixed.F32()).Add(signed.Shr(1).Add(signed.Rem(5)).F32()))
	}, nil, func(in []float32, n uint32, out []float32) {
		for l := uint32(0); l < 32; l++ {
			acc := float32(0)
			for j := l; j < n; j += 32 {
				if j%3 == 0 || j&4 != 0 && j < n {
					acc += in[j]
				} else {
					acc -= in[j]
				}
			}
			signed := int32(l) - 16
			mixed := (l<<2 | l>>1) / 3
			out[l] = acc + float32(mixed) + float32(signed>>1+signed%5)
		}
	}},
	// Compile-time params (template arguments, defines), a derived one and
	// a requirement on them.
	{"params_derived", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
		cols := b.Param("COLS", ir.U32, 2, 4)
		flip := b.Param("FLIP", ir.Bool)
		half := b.Derived("HALF", cols.Div(2))
		b.Require(cols.Rem(2).Eq(0), "COLS must be even")
		lane := b.Let("lane", b.LocalID(0))
		regs := b.Array("regs", ir.F32, cols)
		b.Unrolled("c", 0, cols, func(c dsl.Val) { regs.Set(c, in.Load(lane.Mul(cols).Add(c))) })
		x := b.Let("x", b.Select(flip, regs.At(half), regs.At(0)))
		out.Store(lane, x)
	}, map[string]int64{"COLS": 4, "FLIP": 1}, func(in []float32, n uint32, out []float32) {
		for l := 0; l < 32; l++ {
			out[l] = in[l*4+2] // COLS 4, FLIP: regs[HALF]
		}
	}},
	{"dispatch_dependency", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf, n dsl.Val) {
		b.DepRelease()
		lane := b.Let("lane", b.LocalID(0))
		x := b.Let("x", in.Load(lane))
		b.DepWait()
		out.Store(lane, x)
	}, nil, func(in []float32, n uint32, out []float32) {
		copy(out[:32], in[:32])
	}},
}

func build(t *testing.T, c construct) *ir.Kernel {
	t.Helper()
	b := dsl.New(c.name, c.arith)
	n := b.Arg("n", ir.U32, "elements")
	in := b.Buffer("in", ir.F32, ir.Read, "src0", "")
	out := b.Buffer("out", ir.F32, ir.Write, "dst", "")
	b.Workgroup(32, 1, 1)
	b.Grid(n, 1, 1)
	c.body(b, in, out, n)
	k, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// txtar renders named sections as a txtar archive.
func txtar(comment string, files [][2]string) []byte {
	var b bytes.Buffer
	b.WriteString(comment)
	for _, f := range files {
		b.WriteString("-- " + f[0] + " --\n")
		b.WriteString(f[1])
		if !strings.HasSuffix(f[1], "\n") {
			b.WriteString("\n")
		}
	}
	return b.Bytes()
}

// lowering is one construct in every language.
type lowering struct {
	k                                  *ir.Kernel
	cuda, glsl, msl, sycl, opencl, goS []byte
}

func lower(t *testing.T, c construct) lowering {
	t.Helper()
	l := lowering{k: build(t, c)}
	k := l.k
	var err error
	u := ir.Unit{Op: c.name, Summary: "construct", Kernels: []*ir.Kernel{k}, Instances: []ir.Instance{variant(c).Of(k)}, Contracts: []ir.Arith{c.arith}}
	if l.cuda, err = cuda.Emit(u); err != nil {
		t.Fatal(err)
	}
	if l.glsl, err = glsl.Emit(u); err != nil {
		t.Fatal(err)
	}
	if l.msl, err = msl.Emit(u); err != nil {
		t.Fatal(err)
	}
	if l.sycl, err = sycl.Emit(u); err != nil {
		t.Fatal(err)
	}
	if l.opencl, err = opencl.Emit(u); err != nil {
		t.Fatal(err)
	}
	if l.goS, err = goref.Emit(u); err != nil {
		t.Fatal(err)
	}
	return l
}

// variant is the one variant of a construct.
func variant(c construct) ops.Variant {
	v := ops.Variant{Op: c.name, Values: map[string]int64{}}
	for n, x := range c.params {
		v.Values[n] = x
	}
	return v
}

// goTypes type-checks Go lowerings, importing the runtime from source.
var goTypes = types.Config{Importer: importer.ForCompiler(token.NewFileSet(), "source", nil)}

func TestConstructGoldens(t *testing.T) {
	for _, c := range constructs {
		t.Run(c.name, func(t *testing.T) {
			l := lower(t, c)
			k, cu, gl, ms, sy, gr := l.k, l.cuda, l.glsl, l.msl, l.sycl, l.goS
			// The Go lowering type-checks (only the ops' is compiled, in
			// generated/goref): keywords renamed, no clashes.
			fset := token.NewFileSet()
			if f, err := parser.ParseFile(fset, c.name+".go", gr, 0); err != nil {
				t.Errorf("go lowering does not parse: %v", err)
			} else if _, err := goTypes.Check("goref", fset, []*ast.File{f}, nil); err != nil {
				t.Errorf("go lowering does not type-check: %v", err)
			}
			got := txtar("The IR construct "+c.name+" ("+c.arith.String()+") and its lowerings.\n", [][2]string{
				{"ir", ir.Print(k)}, {"cuda", string(cu)}, {"glsl", string(gl)}, {"msl", string(ms)},
				{"sycl", string(sy)}, {"opencl", string(l.opencl)}, {"go", string(gr)},
			})
			path := filepath.Join("testdata", "constructs", c.name+".txtar")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./emit -update)", err)
			}
			if d := cmp.Diff(string(want), string(got)); d != "" {
				t.Errorf("%s is stale (-golden +now); review, then go test ./emit -update:\n%s", path, d)
			}
		})
	}
}

// A bf16 buffer is in the IR (the Go reference reads and writes it) but no
// C-family emitter spells it yet: each must say so, naming itself, the kernel
// and the buffer, rather than print a float pointer.
func TestBF16Unsupported(t *testing.T) {
	b := dsl.New("bf16_state", ir.Portable)
	n := b.Arg("n", ir.U32, "elements")
	in := b.Buffer("in", ir.BF16, ir.Read, "src0", "")
	out := b.Buffer("out", ir.F32, ir.Write, "dst", "")
	b.Workgroup(32, 1, 1)
	b.Grid(n, 1, 1)
	lane := b.Let("lane", b.LocalID(0))
	out.Store(lane, in.Load(lane))
	k, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	u := ir.Unit{Op: k.Name, Summary: "bf16", Kernels: []*ir.Kernel{k}, Instances: []ir.Instance{variant(construct{name: k.Name}).Of(k)}, Contracts: []ir.Arith{ir.Portable}}
	for backend, emit := range map[string]func(ir.Unit) ([]byte, error){
		"cuda": cuda.Emit, "glsl": glsl.Emit, "msl": msl.Emit, "sycl": sycl.Emit, "opencl": opencl.Emit,
	} {
		src, err := emit(u)
		want := backend + ": " + k.ID() + ": bf16 buffer in is not supported yet"
		if err == nil || err.Error() != want || src != nil {
			t.Errorf("%s: got (%d bytes, %v), want no source and %q", backend, len(src), err, want)
		}
	}
	if _, err := goref.Emit(u); err != nil {
		t.Errorf("goref: %v (the reference must lower bf16 buffers)", err)
	}
}

// An assert (native-cpu kernels: an id must name a row of the cache) stops
// the Go reference with the condition, as GGML_ASSERT stops ggml-cpu.
func TestGoReferencePanicsOnAFailedAssert(t *testing.T) {
	b := dsl.New("checked", ir.Native("cpu"))
	rows := b.Arg("n_rows", ir.U32, "cache rows")
	ids := b.Buffer("ids", ir.I32, ir.Read, "src0", "")
	out := b.Buffer("out", ir.F32, ir.Write, "dst", "")
	b.Workgroup(1, 1, 1)
	b.Grid(1, 1, 1)
	src := b.Let("src", ids.Load(0))
	b.Assert(src.Lt(rows.I32()))
	out.Store(0, src.F32())
	k, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	u := ir.Unit{Op: k.Name, Summary: "assert", Kernels: []*ir.Kernel{k}, Instances: []ir.Instance{variant(construct{name: k.Name}).Of(k)}, Contracts: []ir.Arith{ir.Native("cpu")}}
	text, err := goref.Emit(u)
	if err != nil {
		t.Fatal(err)
	}
	if want := `panic("assert src < i32(n_rows) failed")`; !strings.Contains(string(text), want) {
		t.Errorf("the Go reference has no %s:\n%s", want, text)
	}
}
