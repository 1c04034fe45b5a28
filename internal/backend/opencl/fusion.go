package opencl

import (
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/internal/integration"
	"github.com/kernelgen/kernelgen/ir"
	ctypes "github.com/kernelgen/kernelgen/ir/ctype"
	"github.com/kernelgen/kernelgen/ops/fusion"
)

// OpenCL's spelling of the decode step's fusions (ops/fusion): the names and
// its variant table. Its kernels take every value the patterns allow (no
// Fixed): each buffer is a cl_mem and a byte offset, so no binding has an
// alignment to keep, and the GDN kernel writes the snapshot slots.
var fusionSpelling = fusion.Spelling{Prefix: "ggml_cl_gdn_fusion", Target: name}

// fusionGlue is the upstream glue over the fusion form's kernels (the GDN
// kernel writing the snapshot slots too, glue.Names.Slots), and fusionBase
// the ops form's manifest over them: the kernels' step takes its .cl files,
// their handles, variant tables, loading and CMake entries.
var (
	fusionGlue = glueTarget.WithSlots(glueTarget.Upstream)
	fusionBase = Manifest.Over(fusionGlue, FusionKernels)
)

const graphCompute = "static ggml_status ggml_backend_opencl_graph_compute(ggml_backend_t backend, ggml_cgraph * cgraph) {"

func init() {
	Backend.Fusion = &integration.Fusion{
		Backend: name, Off: "GGML_OPENCL_DISABLE_FUSION=1", Budget: 750, Dir: "src/ggml-opencl/",
		Kernels: &integration.Fusion{
			Subject: "opencl : add gated delta net and conv-update kernels that update the state cache in place",
			Body: `Add the kernels that the fusion of the gated delta net decode step runs
(the next commit matches the graph and enqueues them), with their
programs: GATED_DELTA_NET reading each sequence's prior state from its
cache row by the slot ids and writing the new state into the cache rows in
place, SSM_CONV's update of one token that reads the conv taps the same
way and writes the shifted taps back, and the copy that runs first: the
rows that another sequence of the step overwrites go to a scratch, so
aliasing slot ids read what GET_ROWS read. With K > 1 both kernels also
write the K snapshot slots (MTP) into the cache rows, slot i one slot
stride further, the conv kernel over the step's tokens. Each kernel
source is built once per variant with defines. Reductions use the subgroup
shuffles where the device has them and local memory otherwise. Nothing
enqueues them yet.`,
			Base: fusionBase,
			Sections: []integration.Section{
				{Name: "kernel handles", File: clCpp, Place: integration.After,
					Anchor: []string{"struct ggml_backend_opencl_context {", "cl_kernel kernel_gated_delta_net_f32[4][2][2] = {};"},
					Text:   integration.Text{Section: "upstream-kernel-handles"}},
				{Name: "variant tables", File: clCpp, Place: integration.Before,
					Anchor: []string{clLoad},
					Text:   integration.Text{Section: "upstream-variant-tables", BlankAfter: true}},
				Manifest.Section("kernel loading"),
				Manifest.Section("kernel list"),
			},
			Revisions: Manifest.Revisions,
		},
		Subject: "opencl : fuse the gated delta net decode step with its state reads and writes",
		Body: `llama.cpp builds one GDN layer's decode step as GET_ROWS of the recurrent
state cache -> RESHAPE -> GATED_DELTA_NET -> VIEW -> CPY back into the cache,
and GET_ROWS of the conv cache -> CONCAT with the token -> VIEW -> CPY, with
SSM_CONV -> SILU on the concatenation. Match both chains once per graph,
looking past the projections between a GET_ROWS and its consumer, and enqueue
one kernel per chain at the GATED_DELTA_NET / SSM_CONV: it reads each
sequence's state from its cache row by the slot ids and writes the new state
into the cache rows in place, so the GET_ROWS, the views and the CPY are
skipped. Rows that another sequence of the step overwrites are copied first
(the queue is in order), so aliasing slot ids read what GET_ROWS read. With K
> 1 snapshots (MTP) the kernels write each snapshot slot into its cache rows
as the CPYs would.

The fusion is taken only where it keeps the graph's results: no
intermediate read elsewhere or marked output, nothing between the read and
the write touching the cache, one contiguous f32 cache in a buffer this
device can use, shapes the kernels are built for. Anything else runs
unfused, and GGML_OPENCL_DISABLE_FUSION turns it off.`,
		Texts: fusionTexts,
		Sections: []integration.Section{
			{Name: "includes of the matcher", File: clCpp, Place: integration.After, Anchor: []string{"#include <regex>"},
				Text: integration.Text{Literal: "#include <unordered_map>\n#include <unordered_set>\n#include <algorithm>\n"}},
			{Name: "the decode-step matchers and their dispatch", File: clCpp, Place: integration.Before,
				Anchor: []string{"static bool ggml_opencl_can_fuse(const struct ggml_cgraph * cgraph, int node_idx, std::initializer_list<enum ggml_op> ops) {"},
				Text:   integration.Text{Section: "fusion", BlankAfter: true}},
			{Name: "match the decode steps before the node loop", File: clCpp, Place: integration.After,
				Anchor: []string{graphCompute, "ggml_backend_opencl_context *backend_ctx = (ggml_backend_opencl_context *)backend->context;"},
				Text: integration.Text{BlankBefore: true, Literal: `    // the gated delta net decode steps, fused: the graph is matched once, as the GET_ROWS a step
    // replaces run before the node whose place it takes
` + fusionSpelling.FindC(fusion.Find{Indent: "    ", On: "!backend_ctx->disable_fusion", Matches: "gdn_fusion", Local: true, Capture: "backend",
					Owns: []string{"cache->buffer != nullptr &&",
						"ggml_backend_dev_supports_buft(backend->device, ggml_backend_buffer_get_type(cache->buffer))"}})}},
			{Name: "run the fused decode steps", File: clCpp, Place: integration.After,
				Anchor: []string{graphCompute, "if ((node->flags & GGML_TENSOR_FLAG_COMPUTE) == 0) {", "}"},
				Text:   integration.Text{BlankBefore: true, Literal: fusionSpelling.RunCallC("        ", "backend_ctx, gdn_fusion, node")}},
		},
		Revisions: []integration.Revision{
			{Name: "ggml whose ggml-opencl.cpp includes <unordered_set> (d99724f2 does, d9b30952 not)",
				Probe:    integration.Probe{File: clCpp, Text: "#include <unordered_set>\n"},
				Replaces: []string{"includes of the matcher"},
				Sections: []integration.Section{
					{Name: "includes of the matcher (<unordered_set> there)", File: clCpp, Place: integration.After, Anchor: []string{"#include <unordered_set>"},
						Text: integration.Text{Literal: "#include <unordered_map>\n#include <algorithm>\n"}},
				}},
		},
	}
}

// fusionTexts are the matchers (fusion.MatcherC) and the dispatch: one
// function per pattern enqueueing the gather and the family's kernel as the
// pattern's plan binds them, and the run the node loop calls; spliced
// before the graph's node loop.
func fusionTexts() (map[string]string, error) {
	var w strings.Builder
	w.WriteString(fusion.IntroC("run as one kernel"))
	text, err := fusion.MatcherC(fusionSpelling, fusion.Patterns...)
	if err != nil {
		return nil, err
	}
	w.WriteString(text)
	p := fusionSpelling.Prefix
	fmt.Fprintf(&w, `
// binds t's memory from byte offs on as a kernel's (buffer, offset) argument pair
static void %[1]s_set_tensor(cl_kernel kernel, cl_uint & idx, const ggml_tensor * t, size_t offs) {
    const ggml_tensor_extra_cl * extra = (const ggml_tensor_extra_cl *) t->extra;
    const cl_ulong offset = extra->offset + t->view_offs + offs;
    CL_CHECK(clSetKernelArg(kernel, idx++, sizeof(cl_mem),   &extra->data_device));
    CL_CHECK(clSetKernelArg(kernel, idx++, sizeof(cl_ulong), &offset));
}

template <typename T>
static void %[1]s_set_arg(cl_kernel kernel, cl_uint & idx, T value) {
    CL_CHECK(clSetKernelArg(kernel, idx++, sizeof(T), &value));
}
`, p)
	err = fusion.Run{
		Pattern:   fusionDispatch,
		Doc:       "enqueues node's fused decode step where it anchors one; true where the node is one a step replaces",
		Signature: fmt.Sprintf("static bool %[1]s_run(ggml_backend_opencl_context * backend_ctx, const %[1]s_matches & ms, const ggml_tensor * node) {", p),
		Branch: func(n string) string {
			return fusion.FindC("ms.", n, fmt.Sprintf("        %s_enqueue_%s(backend_ctx, %s->second);\n", p, n, n))
		},
	}.C(&w, fusion.Patterns...)
	if err != nil {
		return nil, fmt.Errorf("opencl fusion: %w", err)
	}
	return map[string]string{"fusion": w.String()}, nil
}

// fusionDispatch writes pattern pt's enqueue function: the gather into the
// scratch, then the family's kernel at the match's variant (the handle the
// kernels' step loaded), every buffer and arg as the pattern's plan says
// (Bind by the kernel buffer's node role, Arg by name), the launch the glue's
// family view spells.
func fusionDispatch(w *strings.Builder, pt *fusion.Pattern) error {
	p, n := fusionSpelling.Prefix, pt.CName()
	l, err := pt.Launch(name)
	if err != nil {
		return err
	}
	shared, k, gather, scratch := l.Shared, l.Kernel, l.Gather, l.Scratch
	fv, err := glue.FamilyViewOf(fusionGlue.Names, shared.Name)
	if err != nil {
		return err
	}
	field := fusion.InMatch
	args := pt.ArgsC(field)
	// the kernel's arguments: each buffer a (cl_mem, offset) pair of its bound tensor, then the args
	set := func(w *strings.Builder, indent string, k *ir.Kernel, binds map[string]fusion.Bind) error {
		for _, b := range k.Buffers {
			bind, ok := binds[b.Name]
			if !ok {
				return fmt.Errorf("%s: buffer %s is not bound", k.Name, b.Name)
			}
			offs := "0"
			if !bind.Whole() {
				offs = "scratch_offs"
				if b.Name != "scratch" {
					return fmt.Errorf("%s: buffer %s is bound at an offset: only the scratch may be", k.Name, b.Name)
				}
			}
			fmt.Fprintf(w, "%s%s_set_tensor(kernel, idx, m.%s, %s);\n", indent, p, bind.Role, offs)
		}
		for _, a := range k.Args {
			e, ok := args[a.Name]
			if !ok {
				return fmt.Errorf("%s: arg %s has no value in the plan", k.Name, a.Name)
			}
			fmt.Fprintf(w, "%s%s_set_arg<%s>(kernel, idx, %s);\n", indent, p, ctypes.C.Of(a.Type), e)
		}
		return nil
	}
	launch := func(w *strings.Builder, indent string, k *ir.Kernel, node string) {
		grid, group := glue.LaunchC(k, args)
		fmt.Fprintf(w, "%ssize_t local_work_size[]  = { %s };\n", indent, strings.Join(group[:], ", "))
		fmt.Fprintf(w, "%ssize_t global_work_size[] = {\n", indent)
		for d := 0; d < 3; d++ {
			sep := ","
			if d == 2 {
				sep = " };"
			}
			fmt.Fprintf(w, "%s    (size_t) (%s) * local_work_size[%d]%s\n", indent, grid[d], d, sep)
		}
		fmt.Fprintf(w, "%sbackend_ctx->enqueue_ndrange_kernel(kernel, 3, global_work_size, local_work_size, m.%s);\n", indent, node)
	}
	vars := fmt.Sprintf("ggml_cl_%s_variants", shared.Name)
	fmt.Fprintf(w, "\nstatic void %[1]s_enqueue_%[2]s(ggml_backend_opencl_context * backend_ctx, const %[1]s_%[2]s & m) {\n", p, n)
	fmt.Fprintf(w, "    int i = 0; // the matcher checked that the variant exists\n    while (%s[i][0] != m.%s) {\n        i++;\n    }\n", vars, fv.Key)
	// the variant's params the launch names: the table's columns (the key is the match's), then the derived ones
	grid, group := glue.LaunchC(k, args)
	launchExprs := append(grid[:], group[:]...)
	var derived []glue.Local
	for _, d := range fv.Derived {
		if fusion.NamedIn(d.Name, launchExprs...) {
			derived = append(derived, d)
		}
	}
	named := append([]string{}, launchExprs...)
	for _, d := range derived {
		named = append(named, d.Expr)
	}
	for j, c := range fv.Table.Columns {
		switch {
		case j == 0 && fusion.NamedIn(c, named...):
			fmt.Fprintf(w, "    const uint32_t %s = m.%s;\n", c, c)
		case j > 0 && fusion.NamedIn(c, named...):
			fmt.Fprintf(w, "    const uint32_t %s = %s[i][%d];\n", c, vars, j)
		}
	}
	for _, d := range derived {
		fmt.Fprintf(w, "    const %s %s = %s;\n", d.CType, d.Name, d.Expr)
	}
	if !scratch.Whole() {
		fmt.Fprintf(w, "    // the scratch: %s\n    const size_t scratch_offs = %s;\n", scratch.WhyC(), scratch.Offset.C(field))
	}
	w.WriteString(fusion.GatherGuardC(field))
	w.WriteString("        cl_kernel kernel = backend_ctx->kernel_state_gather;\n        cl_uint idx = 0;\n")
	if err := set(w, "        ", gather, l.GatherBinds); err != nil {
		return err
	}
	w.WriteString("\n")
	launch(w, "        ", gather, pt.Anchor)
	w.WriteString("    }\n\n")
	var bools []string
	for _, b := range fv.Table.Bools {
		if b == fv.Flag {
			bools = append(bools, "1")
		} else {
			bools = append(bools, "m."+b)
		}
	}
	fmt.Fprintf(w, "    cl_kernel kernel = backend_ctx->kernel_%s[i][%s];\n    cl_uint idx = 0;\n", shared.Name, strings.Join(bools, "]["))
	if err := set(w, "    ", k, l.KernelBinds); err != nil {
		return err
	}
	w.WriteString("\n")
	launch(w, "    ", k, pt.Anchor)
	w.WriteString("}\n")
	return nil
}
