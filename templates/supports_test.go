package templates

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	for _, backend := range []string{"cuda", "vulkan", "metal", "sycl"} {
		t.Run(backend, func(t *testing.T) {
			files, err := Glue(backend)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, SupportsName), files[0].Data, 0o644); err != nil {
				t.Fatal(err)
			}
			prefix := glueFiles[backend].prefix
			bin := filepath.Join(dir, "supports")
			testdata, _ := filepath.Abs("testdata")
			cmd := exec.Command(cxx, "-std=c++17", "-Wall", "-Werror", "-Wno-unused-function",
				"-I", testdata, "-I", dir, `-DKG_SUPPORTS="`+SupportsName+`"`,
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

// The supports_op of Metal's upstream glue (its header) and of Vulkan's (the
// section spliced into ggml-vulkan.cpp) give the same answers.
func TestUpstreamSupportsOpAnswers(t *testing.T) {
	for _, backend := range []string{"metal", "vulkan"} {
		t.Run(backend, func(t *testing.T) { upstreamSupportsOpAnswers(t, backend) })
	}
}

func upstreamSupportsOpAnswers(t *testing.T, backend string) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found")
	}
	files, sections, err := UpstreamGlue(backend)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prefix := map[string]string{"metal": "ggml_metal", "vulkan": "ggml_vk"}[backend]
	if backend == "vulkan" {
		if err := os.WriteFile(filepath.Join(dir, SupportsName), []byte(sections["upstream-supports"]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "supports")
	testdata, _ := filepath.Abs("testdata")
	cmd := exec.Command(cxx, "-std=c++17", "-Wall", "-Werror", "-Wno-unused-function",
		"-I", testdata, "-I", dir, `-DKG_SUPPORTS="`+SupportsName+`"`,
		"-DKG_PREFIX="+prefix+"_fused_supports_op", "-DKG_WRITTEN="+prefix+"_fused_written_src",
		filepath.Join(testdata, "supports_main.cpp"), "-o", bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compiling the upstream supports_op: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "0 failures") {
		t.Fatalf("%v\n%s", err, out)
	}
}
