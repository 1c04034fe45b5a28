package fusion

import (
	"fmt"
	"regexp"
	"strings"
)

// Expr is an integer over the tensors a match binds: their extents,
// strides, view offsets and op params. The reference matcher evaluates it
// (Eval); a backend's matcher text spells it in ggml's C (C), so both read
// one definition.
type Expr struct {
	Op   string // "ne", "nb", "offs", "param", "const", "+", "-", "*", "/", "%"
	Role string
	I    int
	K    int64
	Args []Expr
}

// Ne is role's ne[i].
func Ne(role string, i int) Expr { return Expr{Op: "ne", Role: role, I: i} }

// Nb is role's nb[i] in bytes.
func Nb(role string, i int) Expr { return Expr{Op: "nb", Role: role, I: i} }

// Offs is role's byte offset into the tensor owning its memory (view_offs).
func Offs(role string) Expr { return Expr{Op: "offs", Role: role} }

// Param is role's op_params[i] as int32.
func Param(role string, i int) Expr { return Expr{Op: "param", Role: role, I: i} }

// Const is k.
func Const(k int64) Expr { return Expr{Op: "const", K: k} }

func bin(op string, a Expr, bs ...Expr) Expr {
	for _, b := range bs {
		a = Expr{Op: op, Args: []Expr{a, b}}
	}
	return a
}

// Mul, Div, Add, Sub, Mod: integer arithmetic, Div and Mod truncating (C's).
func Mul(a Expr, b ...Expr) Expr { return bin("*", a, b...) }
func Div(a, b Expr) Expr         { return bin("/", a, b) }
func Add(a Expr, b ...Expr) Expr { return bin("+", a, b...) }
func Sub(a, b Expr) Expr         { return bin("-", a, b) }
func Mod(a, b Expr) Expr         { return bin("%", a, b) }

// Eval evaluates e on bound tensors.
func (e Expr) Eval(bound map[string]*Tensor) (int64, error) {
	t := bound[e.Role]
	if e.Role != "" && t == nil {
		return 0, fmt.Errorf("%s is not bound", e.Role)
	}
	switch e.Op {
	case "ne":
		return t.Ne[e.I], nil
	case "nb":
		return t.Nb[e.I], nil
	case "offs":
		return t.ViewOffs, nil
	case "param":
		if e.I >= len(t.Params) {
			return 0, nil
		}
		return int64(t.Params[e.I]), nil
	case "const":
		return e.K, nil
	}
	a, err := e.Args[0].Eval(bound)
	if err != nil {
		return 0, err
	}
	b, err := e.Args[1].Eval(bound)
	if err != nil {
		return 0, err
	}
	switch e.Op {
	case "+":
		return a + b, nil
	case "-":
		return a - b, nil
	case "*":
		return a * b, nil
	case "/", "%":
		if b == 0 {
			return 0, fmt.Errorf("%s: division by zero", e.C(nil))
		}
		if e.Op == "/" {
			return a / b, nil
		}
		return a % b, nil
	}
	return 0, fmt.Errorf("unknown expression op %q", e.Op)
}

// C spells e in ggml's C, each role as name(role) names its tensor
// pointer (the role itself when name is nil).
func (e Expr) C(name func(string) string) string {
	if name == nil {
		name = func(r string) string { return r }
	}
	switch e.Op {
	case "ne":
		return fmt.Sprintf("%s->ne[%d]", name(e.Role), e.I)
	case "nb": // size_t: compared as ne's int64_t
		return fmt.Sprintf("(int64_t) %s->nb[%d]", name(e.Role), e.I)
	case "offs":
		return "(int64_t) " + name(e.Role) + "->view_offs"
	case "param":
		return fmt.Sprintf("ggml_get_op_params_i32(%s, %d)", name(e.Role), e.I)
	case "const":
		return fmt.Sprint(e.K)
	}
	parts := make([]string, len(e.Args))
	for i, a := range e.Args {
		parts[i] = a.C(name)
		if len(a.Args) > 0 && (a.Op != e.Op || i > 0) {
			parts[i] = "(" + parts[i] + ")"
		}
	}
	return strings.Join(parts, " "+e.Op+" ")
}

// NamedIn reports whether any of the C expressions names v (as a whole
// word): a step declares a variant's value only where its launch reads it.
func NamedIn(v string, exprs ...string) bool {
	word := regexp.MustCompile(`\b` + regexp.QuoteMeta(v) + `\b`)
	for _, e := range exprs {
		if word.MatchString(e) {
			return true
		}
	}
	return false
}
