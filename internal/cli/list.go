package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kernelgen/kernelgen/internal/registry"
	"github.com/kernelgen/kernelgen/ops"
)

func newListCmd() *cobra.Command {
	var showVariants, asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List ops, their variants and contracts, and what each backend has",
		Long: `List every kernel kernelgen describes: the series fusion it implements (A-D),
how many variants the variant table compiles, the arithmetic contracts it is
built under, and which backends generate it ("yes") or not ("-": not yet, or a
schedule only that backend has, such as Vulkan's batched ids ops).

With -v, every variant is listed below the table, under its op. With --json,
the same as one JSON document (its shape is in the README).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := ops.Variants(); err != nil {
				return fail(ExitError, "variant table: %v", err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), listData())
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			head := []string{"OP", "FUSION", "VARIANTS", "CONTRACTS"}
			for _, b := range registry.All() {
				head = append(head, strings.ToUpper(b.Name))
			}
			fmt.Fprintln(w, strings.Join(head, "\t"))
			for _, op := range ops.All() {
				fusion := op.Fusion
				if fusion == "" {
					fusion = "-"
				}
				contracts := "portable (shared)"
				if !op.ArithFree() {
					var names []string
					for _, a := range op.Ariths() {
						names = append(names, a.String())
					}
					contracts = strings.Join(names, ",")
				}
				row := []string{op.Name, fusion, fmt.Sprint(len(ops.VariantsOf(op.Name))), contracts}
				for _, b := range registry.All() {
					if b.Builds(op) {
						row = append(row, "yes")
					} else {
						row = append(row, "-")
					}
				}
				fmt.Fprintln(w, strings.Join(row, "\t"))
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if showVariants {
				// Below the table, so that its columns stay one block.
				for _, op := range ops.All() {
					fmt.Fprintf(cmd.OutOrStdout(), "\nvariants of %s:\n", op.Name)
					for _, v := range ops.VariantsOf(op.Name) {
						fmt.Fprintf(cmd.OutOrStdout(), "  %s\n", variantLine(v))
					}
				}
			}
			fmt.Fprintln(cmd.OutOrStdout())
			for _, b := range registry.All() {
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
	cmd.Flags().BoolVar(&asJSON, "json", false, "print ops, variants and backends as JSON (shape in the README)")
	return cmd
}

// variantLine is a variant's params and where it is built, if not on every
// backend.
func variantLine(v ops.Variant) string {
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
	return s
}
