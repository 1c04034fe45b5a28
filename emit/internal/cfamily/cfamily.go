// Package cfamily prints IR statements and expressions once for the four
// C-like kernel languages (CUDA, GLSL, MSL, SYCL). A Dialect supplies what
// differs: type names, literals, intrinsics, builtins, buffer access,
// barriers, reductions and how portable kernels forbid contraction. Each
// backend's emitter owns its kernel signature, resource binding and variant
// instantiation, and calls Printer for the body.
package cfamily

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ir/ctype"
	"github.com/kernelgen/kernelgen/pass"
)

// Dialect is what one language spells differently.
type Dialect interface {
	// Type is the name of a value type.
	Type(t ir.Type) string
	// FloatLit spells a binary32 constant exactly.
	FloatLit(f float32) string
	UintLit(v uint32) string
	IntLit(v int32) string
	// Convert and Bitcast wrap x (already a primary expression or parenthesised).
	Convert(from, to ir.Type, x string) string
	Bitcast(from, to ir.Type, x string) string
	// Call spells an intrinsic. FMA must be a true fused multiply-add.
	Call(fn ir.Intrinsic, args []string) string
	// ExactBinary spells an f32 add, sub or mul that must round on its own
	// (portable kernels), or returns "" when the language marks exactness
	// elsewhere (GLSL's precise declarations) and the operator is enough.
	ExactBinary(op ir.BinOp, x, y string) string
	// Builtin spells group_id / local_id along dim.
	Builtin(b ir.Builtin, dim int) string
	// Load and Store spell access to buffer b, whose identifier is name.
	Load(b *ir.Buffer, name, idx string) string
	Store(b *ir.Buffer, name, idx, val string) string
	// Decl spells the declaration of a local scalar (without initialiser);
	// "" when the variable is stored elsewhere and a Let only assigns it.
	Decl(v *ir.Var, portable bool) string
	// ArrayDecl declares a private array called name. Shared arrays
	// (ir.SharedArrays) print nothing where the IR declares them: each
	// emitter declares them where its language keeps workgroup memory (CUDA
	// and MSL at the top of the kernel, GLSL at global scope, SYCL as
	// local-memory parameters its launcher allocates). Hoisting changes
	// nothing, as their elements start undefined and IR names are unique
	// within a kernel. "" declares nothing (the emitter stores it elsewhere).
	ArrayDecl(a *ir.Array, name, length string) string
	// Unroll is the line before a loop that should be unrolled ("" for none).
	Unroll() string
	// Barrier is the workgroup barrier statement; device: it also orders
	// the workgroup's buffer accesses (ir.Barrier.Device).
	Barrier(device bool) string
	// Reduce returns the lines that declare out (type f32) as the cluster sum
	// of x (see ir.Reduce); width is a compile-time expression. ex names
	// the reduction lowering's entities (Printer.LowerReduce; zero where
	// the emitter took none).
	Reduce(out, x, width string, order ir.Order, portable bool, ex Exchange) []string
	// Reserved reports names that cannot be used as identifiers.
	Reserved(name string) bool
	// DepSync spells a dispatch dependency point ("" where dispatches are
	// ordered anyway).
	DepSync(kind ir.DepKind) string
}

// Vectors is the optional part of a Dialect for the vector operations
// (ir.VecDot, ir.VecSilu), which only native-cpu kernels use; x, y, dst and
// src are pointer expressions, n the element count.
type Vectors interface {
	VecDot(n, x, y string) string
	VecSilu(n, dst, src string) string
}

// Asserts is the optional part of a Dialect for ir.Assert, which only
// native-cpu kernels hold (a backend that can stop): the statement that
// stops where cond is false.
type Asserts interface {
	Assert(cond string) string
}

// Printer renders one kernel body.
type Printer struct {
	D        Dialect
	K        *ir.Kernel
	portable bool
	names    map[any]string
	taken    map[string]bool
	lines    []string
	depth    int
	// scopes, when set (ScopeNames), holds the local names declared in each
	// open block, innermost last.
	scopes []map[string]bool
	// elseIf: an else block that is one if prints as else if (ElseIf).
	elseIf bool
	// ex is the reduction lowering the kernel's Reduces print through
	// (LowerReduce), nil where the emitter took none.
	ex *pass.Exchange
}

// Exchange is what a dialect's Reduce prints of the reduction lowering
// (pass.Exchange): the names its entities have in this kernel.
type Exchange struct{ Shared, Lin, Off string }

// LowerReduce takes the lowering of k's reductions for a target whose
// subgroup may be narrower than a reduction (pass.Facts.Exchange): its
// entities are named before the body, and every Reduce prints through
// them. The emitter declares Shared and Lin; nil when k does not reduce.
func (p *Printer) LowerReduce() *pass.Exchange {
	p.ex = pass.Of(p.K).Exchange
	if p.ex != nil {
		p.Name(p.ex.Shared, p.ex.Shared.Name)
		p.Name(p.ex.Lin, p.ex.Lin.Name)
		p.Name(p.ex.Off, p.ex.Off.Name)
	}
	return p.ex
}

func (p *Printer) exchange() Exchange {
	if p.ex == nil {
		return Exchange{}
	}
	return Exchange{Shared: p.names[p.ex.Shared], Lin: p.names[p.ex.Lin], Off: p.names[p.ex.Off]}
}

// ElseIf prints an else block that holds a single if statement as an
// else-if chain.
func (p *Printer) ElseIf() { p.elseIf = true }

// New prepares a printer for k.
func New(d Dialect, k *ir.Kernel) *Printer {
	p := &Printer{D: d, K: k, portable: !k.Arith.Native, names: map[any]string{}, taken: map[string]bool{}}
	for _, x := range k.Params {
		p.Name(x, x.Name)
	}
	for _, x := range k.Args {
		p.Name(x, x.Name)
	}
	for _, x := range k.Buffers {
		p.Name(x, x.Name)
	}
	return p
}

// NewUpstream prepares a printer for text handed upstream: locals named by
// scope (ScopeNames) and else-if chains (ElseIf), as a person writes them.
func NewUpstream(d Dialect, k *ir.Kernel) *Printer {
	p := New(d, k)
	p.ScopeNames()
	p.ElseIf()
	return p
}

// ScopeNames names locals as a person would: each takes its IR name without
// the builder's numeric suffix (col_3 -> col) wherever no name visible there
// has it, so every loop over columns has its own col. Nothing is shadowed:
// a name still visible from an enclosing block gets a suffix.
func (p *Printer) ScopeNames() { p.scopes = []map[string]bool{{}} }

var builderSuffix = regexp.MustCompile(`_[0-9]+$`)

// declare names a local at its declaration (see ScopeNames; without it,
// Name).
func (p *Printer) declare(key any, name string) string {
	if p.scopes == nil {
		return p.Name(key, name)
	}
	if n, ok := p.names[key]; ok {
		return n
	}
	base := builderSuffix.ReplaceAllString(name, "")
	if base == "" {
		base = name
	}
	visible := func(n string) bool {
		for _, sc := range p.scopes {
			if sc[n] {
				return true
			}
		}
		return false
	}
	if p.D.Reserved(base) {
		base += "_" // a keyword of the language (GLSL's out): out_, not out_1
	}
	n := base
	for i := 1; implementationName(n) || p.D.Reserved(n) || p.taken[n] || visible(n); i++ {
		n = fmt.Sprintf("%s_%d", base, i)
	}
	p.scopes[len(p.scopes)-1][n] = true
	p.names[key] = n
	return n
}

// open and close a block's scope (see ScopeNames).
func (p *Printer) open() {
	if p.scopes != nil {
		p.scopes = append(p.scopes, map[string]bool{})
	}
}

func (p *Printer) close() {
	if p.scopes != nil {
		p.scopes = p.scopes[:len(p.scopes)-1]
	}
}

// SetName fixes the spelling of an entity before printing, e.g. GLSL's
// push-constant fields (pc.H).
func (p *Printer) SetName(key any, name string) { p.names[key] = name }

// Portable reports whether the kernel is under the portable contract.
func (p *Printer) Portable() bool { return p.portable }

// Name returns the identifier for an IR entity, renaming reserved words and
// clashes with the language's builtins or other entities (exp -> exp_). A
// name no suffix can free (a reserved prefix such as GLSL's gl_) or whose
// suffixed form is taken too gets a numbered prefix (gl_x -> v2_gl_x);
// double underscores, reserved everywhere, become single (x__y -> x_y_).
func (p *Printer) Name(key any, name string) string {
	if n, ok := p.names[key]; ok {
		return n
	}
	free := func(n string) bool { return !implementationName(n) && !p.D.Reserved(n) && !p.taken[n] }
	base := name
	for strings.Contains(base, "__") {
		base = strings.ReplaceAll(base, "__", "_")
	}
	n := name
	for i := 1; !free(n); i++ {
		switch {
		case i == 1:
			n = base + "_"
		case i < 1000:
			n = fmt.Sprintf("v%d_%s", i, base)
		default:
			panic(fmt.Sprintf("cfamily: no identifier free for %q: the dialect reserves every candidate", name))
		}
	}
	p.taken[n] = true
	p.names[key] = n
	return n
}

// implementationName reports the names C++ and GLSL keep for their
// implementations by form: any with a double underscore. (The other C++
// form, _ and a capital first, is no IR identifier.)
func implementationName(n string) bool { return strings.Contains(n, "__") }

// Line appends one line at the current depth.
func (p *Printer) Line(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if s == "" {
		p.lines = append(p.lines, "")
		return
	}
	p.lines = append(p.lines, strings.Repeat("    ", p.depth)+s)
}

// Indent and Dedent change the depth of following lines.
func (p *Printer) Indent() { p.depth++ }
func (p *Printer) Dedent() { p.depth-- }

// Lines returns what was printed and resets the buffer.
func (p *Printer) Lines() []string {
	out := p.lines
	p.lines = nil
	return out
}

// Stmts prints a block of statements.
func (p *Printer) Stmts(body []ir.Stmt) {
	for _, s := range body {
		p.Stmt(s)
	}
}

// Stmt prints one statement.
func (p *Printer) Stmt(s ir.Stmt) {
	switch s := s.(type) {
	case *ir.Let:
		if decl := p.D.Decl(s.Var, p.portable); decl != "" {
			value := p.Expr(s.Value)
			p.Line("%s %s = %s;", decl, p.declare(s.Var, s.Var.Name), value)
		} else {
			p.Line("%s = %s;", p.Name(s.Var, s.Var.Name), p.Expr(s.Value))
		}
	case *ir.Assign:
		p.Line("%s = %s;", p.Name(s.Var, s.Var.Name), p.Expr(s.Value))
	case *ir.DeclArray:
		if s.Array.Space != ir.Private {
			break
		}
		if decl := p.D.ArrayDecl(s.Array, p.declare(s.Array, s.Array.Name), p.Expr(s.Array.Len)); decl != "" {
			p.Line("%s", decl)
		}
	case *ir.ArrayStore:
		p.Line("%s[%s] = %s;", p.Name(s.Array, s.Array.Name), p.Expr(s.Index), p.Expr(s.Value))
	case *ir.Store:
		p.Line("%s;", p.D.Store(s.Buf, p.names[s.Buf], p.Expr(s.Index), p.Expr(s.Value)))
	case *ir.For:
		if s.Unroll {
			if u := p.D.Unroll(); u != "" {
				p.Line("%s", u)
			}
		}
		p.open()
		defer p.close()
		v := p.declare(s.Var, s.Var.Name)
		step := "++" + v
		if c, ok := s.Step.(*ir.Const); !ok || c.I != 1 {
			step = v + " += " + p.Expr(s.Step)
		}
		p.Line("for (%s %s = %s; %s < %s; %s) {", p.D.Type(s.Var.Type), v, p.Expr(s.Start), v, p.Expr(s.End), step)
		p.Indent()
		p.Stmts(s.Body)
		p.Dedent()
		p.Line("}")
	case *ir.If:
		p.ifStmt(s, false)
	case *ir.Barrier:
		p.Line("%s", p.D.Barrier(s.Device))
	case *ir.Reduce:
		x := p.Expr(s.X)
		for _, l := range p.D.Reduce(p.declare(s.Var, s.Var.Name), x, p.Expr(s.Width), s.Order, p.portable, p.exchange()) {
			p.Line("%s", l)
		}
	case *ir.VecSilu:
		p.Line("%s;", p.vectors(s).VecSilu(p.Expr(s.N), p.Span(s.Dst), p.Span(s.Src)))
	case *ir.Assert:
		a, ok := p.D.(Asserts)
		if !ok {
			panic(fmt.Sprintf("cfamily: %s: an assert, and the dialect cannot stop", s.At))
		}
		p.Line("%s", a.Assert(p.Expr(s.Cond)))
	case *ir.Comment:
		p.Line("// %s", s.Text)
	case *ir.DepSync:
		if text := p.D.DepSync(s.Kind); text != "" {
			p.Line("%s", text)
		}
	default:
		panic(fmt.Sprintf("cfamily: unknown statement %T", s))
	}
}

// precedence of a printed binary operator, C rules (higher binds tighter).
func precedence(op ir.BinOp) int {
	switch op {
	case ir.LogOr:
		return 1
	case ir.LogAnd:
		return 2
	case ir.BitOr:
		return 3
	case ir.BitXor:
		return 4
	case ir.BitAnd:
		return 5
	case ir.Eq, ir.Ne:
		return 6
	case ir.Lt, ir.Le, ir.Gt, ir.Ge:
		return 7
	case ir.Shl, ir.Shr:
		return 8
	case ir.Add, ir.Sub:
		return 9
	}
	return 10
}

// Expr prints an expression; every sub-expression that is itself an
// operator application is parenthesised unless C precedence and left
// association already give the written order.
func (p *Printer) Expr(e ir.Expr) string {
	s, _ := p.expr(e)
	return s
}

// expr returns the text and its precedence (100 for primary expressions).
func (p *Printer) expr(e ir.Expr) (string, int) {
	switch e := e.(type) {
	case *ir.Const:
		switch e.T {
		case ir.F32:
			return p.D.FloatLit(e.F), 100
		case ir.U32:
			return p.D.UintLit(uint32(e.I)), 100
		case ir.U64:
			// A u64 literal is a u32 one widened: the dialects' 32-bit
			// literals are enough for the offsets u64 is for.
			if e.I < 0 || e.I > 0xffffffff {
				panic(fmt.Sprintf("cfamily: %s: u64 literal %d does not fit 32 bits", e.At, e.I))
			}
			lit := p.D.UintLit(uint32(e.I))
			if p.D.Type(ir.U32) == p.D.Type(ir.U64) {
				return lit, 100
			}
			return p.D.Convert(ir.U32, ir.U64, lit), 100
		case ir.I32:
			s := p.D.IntLit(int32(e.I))
			if e.I < 0 {
				return "(" + s + ")", 100
			}
			return s, 100
		case ir.Bool:
			return fmt.Sprint(e.B), 100
		}
	case *ir.ParamRef:
		return p.names[e.Param], 100
	case *ir.ArgRef:
		return p.names[e.Arg], 100
	case *ir.BuiltinRef:
		return p.D.Builtin(e.Builtin, e.Dim), 100
	case *ir.VarRef:
		return p.Name(e.Var, e.Var.Name), 100
	case *ir.ArrayLoad:
		return fmt.Sprintf("%s[%s]", p.Name(e.Array, e.Array.Name), p.Expr(e.Index)), 100
	case *ir.Load:
		return p.D.Load(e.Buf, p.names[e.Buf], p.Expr(e.Index)), 100
	case *ir.Unary:
		if e.Op == ir.Convert && p.D.Type(e.X.Type()) == p.D.Type(e.To) {
			// One type in this language (GLSL's u32 and u64, emit/glsl's Types):
			// nothing to convert.
			return p.expr(e.X)
		}
		x, xp := p.expr(e.X)
		if xp < 100 {
			x = "(" + x + ")"
		}
		switch e.Op {
		case ir.Convert:
			return p.D.Convert(e.X.Type(), e.To, x), 100
		case ir.Bitcast:
			return p.D.Bitcast(e.X.Type(), e.To, trimParens(x)), 100
		}
		op := "-"
		if e.Op == ir.Not {
			op = "!"
		}
		return op + x, 99
	case *ir.Binary:
		if d, ok := p.D.(Divider); ok && (e.Op == ir.Div || e.Op == ir.Rem) {
			if a, ok := e.Y.(*ir.ArgRef); ok && d.DividesBy(p.K, a.Arg) {
				x, _ := p.expr(e.X)
				return d.Divide(e.Op, x, p.Name(a.Arg, a.Arg.Name)), 100
			}
		}
		x, xp, y, yp := p.operands(e)
		if p.portable && e.X.Type() == ir.F32 && (e.Op == ir.Add || e.Op == ir.Sub || e.Op == ir.Mul) {
			if s := p.D.ExactBinary(e.Op, x, y); s != "" {
				return s, 100
			}
		}
		pp := precedence(e.Op)
		// Bit operators, comparisons and shifts get their operators'
		// operands parenthesised, and || its && operands, as readers (and
		// gcc's -Wparentheses, under ggml's -Wall) expect.
		bitty := pp >= 3 && pp <= 8
		andInOr := e.Op == ir.LogOr
		if xp < pp || bitty && xp < 99 || andInOr && xp == 2 {
			x = "(" + x + ")"
		}
		if yp <= pp || bitty && yp < 99 || andInOr && yp == 2 {
			y = "(" + y + ")"
		}
		return x + " " + e.Op.String() + " " + y, pp
	case *ir.Call:
		args := make([]string, len(e.Args))
		for i, a := range e.Args {
			args[i] = p.Expr(a)
		}
		if e.Fn == ir.Min || e.Fn == ir.Max {
			// The IR's min/max are selects (y < x ? y : x), not fmin/fmax,
			// whose results on -0.0 and NaN differ between languages.
			cmp := "<"
			if e.Fn == ir.Max {
				cmp = ">"
			}
			return fmt.Sprintf("(%s %s %s ? %s : %s)", args[1], cmp, args[0], args[1], args[0]), 100
		}
		return p.D.Call(e.Fn, args), 100
	case *ir.Select:
		return fmt.Sprintf("(%s ? %s : %s)", p.Expr(e.Cond), p.Expr(e.X), p.Expr(e.Y)), 100
	case *ir.VecDot:
		return p.vectors(e).VecDot(p.Expr(e.N), p.Span(e.X), p.Span(e.Y)), 100
	}
	panic(fmt.Sprintf("cfamily: unknown expression %T", e))
}

// UsualConversions is the optional part of a Dialect whose binary
// arithmetic operators convert a 32-bit integer operand to the other
// operand's 64-bit unsigned type by themselves, as C does (CStyle: C, CUDA,
// SYCL, MSL, OpenCL C). The printer then leaves out casts to u64 a person
// would not write (Printer.operands).
type UsualConversions interface{ UsualConversions() }

// operands prints a binary operation's operands with their precedences. In
// u64 arithmetic where the dialect converts as C does, a widening operand
// (a u32 or i32 converted to u64, or a u64 literal, which prints as a
// widened u32 one) prints without its cast wherever the other operand is
// u64 as printed: the right one first, so in (u64) a * (u64) b the first
// cast stays. (Every other u64 expression prints in the 64-bit type: a
// local declared so, a cast that stays, or such an operation.) This is exact: under C's usual arithmetic conversions (C11
// 6.3.1.8, C++ [expr.arith.conv]; MSL keeps C++14's and OpenCL C C99's for
// scalars) a uint32_t or int32_t operand meeting a 64-bit unsigned one is
// converted to that type, modulo 2^64 (C11 6.3.1.3), as the cast converts
// it, i32 sign-extended; and the operand itself is still evaluated in its
// own type first (C types flow up, never down), so a u32 product the IR
// wraps at 2^32 wraps there in C too, cast or not. Shifts (whose type is
// the left operand's alone), comparisons (where -Wsign-compare objects to
// i32 against u64) and every other dialect (GLSL) keep their casts; the IR
// keeps its conversions either way.
func (p *Printer) operands(e *ir.Binary) (x string, xp int, y string, yp int) {
	if _, ok := p.D.(UsualConversions); ok && e.Type() == ir.U64 && usualArithmetic(e.Op) {
		if narrow, ok := widening(e.Y); ok {
			x, xp = p.expr(e.X)
			y, yp = p.expr(narrow)
			return
		}
		if narrow, ok := widening(e.X); ok {
			x, xp = p.expr(narrow)
			y, yp = p.expr(e.Y)
			return
		}
	}
	x, xp = p.expr(e.X)
	y, yp = p.expr(e.Y)
	return
}

// usualArithmetic reports whether op is a C operator whose operands the usual
// arithmetic conversions bring to one type, which is its result's.
func usualArithmetic(op ir.BinOp) bool {
	switch op {
	case ir.Add, ir.Sub, ir.Mul, ir.Div, ir.Rem, ir.BitAnd, ir.BitOr, ir.BitXor:
		return true
	}
	return false
}

// widening returns the 32-bit integer e converts to u64, and whether e is
// such a conversion: a Convert from u32 or i32, or a u64 literal that fits
// a u32 one (the only u64 literals the printer takes).
func widening(e ir.Expr) (ir.Expr, bool) {
	switch e := e.(type) {
	case *ir.Unary:
		if e.Op == ir.Convert && e.To == ir.U64 && (e.X.Type() == ir.U32 || e.X.Type() == ir.I32) {
			return e.X, true
		}
	case *ir.Const:
		if e.T == ir.U64 && e.I >= 0 && e.I <= 0xffffffff {
			return &ir.Const{T: ir.U32, I: e.I, At: e.At}, true
		}
	}
	return nil, false
}

// Span is a pointer expression for a vector operand: the array or buffer
// plus its offset.
func (p *Printer) Span(s ir.Span) string {
	name := p.names[s.Buf]
	if s.Array != nil {
		name = p.Name(s.Array, s.Array.Name)
	}
	if c, ok := s.Off.(*ir.Const); ok && c.I == 0 {
		return name
	}
	off, prec := p.expr(s.Off)
	if prec <= 9 {
		off = "(" + off + ")"
	}
	return name + " + " + off
}

func (p *Printer) vectors(at interface{ Pos() ir.Pos }) Vectors {
	v, ok := p.D.(Vectors)
	if !ok {
		panic(fmt.Sprintf("cfamily: %s: vector operations are native-cpu only; this dialect has none", at.Pos()))
	}
	return v
}

func trimParens(s string) string {
	if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") && balanced(s[1:len(s)-1]) {
		return s[1 : len(s)-1]
	}
	return s
}

func balanced(s string) bool {
	d := 0
	for _, c := range s {
		switch c {
		case '(':
			d++
		case ')':
			d--
			if d < 0 {
				return false
			}
		}
	}
	return d == 0
}

// FloatDigits is the shortest decimal that reads back as f exactly, with a
// ".0" where it would otherwise look like an integer.
func FloatDigits(f float32) string { return ir.F32String(f) }

// WorkgroupSize returns the product of the kernel's workgroup dimensions as
// an expression text (for shared reduction buffers and launch bounds).
func (p *Printer) WorkgroupSize() string {
	var parts []string
	for _, w := range p.K.Workgroup {
		if c, ok := w.(*ir.Const); ok && c.I == 1 {
			continue
		}
		s, prec := p.expr(w)
		if prec < 10 {
			s = "(" + s + ")"
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return p.D.UintLit(1)
	}
	return strings.Join(parts, " * ")
}

// CStyle spells the constructs on which CUDA, SYCL and MSL agree: scalar
// types (named per language by ctype), literals with an f suffix, C casts, subscripted
// buffer access and const locals. Those dialects embed it and add what
// differs; GLSL spells literals, casts and declarations its own way.
type CStyle struct{ Types ctype.Dialect }

func (c CStyle) Type(t ir.Type) string { return c.Types.Of(t) }

// UsualConversions: C, C++, MSL and OpenCL C convert mixed integer
// operands alike (see Printer.operands).
func (CStyle) UsualConversions() {}

func (CStyle) FloatLit(f float32) string { return FloatDigits(f) + "f" }
func (CStyle) UintLit(v uint32) string   { return fmt.Sprintf("%du", v) }
func (CStyle) IntLit(v int32) string     { return fmt.Sprint(v) }

func (c CStyle) Convert(_, to ir.Type, x string) string {
	return fmt.Sprintf("(%s) %s", c.Type(to), x)
}

func (CStyle) Load(_ *ir.Buffer, name, idx string) string { return name + "[" + idx + "]" }
func (CStyle) Store(_ *ir.Buffer, name, idx, val string) string {
	return name + "[" + idx + "] = " + val
}

func (c CStyle) Decl(v *ir.Var, _ bool) string {
	if v.Mutable {
		return c.Type(v.Type)
	}
	return "const " + c.Type(v.Type)
}

func (c CStyle) ArrayDecl(a *ir.Array, name, length string) string {
	return fmt.Sprintf("%s %s[%s];", c.Type(a.Elem), name, length)
}

// SharedButterfly is the branch every dialect's Reduce ends with: for a
// subgroup narrower than width, the same xor butterfly through the
// lowering's workgroup array (ex), a barrier around each exchange. suffix
// is the dialect's unsigned-literal suffix in the loop ("u" for GLSL, where
// mixing signedness is an error; "" for the C++ dialects).
func SharedButterfly(d Dialect, ex Exchange, out, width, suffix string) []string {
	return []string{
		"} else {",
		fmt.Sprintf("    for (%s %s = %s / 2%s; %s > 0%s; %s >>= 1%s) {", d.Type(ir.U32), ex.Off, width, suffix, ex.Off, suffix, ex.Off, suffix),
		fmt.Sprintf("        %s[%s] = %s;", ex.Shared, ex.Lin, out),
		"        " + d.Barrier(false),
		fmt.Sprintf("        %s += %s[%s ^ %s];", out, ex.Shared, ex.Lin, ex.Off),
		"        " + d.Barrier(false),
		"    }",
		"}",
	}
}

// ifStmt prints an if statement, as "} else if" where chained (ElseIf).
func (p *Printer) ifStmt(s *ir.If, chained bool) {
	start := len(p.lines)
	if chained {
		p.Line("} else if (%s) {", trimParens(p.Expr(s.Cond)))
	} else {
		p.Line("if (%s) {", trimParens(p.Expr(s.Cond)))
	}
	p.Indent()
	p.open()
	p.Stmts(s.Then)
	p.close()
	p.Dedent()
	then := len(p.lines)
	if len(s.Else) > 0 {
		if inner, ok := s.Else[0].(*ir.If); ok && len(s.Else) == 1 && p.elseIf {
			p.ifStmt(inner, true) // closes the chain
			return
		}
		p.Line("} else {")
		p.Indent()
		p.open()
		p.Stmts(s.Else)
		p.close()
		p.Dedent()
	}
	if !chained && then == start+1 && len(p.lines) <= then+1 {
		// Both branches print nothing here (a DepWait where dispatches
		// run in order): no empty if.
		p.lines = p.lines[:start]
		return
	}
	p.Line("}")
}
