package sycl

import (
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/emit/sycl"
	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/internal/integration"
	"github.com/kernelgen/kernelgen/internal/upstream"
	"github.com/kernelgen/kernelgen/ir"
	ctypes "github.com/kernelgen/kernelgen/ir/ctype"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/ops/fusion"
)

// SYCL's spelling of the decode step's fusions (ops/fusion): the names and
// its variant table. Its kernels take every value the patterns allow (no
// Fixed): the GDN kernel writes the K snapshot slots.
var fusionSpelling = fusion.Spelling{Prefix: "ggml_sycl_gdn_fusion", Target: name}

// fusionGlue is the upstream glue's names over the fusion form's kernels
// (the GDN kernel with the snapshot slots, glue.Names.Slots).
var fusionGlue = glueTarget.WithSlots(glueTarget.Upstream).Names

const graphCompute = "static void ggml_backend_sycl_graph_compute_impl(ggml_backend_sycl_context * sycl_ctx, ggml_cgraph * cgraph) {"

func init() {
	Backend.Fusion = &integration.Fusion{
		Backend: name, Off: "GGML_SYCL_ENABLE_FUSION=0", Budget: 450, Dir: "src/ggml-sycl/",
		Kernels: &integration.Fusion{
			Subject: "sycl : add gated delta net and conv-update kernels that update the state cache in place",
			Body: `Add the kernels that the fusion of the gated delta net decode step runs,
each with its launch (the next commit matches the graph and calls them):
GATED_DELTA_NET reading each sequence's prior state from its cache row by
the slot ids and writing the new state into the cache rows in place,
SSM_CONV's update of one token that reads the conv taps the same way and
writes the shifted taps back, and the copy that runs first: the rows that
another sequence of the step overwrites go to a scratch, so aliasing slot
ids read what GET_ROWS read. With K > 1 both kernels also write the K
snapshot slots (MTP) into the cache rows, slot i one slot stride further,
the conv kernel over the step's tokens. They keep the unfused kernels'
arithmetic (sub-group XOR butterfly, sycl::native::exp,
reqd_sub_group_size(WARP_SIZE)); a column reduces over at most 16 lanes,
so it stays within one sub-group at WARP_SIZE 16 (Intel) and 32. Nothing
includes them yet.`,
			Files: fusionKernelFiles,
		},
		Subject: "sycl : fuse the gated delta net decode step with its state reads and writes",
		Body: `llama.cpp builds one GDN layer's decode step as GET_ROWS of the recurrent
state cache -> RESHAPE -> GATED_DELTA_NET -> VIEW -> CPY back into the cache,
and GET_ROWS of the conv cache -> CONCAT with the token -> VIEW -> CPY, with
SSM_CONV -> SILU on the concatenation. Match both chains once per graph,
looking past the projections between a GET_ROWS and its consumer, and run one
kernel per chain at the GATED_DELTA_NET / SSM_CONV: it reads each sequence's
state from its cache row by the slot ids and writes the new state into the
cache rows in place, so the GET_ROWS, the views and the CPY are skipped. Rows
that another sequence of the step overwrites are copied first (the queue is
in order), so aliasing slot ids read what GET_ROWS read. With K > 1 snapshots
(MTP) the kernels write each snapshot slot into its cache rows as the CPYs
would.

The fusion is taken only where it keeps the graph's results: no
intermediate read elsewhere or marked output, nothing between the read and
the write touching the cache, one contiguous f32 cache in this device's
SYCL memory, shapes the kernels are built for. Anything else runs unfused
(a GATED_DELTA_NET -> CPY still gets the existing cache fusion where there
is one), and GGML_SYCL_ENABLE_FUSION=0 turns it off.`,
		Files: fusionFiles,
		Sections: []integration.Section{
			{Name: "include the decode-step fusion", File: cpp,
				Anchor: []string{`#include "ggml-sycl/gated_delta_net.hpp"`}, Place: integration.After,
				Text: integration.Text{Literal: "#include \"ggml-sycl/gdn-fusion.hpp\"\n"}},
			{Name: "match the decode steps before the node loop", File: cpp,
				Anchor: []string{graphCompute, "for (int i = 0; i < cgraph->n_nodes; i++) {"}, Place: integration.Before,
				Text: integration.Text{BlankAfter: true, Literal: `    // gated delta net decode steps (gdn-fusion.hpp), matched once: a step runs the GET_ROWS it replaces
    static const bool gdn_fusion_on = ggml_sycl_get_env("GGML_SYCL_ENABLE_FUSION", 1) != 0;
` + fusionSpelling.FindC(fusion.Find{Indent: "    ", On: "gdn_fusion_on", Matches: "gdn_fusion", Local: true, Capture: "sycl_ctx",
					Owns: []string{"cache->buffer != nullptr && ggml_backend_buffer_is_sycl(cache->buffer) &&",
						"((ggml_backend_sycl_buffer_context *) cache->buffer->context)->device == sycl_ctx->device"}})}},
			{Name: "run the fused decode steps", File: cpp,
				Anchor: []string{graphCompute, "if ((node->flags & GGML_TENSOR_FLAG_COMPUTE) == 0) {", "}"}, Place: integration.After,
				Text: integration.Text{Literal: fusionSpelling.RunCallC("        ", "*sycl_ctx, gdn_fusion, node")}},
		},
	}
}

// fusionKernelFiles are the kernels (FusionKernels: the ops form's text, the
// GDN kernel writing the snapshot slots too), each header with its launch
// over plain pointers and args: the gather's, and each family's launcher
// and the pick of its variant. Nothing in them reads a node; the next step
// binds them to the matched tensors.
func fusionKernelFiles() ([]integration.FusionFile, error) {
	ks, err := upstream.FusionKernels(name)
	if err != nil {
		return nil, err
	}
	var out []integration.FusionFile
	for _, k := range ks {
		body, err := sycl.UpstreamBody(k.Summary, []*ir.Kernel{k.K})
		if err != nil {
			return nil, err
		}
		var w strings.Builder
		w.WriteString("#pragma once\n\n#include \"common.hpp\"\n")
		w.Write(body)
		if k.Shared == nil {
			err = gatherLaunch(&w)
		} else {
			err = familyLaunch(&w, k.Shared.Name)
		}
		if err != nil {
			return nil, fmt.Errorf("sycl fusion: %s: %w", k.FileName(".hpp"), err)
		}
		out = append(out, integration.FusionFile{Name: k.FileName(".hpp"), Data: []byte(w.String())})
	}
	return out, nil
}

// gatherLaunch writes the gather's launch, as the glue's family view spells
// it (the ops form's).
func gatherLaunch(w *strings.Builder) error {
	views, err := glue.NewFamilyViews(fusionGlue)
	if err != nil {
		return err
	}
	g := views[0].Gather
	w.WriteString("\n// work runs in order on the queue: the copy ends before the compute that reads it starts\n")
	fmt.Fprintf(w, "static void %s(dpct::queue_ptr stream, %s) {\n", gatherFunction, g.Params)
	w.WriteString("    // with one sequence no source is another sequence's destination: nothing to copy\n")
	w.WriteString("    if (n_seqs < 2) {\n        return;\n    }\n")
	writeRanges(w, g.Workgroup, g.Grid)
	fmt.Fprintf(w, "    stream->parallel_for(sycl::nd_range<3>(global, local), [=](sycl::nd_item<3> item) {\n        %s(%s, item);\n    });\n}\n", g.Function, g.CallNames)
	return nil
}

const gatherFunction = "ggml_sycl_state_gather"

// writeRanges declares a launch's local and global ranges: SYCL lists
// dimensions slowest first, so the kernel's x is dimension 2.
func writeRanges(w *strings.Builder, wg, grid [3]string) {
	fmt.Fprintf(w, "    const sycl::range<3> local(%s, %s, %s);\n", wg[2], wg[1], wg[0])
	fmt.Fprintf(w, "    const sycl::range<3> global(%s * local[0], %s * local[1], %s * local[2]);\n", grid[2], grid[1], grid[0])
}

// kernelParams are k's buffers and args as a host function's parameters,
// in the kernel's order, wrapped.
func kernelParams(k *ir.Kernel) []string {
	var ps []string
	for _, b := range k.Buffers {
		c := ""
		if b.Access == ir.Read {
			c = "const "
		}
		ps = append(ps, c+ctypes.C.Of(b.Elem)+" * "+b.Name)
	}
	for _, a := range k.Args {
		ps = append(ps, ctypes.C.Of(a.Type)+" "+a.Name)
	}
	return glue.Wrap(ps, 100)
}

// writeParams writes a function's wrapped parameter lines (kernelParams),
// the last opening its body.
func writeParams(w *strings.Builder, params []string) {
	for i, p := range params {
		if i == len(params)-1 {
			p += ") {"
		}
		fmt.Fprintf(w, "        %s\n", p)
	}
}

// pickFunction is the function that launches family shared's kernel at a
// variant (familyLaunch).
func pickFunction(shared string) string { return "ggml_sycl_" + shared }

// familyLaunch writes family shared's launcher (the kernel at one variant
// over plain pointers and args, as the ops form's launcher runs it) and
// its pick: the variant of the switch key and the bools but the flag, which
// is set (the fused decode step reads each sequence's rows by its slot id).
func familyLaunch(w *strings.Builder, shared string) error {
	fv, err := glue.FamilyViewOf(fusionGlue, shared)
	if err != nil {
		return err
	}
	fam := fv.Own.(*family)
	var k *ir.Kernel
	for _, f := range ops.SharedKernels() {
		if f.Name == shared {
			if k, err = f.SlotsKernel(ir.Native(name)); err != nil {
				return err
			}
		}
	}
	params := kernelParams(k)
	launcher := sycl.FunctionName(k) + "_sycl"
	fmt.Fprintf(w, "\ntemplate <%s>\nstatic void %s(dpct::queue_ptr stream,\n", fam.TemplateParams, launcher)
	writeParams(w, params)
	for _, d := range fv.Derived {
		fmt.Fprintf(w, "    constexpr %s %s = %s;\n", d.CType, d.Name, d.Expr)
	}
	names := map[string]string{}
	for _, a := range k.Args {
		names[a.Name] = a.Name
	}
	grid, wg := glue.LaunchC(k, names)
	writeRanges(w, wg, grid)
	call := fmt.Sprintf("%s<%s>(", sycl.FunctionName(k), fv.TemplateArgs)
	last := len(fv.CallNames) - 1
	// a kernel that reduces takes local memory, one float per work-item
	indent, tail, end := "        ", ", item);", "    });\n}\n"
	if fam.Reduces {
		w.WriteString("    stream->submit([&](sycl::handler & cgh) {\n        sycl::local_accessor<float, 1> red(sycl::range<1>(local.size()), cgh);\n")
		w.WriteString("        cgh.parallel_for(sycl::nd_range<3>(global, local), [=](sycl::nd_item<3> item) [[sycl::reqd_sub_group_size(WARP_SIZE)]] {\n")
		indent, tail, end = "            ", ",\n                item, &red[0]);", "        });\n    });\n}\n"
	} else {
		w.WriteString("    stream->parallel_for(sycl::nd_range<3>(global, local), [=](sycl::nd_item<3> item) [[sycl::reqd_sub_group_size(WARP_SIZE)]] {\n")
	}
	fmt.Fprintf(w, "%s%s\n", indent, call)
	for i, c := range fv.CallNames {
		if i == last {
			c += tail
		}
		fmt.Fprintf(w, "%s    %s\n", indent, c)
	}
	w.WriteString(end)

	// the pick: the bools but the flag become template arguments through
	// std::bool_constant, the flag is true
	var vparams, vnames, lower []string
	for _, l := range fv.AllLocals {
		if l.Name == fv.Key || (l.CType == "bool" && l.Name != fv.Flag) {
			vparams, vnames = append(vparams, l.CType+" "+l.Name), append(vnames, l.Name)
		}
	}
	for _, b := range fv.Table.Bools {
		if b != fv.Flag {
			lower = append(lower, "auto "+strings.ToLower(b))
		}
	}
	fmt.Fprintf(w, "\n// launches the kernel at the variant of %s, each sequence reading its rows by its slot id\n", strings.Join(vnames, " and "))
	fmt.Fprintf(w, "static void %s(dpct::queue_ptr stream, %s,\n", pickFunction(shared), strings.Join(vparams, ", "))
	writeParams(w, params)
	w.WriteString("    const auto launch = [&](auto kernel) {\n        kernel(stream,\n")
	for i, c := range fv.CallNames {
		if i == last {
			c += ");"
		}
		fmt.Fprintf(w, "            %s\n", c)
	}
	fmt.Fprintf(w, "    };\n    const auto pick = [&](%s) {\n        switch (%s) {\n", strings.Join(lower, ", "), fv.Key)
	flag := strings.ToLower(fv.Flag)
	for _, c := range fv.Cases {
		targs := append([]string{}, c.Args...)
		for i := range targs {
			if targs[i] == flag {
				targs[i] = "true"
			}
		}
		fmt.Fprintf(w, "            case %s: launch(%s<%s>); break;\n", c.Value, launcher, strings.Join(targs, ", "))
	}
	fmt.Fprintf(w, "            default: GGML_ABORT(\"%s: no kernel for %s = %%d\", (int) %s);\n        }\n    };\n", shared, fv.Key, fv.Key)
	fmt.Fprintf(w, "    %s;\n}\n", boolFan(fv.Table.Bools, fv.Flag))
	return nil
}

// boolFan calls pick with each bool but the flag as a std::bool_constant.
func boolFan(bools []string, flag string) string {
	var fan func(i int, vals []string) string
	fan = func(i int, vals []string) string {
		if i == len(bools) {
			return "pick(" + strings.Join(vals, ", ") + ")"
		}
		with := func(v string) []string { return append(append([]string{}, vals...), v) }
		if bools[i] == flag {
			return fan(i+1, vals)
		}
		return fmt.Sprintf("%s ? %s : %s", bools[i], glue.Paren(fan(i+1, with("std::true_type()"))), glue.Paren(fan(i+1, with("std::false_type()"))))
	}
	return fan(0, nil)
}

// fusionFiles are gdn-fusion.hpp: the matchers and one run per pattern,
// which binds the gather's and the family's launch (fusionKernelFiles) to
// the match, and the run the node loop calls.
func fusionFiles() ([]integration.FusionFile, error) {
	kernels, err := fusionKernelFiles()
	if err != nil {
		return nil, err
	}
	text, err := fusion.MatcherC(fusionSpelling, fusion.Patterns...)
	if err != nil {
		return nil, err
	}
	var includes []string
	for _, k := range kernels {
		includes = append(includes, k.Name)
	}
	var w strings.Builder
	w.WriteString(fusion.HeaderC("common.hpp", includes...))
	w.WriteString("// The gated delta net decode step as llama.cpp builds it (the state caches read by GET_ROWS\n")
	w.WriteString("// through the slot ids and copied back), fused: kernels that update the cache rows in place.\n\n")
	w.WriteString(text)
	p := fusionSpelling.Prefix
	err = fusion.Run{
		Pattern:   fusionRun,
		Doc:       "runs node's fused kernels where it anchors a match; true where the node is one they replace",
		Signature: fmt.Sprintf("static bool %[1]s_run(ggml_backend_sycl_context & ctx, const %[1]s_matches & ms, const ggml_tensor * node) {", p),
		Branch: func(n string) string {
			return fmt.Sprintf("    if (ms.%[2]s.count(node) != 0) {\n        %[1]s_run_%[2]s(ctx, ms.%[2]s.at(node));\n    }\n", p, n)
		},
	}.C(&w, fusion.Patterns...)
	if err != nil {
		return nil, fmt.Errorf("sycl fusion: %w", err)
	}
	return []integration.FusionFile{{Name: "gdn-fusion.hpp", Data: []byte(w.String())}}, nil
}

// fusionRun writes pattern pt's run: the gather into the scratch, then the
// family's kernel at the match's variant, every buffer and arg of both
// bound as the pattern's plan says (Bind by the kernel buffer's node role,
// Arg by name).
func fusionRun(w *strings.Builder, pt *fusion.Pattern) error {
	p, n := fusionSpelling.Prefix, pt.CName()
	l, err := pt.Launch(name)
	if err != nil {
		return err
	}
	fv, err := glue.FamilyViewOf(fusionGlue, l.Shared.Name)
	if err != nil {
		return err
	}
	field := fusion.InMatch
	args := pt.ArgsC(field)
	// each call's arguments after its leading ones, wrapped
	call := func(k *ir.Kernel, binds map[string]fusion.Bind, lead []string) []string {
		return glue.Wrap(append(lead, fusion.CallC(k, binds, args, field)...), 92)
	}
	gcall := call(l.Gather, l.GatherBinds, []string{"ctx.stream()"})
	variant := append([]string{"ctx.stream()", field(fv.Key)}, fusion.BoolsC(fv.Table.Bools, fv.Flag, "")...)
	kcall := call(l.Kernel, l.KernelBinds, variant)
	fmt.Fprintf(w, "\nstatic void %[1]s_run_%[2]s(ggml_backend_sycl_context & ctx, const %[1]s_%[2]s & m) {\n", p, n)
	fmt.Fprintf(w, "    // %s\n    float * scratch = %s;\n", l.Scratch.WhyC(), fusion.DataC(&ir.Buffer{Elem: ir.F32}, l.Scratch, field))
	writeCall(w, "    ", gatherFunction, gcall)
	writeCall(w, "    ", pickFunction(l.Shared.Name), kcall)
	w.WriteString("}\n")
	return nil
}

// writeCall writes a call of fn over its wrapped arguments (lines), the
// first line beside fn, the others indented one step further.
func writeCall(w *strings.Builder, indent, fn string, lines []string) {
	for i, l := range lines {
		lead := indent + "    "
		if i == 0 {
			lead = indent + fn + "("
		}
		if i == len(lines)-1 {
			l += ");"
		}
		fmt.Fprintf(w, "%s%s\n", lead, l)
	}
}
