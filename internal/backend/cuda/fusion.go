package cuda

import (
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/internal/integration"
	"github.com/kernelgen/kernelgen/ops/fusion"
)

// CUDA's spelling of the decode step's fusions (ops/fusion): the names, its
// variant table, the call in ggml_cuda_try_fuse with its buffer test. The
// matcher runs on every GDN and SSM_CONV node and reports; the dispatch of
// the fused kernels is the next step (docs/fusion.md, status).
var fusionSpelling = fusion.Spelling{Prefix: "ggml_cuda_fusion", Target: name}

func init() {
	Backend.Fusion = &integration.Fusion{
		Backend: name, Order: 4, Budget: 500, Dir: "src/ggml-cuda/",
		Subject: "cuda : match the gated delta net decode step for fusion",
		Body: `llama.cpp builds one GDN layer's decode step as GET_ROWS of the recurrent
state cache -> RESHAPE -> GATED_DELTA_NET -> VIEW -> CPY back into the cache,
and GET_ROWS of the conv cache -> CONCAT with the token -> VIEW -> CPY, with
SSM_CONV -> SILU on the concatenation. Match both chains on the graph as
built, looking past the projections between a GET_ROWS and its consumer,
and only where fusing keeps the graph's results: no intermediate read
elsewhere or marked output, nothing between the read and the write touching
the cache, one contiguous f32 cache in CUDA memory, shapes the fused kernels
take. Matches are reported at debug level; the fused dispatch follows.`,
		Files: fusionFiles,
		Sections: []integration.Section{
			{Name: "include the decode-step matchers", File: "src/ggml-cuda/ggml-cuda.cu",
				Anchor: []string{`#include "ggml-cuda/ssm-conv.cuh"`}, Place: integration.After,
				Text: integration.Text{Literal: "#include \"ggml-cuda/gdn-fusion.cuh\"\n"}},
			{Name: "match the decode step", File: "src/ggml-cuda/ggml-cuda.cu",
				Anchor: []string{"static int ggml_cuda_try_fuse(", "if (disable_fusion) {", "}"}, Place: integration.After,
				Text: integration.Text{BlankBefore: true, Literal: `    // the gated delta net decode step (gdn-fusion.cuh)
    if (cgraph->nodes[i]->op == GGML_OP_GATED_DELTA_NET || cgraph->nodes[i]->op == GGML_OP_SSM_CONV) {
        ggml_cuda_fusion_report(cgraph, i, [](const ggml_tensor * cache) {
            return cache->buffer != nullptr && ggml_backend_buffer_is_cuda(cache->buffer);
        });
    }
`}},
		},
	}
}

// fusionFiles is gdn-fusion.cuh: the matchers and the report.
func fusionFiles() ([]integration.FusionFile, error) {
	text, err := fusion.MatcherC(fusionSpelling, fusion.Patterns...)
	if err != nil {
		return nil, err
	}
	var w strings.Builder
	w.WriteString("#pragma once\n\n#include \"common.cuh\"\n\n")
	w.WriteString("// Matchers of the gated delta net decode step as llama.cpp builds it: the\n")
	w.WriteString("// recurrent state and the conv state, each read by GET_ROWS through the\n")
	w.WriteString("// sequences' slots and copied back into the cache rows of the ubatch.\n\n")
	w.WriteString(text)
	p := fusionSpelling.Prefix
	fmt.Fprintf(&w, "\nstatic void %s_report(const ggml_cgraph * cgraph, int i, bool (*owns)(const ggml_tensor * cache)) {\n", p)
	w.WriteString("    const ggml_tensor * node = cgraph->nodes[i];\n")
	for _, pt := range fusion.Patterns {
		n := strings.ReplaceAll(pt.Name, "-", "_")
		fmt.Fprintf(&w, "    if (node->op == GGML_OP_%s) {\n        %s_%s m;\n", pt.Nodes[0].Op, p, n)
		fmt.Fprintf(&w, "        GGML_LOG_DEBUG(\"%%s: %%s: %s %%s\\n\", __func__, node->name, %s_match_%s(cgraph, i, owns, m) ? \"matches\" : \"stays unfused\");\n    }\n", pt.Name, p, n)
	}
	w.WriteString("}\n")
	return []integration.FusionFile{{Name: "gdn-fusion.cuh", Data: []byte(w.String())}}, nil
}
