package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kernelgen/kernelgen/internal/gentree"
	"github.com/kernelgen/kernelgen/internal/udiff"
	"github.com/kernelgen/kernelgen/internal/verdict"
	"github.com/kernelgen/kernelgen/tools/fsx"
)

func newDiffCmd() *cobra.Command {
	var stat, asJSON bool
	var color, dir string
	var problems int
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "Compare two generated trees, or generated/ at two git revisions, kernel by kernel",
		Long: `Compare the generated kernels of A and B, each a generated directory (with its
MANIFEST) or a git revision of a kernelgen repository (generated/ at that revision).

For every kernel and backend that differs it prints a unified diff of the IR text
and of each backend's source, then a summary table (kernels x backends, +added/
-removed lines) and a verdict per kernel whose IR differs. The verdict reads each
side's IR text (generated/ir/*.ir) back into a kernel and compares canonical
forms, in which every value is named by what computes it, not by its name or
where it is defined:
  names/layout only    the forms are equal: renames, comments, independent
                       statements reordered, an index split into Lets
  arithmetic           f32 operations, their order and operands, fma, the exp
                       routine, reduction order and width, constants, and the
                       direction in which a loop walks what it combines
  memory               which elements are read or written (index expressions
                       of loads, stores and arrays), the order of stores, and
                       memory operations against barriers and dispatch waits
  control              loops, branches, barriers, dispatch dependencies
  launch               workgroup size and grid
  interface            params, requirements, args, buffers
with, for each category, the first statement of each side that has no
counterpart on the other (file:line). Then both revisions' kernels run on the
same random problems (--problems per variant of this kernelgen's variant table,
with aliasing ids, fixed seeds) through an interpreter with the Go reference's
semantics, and the verdict says "results identical on N problems" or where the
results first differ. Equal forms whose results differ are a kernelgen bug:
exit 2.

--json prints the verdicts as JSON (the shape is in the README) instead of the
diffs and the table.
Exit 0 when A and B are the same, 1 when they differ, 2 on an error.`,
		Example: `  kernelgen diff HEAD~1 HEAD
  kernelgen diff --stat main my-branch
  kernelgen diff --json main my-branch
  kernelgen diff generated /tmp/other/generated`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completeRevisions,
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			colored, err := useColor(color, out)
			if err != nil {
				return err
			}
			if problems < 1 {
				return fail(ExitError, "--problems must be at least 1")
			}
			genDir, err := generatedFlag(dir)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			stopped := func() error {
				return fail(ExitError, "%v: the comparison was stopped, nothing is concluded", context.Cause(ctx))
			}
			a, err := loadTree(ctx, args[0], genDir)
			if ctx.Err() != nil {
				return stopped()
			}
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			b, err := loadTree(ctx, args[1], genDir)
			if ctx.Err() != nil {
				return stopped()
			}
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			rep := compareTrees(a, b)
			kernels, bug := verdict.Compare(ctx, a, b, verdict.Options{Problems: problems})
			if ctx.Err() != nil {
				return stopped()
			}
			if bug != nil && !errors.As(bug, new(*verdict.BugError)) {
				return fail(ExitError, "%v", bug)
			}
			rep.kernels = kernels
			if asJSON {
				if err := rep.writeJSON(out, args[0], args[1]); err != nil {
					return fail(ExitError, "%v", err)
				}
			} else if len(rep.changed) == 0 {
				fmt.Fprintf(out, "%s and %s generate the same kernels\n", args[0], args[1])
			} else {
				if !stat {
					for _, p := range rep.changed {
						d := udiff.Unified("a/"+p, "b/"+p, a[p], b[p])
						if colored {
							d = colorDiff(d)
						}
						fmt.Fprint(out, d)
					}
					fmt.Fprintln(out)
				}
				rep.print(out)
			}
			switch {
			case bug != nil:
				return fail(ExitError, "%v", bug)
			case len(rep.changed) == 0:
				return nil
			}
			return &exitError{code: ExitStale, err: fmt.Errorf("%s and %s differ in %d files", args[0], args[1], len(rep.changed))}
		},
	}
	cmd.Flags().BoolVar(&stat, "stat", false, "print only the summary table and verdicts")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the verdicts as JSON")
	cmd.Flags().IntVar(&problems, "problems", 2, "random problems per variant that both revisions run")
	cmd.Flags().StringVar(&color, "color", "auto", "color the diff: auto, always, never (auto honours NO_COLOR)")
	cmd.Flags().StringVar(&dir, "generated", "generated", "the generated directory inside the repository, for revisions")
	return cmd
}

// generatedFlag checks --generated: a path inside the repository, slash
// separated and clean.
func generatedFlag(dir string) (string, error) {
	if strings.TrimSpace(dir) == "" {
		return "", fail(ExitError, "--generated is empty: name the generated directory inside the repository (the default is generated)")
	}
	return path.Clean(filepath.ToSlash(dir)), nil
}

// loadTree reads a generated tree from a directory or from a git revision.
// A revision's generated directory is the one at the root of the kernelgen
// module holding the working directory, wherever in the checkout diff runs.
func loadTree(ctx context.Context, arg, genDir string) (map[string][]byte, error) {
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		t, err := fsx.ReadTree(arg)
		if err != nil {
			return nil, err
		}
		if _, ok := t[gentree.ManifestName]; !ok {
			return nil, fmt.Errorf("%s has no %s: not a generated tree (give a generated directory or a git revision)", arg, gentree.ManifestName)
		}
		return t, nil
	}
	root, err := gentree.ModuleRoot(".")
	if err != nil {
		root = "." // not in a module: git says what is wrong with the revision
	}
	list, err := git(ctx, root, nil, "ls-tree", "-r", "-z", arg, "--", genDir)
	if err != nil {
		return nil, fmt.Errorf("%q is neither a directory nor a git revision: %v", arg, err)
	}
	// Entries "MODE TYPE OBJECT\tPATH"; the blobs come from one git process.
	var paths, objects []string
	manifest, file := false, false
	prefix := genDir + "/"
	if genDir == "." {
		prefix = ""
	}
	for _, e := range strings.Split(string(list), "\x00") {
		head, p, ok := strings.Cut(e, "\t")
		f := strings.Fields(head)
		if !ok || len(f) != 3 || f[1] != "blob" {
			continue
		}
		if p == genDir {
			file = true
		}
		if !strings.HasPrefix(p, prefix) {
			continue
		}
		manifest = manifest || p == prefix+gentree.ManifestName
		paths, objects = append(paths, p), append(objects, f[2])
	}
	switch {
	case file:
		return nil, fmt.Errorf("%s:%s is a file, not a generated directory (--generated names the directory inside the repository, default generated)", arg, genDir)
	case len(paths) == 0:
		return nil, fmt.Errorf("revision %s has no %s/ directory", arg, genDir)
	case !manifest:
		return nil, fmt.Errorf("%s:%s has no %s: not a generated directory (--generated names it inside the repository, default generated)", arg, genDir, gentree.ManifestName)
	}
	t := map[string][]byte{}
	if len(objects) > 0 {
		out, err := git(ctx, root, strings.NewReader(strings.Join(objects, "\n")+"\n"), "cat-file", "--batch")
		if err != nil {
			return nil, err
		}
		for i, p := range paths {
			// "OBJECT blob SIZE\n", the content, "\n".
			nl := bytes.IndexByte(out, '\n')
			var size int
			if nl < 0 || len(strings.Fields(string(out[:nl]))) != 3 {
				return nil, fmt.Errorf("git cat-file: no %s (%s:%s)", objects[i], arg, p)
			}
			fmt.Sscan(strings.Fields(string(out[:nl]))[2], &size)
			if nl+1+size >= len(out) {
				return nil, fmt.Errorf("git cat-file: %s is cut short", objects[i])
			}
			t[strings.TrimPrefix(p, prefix)] = out[nl+1 : nl+1+size]
			out = out[nl+1+size+1:]
		}
	}
	return t, nil
}

// git runs git in dir.
func git(ctx context.Context, dir string, stdin io.Reader, args ...string) ([]byte, error) {
	c := exec.CommandContext(ctx, "git", args...)
	c.Dir = dir
	c.Env = append(os.Environ(), "LC_ALL=C")
	c.Stdin = stdin
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// completeRevisions offers the repository's branches and tags, HEAD and its
// first ancestors, for both arguments (a directory is typed as a path: the
// shell's file completion stays on).
func completeRevisions(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) >= 2 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	revs := []string{"HEAD", "HEAD~1", "HEAD~2"}
	if out, err := git(context.Background(), ".", nil, "for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/tags", "refs/remotes"); err == nil {
		revs = append(revs, strings.Fields(string(out))...)
	}
	var match []string
	for _, r := range revs {
		if strings.HasPrefix(r, toComplete) {
			match = append(match, r)
		}
	}
	return match, cobra.ShellCompDirectiveDefault
}

type cell struct{ add, del int }

type diffReport struct {
	changed  []string
	cells    map[string]map[string]*cell // kernel op -> backend -> lines
	files    []fileStat
	backends []string
	// sourceOnly lists the ops whose emitted sources differ while their
	// IR does not: the emitters changed, not the kernels.
	sourceOnly []string
	kernels    []verdict.Kernel
}

// fileStat is one differing file, as --json lists it.
type fileStat struct {
	Path    string `json:"path"`
	Op      string `json:"op"`
	Backend string `json:"backend"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
}

// owner maps a generated path to its (op, backend) through the MANIFEST.
func owners(t map[string][]byte) map[string][2]string {
	m := map[string][2]string{}
	entries, _ := gentree.Parse(t[gentree.ManifestName])
	for _, e := range entries {
		op := e.Op
		if op == "" {
			op = "(shared)"
		}
		m[e.Path] = [2]string{op, e.Backend}
	}
	return m
}

func compareTrees(a, b map[string][]byte) *diffReport {
	rep := &diffReport{cells: map[string]map[string]*cell{}}
	oa, ob := owners(a), owners(b)
	paths := map[string]bool{}
	for p := range a {
		paths[p] = true
	}
	for p := range b {
		paths[p] = true
	}
	backends := map[string]bool{}
	irChanged := map[string]bool{}
	for p := range paths {
		if p == gentree.ManifestName || bytes.Equal(a[p], b[p]) && (a[p] != nil) == (b[p] != nil) {
			continue
		}
		rep.changed = append(rep.changed, p)
		own, ok := ob[p]
		if !ok {
			own = oa[p]
		}
		if own[1] == "" {
			own = [2]string{"(unlisted)", path.Dir(p)}
		}
		if rep.cells[own[0]] == nil {
			rep.cells[own[0]] = map[string]*cell{}
		}
		c := rep.cells[own[0]][own[1]]
		if c == nil {
			c = &cell{}
			rep.cells[own[0]][own[1]] = c
		}
		add, del := countLines(udiff.Unified("a", "b", a[p], b[p]))
		c.add += add
		c.del += del
		rep.files = append(rep.files, fileStat{Path: p, Op: own[0], Backend: own[1], Added: add, Removed: del})
		backends[own[1]] = true
		if strings.HasPrefix(p, "ir/") {
			// The IR (or, from older revisions, its retired .sig files):
			// not emitted source.
			irChanged[own[0]] = true
		}
	}
	for op := range rep.cells {
		if !irChanged[op] && op != "(shared)" && op != "(unlisted)" {
			rep.sourceOnly = append(rep.sourceOnly, op)
		}
	}
	sort.Strings(rep.sourceOnly)
	sort.Slice(rep.files, func(i, j int) bool { return rep.files[i].Path < rep.files[j].Path })
	sort.Strings(rep.changed)
	for be := range backends {
		rep.backends = append(rep.backends, be)
	}
	sort.Strings(rep.backends)
	return rep
}

func countLines(d string) (add, del int) {
	for _, l := range strings.Split(d, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			add++
		case strings.HasPrefix(l, "-"):
			del++
		}
	}
	return
}

func (r *diffReport) print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "KERNEL\t%s\n", strings.ToUpper(strings.Join(r.backends, "\t")))
	kernels := make([]string, 0, len(r.cells))
	for k := range r.cells {
		kernels = append(kernels, k)
	}
	sort.Strings(kernels)
	for _, k := range kernels {
		row := []string{k}
		for _, be := range r.backends {
			if c := r.cells[k][be]; c != nil {
				row = append(row, fmt.Sprintf("+%d/-%d", c.add, c.del))
			} else {
				row = append(row, ".")
			}
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	if len(r.kernels) > 0 || len(r.sourceOnly) > 0 {
		fmt.Fprintln(w, "\nVerdicts (canonical IR; results of both revisions on the same random problems):")
		for _, v := range r.kernels {
			fmt.Fprintf(w, "  %-46s %s\n", v.Kernel, v.Summary())
			for _, d := range v.Differences {
				fmt.Fprintf(w, "      %-10s a: %s\n", d.Category, lineRef("a", d.A))
				fmt.Fprintf(w, "      %-10s b: %s\n", "", lineRef("b", d.B))
			}
		}
		for _, op := range r.sourceOnly {
			fmt.Fprintf(w, "  %-46s %s\n", op, "IR unchanged: only the emitted source differs")
		}
	}
	fmt.Fprintf(w, "\n%d files differ\n", len(r.changed))
}

// lineRef renders a differing statement, or says the side has none.
func lineRef(side string, l *verdict.Line) string {
	if l == nil {
		return "(every statement has a counterpart)"
	}
	return fmt.Sprintf("%s/%s:%d  %s", side, l.File, l.Line, l.Text)
}

// diffJSON is --json's output; its shape is documented in the README.
type diffJSON struct {
	A          string           `json:"a"`
	B          string           `json:"b"`
	Same       bool             `json:"same"`
	Files      []fileStat       `json:"files"`
	Kernels    []verdict.Kernel `json:"kernels"`
	SourceOnly []string         `json:"source_only"`
}

func (r *diffReport) writeJSON(w io.Writer, a, b string) error {
	out := diffJSON{A: a, B: b, Same: len(r.changed) == 0, Files: r.files, Kernels: r.kernels, SourceOnly: r.sourceOnly}
	if out.Files == nil {
		out.Files = []fileStat{}
	}
	if out.Kernels == nil {
		out.Kernels = []verdict.Kernel{}
	}
	if out.SourceOnly == nil {
		out.SourceOnly = []string{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
