package toolchain

// The OpenCL backend's tools (internal/backend/opencl owns this file).

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// Clinfo lists the OpenCL platforms.
var Clinfo = Tool{
	Name:        "clinfo",
	Candidates:  []string{"clinfo"},
	VersionArgs: []string{"--version"},
	Purpose:     "lists the OpenCL platforms the OpenCL backend's checks can run on (PoCL in CI: pocl-opencl-icd, built against ocl-icd-opencl-dev)",
	Install:     "apt-get install -y clinfo pocl-opencl-icd ocl-icd-opencl-dev",
	Required:    RequiredCI,
}

// OpenCLPlatform is one OpenCL platform and its devices, as `clinfo -l`
// lists them.
type OpenCLPlatform struct {
	Name    string   `json:"name"`
	Devices []string `json:"devices"`
}

// OpenCLPlatforms lists the OpenCL platforms the ICD loader finds, through
// clinfo. No platform is an empty list, not an error; a missing clinfo is.
func OpenCLPlatforms(ctx context.Context) ([]OpenCLPlatform, error) {
	path, err := lookPath("clinfo")
	if err != nil {
		return nil, fmt.Errorf("clinfo not found: %w (apt-get install -y clinfo)", err)
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "-l").Output()
	if err != nil {
		return nil, fmt.Errorf("clinfo -l: %w", err)
	}
	return parseClinfoList(string(out)), nil
}

// parseClinfoList reads `clinfo -l`: "Platform #N: NAME" lines, each
// followed by " `-- Device #M: NAME" (or " +-- ...") lines.
func parseClinfoList(s string) []OpenCLPlatform {
	ps := []OpenCLPlatform{}
	for _, l := range strings.Split(s, "\n") {
		if name, ok := strings.CutPrefix(l, "Platform #"); ok {
			if _, n, ok := strings.Cut(name, ": "); ok {
				ps = append(ps, OpenCLPlatform{Name: strings.TrimSpace(n), Devices: []string{}})
			}
			continue
		}
		if i := strings.Index(l, "Device #"); i >= 0 && len(ps) > 0 {
			if _, n, ok := strings.Cut(l[i:], ": "); ok {
				ps[len(ps)-1].Devices = append(ps[len(ps)-1].Devices, strings.TrimSpace(n))
			}
		}
	}
	return ps
}
