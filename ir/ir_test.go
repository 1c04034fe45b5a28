package ir_test

import (
	"math"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ir"
)

var here = ir.Pos{File: "ir/ir_test.go", Line: 1}

func u32(v int64) *ir.Const   { return &ir.Const{T: ir.U32, I: v, At: here} }
func f32(v float32) *ir.Const { return &ir.Const{T: ir.F32, F: v, At: here} }

// kernel wraps a body in a minimal valid kernel.
func kernel(body ...ir.Stmt) *ir.Kernel {
	return &ir.Kernel{
		Name: "k", Arith: ir.Portable, At: here,
		Workgroup: [3]ir.Expr{u32(32), u32(1), u32(1)},
		Grid:      [3]ir.Expr{u32(1), u32(1), u32(1)},
		Body:      body,
	}
}

// Validate catches what a hand-built IR (not only the DSL) can get wrong.
func TestValidateRejects(t *testing.T) {
	x := &ir.Var{Name: "x", Type: ir.F32, At: here}
	y := &ir.Var{Name: "y", Type: ir.F32, At: here}
	arr := &ir.Array{Name: "a", Elem: ir.F32, Len: u32(4), Space: ir.Private, At: here}
	in := &ir.Buffer{Name: "in", Elem: ir.F32, Access: ir.Read, Role: "src0", At: here}
	native := func(body ...ir.Stmt) *ir.Kernel {
		k := kernel(body...)
		k.Arith, k.Buffers = ir.Native("cpu"), []*ir.Buffer{in}
		return k
	}
	arithFree := func(k *ir.Kernel) *ir.Kernel {
		k.ArithFree = true
		return k
	}
	cases := []struct {
		name string
		k    *ir.Kernel
		want string
	}{
		{"assign to immutable", kernel(
			&ir.Let{Var: x, Value: f32(1), At: here},
			&ir.Assign{Var: x, Value: f32(2), At: here}), "assignment to immutable x"},
		{"use out of scope", kernel(
			&ir.If{Cond: &ir.Const{T: ir.Bool, B: true, At: here}, Then: []ir.Stmt{&ir.Let{Var: y, Value: f32(1), At: here}}, At: here},
			&ir.Let{Var: x, Value: &ir.VarRef{Var: y, At: here}, At: here}), "y is used outside its scope"},
		{"let type", kernel(&ir.Let{Var: x, Value: u32(1), At: here}), "value has type u32, variable has type f32"},
		{"bitcast of bool", kernel(&ir.Let{Var: x, Value: &ir.Unary{Op: ir.Bitcast, X: &ir.Const{T: ir.Bool, At: here}, To: ir.F32, At: here}, At: here}), "bitcast from bool to f32"},
		{"fma arity", kernel(&ir.Let{Var: x, Value: &ir.Call{Fn: ir.FMA, Args: []ir.Expr{f32(1)}, At: here}, At: here}), "fma takes 3 arguments, got 1"},
		{"grid uses a thread value", func() *ir.Kernel {
			k := kernel()
			k.Grid[0] = &ir.BuiltinRef{Builtin: ir.LocalID, At: here}
			return k
		}(), "grid size must be an integer expression of params and args"},
		{"reduce width not compile-time", kernel(&ir.Reduce{Var: x, X: f32(1), Width: &ir.BuiltinRef{Builtin: ir.GroupID, At: here}, Order: ir.Butterfly, At: here}), "reduction width must be a compile-time integer"},
		{"vec_dot in a portable kernel", kernel(&ir.DeclArray{Array: arr, At: here},
			&ir.Let{Var: x, Value: &ir.VecDot{X: ir.Span{Array: arr, Off: u32(0)}, Y: ir.Span{Array: arr, Off: u32(0)}, N: u32(4), At: here}, At: here}),
			"vec_dot in a portable kernel"},
		{"vec_dot of an undeclared array", native(&ir.Let{Var: x, Value: &ir.VecDot{X: ir.Span{Array: arr, Off: u32(0)}, Y: ir.Span{Array: arr, Off: u32(0)}, N: u32(4), At: here}, At: here}),
			"array a is used outside its scope"},
		{"vec_silu into a read-only buffer", native(&ir.DeclArray{Array: arr, At: here},
			&ir.VecSilu{Dst: ir.Span{Buf: in, Off: u32(0)}, Src: ir.Span{Array: arr, Off: u32(0)}, N: u32(4), At: here}),
			"vector store to buffer in, which is declared read"},
		{"span of both kinds", native(&ir.DeclArray{Array: arr, At: here},
			&ir.VecSilu{Dst: ir.Span{Buf: in, Array: arr, Off: u32(0)}, Src: ir.Span{Array: arr, Off: u32(0)}, N: u32(4), At: here}),
			"a span names exactly one array or buffer"},
		{"span offset of f32", native(&ir.DeclArray{Array: arr, At: here},
			&ir.Let{Var: x, Value: &ir.VecDot{X: ir.Span{Array: arr, Off: f32(0)}, Y: ir.Span{Array: arr, Off: u32(0)}, N: u32(4), At: here}, At: here}),
			"span offset has type f32"},
		{"assert in a portable kernel", kernel(&ir.Assert{Cond: &ir.Const{T: ir.Bool, B: true, At: here}, At: here}),
			"assert in a portable kernel"},
		{"assert of a number", native(&ir.Assert{Cond: u32(1), At: here}), "assert condition has type u32"},
		{"arith-free kernel adding floats", arithFree(kernel(&ir.Let{Var: x, Value: &ir.Binary{Op: ir.Add, X: f32(1), Y: f32(2), At: here}, At: here})),
			"arith-free kernel k computes with f32 values (1.0 + 2.0)"},
		{"arith-free kernel with an fma", arithFree(kernel(&ir.Let{Var: x, Value: &ir.Call{Fn: ir.FMA, Args: []ir.Expr{f32(1), f32(2), f32(3)}, At: here}, At: here})),
			"arith-free kernel k computes with f32 values"},
		{"arith-free kernel reducing", arithFree(kernel(&ir.Reduce{Var: x, X: f32(1), Width: u32(32), Order: ir.Butterfly, At: here})),
			"arith-free kernel k reduces"},
		{"arith-free kernel under a native contract", arithFree(native()), "marked arith-free but built under native-cpu"},
		{"prior buffer written", func() *ir.Kernel {
			k := kernel(&ir.DepSync{Kind: ir.DepWait, At: here})
			k.Buffers = []*ir.Buffer{{Name: "out", Elem: ir.F32, Access: ir.Write, Role: "dst", Prior: true, At: here}}
			return k
		}(), "buffer out is marked prior but declared write"},
		{"prior buffer never waited for", func() *ir.Kernel {
			k := kernel()
			k.Buffers = []*ir.Buffer{{Name: "in", Elem: ir.F32, Access: ir.Read, Role: "src0", Prior: true, At: here}}
			return k
		}(), "buffer in is marked prior (the previous dispatch writes it), but the kernel never waits"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ir.Validate(c.k)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate = %v, want an error saying %q", err, c.want)
			}
			if !strings.Contains(err.Error(), "ir/ir_test.go:1: ") {
				t.Errorf("error %q has no position", err)
			}
		})
	}
}

func TestConstantsPrintExactly(t *testing.T) {
	cases := map[float32]string{
		0: "0.0", 1: "1.0", 0.5: "0.5", float32(math.Copysign(0, -1)): "-0.0",
		float32(0.1): "0.1", 12582912: "1.2582912e+07", math.SmallestNonzeroFloat32: "1e-45",
	}
	for v, want := range cases {
		if got := ir.F32String(v); got != want {
			t.Errorf("F32String(%v) = %q, want %q", v, got, want)
		}
	}
}

// Printed expressions keep the written evaluation order: a left-nested sum
// needs no parentheses, a right-nested one keeps them.
func TestExprStringKeepsOrder(t *testing.T) {
	a, b, c := f32(1), f32(2), f32(3)
	left := &ir.Binary{Op: ir.Add, X: &ir.Binary{Op: ir.Add, X: a, Y: b, At: here}, Y: c, At: here}
	right := &ir.Binary{Op: ir.Add, X: a, Y: &ir.Binary{Op: ir.Add, X: b, Y: c, At: here}, At: here}
	if got := ir.ExprString(left); got != "1.0 + 2.0 + 3.0" {
		t.Errorf("left = %s", got)
	}
	if got := ir.ExprString(right); got != "1.0 + (2.0 + 3.0)" {
		t.Errorf("right = %s", got)
	}
	shift := &ir.Binary{Op: ir.Shl, X: &ir.Binary{Op: ir.Add, X: u32(1), Y: u32(2), At: here}, Y: u32(3), At: here}
	if got := ir.ExprString(shift); got != "(1u + 2u) << 3u" {
		t.Errorf("shift = %s", got)
	}
}

func TestEvalIntFollowsDerivedParams(t *testing.T) {
	sv := &ir.Param{Name: "S_v", Type: ir.U32}
	w := &ir.Param{Name: "W", Type: ir.U32, Derived: &ir.Select{
		Cond: &ir.Binary{Op: ir.Lt, X: &ir.ParamRef{Param: sv}, Y: u32(32)}, X: &ir.ParamRef{Param: sv}, Y: u32(32)}}
	r := &ir.Binary{Op: ir.Div, X: &ir.ParamRef{Param: sv}, Y: &ir.ParamRef{Param: w}}
	for _, c := range []struct{ sv, want int64 }{{16, 1}, {32, 1}, {128, 4}} {
		got, ok := ir.EvalInt(r, map[string]int64{"S_v": c.sv})
		if !ok || got != c.want {
			t.Errorf("R at S_v=%d = %d, %v; want %d", c.sv, got, ok, c.want)
		}
	}
	if _, ok := ir.EvalInt(r, nil); ok {
		t.Error("EvalInt without S_v should report unknown")
	}
}

func TestParseArith(t *testing.T) {
	for _, s := range []string{"portable", "native-cuda", "native-metal"} {
		a, err := ir.ParseArith(s)
		if err != nil || a.String() != s {
			t.Errorf("ParseArith(%q) = %v, %v", s, a, err)
		}
	}
	if _, err := ir.ParseArith("fast"); err == nil {
		t.Error("ParseArith(fast) should fail")
	}
}

// HasReduce and SharedArrays find what they look for however deeply nested,
// shared arrays in declaration order and private ones left out.
func TestKernelQueries(t *testing.T) {
	private := &ir.Array{Name: "p", Elem: ir.F32, Len: u32(4), Space: ir.Private, At: here}
	first := &ir.Array{Name: "a", Elem: ir.F32, Len: u32(32), Space: ir.Shared, At: here}
	second := &ir.Array{Name: "b", Elem: ir.I32, Len: u32(8), Space: ir.Shared, At: here}
	x := &ir.Var{Name: "x", Type: ir.F32, At: here}
	k := kernel(
		&ir.DeclArray{Array: private, At: here},
		&ir.DeclArray{Array: first, At: here},
		&ir.If{Cond: &ir.Const{T: ir.Bool, B: true, At: here}, Then: []ir.Stmt{
			&ir.DeclArray{Array: second, At: here},
			&ir.Reduce{Var: x, X: f32(1), Width: u32(32), Order: ir.Butterfly, At: here},
		}, At: here},
	)
	if !ir.HasReduce(k) || ir.HasReduce(kernel()) {
		t.Errorf("HasReduce: %v with a nested reduce, %v without", ir.HasReduce(k), ir.HasReduce(kernel()))
	}
	got := ir.SharedArrays(k)
	if len(got) != 2 || got[0] != first || got[1] != second {
		t.Errorf("SharedArrays = %v, want a then b", got)
	}
}
