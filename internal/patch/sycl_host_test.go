package patch

import (
	"bytes"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/emit"
)

// The review copy of the SYCL glue (generated/sycl/glue) is what the
// series' SYCL commit adds, file for file and byte for byte, under the
// generated-file header: a reviewer of generated/ reads the text ggml gets.
func TestSYCLReviewCopyIsThePatch(t *testing.T) {
	dir := filepath.Join("..", "..", "generated", "sycl", "glue")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	onDisk := map[string]bool{}
	for _, e := range entries {
		onDisk[e.Name()] = true
	}
	step := stepOf(t, "sycl")
	if len(step.Files) == 0 {
		t.Fatal("the SYCL step adds no file")
	}
	for _, f := range step.Files {
		name := path.Base(f.Path)
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("the SYCL commit adds %s, the review copy lacks it: %v", f.Path, err)
			continue
		}
		delete(onDisk, name)
		if want := emit.Mark("sycl", name, f.Data); !bytes.Equal(got, want) {
			t.Errorf("generated/sycl/glue/%s differs from the %s the SYCL commit adds", name, f.Path)
		}
	}
	for name := range onDisk {
		t.Errorf("generated/sycl/glue/%s is in the review copy, not in the SYCL commit", name)
	}
}

// The SYCL commit adds what ggml-sycl's neighbours are made of (ssm_conv,
// gated_delta_net): a .cpp with the kernels and their launchers, which the
// backend's CMake glob compiles, and a .hpp that only declares the entry
// points ggml-sycl.cpp calls; no header of static launchers.
func TestSYCLSourceAndHeaderAsTheNeighbours(t *testing.T) {
	var cpp, hpp []string
	for _, f := range stepOf(t, "sycl").Files {
		switch path.Ext(f.Path) {
		case ".cpp":
			cpp = append(cpp, f.Path)
		case ".hpp":
			hpp = append(hpp, f.Path)
			text := string(f.Data)
			if strings.Contains(text, "static ") || strings.Contains(text, "{") {
				t.Errorf("%s defines code; a ggml-sycl header only declares its .cpp's entry points", f.Path)
			}
		default:
			t.Errorf("%s: neither a .cpp nor a .hpp", f.Path)
		}
	}
	if len(cpp) != 1 || len(hpp) != 1 || strings.TrimSuffix(cpp[0], ".cpp") != strings.TrimSuffix(hpp[0], ".hpp") {
		t.Errorf("the SYCL commit adds %v and %v, want one .cpp and its .hpp", cpp, hpp)
	}
}
