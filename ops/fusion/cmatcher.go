package fusion

import (
	"fmt"
	"maps"
	"slices"
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
	// Fixed are, by pattern, values the backend's kernel assumes: the
	// matcher refuses a graph where they differ (a backend without the
	// snapshot-slot kernel fixes K at 1).
	Fixed map[string][]Fixed
}

// Fixed is an integer of a match that a backend's kernel takes as Is.
type Fixed struct {
	Value Expr
	Is    int64
	Why   string
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
// with its why, in the description's order; then <prefix>_matches and
// <prefix>_find, one pass over the graph that collects every match by its
// anchor and the nodes the dispatches replace (the skip set: the GET_ROWS
// of a match run before its anchor, so a backend's node loop needs them
// first). owns, a predicate (a function or a lambda, which may capture the
// backend's context) on the cache, says whether its memory is the
// backend's. Shared helpers come first. The text needs the standard
// headers MatcherIncludes names.
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

static bool %[1]s_in(const std::vector<const ggml_tensor *> & set, const ggml_tensor * t) {
    return std::find(set.begin(), set.end(), t) != set.end();
}

// the graph's nodes by position and the readers of each tensor, in graph order: built once per graph
struct %[1]s_graph {
    const ggml_cgraph * cgraph;
    std::unordered_map<const ggml_tensor *, int> index;
    std::unordered_map<const ggml_tensor *, std::vector<const ggml_tensor *>> readers;

    explicit %[1]s_graph(const ggml_cgraph * graph) : cgraph(graph) {
        for (int i = 0; i < cgraph->n_nodes; ++i) {
            index[cgraph->nodes[i]] = i;
            for (int s = 0; s < GGML_MAX_SRC; ++s) {
                if (cgraph->nodes[i]->src[s] != nullptr) {
                    readers[cgraph->nodes[i]->src[s]].push_back(cgraph->nodes[i]);
                }
            }
        }
    }
};

// t's src[i] where it is a node of op (GGML_OP_COUNT: any), else nullptr
static const ggml_tensor * %[1]s_src(const ggml_tensor * t, int i, ggml_op op) {
    const ggml_tensor * s = t ? t->src[i] : nullptr;
    return s && (op == GGML_OP_COUNT || s->op == op) ? s : nullptr;
}

// the first node of op reading t through its src[i] (at byte offs into the memory where offs >= 0)
static const ggml_tensor * %[1]s_reader(const %[1]s_graph & gr, const ggml_tensor * t, ggml_op op, int i, int64_t offs) {
    const auto it = t ? gr.readers.find(t) : gr.readers.end();
    for (size_t j = 0; it != gr.readers.end() && j < it->second.size(); ++j) {
        const ggml_tensor * r = it->second[j];
        if (r->op == op && r->src[i] == t && (offs < 0 || (int64_t) r->view_offs == offs)) {
            return r;
        }
    }
    return nullptr;
}

// a node outside the fused set reads t, or t is an output
static bool %[1]s_read_elsewhere(const %[1]s_graph & gr, const ggml_tensor * t, const std::vector<const ggml_tensor *> & fused) {
    const auto it = gr.readers.find(t);
    return (t->flags & GGML_TENSOR_FLAG_OUTPUT) || (it != gr.readers.end() &&
        std::any_of(it->second.begin(), it->second.end(), [&](const ggml_tensor * r) { return !%[1]s_in(fused, r); }));
}

static bool %[1]s_touches(const ggml_tensor * t, const ggml_tensor * root) {
    return t != nullptr && %[1]s_root(t) == root && ggml_nelements(t) > 0;
}

// a node outside the fused set that the graph runs after from and before to
static bool %[1]s_runs_between(const %[1]s_graph & gr, const ggml_tensor * from, const ggml_tensor * to, const std::vector<const ggml_tensor *> & fused) {
    ggml_tensor * const * first = gr.cgraph->nodes + gr.index.at(from) + 1, * const * last = gr.cgraph->nodes + gr.index.at(to);
    return std::any_of(first, std::max(first, last), [&](const ggml_tensor * n) { return !%[1]s_in(fused, n) && !%[1]s_is_view(n) && ggml_nelements(n) > 0; });
}

// a node outside the fused set, from the first fused node to the last, reads or writes root
static bool %[1]s_touched_between(const %[1]s_graph & gr, const ggml_tensor * root, const std::vector<const ggml_tensor *> & fused) {
    int first = gr.cgraph->n_nodes, last = -1;
    for (const ggml_tensor * t : fused) {
        const auto it = t ? gr.index.find(t) : gr.index.end();
        if (it != gr.index.end()) {
            first = std::min(first, it->second);
            last  = std::max(last, it->second);
        }
    }
    for (int j = first; j <= last; ++j) {
        const ggml_tensor * node = gr.cgraph->nodes[j];
        if (%[1]s_in(fused, node) || %[1]s_is_view(node) || ggml_nelements(node) == 0) {
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
	fmt.Fprintf(&w, "\n// the graph's matches by anchor, and every node their dispatches replace\nstruct %s_matches {\n    std::unordered_set<const ggml_tensor *> fused;\n", p)
	for _, pt := range patterns {
		fmt.Fprintf(&w, "    std::unordered_map<const ggml_tensor *, %s_%s> %s;\n", p, cName(pt.Name), cName(pt.Name))
	}
	fmt.Fprintf(&w, "};\n\ntemplate <typename Owns>\nstatic void %[1]s_find(const ggml_cgraph * cgraph, const Owns & owns, %[1]s_matches & ms) {\n    const %[1]s_graph gr(cgraph);\n    for (int i = 0; i < cgraph->n_nodes; ++i) {\n", p)
	for _, pt := range patterns {
		n := cName(pt.Name)
		fmt.Fprintf(&w, "        %[1]s_%[2]s %[2]s;\n        if (%[1]s_match_%[2]s(gr, i, owns, %[2]s)) {\n", p, n)
		fmt.Fprintf(&w, "            ms.fused.insert(%[1]s.fused.begin(), %[1]s.fused.end());\n            ms.%[1]s[cgraph->nodes[i]] = %[1]s;\n        }\n", n)
	}
	fmt.Fprintf(&w, "    }\n    ms.fused.erase(nullptr);\n}\n")
	return w.String(), nil
}

func cName(role string) string { return strings.ReplaceAll(role, "-", "_") }

// cOpEnum is the ggml_op a node of op has (SILU: a UNARY).
func cOpEnum(op string) string {
	switch op {
	case "":
		return "GGML_OP_COUNT"
	case "SILU":
		return "GGML_OP_UNARY"
	}
	return "GGML_OP_" + op
}

func matcherC(w *strings.Builder, sp Spelling, pt *Pattern) error {
	p, name := sp.Prefix, cName(pt.Name)
	field := roleIn(func(r string) string { return "m." + r })
	roles := []string{}
	var fused, slotArrays, slotFused []string
	outside := pt.readOutsideSlots()
	for _, n := range pt.Nodes {
		if !n.Slot || outside[n.Role] {
			roles = append(roles, n.Role)
		}
		switch {
		case n.Slot:
			slotArrays = append(slotArrays, n.Role+"s")
			if n.Fused {
				slotFused = append(slotFused, n.Role+"s")
			}
		case n.Fused:
			fused = append(fused, "m."+n.Role)
		}
	}
	params, err := variantTable(pt, sp.Target)
	if err != nil {
		return err
	}
	var ops []string
	for _, n := range pt.Nodes {
		if n.Fused {
			ops = append(ops, n.Op)
		}
	}
	fmt.Fprintf(w, "\n// %s: the %s nodes, run as one dispatch at the %s\n", pt.Name, strings.Join(ops, ", "), pt.Nodes[0].Op)
	fmt.Fprintf(w, "struct %s_%s {\n", p, name)
	fmt.Fprintf(w, "%s", joinLines("    const ggml_tensor ", append(roles, "out"), func(r string) string { return "* " + r + " = nullptr" }))
	if len(slotArrays) > 0 {
		fmt.Fprintf(w, "    // the snapshot slots' nodes, the first n_slots found whole (slot 0's above where read as one)\n")
		fmt.Fprintf(w, "%s", joinLines(fmt.Sprintf("    std::array<const ggml_tensor *, %d> ", pt.MaxSlots), slotArrays, func(r string) string { return r + " = {}" }))
	}
	fmt.Fprintf(w, "    std::vector<const ggml_tensor *> fused;\n")
	var ints []string
	if len(slotArrays) > 0 {
		ints = append(ints, "n_slots")
	}
	for _, a := range pt.Args {
		ints = append(ints, a.Name)
	}
	fmt.Fprintf(w, "%s", joinLines("    int64_t ", append(ints, params.names...), func(n string) string { return n + " = 0" }))
	fmt.Fprintf(w, "};\n\n")
	fmt.Fprintf(w, "template <typename Owns>\nstatic bool %s_match_%s(const %s_graph & gr, int i, const Owns & owns, %s_%s & m) {\n", p, name, p, p, name)
	fmt.Fprintf(w, "    m = {};\n    m.%s = gr.cgraph->nodes[i];\n    if (%s) {\n        return false;\n    }\n", pt.Anchor, cNotOp(pt.Nodes[0].Op, "m."+pt.Anchor))
	// Nodes are found null-safely and checked in a run, before an edge
	// whose Where evaluates over them.
	var pending []string
	flush := func() {
		if len(pending) > 0 {
			fmt.Fprintf(w, "    if (%s) {\n        return false;\n    }\n", strings.Join(wrapOr(pending), "\n        "))
			pending = nil
		}
	}
	for i, n := range pt.Nodes {
		if i == 0 || (n.Slot && pt.Nodes[i-1].Slot) {
			continue // the anchor; a slot node after the first, found with it
		}
		if n.Slot {
			flush()
			if err := slotsC(w, sp, pt, pt.Nodes[i:]); err != nil {
				return err
			}
			pending = append(pending, "m.n_slots == 0")
			continue
		}
		from := "m." + n.From.Role
		if !n.From.Down {
			fmt.Fprintf(w, "    m.%s = %s_src(%s, %d, %s);\n", n.Role, p, from, n.From.Src, cOpEnum(n.Op))
		} else {
			offs := "-1"
			switch {
			case len(n.From.Where) == 1 && n.From.Where[0].A.Op == "offs" && n.From.Where[0].A.Role == Self:
				flush()
				offs = n.From.Where[0].B.C(field)
			case len(n.From.Where) > 0:
				return fmt.Errorf("%s: a Where other than the candidate's view offset has no C spelling", n.Role)
			}
			fmt.Fprintf(w, "    m.%s = %s_reader(gr, %s, %s, %d, %s);\n", n.Role, p, from, cOpEnum(n.Op), n.From.Src, offs)
			if n.Op == "SILU" {
				fmt.Fprintf(w, "    if (m.%[1]s && ggml_get_unary_op(m.%[1]s) != GGML_UNARY_OP_SILU) {\n        m.%[1]s = nullptr;\n    }\n", n.Role)
			}
		}
		if !n.Optional {
			pending = append(pending, "!m."+n.Role)
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
	fmt.Fprintf(w, "    m.fused = { %s };\n", strings.Join(fused, ", "))
	for _, a := range slotFused {
		fmt.Fprintf(w, "    m.fused.insert(m.fused.end(), m.%s.begin(), m.%s.begin() + m.n_slots);\n", a, a)
	}
	conds := append([]Condition(nil), pt.Conditions...)
	for _, f := range sp.Fixed[pt.Name] {
		conds = append(conds, Condition{Name: "backend", Kind: Equal, Why: f.Why, Eqs: []Eq{{f.Value, Const(f.Is)}}})
	}
	for _, c := range conds {
		if pt.perSlot(c) {
			continue // tested as each slot is found (slotsC)
		}
		fmt.Fprintf(w, "    // %s: %s\n", c.Name, c.Why)
		switch c.Kind {
		case Equal:
			var eqs []string
			for _, e := range c.Eqs {
				eqs = append(eqs, e.A.C(field)+" != "+e.B.C(field))
			}
			fmt.Fprintf(w, "    if (%s) {\n        return false;\n    }\n", strings.Join(eqs, " ||\n        "))
		case Intermediates:
			fmt.Fprintf(w, "    for (const ggml_tensor * t : m.fused) {\n        if (t && t != m.out && %s_read_elsewhere(gr, t, m.fused)) {\n            return false;\n        }\n    }\n", p)
		case AttentionViews:
			fmt.Fprintf(w, "    if (m.%[2]s->flags & GGML_TENSOR_FLAG_OUTPUT) {\n        return false;\n    }\n", p, pt.Anchor)
			fmt.Fprintf(w, "    for (const ggml_tensor * r : gr.readers.count(m.%[1]s) ? gr.readers.at(m.%[1]s) : std::vector<const ggml_tensor *>()) {\n", pt.Anchor)
			fmt.Fprintf(w, "        if (!%s_in(m.fused, r) && (!%s_is_view(r) || r->view_offs + ggml_nbytes(r) > (size_t) (%s))) {\n            return false;\n        }\n    }\n", p, p, c.Bytes.C(field))
		case SameCache:
			var conds []string
			for _, r := range c.Roles[1:] {
				conds = append(conds, fmt.Sprintf("%s_root(m.%s) != %s_root(m.%s)", p, r, p, c.Roles[0]))
			}
			root := fmt.Sprintf("%s_root(m.%s)", p, c.Roles[0])
			conds = append(conds, root+"->type != GGML_TYPE_F32", "!owns("+root+")")
			fmt.Fprintf(w, "    if (%s) {\n        return false;\n    }\n", strings.Join(conds, " ||\n        "))
		case NothingBetween:
			fmt.Fprintf(w, "    if (%s_touched_between(gr, %s_root(m.cache), m.fused)) {\n        return false;\n    }\n", p, p)
		case Adjacent:
			fmt.Fprintf(w, "    if (%s_runs_between(gr, m.%s, m.out, m.fused)) {\n        return false;\n    }\n", p, pt.Anchor)
		case Disjoint:
			var conds []string
			for _, r := range c.Roles[1:] {
				conds = append(conds, fmt.Sprintf("%s_overlap(m.%s, m.%s)", p, c.Roles[0], r))
			}
			fmt.Fprintf(w, "    if (%s) {\n        return false;\n    }\n", strings.Join(conds, " || "))
		case Variant:
			for _, a := range pt.Params {
				fmt.Fprintf(w, "    m.%s = %s;\n", a.Name, a.Value.C(field))
			}
			for _, f := range pt.Flags {
				fmt.Fprintf(w, "    m.%s = m.%s != nullptr;\n", f.Param, f.Role)
			}
			if ranges, ok := params.crossRanges(pt); ok {
				// every combination of the params' values is a variant: each param in its values
				fmt.Fprintf(w, "    if (%s) {\n        return false;\n    }\n", strings.Join(ranges, " ||\n        "))
				break
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
			fmt.Fprintf(w, "        };\n        if (std::none_of(std::begin(variants), std::end(variants), [&](const int64_t * v) { return %s; })) {\n", strings.Join(hit, " && "))
			fmt.Fprintf(w, "            return false;\n        }\n    }\n")
		default:
			return fmt.Errorf("condition %s: kind %s has no C spelling", c.Name, c.Kind)
		}
	}
	for _, a := range pt.Args {
		fmt.Fprintf(w, "    m.%s = %s;\n", a.Name, a.Value.C(field))
	}
	fmt.Fprintf(w, "    return true;\n}\n")
	return nil
}

// slotIn names the Slot nodes' roles as spelled by format (of the role),
// every other as field does.
func slotIn(pt *Pattern, field func(string) string, format string) func(string) string {
	roles := pt.slotRoles()
	return func(r string) string {
		if slices.Contains(roles, r) {
			return fmt.Sprintf(format, r)
		}
		return field(r)
	}
}

// slotsC finds the run of Slot nodes at the head of ns for slot k = 0, 1,
// ... up to MaxSlots while slot k has every one, as Pattern.At does, into
// the slot arrays, and tests the conditions on every slot's nodes as each
// slot is found (they read only the slots found so far and the nodes found
// before); slot 0's nodes go into the role fields too where read as one.
func slotsC(w *strings.Builder, sp Spelling, pt *Pattern, ns []Node) error {
	p := sp.Prefix
	field := roleIn(func(r string) string { return "m." + r })
	slot := slotIn(pt, field, "m.%ss[k]")
	var run, missing []string
	for _, n := range ns {
		if !n.Slot {
			break
		}
		run, missing = append(run, n.Role), append(missing, "!"+slot(n.Role))
	}
	fmt.Fprintf(w, "    for (int k = 0; k < %d; ++k) {\n", pt.MaxSlots)
	for _, n := range ns[:len(run)] {
		from, offs := slot(n.From.Role), "-1"
		switch {
		case !n.From.Down:
			fmt.Fprintf(w, "        %s = %s_src(%s, %d, %s);\n", slot(n.Role), p, from, n.From.Src, cOpEnum(n.Op))
			continue
		case len(n.From.Where) == 1 && n.From.Where[0].A.Op == "offs" && n.From.Where[0].A.Role == Self:
			offs = n.From.Where[0].B.C(slot)
		case len(n.From.Where) > 0:
			return fmt.Errorf("%s: a Where other than the candidate's view offset has no C spelling", n.Role)
		}
		fmt.Fprintf(w, "        %s = %s_reader(gr, %s, %s, %d, %s);\n", slot(n.Role), p, from, cOpEnum(n.Op), n.From.Src, offs)
	}
	fmt.Fprintf(w, "        if (%s) {\n            break;\n        }\n", strings.Join(missing, " || "))
	for _, c := range pt.Conditions {
		if !pt.perSlot(c) {
			continue
		}
		var eqs []string
		for _, e := range c.Eqs {
			eqs = append(eqs, e.A.C(slot)+" != "+e.B.C(slot))
		}
		fmt.Fprintf(w, "        // %s: %s\n        if (%s) {\n            return false;\n        }\n", c.Name, c.Why, strings.Join(eqs, " ||\n            "))
	}
	fmt.Fprintf(w, "        m.n_slots = k + 1;\n    }\n")
	outside := pt.readOutsideSlots()
	for _, r := range run {
		if outside[r] {
			fmt.Fprintf(w, "    m.%s = m.%ss[0];\n", r, r)
		}
	}
	return nil
}

// wrapOr joins conditions with ||, several to a line of about 100 columns.
func wrapOr(conds []string) []string {
	var lines []string
	line := ""
	for i, c := range conds {
		if i < len(conds)-1 {
			c += " ||"
		}
		if line != "" && len(line)+len(c) > 88 {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += c
	}
	return append(lines, line)
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

// roleIn names a role as the matcher's struct field, Self as itself, slot
// k's node of a Slot role (AtSlot) as its slot array's element.
func roleIn(field func(string) string) func(string) string {
	return func(r string) string {
		if r == Self {
			return r
		}
		if base, k, ok := strings.Cut(r, "@"); ok {
			return field(base+"s") + "[" + k + "]"
		}
		return field(r)
	}
}

type table struct {
	names []string // params, then flags
	rows  []string
	vals  [][]int64 // each row's values
}

// crossRanges are, where the table holds every combination of its
// columns' values, the C tests that each param is outside its values
// (a range where they are consecutive); a flag with both values needs
// none.
func (t table) crossRanges(pt *Pattern) ([]string, bool) {
	combos := 1
	var tests []string
	for i, n := range t.names {
		seen := map[int64]bool{}
		for _, row := range t.vals {
			seen[row[i]] = true
		}
		vals := slices.Sorted(maps.Keys(seen))
		combos *= len(vals)
		lo, hi := vals[0], vals[len(vals)-1]
		isFlag := slices.ContainsFunc(pt.Flags, func(f Flag) bool { return f.Param == n })
		switch {
		case isFlag && lo == 0 && hi == 1 && len(vals) == 2:
		case len(vals) == 1:
			tests = append(tests, fmt.Sprintf("m.%s != %d", n, lo))
		case hi-lo+1 == int64(len(vals)):
			tests = append(tests, fmt.Sprintf("m.%s < %d || m.%s > %d", n, lo, n, hi))
		default:
			var ne []string
			for _, v := range vals {
				ne = append(ne, fmt.Sprintf("m.%s != %d", n, v))
			}
			tests = append(tests, "("+strings.Join(ne, " && ")+")")
		}
	}
	return tests, combos == len(t.rows) && len(tests) > 0
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
			var ints []int64
			for _, n := range t.names {
				ints = append(ints, v.Values[n])
			}
			t.vals = append(t.vals, ints)
		}
	}
	if len(t.rows) == 0 {
		return t, fmt.Errorf("%s has no variant on %q", pt.Kernel, target)
	}
	return t, nil
}
