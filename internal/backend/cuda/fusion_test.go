package cuda

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kernelgen/kernelgen/internal/integration"
)

// TestFusionStepCompiles: the fusion step's header (the matchers, the
// launchers and the run) and its calls in the node loop compile as host C++
// (-Wall -Wextra -Wshadow -Werror) against ops/fusion's stand-in ggml.h, with a
// stand-in for common.cuh's launch and the kernels as stubs of their
// template heads. (By hand, against the real trees: docs/fusion.md.)
func TestFusionStepCompiles(t *testing.T) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found")
	}
	files, err := Backend.Fusion.Files()
	if err != nil {
		t.Fatal(err)
	}
	kernels, err := Backend.Fusion.Kernels.Files()
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
	write("common.cuh", []byte(`#pragma once
#include "ggml.h"
#include <cmath>
#include <cstdio>
#include <cstdlib>
struct dim3 { dim3(int64_t, int64_t, int64_t) {} };
typedef struct stream_standin * cudaStream_t;
struct ggml_backend_cuda_context { cudaStream_t stream() { return nullptr; } };
struct ggml_cuda_kernel_launch_params { ggml_cuda_kernel_launch_params(dim3, dim3, size_t, cudaStream_t) {} };
template <typename K, typename... A> static void ggml_cuda_kernel_launch(K, const ggml_cuda_kernel_launch_params &, A &&...) {}
static bool ggml_backend_buffer_is_cuda(ggml_backend_buffer_t buffer) { return buffer != nullptr; }
#define GGML_ABORT(...) abort()
template <uint32_t, bool, bool, uint32_t, uint32_t> void gated_delta_net_inplace_f32() {}
template <uint32_t, bool, bool> void ssm_conv_update_inplace_f32() {}
void state_gather_f32() {}
`))
	for _, f := range files {
		write(f.Name, f.Data)
	}
	for _, f := range kernels {
		write(f.Name, []byte("#pragma once\n"))
	}
	var before, in string
	for _, s := range Backend.Fusion.Sections {
		switch s.Place {
		case integration.Before:
			before = s.Text.Literal
		case integration.After:
			if len(s.Anchor) > 1 {
				in = s.Text.Literal
			}
		}
	}
	if before == "" || in == "" {
		t.Fatal("no sections before and in the node loop")
	}
	write("main.cpp", []byte(`#include "gdn-fusion.cuh"
static void evaluate(ggml_backend_cuda_context * cuda_ctx, ggml_cgraph * cgraph) {
`+before+`            for (int i = 0; i < cgraph->n_nodes; i++) {
                ggml_tensor * node = cgraph->nodes[i];
`+in+`            }
}
int main() { evaluate(nullptr, nullptr); }
`))
	if out, err := exec.Command(cxx, "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Wshadow", "-Werror", "-I", dir, filepath.Join(dir, "main.cpp")).CombinedOutput(); err != nil {
		t.Fatalf("the fusion step does not compile: %v\n%s", err, out)
	}
}
