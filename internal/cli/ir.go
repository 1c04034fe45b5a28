package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

func newIRCmd() *cobra.Command {
	var arith string
	var all bool
	cmd := &cobra.Command{
		Use:   "ir [NAME]",
		Short: "Print the IR of a kernel",
		Long: `Print the stable IR text of a kernel: its params (with their domains), args,
buffers, launch geometry and body. The text is what every backend lowers from.

NAME is an op from 'kernelgen list'. --arith picks the contract: portable
(the default) or native-cuda, native-metal, native-vulkan, native-sycl. With
--all, every kernel under every contract is printed.`,
		Example: `  kernelgen ir ssm_conv_update_inplace
  kernelgen ir gated_delta_net_inplace_ids --arith native-metal
  kernelgen ir --all`,
		Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return ops.Names(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if all {
				if len(args) > 0 {
					return fail(ExitError, "give a NAME or --all, not both")
				}
				ks, err := ops.Kernels()
				if err != nil {
					return fail(ExitError, "%v", err)
				}
				for i, k := range ks {
					if i > 0 {
						fmt.Fprintln(out)
					}
					fmt.Fprint(out, ir.Print(k))
				}
				return nil
			}
			if len(args) == 0 {
				return fail(ExitError, "which kernel? valid names: %s (or --all)", strings.Join(ops.Names(), ", "))
			}
			op, err := ops.Lookup(args[0])
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			a, err := ir.ParseArith(arith)
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			k, err := op.Kernel(a)
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			if op.ArithFree() && a != ir.Portable {
				fmt.Fprintf(out, "// %s is a pure copy: every contract uses its portable kernel\n", op.Name)
			}
			fmt.Fprint(out, ir.Print(k))
			return nil
		},
	}
	var contracts []string
	for _, a := range ops.Ariths() {
		contracts = append(contracts, a.String())
	}
	cmd.Flags().StringVar(&arith, "arith", "portable", "arithmetic contract: "+strings.Join(contracts, ", "))
	cmd.Flags().BoolVar(&all, "all", false, "print every kernel under every contract")
	_ = cmd.RegisterFlagCompletionFunc("arith", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		var names []string
		for _, a := range ops.Ariths() {
			names = append(names, a.String())
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}
