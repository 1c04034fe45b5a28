package patch

import "github.com/kernelgen/kernelgen/internal/integration"

const testOps = "tests/test-backend-ops.cpp"

// commonStep leads every series: what the tree needs before any backend's
// kernels (opsForTree says which commits that is for the given tree).
func commonStep(ref *integration.Manifest) *Step {
	return &Step{Backend: "ops", forTree: func(t *Tree) ([]*Step, error) { return opsForTree(t, ref) }}
}

// expand replaces each step that depends on the tree by the steps it needs.
func expand(t *Tree, steps []*Step) ([]*Step, error) {
	var out []*Step
	for _, s := range steps {
		if s.forTree == nil {
			out = append(out, s)
			continue
		}
		more, err := s.forTree(t)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}
