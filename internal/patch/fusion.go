package patch

import (
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/internal/integration"
)

// FusionPlan returns the fusion form's steps for the named backends ("all"
// for every backend with a fusion step): the test-backend-ops cases of the
// decode step, then each backend's in the order forms come in (the
// registry's, as the ops form's manifests): its kernels where they are a
// step of their own (integration.Fusion.Kernels), then the matchers and the
// dispatch; no ops step and no gate, since the form adds no op
// (docs/fusion.md).
func FusionPlan(fs []*integration.Fusion, names []string) ([]*Step, error) {
	want := map[string]bool{}
	for _, n := range names {
		known := n == "all"
		for _, f := range fs {
			known = known || f.Backend == n
			want[f.Backend] = want[f.Backend] || n == "all" || f.Backend == n
		}
		if !known {
			var have []string
			for _, f := range fs {
				have = append(have, f.Backend)
			}
			return nil, fmt.Errorf("no fusion form for %q yet: it has %s (the ops form, --form ops, has every backend)", n, strings.Join(have, ", "))
		}
	}
	var offs []string
	for _, f := range fs {
		if want[f.Backend] && f.Off != "" {
			offs = append(offs, f.Off)
		}
	}
	tests, err := fusionTestsStep(offs)
	if err != nil {
		return nil, err
	}
	steps := []*Step{tests}
	for _, f := range fs {
		if !want[f.Backend] {
			continue
		}
		for _, part := range f.Parts() {
			s, err := fusionStep(part)
			if err != nil {
				return nil, fmt.Errorf("%s fusion: %w", f.Backend, err)
			}
			steps = append(steps, s)
		}
	}
	return steps, nil
}

func fusionStep(f *integration.Fusion) (*Step, error) {
	step := &Step{Backend: f.Backend, Subject: f.Subject, Body: f.Body, Manifest: true}
	var baseEdit func(integration.Section) (Edit, error)
	if f.Base != nil {
		files, edit, err := renderManifest(f.Base)
		if err != nil {
			return nil, err
		}
		step.Files, baseEdit = files, edit
	}
	if f.Files != nil {
		files, err := f.Files()
		if err != nil {
			return nil, err
		}
		for _, nf := range files {
			step.Files = append(step.Files, NewFile{Path: f.Dir + nf.Name, Data: upstreamText(nf.Data)})
		}
	}
	texts := map[string]string{}
	if f.Texts != nil {
		var err error
		if texts, err = f.Texts(); err != nil {
			return nil, err
		}
	}
	edit := func(s integration.Section) (Edit, error) {
		if t, ok := texts[s.Text.Section]; ok {
			s.Text.Section, s.Text.Literal = "", string(upstreamText([]byte(t)))
		}
		if s.Text.Section != "" || s.Text.Kernel != "" { // the base manifest's text
			if baseEdit == nil {
				return Edit{}, fmt.Errorf("section %q: no text %q (and no base manifest)", s.Name, s.Text.Section+s.Text.Kernel)
			}
			return baseEdit(s)
		}
		if s.File == "" || len(s.Anchor) == 0 || !strings.HasSuffix(s.Text.Literal, "\n") {
			return Edit{}, fmt.Errorf("section %q: a file, an anchor path and literal lines", s.Name)
		}
		body := s.Text.Literal
		if s.Text.BlankBefore {
			body = "\n" + body
		}
		if s.Text.BlankAfter {
			body += "\n"
		}
		place := After
		switch s.Place {
		case integration.Before:
			place = Before
		case integration.Replace:
			if s.Until == "" {
				return Edit{}, fmt.Errorf("section %q: a section that replaces lines needs Until", s.Name)
			}
			place = Replace
		}
		return Edit{Name: s.Name, File: s.File, Anchor: s.Anchor, Place: place, Text: body, Until: s.Until, Defines: s.Defines}, nil
	}
	edits, err := revisedEdits("", f.Sections, f.Revisions, edit)
	if err != nil {
		return nil, err
	}
	step.Edits = append(step.Edits, edits...)
	if f.ForTree != nil {
		step.forTree = func(t *Tree) ([]*Step, error) {
			adapted, err := f.ForTree(f, t.readGGML)
			if err != nil {
				return nil, fmt.Errorf("%s fusion: %w", f.Backend, err)
			}
			once := *adapted
			once.ForTree = nil
			s, err := fusionStep(&once)
			return []*Step{s}, err
		}
	}
	return step, nil
}

// fusionTestsStep adds test-backend-ops cases that build one GDN layer's
// decode step as llama.cpp does, with the cache copies in the graph (the
// harness expands a test's expand_first before its output).
func fusionTestsStep(offs []string) (*Step, error) {
	t, err := commonSections("tbo-fusion-member", "tbo-fusion-expand", "tbo-fusion-perf-runs", "tbo-fusion-perf-mem", "tbo-fusion-class", "tbo-fusion-cases", "tbo-fusion-perf")
	if err != nil {
		return nil, err
	}
	const expand = "ggml_build_forward_expand(gf, out);"
	return &Step{
		Backend: "tests",
		Subject: "tests : add the gated delta net decode step as llama.cpp builds it",
		Body: `Backends fuse the nodes llama.cpp builds for one GDN layer's decode step
(GET_ROWS of the state caches by the sequences' slot ids, GATED_DELTA_NET
and the conv chain, the CPYs of the new state back into the caches), but
no test builds that graph: the cache copies are expanded by llama.cpp
itself, not reached from an output. Let a test put nodes in the graph
before its output (expand_first) and add GDN_DECODE_STEP, which compares
the attention, the conv output and both whole caches with the CPU, with
slot ids that alias (a rotation, a shared row, rows outside the window),
kv_head > 0, S_v 64 and 128, GQA and KDA, and MTP steps of K = 2..4
tokens whose K state snapshots are copied into the caches' snapshot rows.
Cases where an intermediate is read by another node or is an output
compare that node too: a backend must leave that part unfused. In perf
mode such a test runs whole, once per run, and its memory is the bytes a
decode step must move (the sequences' state and conv rows read and
written, the inputs read, the outputs written); cases at Qwen3.5 27B and
35B-A3B shapes, K = 1 and 3.` + unfusedRun(offs),
		Edits: []Edit{
			{Name: "the tests' expand_first", File: testOps, Place: After,
				Anchor: []string{"struct test_case {", "virtual std::vector<ggml_tensor *> fusion_test_nodes() { return {}; }"},
				Text:   "\n" + t["tbo-fusion-member"] + "\n", Defines: []string{"std::vector<ggml_tensor *> expand_first;"}},
			{Name: "expanded before the output", File: testOps, Place: Before,
				Anchor: []string{"test_status_t eval(ggml_backend_t backend1,", expand},
				Text:   t["tbo-fusion-expand"] + "\n"},
			{Name: "expanded before the output in perf mode", File: testOps, Place: Before,
				Anchor: []string{"bool eval_perf(ggml_backend_t backend,", expand},
				Text:   t["tbo-fusion-expand"] + "\n"},
			{Name: "perf mode runs such a test whole, once per run", File: testOps, Place: Before,
				Anchor: []string{"bool eval_perf(ggml_backend_t backend,", "// duplicate the op"},
				Text:   t["tbo-fusion-perf-runs"] + "\n\n"},
			{Name: "and counts the bytes it says the subgraph moves", File: testOps, Place: Before,
				Anchor: []string{"bool eval_perf(ggml_backend_t backend,", "// calculate memory", "// run\n"},
				Text:   t["tbo-fusion-perf-mem"] + "\n\n"},
			{Name: "the decode step", File: testOps, Place: Before,
				Anchor:  []string{"// GGML_OP_GATED_DELTA_NET\nstruct test_gated_delta_net : public test_case {"},
				Text:    strings.TrimRight(t["tbo-fusion-class"], "\n") + "\n\n",
				Defines: []string{"struct test_gdn_decode_step "}},
			{Name: "its cases", File: testOps, Place: Before,
				Anchor: []string{"static std::vector<std::unique_ptr<test_case>> make_test_cases_eval(", "test_cases.emplace_back(new test_gated_delta_net("},
				Text:   strings.TrimRight(t["tbo-fusion-cases"], "\n") + "\n\n"},
			{Name: "its perf cases", File: testOps, Place: After,
				Anchor: []string{"static std::vector<std::unique_ptr<test_case>> make_test_cases_perf(", "std::vector<std::unique_ptr<test_case>> test_cases;"},
				Text:   "\n" + strings.TrimRight(t["tbo-fusion-perf"], "\n") + "\n"},
		},
	}, nil
}

// unfusedRun is the tests' message's last paragraph: how to run the cases
// with each backend's fusions off (offs, integration.Fusion.Off), wrapped
// as git's messages are.
func unfusedRun(offs []string) string {
	if len(offs) == 0 {
		return ""
	}
	words := strings.Fields("To compare the unfused graph, run it with the backend's fusions off: " + strings.Join(offs, ", ") + ".")
	var out, line strings.Builder
	for _, w := range words {
		if line.Len() > 0 && line.Len()+1+len(w) > 72 {
			out.WriteString(line.String() + "\n")
			line.Reset()
		}
		if line.Len() > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(w)
	}
	return "\n\n" + out.String() + line.String()
}
