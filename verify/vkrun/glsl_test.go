package vkrun

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// CompileGLSL compiles a GLSL shader of the given stage ("comp") to SPIR-V
// with glslangValidator (Vulkan 1.2 target, as the generator uses) and, when
// spirv-val is installed, validates it. Test helper only.
//
// Modules are cached under $KERNELGEN_CACHE/vkrun-glsl by the hash of the
// flags, source and defines, so a GPU host without glslang can run the tests
// with a cache filled elsewhere (see the package doc).
func CompileGLSL(ctx context.Context, source []byte, defines map[string]string, stage string) ([]byte, error) {
	// glslang 12 wants --stdin before -S.
	args := []string{"-V", "--target-env", "vulkan1.2", "--stdin", "-S", stage}
	keys := make([]string, 0, len(defines))
	for k := range defines {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "-D"+k+"="+defines[k])
	}
	h := sha256.New()
	fmt.Fprintf(h, "%q\x00", args)
	h.Write(source)
	var cached string
	if dir, err := CacheDir(); err == nil {
		cached = filepath.Join(filepath.Dir(dir), "vkrun-glsl", hex.EncodeToString(h.Sum(nil))+".spv")
		if b, err := os.ReadFile(cached); err == nil {
			return b, nil
		}
	}
	glslang, err := exec.LookPath("glslangValidator")
	if err != nil {
		return nil, fmt.Errorf("%w: glslangValidator not found; install it with `apt-get install glslang-tools`", ErrMissingTool)
	}
	dir, err := os.MkdirTemp("", "kernelgen-glsl-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "out.spv")
	args = append(args, "-o", out)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, glslang, args...)
	cmd.Stdin = bytes.NewReader(source)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("glslangValidator failed: %v\n%s", err, strings.TrimSpace(string(msg)))
	}
	spv, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	if val, err := exec.LookPath("spirv-val"); err == nil {
		cmd := exec.CommandContext(ctx, val, "--target-env", "vulkan1.2", out)
		if msg, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("spirv-val rejected the module: %v\n%s", err, strings.TrimSpace(string(msg)))
		}
	} else if !errors.Is(err, exec.ErrNotFound) {
		return nil, err
	}
	if cached != "" && os.MkdirAll(filepath.Dir(cached), 0o755) == nil {
		tmp := filepath.Join(dir, "publish.spv")
		if os.WriteFile(tmp, spv, 0o644) == nil {
			os.Rename(tmp, cached) // best effort; a failed rename only costs a recompile
		}
	}
	return spv, nil
}
