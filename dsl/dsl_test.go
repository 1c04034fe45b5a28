package dsl_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
)

// nextLine returns this file's position of the line after the caller: the
// line whose mistake the error must name.
func nextLine() string {
	_, _, n, _ := runtime.Caller(1)
	return fmt.Sprintf("dsl/dsl_test.go:%d", n+1)
}

// skeleton is a minimal valid kernel; mistake adds the error under test and
// returns the position it expects the error at.
func skeleton(a ir.Arith, mistake func(b *dsl.Builder, in, out dsl.Buf) string) (string, error) {
	b := dsl.New("k", a)
	n := b.Arg("n", ir.U32, "elements")
	in := b.Buffer("in", ir.F32, ir.Read, "src0", "")
	out := b.Buffer("out", ir.F32, ir.Write, "dst", "")
	b.Workgroup(32, 1, 1)
	b.Grid(n, 1, 1)
	where := mistake(b, in, out)
	_, err := b.Build()
	return where, err
}

func TestDSLMistakesNameTheLineAndTheFix(t *testing.T) {
	cases := []struct {
		name    string
		arith   ir.Arith
		mistake func(b *dsl.Builder, in, out dsl.Buf) string
		want    string
	}{
		{"type mismatch", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf) string {
			x := in.Load(0)
			at := nextLine()
			b.Let("bad", x.Add(b.LocalID(0)))
			return at
		}, "mismatched types f32 and u32; convert one side"},
		{"store to read-only buffer", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf) string {
			at := nextLine()
			in.Store(b.LocalID(0), b.F32(1))
			return at
		}, "store to buffer in, which is declared read; declare it Write or ReadWrite"},
		{"load from write-only buffer", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf) string {
			at := nextLine()
			b.Let("x", out.Load(0))
			return at
		}, "load from buffer out, which is declared write"},
		{"barrier in divergent code", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf) string {
			var at string
			b.If(b.LocalID(0).Lt(3), func() {
				at = nextLine()
				b.Barrier()
			})
			return at
		}, "barrier in thread-dependent control flow would deadlock"},
		{"reduction in divergent code", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf) string {
			var at string
			b.If(b.LocalID(0).Eq(0), func() {
				at = nextLine()
				b.Reduce("sum", in.Load(b.LocalID(0)), 32, ir.Butterfly)
			})
			return at
		}, "reduction in thread-dependent control flow"},
		{"native reduction in a portable kernel", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf) string {
			at := nextLine()
			b.Reduce("sum", in.Load(b.LocalID(0)), 32, ir.NativeOrder)
			return at
		}, "native-order reduction in a portable kernel; use the butterfly order"},
		{"native exp in a portable kernel", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf) string {
			at := nextLine()
			b.Let("e", b.ExpNative(in.Load(0)))
			return at
		}, "exp_native in a portable kernel"},
		{"f32 division in a portable kernel", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf) string {
			at := nextLine()
			b.Let("q", in.Load(0).Div(in.Load(1)))
			return at
		}, "use the portable division routine"},
		{"inexact literal", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf) string {
			at := nextLine()
			b.Let("x", in.Load(0).Mul(0.1))
			return at
		}, "literal 0.1 is not exact in f32"},
		{"untyped literal", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf) string {
			at := nextLine()
			b.Let("x", 3)
			return at
		}, "untyped literal 3; say b.U32(3)"},
		{"assignment of the wrong type", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf) string {
			x := b.Var("x", b.F32(0))
			var at string
			b.For("i", 0, 4, func(i dsl.Val) {
				at = nextLine()
				x.Set(i)
			})
			return at
		}, "assignment to x: value has type u32, variable has type f32"},
		{"array length not compile-time", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf) string {
			n := b.Let("n", b.LocalID(0))
			at := nextLine()
			b.Array("a", ir.F32, n)
			return at
		}, "array a length must be a compile-time integer"},
		{"duplicate interface name", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf) string {
			at := nextLine()
			b.Arg("n", ir.U32, "again")
			return at
		}, `"n" is declared twice`},
		{"loop with thread-dependent bounds around a reduction", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf) string {
			at := nextLine()
			b.For("i", 0, b.LocalID(0), func(i dsl.Val) {
				b.Reduce("s", in.Load(i), 32, ir.Butterfly)
			})
			return at
		}, "thread-dependent bounds but contains a barrier or reduction"},
		{"loop bounded by a shared element at a thread's index, around a barrier", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf) string {
			n := b.SharedArray("n", ir.U32, 32)
			at := nextLine()
			b.For("i", 0, n.At(b.LocalID(0)), func(dsl.Val) { b.Barrier() })
			return at
		}, "thread-dependent bounds but contains a barrier or reduction"},
		{"loop bounded by a private element, around a barrier", ir.Portable, func(b *dsl.Builder, in, out dsl.Buf) string {
			n := b.Array("n", ir.U32, 1)
			n.Set(0, b.LocalID(0))
			at := nextLine()
			b.For("i", 0, n.At(0), func(dsl.Val) { b.Barrier() })
			return at
		}, "thread-dependent bounds but contains a barrier or reduction"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			where, err := skeleton(c.arith, c.mistake)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.Contains(msg, where+": ") {
				t.Errorf("error does not point at %s:\n%s", where, msg)
			}
			if !strings.Contains(msg, c.want) {
				t.Errorf("error does not say %q:\n%s", c.want, msg)
			}
		})
	}
}

func TestValidKernelBuilds(t *testing.T) {
	_, err := skeleton(ir.Portable, func(b *dsl.Builder, in, out dsl.Buf) string {
		sh := b.SharedArray("tile", ir.F32, 32)
		lid := b.Let("lid", b.LocalID(0))
		sh.Set(lid, in.Load(lid))
		b.Barrier()
		s := b.Reduce("sum", sh.At(b.U32(31).Sub(lid)), 32, ir.Butterfly)
		b.If(lid.Eq(0), func() { out.Store(b.GroupID(0), s) })
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A shared element read at a uniform index after a barrier is one value
// for the workgroup: a loop it bounds may hold barriers (the chained
// kernels' anyAliases; a private element or a thread's index is refused
// above).
func TestSharedElementAtUniformIndexIsUniform(t *testing.T) {
	_, err := skeleton(ir.Portable, func(b *dsl.Builder, in, out dsl.Buf) string {
		n := b.SharedArray("n", ir.U32, 1)
		b.If(b.LocalID(0).Eq(0), func() { n.Set(0, b.U32(3)) })
		b.Barrier()
		b.For("i", 0, n.At(0), func(dsl.Val) { b.Barrier() })
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The routines expand to exactly specified operations only, so they are legal
// in portable kernels.
func TestPortableRoutinesUseOnlyExactOperations(t *testing.T) {
	_, err := skeleton(ir.Portable, func(b *dsl.Builder, in, out dsl.Buf) string {
		x := in.Load(b.LocalID(0))
		out.Store(b.LocalID(0), b.SiluPortable(b.ExpPortable(x)))
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
}
