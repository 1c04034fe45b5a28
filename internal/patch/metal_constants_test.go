package patch

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/registry"
)

const metalImpl = "src/ggml-metal/ggml-metal-impl.h"

// The fused kernels' function constants take the hundreds after the
// highest index base of the tree's ggml-metal-impl.h, their defines after
// its define: the pinned trees' FC_GATED_DELTA_NET (1600) gives 1700 and
// 1800, as the series has always had; a tree whose newer ops took those
// gets 1900 and 2000, in both forms. The patched tree then holds the patch
// (a second run finds nothing to do).
func TestMetalFunctionConstantsFollowTheTreesBases(t *testing.T) {
	ops, err := Plan(registry.Integrations(), []string{"metal"})
	if err != nil {
		t.Fatal(err)
	}
	fusion, err := FusionPlan(registry.Fusions(), []string{"metal"})
	if err != nil {
		t.Fatal(err)
	}
	const pinned = "#define FC_GATED_DELTA_NET             1600\n"
	const newer = pinned + "#define FC_NEW_OP                      1700\n#define FC_NEWER_OP                    1800\n"
	for _, c := range []struct {
		form  string
		steps []*Step
		tree  string // ggml-metal-impl.h's last defines
		want  string // and the fused kernels' after them
	}{
		{"ops", ops, pinned, "#define FC_GATED_DELTA_NET_INPLACE     1700\n#define FC_SSM_CONV_UPDATE_INPLACE     1800\n"},
		{"ops", ops, newer, "#define FC_GATED_DELTA_NET_INPLACE     1900\n#define FC_SSM_CONV_UPDATE_INPLACE     2000\n"},
		{"fusion", fusion, newer, "#define FC_GATED_DELTA_NET_INPLACE     1900\n#define FC_SSM_CONV_UPDATE_INPLACE     2000\n"},
	} {
		root := fixture(t, "")
		if c.tree != pinned {
			rewrite(t, root, metalImpl, pinned, c.tree)
		}
		tr := open(t, root)
		if _, err := Apply(context.Background(), tr, c.steps); err != nil {
			t.Fatalf("%s form: %v", c.form, err)
		}
		impl := snapshot(t, root)[metalImpl]
		if !strings.Contains(impl, c.tree+c.want) {
			t.Errorf("%s form on a tree ending its bases with\n%swant them followed by\n%sgot:\n%s", c.form, c.tree, c.want, impl)
		}
		if dup := sharedBase(impl); dup != "" {
			t.Errorf("%s form: %s", c.form, dup)
		}
		if out, err := Apply(context.Background(), tr, c.steps); err != nil || len(out.Written) > 0 {
			t.Errorf("%s form: a second run wrote %v (%v), want the patch found in place", c.form, out.Written, err)
		}
	}
}

// sharedBase names two defines of ggml-metal-impl.h with one index base.
func sharedBase(impl string) string {
	by := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^#define (FC_\w+) +(\d+)$`).FindAllStringSubmatch(impl, -1) {
		if other, ok := by[m[2]]; ok {
			return other + " and " + m[1] + " share the index base " + m[2]
		}
		by[m[2]] = m[1]
	}
	return ""
}

// What renders without a tree (the plan's step, which tests and the review
// read) numbers as the pinned trees do: the fixture's FC_GATED_DELTA_NET.
func TestMetalFunctionConstantsWithoutATreeAreThePinnedTrees(t *testing.T) {
	expanded, err := expand(open(t, fixture(t, "")), []*Step{stepOf(t, "metal")})
	if err != nil {
		t.Fatal(err)
	}
	const name = "function constants"
	if got, want := editOf(t, stepOf(t, "metal"), name), editOf(t, expanded[0], name); got.Text != want.Text || strings.Join(got.Anchor, "|") != strings.Join(want.Anchor, "|") {
		t.Errorf("without a tree: %q after %q; on the pinned fixture: %q after %q", got.Text, got.Anchor, want.Text, want.Anchor)
	}
}
