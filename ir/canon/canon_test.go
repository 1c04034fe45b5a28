package canon_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ir/canon"
	"github.com/kernelgen/kernelgen/ir/irtext"
	"github.com/kernelgen/kernelgen/ops"
)

// conv is a small conv update in the shape of ops' op C (window of cached
// taps plus the current token, an fma chain against the weights, the window
// shifted back into the ring), with the edits a reviewer meets switched on
// by name.
func conv(t *testing.T, edits ...string) (*ir.Kernel, string) {
	t.Helper()
	on := func(e string) bool { return slices.Contains(edits, e) }
	threads := 128
	if on("tiling64") {
		threads = 64
	}
	b := dsl.New("conv", ir.Portable)
	dconv := b.Param("d_conv", ir.U32, 2, 3, 4)
	nCh := b.Arg("n_ch", ir.U32, "")
	cs1 := b.Arg("cs1", ir.U32, "")
	w1 := b.Arg("w1", ir.U32, "")
	sd1 := b.Arg("sd1", ir.U32, "")
	states := b.Buffer("states", ir.F32, ir.Read, "src0", "")
	if on("states_prior") {
		states.Prior()
	}
	wk := b.Buffer("weights", ir.F32, ir.Read, "src1", "")
	xCur := b.Buffer("x", ir.F32, ir.Read, "src2", "")
	ring := b.Buffer("ring", ir.F32, ir.Write, "src3", "")
	dst := b.Buffer("dst", ir.F32, ir.Write, "dst", "")
	if on("workgroup_only") {
		b.Workgroup(64, 1, 1)
	} else {
		b.Workgroup(threads, 1, 1)
	}
	b.Grid(nCh.Add(threads-1).Div(threads), 1, 1)
	b.DepWait() // what the previous dispatch wrote is ready (states_prior marks states so)
	cName := "c"
	if on("rename") {
		cName = "channel"
	}
	var c dsl.Val
	if on("commuted_index") {
		c = b.Let(cName, b.LocalID(0).Add(b.GroupID(0).Mul(threads)))
	} else {
		c = b.Let(cName, b.GroupID(0).Mul(threads).Add(b.LocalID(0)))
	}
	taps := b.Let("taps", dconv.Sub(1))
	b.If(c.Lt(nCh), func() {
		win := b.Array("window", ir.F32, dconv)
		if on("comment") {
			b.Comment("the window: cached taps, then the current token")
		}
		var ringOff, base dsl.Val
		lets := func() {
			ringOff = b.Let("ring_off", c.Mul(sd1))
			if on("load_index") {
				base = b.Let("base", c.Add(1).Mul(cs1))
			} else if !on("inline_base") {
				base = b.Let("base", c.Mul(cs1))
			}
		}
		if on("swap_lets") {
			if !on("inline_base") {
				base = b.Let("base", c.Mul(cs1))
			}
			ringOff = b.Let("ring_off", c.Mul(sd1))
		} else {
			lets()
		}
		b.Unrolled("j", 0, taps, func(j dsl.Val) {
			if on("inline_base") {
				win.Set(j, states.Load(j.Add(c.Mul(cs1))))
			} else {
				win.Set(j, states.Load(base.Add(j)))
			}
		})
		win.Set(taps, xCur.Load(c))
		start := float32(0)
		if on("constant") {
			start = 1
		}
		y := b.Var("y", b.F32(start))
		b.Unrolled("k", 0, dconv, func(k dsl.Val) {
			wi, ki := k, k
			switch {
			case on("newest_first"):
				wi = taps.Sub(k)
				ki = taps.Sub(k)
			case on("reverse_window"):
				wi = taps.Sub(k)
			}
			y.Set(b.FMA(win.At(wi), wk.Load(c.Mul(w1).Add(ki)), y.Get()))
		})
		if on("dead_value") {
			b.Let("unused", y.Get().Mul(2))
		}
		if on("exp") {
			y.Set(b.ExpPortable(y.Get()))
		}
		dst.Store(c, y.Get())
		b.Unrolled("j", 0, taps, func(j dsl.Val) {
			off := ringOff
			if on("ring_other_channel") {
				off = c.Add(1).Mul(sd1)
			}
			if on("ring_not_shifted") {
				ring.Store(off.Add(j), win.At(j))
			} else {
				ring.Store(off.Add(j), win.At(j.Add(1)))
			}
		})
	})
	k, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	// Read back from text, so that lines are the text's.
	text := ir.Print(k)
	k, err = irtext.Parse("conv.ir", text)
	if err != nil {
		t.Fatal(err)
	}
	return k, text
}

func form(t *testing.T, k *ir.Kernel) *canon.Form {
	t.Helper()
	f, err := canon.Of(k)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestEditsAreClassified(t *testing.T) {
	base, baseText := conv(t)
	bf := form(t, base)
	cases := []struct {
		edit string
		want string
		// lines: the text the first differing statement of each side holds
		// for the first category ("" where none).
		lineA, lineB string
	}{
		{"rename", "names/layout only", "", ""},
		{"comment", "names/layout only", "", ""},
		{"swap_lets", "names/layout only", "", ""},
		{"inline_base", "names/layout only", "", ""},
		{"commuted_index", "names/layout only", "", ""},
		{"tiling64", "launch", "workgroup (128u", "workgroup (64u"},
		{"states_prior", "interface", "buffer states", "buffer states"},
		{"workgroup_only", "memory, control, launch", "let c: u32", "let c: u32"},
		{"ring_not_shifted", "memory", "store ring", "store ring"},
		{"ring_other_channel", "memory", "let ring_off", "store ring"},
		{"load_index", "memory", "let base", "let base"},
		{"newest_first", "arithmetic, memory", "y = fma", "y = fma"},
		{"reverse_window", "arithmetic, memory", "y = fma", "y = fma"},
		{"constant", "arithmetic", "var y: f32 = 0.0", "var y: f32 = 1.0"},
		{"exp", "arithmetic", "store dst", "exp_x"},
		{"dead_value", "arithmetic", "", "let unused"},
	}
	for _, c := range cases {
		k, text := conv(t, c.edit)
		f := form(t, k)
		ds := canon.Compare(bf, f)
		if got := canon.String(ds); got != c.want {
			t.Errorf("%s: %s, want %s", c.edit, got, c.want)
			continue
		}
		if (len(ds) == 0) != bf.Equal(f) {
			t.Errorf("%s: Equal disagrees with Compare", c.edit)
		}
		if len(ds) == 0 {
			continue
		}
		if got := lineText(baseText, ds[0].LineA); !strings.Contains(got, c.lineA) {
			t.Errorf("%s: first %s difference in a at %d %q, want %q", c.edit, ds[0].Category, ds[0].LineA, got, c.lineA)
		}
		if got := lineText(text, ds[0].LineB); !strings.Contains(got, c.lineB) {
			t.Errorf("%s: first %s difference in b at %d %q, want %q", c.edit, ds[0].Category, ds[0].LineB, got, c.lineB)
		}
	}
}

func lineText(text string, line int) string {
	ls := strings.Split(text, "\n")
	if line < 1 || line > len(ls) {
		return ""
	}
	return ls[line-1]
}

// accumulate sums in twice into two accumulators, declared and updated in
// the order asked, with a barrier and a load placed as asked.
func accumulate(t *testing.T, swapDecls, swapUpdates, loadAfterStore, barrierLate, noUnroll bool, order ir.Order) *ir.Kernel {
	t.Helper()
	b := dsl.New("acc", ir.Native("metal"))
	in := b.Buffer("in", ir.F32, ir.Read, "src0", "")
	out := b.Buffer("out", ir.F32, ir.ReadWrite, "dst", "")
	b.Workgroup(32, 1, 1)
	b.Grid(1, 1, 1)
	lane := b.Let("lane", b.LocalID(0))
	var a, c dsl.Mut
	if swapDecls {
		c = b.Var("c", b.F32(0))
		a = b.Var("a", b.F32(0))
	} else {
		a = b.Var("a", b.F32(0))
		c = b.Var("c", b.F32(0))
	}
	loop := b.Unrolled
	if noUnroll {
		loop = b.For
	}
	loop("i", 0, 4, func(i dsl.Val) {
		x := b.Let("x", in.Load(i.Mul(32).Add(lane)))
		if swapUpdates {
			c.Set(c.Get().Add(x.Mul(x)))
			a.Set(a.Get().Add(x))
		} else {
			a.Set(a.Get().Add(x))
			c.Set(c.Get().Add(x.Mul(x)))
		}
	})
	var prior dsl.Val
	if !loadAfterStore {
		prior = b.Let("prior", out.Load(lane.Add(64)))
	}
	if !barrierLate {
		b.DeviceBarrier()
	}
	out.Store(lane, a.Get())
	if barrierLate {
		b.DeviceBarrier()
	}
	if loadAfterStore {
		prior = b.Let("prior", out.Load(lane.Add(64)))
	}
	s := b.Reduce("s", c.Get().Add(prior), 32, order)
	out.Store(lane.Add(32), s)
	k, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	k, err = irtext.Parse("acc.ir", ir.Print(k))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestLoopsBarriersAndReductions(t *testing.T) {
	base := form(t, accumulate(t, false, false, false, false, false, ir.Butterfly))
	cases := []struct {
		name string
		k    *ir.Kernel
		want string
	}{
		{"accumulators declared the other way round", accumulate(t, true, false, false, false, false, ir.Butterfly), "names/layout only"},
		{"independent updates swapped in the loop", accumulate(t, false, true, false, false, false, ir.Butterfly), "names/layout only"},
		{"a load moved after a store to its buffer", accumulate(t, false, false, true, false, false, ir.Butterfly), "memory"},
		{"a barrier moved after a store", accumulate(t, false, false, false, true, false, ir.Butterfly), "memory"},
		{"a loop no longer unrolled", accumulate(t, false, false, false, false, true, ir.Butterfly), "control"},
		{"the reduction's order", accumulate(t, false, false, false, false, false, ir.NativeOrder), "arithmetic"},
	}
	for _, c := range cases {
		if got := canon.String(canon.Compare(base, form(t, c.k))); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	// A move points at the statement moved, on both sides.
	a, b := accumulate(t, false, false, false, false, false, ir.Butterfly), accumulate(t, false, false, false, true, false, ir.Butterfly)
	d := canon.Compare(form(t, a), form(t, b))
	ta, tb := ir.Print(a), ir.Print(b)
	if len(d) != 1 || lineText(ta, d[0].LineA) != "    barrier(device)" || lineText(tb, d[0].LineB) != "    barrier(device)" {
		t.Errorf("a barrier moved: %+v", d)
	}
}

// Every kernel's form is the same whether built by the DSL or read back
// from its text, and two kernels have one form exactly when their texts
// differ in the kernel's name and contract only.
func TestOpsKernels(t *testing.T) {
	var forms []*canon.Form
	bodies := map[string]string{}
	for _, op := range ops.All() {
		for _, a := range op.Ariths() {
			k, err := op.Kernel(a)
			if err != nil {
				t.Fatal(err)
			}
			f := form(t, k)
			back, err := irtext.Parse(k.ID(), ir.Print(k))
			if err != nil {
				t.Fatal(err)
			}
			if g := form(t, back); !f.Equal(g) {
				t.Errorf("%s: the form of the text differs from the DSL kernel's: %s", k.ID(), canon.String(canon.Compare(f, g)))
			}
			_, body, _ := strings.Cut(ir.Print(k), "\n")
			for _, other := range forms {
				if other.Equal(f) != (bodies[other.ID] == body) {
					t.Errorf("%s and %s: forms equal %v, texts equal %v", other.ID, f.ID, other.Equal(f), bodies[other.ID] == body)
				}
			}
			forms = append(forms, f)
			bodies[f.ID] = body
		}
	}
}

// vec is a native-cpu kernel with both vector operations over every kind of
// span (a private array, a buffer), one vec_silu inside a loop, and the
// edits a reviewer meets switched on by name.
func vec(t *testing.T, edits ...string) (*ir.Kernel, string) {
	t.Helper()
	on := func(e string) bool { return slices.Contains(edits, e) }
	b := dsl.New("vec", ir.Native("cpu"))
	n := b.Param("R", ir.U32, 2, 4)
	in := b.Buffer("in", ir.F32, ir.Read, "src0", "")
	out := b.Buffer("out", ir.F32, ir.ReadWrite, "dst", "")
	b.Workgroup(1, 1, 1)
	b.Grid(4, 1, 1)
	g := b.Let("g", b.GroupID(0))
	rowName := "row"
	if on("rename") {
		rowName = "cols"
	}
	row := b.Array(rowName, ir.F32, 8)
	act := b.Array("act", ir.F32, 8)
	b.Unrolled("i", 0, n, func(i dsl.Val) { row.Set(i, in.Load(g.Mul(8).Add(i))) })
	var prior dsl.Val
	readBack := func() { prior = b.Let("prior", out.Load(g.Mul(16).Add(64))) }
	if !on("load_after_silu_loop") {
		readBack()
	}
	dotLen, inOff := n, g.Mul(8)
	if on("dot_len") {
		dotLen = n.Sub(1)
	}
	if on("dot_offset") {
		inOff = inOff.Add(1)
	}
	var d dsl.Val
	if on("dot_swapped") {
		d = b.Let("d", b.VecDot(in.From(inOff), row.From(0), dotLen))
	} else {
		d = b.Let("d", b.VecDot(row.From(0), in.From(inOff), dotLen))
	}
	siluLen, dstOff := n, g.Mul(16).Add(64)
	if on("silu_len") {
		siluLen = n.Sub(1)
	}
	if on("silu_dst") {
		dstOff = dstOff.Add(1)
	}
	b.For("h", 0, 2, func(h dsl.Val) {
		b.VecSilu(out.From(dstOff.Add(h.Mul(8))), row.From(0), siluLen)
	})
	if on("load_after_silu_loop") {
		readBack()
	}
	actOff := b.U32(0)
	if on("act_offset") {
		actOff = b.U32(1)
	}
	if on("act_from_buffer") {
		b.VecSilu(act.From(actOff), in.From(g.Mul(8)), n)
	} else {
		b.VecSilu(act.From(actOff), row.From(0), n)
	}
	e := b.Let("e", b.VecDot(act.From(0), row.From(0), n))
	out.Store(g, d.Add(e).Add(prior))
	k, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	text := ir.Print(k)
	if k, err = irtext.Parse("vec.ir", text); err != nil {
		t.Fatal(err)
	}
	return k, text
}

// A vec_dot is one arithmetic operation over its spans' memory, its length
// how many products it sums; a vec_silu reads a span and writes a span, its
// length which elements.
func TestVectorOperations(t *testing.T) {
	base, baseText := vec(t)
	bf := form(t, base)
	cases := []struct {
		edit, want   string
		lineA, lineB string
	}{
		{"rename", "names/layout only", "", ""},
		{"dot_len", "arithmetic, memory", "let d: f32 = vec_dot<R>", "let d: f32 = vec_dot<R - 1u>"},
		{"dot_offset", "memory", "let d: f32", "let d: f32"},
		{"dot_swapped", "arithmetic", "let d: f32", "let d: f32"},
		{"silu_len", "memory", "vec_silu<R>(store out", "vec_silu<R - 1u>(store out"},
		{"silu_dst", "memory", "vec_silu<R>(store out", "vec_silu<R>(store out[g * 16u + 64u + 1u"},
		// The load reads what the loop's vec_silu wrote: the loop carries
		// the memory it writes.
		{"load_after_silu_loop", "memory", "let prior", "let prior"},
		{"act_offset", "memory", "vec_silu<R>(store act[0u..]", "vec_silu<R>(store act[1u..]"},
		{"act_from_buffer", "arithmetic, memory", "vec_silu<R>(store act[0u..], row[0u..])", "vec_silu<R>(store act[0u..], in["},
	}
	for _, c := range cases {
		k, text := vec(t, c.edit)
		ds := canon.Compare(bf, form(t, k))
		if got := canon.String(ds); got != c.want {
			t.Errorf("%s: %s, want %s", c.edit, got, c.want)
			continue
		}
		if len(ds) == 0 {
			continue
		}
		if got := lineText(baseText, ds[0].LineA); !strings.Contains(got, c.lineA) {
			t.Errorf("%s: first %s difference in a at %d %q, want %q", c.edit, ds[0].Category, ds[0].LineA, got, c.lineA)
		}
		if got := lineText(text, ds[0].LineB); !strings.Contains(got, c.lineB) {
			t.Errorf("%s: first %s difference in b at %d %q, want %q", c.edit, ds[0].Category, ds[0].LineB, got, c.lineB)
		}
	}
}

// A comparison inside a loop that stores reads a loop-carried memory
// version, whose full digest holds the loop's stores; the order of its
// commuting operands must not make a store index look like a control
// change. (Eight store offsets: one would flip the order by chance.)
func TestCommutingOperandsInALoop(t *testing.T) {
	build := func(off int) *canon.Form {
		b := dsl.New("eq", ir.Portable)
		n := b.Arg("n", ir.U32, "")
		in := b.Buffer("in", ir.F32, ir.Read, "src0", "")
		ids := b.Buffer("ids", ir.I32, ir.Read, "src1", "")
		out := b.Buffer("out", ir.F32, ir.Write, "dst", "")
		b.Workgroup(1, 1, 1)
		b.Grid(1, 1, 1)
		b.For("c", 0, n, func(c dsl.Val) {
			src := b.Let("src", ids.Load(c))
			b.If(src.Eq(c.I32()), func() { out.Store(c.Add(off), in.Load(c)) })
		})
		k, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return form(t, k)
	}
	base := build(0)
	for off := 1; off <= 8; off++ {
		if got := canon.String(canon.Compare(base, build(off))); got != "memory" {
			t.Errorf("store index + %d: %s, want memory", off, got)
		}
	}
}
