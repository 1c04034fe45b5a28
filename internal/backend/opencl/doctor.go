package opencl

import (
	"context"
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/internal/backend"
	"github.com/kernelgen/kernelgen/tools/toolchain"
)

// platforms is doctor --json's "opencl": what the OpenCL ICD loader finds
// (clinfo -l).
type platforms struct {
	Platforms []toolchain.OpenCLPlatform `json:"platforms"`
	Error     string                     `json:"error,omitempty"` // why they could not be listed
}

// doctor lists the OpenCL platforms the checks can run on.
func doctor(ctx context.Context, _ []toolchain.Result) backend.Fact {
	ps, err := toolchain.OpenCLPlatforms(ctx)
	fact := backend.Fact{Key: name}
	switch {
	case err != nil:
		fact.Value = platforms{Platforms: []toolchain.OpenCLPlatform{}, Error: err.Error()}
		fact.Lines = []string{fmt.Sprintf("OpenCL platforms: not listed (%s)", err)}
	case len(ps) == 0:
		fact.Value = platforms{Platforms: ps}
		fact.Lines = []string{"OpenCL platforms: none found (apt-get install -y pocl-opencl-icd for PoCL, which CI runs the OpenCL kernels on)"}
	default:
		fact.Value = platforms{Platforms: ps}
		for _, p := range ps {
			fact.Lines = append(fact.Lines, fmt.Sprintf("OpenCL platform: %s (%s)", p.Name, strings.Join(p.Devices, "; ")))
			if p.Version != "" {
				fact.Lines = append(fact.Lines, "  version: "+p.Version)
			}
			// what ggml-opencl's device check reads, and its verdict
			for _, d := range p.Info {
				sg := strings.Join(d.Subgroups, " ")
				if sg == "" {
					sg = "none"
				}
				fact.Lines = append(fact.Lines, fmt.Sprintf("  %s: driver %s, OpenCL C %s, fp16 %v, subgroups %s; %s", d.Name, d.Driver, d.OpenCLC, d.FP16, sg, d.GGMLCheck))
			}
		}
	}
	return fact
}
