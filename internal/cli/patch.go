package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kernelgen/kernelgen/internal/patch"
	"github.com/kernelgen/kernelgen/internal/registry"
)

func newPatchCmd() *cobra.Command {
	var tree, series, form, author string
	var backendsFlag []string
	var check bool
	order := patch.Backends(registry.Integrations()) // the series' order, from the manifests
	cmd := &cobra.Command{
		Use:   "patch --tree DIR --backend NAME",
		Short: "Splice the generated kernels and glue into a ggml or llama.cpp tree, or write them as a patch series",
		Long: `Splice the generated kernels and glue into a ggml tree (src/ggml-*) or a llama.cpp
tree (ggml/src/ggml-*). Every change is found by anchors (function signatures,
switch cases, table entries) the tree already holds, never by line numbers.

Changes come in steps, one per commit of the series. First what the tree needs:
on a tree without the fused ops, the ops step (the four builders in ggml.h/ggml.c,
the CPU kernels lowered from the IR, test-backend-ops cases that also compare the
state written in place); on a tree with the series' builders, the cases and then
the CPU fix of the conv-update ids op. Then the selected backends in the order
` + strings.Join(order, ", ") + `, and on a llama.cpp tree whose sched_reserve has the
series' backend-name gate, a supports_op probe in its place. A tree with the
builders under another signature, or only some of them, is refused.

ggml trees (src/, include/, tests/) and llama.cpp trees (ggml/src, ggml/include,
tests/ at the root, src/llama-context.cpp) are told apart by what is on disk.

  --check        dry run: report each anchor found, missing, or already applied,
                 and judge the tree as the apply does: exit 1, with the apply's
                 reasons, where it would refuse (an anchor missing, a partly
                 patched or dirty tree, a link out of the tree)
  (default)      apply: refused, with the file and anchor named and nothing
                 changed, when an anchor is missing or the tree has uncommitted
                 changes; a tree that already holds the patch is left as it is
  --series OUT   write a git format-patch series into OUT (a new directory) that
                 git am applies on the tree's HEAD; the tree itself is not touched.
                 Made beside OUT and renamed into place whole; none of your git
                 configuration but user.name and user.email reaches it

Every file is staged beside itself (.NAME.kernelgen-*) and then all are renamed
into place: an interrupt (INT, TERM, HUP) before the renames leaves the tree as
it was, one during them lets them finish; either way exit 2, saying which. Two
runs on one tree take turns on a lock in its git directory (.git/kernelgen.lock):
the second waits, saying for whom, then finds the patch in place. A symbolic
link is followed within the tree; one that leads out of it is refused.

  --form FORM    ops: new ggml ops (LocalAI's series); fusion: no new op, each
                 backend matches llama.cpp's own decode graph (docs/fusion.md),
                 two steps per backend (the kernels, then the matchers and
                 dispatch). Default: with --series, fusion on a tree
                 that carries none of the fused ops, ops on one that does;
                 without --series (apply, --check), ops

The patch text is in the target's style: no generated-file headers.
Exit 0 on success, 1 when --check finds that the apply would refuse, 2 on an
error, a refusal or an interrupt.`,
		Example: `  kernelgen patch --tree ../ggml --backend vulkan --check
  kernelgen patch --tree ../ggml --backend vulkan
  kernelgen patch --tree ../llama.cpp --backend all --series ../series`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			if tree == "" {
				return fail(ExitError, "--tree is required: the root of a ggml or llama.cpp checkout")
			}
			if len(backendsFlag) == 0 {
				return fail(ExitError, "--backend is required: one or more of %s, or all", strings.Join(order, ", "))
			}
			seriesSet := cmd.Flags().Changed("series")
			if seriesSet && strings.TrimSpace(series) == "" {
				// An unset shell variable must not turn a series into a write.
				return fail(ExitError, "--series is empty: name the directory to write the series into (nothing was changed)")
			}
			if author != "" && !seriesSet {
				return fail(ExitError, "--author names the author of a series' commits: it goes with --series (nothing was changed)")
			}
			if check && seriesSet {
				return fail(ExitError, "--check and --series do not go together: --series never touches the tree")
			}
			t, err := patch.Open(tree)
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			stderr := cmd.ErrOrStderr()
			t.OnWait = func(file, holder string) {
				who := "another kernelgen"
				if holder != "" {
					who += " (pid " + holder + ")"
				}
				fmt.Fprintf(stderr, "waiting for %s to finish with %s (lock file %s)\n", who, tree, file)
			}
			ctx := cmd.Context()
			if form == "" {
				// a series for upstream is the fusion form; LocalAI's tree, which
				// carries the ops, gets the ops form's next steps
				form = "ops"
				carries, err := patch.CarriesOps(t)
				if err != nil {
					return fail(ExitError, "%v", err)
				}
				if seriesSet && !carries {
					form = "fusion"
					fmt.Fprintf(stderr, "%s carries no fused ops: writing the fusion form (--form ops for the ops form)\n", tree)
				}
			}
			var steps []*patch.Step
			switch form {
			case "ops":
				steps, err = patch.Plan(registry.Integrations(), backendsFlag)
			case "fusion":
				steps, err = patch.FusionPlan(registry.Fusions(), backendsFlag)
			default:
				err = fmt.Errorf("--form %q: ops or fusion", form)
			}
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			switch {
			case check:
				// The verdict is the apply's: exit 1 where it would refuse,
				// with the same reasons; 2 where it could not judge.
				reports, err := patch.Check(ctx, t, steps)
				missing := printReports(out, t, reports)
				var prob *patch.Problem
				switch {
				case err != nil && !errors.As(err, &prob):
					return fail(ExitError, "%v", err)
				case prob != nil && missing > 0:
					return fail(ExitStale, "%d anchor(s) missing in %s: the tree is not one this patch knows\n%v", missing, tree, prob)
				case prob != nil:
					return fail(ExitStale, "%v", prob)
				}
				return nil
			case seriesSet:
				patches, err := patch.SeriesBy(ctx, t, steps, series, author)
				if err != nil {
					return fail(ExitError, "%v", err)
				}
				for _, p := range patches {
					fmt.Fprintln(out, p)
				}
				fmt.Fprintf(out, "wrote %d patches to %s (apply with: git am %s/*.patch)\n", len(patches), series, shellQuote(series))
				return nil
			default:
				o, err := patch.Apply(ctx, t, steps)
				if o != nil {
					for _, p := range o.Written {
						fmt.Fprintf(out, "patched %s\n", p)
					}
				}
				if err != nil {
					return fail(ExitError, "%v", err)
				}
				if len(o.Written) == 0 {
					fmt.Fprintf(out, "%s already holds this patch: nothing changed\n", tree)
				}
				return nil
			}
		},
	}
	cmd.Flags().StringVar(&tree, "tree", "", "root of the ggml or llama.cpp checkout")
	cmd.Flags().StringVar(&author, "author", "", `with --series, the commits' author as "Name <email>" (default: your git identity for the tree)`)
	cmd.Flags().StringSliceVar(&backendsFlag, "backend", nil, "backends to splice: "+strings.Join(order, ", ")+", or all")
	cmd.Flags().BoolVar(&check, "check", false, "report the anchors without changing anything")
	cmd.Flags().StringVar(&series, "series", "", "write a git format-patch series into this new directory instead")
	cmd.Flags().StringVar(&form, "form", "", "ops (new ggml ops) or fusion (graph fusions of llama.cpp's own graph); default: with --series, fusion on a tree without the fused ops, else ops")
	_ = cmd.RegisterFlagCompletionFunc("form", completeList([]string{"ops", "fusion"}))
	_ = cmd.RegisterFlagCompletionFunc("backend", completeList(append(append([]string{}, order...), "all")))
	_ = cmd.MarkFlagDirname("tree")
	return cmd
}

// printReports prints one line per change and returns how many anchors are missing.
func printReports(w io.Writer, t *patch.Tree, reports []*patch.StepReport) int {
	missing := 0
	for _, r := range reports {
		fmt.Fprintf(w, "%s: %s\n", r.Step.Backend, r.Step.Subject)
		for _, f := range r.Files {
			state := map[patch.State]string{patch.Pending: "new", patch.Applied: "applied", patch.Missing: "CONFLICT"}[f.State]
			fmt.Fprintf(w, "  %-8s %s (new file)", state, t.Rel(f.File.Path))
			if f.State == patch.Missing {
				missing++
				fmt.Fprintf(w, ": %s", f.Why)
			}
			fmt.Fprintln(w)
		}
		for _, l := range r.Edits {
			state := map[patch.State]string{patch.Pending: "found", patch.Applied: "applied", patch.Missing: "MISSING"}[l.State]
			fmt.Fprintf(w, "  %-8s %s: %s at %s", state, t.Rel(l.Edit.File), l.Edit.Name, quoteAnchor(l.Edit.Anchor))
			if l.State == patch.Missing {
				missing++
				fmt.Fprintf(w, ": %s", l.Why)
			}
			fmt.Fprintln(w)
		}
		for _, s := range r.Skipped {
			fmt.Fprintf(w, "  %-8s %s: %s (%s)\n", "skipped", t.Rel(s.Edit.File), s.Edit.Name, s.Why)
		}
	}
	return missing
}

func quoteAnchor(a []string) string {
	q := make([]string, len(a))
	for i, s := range a {
		if len(s) > 60 {
			s = s[:57] + "..."
		}
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, " > ")
}

// shellQuote quotes s for a POSIX shell where it holds anything but
// letters, digits and -_./:@%+=, (a path with spaces, a $).
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
