// Package metallib builds a metallib from Metal sources with xcrun (macOS
// only): the real-compiler check of the Metal backend.
package metallib

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Compiler is xcrun's Metal compiler: the tool xcrun runs as
// `xcrun -sdk macosx metal` (tools/toolchain probes its version so).
const Compiler = "metal"

// Build compiles the generated .metal files into a metallib with warnings
// as errors, where xcrun metal exists. ok is false when it does not (not
// macOS, or no Xcode command line tools).
func Build(ctx context.Context, sources map[string][]byte) (ok bool, err error) {
	xcrun, lookErr := exec.LookPath("xcrun")
	if lookErr != nil || runtime.GOOS != "darwin" {
		return false, nil
	}
	dir, err := os.MkdirTemp("", "kernelgen-metal-")
	if err != nil {
		return true, err
	}
	defer os.RemoveAll(dir)
	var airs []string
	for name, src := range sources {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, src, 0o644); err != nil {
			return true, err
		}
		air := strings.TrimSuffix(path, ".metal") + ".air"
		cmd := exec.CommandContext(ctx, xcrun, "-sdk", "macosx", Compiler, "-Werror", "-c", path, "-o", air)
		if out, err := cmd.CombinedOutput(); err != nil {
			return true, fmt.Errorf("xcrun %s %s: %v\n%s", Compiler, name, err, out)
		}
		airs = append(airs, air)
	}
	args := append([]string{"-sdk", "macosx", "metallib", "-o", filepath.Join(dir, "kernelgen.metallib")}, airs...)
	if out, err := exec.CommandContext(ctx, xcrun, args...).CombinedOutput(); err != nil {
		return true, fmt.Errorf("xcrun metallib: %v\n%s", err, out)
	}
	return true, nil
}
