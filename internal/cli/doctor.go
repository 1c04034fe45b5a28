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
	if d.SYCL.Compiler == "" {
		fmt.Fprintf(out, "SYCL implementation: none on PATH; kernelgen build --backend sycl: %s\n", d.SYCL.Build)
	} else {
		fmt.Fprintf(out, "SYCL implementation: %s = %s, %s; kernelgen build --backend sycl: %s\n", d.SYCL.Compiler, d.SYCL.Path, d.SYCL.Version, d.SYCL.Build)
	}
	if d.Cache.Error != "" {
		fmt.Fprintf(out, "Build cache: %s\n", d.Cache.Error)
	} else {
		fmt.Fprintf(out, "Build cache (%s; KERNELGEN_CACHE moves it): %s\n", d.Cache.From, d.Cache.root())
	}
	printOpenCL(out, d.OpenCL)
	printVulkan(out, d.Vulkan)
	if len(d.MissingCI) == 0 {
		fmt.Fprintln(out, "\nEverything CI needs is installed.")
		return nil
	}
	_, err := fmt.Fprintf(out, "\nMissing for CI: %s (bash scripts/setup.sh installs them).\n", strings.Join(d.MissingCI, ", "))
	return err
}

func printOpenCL(out io.Writer, o openclJSON) {
	switch {
	case o.Error != "":
		fmt.Fprintf(out, "OpenCL platforms: not listed (%s)\n", o.Error)
	case len(o.Platforms) == 0:
		fmt.Fprintln(out, "OpenCL platforms: none found (apt-get install -y pocl-opencl-icd for PoCL, which CI runs the OpenCL kernels on)")
	default:
		for _, p := range o.Platforms {
			fmt.Fprintf(out, "OpenCL platform: %s (%s)\n", p.Name, strings.Join(p.Devices, "; "))
			if p.Version != "" {
				fmt.Fprintf(out, "  version: %s\n", p.Version)
			}
			for _, d := range p.Info {
				sg := strings.Join(d.Subgroups, " ")
				if sg == "" {
					sg = "none"
				}
				fmt.Fprintf(out, "  %s: driver %s, OpenCL C %s, fp16 %v, subgroups %s; %s\n", d.Name, d.Driver, d.OpenCLC, d.FP16, sg, d.GGMLCheck)
			}
		}
	}
}

func printVulkan(out io.Writer, v vulkanJSON) {
	switch {
	case v.Error != "":
		fmt.Fprintf(out, "Vulkan devices: not listed (%s)\n", v.Error)
	case len(v.Devices) == 0:
		fmt.Fprintln(out, "Vulkan devices: none found (apt-get install -y mesa-vulkan-drivers for lavapipe, which CI runs the Vulkan kernels on)")
	default:
		for _, d := range v.Devices {
			fmt.Fprintf(out, "Vulkan device: %s (%s, %s, Vulkan %s), subgroup %d (min %d, max %d); %s\n",
				d.Name, d.Type, d.Driver, d.APIVersion, d.SubgroupSize, d.MinSubgroupSize, d.MaxSubgroupSize, d.GGMLCheck)
		}
	}
}

func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
