// Package verdict decides, for each kernel that differs between two
// generated trees, what the change is: from the kernels' canonical forms
// (ir/canon) the categories that differ and each side's first differing
// statement, and from running both revisions on the same random problems
// (verify/diffexec) whether the results differ. A canonical form that
// calls a change names/layout only while the results differ is a kernelgen
// bug, reported as an error.
package verdict

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/kernelgen/kernelgen/ir/canon"
	"github.com/kernelgen/kernelgen/ir/irtext"
	"github.com/kernelgen/kernelgen/verify/diffexec"
)

// Verdicts of a kernel.
const (
	NamesOnly  = "names/layout only"
	Changed    = "changed"
	Added      = "added"
	Removed    = "removed"
	Unreadable = "unreadable"
)

// Execution results.
const (
	Identical = "identical"
	Differ    = "differ"
	NotRun    = "not run"
)

// Kernel is the verdict on one kernel whose IR text differs.
type Kernel struct {
	Kernel      string       `json:"kernel"`
	Op          string       `json:"op"`
	Verdict     string       `json:"verdict"`
	Categories  []string     `json:"categories"`
	Differences []Difference `json:"differences"`
	Execution   *Execution   `json:"execution,omitempty"`
	// Error says why a side could not be read.
	Error string `json:"error,omitempty"`
}

// Difference is one category with each side's first differing statement.
type Difference struct {
	Category string `json:"category"`
	A        *Line  `json:"a"`
	B        *Line  `json:"b"`
}

// Line is a line of a kernel's IR text (the file under the generated tree).
type Line struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// Execution is how both revisions compared on the problems.
type Execution struct {
	Result   string             `json:"result"`
	Problems int                `json:"problems"`
	Differ   int                `json:"differ"`
	First    *diffexec.Mismatch `json:"first,omitempty"`
	Reason   string             `json:"reason,omitempty"`
}

// Summary is the execution in one line.
func (e *Execution) Summary() string {
	switch e.Result {
	case Identical:
		return fmt.Sprintf("results identical on %d problems", e.Problems)
	case Differ:
		return fmt.Sprintf("results differ on %d of %d problems: first at %s", e.Differ, e.Problems, e.First)
	}
	return "not run: " + e.Reason
}

// Options tunes the execution.
type Options struct {
	// Problems per variant (default 2).
	Problems int
	// Memo, when set, keeps what runs leave across Compare calls that
	// share a revision (diffexec.Memo).
	Memo *diffexec.Memo
}

// BugError lists kernels whose canonical forms are equal while their
// results differ.
type BugError struct{ Kernels []string }

func (e *BugError) Error() string {
	return fmt.Sprintf("kernelgen bug: the canonical forms of %s call the change names/layout only, but the results differ (see the execution line); please report it with both revisions", strings.Join(e.Kernels, ", "))
}

// Compare returns the verdict on every kernel whose IR text differs
// between trees a and b (paths relative to the generated directory, as
// ir/NAME@ARITH.ir), sorted by kernel. The error is a *BugError when a
// canonical verdict is contradicted by execution; the verdicts are
// returned with it. When ctx ends, Compare stops between kernels (and
// diffexec.Run between problems) and returns ctx's cause.
func Compare(ctx context.Context, a, b map[string][]byte, opt Options) ([]Kernel, error) {
	if opt.Problems == 0 {
		opt.Problems = 2
	}
	ka, errsA := kernels(a)
	kb, errsB := kernels(b)
	ids := map[string]bool{}
	for p := range a {
		ids[p] = true
	}
	for p := range b {
		ids[p] = true
	}
	var out []Kernel
	var bugs []string
	for p := range ids {
		id, ok := kernelPath(p)
		if !ok || string(a[p]) == string(b[p]) && (a[p] == nil) == (b[p] == nil) {
			continue
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		v := Kernel{Kernel: id, Op: strings.SplitN(id, "@", 2)[0], Categories: []string{}, Differences: []Difference{}}
		switch {
		case a[p] == nil:
			v.Verdict = Added
		case b[p] == nil:
			v.Verdict = Removed
		case errsA[id] != nil || errsB[id] != nil:
			v.Verdict = Unreadable
			v.Error = fmt.Sprint(firstErr(errsA[id], errsB[id]))
		default:
			judge(ctx, &v, p, a[p], b[p], ka, kb, opt)
			if ctx.Err() != nil {
				return nil, context.Cause(ctx)
			}
			if v.Verdict == NamesOnly && v.Execution.Result == Differ {
				bugs = append(bugs, id)
			}
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kernel < out[j].Kernel })
	if len(bugs) > 0 {
		sort.Strings(bugs)
		return out, &BugError{Kernels: bugs}
	}
	return out, nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// kernelPath is the kernel ID of an IR text path.
func kernelPath(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "ir/")
	if !ok || !strings.HasSuffix(rest, ".ir") || strings.Contains(rest, "/") {
		return "", false
	}
	return strings.TrimSuffix(rest, ".ir"), true
}

// kernels reads every kernel of a tree; errs holds those that do not parse.
func kernels(t map[string][]byte) (diffexec.Kernels, map[string]error) {
	ks, errs := diffexec.Kernels{}, map[string]error{}
	for p, data := range t {
		id, ok := kernelPath(p)
		if !ok {
			continue
		}
		k, err := irtext.Parse(p, string(data))
		if err == nil && k.ID() != id {
			err = fmt.Errorf("%s holds kernel %s", p, k.ID())
		}
		if err != nil {
			errs[id] = fmt.Errorf("not readable by this kernelgen (%v): compare the IR text by hand", err)
			continue
		}
		ks[id] = k
	}
	return ks, errs
}

func judge(ctx context.Context, v *Kernel, path string, textA, textB []byte, ka, kb diffexec.Kernels, opt Options) {
	fa, errA := canon.Of(ka[v.Kernel])
	fb, errB := canon.Of(kb[v.Kernel])
	if err := firstErr(errA, errB); err != nil {
		v.Verdict, v.Error = Unreadable, err.Error()
		return
	}
	ds := compareForms(fa, fb)
	v.Verdict = NamesOnly
	if len(ds) > 0 {
		v.Verdict = Changed
	}
	for _, d := range ds {
		v.Categories = append(v.Categories, d.Category.String())
		v.Differences = append(v.Differences, Difference{Category: d.Category.String(),
			A: line(path, textA, d.LineA), B: line(path, textB, d.LineB)})
	}
	r := diffexec.Run(ctx, v.Kernel, ka, kb, diffexec.Options{PerVariant: opt.Problems, Memo: opt.Memo})
	e := &Execution{Problems: r.Problems, Differ: r.Differ, First: r.First, Reason: r.NotRun}
	switch {
	case r.NotRun != "":
		e.Result = NotRun
	case r.Differ > 0:
		e.Result = Differ
	default:
		e.Result = Identical
	}
	v.Execution = e
}

func line(path string, text []byte, n int) *Line {
	if n == 0 {
		return nil
	}
	ls := strings.Split(string(text), "\n")
	if n > len(ls) {
		return nil
	}
	return &Line{File: path, Line: n, Text: strings.TrimSpace(ls[n-1])}
}

// compareForms is canon.Compare; a test replaces it to check that execution
// catches a canonical verdict it contradicts.
var compareForms = canon.Compare

// Summary is a kernel's verdict in one line.
func (v *Kernel) Summary() string {
	var s string
	switch v.Verdict {
	case Changed:
		s = strings.Join(v.Categories, ", ")
	case Unreadable:
		return "unreadable: " + v.Error
	case Added:
		return "new kernel"
	case Removed:
		return "kernel removed"
	default:
		s = v.Verdict
	}
	if v.Execution != nil {
		s += "; " + v.Execution.Summary()
	}
	return s
}
