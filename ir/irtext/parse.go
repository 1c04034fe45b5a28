// Package irtext reads the IR text that ir.Print writes back into a kernel,
// so that a kernel stored as text (generated/ir/*.ir at any revision) can be
// compared and executed without the op program that built it.
//
// Print(Parse(text)) == text for every text Print writes. What the text
// leaves out stays out: DSL positions (every parsed node's Pos is the file
// and line of the text instead), docs of params, args and buffers, and the
// occupancy hint. F32 constants come back bit for bit except NaN payloads,
// which the text does not keep. A negative literal comes back as the
// negation of a positive one, which prints and evaluates the same.
package irtext

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/kernelgen/kernelgen/ir"
)

// Error is a parse error at a line of the text.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Parse reads one kernel. file names the text in errors and positions. The
// kernel is validated (ir.Validate) before it is returned.
func Parse(file, text string) (*ir.Kernel, error) {
	p := &parser{file: file, names: map[string]any{}}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	k, err := p.kernel(lines)
	if err != nil {
		return nil, err
	}
	if err := ir.Validate(k); err != nil {
		return nil, fmt.Errorf("%s: the kernel does not validate: %v", file, err)
	}
	return k, nil
}

type parser struct {
	file  string
	line  int // 1-based line being parsed
	names map[string]any
	k     *ir.Kernel
}

func (p *parser) errf(format string, args ...any) error {
	return &Error{File: p.file, Line: p.line, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) pos() ir.Pos { return ir.Pos{File: p.file, Line: p.line} }

func (p *parser) declare(name string, v any) error {
	if _, ok := p.names[name]; ok {
		return p.errf("%s is declared twice", name)
	}
	p.names[name] = v
	return nil
}

func (p *parser) kernel(lines []string) (*ir.Kernel, error) {
	i := 0
	// The generated-file header: comment lines before the kernel line.
	for i < len(lines) && strings.HasPrefix(lines[i], "//") {
		i++
	}
	if i == len(lines) {
		p.line = i
		return nil, p.errf("no kernel line: want \"kernel NAME arith=CONTRACT\"")
	}
	p.line = i + 1
	head := strings.Fields(lines[i])
	arithFree := len(head) == 4 && head[3] == "arith-free"
	if len(head) != 3 && !arithFree || head[0] != "kernel" || !strings.HasPrefix(head[2], "arith=") {
		return nil, p.errf("want \"kernel NAME arith=CONTRACT\" (and \"arith-free\" for a copy), got %q", lines[i])
	}
	arith, err := ir.ParseArith(strings.TrimPrefix(head[2], "arith="))
	if err != nil {
		return nil, p.errf("%v", err)
	}
	k := &ir.Kernel{Name: head[1], Arith: arith, ArithFree: arithFree, At: p.pos()}
	p.k = k
	i++
	var doc []string
	for ; i < len(lines); i++ {
		p.line = i + 1
		l := lines[i]
		if l == "{" {
			break
		}
		if !strings.HasPrefix(l, "    ") {
			if c, ok := strings.CutPrefix(l, "//"); ok {
				doc = append(doc, strings.TrimPrefix(c, " "))
				continue
			}
			return nil, p.errf("unexpected %q in the kernel header", l)
		}
		if err := p.header(strings.TrimPrefix(l, "    ")); err != nil {
			return nil, err
		}
	}
	k.Doc = strings.Join(doc, "\n")
	if i == len(lines) {
		return nil, p.errf("the kernel has no body: want a line \"{\"")
	}
	for d := 0; d < 3; d++ {
		if k.Workgroup[d] == nil || k.Grid[d] == nil {
			return nil, p.errf("the header has no workgroup or grid line")
		}
	}
	body, next, err := p.block(lines, i+1, 1)
	if err != nil {
		return nil, err
	}
	k.Body = body
	if next >= len(lines) || lines[next] != "}" {
		p.line = next + 1
		return nil, p.errf("want \"}\" closing the kernel body")
	}
	for _, l := range lines[next+1:] {
		p.line++
		if strings.TrimSpace(l) != "" {
			return nil, p.errf("text after the kernel body")
		}
	}
	return k, nil
}

func (p *parser) header(l string) error {
	k := p.k
	word, rest, _ := strings.Cut(l, " ")
	switch word {
	case "param":
		name, typ, ok := strings.Cut(rest, ": ")
		if !ok {
			return p.errf("want \"param NAME: TYPE\"")
		}
		x := &ir.Param{Name: name, At: p.pos()}
		if t, derived, ok := strings.Cut(typ, " = "); ok {
			typ = t
			e, err := p.exprText(derived)
			if err != nil {
				return err
			}
			x.Derived = e
		} else if t, dom, ok := strings.Cut(typ, " in "); ok {
			typ = t
			if !strings.HasPrefix(dom, "{") || !strings.HasSuffix(dom, "}") {
				return p.errf("want a domain \"{a, b, ...}\", got %q", dom)
			}
			x.Domain = []int64{}
			for _, f := range strings.Split(strings.Trim(dom, "{}"), ",") {
				if strings.TrimSpace(f) == "" {
					continue
				}
				v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
				if err != nil {
					return p.errf("domain value %q is not an integer", f)
				}
				x.Domain = append(x.Domain, v)
			}
		}
		t, err := p.typ(typ)
		if err != nil {
			return err
		}
		x.Type = t
		k.Params = append(k.Params, x)
		return p.declare(name, x)
	case "require":
		cond, msg, _ := strings.Cut(rest, " // ")
		e, err := p.exprText(cond)
		if err != nil {
			return err
		}
		k.Requires = append(k.Requires, &ir.Requirement{Cond: e, Msg: msg, At: p.pos()})
	case "arg":
		name, typ, ok := strings.Cut(rest, ": ")
		if !ok {
			return p.errf("want \"arg NAME: TYPE\"")
		}
		t, err := p.typ(typ)
		if err != nil {
			return err
		}
		x := &ir.Arg{Name: name, Type: t, At: p.pos()}
		k.Args = append(k.Args, x)
		return p.declare(name, x)
	case "buffer":
		name, spec, ok := strings.Cut(rest, ": ")
		f := strings.Fields(spec)
		prior := len(f) == 4 && f[3] == "prior"
		if !ok || len(f) != 3 && !prior || !strings.HasPrefix(f[2], "role=") {
			return p.errf("want \"buffer NAME: ELEM ACCESS role=ROLE [prior]\"")
		}
		t, err := p.typ(f[0])
		if err != nil {
			return err
		}
		acc := map[string]ir.Access{"read": ir.Read, "write": ir.Write, "read_write": ir.ReadWrite}[f[1]]
		if acc == 0 {
			return p.errf("unknown access %q: want read, write or read_write", f[1])
		}
		x := &ir.Buffer{Name: name, Elem: t, Access: acc, Role: strings.TrimPrefix(f[2], "role="), Prior: prior, At: p.pos()}
		k.Buffers = append(k.Buffers, x)
		return p.declare(name, x)
	case "workgroup", "grid":
		es, err := p.triple(rest)
		if err != nil {
			return err
		}
		if word == "workgroup" {
			k.Workgroup = es
		} else {
			k.Grid = es
		}
	default:
		return p.errf("unknown header line %q: want param, require, arg, buffer, workgroup or grid", l)
	}
	return nil
}

func (p *parser) triple(s string) ([3]ir.Expr, error) {
	var out [3]ir.Expr
	lx := p.lexer(s)
	if err := lx.expect("("); err != nil {
		return out, err
	}
	for d := 0; d < 3; d++ {
		if d > 0 {
			if err := lx.expect(","); err != nil {
				return out, err
			}
		}
		e, err := lx.expr(0)
		if err != nil {
			return out, err
		}
		out[d] = e
	}
	if err := lx.expect(")"); err != nil {
		return out, err
	}
	return out, lx.end()
}

func (p *parser) typ(s string) (ir.Type, error) {
	for _, t := range []ir.Type{ir.F32, ir.I32, ir.U32, ir.U64, ir.Bool, ir.BF16} {
		if t.String() == s {
			return t, nil
		}
	}
	return ir.Invalid, p.errf("unknown type %q: want f32, i32, u32, u64, bool or bf16", s)
}

// block parses statements at the given depth from lines[i] until a line
// that closes it ("}" or "} else {" one level up); it returns that line's index.
func (p *parser) block(lines []string, i, depth int) ([]ir.Stmt, int, error) {
	ind := strings.Repeat("    ", depth)
	var out []ir.Stmt
	for i < len(lines) {
		p.line = i + 1
		l := lines[i]
		if !strings.HasPrefix(l, ind) {
			return out, i, nil
		}
		s := strings.TrimPrefix(l, ind)
		if strings.HasPrefix(s, " ") {
			return nil, 0, p.errf("unexpected indentation")
		}
		st, opens, err := p.stmt(s)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, st)
		i++
		if !opens {
			continue
		}
		body, next, err := p.block(lines, i, depth+1)
		if err != nil {
			return nil, 0, err
		}
		p.line = next + 1
		if next >= len(lines) {
			return nil, 0, p.errf("unclosed block opened at line %d", st.Pos().Line)
		}
		switch st := st.(type) {
		case *ir.For:
			st.Body = body
			if lines[next] != ind+"}" {
				return nil, 0, p.errf("want %q closing the loop of line %d", ind+"}", st.At.Line)
			}
			i = next + 1
		case *ir.If:
			st.Then = body
			switch lines[next] {
			case ind + "}":
				i = next + 1
			case ind + "} else {":
				els, end, err := p.block(lines, next+1, depth+1)
				if err != nil {
					return nil, 0, err
				}
				p.line = end + 1
				if end >= len(lines) || lines[end] != ind+"}" {
					return nil, 0, p.errf("want %q closing the else of line %d", ind+"}", st.At.Line)
				}
				st.Else = els
				i = end + 1
			default:
				return nil, 0, p.errf("want %q or %q closing the if of line %d", ind+"}", ind+"} else {", st.At.Line)
			}
		}
	}
	return out, i, nil
}

// stmt parses one statement line; opens reports a block ("{" at the end).
func (p *parser) stmt(s string) (ir.Stmt, bool, error) {
	at := p.pos()
	switch {
	case s == "barrier":
		return &ir.Barrier{At: at}, false, nil
	case s == "barrier(device)":
		return &ir.Barrier{Device: true, At: at}, false, nil
	case s == ir.DepWait.String():
		return &ir.DepSync{Kind: ir.DepWait, At: at}, false, nil
	case s == ir.DepRelease.String():
		return &ir.DepSync{Kind: ir.DepRelease, At: at}, false, nil
	case strings.HasPrefix(s, "//"):
		return &ir.Comment{Text: strings.TrimPrefix(strings.TrimPrefix(s, "//"), " "), At: at}, false, nil
	case strings.HasPrefix(s, "vec_silu<"):
		st, err := p.vecSilu(s)
		return st, false, err
	case strings.HasPrefix(s, "assert "):
		e, err := p.exprText(strings.TrimPrefix(s, "assert "))
		return &ir.Assert{Cond: e, At: at}, false, err
	}
	word, rest, _ := strings.Cut(s, " ")
	switch word {
	case "let", "var":
		name, rest, ok := strings.Cut(rest, ": ")
		typ, value, ok2 := strings.Cut(rest, " = ")
		if !ok || !ok2 {
			return nil, false, p.errf("want \"%s NAME: TYPE = VALUE\"", word)
		}
		t, err := p.typ(typ)
		if err != nil {
			return nil, false, err
		}
		v := &ir.Var{Name: name, Type: t, Mutable: word == "var", At: at}
		if word == "let" && strings.HasPrefix(value, "reduce_sum<") {
			r, err := p.reduce(v, value)
			if err != nil {
				return nil, false, err
			}
			return r, false, p.declare(name, v)
		}
		e, err := p.exprText(value)
		if err != nil {
			return nil, false, err
		}
		return &ir.Let{Var: v, Value: e, At: at}, false, p.declare(name, v)
	case "array":
		name, rest, ok := strings.Cut(rest, ": ")
		f := strings.SplitN(rest, " ", 2)
		if !ok || len(f) != 2 {
			return nil, false, p.errf("want \"array NAME: SPACE TYPE[LEN]\"")
		}
		sp := map[string]ir.Space{"private": ir.Private, "shared": ir.Shared}[f[0]]
		if sp == 0 {
			return nil, false, p.errf("unknown array space %q: want private or shared", f[0])
		}
		typ, n, ok := strings.Cut(f[1], "[")
		if !ok || !strings.HasSuffix(n, "]") {
			return nil, false, p.errf("want \"array NAME: SPACE TYPE[LEN]\"")
		}
		t, err := p.typ(typ)
		if err != nil {
			return nil, false, err
		}
		e, err := p.exprText(strings.TrimSuffix(n, "]"))
		if err != nil {
			return nil, false, err
		}
		a := &ir.Array{Name: name, Elem: t, Len: e, Space: sp, At: at}
		return &ir.DeclArray{Array: a, At: at}, false, p.declare(name, a)
	case "store":
		lx := p.lexer(rest)
		name := lx.ident()
		b, ok := p.names[name].(*ir.Buffer)
		if !ok {
			return nil, false, p.errf("store to %q, which is not a buffer of this kernel", name)
		}
		idx, val, err := p.indexAssign(lx)
		if err != nil {
			return nil, false, err
		}
		return &ir.Store{Buf: b, Index: idx, Value: val, At: at}, false, nil
	case "for":
		name, rest, ok := strings.Cut(rest, ": ")
		typ, rng, ok2 := strings.Cut(rest, " in ")
		if !ok || !ok2 {
			return nil, false, p.errf("want \"for NAME: TYPE in [START, END) step STEP {\"")
		}
		t, err := p.typ(typ)
		if err != nil {
			return nil, false, err
		}
		v := &ir.Var{Name: name, Type: t, At: at}
		if err := p.declare(name, v); err != nil {
			return nil, false, err
		}
		f := &ir.For{Var: v, At: at}
		lx := p.lexer(rng)
		if err := lx.expect("["); err != nil {
			return nil, false, err
		}
		if f.Start, err = lx.expr(0); err != nil {
			return nil, false, err
		}
		if err := lx.expect(","); err != nil {
			return nil, false, err
		}
		if f.End, err = lx.expr(0); err != nil {
			return nil, false, err
		}
		if err := lx.expect(")"); err != nil {
			return nil, false, err
		}
		if err := lx.expect("step"); err != nil {
			return nil, false, err
		}
		if f.Step, err = lx.expr(0); err != nil {
			return nil, false, err
		}
		if lx.peek().text == "unroll" {
			lx.next()
			f.Unroll = true
		}
		if err := lx.expect("{"); err != nil {
			return nil, false, err
		}
		return f, true, lx.end()
	case "if":
		lx := p.lexer(rest)
		c, err := lx.expr(0)
		if err != nil {
			return nil, false, err
		}
		if err := lx.expect("{"); err != nil {
			return nil, false, err
		}
		return &ir.If{Cond: c, At: at}, true, lx.end()
	}
	// NAME = VALUE or NAME[INDEX] = VALUE
	lx := p.lexer(s)
	name := lx.ident()
	switch x := p.names[name].(type) {
	case *ir.Var:
		if err := lx.expect("="); err != nil {
			return nil, false, err
		}
		e, err := lx.rest()
		if err != nil {
			return nil, false, err
		}
		return &ir.Assign{Var: x, Value: e, At: at}, false, nil
	case *ir.Array:
		idx, val, err := p.indexAssign(lx)
		if err != nil {
			return nil, false, err
		}
		return &ir.ArrayStore{Array: x, Index: idx, Value: val, At: at}, false, nil
	}
	return nil, false, p.errf("unknown statement %q", s)
}

// indexAssign parses "[INDEX] = VALUE".
func (p *parser) indexAssign(lx *lexer) (ir.Expr, ir.Expr, error) {
	if err := lx.expect("["); err != nil {
		return nil, nil, err
	}
	idx, err := lx.expr(0)
	if err != nil {
		return nil, nil, err
	}
	if err := lx.expect("]"); err != nil {
		return nil, nil, err
	}
	if err := lx.expect("="); err != nil {
		return nil, nil, err
	}
	val, err := lx.rest()
	return idx, val, err
}

// reduce parses "reduce_sum<ORDER, WIDTH>(X)".
func (p *parser) reduce(v *ir.Var, s string) (*ir.Reduce, error) {
	lx := p.lexer(strings.TrimPrefix(s, "reduce_sum"))
	if err := lx.expect("<"); err != nil {
		return nil, err
	}
	order := map[string]ir.Order{"butterfly": ir.Butterfly, "native": ir.NativeOrder}[lx.ident()]
	if order == 0 {
		return nil, p.errf("unknown reduction order: want butterfly or native")
	}
	if err := lx.expect(","); err != nil {
		return nil, err
	}
	// Comparisons and what binds looser would take the closing '>'.
	w, err := lx.expr(7)
	if err != nil {
		return nil, err
	}
	if err := lx.expect(">"); err != nil {
		return nil, err
	}
	if err := lx.expect("("); err != nil {
		return nil, err
	}
	x, err := lx.expr(0)
	if err != nil {
		return nil, err
	}
	if err := lx.expect(")"); err != nil {
		return nil, err
	}
	return &ir.Reduce{Var: v, X: x, Width: w, Order: order, At: v.At}, lx.end()
}

// vecSilu parses "vec_silu<N>(store DST[OFF..], SRC[OFF..])".
func (p *parser) vecSilu(s string) (*ir.VecSilu, error) {
	at := p.pos()
	lx := p.lexer(s)
	lx.next() // vec_silu
	n, err := lx.vecLen()
	if err != nil {
		return nil, err
	}
	if err := lx.expect("("); err != nil {
		return nil, err
	}
	if err := lx.expect("store"); err != nil {
		return nil, err
	}
	dst, err := lx.span()
	if err != nil {
		return nil, err
	}
	if err := lx.expect(","); err != nil {
		return nil, err
	}
	src, err := lx.span()
	if err != nil {
		return nil, err
	}
	if err := lx.expect(")"); err != nil {
		return nil, err
	}
	return &ir.VecSilu{Dst: dst, Src: src, N: n, At: at}, lx.end()
}

func (p *parser) exprText(s string) (ir.Expr, error) {
	return p.lexer(s).rest()
}

// Expressions.

type token struct {
	kind byte // 'i' identifier, 'n' number, 'o' operator or punctuation, 0 end
	text string
}

type lexer struct {
	p    *parser
	toks []token
	i    int
	err  error
}

var ops = []string{"<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "%", "&", "|", "^", "<", ">", "!", "(", ")", "[", "]", ",", "..", ".", "{", "}", "="}

func (p *parser) lexer(s string) *lexer {
	lx := &lexer{p: p}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ':
			i++
		case isLetter(c):
			j := i
			for j < len(s) && (isLetter(s[j]) || isDigit(s[j])) {
				j++
			}
			lx.toks = append(lx.toks, token{'i', s[i:j]})
			i = j
		case isDigit(c):
			j := i
			// A span's offset ends in "..": 0u.. is 0u, then "..".
			for j < len(s) && !strings.HasPrefix(s[j:], "..") && (isDigit(s[j]) || s[j] == '.' || s[j] == 'e' || s[j] == 'u' || s[j] == 'l' ||
				(s[j] == '+' || s[j] == '-') && s[j-1] == 'e') {
				j++
			}
			lx.toks = append(lx.toks, token{'n', s[i:j]})
			i = j
		default:
			op := ""
			for _, o := range ops {
				if strings.HasPrefix(s[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				lx.err = p.errf("unexpected character %q in %q", c, s)
				return lx
			}
			lx.toks = append(lx.toks, token{'o', op})
			i += len(op)
		}
	}
	return lx
}

func isLetter(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

func (lx *lexer) peek() token {
	if lx.i < len(lx.toks) {
		return lx.toks[lx.i]
	}
	return token{}
}

func (lx *lexer) next() token {
	t := lx.peek()
	if lx.i < len(lx.toks) {
		lx.i++
	}
	return t
}

func (lx *lexer) expect(text string) error {
	if lx.err != nil {
		return lx.err
	}
	if t := lx.next(); t.text != text {
		return lx.p.errf("want %q, got %q", text, t.text)
	}
	return nil
}

func (lx *lexer) ident() string {
	if t := lx.peek(); t.kind == 'i' {
		lx.i++
		return t.text
	}
	return ""
}

func (lx *lexer) end() error {
	if lx.err != nil {
		return lx.err
	}
	if t := lx.peek(); t.kind != 0 {
		return lx.p.errf("unexpected %q", t.text)
	}
	return nil
}

// rest parses an expression that runs to the end of the text.
func (lx *lexer) rest() (ir.Expr, error) {
	e, err := lx.expr(0)
	if err != nil {
		return nil, err
	}
	return e, lx.end()
}

// binary operators by precedence, as ir.Print parenthesises them.
var binOps = map[string]struct {
	op   ir.BinOp
	prec int
}{
	"||": {ir.LogOr, 1}, "&&": {ir.LogAnd, 2}, "|": {ir.BitOr, 3}, "^": {ir.BitXor, 4}, "&": {ir.BitAnd, 5},
	"==": {ir.Eq, 6}, "!=": {ir.Ne, 6}, "<": {ir.Lt, 7}, "<=": {ir.Le, 7}, ">": {ir.Gt, 7}, ">=": {ir.Ge, 7},
	"<<": {ir.Shl, 8}, ">>": {ir.Shr, 8}, "+": {ir.Add, 9}, "-": {ir.Sub, 9},
	"*": {ir.Mul, 10}, "/": {ir.Div, 10}, "%": {ir.Rem, 10},
}

// expr parses binary operators of precedence above minPrec, left-associative.
func (lx *lexer) expr(minPrec int) (ir.Expr, error) {
	if lx.err != nil {
		return nil, lx.err
	}
	x, err := lx.unary()
	if err != nil {
		return nil, err
	}
	for {
		t := lx.peek()
		b, ok := binOps[t.text]
		if t.kind != 'o' || !ok || b.prec <= minPrec {
			return x, nil
		}
		at := lx.p.pos()
		lx.next()
		y, err := lx.expr(b.prec)
		if err != nil {
			return nil, err
		}
		x = &ir.Binary{Op: b.op, X: x, Y: y, At: at}
	}
}

func (lx *lexer) unary() (ir.Expr, error) {
	at := lx.p.pos()
	if t := lx.peek().text; (t == "-" || t == "+") && lx.i+1 < len(lx.toks) && lx.toks[lx.i+1].text == "Inf" {
		// F32String writes infinities with their sign: one literal.
		lx.i += 2
		return &ir.Const{T: ir.F32, F: float32(math.Inf(map[string]int{"-": -1, "+": 1}[t])), At: at}, nil
	}
	switch lx.peek().text {
	case "-", "!":
		op := ir.Neg
		if lx.next().text == "!" {
			op = ir.Not
		}
		x, err := lx.unary()
		if err != nil {
			return nil, err
		}
		return &ir.Unary{Op: op, X: x, At: at}, nil
	}
	return lx.primary()
}

func (lx *lexer) args() ([]ir.Expr, error) {
	if err := lx.expect("("); err != nil {
		return nil, err
	}
	var out []ir.Expr
	for {
		e, err := lx.expr(0)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		if lx.peek().text != "," {
			break
		}
		lx.next()
	}
	return out, lx.expect(")")
}

var intrinsics = map[string]ir.Intrinsic{"fma": ir.FMA, "exp_native": ir.ExpNative, "min": ir.Min, "max": ir.Max, "dot4": ir.Dot4}

func (lx *lexer) primary() (ir.Expr, error) {
	p := lx.p
	at := p.pos()
	t := lx.next()
	switch t.kind {
	case 'n':
		return p.number(t.text)
	case 'o':
		if t.text != "(" {
			return nil, p.errf("unexpected %q", t.text)
		}
		e, err := lx.expr(0)
		if err != nil {
			return nil, err
		}
		return e, lx.expect(")")
	case 0:
		return nil, p.errf("expression ends too early")
	}
	name := t.text
	call := lx.peek().text == "("
	switch {
	case name == "true" || name == "false":
		return &ir.Const{T: ir.Bool, B: name == "true", At: at}, nil
	case name == "NaN" && lx.peek().text == ".":
		lx.next()
		if t := lx.next(); t.text != "0" {
			return nil, p.errf("want NaN.0")
		}
		return &ir.Const{T: ir.F32, F: float32(math.NaN()), At: at}, nil
	case name == "load" && lx.peek().kind == 'i':
		bn := lx.ident()
		b, ok := p.names[bn].(*ir.Buffer)
		if !ok {
			return nil, p.errf("load from %q, which is not a buffer of this kernel", bn)
		}
		idx, err := lx.index()
		if err != nil {
			return nil, err
		}
		return &ir.Load{Buf: b, Index: idx, At: at}, nil
	case name == "bitcast" && lx.peek().text == "<":
		lx.next()
		to, err := p.typ(lx.ident())
		if err != nil {
			return nil, err
		}
		if err := lx.expect(">"); err != nil {
			return nil, err
		}
		a, err := lx.args()
		if err != nil {
			return nil, err
		}
		if len(a) != 1 {
			return nil, p.errf("bitcast takes one argument")
		}
		return &ir.Unary{Op: ir.Bitcast, X: a[0], To: to, At: at}, nil
	case (name == "group_id" || name == "local_id") && lx.peek().text == ".":
		lx.next()
		dim := strings.Index("xyz", lx.ident())
		if dim < 0 {
			return nil, p.errf("want %s.x, .y or .z", name)
		}
		bi := ir.LocalID
		if name == "group_id" {
			bi = ir.GroupID
		}
		return &ir.BuiltinRef{Builtin: bi, Dim: dim, At: at}, nil
	case name == "vec_dot" && lx.peek().text == "<":
		n, err := lx.vecLen()
		if err != nil {
			return nil, err
		}
		if err := lx.expect("("); err != nil {
			return nil, err
		}
		x, err := lx.span()
		if err != nil {
			return nil, err
		}
		if err := lx.expect(","); err != nil {
			return nil, err
		}
		y, err := lx.span()
		if err != nil {
			return nil, err
		}
		return &ir.VecDot{X: x, Y: y, N: n, At: at}, lx.expect(")")
	case call && name == "select":
		a, err := lx.args()
		if err != nil {
			return nil, err
		}
		if len(a) != 3 {
			return nil, p.errf("select takes three arguments")
		}
		return &ir.Select{Cond: a[0], X: a[1], Y: a[2], At: at}, nil
	case call && intrinsics[name] != 0:
		a, err := lx.args()
		if err != nil {
			return nil, err
		}
		return &ir.Call{Fn: intrinsics[name], Args: a, At: at}, nil
	case call && (name == "f32" || name == "i32" || name == "u32" || name == "u64" || name == "bool"):
		to, _ := p.typ(name)
		a, err := lx.args()
		if err != nil {
			return nil, err
		}
		if len(a) != 1 {
			return nil, p.errf("%s() takes one argument", name)
		}
		return &ir.Unary{Op: ir.Convert, X: a[0], To: to, At: at}, nil
	}
	switch x := p.names[name].(type) {
	case *ir.Param:
		return &ir.ParamRef{Param: x, At: at}, nil
	case *ir.Arg:
		return &ir.ArgRef{Arg: x, At: at}, nil
	case *ir.Var:
		return &ir.VarRef{Var: x, At: at}, nil
	case *ir.Array:
		idx, err := lx.index()
		if err != nil {
			return nil, err
		}
		return &ir.ArrayLoad{Array: x, Index: idx, At: at}, nil
	case *ir.Buffer:
		return nil, p.errf("buffer %s used as a value; read it with load %s[i]", name, name)
	}
	return nil, p.errf("unknown name %q", name)
}

// vecLen parses a vector operation's "<N>".
func (lx *lexer) vecLen() (ir.Expr, error) {
	if err := lx.expect("<"); err != nil {
		return nil, err
	}
	// Comparisons and what binds looser would take the closing '>'.
	n, err := lx.expr(7)
	if err != nil {
		return nil, err
	}
	return n, lx.expect(">")
}

// span parses a vector operand as ir.Span prints it: NAME[OFF..], NAME an
// array or a buffer.
func (lx *lexer) span() (ir.Span, error) {
	var sp ir.Span
	name := lx.ident()
	switch x := lx.p.names[name].(type) {
	case *ir.Array:
		sp.Array = x
	case *ir.Buffer:
		sp.Buf = x
	default:
		return sp, lx.p.errf("span of %q, which is neither an array nor a buffer of this kernel: want NAME[OFFSET..]", name)
	}
	if err := lx.expect("["); err != nil {
		return sp, err
	}
	off, err := lx.expr(0)
	if err != nil {
		return sp, err
	}
	sp.Off = off
	if err := lx.expect(".."); err != nil {
		return sp, err
	}
	return sp, lx.expect("]")
}

func (lx *lexer) index() (ir.Expr, error) {
	if err := lx.expect("["); err != nil {
		return nil, err
	}
	e, err := lx.expr(0)
	if err != nil {
		return nil, err
	}
	return e, lx.expect("]")
}

// number parses a literal as ir.ConstString writes it: 12ul (u64), 12u
// (u32), 12 (i32), 1.5, 1e-05 or 1.0 (f32).
func (p *parser) number(s string) (ir.Expr, error) {
	at := p.pos()
	if u, ok := strings.CutSuffix(s, "ul"); ok {
		v, err := strconv.ParseUint(u, 10, 64)
		if err != nil {
			return nil, p.errf("bad u64 literal %q", s)
		}
		return &ir.Const{T: ir.U64, I: int64(v), At: at}, nil
	}
	if u, ok := strings.CutSuffix(s, "u"); ok {
		v, err := strconv.ParseUint(u, 10, 32)
		if err != nil {
			return nil, p.errf("bad u32 literal %q", s)
		}
		return &ir.Const{T: ir.U32, I: int64(v), At: at}, nil
	}
	if !strings.ContainsAny(s, ".e") {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v > math.MaxInt32+1 {
			return nil, p.errf("bad i32 literal %q", s)
		}
		return &ir.Const{T: ir.I32, I: v, At: at}, nil
	}
	f, err := strconv.ParseFloat(s, 32)
	if err != nil {
		return nil, p.errf("bad f32 literal %q", s)
	}
	return &ir.Const{T: ir.F32, F: float32(f), At: at}, nil
}
