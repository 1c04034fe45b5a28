package patch

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/emit/msl"
	"github.com/kernelgen/kernelgen/internal/registry"
	"github.com/kernelgen/kernelgen/internal/tier"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops/fusion"
)

// metalFusionTree copies testdata/metal-host into a temporary directory and
// applies the fusion form's two Metal steps to it, one after the other:
// their edits to the files the stand-in has (ggml-metal-impl.h,
// ggml-metal-device.h and .cpp, ggml-metal-ops.h and .cpp; the library and
// ggml-metal-context.m, Objective-C, are not part of it). leave, where set,
// is an edit left out.
func metalFusionTree(t *testing.T, leave string) string {
	t.Helper()
	steps, err := FusionPlan(registry.Fusions(), []string{"metal"})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 3 {
		t.Fatalf("%d steps for metal, want the tests, the kernels and the dispatch", len(steps))
	}
	root := metalStandIn(t)
	patched, left := map[string]bool{}, false
	for _, s := range steps[1:] {
		byFile := map[string][]Edit{}
		for _, e := range s.Edits {
			if e.Name == leave {
				left = true
				continue
			}
			byFile[e.File] = append(byFile[e.File], e)
		}
		for file, edits := range byFile {
			path := filepath.Join(root, filepath.FromSlash(file))
			data, err := os.ReadFile(path)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			var ls []Located
			for _, e := range edits {
				l := locate(e, string(data))
				if l.State != Pending {
					t.Fatalf("%s: edit %q is %v in the stand-in: %s", file, e.Name, l.State, l.Why)
				}
				ls = append(ls, l)
			}
			if err := os.WriteFile(path, []byte(insertAll(string(data), ls)), 0o644); err != nil {
				t.Fatal(err)
			}
			patched[filepath.Base(file)] = true
		}
	}
	if leave != "" && !left {
		t.Fatalf("no edit %q to leave out", leave)
	}
	var names []string
	for n := range patched {
		names = append(names, n)
	}
	sort.Strings(names)
	if got, want := strings.Join(names, " "), "ggml-metal-device.cpp ggml-metal-device.h ggml-metal-impl.h ggml-metal-ops.cpp ggml-metal-ops.h"; leave == "" && got != want {
		t.Fatalf("patched %s, want %s", got, want)
	}
	return root
}

// The fusion form's Metal host code compiles with warnings as errors on the
// stand-in tree: the matchers, the gather and the two encoders in
// ggml-metal-ops.cpp over ggml-metal-device.h's encoder calls, the kargs of
// ggml-metal-impl.h and the getters the kernels' step declares, the matches'
// C interface (ggml-metal-ops.h, which ggml-metal-context.m calls) and the
// encode context's member; and the getters in ggml-metal-device.cpp.
func TestMetalFusionStepCompiles(t *testing.T) {
	cxx := hostCXX(t)
	root := metalFusionTree(t, "")
	for _, file := range []string{"src/ggml-metal/ggml-metal-ops.cpp", "src/ggml-metal/ggml-metal-device.cpp"} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			if out, err := compileIn(t, root, cxx, "-c", file, "-o", filepath.Join(t.TempDir(), "out.o")); err != nil {
				t.Fatalf("%s does not compile: %v\n%s", file, err, out)
			}
		})
	}
}

// The control: without the getters' declarations the encoders call
// functions ggml-metal-device.h does not declare, and the compile fails.
func TestMetalFusionStepNeedsItsGetters(t *testing.T) {
	cxx := hostCXX(t)
	root := metalFusionTree(t, "pipeline getter declarations")
	out, err := compileIn(t, root, cxx, "-fsyntax-only", "src/ggml-metal/ggml-metal-ops.cpp")
	if err == nil || !strings.Contains(out, "ggml_metal_library_get_pipeline_gated_delta_net_inplace") {
		t.Fatalf("compiled without the getters' declarations: %v\n%s", err, out)
	}
}

// metalGraphInc is graph.inc for tests/metal-fusion.cpp: build_graph makes
// g's tensors, every root at its own place in one arena (views at their
// offsets), each in buffers[] by the buffer it names (bufs), every node
// flagged for compute as the scheduler does; cache_buffer is the caches'.
func metalGraphInc(g *fusion.Graph, bufs map[string]int, arena map[*fusion.Tensor]int64, size int64, cache string) string {
	var w strings.Builder
	idx := map[*fusion.Tensor]int{}
	var all []*fusion.Tensor
	var add func(t *fusion.Tensor)
	add = func(t *fusion.Tensor) {
		if _, seen := idx[t]; t == nil || seen {
			return
		}
		for _, s := range append(append([]*fusion.Tensor{}, t.Src...), t.ViewSrc) {
			add(s)
		}
		idx[t] = len(all)
		all = append(all, t)
	}
	for _, n := range g.Nodes {
		add(n)
	}
	fmt.Fprintf(&w, "static const int cache_buffer = %d;\n\nstatic ggml_tensor T[%d];\nstatic ggml_tensor * nodes[%d];\nstatic ggml_cgraph gf;\n\n", bufs[cache], len(all), len(g.Nodes))
	fmt.Fprintf(&w, "static ggml_cgraph * build_graph() {\n    arena.resize(%d);\n", size)
	types := map[string]string{"f32": "GGML_TYPE_F32", "f16": "GGML_TYPE_F16", "i32": "GGML_TYPE_I32"}
	for i, t := range all {
		op := "GGML_OP_" + t.Op
		if t.Op == "SILU" {
			op = "GGML_OP_UNARY"
			fmt.Fprintf(&w, "    T[%d].op_params[0] = GGML_UNARY_OP_SILU;\n", i)
		}
		fmt.Fprintf(&w, "    T[%d].op = %s; T[%d].type = %s; snprintf(T[%d].name, GGML_MAX_NAME, \"%s\");\n", i, op, i, types[t.Type], i, t.Name)
		for d := 0; d < 4; d++ {
			fmt.Fprintf(&w, "    T[%d].ne[%d] = %d; T[%d].nb[%d] = %d;\n", i, d, t.Ne[d], i, d, t.Nb[d])
		}
		for j, p := range t.Params {
			if t.Op != "SCALE" && t.Op != "SILU" {
				fmt.Fprintf(&w, "    T[%d].op_params[%d] = %d;\n", i, j, p)
			}
		}
		for j, s := range t.Src {
			fmt.Fprintf(&w, "    T[%d].src[%d] = &T[%d];\n", i, j, idx[s])
		}
		if t.ViewSrc != nil {
			fmt.Fprintf(&w, "    T[%d].view_src = &T[%d]; T[%d].view_offs = %d;\n", i, idx[t.ViewSrc], i, t.ViewOffs)
		}
		flags := []string{}
		if t.Op != "NONE" {
			flags = append(flags, "GGML_TENSOR_FLAG_COMPUTE")
		}
		if t.Output {
			flags = append(flags, "GGML_TENSOR_FLAG_OUTPUT")
		}
		if len(flags) > 0 {
			fmt.Fprintf(&w, "    T[%d].flags = %s;\n", i, strings.Join(flags, " | "))
		}
		fmt.Fprintf(&w, "    T[%d].buffer = &buffers[%d];\n", i, bufs[t.Root().Buffer])
		fmt.Fprintf(&w, "    T[%d].data = arena.data() + %d;\n", i, arena[t.Root()]+t.ViewOffs)
	}
	for i, n := range g.Nodes {
		fmt.Fprintf(&w, "    nodes[%d] = &T[%d];\n", i, idx[n])
	}
	fmt.Fprintf(&w, "    gf.n_nodes = %d;\n    gf.nodes = nodes;\n    return &gf;\n}\n", len(g.Nodes))
	return w.String()
}

// runMetalFusion builds tests/metal-fusion.cpp over the patched stand-in and
// graph.inc and runs it in each mode, returning each mode's output.
func runMetalFusion(t *testing.T, inc string, modes ...string) map[string]string {
	t.Helper()
	cxx := hostCXX(t)
	root := metalFusionTree(t, "")
	if err := os.WriteFile(filepath.Join(root, "tests", "graph.inc"), []byte(inc), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "metal-fusion")
	if out, err := compileIn(t, root, cxx, "-Itests", "tests/metal-fusion.cpp", "src/ggml-metal/ggml-metal-ops.cpp",
		"src/ggml-metal/ggml-metal-device.cpp", metalCommon, "-o", bin); err != nil {
		t.Fatalf("metal-fusion does not build: %v\n%s", err, out)
	}
	outs := map[string]string{}
	for _, m := range modes {
		out, err := exec.CommandContext(tier.Context(t), bin, m).CombinedOutput()
		if err != nil {
			t.Fatalf("metal-fusion %s: %v\n%s", m, err, out)
		}
		outs[m] = string(out)
	}
	return outs
}

// The fusion form's Metal step encodes llama.cpp's decode step as the
// reference matcher fuses it (ops/fusion): matched on the whole graph, the
// nodes a step replaces encode nothing, each anchor encodes the gather (two
// or more sequences), then its kernel, the pipelines the getters name for
// the match's variant, the kargs the reference computes, each buffer bound
// to the tensor and offset the pattern's plan binds, between barriers. With the caches in another
// device's buffer, or the fusion off (GGML_METAL_FUSION_DISABLE: nothing
// matched), every node encodes itself.
func TestMetalFusionEncodesTheDecodeStep(t *testing.T) {
	for _, layer := range []fusion.Layer{
		{SV: 64, H: 4, HK: 4, Seqs: 3, T: 1, K: 1, DConv: 4, C: 96, MemSize: 8, KVHead: 1, RowZero: -1, CacheBuf: "cache"},
		// MTP: the state and the conv fused with their snapshot slots
		{SV: 64, H: 4, HK: 4, Seqs: 3, T: 3, K: 3, DConv: 4, C: 96, MemSize: 8, KVHead: 1, RowZero: -1, CacheBuf: "cache"},
	} {
		t.Run(fmt.Sprintf("K=%d", layer.K), func(t *testing.T) { checkMetalFusionEncode(t, layer) })
	}
}

func checkMetalFusionEncode(t *testing.T, layer fusion.Layer) {
	b := layer.Build()
	bufs, arena, size := map[string]int{}, map[*fusion.Tensor]int64{}, int64(0)
	var place func(t *fusion.Tensor)
	place = func(t *fusion.Tensor) {
		if t == nil {
			return
		}
		if r := t.Root(); r == t {
			if _, ok := arena[t]; !ok {
				arena[t], size = size, size+(t.Elems()*4+255)/256*256
			}
		}
		if _, ok := bufs[t.Root().Buffer]; !ok {
			bufs[t.Root().Buffer] = len(bufs)
		}
		for _, s := range append(append([]*fusion.Tensor{}, t.Src...), t.ViewSrc) {
			place(s)
		}
	}
	for _, n := range b.G.Nodes {
		place(n)
	}
	outs := runMetalFusion(t, metalGraphInc(b.G, bufs, arena, size, "cache"), "fused", "other", "off")

	be := fusion.Backend{Target: "metal", Buffers: []string{"cache"}}
	want := ""
	fused := map[*fusion.Tensor]bool{}
	anchors := map[*fusion.Tensor]string{}
	for _, pt := range fusion.Patterns {
		ms, refusals := pt.Find(b.G, be)
		if want := 1; len(ms) != want {
			t.Fatalf("%s: %d matches (%v), want %d", pt.Name, len(ms), refusals, want)
		}
		if len(ms) == 0 {
			continue
		}
		m := ms[0]
		for _, f := range m.Fused {
			fused[f] = true
		}
		l, err := pt.Launch("metal")
		if err != nil {
			t.Fatal(err)
		}
		params, err := m.Params()
		if err != nil {
			t.Fatal(err)
		}
		v, ok := m.Variant("metal", params)
		if !ok {
			t.Fatalf("%s: no variant", pt.Name)
		}
		bound := func(k string, binds map[string]fusion.Bind, bufsOf []string) string {
			var s strings.Builder
			for i, name := range bufsOf {
				bind := binds[name]
				tt := m.Bound[bind.Role]
				offs, err := bind.Offset.Eval(m.Bound)
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&s, "buffer %d %d %d\n", i+1, bufs[tt.Root().Buffer], arena[tt.Root()]+tt.ViewOffs+offs)
			}
			return s.String()
		}
		names := func(bs []*ir.Buffer) []string {
			var out []string
			for _, x := range bs {
				out = append(out, x.Name)
			}
			return out
		}
		// the pipeline's name as the getter spells it: the function and its
		// template params, then the function constants (the flag set)
		in := v.Of(l.Kernel)
		kname, constants := msl.FunctionName(l.Kernel), ""
		for _, p := range l.Kernel.Params {
			switch {
			case p.Derived != nil:
			case p.Type == ir.Bool && p.Name == l.Shared.Flag:
				constants += fmt.Sprintf("_%s=1", p.Name)
			case p.Type == ir.Bool:
				constants += fmt.Sprintf("_%s=%d", p.Name, in.Values[p.Name])
			default:
				kname += fmt.Sprintf("_%s%d", p.Name, in.Values[p.Name])
			}
		}
		kname += constants
		// the kargs as the reference's args, in the kernel's order
		argv, err := m.Args()
		if err != nil {
			t.Fatal(err)
		}
		kargs := func(k *ir.Kernel) string {
			s := "bytes 0"
			for _, a := range k.Args {
				s += fmt.Sprintf(" %d", argv[a.Name])
			}
			return s + "\n"
		}
		block := "barrier\n"
		if layer.Seqs >= 2 {
			block += "pipeline kernel_state_gather_f32\n" + kargs(l.Gather) + bound("gather", l.GatherBinds, names(l.Gather.Buffers)) + "dispatch .*\nbarrier\n"
		}
		block += fmt.Sprintf("pipeline %s\n", kname) + kargs(l.Kernel) + bound("kernel", l.KernelBinds, names(l.Kernel.Buffers)) + "dispatch .*\nbarrier\n"
		anchors[m.Anchor] = block
	}
	// a step exactly as above; a node encoding itself after the memory
	// ranges' own barriers, if any
	plain, pattern := "", ""
	for _, n := range b.G.Nodes {
		if n.IsView() || n.Elems() == 0 {
			continue
		}
		plain += "node " + n.Name + "\n"
		if a, ok := anchors[n]; ok {
			want += a
			pattern += strings.ReplaceAll(regexp.QuoteMeta(a), `\.\*`, ".*")
		} else if !fused[n] {
			want += "node " + n.Name + "\n"
			pattern += "(?:barrier\n)*" + regexp.QuoteMeta("node "+n.Name+"\n")
		}
	}
	re := regexp.MustCompile("^" + pattern + "$")
	if !re.MatchString(outs["fused"]) {
		t.Errorf("fused: the encoder recorded\n%s\nwant\n%s", outs["fused"], want)
	}
	for _, mode := range []string{"other", "off"} {
		var got strings.Builder // the nodes and pipelines: barriers are the memory ranges' own here
		for _, l := range strings.SplitAfter(outs[mode], "\n") {
			if strings.HasPrefix(l, "node ") || strings.HasPrefix(l, "pipeline ") {
				got.WriteString(l)
			}
		}
		if got.String() != plain {
			t.Errorf("%s: the encoder recorded\n%s\nwant every node encoding itself:\n%s", mode, outs[mode], plain)
		}
	}
}
