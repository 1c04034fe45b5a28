package templates_test

import (
	"cmp"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/registry"
	"github.com/kernelgen/kernelgen/templates"
)

// supportsLocals are the locals of each backend's supports_op that its
// spliced text reads (a device that has what the fused kernels need).
var supportsLocals = map[string]string{
	"metal":  "const bool has_simdgroup_reduction = true;\n",
	"vulkan": "struct { bool subgroup_shuffle; struct { struct { uint32_t maxStorageBufferRange; } limits; } properties; } props = { true, { { KG_MAX_BINDING } } }, * device = &props;\n",
}

// maxBinding is, for a backend whose fused kernels index a binding in 32
// bits, the largest source its stand-in device binds (Vulkan's
// maxStorageBufferRange, 64 MiB here); 0 where none is checked.
var maxBinding = map[string]string{"vulkan": "(64u << 20)"}

// Every backend's supports_op path as upstream gets it (the helper in its
// file, the text spliced into supports_op, then the plain cases, which take
// any GATED_DELTA_NET or SSM_CONV node): a fused node is run by its fused
// kernel or refused, never handed to the plain kernel (S_v or d_conv not in
// the table, q and k of different strides, ids of another length), and one
// whose written cache lives in memory the device cannot use is refused, so
// that under ggml_backend_sched's placement (a stand-in over the device and
// the CPU) the cache in host memory ends the step as the unfused graph leaves
// it.
func TestSupportsOpPathRunsOrRefuses(t *testing.T) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
			t.Fatal("g++ not found: apt-get install g++")
		}
		t.Skip("g++ not found")
	}
	n := 0
	for _, b := range registry.Implemented() {
		g, m := b.Glue(), b.Integration
		if g == nil || g.Upstream == nil || m == nil {
			continue
		}
		n++
		t.Run(b.Name, func(t *testing.T) {
			files, up, err := templates.UpstreamGlue(g)
			if err != nil {
				t.Fatal(err)
			}
			helper := supportsHelper(t, g.Prefix, files, up)
			var path strings.Builder
			for _, s := range m.Sections {
				if !strings.HasPrefix(s.Name, "supports_op") {
					continue
				}
				text, ok := up[s.Text.Section]
				if !ok {
					if text, err = templates.Section(g, s.Text.Section); err != nil {
						t.Fatal(err)
					}
				}
				path.WriteString(text + "\n")
			}
			if path.Len() == 0 {
				t.Fatalf("%s: no supports_op section in the manifest", b.Name)
			}
			dir := t.TempDir()
			for name, text := range map[string]string{
				templates.SupportsName: "#pragma once\n" + helper,
				"supports_path.inc":    path.String(),
				"supports_locals.inc":  supportsLocals[b.Name],
			} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			testdata, _ := filepath.Abs("testdata")
			bin := filepath.Join(dir, "path")
			cmd := exec.Command(cxx, "-std=c++17", "-Wall", "-Werror", "-Wno-unused-function",
				"-I", testdata, "-I", dir, `-DKG_SUPPORTS="`+templates.SupportsName+`"`,
				"-DKG_MAX_BINDING="+cmp.Or(maxBinding[b.Name], "0"),
				filepath.Join(testdata, "supports_path_main.cpp"), "-o", bin)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("compiling the supports_op path: %v\n%s\npath:\n%s", err, out, path.String())
			}
			out, err := exec.Command(bin).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "0 failures") {
				t.Fatalf("%v\n%s", err, out)
			}
		})
	}
	if n < 5 {
		t.Fatalf("%d backends with upstream glue, want 5", n)
	}
}

// supportsHelper is the backend's supports_op helper as upstream gets it: a
// header of its own, a spliced section, or the function cut out of the file
// it shares with the kernels' launchers.
func supportsHelper(t *testing.T, prefix string, files []templates.File, up map[string]string) string {
	t.Helper()
	for _, f := range files {
		if f.Name == templates.SupportsName {
			return string(f.Data)
		}
	}
	if s, ok := up["upstream-supports"]; ok {
		return s
	}
	// a static helper, or one a header declares (SYCL's fused-ops.cpp)
	head := "int " + prefix + "_fused_supports_op(const ggml_tensor * op) {"
	for _, f := range files {
		s := string(f.Data)
		if i := strings.Index(s, head); i >= 0 && (i == 0 || s[i-1] == '\n' || strings.HasSuffix(s[:i], "static ")) {
			if j := strings.Index(s[i:], "\n}\n"); j >= 0 {
				return s[i : i+j+3]
			}
		}
	}
	t.Fatalf("no %s in the upstream glue", head)
	return ""
}
