package patch

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/kernelgen/kernelgen/internal/integration"
)

// Plan returns the steps for the named backends ("all" for every one), one
// per integration manifest in the order given (the registry's), led by
// what the tree needs first (the ops with the reference backend's kernels,
// or on a tree with the series the cases and the reference's fix) and
// followed by llama.cpp's gate.
func Plan(manifests []*integration.Manifest, names []string) ([]*Step, error) {
	ms := manifests
	want := map[string]bool{}
	for _, n := range names {
		if n == "all" {
			for _, m := range ms {
				want[m.Backend] = true
			}
			continue
		}
		known := false
		for _, m := range ms {
			known = known || m.Backend == n
		}
		if !known {
			return nil, fmt.Errorf("unknown backend %q: choose from %s, all", n, strings.Join(Backends(ms), ", "))
		}
		want[n] = true
	}
	var ref *integration.Manifest
	for _, m := range ms {
		if m.Ops == nil {
			continue
		}
		if ref != nil {
			return nil, fmt.Errorf("%s and %s both declare the ops commit's kernels (integration.Manifest.Ops): one backend is the reference", ref.Backend, m.Backend)
		}
		ref = m
	}
	if ref == nil {
		return nil, fmt.Errorf("no manifest declares the ops commit's kernels (integration.Manifest.Ops): ggml takes a new op with its reference kernels")
	}
	steps := []*Step{commonStep(ref)}
	for _, m := range ms {
		if !want[m.Backend] || m == ref { // the reference's kernels are in the ops commit
			continue
		}
		s, err := manifestStep(m)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Backend, err)
		}
		steps = append(steps, s)
	}
	gate, err := gateStep()
	if err != nil {
		return nil, err
	}
	return append(steps, gate), nil
}

// Backends names the manifests' backends with a commit of their own, in
// series order (theirs; the reference's kernels are in the ops commit).
func Backends(manifests []*integration.Manifest) []string {
	var out []string
	for _, m := range manifests {
		if m.Ops == nil {
			out = append(out, m.Backend)
		}
	}
	return out
}

// upstreamText is text rendered for upstream (a backend's own text, which
// never carries the generated-file header): one newline at the end (git
// flags a blank last line as a whitespace error), no pointers into
// kernelgen's documents.
func upstreamText(data []byte) []byte {
	return []byte(stripDocRefs(strings.TrimRight(string(data), "\n") + "\n"))
}

// docRef matches a comment's pointer into kernelgen's own documents
// ("docs/ops.md#builder-checks", "docs/ggml.md"), with the ", " or " (...)"
// around it.
var docRef = regexp.MustCompile(`(, | \()docs/[a-z]+\.md(#[a-z0-9-]+)?(\))?`)

// stripDocRefs drops those pointers: the target tree does not have the
// documents. "(a, docs/ggml.md#gate)" becomes "(a)", "x (docs/ggml.md#sycl)."
// becomes "x.".
func stripDocRefs(s string) string {
	return docRef.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(m, ", ") && strings.HasSuffix(m, ")") {
			return ")"
		}
		return ""
	})
}
