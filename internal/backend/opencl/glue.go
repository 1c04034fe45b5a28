package opencl

import (
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/emit/opencl"
	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/internal/backend"
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

// reviewSections are the upstream glue's sections in the order of
// ggml-opencl.cpp (the CMake list last), for the review copy.
var reviewSections = []string{"upstream-kernel-members", "upstream-declarations", "upstream-load-kernels",
	"upstream-supports-op", "upstream-functions", "upstream-compute-forward", "upstream-cmake-kernels"}

// withGlue adds the supports_op header and the review copy of the
// upstream glue (glue/ggml-opencl-fused.cpp: every section `kernelgen
// patch --backend opencl` splices, under its name).
func withGlue(files []backend.File) ([]backend.File, error) {
	files, err := backend.WithGlue(files, name, Manifest)
	if err != nil {
		return nil, err
	}
	_, sections, err := templates.UpstreamGlue(glueTarget)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("// The sections kernelgen patch --backend opencl splices into ggml-opencl's\n// ggml-opencl.cpp and CMakeLists.txt, for review.\n")
	for _, n := range reviewSections {
		s, ok := sections[n]
		if !ok {
			return nil, fmt.Errorf("opencl: the upstream glue has no section %s", n)
		}
		fmt.Fprintf(&b, "\n// ---- %s\n%s\n", n, strings.TrimRight(s, "\n"))
	}
	return append(files, backend.File{Path: name + "/glue/ggml-opencl-fused.cpp", Data: []byte(b.String())}), nil
}
