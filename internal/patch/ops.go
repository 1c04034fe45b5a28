package patch

import (
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/emit/ggmlcpu"
	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/templates"
)

// The files of the ops step, below the ggml root.
const (
	ggmlH   = "include/ggml.h"
	ggmlC   = "src/ggml.c"
	cpuOps  = "src/ggml-cpu/ops.cpp"
	cpuOpsH = "src/ggml-cpu/ops.h"
	cpuC    = "src/ggml-cpu/ggml-cpu.c"
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
// the CPU kernels (lowered from the IR, two-phase for the ids forms) with
// their dispatch and work size, and test-backend-ops cases.
func opsStep() (*Step, error) {
	gdn, err := cpuFamily("AB")
	if err != nil {
		return nil, err
	}
	conv, err := cpuFamily("CD")
	if err != nil {
		return nil, err
	}
	text, err := commonSections("ggml-h-gdn", "ggml-h-conv", "ggml-c-gdn", "ggml-c-conv")
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
		{Name: "conv-update kernels", File: cpuOps, Place: Before,
			Anchor:  []string{"void ggml_compute_forward_ssm_conv(\n"},
			Text:    source(conv) + "\n",
			Defines: []string{"static void " + conv.Ops[1].Compute + "("}},
		{Name: "conv-update dispatch", File: cpuOps, Place: Before,
			Anchor: []string{"void ggml_compute_forward_ssm_conv(\n", "switch (dst->src[0]->type) {"},
			Text:   dispatch(conv.Ops[0].Compute, 3, "the conv update: shifted taps to src[3], with src[4] prior taps from cache[ids[s]]")},
		{Name: "GDN kernels", File: cpuOps, Place: Before,
			Anchor:  []string{"void ggml_compute_forward_gated_delta_net(\n"},
			Text:    source(gdn) + "\n",
			Defines: []string{"static void " + gdn.Ops[1].Compute + "("}},
		{Name: "GDN dispatch", File: cpuOps, Place: Before,
			Anchor: []string{"void ggml_compute_forward_gated_delta_net(\n", "switch (src0->type) {"},
			Text:   dispatch(gdn.Ops[0].Compute, 6, "the in-place forms: final state to src[6], with src[7] prior states from cache[ids[s]]")},
	}
	edits = append(edits, workSizeEdits(conv.Ops[1])...)
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
path (ggml_vec_dot_f32, ggml_vec_silu_f32, taps summed in order).

test-backend-ops gets cases that compare the output and the cache rows
written in place, with ids that read their own row, a row after the
window, and rows of other sequences of the same node; they are also
registered for perf mode.
`,
		Edits: append(edits, tests...),
	}, nil
}

// dispatch routes a node whose src[slot] is set (the in-place forms, ids
// or not) to its family's entry point.
func dispatch(compute string, slot int, why string) string {
	return fmt.Sprintf(`    // %s
    if (dst->src[%d] != nullptr) {
        %s(params, dst);
        return;
    }

`, why, slot, compute)
}

// workSizeEdits declare an op's work size and count it in ggml_graph_plan
// (for op D: its gather scratch, shared by the threads).
func workSizeEdits(e ggmlcpu.Entry) []Edit {
	return []Edit{
		{Name: "conv-update work size declaration", File: cpuOpsH, Place: After,
			Anchor: []string{"void ggml_compute_forward_ssm_conv(const struct ggml_compute_params * params, struct ggml_tensor * dst);"},
			Text:   fmt.Sprintf("size_t %s(const struct ggml_tensor * dst);\n", e.WorkSize)},
		{Name: "conv-update work size", File: cpuC, Place: Before,
			Anchor: []string{"struct ggml_cplan ggml_graph_plan(", "case GGML_OP_GATED_DELTA_NET:"},
			Text: fmt.Sprintf(`                case GGML_OP_SSM_CONV:
                    {
                        if (node->src[3] != NULL && node->src[4] != NULL) {
                            cur = %s(node);
                        }
                    } break;
`, e.WorkSize)},
	}
}

// source is a unit's text as the target gets it.
func source(u *ggmlcpu.Unit) string {
	return stripDocRefs(strings.TrimRight(u.Source, "\n") + "\n")
}

// cpuUnit lowers the native-cpu kernels of the named fusions.
func cpuUnit(fusions ...string) (*ggmlcpu.Unit, error) {
	model, err := glue.Model(ir.Native("cpu"))
	if err != nil {
		return nil, err
	}
	var ops []*glue.Op
	for _, f := range fusions {
		for _, op := range model {
			if op.Fusion == f {
				ops = append(ops, op)
			}
		}
	}
	if len(ops) != len(fusions) {
		return nil, fmt.Errorf("the native-cpu glue model lacks one of the fusions %v", fusions)
	}
	return ggmlcpu.Emit(ops, "cpu")
}

// cpuFamily lowers the native-cpu family op (glue.Families) of the two
// fusions ("AB": ops A and B) as one entry point for both.
func cpuFamily(fusions string) (*ggmlcpu.Unit, error) {
	fams, err := glue.Families(ir.Native("cpu"))
	if err != nil {
		return nil, err
	}
	for _, f := range fams {
		if f.Fusion == fusions {
			return ggmlcpu.Emit([]*glue.Op{f}, "cpu")
		}
	}
	return nil, fmt.Errorf("the native-cpu glue has no family of the fusions %s", fusions)
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

// cpuFixStep replaces the series' op D on the CPU, which reads a source row
// another sequence of the node may already have written, with the two-phase
// kernel.
func cpuFixStep() (*Step, error) {
	conv, err := cpuUnit("D")
	if err != nil {
		return nil, err
	}
	const old = "ggml_compute_forward_ssm_conv_update_ids_f32("
	edits := []Edit{
		{Name: "two-phase conv-update ids kernel", File: cpuOps, Place: Replace,
			Anchor: []string{"// Patch 0028: CPU reference for ggml_ssm_conv_update_inplace_ids"},
			Until:  "\n}\n",
			Text:   source(conv)},
		{Name: "its dispatch", File: cpuOps, Place: Replace,
			Anchor: []string{"void ggml_compute_forward_ssm_conv(\n", old + "params, dst);"},
			Until:  "\n",
			Text:   "                        " + conv.Ops[0].Compute + "(params, dst);\n"},
	}
	return &Step{
		Backend: "cpu",
		Subject: "ggml-cpu : read the prior conv taps of all sequences before any write",
		Body: `ggml_ssm_conv_update_inplace_ids reads sequence s's prior taps from
cache[ids[s]], and that row can be the destination of another sequence
of the same node (two sequences starting in one ubatch: ids = [10, 10,
12] with rs_head 10). The CPU kernel read it while the channel loop
was writing: a sequence after its source's owner saw the updated taps,
one before it the old ones, while CUDA reads the old ones for both.

Copy the rows of non-identity sequences to the work buffer first, wait
on the barrier, then compute, as the GDN ids op does.
`,
		Edits: append(edits, workSizeEdits(conv.Ops[0])...),
	}, nil
}

// opsForTree picks what the tree needs: the whole ops step where the
// builders are missing (or already come from it), the cases and the CPU
// op D fix where the series' builders are there; a tree with builders of
// another signature, or with only some of them, is refused.
func opsForTree(t *Tree) ([]*Step, error) {
	ops, err := opsStep()
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
		fix, err := cpuFixStep()
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
