package cuda

import (
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/internal/integration"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops/fusion"
)

// CUDA's spelling of the decode step's fusions (ops/fusion): the names, its
// variant table, the kernels it runs, the calls in the graph's node loop.
// Its kernels take every value the patterns allow (no Fixed).
var fusionSpelling = fusion.Spelling{Prefix: "ggml_cuda_fusion", Target: name}

func init() {
	Backend.Fusion = &integration.Fusion{
		Backend: name, Off: "GGML_CUDA_DISABLE_FUSION=1", Budget: 500, Dir: "src/ggml-cuda/",
		Kernels: &integration.Fusion{
			Subject: "cuda : add gated delta net and conv-update kernels that update the state cache in place",
			Body: `Add the kernels that the fusion of the gated delta net decode step runs
(the next commit matches the graph and launches them): GATED_DELTA_NET
reading each sequence's prior state from its cache row by the slot ids and
writing the new state into the cache rows in place, SSM_CONV's update of
one token that reads the conv taps the same way and writes the shifted
taps back, and the copy that runs first: the rows that another sequence of
the step overwrites go to a scratch, so aliasing slot ids read what
GET_ROWS read. With K > 1 both kernels also write the K snapshot slots
(MTP) into the cache rows, slot i one slot stride further, the conv kernel
over the step's K tokens. They keep the unfused kernels' arithmetic (warp
reductions, __expf). Nothing includes them yet.`,
			Files: fusionKernelFiles,
		},
		Subject: "cuda : fuse the gated delta net decode step with its state reads and writes",
		Body: `llama.cpp builds one GDN layer's decode step as GET_ROWS of the recurrent
state cache -> RESHAPE -> GATED_DELTA_NET -> VIEW -> CPY back into the cache,
and GET_ROWS of the conv cache -> CONCAT with the token -> VIEW -> CPY, with
SSM_CONV -> SILU on the concatenation. Match both chains once per graph,
looking past the projections between a GET_ROWS and its consumer, and run one
kernel per chain at the GATED_DELTA_NET / SSM_CONV: it reads each sequence's
state from its cache row by the slot ids and writes the new state into the
cache rows in place, so the GET_ROWS, the views and the CPY are skipped. Rows
that another sequence of the step overwrites are copied first, so aliasing
slot ids read what GET_ROWS read. With K > 1 snapshots (MTP) the kernels
write each snapshot slot into its cache rows as the CPYs would.

The fusion is taken only where it keeps the graph's results: no
intermediate read elsewhere or marked output, nothing between the read and
the write touching the cache, one contiguous f32 cache in CUDA memory,
shapes the kernels are built for. Anything else runs unfused, and
GGML_CUDA_DISABLE_FUSION=1 turns it off.`,
		Files: fusionFiles,
		Sections: []integration.Section{
			{Name: "include the decode-step fusion", File: "src/ggml-cuda/ggml-cuda.cu",
				Anchor: []string{`#include "ggml-cuda/ssm-conv.cuh"`}, Place: integration.After,
				Text: integration.Text{Literal: "#include \"ggml-cuda/gdn-fusion.cuh\"\n"}},
			{Name: "match the decode steps before the node loop", File: "src/ggml-cuda/ggml-cuda.cu",
				Anchor: []string{"static void ggml_cuda_graph_evaluate_and_capture(", "for (int i = 0; i < cgraph->n_nodes; i++) {"}, Place: integration.Before,
				Text: integration.Text{BlankAfter: true, Literal: `            // gated delta net decode steps (gdn-fusion.cuh): the GET_ROWS they replace run before
            // the node whose place they take, so the graph is matched once before the loop
            static const bool gdn_fusion_off = getenv("GGML_CUDA_DISABLE_FUSION") != nullptr && std::atoi(getenv("GGML_CUDA_DISABLE_FUSION"));
` + fusionSpelling.FindC(fusion.Find{Indent: "            ", On: "!gdn_fusion_off", Matches: "gdn_fusion", Local: true,
					Owns: []string{"cache->buffer != nullptr && ggml_backend_buffer_is_cuda(cache->buffer)"}})}},
			{Name: "run the fused decode steps", File: "src/ggml-cuda/ggml-cuda.cu",
				Anchor: []string{"static void ggml_cuda_graph_evaluate_and_capture(", "if ((node->flags & GGML_TENSOR_FLAG_COMPUTE) == 0) {", "}"}, Place: integration.After,
				Text: integration.Text{BlankBefore: true, Literal: fusionSpelling.RunCallC("                ", "*cuda_ctx, gdn_fusion, node")}},
		},
	}
}

// fusionKernelFiles are the kernels (FusionKernels: the ops form's text, the
// GDN kernel writing the snapshot slots too), the fusion's first step.
func fusionKernelFiles() ([]integration.FusionFile, error) {
	kernels, err := FusionKernels()
	if err != nil {
		return nil, err
	}
	var out []integration.FusionFile
	for _, k := range kernels {
		if k.InGlue || k.Spliced {
			return nil, fmt.Errorf("cuda fusion: kernel %s is not a file of its own", k.Name)
		}
		out = append(out, integration.FusionFile{Name: k.Name, Data: k.Data})
	}
	return out, nil
}

// fusionFiles are gdn-fusion.cuh: the matchers, one launcher per pattern
// and the run, over the kernels of fusionKernelFiles.
func fusionFiles() ([]integration.FusionFile, error) {
	kernels, err := fusionKernelFiles()
	if err != nil {
		return nil, err
	}
	var includes []string
	for _, k := range kernels {
		includes = append(includes, k.Name)
	}
	text, err := fusion.MatcherC(fusionSpelling, fusion.Patterns...)
	if err != nil {
		return nil, err
	}
	var w strings.Builder
	w.WriteString(fusion.HeaderC("common.cuh", includes...))
	w.WriteString(fusion.IntroC("run as one kernel") + "\n")
	w.WriteString(text)
	p := fusionSpelling.Prefix
	err = fusion.Run{
		Pattern:   fusionLaunch,
		Doc:       "runs node's fused kernels where it anchors a match; true where the node is one they replace",
		Signature: fmt.Sprintf("static bool %[1]s_run(ggml_backend_cuda_context & ctx, const %[1]s_matches & ms, const ggml_tensor * node) {", p),
		Branch: func(n string) string {
			return fusion.FindC("ms.", n, fmt.Sprintf("        %s_run_%s(ctx, %s->second);\n", p, n, n))
		},
	}.C(&w, fusion.Patterns...)
	if err != nil {
		return nil, fmt.Errorf("cuda fusion: %w", err)
	}
	return []integration.FusionFile{{Name: "gdn-fusion.cuh", Data: []byte(w.String())}}, nil
}

// fusionLaunch writes pattern pt's launcher and run: the gather, then the
// family's kernel at the variant of the match, every buffer and arg bound as
// the pattern's plan says (Bind by the kernel buffer's node role, Arg by
// name).
func fusionLaunch(w *strings.Builder, pt *fusion.Pattern) error {
	p, n := fusionSpelling.Prefix, pt.CName()
	l, err := pt.Launch(name)
	if err != nil {
		return err
	}
	shared, k, gather := l.Shared, l.Kernel, l.Gather
	fv, err := glue.FamilyViewOf(glueTarget.Names, shared.Name)
	if err != nil {
		return err
	}
	field := fusion.InMatch
	args := pt.ArgsC(field)
	call := fusion.CallC(k, l.KernelBinds, args, field)
	fmt.Fprintf(w, "\ntemplate <%s>\n", fv.LaunchParams)
	fmt.Fprintf(w, "static void %s_launch_%s(const %s_%s & m, float * scratch, cudaStream_t stream, %s) {\n", p, n, p, n, fv.BoolParams)
	for _, d := range fv.Derived {
		fmt.Fprintf(w, "    constexpr %s %s = %s;\n", d.CType, d.Name, d.Expr)
	}
	grid, block := glue.LaunchC(k, args)
	fmt.Fprintf(w, "    const dim3 grid(%s);\n    const dim3 block(%s);\n", strings.Join(grid[:], ", "), strings.Join(block[:], ", "))
	fmt.Fprintf(w, "    const auto kernel = %s;\n", fv.Pick)
	fmt.Fprintf(w, "    ggml_cuda_kernel_launch(kernel, ggml_cuda_kernel_launch_params(grid, block, 0, stream),\n")
	writeArgs(w, "        ", glue.Wrap(call, 92))
	w.WriteString("}\n")

	// the run: the gather into scratch, then the kernel at the match's variant
	gcall := fusion.CallC(gather, l.GatherBinds, args, field)
	fmt.Fprintf(w, "\nstatic void %[1]s_run_%[2]s(ggml_backend_cuda_context & ctx, const %[1]s_%[2]s & m) {\n", p, n)
	fmt.Fprintf(w, "    cudaStream_t stream = ctx.stream();\n    // %s\n    float * scratch = %s;\n", l.Scratch.WhyC(), fusion.DataC(&ir.Buffer{Elem: ir.F32}, l.Scratch, field))
	grid, block = glue.LaunchC(gather, args)
	w.WriteString(fusion.GatherGuardC(field))
	fmt.Fprintf(w, "        const dim3 grid(%s);\n        const dim3 block(%s);\n", strings.Join(grid[:], ", "), strings.Join(block[:], ", "))
	fmt.Fprintf(w, "        ggml_cuda_kernel_launch(%s, ggml_cuda_kernel_launch_params(grid, block, 0, stream),\n", glueTarget.Names.Function(gather))
	writeArgs(w, "            ", glue.Wrap(gcall, 88))
	w.WriteString("    }\n")
	bools := fusion.BoolsC(fv.Table.Bools, fv.Flag, "true")
	fmt.Fprintf(w, "    switch (m.%s) {\n", fv.Key)
	for _, c := range fv.Cases {
		fmt.Fprintf(w, "        case %s: %s_launch_%s<%s>(m, scratch, stream, %s); break;\n", c.Value, p, n, c.TemplateArgs, strings.Join(bools, ", "))
	}
	fmt.Fprintf(w, "        default: GGML_ABORT(\"%s: no kernel for %s = %%d\", (int) m.%s);\n    }\n}\n", pt.Name, fv.Key, fv.Key)
	return nil
}

// writeArgs writes a launch's wrapped arguments (lines) at indent, the last
// closing the call.
func writeArgs(w *strings.Builder, indent string, lines []string) {
	for i, l := range lines {
		if i == len(lines)-1 {
			l += ");"
		}
		fmt.Fprintf(w, "%s%s\n", indent, l)
	}
}
