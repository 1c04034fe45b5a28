package cuda

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFusionStepCompiles: the fusion step's header and its call in
// ggml_cuda_try_fuse compile as host C++ (-Wall -Wextra -Werror) against
// ops/fusion's stand-in ggml.h, with a stand-in for ggml-cuda.cu's buffer
// test. (By hand, against the real trees: docs/fusion.md.)
func TestFusionStepCompiles(t *testing.T) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found")
	}
	files, err := Backend.Fusion.Files()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stand, err := os.ReadFile(filepath.Join("..", "..", "..", "ops", "fusion", "testdata", "ggml.h"))
	if err != nil {
		t.Fatal(err)
	}
	write("ggml.h", stand)
	write("common.cuh", []byte("#pragma once\n#include \"ggml.h\"\n"))
	for _, f := range files {
		write(f.Name, f.Data)
	}
	var call string
	for _, s := range Backend.Fusion.Sections {
		if strings.HasPrefix(s.Anchor[0], "static int ggml_cuda_try_fuse(") {
			call = s.Text.Literal
		}
	}
	if call == "" {
		t.Fatal("no section in ggml_cuda_try_fuse")
	}
	write("main.cpp", []byte(`#include "gdn-fusion.cuh"
static bool ggml_backend_buffer_is_cuda(ggml_backend_buffer_t buffer) { return buffer != nullptr; }
static int try_fuse(ggml_cgraph * cgraph, int i) {
`+call+`    return 0;
}
int main() { return try_fuse(nullptr, 0); }
`))
	if out, err := exec.Command(cxx, "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-I", dir, filepath.Join(dir, "main.cpp")).CombinedOutput(); err != nil {
		t.Fatalf("the fusion step does not compile: %v\n%s", err, out)
	}
}
