package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kernelgen/kernelgen/internal/backends"
	"github.com/kernelgen/kernelgen/internal/fsx"
	"github.com/kernelgen/kernelgen/internal/gentree"
	"github.com/kernelgen/kernelgen/internal/udiff"
)

func newBuildCmd() *cobra.Command {
	var backend, out, color string
	var check, force, noCompile bool
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Generate kernels and glue into generated/",
		Long: `Generate the kernels of every op and variant for a backend into the output
directory (default generated/), one subdirectory per backend, plus a MANIFEST
of every file kernelgen owns there.

The write is atomic: the new tree is built beside the old one and swapped in,
so an interrupted build never leaves a half-written directory. Output is
deterministic: two builds write the same bytes. Files of backends not being
rebuilt are kept. A directory holding files kernelgen did not write is refused
unless --force is given (they are then deleted).

--check runs the same generation and compares it with the directory instead of
writing: exit 0 when up to date, exit 1 with a unified diff when stale (use it
in CI). -o - writes the files to standard output as a txtar archive.

Backends: all (every implemented backend), go, metal, vulkan, sycl, cuda.
Backends that are not implemented yet are refused by name.`,
		Example: `  kernelgen build --backend all
  kernelgen build --backend go --check
  kernelgen build --backend go -o - | less`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			colored, err := useColor(color, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			bs, err := backends.Resolve(backend)
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			rebuilt := map[string][]gentree.File{}
			nfiles := 0
			for _, b := range bs {
				files, err := b.Generate()
				if err != nil {
					return fail(ExitError, "backend %s: %v", b.Name, err)
				}
				for _, f := range files {
					rebuilt[b.Name] = append(rebuilt[b.Name], gentree.File{Path: f.Path, Op: f.Op, Data: f.Data})
				}
				nfiles += len(files)
				if b.Verify != nil && !noCompile {
					summary, err := b.Verify(cmd.Context(), files, progressLine(cmd.ErrOrStderr(), b.Name))
					if err != nil {
						return fail(ExitError, "backend %s: %v\nnothing was written", b.Name, err)
					}
					fmt.Fprintln(cmd.ErrOrStderr(), summary)
				}
			}
			stdout := cmd.OutOrStdout()
			if out == "-" {
				if check {
					return fail(ExitError, "--check compares with a directory; it cannot be used with -o -")
				}
				return writeArchive(stdout, rebuilt)
			}
			if !check {
				if err := fsx.CleanStale(out); err != nil {
					return fail(ExitError, "recovering from an interrupted build in %s: %v", out, err)
				}
			}
			existing, err := fsx.ReadTree(out)
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			plan, err := gentree.Compose(existing, rebuilt)
			if err != nil {
				return fail(ExitError, "%s: %v", out, err)
			}
			names := backendNames(bs)
			if check {
				if len(plan.Foreign) > 0 {
					fmt.Fprintf(stdout, "%s holds files kernelgen did not write: %s\n", out, strings.Join(plan.Foreign, ", "))
				}
				if plan.UpToDate() && len(plan.Foreign) == 0 {
					fmt.Fprintf(stdout, "%s is up to date (%s: %d files)\n", out, names, nfiles)
					return nil
				}
				printDiff(stdout, out, existing, plan, colored)
				return errStale
			}
			if len(plan.Foreign) > 0 && !force {
				return fail(ExitError, "%s holds files kernelgen did not write (%s); move them away, pick another -o, or pass --force to delete them", out, strings.Join(plan.Foreign, ", "))
			}
			if plan.UpToDate() && len(plan.Foreign) == 0 {
				fmt.Fprintf(stdout, "%s is up to date (%s: %d files)\n", out, names, nfiles)
				return nil
			}
			if err := fsx.ReplaceDir(out, plan.Files); err != nil {
				return fail(ExitError, "writing %s: %v (the previous tree is unchanged)", out, err)
			}
			fmt.Fprintf(stdout, "wrote %s (%s): %d added, %d changed, %d removed", out, names,
				len(plan.Added), len(plan.Changed), len(plan.Removed))
			if len(plan.Foreign) > 0 {
				fmt.Fprintf(stdout, "; %d files kernelgen did not write were replaced or deleted (--force)", len(plan.Foreign))
			}
			fmt.Fprintln(stdout)
			return nil
		},
	}
	cmd.Flags().StringVar(&backend, "backend", "all", "backend to generate: all, "+strings.Join(backends.Names(), ", "))
	cmd.Flags().StringVarP(&out, "out", "o", "generated", "output directory (- for a txtar archive on stdout)")
	cmd.Flags().BoolVar(&check, "check", false, "compare with the output directory instead of writing; exit 1 with a diff when stale")
	cmd.Flags().BoolVar(&noCompile, "no-compile", false, "skip compiling and validating with the backend's toolchain (vulkan: glslang, spirv-val)")
	cmd.Flags().BoolVar(&force, "force", false, "delete files in the output directory that kernelgen did not write")
	cmd.Flags().StringVar(&color, "color", "auto", "color the --check diff: auto, always, never (auto honours NO_COLOR)")
	_ = cmd.RegisterFlagCompletionFunc("backend", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return append([]string{"all"}, backends.Names()...), cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("color", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"auto", "always", "never"}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

func backendNames(bs []*backends.Backend) string {
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

// progressLine returns a progress callback that keeps one line updated on a
// terminal and prints nothing otherwise (the summary line follows).
func progressLine(w io.Writer, name string) func(done, total int) {
	if !isTerminal(w) {
		return nil
	}
	return func(done, total int) {
		fmt.Fprintf(w, "\r%s: compiling %d/%d", name, done, total)
		if done == total {
			fmt.Fprint(w, "\r\x1b[K")
		}
	}
}
