package fusion

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Expr is an integer over the tensors a match binds: their extents,
// strides, view offsets and op params. The reference matcher evaluates it
// (Eval); a backend's matcher text spells it in ggml's C (C), so both read
// one definition.
type Expr struct {
	Op   string // "ne", "nb", "offs", "param", "const", "slot", "slots", "stride", "+", "-", "*", "/", "%", "min"
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

// Slot is the snapshot slot whose nodes an expression of a Pattern's slot
// nodes (Node.Slot) reads; outside them it has no value.
func Slot() Expr { return Expr{Op: "slot"} }

// Slots is the number of snapshot slots found of the slot node role.
func Slots(role string) Expr { return Expr{Op: "slots", Role: role} }

// SlotStride is the byte distance from slot 0's view of the slot node
// role to slot 1's (0 with one slot).
func SlotStride(role string) Expr { return Expr{Op: "stride", Role: role} }

// AtSlot names slot k's node of the slot node role.
func AtSlot(role string, k int) string { return fmt.Sprintf("%s@%d", role, k) }

// inSlot is e with Slot() replaced by i: an expression of slot i's nodes.
func (e Expr) inSlot(i int) Expr {
	if e.Op == "slot" {
		return Const(int64(i))
	}
	if len(e.Args) > 0 {
		args := make([]Expr, len(e.Args))
		for j, a := range e.Args {
			args[j] = a.inSlot(i)
		}
		e.Args = args
	}
	return e
}

// walk calls f on e and every expression under it.
func (e Expr) walk(f func(Expr)) {
	f(e)
	for _, a := range e.Args {
		a.walk(f)
	}
}

// reads reports whether e reads Slot() or one of roles.
func (e Expr) reads(roles []string) bool {
	if e.Op == "slot" || (e.Role != "" && e.Op != "slots" && e.Op != "stride" && slices.Contains(roles, e.Role)) {
		return true
	}
	return slices.ContainsFunc(e.Args, func(a Expr) bool { return a.reads(roles) })
}

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

// Min is the smaller of a and b.
func Min(a, b Expr) Expr { return bin("min", a, b) }

// Eval evaluates e on bound tensors.
func (e Expr) Eval(bound map[string]*Tensor) (int64, error) {
	switch e.Op {
	case "slot":
		return 0, fmt.Errorf("Slot() outside a slot's nodes")
	case "slots":
		n := 0
		for bound[AtSlot(e.Role, n)] != nil {
			n++
		}
		return int64(n), nil
	case "stride":
		s0, s1 := bound[AtSlot(e.Role, 0)], bound[AtSlot(e.Role, 1)]
		if s0 == nil || s1 == nil {
			return 0, nil
		}
		return s1.ViewOffs - s0.ViewOffs, nil
	}
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
	case "min":
		return min(a, b), nil
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
	case "slot":
		return "k"
	case "slots":
		return name("n_slots")
	case "stride":
		s1 := name(AtSlot(e.Role, 1))
		return fmt.Sprintf("(%s ? (int64_t) %s->view_offs - (int64_t) %s->view_offs : 0)", s1, s1, name(AtSlot(e.Role, 0)))
	case "min":
		return fmt.Sprintf("std::min<int64_t>(%s, %s)", e.Args[0].C(name), e.Args[1].C(name))
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
