// Package ptx compiles CUDA to PTX for sm_90 with clang++-22, which needs no
// CUDA SDK: the toolchain check of the CUDA backend.
package ptx

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
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
// Compiler messages name the header as generated/cuda/<file>. A compile
// that succeeded is remembered under CacheDir by everything that decides
// it (the compiler's executable, the flags, the prelude, the header and
// tu), so the same compile again runs nothing; a failure is never cached.
func Compile(ctx context.Context, file string, header []byte, tu []string) (int, error) {
	cc, err := exec.LookPath("clang++-22")
	if err != nil {
		return 0, ErrNoClang
	}
	key, err := cacheKey(cc, file, header, tu)
	if err != nil {
		return 0, err
	}
	root, err := CacheDir()
	if err != nil {
		return 0, fmt.Errorf("ptx: cache directory: %w", err)
	}
	cached := filepath.Join(root, key)
	if b, err := os.ReadFile(cached); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			return n, nil
		}
	}
	n, err := compile(ctx, cc, file, header, tu)
	if err != nil {
		return 0, err
	}
	// A cache that cannot be written costs the next run a compile, nothing else.
	if os.MkdirAll(root, 0o755) == nil {
		if f, err := os.CreateTemp(root, ".entry-"); err == nil {
			_, werr := fmt.Fprintf(f, "%d\n", n)
			if cerr := f.Close(); werr != nil || cerr != nil || os.Rename(f.Name(), cached) != nil {
				os.Remove(f.Name())
			}
		}
	}
	return n, nil
}

// compilerRuns counts clang runs (tests check a cached compile runs none).
var compilerRuns atomic.Int64

// CacheDir is where successful compiles are remembered: $KERNELGEN_CACHE/ptx,
// or <user cache dir>/kernelgen/ptx.
func CacheDir() (string, error) {
	if d := os.Getenv("KERNELGEN_CACHE"); d != "" {
		return filepath.Join(d, "ptx"), nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "kernelgen", "ptx"), nil
}

// cacheKey hashes what decides a compile: the compiler (its executable's
// resolved path, size and time, as verify/hostemu keys its builds), the
// flags, the prelude, the header's name and bytes and the tu lines.
func cacheKey(cc, file string, header []byte, tu []string) (string, error) {
	if real, err := filepath.EvalSymlinks(cc); err == nil {
		cc = real
	}
	fi, err := os.Stat(cc)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "ptx-cache-v1\x00%s\x00%d\x00%d\x00%s\x00", cc, fi.Size(), fi.ModTime().UnixNano(), strings.Join(Flags, "\x01"))
	parts := [][]byte{cudaPrelude, []byte(file), header}
	for _, line := range tu {
		parts = append(parts, []byte(line))
	}
	for _, part := range parts {
		fmt.Fprintf(h, "%d\x00", len(part))
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))[:40], nil
}

// compile runs clang on the translation unit and counts the PTX's entries.
func compile(ctx context.Context, cc, file string, header []byte, tu []string) (int, error) {
	compilerRuns.Add(1)
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
	// No timeout of its own: the caller's ctx ends a compile.
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
