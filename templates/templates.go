// Package templates renders the glue model (package glue) for each backend.
// The templates hold text, not logic: every fact and expression they print
// is computed in glue.View.
package templates

import (
	"bytes"
	"embed"
	"fmt"
	"text/template"

	"github.com/kernelgen/kernelgen/glue"
)

//go:embed common/*.tmpl cuda/*.tmpl vulkan/*.tmpl metal/*.tmpl sycl/*.tmpl
var files embed.FS

// glueFiles names each backend's template and the file it renders to.
var glueFiles = map[string]struct{ tmpl, out, prefix string }{
	"cuda":   {"cuda/kernelgen-fused.cu.tmpl", "kernelgen-fused.cuh", "ggml_cuda"},
	"vulkan": {"vulkan/kernelgen-fused.hpp.tmpl", "kernelgen-fused.hpp", "ggml_vk"},
	"metal":  {"metal/kernelgen-fused.h.tmpl", "kernelgen-fused.h", "ggml_metal"},
	"sycl":   {"sycl/kernelgen-fused.cpp.tmpl", "kernelgen-fused.hpp", "ggml_sycl"},
}

// File is one rendered glue file.
type File struct {
	Name string
	Data []byte
}

// SupportsName is the supports_op header every backend's glue includes.
const SupportsName = "kernelgen-supports.h"

// Glue renders the backend's glue files: the supports_op header and the
// backend's integration file.
func Glue(backend string) ([]File, error) {
	f, ok := glueFiles[backend]
	if !ok {
		return nil, fmt.Errorf("templates: no glue for backend %q", backend)
	}
	view, err := glue.NewView(backend)
	if err != nil {
		return nil, err
	}
	t, err := template.New("").ParseFS(files, "common/*.tmpl", f.tmpl)
	if err != nil {
		return nil, err
	}
	data := struct {
		*glue.View
		Prefix string
	}{view, f.prefix}
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

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}
