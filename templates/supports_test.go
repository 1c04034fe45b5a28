package templates_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/registry"
	"github.com/kernelgen/kernelgen/templates"
)

// The generated supports_op answers, compiled and run on nodes built like
// ggml's builders build them: every backend accepts exactly the fused nodes
// it has kernels for and refuses the rest (S_v 48 or 256, d_conv 9, bf16 or
// hybrid state, snapshots, bad ids), leaving plain nodes to the backend.
func TestSupportsOpAnswers(t *testing.T) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
			t.Fatal("g++ not found: apt-get install g++")
		}
		t.Skip("g++ not found")
	}
	for _, b := range registry.Implemented() {
		if b.Glue() == nil {
			continue
		}
		t.Run(b.Name, func(t *testing.T) {
			files, err := templates.Glue(b.Glue(), b.Integration.Heading)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, templates.SupportsName), files[0].Data, 0o644); err != nil {
				t.Fatal(err)
			}
			prefix := b.Glue().Prefix
			bin := filepath.Join(dir, "supports")
			testdata, _ := filepath.Abs("testdata")
			cmd := exec.Command(cxx, "-std=c++17", "-Wall", "-Werror", "-Wno-unused-function",
				"-I", testdata, "-I", dir, `-DKG_SUPPORTS="`+templates.SupportsName+`"`,
				"-DKG_PREFIX="+prefix+"_fused_supports_op", "-DKG_WRITTEN="+prefix+"_fused_written_src",
				filepath.Join(testdata, "supports_main.cpp"), "-o", bin)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("compiling the generated supports_op: %v\n%s", err, out)
			}
			out, err := exec.Command(bin).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "0 failures") {
				t.Fatalf("%v\n%s", err, out)
			}
		})
	}
}

// The supports_op of Metal's upstream glue (its header) and of Vulkan's and
// OpenCL's (the section spliced into ggml-vulkan.cpp, ggml-opencl.cpp) give
// the same answers.
func TestUpstreamSupportsOpAnswers(t *testing.T) {
	for _, name := range []string{"metal", "vulkan", "opencl"} {
		bs, err := registry.Resolve(name)
		if err != nil || bs[0].Glue() == nil || bs[0].Glue().Upstream == nil {
			t.Fatalf("%s: %v (no upstream glue?)", name, err)
		}
		t.Run(name, func(t *testing.T) { upstreamSupportsOpAnswers(t, bs[0].Glue()) })
	}
}

func upstreamSupportsOpAnswers(t *testing.T, g *templates.Target) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found")
	}
	files, sections, err := templates.UpstreamGlue(g)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	header := ""
	for _, f := range files {
		header += string(f.Data)
	}
	if s, ok := sections["upstream-supports"]; ok && len(files) == 0 {
		// spliced whole (Vulkan, OpenCL): the section is the header
		header = s
		if err := os.WriteFile(filepath.Join(dir, templates.SupportsName), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "supports")
	testdata, _ := filepath.Abs("testdata")
	args := []string{"-std=c++17", "-Wall", "-Werror", "-Wno-unused-function",
		"-I", testdata, "-I", dir, `-DKG_SUPPORTS="` + templates.SupportsName + `"`,
		"-DKG_PREFIX=" + g.Prefix + "_fused_supports_op"}
	if written := g.Prefix + "_fused_written_src"; strings.Contains(header, written) {
		args = append(args, "-DKG_WRITTEN="+written)
	}
	cmd := exec.Command(cxx, append(args, filepath.Join(testdata, "supports_main.cpp"), "-o", bin)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compiling the upstream supports_op: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "0 failures") {
		t.Fatalf("%v\n%s", err, out)
	}
}
