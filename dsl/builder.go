// Package dsl is the Go DSL that op programs use to build ir.Kernels. A
// Builder is an explicit value (no globals); every node it creates records the
// file:line of the op code that asked for it, so validation errors point at
// the op definition, e.g. "ops/conv.go:41: ...".
package dsl

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/kernelgen/kernelgen/ir"
)

// Builder accumulates one kernel.
type Builder struct {
	k      *ir.Kernel
	errs   ir.ErrorList
	blocks []*[]ir.Stmt
	used   map[string]int
}

// New starts a kernel called name under the given arithmetic contract.
func New(name string, arith ir.Arith) *Builder {
	b := &Builder{used: map[string]int{}}
	b.k = &ir.Kernel{Name: name, Arith: arith, At: callerPos()}
	b.blocks = []*[]ir.Stmt{&b.k.Body}
	return b
}

// Arith is the contract the kernel is being built under.
func (b *Builder) Arith() ir.Arith { return b.k.Arith }

// Doc sets the kernel's documentation, carried into the IR text and the emitted sources.
func (b *Builder) Doc(s string) { b.k.Doc = s }

// Errorf records an error at the op code's position; Build reports it.
func (b *Builder) Errorf(format string, args ...any) {
	b.errs = append(b.errs, &ir.Error{Pos: callerPos(), Msg: fmt.Sprintf(format, args...)})
}

// Build validates the kernel and returns it, or every error found.
func (b *Builder) Build() (*ir.Kernel, error) {
	if len(b.blocks) != 1 {
		b.errs = append(b.errs, &ir.Error{Pos: b.k.At, Msg: "unclosed block"})
	}
	if len(b.errs) > 0 {
		return nil, b.errs
	}
	if err := ir.Validate(b.k); err != nil {
		return nil, err
	}
	return b.k, nil
}

// MustBuild is Build for op tables whose programs are covered by tests; it
// panics with every error listed.
func (b *Builder) MustBuild() *ir.Kernel {
	k, err := b.Build()
	if err != nil {
		panic(fmt.Sprintf("kernel %s:\n%v", b.k.Name, err))
	}
	return k
}

func (b *Builder) emit(s ir.Stmt) {
	blk := b.blocks[len(b.blocks)-1]
	*blk = append(*blk, s)
}

func (b *Builder) nest(body *[]ir.Stmt, f func()) {
	b.blocks = append(b.blocks, body)
	f()
	b.blocks = b.blocks[:len(b.blocks)-1]
}

// unique returns name, or name_N when name is taken, so helper routines can
// reuse readable names.
func (b *Builder) unique(name string) string {
	n, ok := b.used[name]
	b.used[name] = n + 1
	if !ok {
		return name
	}
	for {
		cand := fmt.Sprintf("%s_%d", name, n)
		if _, taken := b.used[cand]; !taken {
			b.used[cand] = 1
			return cand
		}
		n++
	}
}

// callerPos is the position of the first frame outside this package: the op
// code that called the DSL. Files print as dir/file.go so errors stay free of
// machine paths.
func callerPos() ir.Pos {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "github.com/kernelgen/kernelgen/dsl.") {
			return ir.Pos{File: filepath.Base(filepath.Dir(f.File)) + "/" + filepath.Base(f.File), Line: f.Line}
		}
		if !more {
			return ir.Pos{}
		}
	}
}

// Param declares a compile-time specialization parameter. For integer params,
// domain lists the allowed values (none: any).
func (b *Builder) Param(name string, t ir.Type, domain ...int64) Val {
	p := &ir.Param{Name: name, Type: t, Domain: domain, At: callerPos()}
	b.claim(name, p.At)
	b.k.Params = append(b.k.Params, p)
	return b.val(&ir.ParamRef{Param: p, At: p.At})
}

// Arg declares a runtime scalar argument.
func (b *Builder) Arg(name string, t ir.Type, doc string) Val {
	a := &ir.Arg{Name: name, Type: t, Doc: doc, At: callerPos()}
	b.claim(name, a.At)
	b.k.Args = append(b.k.Args, a)
	return b.val(&ir.ArgRef{Arg: a, At: a.At})
}

// Buffer declares a storage buffer; role ties it to the ggml node (src0..src9, dst, scratch).
func (b *Builder) Buffer(name string, elem ir.Type, access ir.Access, role, doc string) Buf {
	x := &ir.Buffer{Name: name, Elem: elem, Access: access, Role: role, Doc: doc, At: callerPos()}
	b.claim(name, x.At)
	b.k.Buffers = append(b.k.Buffers, x)
	return Buf{b: b, buf: x}
}

func (b *Builder) claim(name string, at ir.Pos) {
	if _, ok := b.used[name]; ok {
		b.errs = append(b.errs, &ir.Error{Pos: at, Msg: fmt.Sprintf("%q is declared twice; interface names must be unique", name)})
	}
	b.used[name]++
}

// Workgroup sets the workgroup size (compile-time expressions).
func (b *Builder) Workgroup(x, y, z any) {
	for i, v := range []any{x, y, z} {
		b.k.Workgroup[i] = b.lit(v, ir.U32).e
	}
}

// Grid sets the number of workgroups per dimension (params and args only).
func (b *Builder) Grid(x, y, z any) {
	for i, v := range []any{x, y, z} {
		b.k.Grid[i] = b.lit(v, ir.U32).e
	}
}

// GroupID is the workgroup's index along dim (0 x, 1 y, 2 z).
func (b *Builder) GroupID(dim int) Val {
	return b.val(&ir.BuiltinRef{Builtin: ir.GroupID, Dim: dim, At: callerPos()})
}

// LocalID is the thread's index in its workgroup along dim.
func (b *Builder) LocalID(dim int) Val {
	return b.val(&ir.BuiltinRef{Builtin: ir.LocalID, Dim: dim, At: callerPos()})
}

// Let names a value.
func (b *Builder) Let(name string, v any) Val {
	at := callerPos()
	x := b.lit(v, ir.Invalid)
	vr := &ir.Var{Name: b.unique(name), Type: x.Type(), At: at}
	b.emit(&ir.Let{Var: vr, Value: x.e, At: at})
	return b.val(&ir.VarRef{Var: vr, At: at})
}

// Mut is a mutable variable.
type Mut struct {
	b *Builder
	v *ir.Var
}

// Var declares a mutable variable with an initial value.
func (b *Builder) Var(name string, init any) Mut {
	at := callerPos()
	x := b.lit(init, ir.Invalid)
	vr := &ir.Var{Name: b.unique(name), Type: x.Type(), Mutable: true, At: at}
	b.emit(&ir.Let{Var: vr, Value: x.e, At: at})
	return Mut{b: b, v: vr}
}

// Get reads the variable.
func (m Mut) Get() Val { return m.b.val(&ir.VarRef{Var: m.v, At: callerPos()}) }

// Set assigns the variable.
func (m Mut) Set(v any) {
	at := callerPos()
	m.b.emit(&ir.Assign{Var: m.v, Value: m.b.lit(v, m.v.Type).e, At: at})
}

// Arr is an array in registers or shared memory.
type Arr struct {
	b *Builder
	a *ir.Array
}

// Array declares a per-thread register array of n elements (compile-time n).
func (b *Builder) Array(name string, elem ir.Type, n any) Arr {
	return b.array(name, elem, n, ir.Private)
}

// SharedArray declares a per-workgroup array of n elements (compile-time n).
func (b *Builder) SharedArray(name string, elem ir.Type, n any) Arr {
	return b.array(name, elem, n, ir.Shared)
}

func (b *Builder) array(name string, elem ir.Type, n any, sp ir.Space) Arr {
	at := callerPos()
	a := &ir.Array{Name: b.unique(name), Elem: elem, Len: b.lit(n, ir.U32).e, Space: sp, At: at}
	b.emit(&ir.DeclArray{Array: a, At: at})
	return Arr{b: b, a: a}
}

// At reads element i.
func (a Arr) At(i any) Val {
	return a.b.val(&ir.ArrayLoad{Array: a.a, Index: a.b.lit(i, ir.U32).e, At: callerPos()})
}

// Set writes element i.
func (a Arr) Set(i, v any) {
	at := callerPos()
	a.b.emit(&ir.ArrayStore{Array: a.a, Index: a.b.lit(i, ir.U32).e, Value: a.b.lit(v, a.a.Elem).e, At: at})
}

// Buf is a declared buffer.
type Buf struct {
	b   *Builder
	buf *ir.Buffer
}

// IR returns the underlying buffer.
func (x Buf) IR() *ir.Buffer { return x.buf }

// Prior marks a buffer the op's previous dispatch writes (ir.Buffer.Prior):
// read it only after DepWait.
func (x Buf) Prior() Buf {
	x.buf.Prior = true
	return x
}

// Load reads element i.
func (x Buf) Load(i any) Val {
	return x.b.val(&ir.Load{Buf: x.buf, Index: x.b.lit(i, ir.U32).e, At: callerPos()})
}

// Store writes element i.
func (x Buf) Store(i, v any) {
	at := callerPos()
	x.b.emit(&ir.Store{Buf: x.buf, Index: x.b.lit(i, ir.U32).e, Value: x.b.lit(v, x.buf.Elem.ValueType()).e, At: at})
}

// For runs body for i in [start, end) step 1.
func (b *Builder) For(name string, start, end any, body func(i Val)) {
	b.loop(name, start, end, 1, false, body)
}

// ForStep runs body for i = start, start+step, ... while i < end.
func (b *Builder) ForStep(name string, start, end, step any, body func(i Val)) {
	b.loop(name, start, end, step, false, body)
}

// Unrolled is For with a request to unroll fully (the trip count is compile-time in practice).
func (b *Builder) Unrolled(name string, start, end any, body func(i Val)) {
	b.loop(name, start, end, 1, true, body)
}

func (b *Builder) loop(name string, start, end, step any, unroll bool, body func(i Val)) {
	at := callerPos()
	e := b.lit(end, ir.U32)
	t := e.Type()
	if sv, ok := start.(Val); ok {
		t = sv.Type()
	}
	st := b.lit(start, t)
	vr := &ir.Var{Name: b.unique(name), Type: st.Type(), At: at}
	f := &ir.For{Var: vr, Start: st.e, End: b.lit(end, st.Type()).e, Step: b.lit(step, st.Type()).e, Unroll: unroll, At: at}
	b.emit(f)
	b.nest(&f.Body, func() { body(b.val(&ir.VarRef{Var: vr, At: at})) })
}

// If runs then when cond holds.
func (b *Builder) If(cond any, then func()) { b.ifElse(cond, then, nil) }

// IfElse runs then or els.
func (b *Builder) IfElse(cond any, then, els func()) { b.ifElse(cond, then, els) }

func (b *Builder) ifElse(cond any, then, els func()) {
	at := callerPos()
	s := &ir.If{Cond: b.lit(cond, ir.Bool).e, At: at}
	b.emit(s)
	b.nest(&s.Then, then)
	if els != nil {
		b.nest(&s.Else, els)
	}
}

// Barrier synchronises the workgroup and its shared memory.
func (b *Builder) Barrier() { b.emit(&ir.Barrier{At: callerPos()}) }

// DeviceBarrier synchronises the workgroup and orders its buffer accesses
// too: what a thread read or wrote before it, before what any other thread
// of the workgroup reads or writes after it.
func (b *Builder) DeviceBarrier() { b.emit(&ir.Barrier{Device: true, At: callerPos()}) }

// Reduce sums x over aligned clusters of width consecutive lanes in the given order.
func (b *Builder) Reduce(name string, x Val, width any, order ir.Order) Val {
	at := callerPos()
	vr := &ir.Var{Name: b.unique(name), Type: x.Type(), At: at}
	b.emit(&ir.Reduce{Var: vr, X: x.e, Width: b.lit(width, ir.U32).e, Order: order, At: at})
	return b.val(&ir.VarRef{Var: vr, At: at})
}

// Comment labels the following statements in the IR text and the emitted source.
func (b *Builder) Comment(format string, args ...any) {
	b.emit(&ir.Comment{Text: fmt.Sprintf(format, args...), At: callerPos()})
}

// Derived declares a compile-time constant computed from params (e.g. the
// reduction width from S_v). Variants do not set it.
func (b *Builder) Derived(name string, value Val) Val {
	p := &ir.Param{Name: name, Type: value.Type(), Derived: value.e, At: callerPos()}
	b.claim(name, p.At)
	b.k.Params = append(b.k.Params, p)
	return b.val(&ir.ParamRef{Param: p, At: p.At})
}

// Require states a condition on params that every variant must satisfy.
func (b *Builder) Require(cond Val, msg string) {
	b.k.Requires = append(b.k.Requires, &ir.Requirement{Cond: cond.e, Msg: msg, At: callerPos()})
}

// Caller is the position of the code that called the function calling
// Caller, for table helpers (such as ops.V) whose errors must point at the
// table line rather than at the helper.
func Caller() ir.Pos {
	_, file, line, ok := runtime.Caller(2)
	if !ok {
		return ir.Pos{}
	}
	return ir.Pos{File: filepath.Base(filepath.Dir(file)) + "/" + filepath.Base(file), Line: line}
}

// Assert states a precondition on the kernel's inputs that a backend able
// to stop checks there (native contracts only; see ir.Assert).
func (b *Builder) Assert(cond Val) { b.emit(&ir.Assert{Cond: cond.e, At: callerPos()}) }

// DepWait marks that what follows depends on the op's previous dispatch.
func (b *Builder) DepWait() { b.emit(&ir.DepSync{Kind: ir.DepWait, At: callerPos()}) }

// DepRelease lets the op's next dispatch start (up to its DepWait).
func (b *Builder) DepRelease() { b.emit(&ir.DepSync{Kind: ir.DepRelease, At: callerPos()}) }

// ArithFree marks the kernel as doing no arithmetic a contract decides
// (ir.Kernel.ArithFree): one portable kernel serves every contract.
func (b *Builder) ArithFree() { b.k.ArithFree = true }

// Occupancy sets the kernel's MinWorkgroupsPerCore hint.
func (b *Builder) Occupancy(minWorkgroupsPerCore int) {
	b.k.MinWorkgroupsPerCore = minWorkgroupsPerCore
}
