package sycl

import (
	"fmt"
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

// stepHost is a folder holding both fusion steps' headers over stand-ins
// (ops/fusion's ggml.h, fusionCommonStandIn) and the host emulation's SYCL
// where its flags look for it; compile runs g++ there with those flags
// (the skin is C++20; they ignore the device attributes) and -Wall -Wextra -Wshadow
// -Werror before args.
type stepHost struct {
	t   *testing.T
	dir string
	cxx string
}

func newStepHost(t *testing.T) *stepHost {
	t.Helper()
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found")
	}
	h := &stepHost{t: t, dir: t.TempDir(), cxx: cxx}
	stand, err := os.ReadFile(filepath.Join("..", "..", "..", "ops", "fusion", "testdata", "ggml.h"))
	if err != nil {
		t.Fatal(err)
	}
	h.write("ggml.h", stand)
	h.write("common.hpp", []byte(fusionCommonStandIn))
	for _, step := range []*integration.Fusion{Backend.Fusion.Kernels, Backend.Fusion} {
		files, err := step.Files()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			h.write(f.Name, f.Data)
		}
	}
	runtime, err := filepath.Abs(filepath.Join("..", "..", "..", "verify", "hostemu", "include"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(runtime, filepath.Join(h.dir, "hostemu_include")); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *stepHost) write(name string, data []byte) {
	h.t.Helper()
	if err := os.WriteFile(filepath.Join(h.dir, name), data, 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *stepHost) path(name string) string { return filepath.Join(h.dir, name) }

func (h *stepHost) compile(args ...string) error {
	h.t.Helper()
	flags, err := hostemu.Flags(hostemu.SYCL, h.cxx)
	if err != nil {
		h.t.Fatal(err)
	}
	cmd := exec.Command(h.cxx, append(append(flags, "-Wall", "-Wextra", "-Wshadow", "-Werror", "-I", "."), args...)...)
	cmd.Dir = h.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	return nil
}

// TestFusionStepCompiles: both steps' headers (the kernels with their
// launches, then the matchers and the runs) and the step's lines in the
// graph's node loop compile as host C++ (-Wall -Wextra -Wshadow -Werror) over the
// host emulation's SYCL, every variant the runs pick instantiated, against
// ops/fusion's stand-in ggml.h and a stand-in common.hpp. (By hand against
// the real trees: docs/fusion.md.)
func TestFusionStepCompiles(t *testing.T) {
	h := newStepHost(t)
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
	h.write("main.cpp", []byte(strings.ReplaceAll(include, "ggml-sycl/", "")+`
static void ggml_backend_sycl_graph_compute_impl(ggml_backend_sycl_context * sycl_ctx, ggml_cgraph * cgraph) {
`+before+`    for (int i = 0; i < cgraph->n_nodes; i++) {
        ggml_tensor * node = cgraph->nodes[i];
`+in+`    }
}
int main() { ggml_backend_sycl_graph_compute_impl(nullptr, nullptr); }
`))
	if err := h.compile("-fsyntax-only", "main.cpp"); err != nil {
		t.Fatalf("the fusion step does not compile: %v", err)
	}
}
