package sycl

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/integration"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

// fusionCommonStandIn is what the fusion step reads of ggml-sycl's
// common.hpp and ggml-sycl.cpp (the queue, the context, the buffer test,
// the env read), written for this test over the host emulation's SYCL.
const fusionCommonStandIn = `#pragma once
#include <sycl/sycl.hpp>
#include "ggml.h"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#define WARP_SIZE 16
#define GGML_ABORT(...) abort()
namespace dpct { typedef sycl::queue * queue_ptr; }
struct ggml_backend_buffer { void * context; };
struct ggml_backend_sycl_context {
    int device = 0;
    sycl::queue q;
    dpct::queue_ptr stream() { return &q; }
};
struct ggml_backend_sycl_buffer_context { int device; };
static inline bool ggml_backend_buffer_is_sycl(ggml_backend_buffer_t buffer) { return buffer != nullptr; }
static inline int ggml_sycl_get_env(const char *, int default_val) { return default_val; }
`

// TestFusionStepCompiles: both steps' headers (the kernels with their
// launches, then the matchers and the runs) and the step's lines in the
// graph's node loop compile as host C++ (-Wall -Wextra -Werror) over the
// host emulation's SYCL (its flags), every variant the runs pick instantiated, against
// ops/fusion's stand-in ggml.h and a stand-in common.hpp. (By hand against
// the real trees: docs/fusion.md.)
func TestFusionStepCompiles(t *testing.T) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found")
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
	write("common.hpp", []byte(fusionCommonStandIn))
	for _, step := range []*integration.Fusion{Backend.Fusion.Kernels, Backend.Fusion} {
		files, err := step.Files()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			write(f.Name, f.Data)
		}
	}
	var include, before, in string
	for _, s := range Backend.Fusion.Sections {
		switch {
		case len(s.Anchor) == 1:
			include = s.Text.Literal
		case s.Place == integration.Before:
			before = s.Text.Literal
		default:
			in = s.Text.Literal
		}
	}
	if include == "" || before == "" || in == "" {
		t.Fatal("no include, or no sections before and in the node loop")
	}
	write("main.cpp", []byte(strings.ReplaceAll(include, "ggml-sycl/", "")+`
static void ggml_backend_sycl_graph_compute_impl(ggml_backend_sycl_context * sycl_ctx, ggml_cgraph * cgraph) {
`+before+`    for (int i = 0; i < cgraph->n_nodes; i++) {
        ggml_tensor * node = cgraph->nodes[i];
`+in+`    }
}
int main() { ggml_backend_sycl_graph_compute_impl(nullptr, nullptr); }
`))
	// the emulation's own flags (its SYCL skin is C++20; they ignore the
	// device attributes), then the warnings
	flags, err := hostemu.Flags(hostemu.SYCL, cxx)
	if err != nil {
		t.Fatal(err)
	}
	runtime, err := filepath.Abs(filepath.Join("..", "..", "..", "verify", "hostemu", "include"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(runtime, filepath.Join(dir, "hostemu_include")); err != nil { // where the flags look
		t.Fatal(err)
	}
	cmd := exec.Command(cxx, append(flags, "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-I", ".", "main.cpp")...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the fusion step does not compile: %v\n%s", err, out)
	}
}
