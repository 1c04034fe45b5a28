// Package integration is what a backend declares about its place in a ggml
// tree: its integration manifest. A manifest says, section by section and
// side by side, which file of the tree changes, the anchor path that finds
// the place, where the text goes relative to it and which text that is (a
// section of the backend's glue templates, its upstream kernels, or a
// literal line), and the commit that carries it all. `kernelgen patch`
// (internal/patch, the engine) reads manifests and nothing else about a
// backend: --check, apply and --series all derive from them, and the review
// copy under generated/<backend>/glue renders the same glue templates.
//
// Trees differ between ggml revisions. Sections that only some revisions
// need, and sections for a revision whose file moved, are a Revision of
// their own beside the base sections, found by a probe of the tree: the
// base entries stay as they are.
package integration

import (
	"fmt"
	"sort"

	"github.com/kernelgen/kernelgen/internal/upstream"
	"github.com/kernelgen/kernelgen/templates"
)

// Manifest is one backend's integration: one commit of the series.
type Manifest struct {
	// Backend names the backend; its commit's place in the series is the
	// backend's in the registry.
	Backend string
	// Subject ("module : title", ggml's style) and Body are the commit note.
	Subject, Body string
	// Budget is the most lines the commit may insert on the fixture tree
	// (issue #18: what a reviewer can be asked to read for four ops on one
	// backend; internal/patch's budget test holds it).
	Budget int
	// Dir is where the backend's new files go, below the ggml root.
	Dir string
	// Glue is the backend's glue templates: the upstream glue (files and
	// "upstream-*" sections) and the sections it shares with the review copy.
	Glue *templates.Target
	// Kernels, when set, renders the backend's upstream kernels: new files
	// below Dir, or text the glue's header carries (upstream.File.InGlue), or
	// text a Section splices into an existing source (upstream.File.Spliced).
	Kernels func() ([]upstream.File, error)
	// Sections are the changes to the tree's existing files, in the order
	// the report lists them.
	Sections []Section
	// Revisions are the sections of ggml revision families that differ from
	// the base.
	Revisions []Revision
	// Ops, when set, makes the backend ggml's reference implementation of
	// the fused ops (ggml-cpu): ggml takes a new op with its CPU kernel, so
	// these sections join the commit that adds the ops, in every series
	// whatever backends it names. The manifest's own commit (Subject, Body,
	// Sections) is then what a tree that already carries the series' ops
	// gets instead: the fix of its kernels. Its Budget is then unused: the
	// ops commit's ceiling counts its kernels.
	Ops []Section
	// ForTree, where set, is m as the tree being patched needs it, from the
	// tree's files (Metal numbers its function constants after the tree's
	// own). m itself is what the pinned trees need and what renders without
	// a tree (the review copy) show.
	ForTree func(m *Manifest, read ReadFile) (*Manifest, error)
}

// ReadFile reads a file of the tree being patched by its path below the
// ggml root; false where the tree lacks it.
type ReadFile func(file string) (string, bool, error)

// Section is one change to one existing file of the tree.
type Section struct {
	Name string // what it adds, for reports and refusals
	File string // below the ggml root, slash-separated ("llama:" for llama.cpp's own files)
	// Anchor is a path of literal strings: the first occurs exactly once in
	// the file (a function signature, a struct head), each next one is the
	// first occurrence after the previous (a line inside it).
	Anchor []string
	Place  Place
	Text   Text
	// Until ends the lines a Replace section replaces: the first line
	// holding it after the last anchor's.
	Until string
	// Defines are names the text introduces (a function head): where the
	// file already holds one, the section is applied.
	Defines []string
}

// Place says where a section's text goes relative to the line holding the
// last anchor.
type Place int

const (
	After   Place = iota // after that line
	Before               // before that line
	Replace              // in place of that line through the one holding Until
)

// Text is what a section inserts: one of a glue template section (by name:
// "upstream-*" from the backend's upstream templates, any other from its
// glue target), a spliced kernel file (by name, upstream.File.Spliced) or
// literal lines; with a blank line before or after it.
type Text struct {
	Section string
	Kernel  string
	Literal string
	// BlankBefore and BlankAfter put an empty line around the text.
	BlankBefore, BlankAfter bool
}

// Revision is a ggml revision family whose tree differs from the base: it
// is recognised by Probe, adds Sections where the probe holds, and stands in
// for the base sections named in Replaces (a file that moved, a function
// that was renamed) there.
type Revision struct {
	Name     string // which revisions, and since when
	Probe    Probe
	Sections []Section
	Replaces []string
}

// Probe is a fact of a tree: File holds Text.
type Probe struct{ File, Text string }

// Rendered is a manifest's upstream text as its templates and kernels render
// it, before the patch engine places it: the new files below Dir (each
// name beside its text), the upstream glue's sections and the spliced
// kernel files, by name.
type Rendered struct {
	Files    []upstream.File
	Sections map[string]string
	Spliced  map[string]string
}

// Over is m over other glue and kernels: a fusion step's Base, the ops
// form's sections and texts over the fusion form's kernels.
func (m *Manifest) Over(glue *templates.Target, kernels func() ([]upstream.File, error)) *Manifest {
	o := *m
	o.Glue, o.Kernels = glue, kernels
	return &o
}

// Section is m's section of that name: a fusion step that adds the same
// text as the ops form takes it from its manifest. It panics where m has
// none, a mistake in the backend's tables.
func (m *Manifest) Section(name string) Section {
	for _, s := range m.Sections {
		if s.Name == name {
			return s
		}
	}
	panic(m.Backend + ": the manifest has no section " + name)
}

// Render renders m's upstream text. The patch and any review copy of it
// (generated/<backend>/glue) both read it, so that they cannot differ.
func (m *Manifest) Render() (*Rendered, error) {
	if m.Glue != nil && m.Glue.Upstream == nil {
		return nil, fmt.Errorf("%s manifest: no upstream glue templates (templates.Target.Upstream)", m.Backend)
	}
	var kernels []upstream.File
	if m.Kernels != nil {
		var err error
		if kernels, err = m.Kernels(); err != nil {
			return nil, err
		}
	}
	r := &Rendered{Spliced: map[string]string{}}
	var inGlue [][]byte
	for _, f := range kernels {
		switch {
		case f.InGlue:
			inGlue = append(inGlue, f.Data)
		case f.Spliced:
			r.Spliced[f.Name] = string(f.Data)
		}
	}
	r.Sections = map[string]string{}
	if m.Glue != nil { // a backend without glue (ggml-cpu) splices its kernels only
		glueFiles, sections, err := templates.UpstreamGlue(m.Glue, inGlue...)
		if err != nil {
			return nil, err
		}
		r.Sections = sections
		for _, f := range glueFiles {
			r.Files = append(r.Files, upstream.File{Name: f.Name, Data: f.Data})
		}
	}
	for _, f := range kernels {
		if !f.InGlue && !f.Spliced {
			r.Files = append(r.Files, f)
		}
	}
	sort.Slice(r.Files, func(i, j int) bool { return r.Files[i].Name < r.Files[j].Name })
	return r, nil
}
