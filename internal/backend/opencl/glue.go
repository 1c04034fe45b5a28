package opencl

import (
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/emit/opencl"
	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/internal/backend"
	"github.com/kernelgen/kernelgen/internal/integration"
	"github.com/kernelgen/kernelgen/templates"
)

// glueTarget is ggml-opencl's glue: the supports_op header, and the
// upstream glue spliced into ggml-opencl.cpp and its CMakeLists.txt
// (templates/opencl/upstream.cpp.tmpl, sections only).
var glueTarget = &templates.Target{
	Names:    glue.Names{Backend: name, Function: opencl.KernelName, Family: newFamily},
	Prefix:   "ggml_cl",
	Upstream: &templates.Upstream{Dir: "opencl"},
}

// withGlue adds the supports_op header and the review copy of the
// upstream glue (glue/ggml-opencl-fused.cpp): every section of m's base
// sections that splices a glue section, in the manifest's order, under the
// place the manifest gives it.
func withGlue(files []backend.File, m *integration.Manifest) ([]backend.File, error) {
	files, err := backend.WithGlue(files, name, m)
	if err != nil {
		return nil, err
	}
	_, sections, err := templates.UpstreamGlue(m.Glue)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("// The sections kernelgen patch --backend opencl splices into ggml-opencl's\n// ggml-opencl.cpp and CMakeLists.txt, for review.\n")
	for _, x := range m.Sections {
		if x.Text.Section == "" {
			continue
		}
		s, ok := sections[x.Text.Section]
		if !ok {
			return nil, fmt.Errorf("opencl: the upstream glue has no section %s", x.Text.Section)
		}
		heading, err := m.Heading(x.Name)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "\n%s\n%s\n", heading, strings.TrimRight(s, "\n"))
	}
	return append(files, backend.File{Path: name + "/glue/ggml-opencl-fused.cpp", Data: []byte(b.String())}), nil
}
