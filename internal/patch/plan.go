package patch

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/kernelgen/kernelgen/internal/registry"
	"github.com/kernelgen/kernelgen/templates"
)

// Backends are the kernel backends a series can carry, in the order the
// series lists them (the seed's plan: common first, then Metal, SYCL,
// Vulkan, and CUDA; OpenCL, the fifth, after them).
var Backends = []string{"metal", "sycl", "vulkan", "cuda", "opencl"}

// Plan returns the steps for the named backends ("all" for every one),
// led by what the tree needs first (the ops, or on a tree with the series
// the cases and the CPU fix) and followed by llama.cpp's gate.
func Plan(names []string) ([]*Step, error) {
	want := map[string]bool{}
	for _, n := range names {
		if n == "all" {
			for _, b := range Backends {
				want[b] = true
			}
			continue
		}
		known := false
		for _, b := range Backends {
			known = known || b == n
		}
		if !known {
			return nil, fmt.Errorf("unknown backend %q: choose from %s, all", n, strings.Join(Backends, ", "))
		}
		want[n] = true
	}
	common, err := commonStep()
	if err != nil {
		return nil, err
	}
	steps := []*Step{common}
	for _, b := range Backends {
		if !want[b] {
			continue
		}
		s, err := planners[b]()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b, err)
		}
		steps = append(steps, s)
	}
	gate, err := gateStep()
	if err != nil {
		return nil, err
	}
	return append(steps, gate), nil
}

var planners = map[string]func() (*Step, error){
	"vulkan": vulkanStep,
	"metal":  metalStep,
	"sycl":   syclStep,
	"cuda":   cudaStep,
	"opencl": openclStep,
}

// sections renders the named template sections of a backend, each with a
// trailing newline so it inserts whole lines.
func sections(backend string, names ...string) (map[string]string, error) {
	out := map[string]string{}
	for _, n := range names {
		g, err := glueOf(backend)
		if err != nil {
			return nil, err
		}
		s, err := templates.Section(g, n)
		if err != nil {
			return nil, err
		}
		out[n] = stripDocRefs(strings.TrimRight(s, "\n") + "\n")
	}
	return out, nil
}

// glueOf is the registered backend's glue target.
func glueOf(backend string) (*templates.Target, error) {
	bs, err := registry.Resolve(backend)
	if err != nil {
		return nil, err
	}
	if bs[0].Glue == nil {
		return nil, fmt.Errorf("backend %s has no ggml glue", backend)
	}
	return bs[0].Glue, nil
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
