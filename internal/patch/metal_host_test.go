package patch

import (
	"errors"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/tier"

	"github.com/kernelgen/kernelgen/verify/hostemu"
)

// The Metal host code is plain C++ over C headers, so it is compiled here on
// the stand-in tree testdata/metal-host (README there), patched with the
// Metal step's edits and new files. By hand the same driver runs on a real
// tree (tests/metal-hazard.cpp says how).

const metalCommon = "src/ggml-metal/ggml-metal-common.cpp"

// metalHostTree copies testdata/metal-host into a temporary directory and
// applies the Metal step to it: its new files, and its edits to the files the
// stand-in has (ggml-metal-impl.h, ggml-metal-device.h and .cpp, ggml-metal-common.cpp, ggml-metal-ops.cpp,
// ggml-metal.cpp). With ranges false
// the edits to ggml-metal-common.cpp are left out (the tree before the fix).
func metalHostTree(t *testing.T, ranges bool) string {
	t.Helper()
	step := stepOf(t, "metal")
	root := metalStandIn(t)
	for _, f := range step.Files {
		if strings.HasSuffix(f.Path, ".h") {
			if err := writeFile(filepath.Join(root, filepath.FromSlash(f.Path)), f.Data); err != nil {
				t.Fatal(err)
			}
		}
	}
	byFile := map[string][]Edit{}
	for _, e := range step.Edits {
		byFile[e.File] = append(byFile[e.File], e)
	}
	patched := 0
	for file, edits := range byFile {
		path := filepath.Join(root, filepath.FromSlash(file))
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // the .metal and .m edits: not part of the stand-in
		}
		if err != nil {
			t.Fatal(err)
		}
		if file == metalCommon && !ranges {
			continue
		}
		var ls []Located
		for _, e := range edits {
			l := locate(e, string(data))
			if l.State != Pending {
				t.Fatalf("%s: edit %q is %v in the stand-in: %s", file, e.Name, l.State, l.Why)
			}
			ls = append(ls, l)
		}
		if err := os.WriteFile(path, []byte(insertAll(string(data), ls)), 0o644); err != nil {
			t.Fatal(err)
		}
		patched++
	}
	if want := map[bool]int{true: 6, false: 5}[ranges]; patched != want {
		t.Fatalf("patched %d stand-in files, want %d (ggml-metal-impl.h, ggml-metal-device.h, ggml-metal-device.cpp, ggml-metal-ops.cpp, ggml-metal.cpp and ggml-metal-common.cpp)", patched, want)
	}
	return root
}

// metalStandIn is a copy of testdata/metal-host in a temporary directory.
func metalStandIn(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	const src = "testdata/metal-host"
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return writeFile(filepath.Join(root, rel), data)
	})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// hostCXX is the host C++ compiler ($CXX, else g++); a missing one skips the
// test locally and fails it where KERNELGEN_REQUIRE_TOOLS is set (CI).
func hostCXX(t *testing.T) []string {
	t.Helper()
	c, err := hostemu.FindCompiler(hostemu.Options{})
	if err != nil {
		if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return c.Command
}

// metalHostFlags are the warnings every compile here treats as errors: the
// brief's -Wall plus upstream ggml's own set (src/CMakeLists.txt), which
// turns -Wunused-function off; the stand-in headers have no unused statics,
// so it stays on here.
var metalHostFlags = []string{"-std=c++17", "-Wall", "-Wextra", "-Wpedantic", "-Wcast-qual", "-Wmissing-declarations", "-Werror",
	"-Iinclude", "-Isrc", "-Isrc/ggml-metal"}

func compileIn(t *testing.T, dir string, cxx []string, args ...string) (string, error) {
	t.Helper()
	ctx := tier.Context(t)
	cmd := exec.CommandContext(ctx, cxx[0], append(append(append([]string{}, cxx[1:]...), metalHostFlags...), args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The patched host files compile with warnings as errors: the encoders in
// ggml-metal-ops.cpp against ggml-metal-device.h's signatures
// (ggml_metal_encoder_set_bytes takes void *, so the kargs are not const),
// the pipeline getters in ggml-metal-device.cpp, the ranges splice in
// ggml-metal-common.cpp, the gather scratch in
// ggml-metal.cpp's alloc size, and fused-ops-supports.h
// as C, which is how ggml-metal-device.m (Objective-C) includes it.
func TestMetalHostCodeCompiles(t *testing.T) {
	cxx := hostCXX(t)
	root := metalHostTree(t, true)
	for _, file := range []string{"src/ggml-metal/ggml-metal-ops.cpp", "src/ggml-metal/ggml-metal-device.cpp", metalCommon, "src/ggml-metal/ggml-metal.cpp"} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			obj := filepath.Join(t.TempDir(), "out.o")
			if out, err := compileIn(t, root, cxx, "-c", file, "-o", obj); err != nil {
				t.Fatalf("%s does not compile: %v\n%s", file, err, out)
			}
		})
	}
	t.Run("fused-ops-supports.h as C", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		unit := filepath.Join(dir, "supports.c")
		text := "#include \"ggml.h\"\n#include \"ggml-impl.h\"\n#include \"fused-ops-supports.h\"\n\n" +
			"int supports(const struct ggml_tensor * op);\n\n" +
			"int supports(const struct ggml_tensor * op) {\n    return ggml_metal_fused_supports_op(op);\n}\n"
		if err := os.WriteFile(unit, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(cxx[0], append(append([]string{}, cxx[1:]...), "-x", "c", "-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Werror",
			"-Iinclude", "-Isrc", "-Isrc/ggml-metal", "-c", unit, "-o", filepath.Join(dir, "supports.o"))...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("fused-ops-supports.h does not compile as C: %v\n%s", err, out)
		}
	})
}

// runHazard builds tests/metal-hazard.cpp with the tree's ggml-metal-common.cpp
// and runs it: its output and whether it found no hazard.
func runHazard(t *testing.T, root string) (string, bool) {
	t.Helper()
	cxx := hostCXX(t)
	bin := filepath.Join(t.TempDir(), "metal-hazard")
	if out, err := compileIn(t, root, cxx, "tests/metal-hazard.cpp", metalCommon, "-o", bin); err != nil {
		t.Fatalf("metal-hazard does not build: %v\n%s", err, out)
	}
	ctx := tier.Context(t)
	out, err := exec.CommandContext(ctx, bin).CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		t.Fatalf("metal-hazard: %v\n%s", err, out)
	}
	return string(out), err == nil
}

// docs/ggml.md#hazards: the fused nodes write src[3] (conv cache) / src[6] (recurrent
// state) in place. With the splice, no node that reads such a cache shares a
// concurrent set with its writer or changes sides in ggml_graph_optimize's
// reorder, in a decode step (plain and ids variants) and where the reader
// comes first.
func TestMetalHazardClosed(t *testing.T) {
	out, ok := runHazard(t, metalHostTree(t, true))
	if !ok || !strings.Contains(out, "ok: no node touching a written cache") {
		t.Fatalf("metal-hazard found hazards in the patched ggml-metal-common.cpp:\n%s", out)
	}
}

// The control: without the splice, the same driver finds each hazard, so
// TestMetalHazardClosed passing means the splice closed them.
func TestMetalHazardOpenWithoutTheSplice(t *testing.T) {
	out, ok := runHazard(t, metalHostTree(t, false))
	if ok {
		t.Fatalf("metal-hazard found no hazard in the unpatched ggml-metal-common.cpp:\n%s", out)
	}
	for _, want := range []string{
		"HAZARD decode step, graph order: conv_reader shares concurrent set 1 with conv_update, which writes conv_cache",
		"HAZARD decode step, graph order: state_reader shares concurrent set 3 with gdn, which writes rs_cache",
		"HAZARD decode step: the reorder moved conv_reader before conv_update, which writes conv_cache",
		"HAZARD decode step: the reorder moved state_reader before gdn, which writes rs_cache",
		"HAZARD decode step (ids variants): the reorder moved conv_reader before conv_update_ids",
		"HAZARD decode step (ids variants): the reorder moved state_reader before gdn_ids",
		"HAZARD read then update, graph order: conv_reader shares concurrent set 0 with conv_update",
		"HAZARD read then update, graph order: state_reader shares concurrent set 0 with gdn",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metal-hazard output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

// Each Metal kargs struct is defined once, in ggml-metal-impl.h beside the
// neighbours' (which both the host and the library include), not in a new
// header and again in ggml-metal.metal.
func TestMetalKargsOnceInImpl(t *testing.T) {
	step := stepOf(t, "metal")
	kargs := regexp.MustCompile(`\} (ggml_metal_kargs_\w+);`)
	where := map[string][]string{}
	for _, f := range step.Files {
		for _, m := range kargs.FindAllStringSubmatch(string(f.Data), -1) {
			where[m[1]] = append(where[m[1]], f.Path)
		}
	}
	for _, e := range step.Edits {
		for _, m := range kargs.FindAllStringSubmatch(e.Text, -1) {
			where[m[1]] = append(where[m[1]], e.File)
		}
	}
	if len(where) == 0 {
		t.Fatal("the Metal step defines no kargs struct")
	}
	for name, files := range where {
		if len(files) != 1 || files[0] != "src/ggml-metal/ggml-metal-impl.h" {
			t.Errorf("%s is defined in %v, want once in src/ggml-metal/ggml-metal-impl.h", name, files)
		}
	}
}

// A file-level #include the series adds joins its file's include block (its
// anchor is another #include), not the middle of the file. (ggml-opencl's
// embedded kernel sources, #include "x.cl.h" inside a string initialiser,
// are its neighbours' idiom, not file-level.)
func TestIncludesJoinTheIncludeBlock(t *testing.T) {
	fileLevel := regexp.MustCompile(`(?m)^#include`)
	for _, backend := range []string{"metal", "sycl", "vulkan", "opencl"} {
		for _, e := range stepOf(t, backend).Edits {
			if !fileLevel.MatchString(e.Text) {
				continue
			}
			last := e.Anchor[len(e.Anchor)-1]
			if e.Place != After || !strings.HasPrefix(strings.TrimSpace(last), "#include") {
				t.Errorf("%s: edit %q puts an #include %v %q, not after another #include", backend, e.Name, e.Place, last)
			}
		}
	}
}

// The encoders take their pipelines from ggml_metal_library_get_pipeline_*
// getters defined in ggml-metal-device.cpp and declared in
// ggml-metal-device.h, as every neighbour does; ggml-metal-ops.cpp's new
// text neither names nor compiles a pipeline itself.
func TestMetalPipelinesThroughGetters(t *testing.T) {
	getter := regexp.MustCompile(`ggml_metal_library_get_pipeline_\w+`)
	text := map[string]string{}
	for _, e := range stepOf(t, "metal").Edits {
		text[path.Base(e.File)] += e.Text
	}
	ops := text["ggml-metal-ops.cpp"]
	for _, bad := range []string{"ggml_metal_library_compile_pipeline", "ggml_metal_library_get_pipeline(", "snprintf"} {
		if strings.Contains(ops, bad) {
			t.Errorf("ggml-metal-ops.cpp's new text calls %s: a pipeline getter's job", bad)
		}
	}
	called := getter.FindAllString(ops, -1)
	if len(called) == 0 {
		t.Fatal("the encoders call no pipeline getter")
	}
	for _, g := range called {
		if !strings.Contains(text["ggml-metal-device.cpp"], "ggml_metal_pipeline_with_params "+g+"(") {
			t.Errorf("%s is not defined in ggml-metal-device.cpp", g)
		}
		if !regexp.MustCompile(`struct ggml_metal_pipeline_with_params ` + g + ` *\(`).MatchString(text["ggml-metal-device.h"]) {
			t.Errorf("%s is not declared in ggml-metal-device.h", g)
		}
	}
}
