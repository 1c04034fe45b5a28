package metal

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/kernelgen/kernelgen/emit/msl"
	"github.com/kernelgen/kernelgen/internal/integration"
	"github.com/kernelgen/kernelgen/internal/upstream"
)

// ggml-metal-impl.h gives each kernel that takes function constants an
// index base of its own, a hundred past the previous one (FC_SSM_CONV 900,
// ..., FC_GATED_DELTA_NET 1600), and upstream adds one per new op. The
// fused kernels take the hundreds after the highest base of the tree being
// patched, their defines after its define, so that a tree whose newer op
// took 1700 gets no second 1700.

// constantKernels are the kernels with function constants (msl.FunctionConstants),
// in the order their bases follow the tree's.
var constantKernels = []string{"gated_delta_net_inplace", "ssm_conv_update_inplace"}

// lastBase is the highest index base a tree defines, and the start of its
// define's line ("#define FC_GATED_DELTA_NET ").
type lastBase struct {
	Define string
	Base   int
}

// pinnedBase is the pinned trees' (d9b30952, d99724f2) highest base: what
// the manifest numbers after without a tree.
var pinnedBase = lastBase{Define: "#define FC_GATED_DELTA_NET ", Base: 1600}

// base is the index base of kernel's function constants: the hundreds after b.
func (b lastBase) base(kernel string) (int, bool) {
	i := slices.Index(constantKernels, kernel)
	if i < 0 {
		return 0, false
	}
	return (b.Base/100 + 1 + i) * 100, true
}

// constantsSection is the manifest's section that adds the bases' defines.
const constantsSection = "function constants"

// fcDefine is a define of an index base in ggml-metal-impl.h: the start of
// its line, its name and its base.
var fcDefine = regexp.MustCompile(`(?m)^(#define[ \t]+(FC_[A-Za-z0-9_]+)[ \t])[ \t]*([0-9]+)[ \t]*$`)

// treeBase is the highest index base the tree's ggml-metal-impl.h defines,
// leaving out the fused kernels' own (a tree this series patched holds
// them); false where the tree has no such file or define.
func treeBase(read integration.ReadFile) (lastBase, bool, error) {
	src, found, err := read(impl)
	if err != nil || !found {
		return lastBase{}, false, err
	}
	own, err := ownDefines()
	if err != nil {
		return lastBase{}, false, err
	}
	var last lastBase
	found = false
	for _, m := range fcDefine.FindAllStringSubmatch(src, -1) {
		n, err := strconv.Atoi(m[3])
		if err != nil || own[m[2]] {
			continue
		}
		if !found || n > last.Base {
			last, found = lastBase{Define: m[1], Base: n}, true
		}
	}
	return last, found, nil
}

// ownDefines are the defines of the fused kernels' bases.
func ownDefines() (map[string]bool, error) {
	ks, err := upstream.Kernels(name)
	if err != nil {
		return nil, err
	}
	own := map[string]bool{}
	for _, k := range ks {
		if slices.Contains(constantKernels, k.K.Name) {
			own[msl.FunctionConstants(k.K)] = true
		}
	}
	if len(own) != len(constantKernels) {
		return nil, fmt.Errorf("metal: the upstream kernels lack some of %v (constantKernels)", constantKernels)
	}
	return own, nil
}

// manifestForTree is m with its function constants numbered after the
// tree's highest index base (Manifest.ForTree); m where the tree has none
// (its anchors then name what is missing).
func manifestForTree(m *integration.Manifest, read integration.ReadFile) (*integration.Manifest, error) {
	last, ok, err := treeBase(read)
	if err != nil || !ok {
		return m, err
	}
	return numberedAfter(m, last), nil
}

// numberedAfter is m numbered and placed after last.
func numberedAfter(m *integration.Manifest, last lastBase) *integration.Manifest {
	o := m.Over(m.Glue.WithFamily(familyAfter(last)), m.Kernels)
	o.Sections = placedAfter(o.Sections, last)
	return o
}

// fusionForTree is the fusion form's kernels step as manifestForTree has
// the ops form's (Fusion.ForTree): its base manifest and its section.
func fusionForTree(f *integration.Fusion, read integration.ReadFile) (*integration.Fusion, error) {
	last, ok, err := treeBase(read)
	if err != nil || !ok {
		return f, err
	}
	o := *f
	o.Base = numberedAfter(f.Base, last)
	o.Sections = placedAfter(f.Sections, last)
	return &o, nil
}

// placedAfter are sections with the defines of the bases after last's.
func placedAfter(sections []integration.Section, last lastBase) []integration.Section {
	out := slices.Clone(sections)
	for i := range out {
		if out[i].Name == constantsSection {
			out[i].Anchor = []string{last.Define}
		}
	}
	return out
}
