package ir

import (
	"fmt"
	"sort"
	"strings"
)

// Signature is a kernel's meaning with names and layout factored out, for
// telling reviewers whether a change touched arithmetic. Each part is text;
// two kernels agree on a part exactly when the texts are equal.
type Signature struct {
	// Arithmetic is every f32 operation in program order: its operator (add,
	// mul, fma, exp routine, reduction order and width, conversions into f32)
	// and operands, with variables renamed by definition order and buffer
	// indices elided. Reassociating a sum or changing the reduction tree
	// changes it; renaming a variable or moving data does not.
	Arithmetic string
	// Memory is the set of buffer accesses: buffer position, load or store,
	// and the normalised index expression.
	Memory string
	// Control is the loop and branch structure with normalised conditions.
	Control string
	// Interface is the params, args and buffers (names, types, access).
	Interface string
}

// Sign computes k's signature.
func Sign(k *Kernel) Signature {
	s := &signer{names: map[any]string{}}
	for i, p := range k.Params {
		if p.Derived != nil {
			s.names[p] = "(" + s.expr(p.Derived, false) + ")"
		} else {
			s.names[p] = fmt.Sprintf("param%d", i)
		}
	}
	for i, a := range k.Args {
		s.names[a] = fmt.Sprintf("arg%d", i)
	}
	for i, b := range k.Buffers {
		s.names[b] = fmt.Sprintf("buf%d", i)
	}
	var iface []string
	for _, p := range k.Params {
		iface = append(iface, fmt.Sprintf("param %s %s %v", p.Name, p.Type, p.Domain))
	}
	for _, a := range k.Args {
		iface = append(iface, fmt.Sprintf("arg %s %s", a.Name, a.Type))
	}
	for _, b := range k.Buffers {
		iface = append(iface, fmt.Sprintf("buffer %s %s %s %s", b.Name, b.Elem, b.Access, b.Role))
	}
	s.numeric = numericInts(k.Body)
	s.stmts(k.Body, 0)
	mem := make([]string, 0, len(s.memory))
	for m := range s.memory {
		mem = append(mem, m)
	}
	sort.Strings(mem)
	return Signature{
		Arithmetic: strings.Join(s.arith, "\n"),
		Memory:     strings.Join(mem, "\n"),
		Control:    strings.Join(s.control, "\n"),
		Interface:  strings.Join(iface, "\n"),
	}
}

// Text renders the signature as the sectioned text stored beside the IR.
func (s Signature) Text() string {
	return "[interface]\n" + s.Interface + "\n[control]\n" + s.Control + "\n[memory]\n" + s.Memory + "\n[arithmetic]\n" + s.Arithmetic + "\n"
}

// ParseSignature reads Text's format back.
func ParseSignature(text string) (Signature, error) {
	parts := map[string]*strings.Builder{}
	var cur *strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			cur = &strings.Builder{}
			parts[strings.Trim(line, "[]")] = cur
			continue
		}
		if cur == nil {
			if strings.HasPrefix(line, "#") {
				continue // the generated-file header
			}
			return Signature{}, fmt.Errorf("signature: text before the first section")
		}
		if cur.Len() > 0 {
			cur.WriteByte('\n')
		}
		cur.WriteString(line)
	}
	get := func(n string) (string, error) {
		b, ok := parts[n]
		if !ok {
			return "", fmt.Errorf("signature: no [%s] section", n)
		}
		return b.String(), nil
	}
	var sig Signature
	var err error
	if sig.Interface, err = get("interface"); err != nil {
		return sig, err
	}
	if sig.Control, err = get("control"); err != nil {
		return sig, err
	}
	if sig.Memory, err = get("memory"); err != nil {
		return sig, err
	}
	sig.Arithmetic, err = get("arithmetic")
	return sig, err
}

type signer struct {
	numeric map[*Var]bool
	names   map[any]string
	nvars   int
	arith   []string
	control []string
	memory  map[string]bool
}

func (s *signer) name(key any) string {
	if n, ok := s.names[key]; ok {
		return n
	}
	n := fmt.Sprintf("v%d", s.nvars)
	s.nvars++
	s.names[key] = n
	return n
}

// record notes the loads e makes.
func (s *signer) record(e Expr, _ int) {
	WalkExpr(e, func(x Expr) {
		if s.memory == nil {
			s.memory = map[string]bool{}
		}
		if l, ok := x.(*Load); ok {
			s.memory[fmt.Sprintf("load %s[%s]", s.names[l.Buf], s.expr(l.Index, false))] = true
		}
		if d, ok := x.(*VecDot); ok {
			for _, sp := range []Span{d.X, d.Y} {
				if sp.Buf != nil {
					s.memory["load "+s.span(sp, false)] = true
				}
			}
		}
	})
}

// numericInts finds the integer variables whose values become f32 bits or
// f32 values (the exp routine's exponent arithmetic): they are arithmetic,
// unlike integers that only index memory.
func numericInts(body []Stmt) map[*Var]bool {
	set := map[*Var]bool{}
	defs := map[*Var]Expr{}
	WalkStmts(body, func(st Stmt) {
		if l, ok := st.(*Let); ok {
			defs[l.Var] = l.Value
		}
		for _, e := range StmtExprs(st) {
			WalkExpr(e, func(x Expr) {
				if u, ok := x.(*Unary); ok && (u.Op == Bitcast || u.Op == Convert) && u.To == F32 {
					WalkExpr(u.X, func(y Expr) {
						if r, ok := y.(*VarRef); ok {
							set[r.Var] = true
						}
					})
				}
			})
		}
	})
	for changed := true; changed; {
		changed = false
		for v := range set {
			WalkExpr(defs[v], func(y Expr) {
				if r, ok := y.(*VarRef); ok && !set[r.Var] {
					set[r.Var] = true
					changed = true
				}
			})
		}
	}
	return set
}

func (s *signer) stmts(body []Stmt, depth int) {
	ind := strings.Repeat("  ", depth)
	for _, st := range body {
		switch st := st.(type) {
		case *Let:
			s.record(st.Value, depth)
			s.name(st.Var)
			if st.Var.Type == F32 || s.numeric[st.Var] {
				s.arith = append(s.arith, fmt.Sprintf("%s%s = %s", ind, s.names[st.Var], s.expr(st.Value, true)))
			}
		case *Assign:
			s.record(st.Value, depth)
			if st.Var.Type == F32 || s.numeric[st.Var] {
				s.arith = append(s.arith, fmt.Sprintf("%s%s = %s", ind, s.name(st.Var), s.expr(st.Value, true)))
			}
		case *DeclArray:
			s.name(st.Array)
		case *ArrayStore:
			s.record(st.Value, depth)
			if st.Value.Type() == F32 {
				s.arith = append(s.arith, fmt.Sprintf("%s%s[] = %s", ind, s.name(st.Array), s.expr(st.Value, true)))
			}
		case *Store:
			s.record(st.Value, depth)
			if s.memory == nil {
				s.memory = map[string]bool{}
			}
			s.memory[fmt.Sprintf("store %s[%s]", s.names[st.Buf], s.expr(st.Index, false))] = true
			s.arith = append(s.arith, fmt.Sprintf("%sstore %s = %s", ind, s.names[st.Buf], s.expr(st.Value, true)))
		case *For:
			v := s.name(st.Var)
			s.control = append(s.control, fmt.Sprintf("%sfor %s in [%s, %s) step %s", ind, v, s.expr(st.Start, false), s.expr(st.End, false), s.expr(st.Step, false)))
			s.arith = append(s.arith, fmt.Sprintf("%sfor %s", ind, v))
			s.stmts(st.Body, depth+1)
		case *If:
			s.control = append(s.control, fmt.Sprintf("%sif %s", ind, s.expr(st.Cond, false)))
			s.arith = append(s.arith, ind+"if")
			s.stmts(st.Then, depth+1)
			if len(st.Else) > 0 {
				s.control = append(s.control, ind+"else")
				s.arith = append(s.arith, ind+"else")
				s.stmts(st.Else, depth+1)
			}
		case *Reduce:
			s.record(st.X, depth)
			v := s.name(st.Var)
			s.arith = append(s.arith, fmt.Sprintf("%s%s = reduce_sum<%s, %s>(%s)", ind, v, st.Order, s.expr(st.Width, false), s.expr(st.X, true)))
		case *Barrier:
			if st.Device {
				s.control = append(s.control, ind+"barrier(device)")
			} else {
				s.control = append(s.control, ind+"barrier")
			}
		case *DepSync:
			s.control = append(s.control, ind+st.Kind.String())
		case *VecSilu:
			if s.memory == nil {
				s.memory = map[string]bool{}
			}
			if st.Src.Buf != nil {
				s.memory["load "+s.span(st.Src, false)] = true
			}
			if st.Dst.Buf != nil {
				s.memory["store "+s.span(st.Dst, false)] = true
			}
			s.arith = append(s.arith, fmt.Sprintf("%s%s = vec_silu<%s>(%s)", ind, s.span(st.Dst, true), s.expr(st.N, false), s.span(st.Src, true)))
		}
	}
}

// expr renders e with normalised names; in arithmetic mode buffer indices are
// elided (they are the memory part's business).
func (s *signer) expr(e Expr, arith bool) string {
	switch e := e.(type) {
	case *Const:
		return ConstString(e)
	case *ParamRef:
		return s.names[e.Param]
	case *ArgRef:
		return s.names[e.Arg]
	case *BuiltinRef:
		return fmt.Sprintf("%s.%c", e.Builtin, "xyz"[e.Dim])
	case *VarRef:
		return s.name(e.Var)
	case *ArrayLoad:
		if arith {
			return s.name(e.Array) + "[]"
		}
		return fmt.Sprintf("%s[%s]", s.name(e.Array), s.expr(e.Index, false))
	case *Load:
		if arith {
			return "load " + s.names[e.Buf]
		}
		return fmt.Sprintf("load %s[%s]", s.names[e.Buf], s.expr(e.Index, false))
	case *Unary:
		switch e.Op {
		case Convert:
			return fmt.Sprintf("%s(%s)", e.To, s.expr(e.X, arith))
		case Bitcast:
			return fmt.Sprintf("bitcast<%s>(%s)", e.To, s.expr(e.X, arith))
		}
		return e.Op.String() + "(" + s.expr(e.X, arith) + ")"
	case *Binary:
		return "(" + s.expr(e.X, arith) + " " + e.Op.String() + " " + s.expr(e.Y, arith) + ")"
	case *Call:
		args := make([]string, len(e.Args))
		for i, a := range e.Args {
			args[i] = s.expr(a, arith)
		}
		return e.Fn.String() + "(" + strings.Join(args, ", ") + ")"
	case *Select:
		return "select(" + s.expr(e.Cond, arith) + ", " + s.expr(e.X, arith) + ", " + s.expr(e.Y, arith) + ")"
	case *VecDot:
		return "vec_dot<" + s.expr(e.N, false) + ">(" + s.span(e.X, arith) + ", " + s.span(e.Y, arith) + ")"
	}
	return "?"
}

// span renders a vector operand like a load or an array element: its
// offset is memory's business in arithmetic mode.
func (s *signer) span(sp Span, arith bool) string {
	key := any(sp.Buf)
	if sp.Array != nil {
		key = sp.Array
	}
	name := s.names[key]
	if sp.Array != nil {
		name = s.name(sp.Array)
	}
	if arith {
		return name + "[..]"
	}
	return name + "[" + s.expr(sp.Off, false) + "..]"
}
