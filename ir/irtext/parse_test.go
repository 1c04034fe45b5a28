package irtext_test

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ir/irtext"
	"github.com/kernelgen/kernelgen/ops"
)

func roundTrip(t *testing.T, file, text string) *ir.Kernel {
	t.Helper()
	k, err := irtext.Parse(file, text)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	body := text
	// Print writes no generated-file header.
	for strings.HasPrefix(body, "//") {
		_, body, _ = strings.Cut(body, "\n")
	}
	if got := ir.Print(k); got != body {
		t.Fatalf("%s: Print(Parse(text)) differs from the text:\n%s", file, firstDiff(body, got))
	}
	return k
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return "line " + strconv.Itoa(i+1) + ":\n  want " + al[i] + "\n  got  " + bl[i]
		}
	}
	return "lengths differ"
}

// Every kernel of every op under every contract prints, parses and prints
// the same bytes, and positions point at the text's lines.
func TestEveryKernelRoundTrips(t *testing.T) {
	for _, op := range ops.All() {
		for _, a := range op.Ariths() {
			k, err := op.Kernel(a)
			if err != nil {
				t.Fatal(err)
			}
			text := ir.Print(k)
			back := roundTrip(t, k.ID(), text)
			if back.ArithFree != k.ArithFree {
				t.Errorf("%s: arith-free %v, read back as %v", k.ID(), k.ArithFree, back.ArithFree)
			}
			lines := strings.Split(text, "\n")
			ir.WalkStmts(back.Body, func(s ir.Stmt) {
				if l := s.Pos().Line; l < 1 || l > len(lines) || !strings.Contains(lines[l-1], stmtWord(s)) {
					t.Errorf("%s: %T at line %d, which reads %q", k.ID(), s, l, lines[max(0, min(l, len(lines))-1)])
				}
			})
		}
	}
}

func stmtWord(s ir.Stmt) string {
	switch s := s.(type) {
	case *ir.Let:
		return s.Var.Name + ":"
	case *ir.Reduce:
		return "reduce_sum"
	case *ir.For:
		return "for " + s.Var.Name
	case *ir.If:
		return "if "
	case *ir.Store:
		return "store " + s.Buf.Name
	case *ir.VecSilu:
		return "vec_silu<"
	}
	return ""
}

// The stored IR files (with their header) and the construct goldens' IR
// sections parse back to themselves.
func TestStoredTextsRoundTrip(t *testing.T) {
	files, err := filepath.Glob("../../generated/ir/*.ir")
	if err != nil || len(files) == 0 {
		t.Fatalf("no generated IR files: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, filepath.Base(f), string(data))
	}
	constructs, _ := filepath.Glob("../../emit/testdata/constructs/*.txtar")
	if len(constructs) == 0 {
		t.Fatal("no construct goldens")
	}
	for _, f := range constructs {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, rest, ok := strings.Cut(string(data), "-- ir --\n")
		if !ok {
			t.Fatalf("%s has no ir section", f)
		}
		section, _, _ := strings.Cut(rest, "\n-- ")
		roundTrip(t, filepath.Base(f), section+"\n")
	}
}

// F32 literals come back bit for bit: signed zeros, denormals, infinities,
// the largest values, and negative literals through negation.
func TestLiteralsKeepTheirBits(t *testing.T) {
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.1, -103.972084, 1.2582912e7, math.MaxFloat32, -math.MaxFloat32,
		math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, float32(math.Inf(1)), float32(math.Inf(-1)), 1e-40, 3.4e38}
	b := dsl.New("k", ir.Portable)
	out := b.Buffer("out", ir.F32, ir.Write, "dst", "")
	b.Workgroup(1, 1, 1)
	b.Grid(1, 1, 1)
	for i, v := range vals {
		out.Store(b.U32(uint32(i)), b.F32(v).Sub(b.F32(v)).Add(b.F32(v)))
	}
	out.Store(b.U32(uint32(len(vals))), b.I32(-2147483647).Sub(1).Bitcast(ir.F32))
	k := b.MustBuild()
	back := roundTrip(t, "k", ir.Print(k))
	for i, s := range back.Body[:len(vals)] {
		e := s.(*ir.Store).Value.(*ir.Binary).Y
		got, ok := constValue(e)
		if !ok || math.Float32bits(got) != math.Float32bits(vals[i]) {
			t.Errorf("literal %v came back as %s (%v)", vals[i], ir.ExprString(e), got)
		}
	}
}

func constValue(e ir.Expr) (float32, bool) {
	switch e := e.(type) {
	case *ir.Const:
		return e.F, true
	case *ir.Unary:
		v, ok := constValue(e.X)
		return -v, ok && e.Op == ir.Neg
	}
	return 0, false
}

// Malformed text is refused with the line and what was expected; nothing
// half-parsed comes back.
func TestBadTextNamesTheLine(t *testing.T) {
	const good = `kernel k arith=portable
    arg n: u32
    buffer out: f32 write role=dst
    workgroup (32u, 1u, 1u)
    grid (n, 1u, 1u)
{
    let i: u32 = local_id.x
    store out[i] = f32(i)
}
`
	if _, err := irtext.Parse("k.ir", good); err != nil {
		t.Fatalf("the good text: %v", err)
	}
	cases := []struct{ from, to, want string }{
		{"let i: u32", "let i: u16", "k.ir:7: unknown type \"u16\""},
		{"let i: u32", "let i: u64", "k.ir:7: let i: value has type u32, variable has type u64"},
		{"f32(i)", "f32(j)", "k.ir:8: unknown name \"j\""},
		{"store out", "store outt", "k.ir:8: store to \"outt\", which is not a buffer"},
		{"    store out[i] = f32(i)\n", "    if i < n {\n    store out[i] = f32(i)\n", "k.ir:9: want \"    }\""},
		{"arith=portable", "arith=fast", "k.ir:1: unknown arithmetic contract"},
		{"grid (n, 1u, 1u)", "grid (n, 1u)", "k.ir:5: want \",\", got \")\""},
		{"store out[i] = f32(i)", "store out[i] = i", "the kernel does not validate"},
		{"local_id.x", "local_id.w", "k.ir:7: want local_id.x, .y or .z"},
		{"}\n", "", "k.ir:9: want \"}\" closing the kernel body"},
	}
	for _, c := range cases {
		bad := strings.Replace(good, c.from, c.to, 1)
		k, err := irtext.Parse("k.ir", bad)
		if err == nil || !strings.Contains(err.Error(), c.want) || k != nil {
			t.Errorf("%q -> %q: got %v, want an error containing %q", c.from, c.to, err, c.want)
		}
	}
}

// The vector operations read back over every kind of span, with offsets
// that end in a literal and lengths that hold a shift.
func TestVectorOperationsRoundTrip(t *testing.T) {
	b := dsl.New("k", ir.Native("cpu"))
	n := b.Arg("n", ir.U32, "")
	in := b.Buffer("in", ir.F32, ir.Read, "src0", "")
	out := b.Buffer("out", ir.F32, ir.ReadWrite, "dst", "")
	b.Workgroup(32, 1, 1)
	b.Grid(1, 1, 1)
	row := b.Array("row", ir.F32, 8)
	tile := b.SharedArray("tile", ir.F32, 64)
	b.VecSilu(row.From(0), in.From(16), 8)
	b.VecSilu(tile.From(b.LocalID(0).Mul(2)), row.From(1), n.Shr(1))
	d := b.Let("d", b.VecDot(in.From(n.Add(1)), tile.From(8), n.Shr(1).Add(1)))
	b.VecSilu(out.From(d.I32().U32()), out.From(0), 3)
	text := ir.Print(b.MustBuild())
	for _, want := range []string{"vec_silu<8u>(store row[0u..], in[16u..])", "vec_dot<(n >> 1u) + 1u>(in[n + 1u..], tile[8u..])", "(store out["} {
		if !strings.Contains(text, want) {
			t.Fatalf("the kernel prints no %q:\n%s", want, text)
		}
	}
	k := roundTrip(t, "k", text)
	dot := k.Body[4].(*ir.Let).Value.(*ir.VecDot)
	silu := k.Body[5].(*ir.VecSilu)
	if dot.X.Buf == nil || dot.Y.Array == nil || silu.Dst.Buf == nil || silu.Src.Buf == nil || silu.At.Line != 13 {
		t.Errorf("spans read back as %s and %s, vec_silu at line %d", ir.ExprString(dot), silu.Dst, silu.At.Line)
	}
	bad := []struct{ from, to, want string }{
		{"in[16u..]", "inn[16u..]", `k.ir:10: span of "inn", which is neither an array nor a buffer`},
		{"in[16u..]", "in[16u]", `k.ir:10: want "..", got "]"`},
		{"(store row", "(row", `k.ir:10: want "store", got "row"`},
		{"tile[8u..])", "tile[8u..]", `k.ir:12: want ")", got ""`},
		{"vec_silu<8u>", "vec_silu<n < 8u>", `k.ir:10: want ">", got "<"`},
	}
	for _, c := range bad {
		k, err := irtext.Parse("k.ir", strings.Replace(text, c.from, c.to, 1))
		if err == nil || !strings.Contains(err.Error(), c.want) || k != nil {
			t.Errorf("%q -> %q: got %v, want an error containing %q", c.from, c.to, err, c.want)
		}
	}
}

// An assert reads back as the statement it was, at its line.
func TestAssertRoundTrips(t *testing.T) {
	b := dsl.New("k", ir.Native("cpu"))
	rows := b.Arg("n_rows", ir.U32, "")
	ids := b.Buffer("ids", ir.I32, ir.Read, "src0", "")
	b.Workgroup(1, 1, 1)
	b.Grid(1, 1, 1)
	src := b.Let("src", ids.Load(0))
	b.Assert(src.Lt(rows.I32()))
	text := ir.Print(b.MustBuild())
	if !strings.Contains(text, "assert src < i32(n_rows)") {
		t.Fatalf("the kernel prints no assert:\n%s", text)
	}
	k := roundTrip(t, "k", text)
	a, ok := k.Body[len(k.Body)-1].(*ir.Assert)
	if !ok || !strings.Contains(strings.Split(text, "\n")[a.At.Line-1], "assert ") {
		t.Errorf("the last statement read back as %T", k.Body[len(k.Body)-1])
	}
}
