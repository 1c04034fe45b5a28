package fusion

import (
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/ops"
)

// Spelling is what a backend adds to the C++ matcher text: its prefix for
// names and the ops target whose variant table it builds. Whether the
// cache's memory is the backend's is asked at the call site (the matcher
// takes a predicate), where the backend's own buffer test is in scope.
type Spelling struct {
	Prefix string // e.g. "ggml_cuda_gdn"
	Target string
}

// cOp is ggml's test that a tensor is the node of op.
func cOp(op, t string) string {
	switch op {
	case "SILU":
		return fmt.Sprintf("(%s->op == GGML_OP_UNARY && ggml_get_unary_op(%s) == GGML_UNARY_OP_SILU)", t, t)
	}
	return fmt.Sprintf("%s->op == GGML_OP_%s", t, op)
}

// cNotOp is ggml's test that a tensor is not the node of op.
func cNotOp(op, t string) string {
	if op == "SILU" {
		return "!" + cOp(op, t)
	}
	return fmt.Sprintf("%s->op != GGML_OP_%s", t, op)
}

// MatcherC is the C++ text of the patterns' matchers for a backend: one
// struct per pattern (its tensors, the fused nodes, the kernel's args and
// params) and one function that fills it, each condition an early return
// with its why, in the description's order. Shared helpers come first.
func MatcherC(sp Spelling, patterns ...*Pattern) (string, error) {
	var w strings.Builder
	p := sp.Prefix
	fmt.Fprintf(&w, `static const ggml_tensor * %[1]s_root(const ggml_tensor * t) {
    return t->view_src ? t->view_src : t;
}

static bool %[1]s_is_view(const ggml_tensor * t) {
    return t->op == GGML_OP_NONE || t->op == GGML_OP_VIEW || t->op == GGML_OP_RESHAPE ||
           t->op == GGML_OP_TRANSPOSE || t->op == GGML_OP_PERMUTE;
}

static bool %[1]s_in(const ggml_tensor * const * set, int n, const ggml_tensor * t) {
    for (int i = 0; i < n; ++i) {
        if (set[i] == t) {
            return true;
        }
    }
    return false;
}

static bool %[1]s_reads(const ggml_tensor * node, const ggml_tensor * t) {
    for (int s = 0; s < GGML_MAX_SRC; ++s) {
        if (node->src[s] == t) {
            return true;
        }
    }
    return false;
}

// a node outside the fused set reads t, or t is an output
static bool %[1]s_read_elsewhere(const ggml_cgraph * cgraph, const ggml_tensor * t, const ggml_tensor * const * fused, int n_fused) {
    if (t->flags & GGML_TENSOR_FLAG_OUTPUT) {
        return true;
    }
    for (int j = 0; j < cgraph->n_nodes; ++j) {
        if (!%[1]s_in(fused, n_fused, cgraph->nodes[j]) && %[1]s_reads(cgraph->nodes[j], t)) {
            return true;
        }
    }
    return false;
}

static bool %[1]s_touches(const ggml_tensor * t, const ggml_tensor * root) {
    return t != nullptr && %[1]s_root(t) == root && ggml_nelements(t) > 0;
}

// a node outside the fused set, from the first fused node to the last, reads or writes root
static bool %[1]s_touched_between(const ggml_cgraph * cgraph, const ggml_tensor * root, const ggml_tensor * const * fused, int n_fused) {
    int first = cgraph->n_nodes, last = -1;
    for (int j = 0; j < cgraph->n_nodes; ++j) {
        if (%[1]s_in(fused, n_fused, cgraph->nodes[j])) {
            first = first < j ? first : j;
            last  = j;
        }
    }
    for (int j = first; j <= last; ++j) {
        const ggml_tensor * node = cgraph->nodes[j];
        if (%[1]s_in(fused, n_fused, node) || %[1]s_is_view(node) || ggml_nelements(node) == 0) {
            continue;
        }
        if (%[1]s_touches(node, root)) {
            return true;
        }
        for (int s = 0; s < GGML_MAX_SRC; ++s) {
            if (%[1]s_touches(node->src[s], root)) {
                return true;
            }
        }
    }
    return false;
}

static bool %[1]s_overlap(const ggml_tensor * a, const ggml_tensor * b) {
    const char * a0 = (const char *) a->data;
    const char * b0 = (const char *) b->data;
    return a0 < b0 + ggml_nbytes(b) && b0 < a0 + ggml_nbytes(a);
}
`, p)
	for _, pt := range patterns {
		if err := matcherC(&w, sp, pt); err != nil {
			return "", fmt.Errorf("%s: %w", pt.Name, err)
		}
	}
	return w.String(), nil
}

func cName(role string) string { return strings.ReplaceAll(role, "-", "_") }

func matcherC(w *strings.Builder, sp Spelling, pt *Pattern) error {
	p, name := sp.Prefix, cName(pt.Name)
	field := func(r string) string { return "m." + r }
	roles := []string{}
	for _, n := range pt.Nodes {
		roles = append(roles, n.Role)
	}
	nFused := 0
	for _, n := range pt.Nodes {
		if n.Fused {
			nFused++
		}
	}
	params, err := variantTable(pt, sp.Target)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n// %s: the kernel %s after the gather %s, at the %s's place\n", pt.Name, pt.Kernel, pt.Gather, pt.Anchor)
	fmt.Fprintf(w, "struct %s_%s {\n", p, name)
	fmt.Fprintf(w, "%s", joinLines("    const ggml_tensor ", append(roles, "out"), func(r string) string { return "* " + r + " = nullptr" }))
	fmt.Fprintf(w, "    const ggml_tensor * fused[%d] = {};\n    int n_fused = 0;\n", nFused)
	var ints []string
	for _, a := range pt.Args {
		ints = append(ints, a.Name)
	}
	fmt.Fprintf(w, "%s", joinLines("    int64_t ", append(ints, params.names...), func(n string) string { return n + " = 0" }))
	fmt.Fprintf(w, "};\n\n")
	fmt.Fprintf(w, "static bool %s_match_%s(const ggml_cgraph * cgraph, int i, bool (*owns)(const ggml_tensor * cache), %s_%s & m) {\n", p, name, p, name)
	fmt.Fprintf(w, "    m = {};\n    m.%s = cgraph->nodes[i];\n    if (%s) {\n        return false;\n    }\n", pt.Anchor, cNotOp(pt.Nodes[0].Op, "m."+pt.Anchor))
	// The srcs of checked tensors are assigned in a run and checked at once;
	// a tensor is checked before anything is read through it.
	var pending []string
	unchecked := map[string]bool{}
	flush := func() {
		if len(pending) > 0 {
			fmt.Fprintf(w, "    if (%s) {\n        return false;\n    }\n", strings.Join(pending, " ||\n        "))
			pending, unchecked = nil, map[string]bool{}
		}
	}
	for _, n := range pt.Nodes[1:] {
		from := field(n.From.Role)
		if unchecked[n.From.Role] {
			flush()
		}
		if !n.From.Down {
			unchecked[n.Role] = true
			fmt.Fprintf(w, "    m.%s = %s->src[%d];\n", n.Role, from, n.From.Src)
			pending = append(pending, "m."+n.Role+" == nullptr")
			if n.Op != "" {
				pending = append(pending, cNotOp(n.Op, "m."+n.Role))
			}
			continue
		}
		flush()
		where := []string{cOp(n.Op, Self), fmt.Sprintf("%s->src[%d] == %s", Self, n.From.Src, from)}
		for _, e := range n.From.Where {
			where = append(where, e.A.C(roleIn(field))+" == "+e.B.C(roleIn(field)))
		}
		fmt.Fprintf(w, "    for (int j = 0; j < cgraph->n_nodes && m.%s == nullptr; ++j) {\n", n.Role)
		fmt.Fprintf(w, "        const ggml_tensor * %s = cgraph->nodes[j];\n", Self)
		fmt.Fprintf(w, "        if (%s) {\n            m.%s = %s;\n        }\n    }\n", strings.Join(where, " &&\n            "), n.Role, Self)
		if !n.Optional {
			pending = append(pending, "m."+n.Role+" == nullptr")
		}
	}
	flush()
	fmt.Fprintf(w, "    m.out = ")
	for i, r := range pt.Out {
		if i < len(pt.Out)-1 {
			fmt.Fprintf(w, "m.%s ? m.%s : ", r, r)
		} else {
			fmt.Fprintf(w, "m.%s;\n", r)
		}
	}
	for _, n := range pt.Nodes {
		switch {
		case n.Fused && n.Optional:
			fmt.Fprintf(w, "    if (m.%s) {\n        m.fused[m.n_fused++] = m.%s;\n    }\n", n.Role, n.Role)
		case n.Fused:
			fmt.Fprintf(w, "    m.fused[m.n_fused++] = m.%s;\n", n.Role)
		}
	}
	for _, c := range pt.Conditions {
		fmt.Fprintf(w, "    // %s: %s\n", c.Name, c.Why)
		switch c.Kind {
		case Equal:
			var eqs []string
			for _, e := range c.Eqs {
				eqs = append(eqs, e.A.C(roleIn(field))+" != "+e.B.C(roleIn(field)))
			}
			fmt.Fprintf(w, "    if (%s) {\n        return false;\n    }\n", strings.Join(eqs, " ||\n        "))
		case Intermediates:
			fmt.Fprintf(w, "    for (int f = 0; f < m.n_fused; ++f) {\n        if (m.fused[f] != m.out && %s_read_elsewhere(cgraph, m.fused[f], m.fused, m.n_fused)) {\n            return false;\n        }\n    }\n", p)
		case AttentionViews:
			fmt.Fprintf(w, "    if (m.%[2]s->flags & GGML_TENSOR_FLAG_OUTPUT) {\n        return false;\n    }\n", p, pt.Anchor)
			fmt.Fprintf(w, "    for (int j = 0; j < cgraph->n_nodes; ++j) {\n        const ggml_tensor * r = cgraph->nodes[j];\n")
			fmt.Fprintf(w, "        if (%[1]s_in(m.fused, m.n_fused, r) || !%[1]s_reads(r, m.%[2]s)) {\n            continue;\n        }\n", p, pt.Anchor)
			fmt.Fprintf(w, "        if (!%s_is_view(r) || r->view_offs + ggml_nbytes(r) > (size_t) (%s)) {\n            return false;\n        }\n    }\n", p, c.Bytes.C(roleIn(field)))
		case SameCache:
			fmt.Fprintf(w, "    {\n        const ggml_tensor * root = %s_root(m.%s);\n", p, c.Roles[0])
			var conds []string
			for _, r := range c.Roles[1:] {
				conds = append(conds, fmt.Sprintf("%s_root(m.%s) != root", p, r))
			}
			conds = append(conds, "root->type != GGML_TYPE_F32", "!owns(root)")
			fmt.Fprintf(w, "        if (%s) {\n            return false;\n        }\n    }\n", strings.Join(conds, " || "))
		case NothingBetween:
			fmt.Fprintf(w, "    if (%s_touched_between(cgraph, %s_root(m.cache), m.fused, m.n_fused)) {\n        return false;\n    }\n", p, p)
		case Disjoint:
			var conds []string
			for _, r := range c.Roles[1:] {
				conds = append(conds, fmt.Sprintf("%s_overlap(m.%s, m.%s)", p, c.Roles[0], r))
			}
			fmt.Fprintf(w, "    if (%s) {\n        return false;\n    }\n", strings.Join(conds, " || "))
		case Variant:
			for _, a := range pt.Params {
				fmt.Fprintf(w, "    m.%s = %s;\n", a.Name, a.Value.C(roleIn(field)))
			}
			for _, f := range pt.Flags {
				fmt.Fprintf(w, "    m.%s = m.%s != nullptr;\n", f.Param, f.Role)
			}
			fmt.Fprintf(w, "    {\n        static const int64_t variants[][%d] = {\n", len(params.names))
			var rows []string
			for _, row := range params.rows {
				rows = append(rows, "{ "+row+" }")
			}
			fmt.Fprintf(w, "%s", joinLines("            ", rows, func(r string) string { return r }))
			var hit []string
			for i, n := range params.names {
				hit = append(hit, fmt.Sprintf("v[%d] == m.%s", i, n))
			}
			fmt.Fprintf(w, "        };\n        bool built = false;\n        for (const auto & v : variants) {\n            built = built || (%s);\n        }\n", strings.Join(hit, " && "))
			fmt.Fprintf(w, "        if (!built) {\n            return false;\n        }\n    }\n")
		default:
			return fmt.Errorf("condition %s: kind %s has no C spelling", c.Name, c.Kind)
		}
	}
	for _, a := range pt.Args {
		fmt.Fprintf(w, "    m.%s = %s;\n", a.Name, a.Value.C(roleIn(field)))
	}
	fmt.Fprintf(w, "    return true;\n}\n")
	return nil
}

// joinLines writes items as lead + item, several to a line of at most 100
// columns: "int64_t a = 0, b = 0;".
func joinLines(lead string, items []string, item func(string) string) string {
	var w strings.Builder
	line := ""
	for _, it := range items {
		x := item(it)
		if line != "" && len(lead)+len(line)+len(x)+3 > 100 {
			w.WriteString(lead + line + sep(lead) + "\n")
			line = ""
		}
		if line != "" {
			line += ", "
		}
		line += x
	}
	if line != "" {
		w.WriteString(lead + line + sep(lead) + "\n")
	}
	return w.String()
}

// sep ends a declaration line with ";", a row of an initializer with ",".
func sep(lead string) string {
	if strings.TrimSpace(lead) == "" {
		return ","
	}
	return ";"
}

// roleIn names a role as the matcher's struct field, Self as itself.
func roleIn(field func(string) string) func(string) string {
	return func(r string) string {
		if r == Self {
			return r
		}
		return field(r)
	}
}

type table struct {
	names []string // params, then flags
	rows  []string
}

// variantTable is the kernel's variants on target, over the params and
// flags the pattern reads (the tiling params are the backend's choice).
func variantTable(pt *Pattern, target string) (table, error) {
	var t table
	for _, a := range pt.Params {
		t.names = append(t.names, a.Name)
	}
	for _, f := range pt.Flags {
		t.names = append(t.names, f.Param)
	}
	seen := map[string]bool{}
	for _, v := range ops.TargetOf(target).Variants(pt.Kernel) {
		var vals []string
		for _, n := range t.names {
			x, ok := v.Values[n]
			if !ok {
				return t, fmt.Errorf("%s's variants have no param %s", pt.Kernel, n)
			}
			vals = append(vals, fmt.Sprint(x))
		}
		row := strings.Join(vals, ", ")
		if !seen[row] {
			seen[row] = true
			t.rows = append(t.rows, row)
		}
	}
	if len(t.rows) == 0 {
		return t, fmt.Errorf("%s has no variant on %q", pt.Kernel, target)
	}
	return t, nil
}
