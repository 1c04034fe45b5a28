package metal

import (
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/internal/integration"
	"github.com/kernelgen/kernelgen/ops/fusion"
	"github.com/kernelgen/kernelgen/templates"
)

// Metal's spelling of the decode step's fusions (ops/fusion): the names and
// its variant table. Its kernels take every value the patterns allow (no
// Fixed): the GDN kernel writes the snapshot slots (args K and ss), and a
// buffer binds at any offset a float's alignment allows.
var fusionSpelling = fusion.Spelling{Prefix: "ggml_metal_gdn_fusion", Target: name}

// fusionGlue is the upstream glue over the fusion form's kernels (the GDN
// kernel writing the snapshot slots too, glue.Names.Slots), without the ops
// form's supports header; fusionBase the ops form's manifest over them: the
// kernels' step takes its library text, function constants and kargs.
var (
	fusionGlue = glueTarget.WithSlots(&templates.Upstream{})
	fusionBase = Manifest.Over(fusionGlue, FusionKernels)
)

// The files the fusion step changes beyond the ops form's.
const (
	opsH     = "src/ggml-metal/ggml-metal-ops.h"
	contextM = "src/ggml-metal/ggml-metal-context.m"
	opInit   = "ggml_metal_op_t ggml_metal_op_init("
	encAsyn  = "ctx->encode_async = Block_copy(^(size_t iter) {"
)

func init() {
	Backend.Fusion = &integration.Fusion{
		Backend: name, Off: "GGML_METAL_FUSION_DISABLE=1", Budget: 600, Dir: "src/ggml-metal/",
		Kernels: &integration.Fusion{
			Subject: "metal : add gated delta net and conv-update kernels that update the state cache in place",
			Body: `Add the kernels that the fusion of the gated delta net decode step encodes
(the next commit matches the graph and encodes them), with their kargs and
pipeline getters: GATED_DELTA_NET reading each sequence's prior state from
its cache row by the slot ids and writing the new state into the cache rows
in place, SSM_CONV's update of one token that reads the conv taps the same
way and writes the shifted taps back, and the copy that runs first: the
rows that another sequence of the step overwrites go to a scratch, so
aliasing slot ids read what GET_ROWS read. With K > 1 both kernels also
write the K snapshot slots (MTP) into the cache rows, slot i one slot
stride further, the conv kernel over the step's tokens. Each kernel is a
template over what sizes its arrays and takes KDA, SiLU and the ids form as
function constants, which the getters set. Nothing encodes them yet.`,
			Base:    fusionBase,
			ForTree: fusionForTree,
			Sections: []integration.Section{
				Manifest.Section("kernels"),
				Manifest.Section(constantsSection),
				Manifest.Section("kargs"),
				{Name: "pipeline getters", File: deviceCpp, Place: integration.After,
					Anchor: []string{"ggml_metal_pipeline_with_params ggml_metal_library_get_pipeline_gated_delta_net(ggml_metal_library_t lib, const ggml_tensor * op) {", "return res;", "}"},
					Text:   integration.Text{Section: "upstream-fusion-pipelines", BlankBefore: true}},
				{Name: "pipeline getter declarations", File: deviceH, Place: integration.After,
					Anchor: []string{"struct ggml_metal_pipeline_with_params ggml_metal_library_get_pipeline_gated_delta_net "},
					Text:   integration.Text{Section: "upstream-fusion-pipeline-decls"}},
			},
		},
		Subject: "metal : fuse the gated delta net decode step with its state reads and writes",
		Body: `llama.cpp builds one GDN layer's decode step as GET_ROWS of the recurrent
state cache -> RESHAPE -> GATED_DELTA_NET -> VIEW -> CPY back into the cache,
and GET_ROWS of the conv cache -> CONCAT with the token -> VIEW -> CPY, with
SSM_CONV -> SILU on the concatenation. Match both chains once per graph,
before it is split across the command buffers (a chain's nodes may be encoded
by different threads), looking past the projections between a GET_ROWS and
its consumer, and encode one kernel per chain at the GATED_DELTA_NET /
SSM_CONV: it reads each sequence's state from its cache row by the slot ids
and writes the new state into the cache rows in place, so the GET_ROWS, the
views and the CPY encode nothing. Rows that another sequence of the step
overwrites are copied first, so aliasing slot ids read what GET_ROWS read.
With K > 1 snapshots (MTP) the kernels write each snapshot slot into its
cache rows as the CPYs would. The memory ranges see only the anchor's
tensors, so the step is encoded between two barriers.

The fusion is taken only where it keeps the graph's results: no
intermediate read elsewhere or marked output, nothing between the read and
the write touching the cache, one contiguous f32 cache in this device's
memory, shapes the kernels are built for. Anything else runs unfused, and
GGML_METAL_FUSION_DISABLE turns it off.`,
		Texts: fusionTexts,
		Sections: []integration.Section{
			{Name: "includes of the matcher", File: opsCpp, Place: integration.After, Anchor: []string{"#include <cmath>"},
				Text: integration.Text{Literal: "#include <array>\n#include <unordered_map>\n#include <unordered_set>\n#include <vector>\n"}},
			{Name: "the encode context's matches", File: opsCpp, Place: integration.After, Anchor: []string{"struct ggml_metal_op {", "bool use_fusion,"},
				Text: integration.Text{Literal: "        ggml_metal_gdn_fusion_t gdn_fusion,\n"}},
			{Name: "the encode context's matches set", File: opsCpp, Place: integration.After, Anchor: []string{"struct ggml_metal_op {", "this->use_fusion      = use_fusion;"},
				Text: integration.Text{Literal: "        this->gdn_fusion      = gdn_fusion;\n"}},
			{Name: "the encode context's matches member", File: opsCpp, Place: integration.After, Anchor: []string{"struct ggml_metal_op {", "int debug_fusion;"},
				Text: integration.Text{BlankBefore: true, Literal: "    // the fused gated delta net decode steps of the graph (ggml_metal_gdn_fusion_match)\n    ggml_metal_gdn_fusion_t gdn_fusion;\n"}},
			{Name: "the matches passed to the encode context", File: opsCpp, Place: integration.After, Anchor: []string{opInit, "bool use_fusion,"},
				Text: integration.Text{Literal: "        ggml_metal_gdn_fusion_t gdn_fusion,\n"}},
			{Name: "the matches given to the encode context", File: opsCpp, Place: integration.After, Anchor: []string{opInit, "bool use_fusion,", "use_fusion,"},
				Text: integration.Text{Literal: "        gdn_fusion,\n"}},
			{Name: "the decode-step matchers and encoders", File: opsCpp, Place: integration.Before, Anchor: []string{encode},
				Text: integration.Text{Section: "dispatch", BlankAfter: true}},
			{Name: "encode the fused steps in place of their nodes", File: opsCpp, Place: integration.After,
				Anchor: []string{encode, "if ((node->flags & GGML_TENSOR_FLAG_COMPUTE) == 0) {", "}"},
				Text: integration.Text{BlankBefore: true, Literal: `    // a node of a fused gated delta net decode step: its anchor encodes the step, the others nothing
    if (ggml_metal_gdn_fusion_encode(ctx, node)) {
        return 1;
    }
`}},
			{Name: "the matches' interface", File: opsH, Place: integration.After, Anchor: []string{"typedef struct ggml_metal_op * ggml_metal_op_t;"},
				Text: integration.Text{BlankBefore: true, Literal: `// the gated delta net decode steps of a graph that are encoded fused (ggml-metal-ops.cpp)
typedef struct ggml_metal_gdn_fusion_matches * ggml_metal_gdn_fusion_t;

ggml_metal_gdn_fusion_t ggml_metal_gdn_fusion_init(void);
void ggml_metal_gdn_fusion_free(ggml_metal_gdn_fusion_t fusion);

// matches the steps of gf whose caches are in dev's memory
void ggml_metal_gdn_fusion_match(ggml_metal_gdn_fusion_t fusion, ggml_metal_device_t dev, struct ggml_cgraph * gf);
`}},
			{Name: "the matches passed to the encode context (declaration)", File: opsH, Place: integration.After, Anchor: []string{opInit, "bool use_fusion,"},
				Text: integration.Text{Literal: "        ggml_metal_gdn_fusion_t gdn_fusion,\n"}},
			{Name: "the context's matches", File: contextM, Place: integration.After, Anchor: []string{"struct ggml_metal {", "int debug_fusion;"},
				Text: integration.Text{BlankBefore: true, Literal: "    // the fused gated delta net decode steps of the graph being encoded\n    ggml_metal_gdn_fusion_t gdn_fusion;\n"}},
			{Name: "the context's matches created", File: contextM, Place: integration.After,
				Anchor: []string{"ggml_metal_t ggml_metal_init(ggml_metal_device_t dev) {", "res->pipelines_ext = ggml_metal_pipelines_init();"},
				Text:   integration.Text{BlankBefore: true, Literal: "    res->gdn_fusion = ggml_metal_gdn_fusion_init();\n"}},
			{Name: "the context's matches freed", File: contextM, Place: integration.After,
				Anchor: []string{"void ggml_metal_free(ggml_metal_t ctx) {", "ctx->pipelines_ext = nil;", "}"},
				Text:   integration.Text{BlankBefore: true, Literal: "    ggml_metal_gdn_fusion_free(ctx->gdn_fusion);\n"}},
			{Name: "match the decode steps before the split", File: contextM, Place: integration.After,
				Anchor: []string{"enum ggml_status ggml_metal_graph_compute(ggml_metal_t ctx, struct ggml_cgraph * gf) {", "ctx->gf = gf;"},
				Text: integration.Text{BlankBefore: true, Literal: `        // the gated delta net decode steps are matched on the whole graph: their nodes may fall
        // into different command buffers, encoded concurrently
        if (ctx->use_fusion) {
            ggml_metal_gdn_fusion_match(ctx->gdn_fusion, ctx->dev, gf);
        }
`}},
			{Name: "the matches given to each encoder", File: contextM, Place: integration.After, Anchor: []string{encAsyn, "ctx->use_fusion,"},
				Text: integration.Text{Literal: "            ctx->gdn_fusion,\n"}},
		},
	}
}

// fusionTexts is the dispatch spliced into ggml-metal-ops.cpp before the
// node encoder: the matchers (fusion.MatcherC), the gather both patterns
// encode, one encoder per pattern generated from its plan, the encode the
// node loop calls, and the matches' C interface.
func fusionTexts() (map[string]string, error) {
	var w strings.Builder
	w.WriteString(fusion.IntroC("encoded as one kernel") + "\n")
	text, err := fusion.MatcherC(fusionSpelling, fusion.Patterns...)
	if err != nil {
		return nil, err
	}
	w.WriteString(text)
	if err := fusionGather(&w); err != nil {
		return nil, err
	}
	p := fusionSpelling.Prefix
	err = fusion.Run{
		Pattern:   fusionEncode,
		Doc:       "encodes node's fused decode step where it anchors one; true where the node is one a step replaces",
		Signature: fmt.Sprintf("static bool %s_encode(ggml_metal_op_t ctx, const ggml_tensor * node) {", p),
		Matches:   "    const ggml_metal_gdn_fusion_t ms = ctx->gdn_fusion;\n",
		Skip:      "ms == nullptr || ms->fused.count(node) == 0",
		Note: "    // the step reads what earlier nodes wrote and writes what later ones read, where the memory\n" +
			"    // ranges see only the anchor: a barrier on each side\n",
		Branch: func(n string) string {
			return fusion.FindC("ms->", n, fmt.Sprintf("        ggml_metal_op_concurrency_reset(ctx);\n        %[1]s_encode_%[2]s(ctx, %[2]s->second);\n        ggml_metal_op_concurrency_reset(ctx);\n", p, n))
		},
	}.C(&w, fusion.Patterns...)
	if err != nil {
		return nil, fmt.Errorf("metal fusion: %w", err)
	}
	fmt.Fprintf(&w, `
%[1]s_t %[1]s_init(void) {
    return new %[1]s_matches();
}

void %[1]s_free(%[1]s_t fusion) {
    delete fusion;
}

void %[1]s_match(%[1]s_t fusion, ggml_metal_device_t dev, ggml_cgraph * gf) {
    *fusion = {};
    %[1]s_find(gf, [dev](const ggml_tensor * cache) {
        // a buffer of this device: the device of its type is the backend device over dev
        return cache->buffer != nullptr && cache->buffer->buft->device != nullptr && cache->buffer->buft->device->context == dev;
    }, *fusion);
}
`, p)
	return map[string]string{"dispatch": w.String()}, nil
}

// fusionGather writes the gather both patterns encode (the shared gather's
// pipeline), over the kargs and buffers as the glue's family view spells
// them, then the barrier the compute needs.
func fusionGather(w *strings.Builder) error {
	views, err := glue.NewFamilyViews(fusionGlue.Names)
	if err != nil {
		return err
	}
	g, fam := views[0].Gather, views[0].Own.(*family)
	var params []string
	for _, b := range g.Buffers {
		params = append(params, "ggml_metal_buffer_id "+b.Name)
	}
	w.WriteString("\n" + fusion.GatherDocC)
	fmt.Fprintf(w, "static void %s_gather(ggml_metal_op_t ctx, %s,\n        %s args) {\n", fusionSpelling.Prefix, strings.Join(params, ", "), fam.GatherKargsType)
	for _, a := range g.GridArgs {
		fmt.Fprintf(w, "    const %s %s = args.%s;\n", a.CType, a.Name, a.Name)
	}
	w.WriteString("    ggml_metal_encoder_set_pipeline(ctx->enc, ggml_metal_library_get_pipeline_state_gather(ctx->lib));\n")
	w.WriteString("    ggml_metal_encoder_set_bytes(ctx->enc, &args, sizeof(args), 0);\n")
	for i, b := range g.Buffers {
		fmt.Fprintf(w, "    ggml_metal_encoder_set_buffer(ctx->enc, %s, %d);\n", b.Name, i+1)
	}
	fmt.Fprintf(w, "    ggml_metal_encoder_dispatch_threadgroups(ctx->enc, %s, %s, %s, %s, %s, %s);\n",
		g.Grid[0], g.Grid[1], g.Grid[2], g.Workgroup[0], g.Workgroup[1], g.Workgroup[2])
	w.WriteString("    ggml_metal_op_concurrency_reset(ctx);\n}\n")
	return nil
}

// fusionEncode writes pattern pt's encoder: the gather into the scratch,
// then the family's pipeline at the match's variant, every buffer and karg
// as the pattern's plan says (Bind by the kernel buffer's node role, Arg by
// name), the variant's params from the glue's family view.
func fusionEncode(w *strings.Builder, pt *fusion.Pattern) error {
	p, n := fusionSpelling.Prefix, pt.CName()
	l, err := pt.Launch(name)
	if err != nil {
		return err
	}
	fv, err := glue.FamilyViewOf(fusionGlue.Names, l.Shared.Name)
	if err != nil {
		return err
	}
	fam := fv.Own.(*family)
	field := fusion.InMatch
	args := pt.ArgsC(field)
	// each buffer's tensor, whole (the scratch at its offset)
	buffer := func(role string) string { return "ggml_metal_get_buffer_id(m." + role + ")" }
	bufs, err := fusion.WholeC(l.Kernel, l.KernelBinds, buffer)
	if err != nil {
		return err
	}
	gbufs, err := fusion.WholeC(l.Gather, l.GatherBinds, buffer)
	if err != nil {
		return err
	}
	bools := fusion.BoolsC(fv.Table.Bools, fv.Flag, "true")

	fmt.Fprintf(w, "\nstatic void %[1]s_encode_%[2]s(ggml_metal_op_t ctx, const %[1]s_%[2]s & m) {\n", p, n)
	fmt.Fprintf(w, "    // the kernels built, by %s (the matcher checked that the match's is one)\n", fv.Key)
	fmt.Fprintf(w, "    static const uint32_t variants[][%d] = { %s };\n", len(fv.Table.Columns), strings.Join(fv.Table.Rows, ", "))
	fmt.Fprintf(w, "    uint32_t i = 0;\n    while (variants[i][0] != m.%s) {\n        ++i;\n    }\n", fv.Key)
	for j, c := range fv.Table.Columns {
		fmt.Fprintf(w, "    const uint32_t %s = variants[i][%d];\n", c, j)
	}
	for _, d := range fv.Derived {
		fmt.Fprintf(w, "    const %s %s = %s;\n", d.CType, d.Name, d.Expr)
	}
	fmt.Fprintf(w, "    // %s\n    ggml_metal_buffer_id scratch = ggml_metal_get_buffer_id(m.%s);\n", l.Scratch.WhyC(), l.Scratch.Role)
	if !l.Scratch.Whole() {
		fmt.Fprintf(w, "    scratch.offs += %s;\n", l.Scratch.Offset.C(field))
	}
	w.WriteString(fusion.GatherGuardC(field))
	fmt.Fprintf(w, "        %s_gather(ctx, %s, {\n", p, strings.Join(gbufs, ", "))
	for _, s := range glue.Wrap(argExprs(l.Gather, args), 92) {
		fmt.Fprintf(w, "            %s\n", s)
	}
	w.WriteString("        });\n    }\n")
	fmt.Fprintf(w, "    %s args = {\n", fam.KargsType)
	for _, s := range glue.Wrap(argExprs(l.Kernel, args), 96) {
		fmt.Fprintf(w, "        %s\n", s)
	}
	fmt.Fprintf(w, "    };\n    ggml_metal_encoder_set_pipeline(ctx->enc, ggml_metal_library_get_pipeline_%s(ctx->lib, %s, %s));\n",
		l.Shared.Name, strings.Join(fv.Table.Columns, ", "), strings.Join(bools, ", "))
	w.WriteString("    ggml_metal_encoder_set_bytes(ctx->enc, &args, sizeof(args), 0);\n")
	for i, b := range bufs {
		fmt.Fprintf(w, "    ggml_metal_encoder_set_buffer(ctx->enc, %s, %d);\n", b, i+1)
	}
	grid, group := glue.LaunchC(l.Kernel, args)
	fmt.Fprintf(w, "    ggml_metal_encoder_dispatch_threadgroups(ctx->enc, %s, %s);\n}\n", strings.Join(grid[:], ", "), strings.Join(group[:], ", "))
	return nil
}
