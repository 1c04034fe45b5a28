package patch

import (
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/internal/integration"
	"github.com/kernelgen/kernelgen/templates"
)

// The files of the ops step's builders, below the ggml root; the
// reference backend's manifest names its own.
const (
	ggmlH = "include/ggml.h"
	ggmlC = "src/ggml.c"
)

// builder is one of the series' four graph builders, by its name and the
// parameter types of its declaration in ggml.h (what callers compile against).
type builder struct {
	name  string
	types []string
}

const tensor = "struct ggml_tensor *"

// seriesBuilders are the builders as the series declares them (ops A-D).
var seriesBuilders = []builder{
	{"ggml_gated_delta_net_inplace", gdnTypes()},
	{"ggml_gated_delta_net_inplace_ids", append(gdnTypes(), tensor, "int")},
	{"ggml_ssm_conv_update_inplace", convTypes("bool")},
	{"ggml_ssm_conv_update_inplace_ids", convTypes(tensor, "int", "bool")},
}

// gdnTypes: ctx, q, k, v, g, beta, state, state_dst.
func gdnTypes() []string {
	return []string{"struct ggml_context *", tensor, tensor, tensor, tensor, tensor, tensor, tensor}
}

// convTypes: ctx, conv_states, conv_kernel, x_cur, conv_state_dst, then more.
func convTypes(more ...string) []string {
	return append([]string{"struct ggml_context *", tensor, tensor, tensor, tensor}, more...)
}

// opsStep is what a tree that lacks the fused ops needs first: the builders,
// the reference backend's kernels with their dispatch and work size (its
// manifest's Ops), and test-backend-ops cases.
func opsStep(ref *integration.Manifest) (*Step, error) {
	text, err := commonSections("ggml-h-gdn", "ggml-h-conv", "ggml-c-gdn", "ggml-c-conv")
	if err != nil {
		return nil, err
	}
	kernels, err := opsEdits(ref)
	if err != nil {
		return nil, err
	}
	tests, err := testEdits()
	if err != nil {
		return nil, err
	}
	edits := []Edit{
		{Name: "GDN builders", File: ggmlH, Place: After,
			Anchor:  []string{"GGML_API struct ggml_tensor * ggml_gated_delta_net(", "int64_t               K);"},
			Text:    "\n" + text["ggml-h-gdn"],
			Defines: []string{"ggml_gated_delta_net_inplace("}},
		{Name: "conv-update builders", File: ggmlH, Place: After,
			Anchor:  []string{"GGML_API struct ggml_tensor * ggml_ssm_conv(", "struct ggml_tensor  * c);"},
			Text:    "\n" + text["ggml-h-conv"],
			Defines: []string{"ggml_ssm_conv_update_inplace("}},
		{Name: "conv-update builders", File: ggmlC, Place: Before,
			Anchor: []string{"struct ggml_tensor * ggml_ssm_conv(", "// ggml_ssm_scan"},
			Text:   text["ggml-c-conv"] + "\n"},
		{Name: "GDN builders", File: ggmlC, Place: Before,
			Anchor: []string{"struct ggml_tensor * ggml_gated_delta_net(", "////////////////////////////////////////////////////////////////////////////////"},
			Text:   text["ggml-c-gdn"] + "\n"},
	}
	edits = append(append(edits, kernels...), tests...)
	return &Step{
		Backend: "ops",
		Subject: "ggml : add in-place gated delta net and conv-update ops",
		Body: `Add four graph builders for the recurrent decode step of gated
DeltaNet models. They reuse GGML_OP_GATED_DELTA_NET and GGML_OP_SSM_CONV
and are told apart by extra src slots:

  ggml_gated_delta_net_inplace      src[6] = state_dst
  ggml_gated_delta_net_inplace_ids  src[6] = state_dst, src[7] = ids
  ggml_ssm_conv_update_inplace      src[3] = conv_state_dst
  ggml_ssm_conv_update_inplace_ids  src[3] = conv_state_dst, src[4] = ids

The final state (the shifted conv taps) is written in place into the
cache rows at state_dst, and the ids forms read each sequence's prior
state from cache[ids[s]] instead of a get_rows copy. A sequence whose
source row is another sequence's destination reads the value from
before the node: the CPU kernels first copy those rows to a scratch
(the unused state region of the GDN output, the work buffer for the
conv update), then compute. Their arithmetic is that of the plain CPU
path (ggml_vec_dot_f32, ggml_vec_silu_f32, taps summed in order). As
for get_rows, each id must name a row of the cache: the CPU kernels
assert it, one condition each.

test-backend-ops gets cases that compare the output and the cache rows
written in place, with ids that read their own row, a row after the
window, and rows of other sequences of the same node; they are also
registered for perf mode.
`,
		Edits: edits,
	}, nil
}

// commonSections renders sections of the backend-independent templates.
func commonSections(names ...string) (map[string]string, error) {
	out := map[string]string{}
	for _, n := range names {
		s, err := templates.CommonSection(n)
		if err != nil {
			return nil, err
		}
		out[n] = s
	}
	return out, nil
}

// testEdits are the test-backend-ops cases for the fused nodes.
func testEdits() ([]Edit, error) {
	t, err := commonSections("tbo-classes", "tbo-cases", "tbo-perf")
	if err != nil {
		return nil, err
	}
	return []Edit{
		{Name: "test cases for the in-place fused nodes", File: testOps, Place: Before,
			Anchor:  []string{"// GGML_OP_GATED_DELTA_NET\nstruct test_gated_delta_net : public test_case {"},
			Text:    strings.TrimRight(t["tbo-classes"], "\n") + "\n\n",
			Defines: []string{"struct test_gated_delta_net_inplace "}},
		{Name: "their registration", File: testOps, Place: Before,
			Anchor: []string{"static std::vector<std::unique_ptr<test_case>> make_test_cases_eval(", "test_cases.emplace_back(new test_ssm_scan("},
			Text:   strings.TrimRight(t["tbo-cases"], "\n") + "\n\n"},
		{Name: "their perf registration", File: testOps, Place: After,
			Anchor: []string{"static std::vector<std::unique_ptr<test_case>> make_test_cases_perf(", "std::vector<std::unique_ptr<test_case>> test_cases;"},
			Text:   "\n" + strings.TrimRight(t["tbo-perf"], "\n") + "\n"},
	}, nil
}

// opsForTree picks what the tree needs: the whole ops step where the
// builders are missing (or already come from it), the cases and the
// reference backend's fix (its manifest's own commit) where the series'
// builders are there; a tree with builders of another signature, or with
// only some of them, is refused.
func opsForTree(t *Tree, ref *integration.Manifest) ([]*Step, error) {
	ops, err := opsStep(ref)
	if err != nil {
		return nil, err
	}
	reports, err := inspect(t, []*Step{ops})
	if err != nil {
		return nil, err
	}
	for _, l := range reports[0].Edits {
		if l.Edit.File == ggmlH && l.State == Applied {
			return []*Step{ops}, nil // this step's own builders (Apply judges the rest)
		}
	}
	rel, _ := t.path(ggmlH)
	header, found, err := t.read(rel)
	if err != nil || !found {
		return []*Step{ops}, err // Check names the missing file
	}
	var have []string
	for _, b := range seriesBuilders {
		decl, ok := declaration(header, b.name)
		if !ok {
			continue
		}
		have = append(have, b.name)
		if got := paramTypes(decl); strings.Join(got, ", ") != strings.Join(b.types, ", ") {
			return nil, &Problem{[]string{
				fmt.Sprintf("refusing to patch %s, nothing was changed:", t.Root),
				fmt.Sprintf("  %s: %s takes (%s); the series' builder takes (%s): the tree has another version of the fused ops, which this patch does not know", rel, b.name, strings.Join(got, ", "), strings.Join(b.types, ", ")),
			}}
		}
	}
	switch len(have) {
	case 0:
		return []*Step{ops}, nil
	case len(seriesBuilders):
		tests, err := testEdits()
		if err != nil {
			return nil, err
		}
		fix, err := manifestStep(ref)
		if err != nil {
			return nil, err
		}
		return []*Step{{
			Backend: "common",
			Subject: "tests : add cases for the state written in place by fused GDN and conv",
			Body: `GATED_DELTA_NET's in-place forms had no test-backend-ops cases, and the
SSM_CONV update cases compare only the conv output, with ids that never
name another sequence's row. Add cases that build each fused node on a
cache view at rs_head and compare both the output and the cache rows
after the node, with ids that read their own row, a row after the
window, and the rows of other sequences of the same node. These fail
against the CPU op D until it reads every source row first.
`,
			Edits: tests,
		}, fix}, nil
	}
	return nil, &Problem{[]string{
		fmt.Sprintf("refusing to patch %s, nothing was changed:", t.Root),
		fmt.Sprintf("  %s declares %s but not the rest of the four fused-op builders: the tree carries part of a series; restore it (git checkout) or finish that series first", rel, strings.Join(have, ", ")),
	}}
}

// CarriesOps reports whether t's ggml.h declares any of the series' fused-op
// builders (LocalAI's series, the ops form's): such a tree takes the ops
// form, any other the fusion form by default (docs/fusion.md).
func CarriesOps(t *Tree) (bool, error) {
	rel, _ := t.path(ggmlH)
	header, found, err := t.read(rel)
	if err != nil || !found {
		return false, err
	}
	for _, b := range seriesBuilders {
		if _, ok := declaration(header, b.name); ok {
			return true, nil
		}
	}
	return false, nil
}

// declaration returns the text of name's declaration in a header, from its
// name to the closing parenthesis.
func declaration(header, name string) (string, bool) {
	i := strings.Index(header, " * "+name+"(")
	if i < 0 {
		return "", false
	}
	rest := header[i+len(" * "+name+"("):]
	j := strings.Index(rest, ");")
	if j < 0 {
		return "", false
	}
	return rest[:j], true
}

// paramTypes are the types of a parameter list, with the parameter names
// and the spacing dropped: "struct ggml_tensor  * q" is "struct ggml_tensor *".
func paramTypes(params string) []string {
	var out []string
	for _, p := range strings.Split(params, ",") {
		f := strings.Fields(strings.ReplaceAll(p, "*", " * "))
		if len(f) > 1 {
			f = f[:len(f)-1] // the name
		}
		out = append(out, strings.Join(f, " "))
	}
	return out
}
