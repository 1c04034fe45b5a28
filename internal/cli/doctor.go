package cli

import "github.com/spf13/cobra"

func newDoctorCmd() *cobra.Command {
	return &cobra.Command{Use: "doctor", Short: "Report which toolchains are installed", RunE: func(*cobra.Command, []string) error { return nil }}
}
