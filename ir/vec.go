package ir

import "fmt"

// Span is N consecutive f32 elements (N given by the operation) of an array
// or a buffer, from element Off. Exactly one of Array and Buf is set.
type Span struct {
	Array *Array
	Buf   *Buffer
	Off   Expr
}

// VecDot is the backend's vector dot product: the sum over i < N of
// X[i]*Y[i]. Association and contraction are the backend's: ggml-cpu's
// ggml_vec_dot_f32 keeps several vector accumulators whose shape depends on
// the ISA, so its bits are a property of the build. Native kernels only. The
// Go reference sums i ascending from +0.0, every product and sum rounded.
type VecDot struct {
	X, Y Span
	N    Expr
	At   Pos
}

// VecSilu writes Src[i] / (1 + exp(-Src[i])) to Dst[i] for i < N with the
// backend's vector SiLU. Its rounding may depend on an element's position
// from the start of the call (ggml_vec_silu_f32 takes vector steps, then a
// scalar tail), so a kernel that must match a row-wise SiLU starts each call
// at the row's start or a multiple of 16 elements from it (the widest step
// of ggml's x86 and NEON code; its SVE and RISC-V code has no scalar tail).
// Native kernels only; the Go reference evaluates every element as SiLU
// with ExpNative.
type VecSilu struct {
	Dst, Src Span
	N        Expr
	At       Pos
}

func (e *VecDot) Type() Type { return F32 }
func (e *VecDot) Pos() Pos   { return e.At }
func (*VecDot) isExpr()      {}

func (s *VecSilu) Pos() Pos { return s.At }
func (*VecSilu) isStmt()    {}

// Name is the array's or buffer's name.
func (s Span) Name() string {
	if s.Array != nil {
		return s.Array.Name
	}
	return s.Buf.Name
}

// String renders the span as name[off..]; a buffer's as "load" or "store"
// followed by that, per use.
func (s Span) String() string { return fmt.Sprintf("%s[%s..]", s.Name(), ExprString(s.Off)) }

// span checks one operand of a vector operation (its offset is walked
// with the expression or statement that holds it).
func (v *validator) span(s Span, write bool, sc *scope, at Pos) {
	if (s.Array == nil) == (s.Buf == nil) {
		v.errs.add(at, "a span names exactly one array or buffer")
		return
	}
	if !s.Off.Type().IsInt() {
		v.errs.add(at, "span offset has type %s; use an integer", s.Off.Type())
	}
	if s.Array != nil {
		if !sc.hasArray(s.Array) {
			v.errs.add(at, "array %s is used outside its scope", s.Array.Name)
		}
		if s.Array.Elem != F32 {
			v.errs.add(at, "vector operation on %s array %s; f32 only", s.Array.Elem, s.Array.Name)
		}
		return
	}
	switch {
	case !v.bufs[s.Buf]:
		v.errs.add(at, "buffer %s is not declared by this kernel", s.Buf.Name)
	case s.Buf.Elem != F32:
		v.errs.add(at, "vector operation on %s buffer %s; f32 only", s.Buf.Elem, s.Buf.Name)
	case write && !s.Buf.Access.CanWrite():
		v.errs.add(at, "vector store to buffer %s, which is declared %s", s.Buf.Name, s.Buf.Access)
	case !write && !s.Buf.Access.CanRead():
		v.errs.add(at, "vector load from buffer %s, which is declared %s", s.Buf.Name, s.Buf.Access)
	}
}

func (v *validator) vecLen(n Expr, at Pos, what string) {
	if !n.Type().IsInt() {
		v.errs.add(at, "%s length has type %s; use an integer", what, n.Type())
	}
	if !v.k.Arith.Native {
		v.errs.add(at, "%s in a portable kernel: its rounding is backend-defined", what)
	}
}
