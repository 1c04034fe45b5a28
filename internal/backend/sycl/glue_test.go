package sycl

import (
	"context"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/verify/emulate"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

// The review glue (generated/sycl/glue: the files the series' SYCL commit
// adds) compiles, -Wall -Werror, against stand-ins for ggml.h and
// ggml-sycl's common.hpp (testdata/glue) over the host emulation, and runs every
// variant of ops A-D, gathers included, without a kernel reading the node:
// the stand-in's queue makes the ggml_tensor structs unreadable while work
// is submitted, as they are to a discrete GPU, so a kernel lambda that
// reads op->src[i]->data faults. The results are not compared here (the
// kernels are, in the emulation tier; the upstream glue's, in
// internal/upstream).
func TestGlueKernelsReadNoNode(t *testing.T) {
	files, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	src := map[string][]byte{}
	for _, f := range files {
		if path.Dir(f.Path) == name+"/glue" {
			src[path.Base(f.Path)] = f.Data
		}
	}
	for _, name := range []string{"ggml.h", "common.hpp"} {
		b, err := os.ReadFile(filepath.Join("testdata", "glue", name))
		if err != nil {
			t.Fatal(err)
		}
		src[name] = b
	}
	harness, err := os.ReadFile(filepath.Join("testdata", "glue", "harness.cpp"))
	if err != nil {
		t.Fatal(err)
	}
	prog := hostemu.Program{Name: "sycl_review_glue", Lang: hostemu.SYCL, Sources: src, Harness: harness}
	bin, err := hostemu.BuildWith(context.Background(), prog, hostemu.Options{Flags: emulate.WarningFlags})
	if err != nil {
		var te *hostemu.ToolError
		if errors.As(err, &te) && os.Getenv("KERNELGEN_REQUIRE_TOOLS") == "" {
			t.Skipf("no host C++ compiler: %v", err)
		}
		t.Fatalf("the glue does not compile: %v", err)
	}
	job := hostemu.Job{SubgroupWidth: emulationWidth, Buffers: []hostemu.Buffer{hostemu.ZeroBuffer("nodes", 4, 1)}}
	out, err := bin.Run(context.Background(), job, emulate.RunTimeout)
	if err != nil {
		if strings.Contains(err.Error(), "memory fault") {
			t.Fatalf("a kernel read the node (host memory a discrete GPU cannot read): declare its pointers before the submit\n%v", err)
		}
		t.Fatal(err)
	}
	// 4 S_v x 2 KDA x ops A, B; 7 d_conv x 2 SILU x ops C, D
	if got := hostemu.AsU32(out["nodes"])[0]; got != 44 {
		t.Fatalf("%d nodes ran through the glue, want 44", got)
	}
}
