package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kernelgen/kernelgen/internal/fsx"
	"github.com/kernelgen/kernelgen/internal/gentree"
	"github.com/kernelgen/kernelgen/internal/udiff"
	"github.com/kernelgen/kernelgen/ir"
)

func newDiffCmd() *cobra.Command {
	var stat bool
	var color, dir string
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "Compare two generated trees, or generated/ at two git revisions, kernel by kernel",
		Long: `Compare the generated kernels of A and B, each a generated directory (with its
MANIFEST) or a git revision of a kernelgen repository (generated/ at that revision).

For every kernel and backend that differs it prints a unified diff of the IR text
and of each backend's source, then a summary table (kernels x backends, +added/
-removed lines) and, per changed kernel, a verdict computed from the IR
signatures kernelgen stores beside the IR (generated/ir/*.sig), not from the text:
  arithmetic changed   the order or kind of f32 operations (fma, adds, reduction
                       tree, exp routine) differs: results may change
  memory changed       what is read or written (buffers, index expressions)
  control changed      loops, branches, barriers, dispatch dependencies
  interface changed    params, args or buffers
  names/layout only    none of the above: renames, comments, formatting
Exit 0 when A and B are the same, 1 when they differ, 2 on an error.`,
		Example: `  kernelgen diff HEAD~1 HEAD
  kernelgen diff --stat main my-branch
  kernelgen diff generated /tmp/other/generated`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			colored, err := useColor(color, out)
			if err != nil {
				return err
			}
			a, err := loadTree(cmd.Context(), args[0], dir)
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			b, err := loadTree(cmd.Context(), args[1], dir)
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			rep := compareTrees(a, b)
			if len(rep.changed) == 0 {
				fmt.Fprintf(out, "%s and %s generate the same kernels\n", args[0], args[1])
				return nil
			}
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
			return &exitError{code: ExitStale, err: fmt.Errorf("%s and %s differ in %d files", args[0], args[1], len(rep.changed))}
		},
	}
	cmd.Flags().BoolVar(&stat, "stat", false, "print only the summary table and verdicts")
	cmd.Flags().StringVar(&color, "color", "auto", "color the diff: auto, always, never (auto honours NO_COLOR)")
	cmd.Flags().StringVar(&dir, "generated", "generated", "the generated directory inside the repository, for revisions")
	return cmd
}

// loadTree reads a generated tree from a directory or from a git revision.
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
	list, err := git(ctx, "ls-tree", "-r", "--name-only", arg, "--", genDir)
	if err != nil {
		return nil, fmt.Errorf("%q is neither a directory nor a git revision: %v", arg, err)
	}
	t := map[string][]byte{}
	for _, p := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		if p == "" {
			continue
		}
		data, err := git(ctx, "show", arg+":"+p)
		if err != nil {
			return nil, err
		}
		t[strings.TrimPrefix(p, genDir+"/")] = data
	}
	if len(t) == 0 {
		return nil, fmt.Errorf("revision %s has no %s/ directory", arg, genDir)
	}
	return t, nil
}

func git(ctx context.Context, args ...string) ([]byte, error) {
	c := exec.CommandContext(ctx, "git", args...)
	c.Env = append(os.Environ(), "LC_ALL=C")
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

type cell struct{ add, del int }

type diffReport struct {
	changed  []string
	cells    map[string]map[string]*cell // kernel op -> backend -> lines
	verdicts map[string][]string         // kernel id -> verdicts
	backends []string
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
	rep := &diffReport{cells: map[string]map[string]*cell{}, verdicts: map[string][]string{}}
	oa, ob := owners(a), owners(b)
	paths := map[string]bool{}
	for p := range a {
		paths[p] = true
	}
	for p := range b {
		paths[p] = true
	}
	backends := map[string]bool{}
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
		backends[own[1]] = true
		if strings.HasPrefix(p, "ir/") {
			id := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(p, "ir/"), ".sig"), ".ir")
			sig := "ir/" + id + ".sig"
			rep.verdicts[id] = verdict(a[sig], b[sig])
		}
	}
	// Backend sources that changed while their op's IR did not: the emitters
	// changed, not the kernels' meaning.
	irChanged := map[string]bool{}
	for id := range rep.verdicts {
		irChanged[strings.SplitN(id, "@", 2)[0]] = true
	}
	for op := range rep.cells {
		if !irChanged[op] && op != "(shared)" && op != "(unlisted)" {
			rep.verdicts[op] = []string{"IR unchanged: only the emitted source differs"}
		}
	}
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

// verdict compares two signatures part by part.
func verdict(a, b []byte) []string {
	switch {
	case a == nil:
		return []string{"new kernel"}
	case b == nil:
		return []string{"kernel removed"}
	}
	sa, errA := ir.ParseSignature(string(a))
	sb, errB := ir.ParseSignature(string(b))
	if errA != nil || errB != nil {
		return []string{"signature unreadable: compare by hand"}
	}
	var v []string
	if sa == sb {
		return []string{"names/layout only"}
	}
	if sa.Arithmetic != sb.Arithmetic {
		v = append(v, "arithmetic changed")
	}
	if sa.Memory != sb.Memory {
		v = append(v, "memory changed")
	}
	if sa.Control != sb.Control {
		v = append(v, "control changed")
	}
	if sa.Interface != sb.Interface {
		v = append(v, "interface changed")
	}
	if len(v) == 0 {
		v = append(v, "names/layout only")
	}
	return v
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
	if len(r.verdicts) > 0 {
		fmt.Fprintln(w, "\nVerdicts (from the IR signatures):")
		ids := make([]string, 0, len(r.verdicts))
		for id := range r.verdicts {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			fmt.Fprintf(w, "  %-46s %s\n", id, strings.Join(r.verdicts[id], ", "))
		}
	}
	fmt.Fprintf(w, "\n%d files differ\n", len(r.changed))
}
