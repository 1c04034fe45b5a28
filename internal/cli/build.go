package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kernelgen/kernelgen/internal/backend"
	"github.com/kernelgen/kernelgen/internal/gentree"
	"github.com/kernelgen/kernelgen/internal/registry"
	"github.com/kernelgen/kernelgen/internal/udiff"
	"github.com/kernelgen/kernelgen/tools/fsx"
)

func newBuildCmd() *cobra.Command {
	var out, color string
	var backendList []string
	var check, force, noCompile bool
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Generate kernels and glue into generated/",
		Long: `Generate the kernels of every op and variant for the backends into the output
directory, one subdirectory per backend, plus a MANIFEST of every file
kernelgen owns there. The default output is generated/ at the root of the
kernelgen module (found from the working directory as go finds go.mod), so a
build from a subdirectory writes the same tree.

The write is atomic: the new tree is built beside the old one and swapped in,
so an interrupted build never leaves a half-written directory; an output that
cannot be swapped (a mount point, or a directory whose parent is not
writable) is written in place, file by file, and an interrupted in-place write
is finished by the next build. Two builds into one directory take turns: the
second waits (up to 2 minutes) for the first to write, then composes from its
tree. Output is deterministic: two builds write the same bytes. Files of
backends not being rebuilt are kept. A directory holding files kernelgen did
not write is refused unless --force is given (they are then deleted); so is a
damaged MANIFEST (--force rewrites it).

--check runs the same generation and compares it with the directory instead of
writing: exit 0 when up to date, exit 1 with a unified diff when stale (use it
in CI). -o - writes the files to standard output as a txtar archive.

Backends (one or more, comma-separated or repeated): all (every implemented
backend), ` + strings.Join(registry.Names(), ", ") + `. Backends that are not
implemented yet are refused by name.

Progress goes to standard error: one updated line on a terminal; otherwise a
line per quarter of each backend's checks and its summary, with the time taken.`,
		Example: `  kernelgen build --backend all
  kernelgen build --backend go --check
  kernelgen build --backend go,ir --no-compile
  kernelgen build --backend go -o - | less`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			colored, err := useColor(color, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			if out == "-" && check {
				return fail(ExitError, "--check compares with a directory; it cannot be used with -o -")
			}
			bs, err := resolveBackends(backendList)
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			dir, label, err := outputDir(cmd, out)
			if err != nil {
				return err
			}
			ctx, stderr := cmd.Context(), cmd.ErrOrStderr()
			rebuilt := map[string][]gentree.File{}
			nfiles := 0
			for _, b := range bs {
				// One generation per backend: the files written and
				// compared are the files the checks compile and run.
				gen, err := b.Generation()
				if err != nil {
					return fail(ExitError, "backend %s: %v", b.Name, err)
				}
				files := gen.Written()
				for _, f := range files {
					rebuilt[b.Name] = append(rebuilt[b.Name], gentree.File{Path: f.Path, Op: f.Op, Data: f.Data})
				}
				nfiles += len(files)
				if b.Verify != nil && !noCompile {
					start := time.Now()
					summary, err := gen.Verify(ctx, progressLine(stderr, b.Name, start))
					if ctx.Err() != nil {
						return fail(ExitError, "interrupted during the %s checks; nothing was written", b.Name)
					}
					if err != nil {
						return fail(ExitError, "backend %s: %v\nnothing was written", b.Name, err)
					}
					fmt.Fprintf(stderr, "%s (%s)\n", summary, seconds(time.Since(start)))
				}
			}
			stdout := cmd.OutOrStdout()
			if out == "-" {
				return writeArchive(stdout, rebuilt)
			}
			lock, err := fsx.LockTarget(ctx, dir, !check, func(file, holder string) {
				who := "another kernelgen"
				if holder != "" {
					who += " (pid " + holder + ")"
				}
				fmt.Fprintf(stderr, "waiting for %s to finish writing %s (lock file %s)\n", who, dir, file)
			})
			if ctx.Err() != nil {
				return fail(ExitError, "interrupted while waiting for another kernelgen; nothing was written")
			}
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			defer lock.Unlock()
			if !check {
				if err := fsx.CleanStale(dir); err != nil {
					return fail(ExitError, "recovering from an interrupted build in %s: %v", dir, err)
				}
			}
			existing, err := fsx.ReadTree(dir)
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			plan, err := gentree.Compose(existing, rebuilt)
			var damaged *gentree.ManifestError
			if errors.As(err, &damaged) && force && !check {
				plan, err = gentree.ComposeIgnoringManifest(existing, rebuilt)
			} else if errors.As(err, &damaged) {
				return fail(ExitError, "%s: %v; kernelgen cannot tell which files there it wrote. Rewrite it by rebuilding every backend with --force: kernelgen build --backend all --force (this deletes the files there that kernelgen does not generate)", dir, err)
			}
			if err != nil {
				return fail(ExitError, "%s: %v", dir, err)
			}
			names := backendNames(bs)
			if check {
				if len(plan.Foreign) > 0 {
					fmt.Fprintf(stdout, "%s holds files kernelgen did not write: %s\n", dir, strings.Join(plan.Foreign, ", "))
				}
				if plan.UpToDate() && len(plan.Foreign) == 0 {
					fmt.Fprintf(stdout, "%s is up to date (%s: %d files)\n", dir, names, nfiles)
					return nil
				}
				printDiff(stdout, label, existing, plan, colored)
				return errStale
			}
			if len(plan.Foreign) > 0 && !force {
				return fail(ExitError, "%s holds files kernelgen did not write (%s); move them away, pick another -o, or pass --force to delete them", dir, strings.Join(plan.Foreign, ", "))
			}
			if plan.UpToDate() && len(plan.Foreign) == 0 {
				fmt.Fprintf(stdout, "%s is up to date (%s: %d files)\n", dir, names, nfiles)
				return nil
			}
			if err := fsx.ReplaceDir(dir, plan.Files); errors.Is(err, fsx.ErrIncomplete) {
				return fail(ExitError, "writing %s: %v", dir, err)
			} else if err != nil {
				return fail(ExitError, "writing %s: %v (the previous tree is unchanged)", dir, err)
			}
			fmt.Fprintf(stdout, "wrote %s (%s): %d added, %d changed, %d removed", dir, names,
				len(plan.Added), len(plan.Changed), len(plan.Removed))
			if len(plan.Foreign) > 0 {
				fmt.Fprintf(stdout, "; %d files kernelgen did not write were replaced or deleted (--force)", len(plan.Foreign))
			}
			fmt.Fprintln(stdout)
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&backendList, "backend", []string{"all"}, "backends to generate, comma-separated: all, "+strings.Join(registry.Names(), ", "))
	cmd.Flags().StringVarP(&out, "out", "o", "", "output directory (default: generated/ at the module root; - for a txtar archive on stdout)")
	cmd.Flags().BoolVar(&check, "check", false, "compare with the output directory instead of writing; exit 1 with a diff when stale")
	cmd.Flags().BoolVar(&noCompile, "no-compile", false, "skip compiling and validating with the backend's toolchain (vulkan: glslang, spirv-val)")
	cmd.Flags().BoolVar(&force, "force", false, "delete files in the output directory that kernelgen did not write")
	cmd.Flags().StringVar(&color, "color", "auto", "color the --check diff: auto, always, never (auto honours NO_COLOR)")
	_ = cmd.RegisterFlagCompletionFunc("backend", completeList(append([]string{"all"}, registry.Names()...)))
	_ = cmd.RegisterFlagCompletionFunc("color", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"auto", "always", "never"}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

func backendNames(bs []*backend.Backend) string {
	var s []string
	for _, b := range bs {
		s = append(s, b.Name)
	}
	return strings.Join(s, ", ")
}

// printDiff prints a unified diff of every added, changed and removed file.
func printDiff(w io.Writer, dir string, existing map[string][]byte, plan *gentree.Plan, colored bool) {
	var paths []string
	paths = append(paths, plan.Added...)
	paths = append(paths, plan.Changed...)
	paths = append(paths, plan.Removed...)
	paths = append(paths, plan.Foreign...)
	sort.Strings(paths)
	for _, p := range paths {
		name := filepath.ToSlash(filepath.Join(dir, p))
		oldName, newName := "a/"+name, "b/"+name
		if _, ok := existing[p]; !ok {
			oldName = "/dev/null"
		}
		if _, ok := plan.Files[p]; !ok {
			newName = "/dev/null"
		}
		d := udiff.Unified(oldName, newName, existing[p], plan.Files[p])
		if colored {
			d = colorDiff(d)
		}
		fmt.Fprint(w, d)
	}
}

func colorDiff(d string) string {
	lines := strings.SplitAfter(d, "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			lines[i] = "\x1b[1m" + strings.TrimSuffix(l, "\n") + "\x1b[0m\n"
		case strings.HasPrefix(l, "+"):
			lines[i] = "\x1b[32m" + strings.TrimSuffix(l, "\n") + "\x1b[0m\n"
		case strings.HasPrefix(l, "-"):
			lines[i] = "\x1b[31m" + strings.TrimSuffix(l, "\n") + "\x1b[0m\n"
		case strings.HasPrefix(l, "@@"):
			lines[i] = "\x1b[36m" + strings.TrimSuffix(l, "\n") + "\x1b[0m\n"
		}
	}
	return strings.Join(lines, "")
}

// writeArchive writes the generated files as a txtar archive.
func writeArchive(w io.Writer, rebuilt map[string][]gentree.File) error {
	var files []gentree.File
	for _, fs := range rebuilt {
		files = append(files, fs...)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	for _, f := range files {
		if _, err := fmt.Fprintf(w, "-- %s --\n", f.Path); err != nil {
			return err
		}
		data := f.Data
		if len(data) > 0 && data[len(data)-1] != '\n' {
			data = append(append([]byte(nil), data...), '\n')
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	return nil
}

// progressLine returns the progress callback of one backend's checks: on a
// terminal it keeps one line updated; elsewhere (CI) it prints a line, with
// the time since start, as each quarter of the checks finishes, so a long
// cold build is never silent for long. The summary line follows.
func progressLine(w io.Writer, name string, start time.Time) func(done, total int) {
	if !isTerminal(w) {
		next := 1
		return func(done, total int) {
			if total < 4 || done*4 < next*total {
				return
			}
			for done*4 >= next*total {
				next++
			}
			if done < total {
				fmt.Fprintf(w, "%s: %d of %d checked (%s)\n", name, done, total, seconds(time.Since(start)))
			}
		}
	}
	return func(done, total int) {
		fmt.Fprintf(w, "\r%s: compiling %d/%d", name, done, total)
		if done == total {
			fmt.Fprint(w, "\r\x1b[K")
		}
	}
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

// resolveBackends turns --backend values (names or "all", each possibly a
// comma-separated list) into backends in table order, each once.
func resolveBackends(names []string) ([]*backend.Backend, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("--backend is empty; name one or more of all, %s", strings.Join(registry.Names(), ", "))
	}
	want := map[*backend.Backend]bool{}
	for _, n := range names {
		bs, err := registry.Resolve(strings.TrimSpace(n))
		if err != nil {
			return nil, err
		}
		for _, b := range bs {
			want[b] = true
		}
	}
	var out []*backend.Backend
	for _, b := range registry.All() {
		if want[b] {
			out = append(out, b)
		}
	}
	return out, nil
}

// outputDir is -o, or generated/ at the root of the kernelgen module that
// holds the working directory (as go finds go.mod), as a path relative to
// the working directory where it can be. label names it in --check diffs:
// "generated" for the default, so the headers read as in git.
func outputDir(cmd *cobra.Command, out string) (dir, label string, err error) {
	if cmd.Flags().Changed("out") {
		if out == "" {
			return "", "", fail(ExitError, "-o is empty; name an output directory, or - for standard output")
		}
		return out, out, nil
	}
	root, err := gentree.ModuleRoot(".")
	if err != nil {
		return "", "", fail(ExitError, "%v; run kernelgen inside the kernelgen repository, or name the output directory with -o", err)
	}
	dir = filepath.Join(root, gentree.DirName)
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, dir); err == nil {
			dir = rel
		}
	}
	return dir, gentree.DirName, nil
}

// completeList completes a comma-separated list of values, offering those
// not yet in it after what is already typed.
func completeList(values []string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		done, prefix := "", toComplete
		if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
			done, prefix = toComplete[:i+1], toComplete[i+1:]
		}
		have := map[string]bool{}
		for _, v := range strings.Split(done, ",") {
			have[v] = true
		}
		var out []string
		for _, v := range values {
			if !have[v] && strings.HasPrefix(v, prefix) {
				out = append(out, done+v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}
