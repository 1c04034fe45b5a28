package sycl

import (
	"context"
	"fmt"

	"github.com/kernelgen/kernelgen/internal/backend"
	"github.com/kernelgen/kernelgen/tools/toolchain"
	"github.com/kernelgen/kernelgen/verify/emulate"
)

// implementation is doctor --json's "sycl": the SYCL implementation
// kernelgen build --backend sycl uses.
type implementation struct {
	Compiler string `json:"compiler"` // "acpp", "icpx" or "" when neither is on PATH
	Path     string `json:"path,omitempty"`
	Version  string `json:"version,omitempty"`
	Build    string `json:"build"` // what kernelgen build --backend sycl does with it
}

// doctor names the implementation on PATH and what build does with it.
func doctor(_ context.Context, probed []toolchain.Result) backend.Fact {
	r, build := emulate.SYCLImplsOf(probed).Plan()
	impl := implementation{Compiler: r.Tool.Name, Path: r.Path, Version: r.Version, Build: build}
	line := fmt.Sprintf("SYCL implementation: %s = %s, %s; kernelgen build --backend sycl: %s", impl.Compiler, impl.Path, impl.Version, impl.Build)
	if impl.Compiler == "" {
		line = "SYCL implementation: none on PATH; kernelgen build --backend sycl: " + impl.Build
	}
	return backend.Fact{Key: name, Value: impl, Lines: []string{line}}
}
