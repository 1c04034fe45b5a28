package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kernelgen/kernelgen/internal/toolchain"
)

func newDoctorCmd() *cobra.Command {
	var requireCI bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Report which toolchains are installed, their versions, and how to get the rest",
		Long: `Probe every external tool kernelgen can use: what it is for, whether it was
found (and where, at which version), and the exact command to install it.
Tools marked "ci" are needed by the test suite; the others enable extra
verification tiers (a real Metal, SYCL or CUDA compiler).

With --require-ci, exit 1 when a tool CI needs is missing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "TOOL\tNEEDED BY\tSTATUS\tVERSION / HOW TO GET IT")
			var missingCI []string
			for _, r := range toolchain.ProbeAll(cmd.Context()) {
				status, detail := "found", r.Version
				switch {
				case !r.Found:
					status, detail = "missing", r.Tool.Install
					if r.Tool.Required == toolchain.RequiredCI {
						missingCI = append(missingCI, r.Tool.Name)
					}
				case r.Err != nil:
					status, detail = "broken", r.Err.Error()
					if r.Tool.Required == toolchain.RequiredCI {
						missingCI = append(missingCI, r.Tool.Name)
					}
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.Tool.Name, r.Tool.Required, status, oneLine(detail))
				fmt.Fprintf(w, "\t\t\t  %s\n", r.Tool.Purpose)
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if len(missingCI) == 0 {
				fmt.Fprintln(out, "\nEverything CI needs is installed.")
				return nil
			}
			fmt.Fprintf(out, "\nMissing for CI: %s (bash scripts/setup.sh installs them).\n", strings.Join(missingCI, ", "))
			if requireCI {
				return fail(ExitStale, "toolchains CI needs are missing: %s", strings.Join(missingCI, ", "))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&requireCI, "require-ci", false, "exit 1 when a tool CI needs is missing")
	return cmd
}

func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
