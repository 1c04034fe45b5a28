// Package spvbuild compiles generated GLSL variants to SPIR-V with
// glslangValidator and validates each module with spirv-val, in parallel,
// cached by content hash: a warm build runs no compiler. SPIR-V is a build
// artifact; nothing here writes into generated/.
package spvbuild

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/kernelgen/kernelgen/tools/fsx"
)

// Flags are glslangValidator's flags for every variant: Vulkan SPIR-V for a
// compute stage, target environment vulkan1.2 as ggml's shader build uses.
// glslangValidator does not optimise (ggml's glslc -O would fuse mul-adds in
// non-precise code; portable kernels are precise, so it cannot matter there).
var Flags = []string{"-V", "--target-env", "vulkan1.2", "-S", "comp"}

// Unit is one variant to compile.
type Unit struct {
	// File is where the source lives in generated/ (for messages), e.g. generated/vulkan/x.comp.
	File    string
	Source  []byte
	Defines map[string]string
	// Name identifies the variant in messages and results.
	Name string
}

// Result is a compiled and validated variant.
type Result struct {
	Name   string
	SPIRV  []byte
	Cached bool
}

// Tools are the resolved executables and their versions.
type Tools struct {
	Glslang, SpirvVal   string
	GlslangV, SpirvValV string
}

// ErrMissingTool is wrapped by FindTools's error.
var ErrMissingTool = errors.New("missing tool")

// FindTools locates glslangValidator and spirv-val.
func FindTools(ctx context.Context) (*Tools, error) {
	t := &Tools{}
	var err error
	if t.Glslang, err = exec.LookPath("glslangValidator"); err != nil {
		return nil, fmt.Errorf("%w: glslangValidator not found; install it with `apt-get install glslang-tools`", ErrMissingTool)
	}
	if t.SpirvVal, err = exec.LookPath("spirv-val"); err != nil {
		return nil, fmt.Errorf("%w: spirv-val not found; install it with `apt-get install spirv-tools`", ErrMissingTool)
	}
	t.GlslangV = firstLine(run(ctx, t.Glslang, "--version"))
	t.SpirvValV = firstLine(run(ctx, t.SpirvVal, "--version"))
	return t, nil
}

func run(ctx context.Context, path string, args ...string) []byte {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, _ := cmd.CombinedOutput()
	return out
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// CacheDir is where compiled modules are kept: $KERNELGEN_CACHE/spirv, or
// the user cache directory.
func CacheDir() (string, error) {
	if d := os.Getenv("KERNELGEN_CACHE"); d != "" {
		return filepath.Join(d, "spirv"), nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "kernelgen", "spirv"), nil
}

// key hashes everything that decides the output bytes.
func (t *Tools) key(u Unit) string {
	h := sha256.New()
	// "no warnings": modules cached before warnings failed a build are not reused.
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00no warnings\x00", t.GlslangV, t.SpirvValV, strings.Join(Flags, " "))
	WriteUnit(h, u)
	return hex.EncodeToString(h.Sum(nil))
}

// WriteUnit writes what a unit compiles from, its source and its defines in
// name order, for content keys.
func WriteUnit(w io.Writer, u Unit) {
	w.Write(u.Source)
	keys := make([]string, 0, len(u.Defines))
	for k := range u.Defines {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "\x00%s=%s", k, u.Defines[k])
	}
}

// Progress receives (done, total) after each unit.
type Progress func(done, total int)

// Build compiles and validates every unit, using the cache. It returns the
// results in input order, or every error (compile errors point at the
// generated file and line).
func (t *Tools) Build(ctx context.Context, units []Unit, progress Progress) ([]Result, error) {
	dir, err := CacheDir()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// Work directories of builds killed before they could remove them.
	fsx.RemoveStale(dir, ".build-")
	results := make([]Result, len(units))
	errs := make([]error, len(units))
	var mu sync.Mutex
	done := 0
	sem := make(chan struct{}, runtime.NumCPU())
	var wg sync.WaitGroup
	for i := range units {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i], errs[i] = t.one(ctx, dir, units[i])
			mu.Lock()
			done++
			if progress != nil {
				progress(done, len(units))
			}
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("interrupted: %w", ctx.Err())
	}
	if err := group(errs); err != nil {
		return nil, err
	}
	return results, nil
}

// UnitError is a variant a tool failed or warned on.
type UnitError struct {
	File, Unit string // the generated file, the variant
	Tool, What string // e.g. "glslangValidator", "failed"
	Output     string // the tool's messages, at the generated file's lines
}

func (e *UnitError) Error() string {
	return fmt.Sprintf("%s (%s): %s %s:\n%s", e.File, e.Unit, e.Tool, e.What, e.Output)
}

// group joins errs, each distinct tool message once with every variant it
// came from: a defect in a shader fails all its variants alike, and one
// copy per variant would bury the message.
func group(errs []error) error {
	type key struct{ file, tool, what, out string }
	units := map[key][]string{}
	var order []key
	var other []error
	for _, err := range errs {
		var ue *UnitError
		switch {
		case err == nil:
		case errors.As(err, &ue):
			k := key{ue.File, ue.Tool, ue.What, ue.Output}
			if units[k] == nil {
				order = append(order, k)
			}
			units[k] = append(units[k], ue.Unit)
		default:
			other = append(other, err)
		}
	}
	var out []error
	for _, k := range order {
		us := units[k]
		if len(us) == 1 {
			out = append(out, &UnitError{File: k.file, Unit: us[0], Tool: k.tool, What: k.what, Output: k.out})
			continue
		}
		names := us
		if len(names) > 4 {
			names = append(names[:4:4], fmt.Sprintf("and %d more", len(us)-4))
		}
		out = append(out, fmt.Errorf("%s: %s %s on %d variants (%s):\n%s", k.file, k.tool, k.what, len(us), strings.Join(names, ", "), k.out))
	}
	return errors.Join(append(out, other...)...)
}

func (t *Tools) one(ctx context.Context, dir string, u Unit) (Result, error) {
	key := t.key(u)
	cached := filepath.Join(dir, key+".spv")
	if b, err := os.ReadFile(cached); err == nil {
		return Result{Name: u.Name, SPIRV: b, Cached: true}, nil
	}
	work, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(work)
	// The source keeps its generated file name so glslang's messages name it.
	src := filepath.Join(work, filepath.Base(u.File))
	if err := os.WriteFile(src, u.Source, 0o644); err != nil {
		return Result{}, err
	}
	out := filepath.Join(work, "out.spv")
	args := append([]string{}, Flags...)
	keys := make([]string, 0, len(u.Defines))
	for k := range u.Defines {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "-D"+k+"="+u.Defines[k])
	}
	args = append(args, "-o", out, src)
	// No timeout of its own, as make has none: the caller's ctx ends a
	// compile (an interrupt, go test's deadline), not a figure that a busy
	// machine could pass.
	cmd := exec.CommandContext(ctx, t.Glslang, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	msg, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return Result{}, ctx.Err()
	}
	if err != nil {
		out := remap(msg, src, u.File)
		if out == "" {
			out = err.Error()
		}
		return Result{}, &UnitError{File: u.File, Unit: u.Name, Tool: "glslangValidator", What: "failed", Output: out}
	}
	// Generated shaders compile without warnings; one is a defect to fix
	// in the emitter, not noise to scroll past (glslang exits 0 on them).
	if bytes.Contains(msg, []byte("WARNING: ")) {
		return Result{}, &UnitError{File: u.File, Unit: u.Name, Tool: "glslangValidator", What: "warned", Output: remap(msg, src, u.File)}
	}
	cmd = exec.CommandContext(ctx, t.SpirvVal, "--target-env", "vulkan1.2", out)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if msg, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(msg)) > 0 {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		text := string(bytes.TrimSpace(msg))
		if text == "" {
			text = err.Error()
		}
		return Result{}, &UnitError{File: u.File, Unit: u.Name, Tool: "spirv-val", What: "rejected the module", Output: text}
	}
	spv, err := os.ReadFile(out)
	if err != nil {
		return Result{}, err
	}
	// Publish atomically so a concurrent or interrupted build never sees half a module.
	tmp := filepath.Join(work, "publish.spv")
	if err := os.WriteFile(tmp, spv, 0o644); err != nil {
		return Result{}, err
	}
	if err := os.Rename(tmp, cached); err != nil {
		return Result{}, err
	}
	return Result{Name: u.Name, SPIRV: spv}, nil
}

var glslangLoc = regexp.MustCompile(`(ERROR|WARNING): [^\s:]*:(\d+):`)

// remap rewrites the temporary source path in glslang's messages to the
// generated file's path, keeping the line numbers (they are the file's own).
func remap(msg []byte, tmpPath, file string) string {
	s := strings.ReplaceAll(string(msg), tmpPath, file)
	s = glslangLoc.ReplaceAllString(s, "$1: "+file+":$2:")
	return strings.TrimSpace(s)
}
