// Package templates renders the glue model (package glue) for each backend.
// The templates hold text, not logic: every fact and expression they print
// is computed in glue.View.
package templates

import (
	"bytes"
	"embed"
	"fmt"
	"path"
	"strings"
	"sync"
	"text/template"

	"github.com/kernelgen/kernelgen/glue"
)

//go:embed */*.tmpl
var files embed.FS

// Target is a backend's glue: its names (for the view), the template that
// renders its integration file (a path below templates/; none where the
// backend has only the supports_op header and its upstream glue), that
// file's name and the prefix of its functions. The view is built once per Target.
type Target struct {
	Names    glue.Names
	Template string
	Out      string
	Prefix   string
	// Upstream, when set, is the backend's upstream glue (templates beside
	// Template named upstream.*.tmpl).
	Upstream *Upstream

	once sync.Once
	view *glue.View
	err  error
}

// WithSlots is t over the fusion form's kernels (glue.Names.Slots: the GDN
// kernel writing the snapshot slots too), with upstream as its upstream
// glue.
func (t *Target) WithSlots(upstream *Upstream) *Target {
	n := t.Names
	n.Slots = true
	return &Target{Names: n, Template: t.Template, Out: t.Out, Prefix: t.Prefix, Upstream: upstream}
}

// WithFamily is t with family as its backend part of a shared kernel
// (glue.Names.Family): the same glue over the facts of one tree.
func (t *Target) WithFamily(family func(glue.FamilyParts) (any, error)) *Target {
	n := t.Names
	n.Family = family
	return &Target{Names: n, Template: t.Template, Out: t.Out, Prefix: t.Prefix, Upstream: t.Upstream}
}

// Upstream is a backend's upstream glue: the files it renders, by template
// section (none where the glue is spliced into the sources whole: sections
// only).
type Upstream struct {
	Files []UpstreamFile
	// Dir holds the upstream.*.tmpl templates where the target has no
	// Template beside them.
	Dir string
}

// UpstreamFile is one file of a backend's upstream glue: the template
// section that renders it and its name in the tree.
type UpstreamFile struct{ Section, Name string }

// View is the target's glue view, built on first use.
func (g *Target) View() (*glue.View, error) {
	g.once.Do(func() { g.view, g.err = glue.NewView(g.Names) })
	return g.view, g.err
}

// File is one rendered glue file.
type File struct {
	Name string
	Data []byte
}

// SupportsName is the supports_op header every backend's glue includes.
const SupportsName = "fused-ops-supports.h"

// Placement is the review copy's heading of sections of the backend's
// integration manifest, by their names (integration.Manifest.Heading): the
// review templates print it with {{placement "name" ...}}, so that where a
// section goes is written once, in the manifest.
type Placement func(sections ...string) (string, error)

// Glue renders the backend's glue files: the supports_op header and the
// backend's integration file, its headings placed by place.
func Glue(g *Target, place Placement) ([]File, error) {
	t, data, err := parse(g, place)
	if err != nil {
		return nil, err
	}
	var out []File
	rendered := []struct{ name, tmpl string }{{SupportsName, "supports-file"}}
	if g.Template != "" {
		rendered = append(rendered, struct{ name, tmpl string }{g.Out, baseName(g.Template)})
	}
	for _, x := range rendered {
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
func Section(g *Target, name string) (string, error) {
	t, data, err := parse(g, nil)
	if err != nil {
		return "", err
	}
	if t.Lookup(name) == nil {
		return "", fmt.Errorf("templates: %s has no section %q", g.Template, name)
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

// parse parses the target's templates; place prints their headings (nil
// where no heading is rendered: an error if one is).
func parse(g *Target, place Placement) (*template.Template, glueData, error) {
	view, err := g.View()
	if err != nil {
		return nil, glueData{}, err
	}
	if place == nil {
		place = func(...string) (string, error) {
			return "", fmt.Errorf("templates: %s: a heading is rendered without the integration manifest that places it", g.Template)
		}
	}
	patterns := []string{"common/*.tmpl"}
	if g.Template != "" {
		patterns = append(patterns, g.Template)
	}
	t, err := template.New("").Funcs(template.FuncMap{"placement": place}).ParseFS(files, patterns...)
	if err != nil {
		return nil, glueData{}, err
	}
	return t, glueData{view, g.Prefix}, nil
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

// UpstreamGlue renders the glue a backend gets with the upstream kernels
// (internal/upstream): its new files (CUDA's state-gather.cu and .cuh,
// fused-ops.hpp; Metal's fused-ops-supports.h) and the
// sections spliced into its sources, by name. kernels are kernel sources
// the glue's header carries itself, beside their launchers (.Kernels).
func UpstreamGlue(g *Target, kernels ...[]byte) (out []File, sections map[string]string, err error) {
	backend := g.Names.Backend
	if g.Upstream == nil {
		return nil, nil, fmt.Errorf("templates: no upstream glue for backend %q yet", backend)
	}
	fams, err := glue.NewFamilyViews(g.Names)
	if err != nil {
		return nil, nil, err
	}
	funcs := template.FuncMap{"inc": func(i int) int { return i + 1 }, "join": strings.Join,
		"list": func(xs ...any) []any { return xs }}
	dir := g.Upstream.Dir
	if dir == "" {
		dir = path.Dir(g.Template)
	}
	t, err := template.New("").Funcs(funcs).ParseFS(files, dir+"/upstream.*.tmpl", "common/upstream.tmpl")
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
	for _, n := range g.Upstream.Files {
		var b bytes.Buffer
		if err := t.ExecuteTemplate(&b, n.Section, data); err != nil {
			return nil, nil, fmt.Errorf("templates: %s %s: %v", backend, n.Section, err)
		}
		out = append(out, File{Name: n.Name, Data: b.Bytes()})
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
