package patch

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Step is one commit of the series: the files it adds and the edits it makes.
type Step struct {
	Backend string // "common", "metal", "sycl", "vulkan", "cuda"
	Subject string // "module : title", the target's commit style
	Body    string // what and why
	Files   []NewFile
	Edits   []Edit
	// Manifest: the step is a backend's integration manifest, whose
	// sections refusals name.
	Manifest bool
	// forTree, when set, makes this a placeholder for the steps a given
	// tree needs (expand).
	forTree func(*Tree) ([]*Step, error)
}

// NewFile is a file a step adds, at a path below the ggml root.
type NewFile struct {
	Path string
	Data []byte
}

// FileReport is what checking one new file found.
type FileReport struct {
	File  NewFile
	State State  // Pending: absent; Applied: present and identical; Missing: present and different
	Why   string // for Missing
}

// StepReport is the outcome of checking one step against a tree.
type StepReport struct {
	Step    *Step
	Files   []FileReport
	Edits   []Located
	Skipped []Skip
}

// Skip is an edit that does not apply to this tree, and why.
type Skip struct {
	Edit Edit
	Why  string
}

// counts returns how many changes are missing, pending and applied.
func (r *StepReport) counts() (missing, pending, applied int) {
	count := func(st State) {
		switch st {
		case Missing:
			missing++
		case Pending:
			pending++
		case Applied:
			applied++
		}
	}
	for _, f := range r.Files {
		count(f.State)
	}
	for _, l := range r.Edits {
		count(l.State)
	}
	return
}

// Check locates every change of steps in the tree without writing anything.
func Check(t *Tree, steps []*Step) ([]*StepReport, error) {
	steps, err := expand(t, steps)
	if err != nil {
		return nil, err
	}
	var out []*StepReport
	contents := map[string]string{}
	for _, s := range steps {
		r := &StepReport{Step: s}
		for _, f := range s.Files {
			rel, _ := t.path(f.Path)
			have, ok, err := t.read(rel)
			if err != nil {
				return nil, err
			}
			fr := FileReport{File: f, State: Pending}
			if ok {
				fr.State = Applied
				if have != string(f.Data) {
					fr.State = Missing
					fr.Why = "the file exists with other contents (an earlier kernelgen patch, or someone else's file): restore the tree (git checkout / git clean) and run again"
				}
			}
			r.Files = append(r.Files, fr)
		}
		for _, e := range s.Edits {
			rel, ok := t.path(e.File)
			if !ok {
				r.Skipped = append(r.Skipped, Skip{e, "llama.cpp trees only"})
				continue
			}
			if e.Unless != nil {
				holds, why, err := t.holds(contents, *e.Unless)
				if err != nil {
					return nil, err
				}
				if holds {
					r.Skipped = append(r.Skipped, Skip{e, fmt.Sprintf("%s: the sections of %s stand in", why, e.Unless.Revision)})
					continue
				}
			}
			needed := func() (bool, string, error) {
				if e.Needs == nil {
					return true, "", nil
				}
				return t.holds(contents, *e.Needs)
			}
			src, found, err := t.cached(contents, rel)
			if err != nil {
				return nil, err
			}
			if !found {
				if ok, why, err := needed(); err != nil {
					return nil, err
				} else if !ok {
					r.Skipped = append(r.Skipped, Skip{e, why})
					continue
				}
				r.Edits = append(r.Edits, Located{Edit: e, State: Missing, Why: t.notFound(rel)})
				continue
			}
			l := locate(e, src)
			if l.State != Applied && e.OnlyIf != "" && !strings.Contains(src, e.OnlyIf) {
				r.Skipped = append(r.Skipped, Skip{e, fmt.Sprintf("%s has no %q", rel, e.OnlyIf)})
				continue
			}
			if l.State != Applied {
				if ok, why, err := needed(); err != nil {
					return nil, err
				} else if !ok {
					r.Skipped = append(r.Skipped, Skip{e, why})
					continue
				}
			}
			r.Edits = append(r.Edits, l)
		}
		out = append(out, r)
	}
	return out, nil
}

// Outcome summarises an Apply.
type Outcome struct {
	Reports []*StepReport
	Written []string // paths below Root, sorted
}

// Problem is a refusal: nothing was changed.
type Problem struct{ Lines []string }

func (p *Problem) Error() string { return strings.Join(p.Lines, "\n") }

// Apply checks every step and, when every anchor is found and the tree is
// clean (or already patched), writes all changes. Either every file is
// written or none is.
func Apply(t *Tree, steps []*Step) (*Outcome, error) {
	reports, err := Check(t, steps)
	if err != nil {
		return nil, err
	}
	out := &Outcome{Reports: reports}
	var problems []string
	pendingTotal, appliedTotal := 0, 0
	for _, r := range reports {
		missing, pending, applied := r.counts()
		pendingTotal += pending
		appliedTotal += applied
		for _, f := range r.Files {
			if f.State == Missing {
				problems = append(problems, fmt.Sprintf("%s: %s", mustPath(t, f.File.Path), f.Why))
			}
		}
		for _, l := range r.Edits {
			if l.State == Missing {
				what := l.Edit.Name
				if r.Step.Manifest {
					what = fmt.Sprintf("%s manifest, section %q", r.Step.Backend, l.Edit.Name)
				}
				problems = append(problems, fmt.Sprintf("%s: %s: %s", mustPath(t, l.Edit.File), what, l.Why))
			}
		}
		if missing == 0 && pending > 0 && applied > 0 {
			problems = append(problems, fmt.Sprintf("%s: the tree is partly patched (%d of %d changes in place): it holds an earlier or hand-edited version of this patch; restore the files (git checkout) and run again", r.Step.Backend, applied, applied+pending))
		}
	}
	if len(problems) > 0 {
		return out, &Problem{append([]string{"refusing to patch " + t.Root + ", nothing was changed:"}, indent(problems)...)}
	}
	if pendingTotal == 0 {
		return out, nil // already applied: nothing to do, clean or not
	}
	dirty, err := t.dirty()
	if err != nil {
		return out, err
	}
	if len(dirty) > 0 {
		if len(dirty) > 10 {
			dirty = append(dirty[:10], fmt.Sprintf("... and %d more", len(dirty)-10))
		}
		return out, &Problem{append([]string{"refusing to patch " + t.Root + ": the tree has uncommitted changes (commit or stash them first), nothing was changed:"}, indent(dirty)...)}
	}
	files, err := render(t, reports)
	if err != nil {
		return out, err
	}
	if err := writeAll(t.Root, files); err != nil {
		return out, err
	}
	for p := range files {
		out.Written = append(out.Written, p)
	}
	sort.Strings(out.Written)
	return out, nil
}

func mustPath(t *Tree, p string) string {
	rel, _ := t.path(p)
	return rel
}

func indent(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = "  " + l
	}
	return out
}

// render computes the new contents of every file the pending changes touch.
func render(t *Tree, reports []*StepReport) (map[string][]byte, error) {
	files := map[string][]byte{}
	byFile := map[string][]Located{}
	var order []string
	for _, r := range reports {
		for _, f := range r.Files {
			if f.State == Pending {
				rel, _ := t.path(f.File.Path)
				files[rel] = f.File.Data
			}
		}
		for _, l := range r.Edits {
			if l.State != Pending {
				continue
			}
			rel, _ := t.path(l.Edit.File)
			if _, ok := byFile[rel]; !ok {
				order = append(order, rel)
			}
			byFile[rel] = append(byFile[rel], l)
		}
	}
	for _, rel := range order {
		src, _, err := t.read(rel)
		if err != nil {
			return nil, err
		}
		files[rel] = []byte(insertAll(src, byFile[rel]))
	}
	return files, nil
}

// writeAll replaces each file through a temporary sibling and a rename.
// When any step fails, the files already replaced get their old contents
// back and new ones are removed, so the tree is as it was.
func writeAll(root string, files map[string][]byte) (err error) {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	type undo struct {
		path string
		old  []byte
		mode os.FileMode
		had  bool
	}
	var done []undo
	var madeDirs []string
	defer func() {
		if err == nil {
			return
		}
		for i := len(done) - 1; i >= 0; i-- {
			u := done[i]
			if u.had {
				_ = os.WriteFile(u.path, u.old, u.mode)
			} else {
				_ = os.Remove(u.path)
			}
		}
		for i := len(madeDirs) - 1; i >= 0; i-- {
			_ = os.Remove(madeDirs[i])
		}
	}()
	for _, rel := range paths {
		full := filepath.Join(root, filepath.FromSlash(rel))
		u := undo{path: full, mode: 0o644}
		if fi, statErr := os.Stat(full); statErr == nil {
			u.had, u.mode = true, fi.Mode().Perm()
			if u.old, err = os.ReadFile(full); err != nil {
				return err
			}
		}
		dir := filepath.Dir(full)
		if _, statErr := os.Stat(dir); statErr != nil {
			// remember each directory created, outermost first
			var chain []string
			for d := dir; ; d = filepath.Dir(d) {
				if _, e := os.Stat(d); e == nil {
					break
				}
				chain = append([]string{d}, chain...)
			}
			if err = os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			madeDirs = append(madeDirs, chain...)
		}
		if beforeWrite != nil {
			if err = beforeWrite(rel); err != nil {
				return err
			}
		}
		tmp, e := os.CreateTemp(dir, "."+filepath.Base(full)+".kernelgen-*")
		if e != nil {
			return e
		}
		_, werr := tmp.Write(files[rel])
		cerr := tmp.Close()
		if werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = os.Chmod(tmp.Name(), u.mode)
		}
		if werr == nil {
			werr = os.Rename(tmp.Name(), full)
		}
		if werr != nil {
			_ = os.Remove(tmp.Name())
			return werr
		}
		done = append(done, u)
	}
	return nil
}

// beforeWrite, when set, runs before each file is written; tests use it to
// fail a write midway.
var beforeWrite func(rel string) error
