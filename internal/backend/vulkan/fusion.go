package vulkan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/internal/integration"
	"github.com/kernelgen/kernelgen/ops/fusion"
)

// Vulkan's spelling of the decode step's fusions (ops/fusion): the names,
// its variant table, and what its kernels and bindings assume.
var fusionSpelling = fusion.Spelling{Prefix: "ggml_vk_gdn_fusion", Target: name, Fixed: map[string][]fusion.Fixed{
	fusion.StatePattern.Name: {
		{Value: fusion.Mod(fusion.Mul(fusion.Ne("v", 0), fusion.Ne("v", 1), fusion.Ne("v", 2), fusion.Ne("v", 3), fusion.Const(4)), fusion.Const(vkOffsetAlign)), Is: 0,
			Why: "the scratch (the state region) is bound at a descriptor offset, a multiple of minStorageBufferOffsetAlignment"},
	},
	fusion.ConvPattern.Name: {
		{Value: fusion.Mod(fusion.Offs("window"), fusion.Const(vkOffsetAlign)), Is: 0,
			Why: "the destination rows are bound at a descriptor offset, a multiple of minStorageBufferOffsetAlignment"},
	},
}}

// vkOffsetAlign bounds minStorageBufferOffsetAlignment (the Vulkan spec's
// largest): an offset that is a multiple of it binds on every device.
const vkOffsetAlign = 256

// fusionGlue is the upstream glue over the fusion form's shaders (the GDN
// shader writing the snapshot slots too, glue.Names.Slots), and fusionBase
// the ops form's manifest over them: the shaders' step takes its files and
// the sections that declare, create and build their pipelines.
var (
	fusionGlue = glueTarget.WithSlots(glueTarget.Upstream)
	fusionBase = Manifest.Over(fusionGlue, FusionKernels)
)

const graphCompute = "static ggml_status ggml_backend_vk_graph_compute(ggml_backend_t backend, ggml_cgraph * cgraph) {"

func init() {
	Backend.Fusion = &integration.Fusion{
		Backend: name, Off: "GGML_VK_DISABLE_FUSION=1", Budget: 800, Dir: "src/ggml-vulkan/",
		Kernels: &integration.Fusion{
			Subject: "vulkan : add gated delta net and conv-update shaders that update the state cache in place",
			Body: `Add the shaders that the fusion of the gated delta net decode step records
(the next commit matches the graph and records them), with their pipelines:
GATED_DELTA_NET reading each sequence's prior state from its cache row by
the slot ids and writing the new state into the cache rows in place,
SSM_CONV's update of one token that reads the conv taps the same way and
writes the shifted taps back, and the copy that runs first: the rows that
another sequence of the step overwrites go to a scratch, so aliasing slot
ids read what GET_ROWS read. With K > 1 both shaders also write the K
snapshot slots (MTP) into the cache rows, slot i one slot stride further,
the conv shader over the step's tokens. Each kernel is one shader for all
its variants (specialization constants); the GDN pipelines ask for the
device's subgroup size, as the plain GDN pipelines do. Nothing records them
yet.`,
			Base: fusionBase,
			Sections: []integration.Section{
				Manifest.Section("push-constant structs"),
				Manifest.Section("pipeline members"),
				Manifest.Section("pipeline creation"),
				Manifest.Section("shader-gen entries"),
			},
		},
		Subject: "vulkan : fuse the gated delta net decode step with its state reads and writes",
		Body: `llama.cpp builds one GDN layer's decode step as GET_ROWS of the recurrent
state cache -> RESHAPE -> GATED_DELTA_NET -> VIEW -> CPY back into the cache,
and GET_ROWS of the conv cache -> CONCAT with the token -> VIEW -> CPY, with
SSM_CONV -> SILU on the concatenation. Match both chains once per graph,
looking past the projections between a GET_ROWS and its consumer, and record
one dispatch per chain at the GATED_DELTA_NET / SSM_CONV: it reads each
sequence's state from its cache row by the slot ids and writes the new state
into the cache rows in place, so the GET_ROWS, the views and the CPY record
nothing. Rows that another sequence of the step overwrites are copied first
(a gather shader, then a barrier), so aliasing slot ids read what GET_ROWS
read. With K > 1 snapshots (MTP) the shaders write each snapshot slot into
its cache rows as the CPYs would.

The fusion is taken only where it keeps the graph's results: no
intermediate read elsewhere or marked output, nothing between the read and
the write touching the cache, one contiguous f32 cache in this device's
memory, shapes the shaders are built for, cache rows bound at offsets
every device takes. Anything else runs unfused, and GGML_VK_DISABLE_FUSION
turns it off.`,
		Texts: fusionTexts,
		Sections: []integration.Section{
			{Name: "includes of the matcher", File: vkCpp, Place: integration.After, Anchor: []string{"#include <unordered_map>"},
				Text: integration.Text{Literal: "#include <unordered_set>\n"}},
			{Name: "the decode-step matchers", File: vkCpp, Place: integration.Before, Anchor: []string{"struct ggml_backend_vk_context {"},
				Text: integration.Text{Section: "matchers", BlankAfter: true}},
			{Name: "the graph's fused decode steps", File: vkCpp, Place: integration.After,
				Anchor: []string{"struct ggml_backend_vk_context {", "vk_device device;"},
				Text: integration.Text{BlankBefore: true, Literal: `    // the gated delta net decode steps of the graph being computed (ggml_vk_gdn_fusion_find)
    ggml_vk_gdn_fusion_matches gdn_fusion;
`}},
			{Name: "the fused dispatches", File: vkCpp, Place: integration.Before,
				Anchor: []string{"static void ggml_vk_ssm_conv(ggml_backend_vk_context * ctx, vk_context& subctx, const struct ggml_cgraph * cgraph, int node_idx) {"},
				Text:   integration.Text{Section: "dispatch", BlankAfter: true}},
			{Name: "record the fused steps in place of their nodes", File: vkCpp, Place: integration.Replace,
				Anchor: []string{buildGraph, "    switch (node->op) {"}, Until: "switch (node->op) {",
				Text: integration.Text{Literal: `    // a node of a fused gated delta net decode step: its anchor records the step, the others nothing
    const bool gdn_fused = ggml_vk_gdn_fusion_run(ctx, compute_ctx, node);

    switch (gdn_fused ? GGML_OP_NONE : node->op) {
    case GGML_OP_NONE:
        break;
`}},
			{Name: "match the decode steps before the node loop", File: vkCpp, Place: integration.After,
				Anchor: []string{graphCompute, "ctx->tensor_ctxs.resize(cgraph->n_nodes);"},
				Text: integration.Text{BlankBefore: true, Literal: `    // the gated delta net decode steps, fused: the graph is matched once, as the GET_ROWS a step
    // replaces run before the node whose place it takes
    ctx->gdn_fusion = {};
` + fusionSpelling.FindC(fusion.Find{Indent: "    ", On: "!ctx->device->disable_fusion", Matches: "ctx->gdn_fusion", Capture: "ctx",
					Owns: []string{"cache->buffer != nullptr && ggml_backend_buffer_is_vk(cache->buffer) &&",
						"((ggml_backend_vk_buffer_context *) cache->buffer->context)->dev_buffer->device == ctx->device"}})}},
			{Name: "no other fusion starts at a fused step's node", File: vkCpp, Place: integration.Replace,
				Anchor: []string{graphCompute, "for (int i = 0; i < cgraph->n_nodes; i++) {", "        if (!ctx->device->disable_fusion) {"}, Until: "if (!ctx->device->disable_fusion) {",
				Text: integration.Text{Literal: "        if (!ctx->device->disable_fusion && ctx->gdn_fusion.fused.count(cgraph->nodes[i]) == 0) {\n"}},
		},
	}
}

// fusionTexts are the matchers (fusion.MatcherC), spliced before the
// backend context that holds the graph's matches, and the dispatch: one
// function per pattern recording the gather and the family's shader as the
// pattern's plan binds them, and the run the node loop calls.
func fusionTexts() (map[string]string, error) {
	var m strings.Builder
	m.WriteString(fusion.IntroC("run as one dispatch"))
	text, err := fusion.MatcherC(fusionSpelling, fusion.Patterns...)
	if err != nil {
		return nil, err
	}
	m.WriteString(text)
	var d strings.Builder
	if err := fusionGather(&d); err != nil {
		return nil, err
	}
	p := fusionSpelling.Prefix
	err = fusion.Run{
		Pattern:   fusionDispatch,
		Doc:       "records node's fused decode step where it anchors one; true where the node is one a step replaces",
		Signature: fmt.Sprintf("static bool %s_run(ggml_backend_vk_context * ctx, vk_context & subctx, const ggml_tensor * node) {", p),
		Matches:   "    const auto & ms = ctx->gdn_fusion;\n",
		Note: "    // the step reads what earlier nodes wrote and writes what later ones read, where the graph's\n" +
			"    // tracking sees only the anchor: a barrier on each side\n",
		Branch: func(n string) string {
			return fusion.FindC("ms.", n, fmt.Sprintf("        ggml_vk_sync_buffers(ctx, subctx);\n        %[1]s_record_%[2]s(ctx, subctx, %[2]s->second);\n", p, n)+
				"        ggml_vk_sync_buffers(ctx, subctx);\n        ctx->unsynced_nodes_written.clear();\n        ctx->unsynced_nodes_read.clear();\n")
		},
	}.C(&d, fusion.Patterns...)
	if err != nil {
		return nil, fmt.Errorf("vulkan fusion: %w", err)
	}
	return map[string]string{"matchers": m.String(), "dispatch": d.String()}, nil
}

// fusionDispatch writes pattern pt's record function: the gather into the
// scratch and a barrier, then the family's pipeline at the match's variant,
// every binding and push constant as the pattern's plan says (Bind by the
// shader buffer's node role, Arg by name).
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
	fam := fv.Own.(*family)
	field := fusion.InMatch
	args := pt.ArgsC(field)
	// bindings: each shader buffer's tensor, whole (the scratch at its
	// offset); a descriptor's range ends with its tensor, so one of the
	// snapshot slots' tensors reaches the slots past it (spans)
	var spans []string
	for _, b := range l.KernelBinds {
		if pt.SlotBound(b.Role) && !slices.Contains(spans, b.Role) {
			spans = append(spans, b.Role)
		}
	}
	slices.Sort(spans)
	subbuffer := func(role string) string {
		if slices.Contains(spans, role) {
			return role
		}
		return "ggml_vk_tensor_subbuffer(ctx, m." + role + ")"
	}
	bufs, err := fusion.WholeC(k, l.KernelBinds, subbuffer)
	if err != nil {
		return err
	}
	gbufs, err := fusion.WholeC(gather, l.GatherBinds, subbuffer)
	if err != nil {
		return err
	}
	bufs, gbufs = glue.Wrap(bufs, 96), glue.Wrap(gbufs, 96)
	_, gInit := pushStruct(gather, args)
	_, kInit := pushStruct(k, args)
	bools := fusion.BoolsC(fv.Table.Bools, fv.Flag, "1")
	vars := fmt.Sprintf("ggml_vk_%s_variants", shared.Name)

	fmt.Fprintf(w, "\nstatic void %[1]s_record_%[2]s(ggml_backend_vk_context * ctx, vk_context & subctx, const %[1]s_%[2]s & m) {\n", p, n)
	fmt.Fprintf(w, "    uint32_t i = 0; // the matcher checked that the variant exists\n    while (%s[i][0] != m.%s) {\n        ++i;\n    }\n", vars, fv.Key)
	for j, c := range fv.Table.Columns {
		if fusion.NamedIn(c, fam.Grid[:]...) {
			fmt.Fprintf(w, "    const uint32_t %s = %s[i][%d];\n", c, vars, j)
		}
	}
	fmt.Fprintf(w, "    // %s\n    vk_subbuffer scratch = ggml_vk_tensor_subbuffer(ctx, m.%s);\n", scratch.WhyC(), scratch.Role)
	if !scratch.Whole() {
		fmt.Fprintf(w, "    const size_t scratch_offs = %s;\n    scratch.offset += scratch_offs;\n    scratch.size -= scratch_offs;\n", scratch.Offset.C(field))
	}
	for _, role := range spans {
		fmt.Fprintf(w, "    // the %[1]s's rows, then the snapshot slots the kernel writes past them\n    vk_subbuffer %[1]s = ggml_vk_tensor_subbuffer(ctx, m.%[1]s);\n    %[1]s.size += (size_t) (%[2]s - 1) * %[3]s * sizeof(float);\n",
			role, field(fusion.SlotsArg), field(fusion.SlotStrideArg))
	}
	w.WriteString(fusion.GatherGuardC(field))
	fmt.Fprintf(w, "        %s_gather(ctx, subctx, %s, {\n", p, strings.Join(gbufs, " "))
	for _, l := range gInit {
		fmt.Fprintf(w, "            %s\n", l)
	}
	w.WriteString("        });\n    }\n")
	fmt.Fprintf(w, "    const vk_op_%s_push_constants pc = {\n", shared.Name)
	for _, l := range kInit {
		fmt.Fprintf(w, "        %s\n", l)
	}
	fmt.Fprintf(w, "    };\n    vk_pipeline pipeline = ctx->device->pipeline_%s[i][%s];\n", shared.Name, strings.Join(bools, "]["))
	w.WriteString("    ggml_pipeline_request_descriptor_sets(ctx, pipeline, 1);\n    ggml_vk_dispatch_pipeline(ctx, subctx, pipeline, {\n")
	for _, l := range bufs {
		fmt.Fprintf(w, "        %s\n", l)
	}
	fmt.Fprintf(w, "    }, pc, { %s, %s, %s });\n}\n", fam.Grid[0], fam.Grid[1], fam.Grid[2])
	return nil
}

// fusionGather writes the gather both patterns record (the ops form's
// shader and pipeline): its dispatch over the push constants, as the glue's
// family view spells it, then the barrier the compute needs.
func fusionGather(w *strings.Builder) error {
	views, err := glue.NewFamilyViews(fusionGlue.Names)
	if err != nil {
		return err
	}
	g := views[0].Gather
	var params, names []string
	for _, b := range g.Buffers {
		params = append(params, "vk_subbuffer "+b.Name)
		names = append(names, b.Name)
	}
	w.WriteString(fusion.GatherDocC)
	fmt.Fprintf(w, "static void %s_gather(ggml_backend_vk_context * ctx, vk_context & subctx, %s,\n        const vk_op_state_gather_push_constants & pc) {\n", fusionSpelling.Prefix, strings.Join(params, ", "))
	for _, a := range g.GridArgs {
		fmt.Fprintf(w, "    const %s %s = pc.%s;\n", a.CType, a.Name, a.Name)
	}
	w.WriteString("    ggml_pipeline_request_descriptor_sets(ctx, ctx->device->pipeline_state_gather, 1);\n")
	fmt.Fprintf(w, "    ggml_vk_dispatch_pipeline(ctx, subctx, ctx->device->pipeline_state_gather, { %s }, pc, { %s, %s, %s });\n", strings.Join(names, ", "), g.Grid[0], g.Grid[1], g.Grid[2])
	w.WriteString("    ggml_vk_sync_buffers(ctx, subctx);\n}\n")
	return nil
}
