package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func newDoctorCmd() *cobra.Command {
	var requireCI, asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Report which toolchains are installed, their versions, and how to get the rest",
		Long: `Probe every external tool kernelgen can use: what it is for, whether it was
found (and where, at which version), and the exact command to install it.
Tools marked "ci" are needed by the test suite; the others enable extra
verification tiers (a real Metal, SYCL or CUDA compiler).

It also names the host C++ compiler the emulation checks use ($CXX, a command
such as "ccache g++", else g++) and where compiled programs are cached
($KERNELGEN_CACHE, else the user cache directory).

With --require-ci, exit 1 when a tool CI needs is missing. With --json, the
same as one JSON document (its shape is in the README).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			d := doctorData(cmd.Context())
			if asJSON {
				if err := writeJSON(out, d); err != nil {
					return err
				}
			} else if err := printDoctor(out, d); err != nil {
				return err
			}
			if len(d.MissingCI) > 0 && requireCI {
				return fail(ExitStale, "toolchains CI needs are missing: %s", strings.Join(d.MissingCI, ", "))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&requireCI, "require-ci", false, "exit 1 when a tool CI needs is missing")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON (shape in the README)")
	return cmd
}

func printDoctor(out io.Writer, d doctorJSON) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TOOL\tNEEDED BY\tSTATUS\tVERSION / HOW TO GET IT")
	for _, t := range d.Tools {
		detail := t.Version
		switch t.Status {
		case "missing":
			detail = t.Install
		case "broken":
			detail = t.Error
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", t.Name, t.NeededBy, t.Status, oneLine(detail))
		fmt.Fprintf(w, "\t\t\t  %s\n", t.Purpose)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	source := "$CXX"
	if d.CXX.Source == "default" {
		source = "the default; set CXX to change it"
	}
	if d.CXX.Error != "" {
		fmt.Fprintf(out, "Host C++ compiler (%s): %s\n", source, d.CXX.Error)
	} else {
		fmt.Fprintf(out, "Host C++ compiler (%s): %s = %s, %s\n", source, d.CXX.Setting, d.CXX.Path, d.CXX.Version)
	}
	if d.Cache.Error != "" {
		fmt.Fprintf(out, "Build cache: %s\n", d.Cache.Error)
	} else {
		fmt.Fprintf(out, "Build cache (%s; KERNELGEN_CACHE moves it): %s\n", d.Cache.From, d.Cache.root())
	}
	for _, f := range d.Backends {
		for _, l := range f.Lines {
			fmt.Fprintln(out, l)
		}
	}
	if len(d.MissingCI) == 0 {
		fmt.Fprintln(out, "\nEverything CI needs is installed.")
		return nil
	}
	_, err := fmt.Fprintf(out, "\nMissing for CI: %s (bash scripts/setup.sh installs them).\n", strings.Join(d.MissingCI, ", "))
	return err
}

func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
