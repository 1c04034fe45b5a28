package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kernelgen/kernelgen/internal/backends"
	"github.com/kernelgen/kernelgen/ops"
)

func newListCmd() *cobra.Command {
	var showVariants bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List ops, their variants and contracts, and what each backend has",
		Long: `List every kernel kernelgen describes: the series fusion it implements (A-D),
how many variants the variant table compiles, the arithmetic contracts it is
built under, and which backends generate it ("yes") or not ("-": not yet, or a
schedule only that backend has, such as Vulkan's batched ids ops).

With -v, every variant is listed under its op.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := ops.Variants(); err != nil {
				return fail(ExitError, "variant table: %v", err)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			head := []string{"OP", "FUSION", "VARIANTS", "CONTRACTS"}
			for _, b := range backends.All() {
				head = append(head, strings.ToUpper(b.Name))
			}
			fmt.Fprintln(w, strings.Join(head, "\t"))
			for _, op := range ops.All() {
				fusion := op.Fusion
				if fusion == "" {
					fusion = "-"
				}
				contracts := "portable (shared)"
				if !op.ArithFree {
					var names []string
					for _, a := range op.Ariths() {
						names = append(names, a.String())
					}
					contracts = strings.Join(names, ",")
				}
				row := []string{op.Name, fusion, fmt.Sprint(len(ops.VariantsOf(op.Name))), contracts}
				for _, b := range backends.All() {
					if b.Builds(op) {
						row = append(row, "yes")
					} else {
						row = append(row, "-")
					}
				}
				fmt.Fprintln(w, strings.Join(row, "\t"))
				if showVariants {
					for _, v := range ops.VariantsOf(op.Name) {
						s := v.String()
						if s == "" {
							s = "(no params)"
						}
						switch {
						case v.On != nil:
							s += "  (" + strings.Join(v.On, ", ") + " only)"
						case v.NotOn != nil:
							s += "  (not " + strings.Join(v.NotOn, ", ") + ")"
						}
						fmt.Fprintf(w, "  %s\n", s)
					}
				}
			}
			if err := w.Flush(); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout())
			for _, b := range backends.All() {
				state := "generates"
				if !b.Implemented() {
					state = fmt.Sprintf("not implemented yet (issue #%d)", b.Issue)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%-7s %s: %s\n", b.Name, state, b.Summary)
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&showVariants, "variants", "v", false, "list every variant")
	return cmd
}
