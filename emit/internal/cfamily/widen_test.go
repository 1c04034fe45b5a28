package cfamily

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ir/ctype"
)

// cDialect is CStyle over C's type names, with the parts no integer
// expression reaches stubbed.
type cDialect struct{ CStyle }

func (cDialect) Bitcast(_, to ir.Type, x string) string                           { return "<bitcast>" }
func (cDialect) Call(ir.Intrinsic, []string) string                               { return "<call>" }
func (cDialect) ExactBinary(ir.BinOp, string, string) string                      { return "" }
func (cDialect) Builtin(ir.Builtin, int) string                                   { return "<builtin>" }
func (cDialect) Unroll() string                                                   { return "" }
func (cDialect) Barrier(bool) string                                              { return "" }
func (cDialect) Reserved(string) bool                                             { return false }
func (cDialect) DepSync(ir.DepKind) string                                        { return "" }
func (cDialect) Reduce(string, string, string, ir.Order, bool, Exchange) []string { return nil }

// castsAll is the same language without UsualConversions (as GLSL has
// none): every conversion prints.
type castsAll struct{ Dialect }

// The operands of widened arithmetic the IR builds for tests: u32 a and b,
// i32 m and n (args, as the ops' indices are), a u64 local w and an f32 f.
var (
	argA, argB = &ir.Arg{Name: "a", Type: ir.U32}, &ir.Arg{Name: "b", Type: ir.U32}
	argM, argN = &ir.Arg{Name: "m", Type: ir.I32}, &ir.Arg{Name: "n", Type: ir.I32}
	argF       = &ir.Arg{Name: "f", Type: ir.F32}
	varW       = &ir.Var{Name: "w", Type: ir.U64}
	a, b       = &ir.ArgRef{Arg: argA}, &ir.ArgRef{Arg: argB}
	m, n       = &ir.ArgRef{Arg: argM}, &ir.ArgRef{Arg: argN}
	w          = &ir.VarRef{Var: varW}
)

func testKernel() *ir.Kernel {
	return &ir.Kernel{Name: "widen", Args: []*ir.Arg{argA, argB, argM, argN, argF}}
}

func u64(x ir.Expr) ir.Expr { return &ir.Unary{Op: ir.Convert, X: x, To: ir.U64} }
func bin(op ir.BinOp, x, y ir.Expr) ir.Expr {
	return &ir.Binary{Op: op, X: x, Y: y}
}
func lit(t ir.Type, v int64) ir.Expr { return &ir.Const{T: t, I: v} }

// Casts to u64 go where C would not convert by itself, and only there.
func TestWideningCasts(t *testing.T) {
	cases := []struct {
		name string
		e    ir.Expr
		want string
	}{
		{"the first cast stays", bin(ir.Mul, u64(a), u64(b)), "(uint64_t) a * b"},
		{"a cache offset", bin(ir.Add, bin(ir.Mul, bin(ir.Add, bin(ir.Mul, u64(m), u64(a)), u64(b)), u64(a)), u64(bin(ir.Mul, a, b))),
			"((uint64_t) m * a + b) * a + a * b"},
		{"an i32 widened", bin(ir.Sub, w, u64(m)), "w - m"},
		{"a u64 literal", bin(ir.Mul, w, lit(ir.U64, 4)), "w * 4u"},
		{"the left operand", bin(ir.Add, u64(bin(ir.Mul, a, b)), w), "a * b + w"},
		// a + b is still added in 32 bits: left association groups it.
		{"a left sum", bin(ir.Add, u64(bin(ir.Add, a, b)), w), "a + b + w"},
		{"a right sum keeps its parentheses", bin(ir.Add, w, u64(bin(ir.Add, a, b))), "w + (a + b)"},
		{"a difference scaled", bin(ir.Mul, u64(bin(ir.Sub, a, b)), w), "(a - b) * w"},
		{"a quotient", bin(ir.Div, w, u64(bin(ir.Rem, a, b))), "w / (a % b)"},
		{"a bit operation", bin(ir.BitXor, w, u64(bin(ir.BitAnd, a, b))), "w ^ (a & b)"},
		{"two sums", bin(ir.Mul, bin(ir.Add, u64(a), u64(b)), bin(ir.Add, u64(m), u64(n))), "((uint64_t) a + b) * ((uint64_t) m + n)"},
		// Shifts take the left operand's type alone; comparisons keep
		// theirs (-Wsign-compare); a float converts by truncation, which
		// no operator does.
		{"a shift", bin(ir.Shl, u64(a), u64(b)), "(uint64_t) a << (uint64_t) b"},
		{"a shift of a u64", bin(ir.Shr, w, u64(b)), "w >> (uint64_t) b"},
		{"a comparison", bin(ir.Lt, u64(m), w), "(uint64_t) m < w"},
		{"a float", bin(ir.Add, w, u64(&ir.ArgRef{Arg: argF})), "w + (uint64_t) f"},
		{"a conversion alone", u64(bin(ir.Mul, a, b)), "(uint64_t) (a * b)"},
		{"32-bit arithmetic", bin(ir.Add, bin(ir.Mul, a, b), a), "a * b + a"},
		{"a narrowing", bin(ir.Add, &ir.Unary{Op: ir.Convert, X: bin(ir.Mul, u64(a), u64(b)), To: ir.U32}, a),
			"(uint32_t) ((uint64_t) a * b) + a"},
	}
	for _, c := range cases {
		p := New(cDialect{CStyle{Types: ctype.C}}, testKernel())
		p.Name(varW, "w")
		if got := p.Expr(c.e); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
	// Without the usual conversions every cast prints.
	p := New(castsAll{cDialect{CStyle{Types: ctype.C}}}, testKernel())
	p.Name(varW, "w")
	if got, want := p.Expr(bin(ir.Add, bin(ir.Mul, u64(m), u64(a)), u64(bin(ir.Mul, a, b)))), "(uint64_t) m * (uint64_t) a + (uint64_t) (a * b)"; got != want {
		t.Errorf("a dialect without UsualConversions: got %s, want %s", got, want)
	}
}

// randomExpr builds an integer expression of type ty over a, b, m and n:
// sums, products, quotients, remainders, shifts, bit operations and
// conversions between u32, i32 and u64, u64 trees most often, so that
// widened operands meet at every depth. It leaves out what C leaves
// undefined whatever the casts: division by zero (divisors are | 1), i32
// division (INT_MIN / -1), i32 left shifts and shift counts out of range (counts are
// constants or masked).
func randomExpr(r *rand.Rand, ty ir.Type, depth int) ir.Expr {
	ints := []ir.Type{ir.U32, ir.I32, ir.U64}
	if depth == 0 || r.IntN(5) == 0 {
		switch ty {
		case ir.U32:
			return [...]ir.Expr{a, b, lit(ir.U32, r.Int64N(1<<32))}[r.IntN(3)]
		case ir.I32:
			return [...]ir.Expr{m, n, lit(ir.I32, r.Int64N(1<<16)-1<<15)}[r.IntN(3)]
		}
		if r.IntN(3) == 0 {
			return lit(ir.U64, r.Int64N(1<<32))
		}
		return u64(randomExpr(r, ints[r.IntN(2)], 0))
	}
	if r.IntN(4) == 0 {
		from := ints[r.IntN(3)]
		if from == ty {
			return randomExpr(r, ty, depth)
		}
		return &ir.Unary{Op: ir.Convert, X: randomExpr(r, from, depth-1), To: ty}
	}
	ops := []ir.BinOp{ir.Add, ir.Sub, ir.Mul, ir.Mul, ir.BitAnd, ir.BitOr, ir.BitXor, ir.Shr}
	if ty != ir.I32 {
		ops = append(ops, ir.Div, ir.Rem, ir.Shl)
	}
	x := randomExpr(r, ty, depth-1)
	switch op := ops[r.IntN(len(ops))]; op {
	case ir.Shl, ir.Shr:
		bits := int64(32)
		if ty == ir.U64 {
			bits = 64
		}
		if r.IntN(2) == 0 {
			return bin(op, x, lit(ty, r.Int64N(bits)))
		}
		return bin(op, x, bin(ir.BitAnd, randomExpr(r, ty, depth-1), lit(ty, bits-1)))
	case ir.Div, ir.Rem:
		return bin(op, x, bin(ir.BitOr, randomExpr(r, ty, depth-1), lit(ty, 1)))
	default:
		return bin(op, x, randomExpr(r, ty, depth-1))
	}
}

// eval is the IR's meaning of e (ir/doc.go: integers wrap at their
// width; a conversion keeps the value modulo the target's width, an i32
// widening sign-extended), as 64 bits: u32 zero-extended, i32
// sign-extended, which is what (unsigned long long) makes of the C value.
func eval(e ir.Expr, in map[*ir.Arg]uint64) uint64 {
	switch e := e.(type) {
	case *ir.ArgRef:
		return norm(in[e.Arg], e.Arg.Type)
	case *ir.Const:
		return norm(uint64(e.I), e.T)
	case *ir.Unary:
		return norm(eval(e.X, in), e.To)
	case *ir.Binary:
		ty := e.Type()
		x, y := eval(e.X, in), eval(e.Y, in)
		switch e.Op {
		case ir.Add:
			return norm(x+y, ty)
		case ir.Sub:
			return norm(x-y, ty)
		case ir.Mul:
			return norm(x*y, ty)
		case ir.Div:
			return norm(x/y, ty)
		case ir.Rem:
			return norm(x%y, ty)
		case ir.Shl:
			return norm(x<<y, ty)
		case ir.Shr:
			if ty == ir.I32 {
				return norm(uint64(int64(x)>>y), ty)
			}
			return x >> y
		case ir.BitAnd:
			return x & y
		case ir.BitOr:
			return x | y
		case ir.BitXor:
			return x ^ y
		}
	}
	panic(fmt.Sprintf("eval: %T", e))
}

func norm(v uint64, ty ir.Type) uint64 {
	switch ty {
	case ir.U32:
		return uint64(uint32(v))
	case ir.I32:
		return uint64(int64(int32(uint32(v))))
	}
	return v
}

// The printed text computes what the IR says, casts left out and all,
// bit for bit: random expression trees over random operands (the extremes
// of u32 and i32 among them, so 32-bit sums and products wrap and 64-bit
// ones pass 2^32), compiled as C (ggml-cpu) and as C++ (CUDA, SYCL, and
// MSL as host emulation reads it) with warnings as errors. -fwrapv gives
// i32 overflow the IR's wrapping, which C leaves undefined (and
// -Wno-overflow lets constant i32 products fold with it): that is the
// printer's i32 arithmetic, not the conversions under test.
func TestWideningCastsRun(t *testing.T) {
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "g++"
	}
	compiler := strings.Fields(cxx)
	if _, err := exec.LookPath(compiler[0]); err != nil {
		if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	r := rand.New(rand.NewPCG(3, 5))
	var exprs []ir.Expr
	var src strings.Builder
	src.WriteString("#include <stdint.h>\n#include <stdio.h>\n\n" +
		"static void eval(uint32_t a, uint32_t b, int32_t m, int32_t n) {\n")
	p := New(cDialect{CStyle{Types: ctype.C}}, testKernel())
	for i := 0; i < 400; i++ {
		e := randomExpr(r, [...]ir.Type{ir.U64, ir.U64, ir.U32, ir.I32}[i%4], 1+i%5)
		exprs = append(exprs, e)
		fmt.Fprintf(&src, "    printf(\"%%llu\\n\", (unsigned long long) (%s));\n", p.Expr(e))
	}
	src.WriteString("    (void) a; (void) b; (void) m; (void) n;\n}\n\nint main(void) {\n" +
		"    uint32_t x[4];\n    while (scanf(\"%u %u %u %u\", &x[0], &x[1], &x[2], &x[3]) == 4) {\n" +
		"        eval(x[0], x[1], (int32_t) x[2], (int32_t) x[3]);\n    }\n    return 0;\n}\n")
	extremes := []uint32{0, 1, 2, 3, 0x7fffffff, 0x80000000, 0x80000001, 0xfffffffe, 0xffffffff, 0x10000, 0xffff}
	operand := func() uint32 {
		switch r.IntN(3) {
		case 0:
			return extremes[r.IntN(len(extremes))]
		case 1:
			return uint32(r.IntN(1 << 12))
		}
		return r.Uint32()
	}
	var input strings.Builder
	var want []uint64
	for range 64 {
		x := [4]uint32{operand(), operand(), operand(), operand()}
		fmt.Fprintf(&input, "%d %d %d %d\n", x[0], x[1], x[2], x[3])
		in := map[*ir.Arg]uint64{argA: uint64(x[0]), argB: uint64(x[1]), argM: uint64(x[2]), argN: uint64(x[3])}
		for _, e := range exprs {
			want = append(want, eval(e, in))
		}
	}
	dir := t.TempDir()
	for _, lang := range []string{"c", "c++"} {
		file := filepath.Join(dir, "widen."+map[string]string{"c": "c", "c++": "cpp"}[lang])
		if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(dir, "widen_"+lang)
		std := map[string]string{"c": "-std=c11", "c++": "-std=c++17"}[lang]
		args := append(compiler[1:], "-x", lang, std, "-O2", "-fwrapv", "-Wno-overflow", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-o", bin, file)
		if out, err := exec.Command(compiler[0], args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", cxx, strings.Join(args, " "), err, out)
		}
		cmd := exec.Command(bin)
		cmd.Stdin = strings.NewReader(input.String())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", lang, err)
		}
		got := strings.Fields(string(out))
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, want %d", lang, len(got), len(want))
		}
		bad := 0
		for i, g := range got {
			v, err := strconv.ParseUint(g, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			if v != want[i] {
				if bad++; bad <= 5 {
					e := exprs[i%len(exprs)]
					t.Errorf("%s: input %d: %s = %#x, the IR says %#x", lang, i/len(exprs), p.Expr(e), v, want[i])
				}
			}
		}
		if bad > 5 {
			t.Errorf("%s: ... %d values differ", lang, bad)
		}
	}
}
