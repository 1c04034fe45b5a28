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
	return backend.Found(name, "OpenCL platforms", "apt-get install -y pocl-opencl-icd for PoCL, which CI runs the OpenCL kernels on", ps, err,
		func(ps []toolchain.OpenCLPlatform, why string) any { return platforms{Platforms: ps, Error: why} },
		platformLines)
}

// platformLines are a platform's lines: its devices, its version, and for
// each device what ggml-opencl's device check reads and its verdict.
func platformLines(p toolchain.OpenCLPlatform) []string {
	lines := []string{fmt.Sprintf("OpenCL platform: %s (%s)", p.Name, strings.Join(p.Devices, "; "))}
	if p.Version != "" {
		lines = append(lines, "  version: "+p.Version)
	}
	for _, d := range p.Info {
		sg := strings.Join(d.Subgroups, " ")
		if sg == "" {
			sg = "none"
		}
		lines = append(lines, fmt.Sprintf("  %s: driver %s, OpenCL C %s, fp16 %v, subgroups %s; %s", d.Name, d.Driver, d.OpenCLC, d.FP16, sg, d.GGMLCheck))
	}
	return lines
}
