package ir

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Print renders a kernel as stable text: the same kernel always prints the
// same bytes, and positions are left out so that moving DSL code around does
// not change the output.
func Print(k *Kernel) string {
	p := &printer{}
	p.kernel(k)
	return p.b.String()
}

type printer struct {
	b     strings.Builder
	depth int
}

func (p *printer) line(format string, args ...any) {
	p.b.WriteString(strings.Repeat("    ", p.depth))
	fmt.Fprintf(&p.b, format, args...)
	p.b.WriteByte('\n')
}

func (p *printer) kernel(k *Kernel) {
	if k.ArithFree {
		p.line("kernel %s arith=%s arith-free", k.Name, k.Arith)
	} else {
		p.line("kernel %s arith=%s", k.Name, k.Arith)
	}
	if k.Doc != "" {
		for _, l := range strings.Split(strings.TrimSpace(k.Doc), "\n") {
			p.line("// %s", strings.TrimSpace(l))
		}
	}
	p.depth++
	for _, x := range k.Params {
		dom := ""
		if x.Domain != nil {
			vals := make([]string, len(x.Domain))
			for i, d := range x.Domain {
				vals[i] = strconv.FormatInt(d, 10)
			}
			dom = " in {" + strings.Join(vals, ", ") + "}"
		}
		if x.Derived != nil {
			p.line("param %s: %s = %s", x.Name, x.Type, ExprString(x.Derived))
			continue
		}
		p.line("param %s: %s%s", x.Name, x.Type, dom)
	}
	for _, r := range k.Requires {
		p.line("require %s // %s", ExprString(r.Cond), r.Msg)
	}
	for _, x := range k.Args {
		p.line("arg %s: %s", x.Name, x.Type)
	}
	for _, x := range k.Buffers {
		prior := ""
		if x.Prior {
			prior = " prior"
		}
		p.line("buffer %s: %s %s role=%s%s", x.Name, x.Elem, x.Access, x.Role, prior)
	}
	p.line("workgroup (%s, %s, %s)", ExprString(k.Workgroup[0]), ExprString(k.Workgroup[1]), ExprString(k.Workgroup[2]))
	p.line("grid (%s, %s, %s)", ExprString(k.Grid[0]), ExprString(k.Grid[1]), ExprString(k.Grid[2]))
	p.depth--
	p.line("{")
	p.depth++
	p.stmts(k.Body)
	p.depth--
	p.line("}")
}

func (p *printer) stmts(body []Stmt) {
	for _, s := range body {
		p.stmt(s)
	}
}

func (p *printer) block(head string, body []Stmt) {
	p.line("%s {", head)
	p.depth++
	p.stmts(body)
	p.depth--
}

func (p *printer) stmt(s Stmt) {
	switch s := s.(type) {
	case *Let:
		kw := "let"
		if s.Var.Mutable {
			kw = "var"
		}
		p.line("%s %s: %s = %s", kw, s.Var.Name, s.Var.Type, ExprString(s.Value))
	case *Assign:
		p.line("%s = %s", s.Var.Name, ExprString(s.Value))
	case *DeclArray:
		p.line("array %s: %s %s[%s]", s.Array.Name, s.Array.Space, s.Array.Elem, ExprString(s.Array.Len))
	case *ArrayStore:
		p.line("%s[%s] = %s", s.Array.Name, ExprString(s.Index), ExprString(s.Value))
	case *Store:
		p.line("store %s[%s] = %s", s.Buf.Name, ExprString(s.Index), ExprString(s.Value))
	case *For:
		head := fmt.Sprintf("for %s: %s in [%s, %s) step %s", s.Var.Name, s.Var.Type, ExprString(s.Start), ExprString(s.End), ExprString(s.Step))
		if s.Unroll {
			head += " unroll"
		}
		p.block(head, s.Body)
		p.line("}")
	case *If:
		p.block("if "+ExprString(s.Cond), s.Then)
		if len(s.Else) > 0 {
			p.line("} else {")
			p.depth++
			p.stmts(s.Else)
			p.depth--
		}
		p.line("}")
	case *Barrier:
		if s.Device {
			p.line("barrier(device)")
		} else {
			p.line("barrier")
		}
	case *Reduce:
		p.line("let %s: f32 = reduce_sum<%s, %s>(%s)", s.Var.Name, s.Order, ExprString(s.Width), ExprString(s.X))
	case *VecSilu:
		p.line("vec_silu<%s>(store %s, %s)", ExprString(s.N), s.Dst, s.Src)
	case *Comment:
		p.line("// %s", s.Text)
	case *DepSync:
		p.line("%s", s.Kind)
	case *Assert:
		p.line("assert %s", ExprString(s.Cond))
	default:
		p.line("<unknown %T>", s)
	}
}

// Precedence levels, C-like; higher binds tighter.
func prec(e Expr) int {
	b, ok := e.(*Binary)
	if !ok {
		return 100
	}
	switch b.Op {
	case LogOr:
		return 1
	case LogAnd:
		return 2
	case BitOr:
		return 3
	case BitXor:
		return 4
	case BitAnd:
		return 5
	case Eq, Ne:
		return 6
	case Lt, Le, Gt, Ge:
		return 7
	case Shl, Shr:
		return 8
	case Add, Sub:
		return 9
	default:
		return 10
	}
}

// ExprString renders an expression. Binary operators are left-associative;
// parentheses appear only where precedence needs them, so the evaluation
// order is always the one written.
func ExprString(e Expr) string {
	switch e := e.(type) {
	case nil:
		return "<nil>"
	case *Const:
		return ConstString(e)
	case *ParamRef:
		return e.Param.Name
	case *ArgRef:
		return e.Arg.Name
	case *BuiltinRef:
		return fmt.Sprintf("%s.%c", e.Builtin, "xyz"[e.Dim])
	case *VarRef:
		return e.Var.Name
	case *ArrayLoad:
		return fmt.Sprintf("%s[%s]", e.Array.Name, ExprString(e.Index))
	case *Load:
		return fmt.Sprintf("load %s[%s]", e.Buf.Name, ExprString(e.Index))
	case *Unary:
		switch e.Op {
		case Convert:
			return fmt.Sprintf("%s(%s)", e.To, ExprString(e.X))
		case Bitcast:
			return fmt.Sprintf("bitcast<%s>(%s)", e.To, ExprString(e.X))
		}
		x := ExprString(e.X)
		if prec(e.X) < 100 {
			x = "(" + x + ")"
		}
		return e.Op.String() + x
	case *Binary:
		pp := prec(e)
		l, r := ExprString(e.X), ExprString(e.Y)
		// Bit and shift operands are parenthesised whenever they are binary
		// expressions themselves: C's precedence there surprises readers.
		bitty := pp <= 8 && pp >= 3
		if prec(e.X) < pp || bitty && prec(e.X) < 100 {
			l = "(" + l + ")"
		}
		if prec(e.Y) <= pp || bitty && prec(e.Y) < 100 {
			r = "(" + r + ")"
		}
		return l + " " + e.Op.String() + " " + r
	case *Call:
		args := make([]string, len(e.Args))
		for i, a := range e.Args {
			args[i] = ExprString(a)
		}
		return e.Fn.String() + "(" + strings.Join(args, ", ") + ")"
	case *Select:
		return fmt.Sprintf("select(%s, %s, %s)", ExprString(e.Cond), ExprString(e.X), ExprString(e.Y))
	case *VecDot:
		return fmt.Sprintf("vec_dot<%s>(%s, %s)", ExprString(e.N), e.X, e.Y)
	}
	return fmt.Sprintf("<unknown %T>", e)
}

// ConstString renders a literal. F32 values print as the shortest decimal
// that round-trips, with the exact hex bits appended when the decimal is not
// obviously exact.
func ConstString(c *Const) string {
	switch c.T {
	case F32:
		return F32String(c.F)
	case Bool:
		return strconv.FormatBool(c.B)
	case U32:
		return strconv.FormatInt(c.I, 10) + "u"
	case U64:
		return strconv.FormatUint(uint64(c.I), 10) + "ul"
	}
	return strconv.FormatInt(c.I, 10)
}

// F32String prints a binary32 value unambiguously.
func F32String(f float32) string {
	if f == 0 && math.Signbit(float64(f)) {
		return "-0.0"
	}
	s := strconv.FormatFloat(float64(f), 'g', -1, 32)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}
