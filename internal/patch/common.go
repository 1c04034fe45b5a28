package patch

import (
	"strings"

	"github.com/kernelgen/kernelgen/templates"
)

const testOps = "tests/test-backend-ops.cpp"

// commonStep is the series' first commit: test-backend-ops cases for the
// fused nodes that compare the written-back cache slots too (GATED_DELTA_NET
// ops A and B have no cases at all before it).
func commonStep() (*Step, error) {
	classes, err := templates.CommonSection("tbo-classes")
	if err != nil {
		return nil, err
	}
	cases, err := templates.CommonSection("tbo-cases")
	if err != nil {
		return nil, err
	}
	return &Step{
		Backend: "common",
		Subject: "tests : add cases for the state written in place by fused GDN and conv",
		Body: `GATED_DELTA_NET's in-place forms (state_dst, and state_dst + ids) had
no test-backend-ops cases, and the SSM_CONV_UPDATE cases compare only
the conv output, not the taps written back into the cache. Add cases
that build each fused node on a cache view at rs_head, with ids that
mix identity and out-of-window sources, and compare both the output
and the cache slots after the node.

A backend that cannot run a fused node must say so in supports_op: the
scheduler's fallback would run it elsewhere and lose the in-place write.
`,
		Edits: []Edit{
			{Name: "test cases for the in-place fused nodes", File: testOps, Place: Before,
				Anchor: []string{"// GGML_OP_GATED_DELTA_NET\nstruct test_gated_delta_net : public test_case {"},
				Text:   strings.TrimRight(classes, "\n") + "\n\n"},
			{Name: "their registration", File: testOps, Place: Before,
				Anchor: []string{"static std::vector<std::unique_ptr<test_case>> make_test_cases_eval(", "test_cases.emplace_back(new test_ssm_scan("},
				Text:   strings.TrimRight(cases, "\n") + "\n\n"},
		},
	}, nil
}
