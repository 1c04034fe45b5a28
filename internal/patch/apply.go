package patch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kernelgen/kernelgen/tools/testhook"
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
	// forTree, when set, gives the steps a given tree needs in place of
	// this one (expand): a placeholder, or a step as the pinned trees
	// need it (a manifest's ForTree).
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

// Check is Apply's dry run: it locates every change of steps in the tree
// without writing anything, under the tree's shared lock (so never halfway
// through an Apply), and judges the tree as Apply does. The error is what
// Apply would return before writing: a *Problem worded for a dry run
// (missing anchors, a partly patched or dirty tree, a link out of the
// tree), returned with the reports, or a failure to judge (not a git
// tree); nil when Apply would write the pending changes or has none.
func Check(ctx context.Context, t *Tree, steps []*Step) ([]*StepReport, error) {
	l, err := t.lock(ctx, false)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	reports, err := inspect(t, steps)
	if err != nil {
		return nil, err
	}
	_, err = decide(t, reports, true)
	return reports, err
}

// inspect locates every change of steps in the tree.
func inspect(t *Tree, steps []*Step) ([]*StepReport, error) {
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
// clean (or already patched), writes all changes. It holds the tree's lock
// throughout, so a second Apply waits and then finds the patch in place.
// Either every file is written or none is (see writeAll), also when ctx
// ends: the error then says which.
func Apply(ctx context.Context, t *Tree, steps []*Step) (*Outcome, error) {
	l, err := t.lock(ctx, true)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	testhook.Pause(ctx, "locked")
	return apply(ctx, t, steps)
}

// apply is Apply without the lock, for a tree only this process sees.
func apply(ctx context.Context, t *Tree, steps []*Step) (*Outcome, error) {
	reports, err := inspect(t, steps)
	if err != nil {
		return nil, err
	}
	out := &Outcome{Reports: reports}
	targets, err := decide(t, reports, false)
	if err != nil || len(targets) == 0 {
		return out, err // refused, or already applied: nothing to do, clean or not
	}
	files, err := render(t, reports)
	if err != nil {
		return out, err
	}
	out.Written, err = writeAll(ctx, targets, files)
	return out, err
}

// decide is the one judgement of Apply and Check: the refusal (a
// *Problem, worded for a dry run when dry), or where each file to write
// lives (below Root, through symbolic links; none when the tree already
// holds the patch).
func decide(t *Tree, reports []*StepReport, dry bool) (map[string]string, error) {
	refuse := func(reason string, items []string) error {
		head := "refusing to patch " + t.Root + reason + ", nothing was changed:"
		if dry {
			head = "apply would refuse to patch " + t.Root + reason + ":"
		}
		return &Problem{append([]string{head}, indent(items)...)}
	}
	var problems []string
	pendingTotal := 0
	for _, r := range reports {
		missing, pending, applied := r.counts()
		pendingTotal += pending
		for _, f := range r.Files {
			if f.State == Missing {
				problems = append(problems, fmt.Sprintf("%s: %s", mustPath(t, f.File.Path), f.Why))
			}
		}
		for _, l := range r.Edits {
			if l.State == Missing {
				what := l.Edit.Name
				switch {
				case l.Edit.Manifest != "":
					what = fmt.Sprintf("%s manifest, section %q", l.Edit.Manifest, l.Edit.Name)
				case r.Step.Manifest:
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
		return nil, refuse("", problems)
	}
	if pendingTotal == 0 {
		return nil, nil
	}
	dirty, err := t.dirty()
	if err != nil {
		return nil, err
	}
	if len(dirty) > 0 {
		if len(dirty) > 10 {
			dirty = append(dirty[:10], fmt.Sprintf("... and %d more", len(dirty)-10))
		}
		return nil, refuse(": the tree has uncommitted changes (commit or stash them first)", dirty)
	}
	targets, problems, err := t.targets(pendingPaths(t, reports))
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, refuse("", problems)
	}
	return targets, nil
}

// pendingPaths are the paths below Root that the pending changes write.
func pendingPaths(t *Tree, reports []*StepReport) []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		rel, _ := t.path(p)
		if !seen[rel] {
			seen[rel] = true
			out = append(out, rel)
		}
	}
	for _, r := range reports {
		for _, f := range r.Files {
			if f.State == Pending {
				add(f.File.Path)
			}
		}
		for _, l := range r.Edits {
			if l.State == Pending {
				add(l.Edit.File)
			}
		}
	}
	return out
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

// staged is one file of writeAll: its new contents in tmp, beside it.
type staged struct {
	rel, full, tmp string
	old            []byte // the contents it had, when had
	had            bool
	mode           os.FileMode
}

// writeAll replaces the files (paths below the root, each written at its
// target, see Tree.targets) in two steps: each new
// contents is first staged in a temporary sibling (.NAME.kernelgen-*),
// then all are renamed into place, one rename each. Until the renames
// begin, a failure or the end of ctx (an interrupt) removes what was
// staged and leaves the tree as it was. Once they begin they are finished,
// an interrupt only reported afterwards: the step is one rename per file,
// and stopping inside it would leave the tree half-patched. A failed
// rename puts back the files already renamed. No temporary file outlives
// the call. It returns the paths written, sorted.
func writeAll(ctx context.Context, targets map[string]string, files map[string][]byte) ([]string, error) {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var st []staged
	var madeDirs []string
	unstage := func() {
		for _, s := range st {
			_ = os.Remove(s.tmp)
		}
		removeDirs(madeDirs)
	}
	for _, rel := range paths {
		if ctx.Err() != nil {
			unstage()
			return nil, fmt.Errorf("%w: nothing was changed", context.Cause(ctx))
		}
		s, dirs, err := stage(targets[rel], rel, files[rel])
		madeDirs = append(madeDirs, dirs...)
		if err != nil {
			unstage()
			return nil, err
		}
		st = append(st, s)
	}
	testhook.Pause(ctx, "staged")
	if ctx.Err() != nil {
		unstage()
		return nil, fmt.Errorf("%w before any file was replaced: nothing was changed", context.Cause(ctx))
	}
	for i, s := range st {
		renamed := i
		err := os.Rename(s.tmp, s.full)
		if err == nil {
			renamed = i + 1
			if beforeRename != nil && renamed < len(st) {
				err = beforeRename(st[renamed].rel)
			}
		}
		if err != nil {
			rollback(st[:renamed], st[renamed:], madeDirs)
			return nil, fmt.Errorf("replacing %s: %w; the files already replaced were put back, nothing was changed", st[renamed].rel, err)
		}
		if i == 0 {
			testhook.Pause(ctx, "renaming")
		}
	}
	if ctx.Err() != nil {
		return paths, fmt.Errorf("%w while the files were renamed into place: the renames were finished, %d files are patched", context.Cause(ctx), len(paths))
	}
	return paths, nil
}

// stage writes data into a temporary sibling of full, the file of rel,
// creating the directories it needs (returned, outermost first, also on
// error).
func stage(full, rel string, data []byte) (staged, []string, error) {
	s := staged{rel: rel, full: full, mode: 0o644}
	if fi, err := os.Stat(full); err == nil {
		s.had, s.mode = true, fi.Mode().Perm()
		if s.old, err = os.ReadFile(full); err != nil {
			return s, nil, err
		}
	}
	dirs, err := mkdirs(filepath.Dir(full))
	if err != nil {
		return s, dirs, err
	}
	if beforeWrite != nil {
		if err := beforeWrite(rel); err != nil {
			return s, dirs, err
		}
	}
	s.tmp, err = writeTemp(full, data, s.mode)
	return s, dirs, err
}

// mkdirs creates dir and returns the directories it created, outermost
// first.
func mkdirs(dir string) ([]string, error) {
	var chain []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		chain = append([]string{d}, chain...)
	}
	if len(chain) == 0 {
		return nil, nil
	}
	return chain, os.MkdirAll(dir, 0o755)
}

func removeDirs(dirs []string) {
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = os.Remove(dirs[i])
	}
}

// writeTemp writes data into a new temporary sibling of full and returns
// its path; on error nothing is left.
func writeTemp(full string, data []byte, mode os.FileMode) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(full), "."+filepath.Base(full)+".kernelgen-*")
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), mode)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// rollback undoes a rename step that failed: the files of done get their
// old contents back (new ones are removed), the staged files of rest are
// removed, and so are the directories made.
func rollback(done, rest []staged, madeDirs []string) {
	for i := len(done) - 1; i >= 0; i-- {
		u := done[i]
		if !u.had {
			_ = os.Remove(u.full)
			continue
		}
		if tmp, err := writeTemp(u.full, u.old, u.mode); err == nil {
			if os.Rename(tmp, u.full) != nil {
				_ = os.Remove(tmp)
			}
		}
	}
	for _, s := range rest {
		_ = os.Remove(s.tmp)
	}
	removeDirs(madeDirs)
}

// beforeWrite, when set, runs before each file is staged, and beforeRename
// before each rename but the first; tests use them to fail midway.
var beforeWrite, beforeRename func(rel string) error
