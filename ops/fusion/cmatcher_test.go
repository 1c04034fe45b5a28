package fusion

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// cDriver is a C++ program that builds g as ggml tensors (every root in one
// arena, so data pointers overlap where views do) and prints, for every
// anchor candidate, what the generated matchers conclude and the args they
// computed.
func cDriver(g *Graph, be Backend) string {
	var w strings.Builder
	idx := map[*Tensor]int{}
	var all []*Tensor
	var add func(t *Tensor)
	add = func(t *Tensor) {
		if t == nil {
			return
		}
		if _, ok := idx[t]; ok {
			return
		}
		for _, s := range append(slices.Clone(t.Src), t.ViewSrc) {
			add(s)
		}
		idx[t] = len(all)
		all = append(all, t)
	}
	for _, n := range g.Nodes {
		add(n)
	}
	bufs := map[string]int{}
	arena := map[*Tensor]int64{}
	var size int64
	for _, t := range all {
		if t.ViewSrc == nil {
			arena[t] = size
			size += t.Elems()*4 + 64
		}
		if _, ok := bufs[t.Root().Buffer]; !ok {
			bufs[t.Root().Buffer] = len(bufs) + 1
		}
	}
	fmt.Fprintf(&w, "static std::vector<char> arena(%d);\nstatic ggml_tensor T[%d];\nstatic ggml_tensor * nodes[%d];\n", size+1, len(all), max(len(g.Nodes), 1))
	fmt.Fprintf(&w, "static bool owns(const ggml_tensor * t) {\n    return false")
	for _, b := range be.Buffers {
		if i, ok := bufs[b]; ok {
			fmt.Fprintf(&w, " || t->buffer == (ggml_backend_buffer *) (uintptr_t) %d", i)
		}
	}
	fmt.Fprintf(&w, ";\n}\n\nint main() {\n")
	types := map[string]string{"f32": "GGML_TYPE_F32", "f16": "GGML_TYPE_F16", "i32": "GGML_TYPE_I32"}
	for i, t := range all {
		op := "GGML_OP_" + t.Op
		if t.Op == "SILU" {
			op = "GGML_OP_UNARY"
			fmt.Fprintf(&w, "    T[%d].op_params[0] = GGML_UNARY_OP_SILU;\n", i)
		}
		fmt.Fprintf(&w, "    T[%d].op = %s; T[%d].type = %s; snprintf(T[%d].name, 64, \"%s\");\n", i, op, i, types[t.Type], i, t.Name)
		for d := 0; d < 4; d++ {
			fmt.Fprintf(&w, "    T[%d].ne[%d] = %d; T[%d].nb[%d] = %d;\n", i, d, t.Ne[d], i, d, t.Nb[d])
		}
		for j, p := range t.Params {
			if t.Op != "SCALE" {
				fmt.Fprintf(&w, "    T[%d].op_params[%d] = %d;\n", i, j, p)
			}
		}
		for j, s := range t.Src {
			fmt.Fprintf(&w, "    T[%d].src[%d] = &T[%d];\n", i, j, idx[s])
		}
		if t.ViewSrc != nil {
			fmt.Fprintf(&w, "    T[%d].view_src = &T[%d]; T[%d].view_offs = %d;\n", i, idx[t.ViewSrc], i, t.ViewOffs)
		}
		if t.Output {
			fmt.Fprintf(&w, "    T[%d].flags = GGML_TENSOR_FLAG_OUTPUT;\n", i)
		}
		fmt.Fprintf(&w, "    T[%d].buffer = (ggml_backend_buffer *) (uintptr_t) %d;\n", i, bufs[t.Root().Buffer])
		fmt.Fprintf(&w, "    T[%d].data = arena.data() + %d;\n", i, arena[t.Root()]+t.ViewOffs)
	}
	for i, n := range g.Nodes {
		fmt.Fprintf(&w, "    nodes[%d] = &T[%d];\n", i, idx[n])
	}
	fmt.Fprintf(&w, "    ggml_cgraph g = { %d, nodes };\n", len(g.Nodes))
	fmt.Fprintf(&w, "    const kg_graph gr(&g);\n    for (int i = 0; i < g.n_nodes; ++i) {\n")
	for _, p := range Patterns {
		name := cName(p.Name)
		fmt.Fprintf(&w, "        if (%s) {\n            kg_%s m;\n            bool ok = kg_match_%s(gr, i, owns, m);\n", cOp(p.Nodes[0].Op, "g.nodes[i]"), name, name)
		fmt.Fprintf(&w, "            printf(\"%s %%s %%d\", g.nodes[i]->name, ok);\n", p.Name)
		fmt.Fprintf(&w, "            if (ok) {\n")
		for _, a := range p.Args {
			fmt.Fprintf(&w, "                printf(\" %s=%%lld\", (long long) m.%s);\n", a.Name, a.Name)
		}
		fmt.Fprintf(&w, "            }\n            printf(\"\\n\");\n        }\n")
	}
	// the one pass a backend runs before its node loop: the skip set, the anchors
	fmt.Fprintf(&w, "    }\n    kg_matches ms;\n    kg_find(&g, owns, ms);\n    printf(\"replaced\");\n")
	fmt.Fprintf(&w, "    for (int i = 0; i < g.n_nodes; ++i) {\n        if (ms.fused.count(g.nodes[i])) {\n            printf(\" %%s\", g.nodes[i]->name);\n        }\n    }\n    printf(\"\\n\");\n")
	for _, p := range Patterns {
		fmt.Fprintf(&w, "    printf(\"%s at\");\n    for (int i = 0; i < g.n_nodes; ++i) {\n        if (ms.%s.count(g.nodes[i])) {\n            printf(\" %%s\", g.nodes[i]->name);\n        }\n    }\n    printf(\"\\n\");\n", p.Name, cName(p.Name))
	}
	fmt.Fprintf(&w, "    return 0;\n}\n")
	return w.String()
}

// goView is what cDriver prints, from the reference matcher.
func goView(g *Graph, be Backend) string {
	var w strings.Builder
	for _, n := range g.Nodes {
		for _, p := range Patterns {
			if n.Op != p.Nodes[0].Op {
				continue
			}
			m, r := p.At(g, n, be)
			fmt.Fprintf(&w, "%s %s %d", p.Name, n.Name, map[bool]int{true: 1, false: 0}[r == nil])
			if r == nil {
				args, _ := m.Args()
				for _, a := range p.Args {
					fmt.Fprintf(&w, " %s=%d", a.Name, args[a.Name])
				}
			}
			fmt.Fprintf(&w, "\n")
		}
	}
	// the skip set and the anchors, in graph order
	replaced := map[*Tensor]bool{}
	anchors := map[*Pattern][]string{}
	for _, p := range Patterns {
		ms, _ := p.Find(g, be)
		for _, m := range ms {
			for _, t := range m.Fused {
				replaced[t] = true
			}
			anchors[p] = append(anchors[p], m.Anchor.Name)
		}
	}
	fmt.Fprintf(&w, "replaced")
	for _, n := range g.Nodes {
		if replaced[n] {
			fmt.Fprintf(&w, " %s", n.Name)
		}
	}
	fmt.Fprintf(&w, "\n")
	for _, p := range Patterns {
		fmt.Fprintf(&w, "%s at", p.Name)
		for _, a := range anchors[p] {
			fmt.Fprintf(&w, " %s", a)
		}
		fmt.Fprintf(&w, "\n")
	}
	return w.String()
}

// TestGeneratedMatcherAgreesWithTheReference: the C++ matchers generated
// from the description compile (-Wall -Wextra -Wshadow -Werror against a stand-in
// ggml.h) and, run on the same graphs, conclude what the reference matcher
// concludes: the canonical decode graphs with their args, every refusal.
func TestGeneratedMatcherAgreesWithTheReference(t *testing.T) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found")
	}
	text, err := MatcherC(Spelling{Prefix: "kg", Target: portable.Target}, Patterns...)
	if err != nil {
		t.Fatal(err)
	}
	graphs := map[string]*Graph{}
	for _, l := range []Layer{layer(), {SV: 64, H: 4, HK: 2, KDA: true, Seqs: 7, T: 1, K: 1, DConv: 2, C: 32, MemSize: 9, KVHead: 2, RowZero: 3, Bias: true},
		{SV: 128, H: 1, HK: 1, Seqs: 1, T: 1, K: 1, DConv: 3, C: 16, MemSize: 1, RowZero: -1}, {SV: 64, H: 1, HK: 1, Seqs: 2, T: 3, K: 3, DConv: 4, C: 16, MemSize: 4, KVHead: 1, RowZero: -1},
		// MTP steps as the test-backend-ops cases build them (K 2..4, as many tokens), and one of fewer tokens than slots
		{SV: 64, H: 2, HK: 2, Seqs: 4, T: 2, K: 2, DConv: 4, C: 16, MemSize: 9, KVHead: 1, RowZero: -1},
		{SV: 128, H: 2, HK: 2, Seqs: 3, T: 4, K: 4, DConv: 4, C: 16, MemSize: 6, RowZero: -1},
		{SV: 64, H: 1, HK: 1, Seqs: 2, T: 1, K: 3, DConv: 4, C: 16, MemSize: 4, KVHead: 1, RowZero: -1}} {
		graphs[fmt.Sprintf("%+v", l)] = l.Build().G
	}
	for _, tc := range refusals {
		graphs[tc.name] = tc.graph().G
	}
	// one program runs every graph's driver (in a namespace of its own): one
	// compile, where a program per graph took a second each
	names := slices.Sorted(maps.Keys(graphs))
	const sep = "----"
	var src strings.Builder
	src.WriteString("#include \"ggml.h\"\n#include <algorithm>\n#include <array>\n#include <cstdio>\n#include <iterator>\n#include <unordered_map>\n#include <unordered_set>\n#include <vector>\n\n" + text + "\n")
	for i, name := range names {
		fmt.Fprintf(&src, "namespace graph%d {\n%s}\n\n", i, strings.Replace(cDriver(graphs[name], portable), "int main() {", "int run() {", 1))
	}
	src.WriteString("int main() {\n")
	for i := range names {
		fmt.Fprintf(&src, "    graph%d::run();\n    printf(\"%s\\n\");\n", i, sep)
	}
	src.WriteString("    return 0;\n}\n")
	dir := t.TempDir()
	header, err := os.ReadFile(filepath.Join("testdata", "ggml.h"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "ggml.h"), header, 0o644)
	os.WriteFile(filepath.Join(dir, "main.cpp"), []byte(src.String()), 0o644)
	bin := filepath.Join(dir, "driver")
	if out, err := exec.Command(cxx, "-std=c++17", "-O0", "-Wall", "-Wextra", "-Wshadow", "-Werror", "-o", bin, filepath.Join(dir, "main.cpp")).CombinedOutput(); err != nil {
		t.Fatalf("the generated matcher does not compile: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	says := strings.Split(string(out), sep+"\n")
	if len(says) != len(names)+1 {
		t.Fatalf("the driver printed %d graphs' conclusions, want %d:\n%s", len(says)-1, len(names), out)
	}
	for i, name := range names {
		if want := goView(graphs[name], portable); says[i] != want {
			t.Errorf("%s: the generated matcher says\n%s\nthe reference\n%s", name, says[i], want)
		}
	}
}

// TestFixedRefusesWhatTheKernelDoesNotTake: a backend whose kernel assumes
// K = 1 (Spelling.Fixed) gets a matcher that refuses the K = 3 decode step
// the reference fuses, and still fuses K = 1.
func TestFixedRefusesWhatTheKernelDoesNotTake(t *testing.T) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found")
	}
	sp := Spelling{Prefix: "kg", Target: portable.Target, Fixed: map[string][]Fixed{
		StatePattern.Name: {{Value: Param("gdn", 0), Is: 1, Why: "no snapshot slots"}},
	}}
	text, err := MatcherC(sp, Patterns...)
	if err != nil {
		t.Fatal(err)
	}
	header, err := os.ReadFile(filepath.Join("testdata", "ggml.h"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ggml.h"), header, 0o644)
	for _, tc := range []struct {
		K    int
		want string
	}{{3, "gdn-state gdn 0"}, {1, "gdn-state gdn 1"}} {
		l := Layer{SV: 64, H: 1, HK: 1, Seqs: 2, T: 3, K: tc.K, DConv: 4, C: 16, MemSize: 4, KVHead: 1, RowZero: -1}
		g := l.Build().G
		if ms, _ := StatePattern.Find(g, portable); len(ms) != 1 {
			t.Fatalf("K=%d: the reference finds %d state matches, want 1", tc.K, len(ms))
		}
		src := "#include \"ggml.h\"\n#include <algorithm>\n#include <array>\n#include <cstdio>\n#include <iterator>\n#include <unordered_map>\n#include <unordered_set>\n#include <vector>\n\n" + text + "\n" + cDriver(g, portable)
		os.WriteFile(filepath.Join(dir, "main.cpp"), []byte(src), 0o644)
		bin := filepath.Join(dir, "driver")
		if out, err := exec.Command(cxx, "-std=c++17", "-O0", "-Wall", "-Wextra", "-Wshadow", "-Werror", "-o", bin, filepath.Join(dir, "main.cpp")).CombinedOutput(); err != nil {
			t.Fatalf("does not compile: %v\n%s", err, out)
		}
		out, err := exec.Command(bin).CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if !strings.Contains(string(out), tc.want+" ") && !strings.Contains(string(out), tc.want+"\n") {
			t.Errorf("K=%d: want %q in\n%s", tc.K, tc.want, out)
		}
	}
}
