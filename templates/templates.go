// Package templates renders the glue model (package glue) for each backend.
// The templates hold text, not logic: every fact and expression they print
// is computed in glue.View.
package templates

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"text/template"

	"github.com/kernelgen/kernelgen/glue"
)

//go:embed common/*.tmpl cuda/*.tmpl vulkan/*.tmpl metal/*.tmpl sycl/*.tmpl
var files embed.FS

// glueFiles names each backend's template and the file it renders to.
type glueFile struct{ tmpl, out, prefix string }

var glueFiles = map[string]glueFile{
	"cuda":   {"cuda/kernelgen-fused.cu.tmpl", "fused-ops.cuh", "ggml_cuda"},
	"vulkan": {"vulkan/kernelgen-fused.hpp.tmpl", "fused-ops.hpp", "ggml_vk"},
	"metal":  {"metal/kernelgen-fused.h.tmpl", "fused-ops.h", "ggml_metal"},
	"sycl":   {"sycl/kernelgen-fused.cpp.tmpl", "fused-ops.hpp", "ggml_sycl"},
}

// File is one rendered glue file.
type File struct {
	Name string
	Data []byte
}

// SupportsName is the supports_op header every backend's glue includes.
const SupportsName = "fused-ops-supports.h"

// Glue renders the backend's glue files: the supports_op header and the
// backend's integration file.
func Glue(backend string) ([]File, error) {
	f, t, data, err := parse(backend)
	if err != nil {
		return nil, err
	}
	var out []File
	for _, x := range []struct{ name, tmpl string }{{SupportsName, "supports-file"}, {f.out, baseName(f.tmpl)}} {
		var b bytes.Buffer
		if err := t.ExecuteTemplate(&b, x.tmpl, data); err != nil {
			return nil, fmt.Errorf("templates: %s: %v", x.tmpl, err)
		}
		out = append(out, File{Name: x.name, Data: b.Bytes()})
	}
	return out, nil
}

// Section renders one named section of a backend's glue templates: the text
// `kernelgen patch` splices into a ggml tree at one anchor. The review copy
// under generated/<backend>/glue/ is made of the same sections.
func Section(backend, name string) (string, error) {
	_, t, data, err := parse(backend)
	if err != nil {
		return "", err
	}
	if t.Lookup(name) == nil {
		return "", fmt.Errorf("templates: backend %q has no section %q", backend, name)
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("templates: %s: %v", name, err)
	}
	// A section's text starts on the line after its define, so that its
	// first line keeps its indentation.
	return strings.TrimPrefix(b.String(), "\n"), nil
}

type glueData struct {
	*glue.View
	Prefix string
}

func parse(backend string) (glueFile, *template.Template, glueData, error) {
	f, ok := glueFiles[backend]
	if !ok {
		return f, nil, glueData{}, fmt.Errorf("templates: no glue for backend %q", backend)
	}
	view, err := glue.NewView(backend)
	if err != nil {
		return f, nil, glueData{}, err
	}
	t, err := template.New("").ParseFS(files, "common/*.tmpl", f.tmpl)
	if err != nil {
		return f, nil, glueData{}, err
	}
	return f, t, glueData{view, f.prefix}, nil
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// CommonSection renders a section of the backend-independent templates (the
// test-backend-ops cases of the series' common patch).
func CommonSection(name string) (string, error) {
	t, err := template.New("").ParseFS(files, "common/*.tmpl")
	if err != nil {
		return "", err
	}
	if t.Lookup(name) == nil {
		return "", fmt.Errorf("templates: no common section %q", name)
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, name, nil); err != nil {
		return "", fmt.Errorf("templates: %s: %v", name, err)
	}
	return strings.TrimPrefix(b.String(), "\n"), nil
}

// upstreamFiles names the files each backend's upstream glue renders, by
// template section.
var upstreamFiles = map[string][]struct{ section, name string }{
	"cuda":  {{"upstream-file", "fused-ops.cuh"}},
	"sycl":  {{"upstream-file", "fused-ops.hpp"}},
	"metal": {{"upstream-file", "fused-ops.h"}, {"upstream-supports-file", SupportsName}},
	// Vulkan's glue is spliced into ggml-vulkan.cpp whole: sections only
	"vulkan": nil,
}

// UpstreamGlue renders the glue a backend gets with the upstream kernels
// (internal/upstream): the files its sources include (fused-ops.cuh,
// fused-ops.hpp; Metal's fused-ops.h and fused-ops-supports.h) and the
// sections spliced into its sources, by name. kernels are kernel sources
// the glue's header carries itself, beside their launchers (.Kernels).
func UpstreamGlue(backend string, kernels ...[]byte) (out []File, sections map[string]string, err error) {
	names, ok := upstreamFiles[backend]
	if !ok {
		return nil, nil, fmt.Errorf("templates: no upstream glue for backend %q yet", backend)
	}
	fams, err := glue.NewFamilyViews(backend)
	if err != nil {
		return nil, nil, err
	}
	funcs := template.FuncMap{"inc": func(i int) int { return i + 1 }, "join": strings.Join}
	t, err := template.New("").Funcs(funcs).ParseFS(files, backend+"/upstream.*.tmpl")
	if err != nil {
		return nil, nil, err
	}
	var srcs []string
	for _, k := range kernels {
		srcs = append(srcs, strings.TrimRight(string(k), "\n"))
	}
	data := struct {
		Families []glue.FamilyView
		Rejects  []glue.Check
		Kernels  []string
	}{fams, glue.Rejects(), srcs}
	for _, n := range names {
		var b bytes.Buffer
		if err := t.ExecuteTemplate(&b, n.section, data); err != nil {
			return nil, nil, fmt.Errorf("templates: %s %s: %v", backend, n.section, err)
		}
		out = append(out, File{Name: n.name, Data: b.Bytes()})
	}
	sections = map[string]string{}
	for _, x := range t.Templates() {
		name := x.Name()
		if !strings.HasPrefix(name, "upstream-") || strings.HasSuffix(name, "-file") {
			continue
		}
		var s bytes.Buffer
		if err := t.ExecuteTemplate(&s, name, data); err != nil {
			return nil, nil, fmt.Errorf("templates: %s %s: %v", backend, name, err)
		}
		sections[name] = strings.TrimPrefix(s.String(), "\n")
	}
	return out, sections, nil
}
