// Package ptx compiles CUDA to PTX for sm_90 with clang++-22, which needs no
// CUDA SDK: the toolchain check of the CUDA backend.
package ptx

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

//go:embed cuda_prelude.h
var cudaPrelude []byte

// ErrNoClang is returned when clang++-22 is missing.
var ErrNoClang = errors.New("clang++-22 not found: apt-get install clang-22")

// Flags compile CUDA to PTX for the H100 without the CUDA SDK.
var Flags = []string{"-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib",
	"--cuda-gpu-arch=sm_90", "-Xclang", "-target-feature", "-Xclang", "+ptx80", "-O3", "-Wall", "-Werror"}

// Compile compiles a CUDA header, saved as file, in a translation unit
// that includes it followed by the lines tu (explicit instantiations), with
// clang++-22 and PTXFlags, and returns how many kernel entries the PTX holds.
// Compiler messages name the header as generated/cuda/<file>.
func Compile(ctx context.Context, file string, header []byte, tu []string) (int, error) {
	cc, err := exec.LookPath("clang++-22")
	if err != nil {
		return 0, ErrNoClang
	}
	dir, err := os.MkdirTemp("", "kernelgen-ptx-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	prelude := filepath.Join(dir, "kernelgen_cuda_prelude.h")
	if err := os.WriteFile(prelude, cudaPrelude, 0o644); err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(dir, file), header, 0o644); err != nil {
		return 0, err
	}
	lines := append([]string{fmt.Sprintf("#include %q", file)}, tu...)
	tuPath := filepath.Join(dir, "instances.cu")
	if err := os.WriteFile(tuPath, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	ptx := filepath.Join(dir, "out.ptx")
	args := append(append([]string{}, Flags...), "-include", prelude, "-S", tuPath, "-o", ptx)
	cmd := exec.CommandContext(ctx, cc, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("clang: %s: %v\n%s", file, err, strings.ReplaceAll(string(out), dir+string(filepath.Separator), "generated/cuda/"))
	}
	text, err := os.ReadFile(ptx)
	if err != nil {
		return 0, err
	}
	return len(ptxEntry.FindAll(text, -1)), nil
}

var ptxEntry = regexp.MustCompile(`(?m)^\.visible \.entry `)
