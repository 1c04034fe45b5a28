// Package toolchain describes the external programs kernelgen drives
// (shader compilers, validators, host C++ compilers, Vulkan drivers), finds
// them, reads their versions and runs them with uniform error reporting, so
// that callers and `kernelgen doctor` agree on what is missing and how to get
// it.
package toolchain

import (
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/tools/metallib"
)

// Tool describes an external program kernelgen may use.
type Tool struct {
	// Name is the stable id used by Lookup and Require.
	Name string
	// Candidates are executable names tried in order on PATH.
	Candidates []string
	// VersionArgs make the executable print its version.
	VersionArgs []string
	// Purpose says in one line what kernelgen uses the tool for.
	Purpose string
	// Install says how to get the tool on Debian bookworm.
	Install string
	// Required is "ci" when CI needs the tool, "optional" otherwise.
	Required string
}

// Values of Tool.Required.
const (
	RequiredCI = "ci"
	Optional   = "optional"
)

// known is ordered as a reader of `kernelgen doctor` wants it: what builds
// kernelgen, then the host compilers, the Vulkan chain, and the
// vendor-specific toolchains last.
var known = []Tool{
	{
		Name:        "go",
		Candidates:  []string{"go"},
		VersionArgs: []string{"version"},
		Purpose:     "builds and tests kernelgen itself",
		// bookworm's golang-go is 1.19, too old for go.mod.
		Install:  "Go 1.24 or newer from https://go.dev/dl (bookworm's golang-go is too old)",
		Required: RequiredCI,
	},
	{
		Name:        "just",
		Candidates:  []string{"just"},
		VersionArgs: []string{"--version"},
		Purpose:     "runs the justfile's shortcut recipes",
		Install:     "npm install -g rust-just",
		Required:    Optional,
	},
	{
		Name:        "g++",
		Candidates:  []string{"g++"},
		VersionArgs: []string{"--version"},
		Purpose:     "host C++ compiler for host-emulated kernels and the Vulkan test runner",
		Install:     "apt-get install -y g++",
		Required:    RequiredCI,
	},
	{
		Name: "clang++-22",
		// Plain clang++ is accepted only at major version >= 22 (see Probe).
		Candidates:  []string{"clang++-22", "clang++"},
		VersionArgs: []string{"--version"},
		Purpose:     "CUDA -> PTX without the CUDA SDK, and a second host C++ compiler",
		Install:     "apt-get install -y clang-22",
		Required:    RequiredCI,
	},
	{
		Name:        "glslangValidator",
		Candidates:  []string{"glslangValidator"},
		VersionArgs: []string{"--version"},
		Purpose:     "GLSL -> SPIR-V for the Vulkan backend",
		Install:     "apt-get install -y glslang-tools",
		Required:    RequiredCI,
	},
	{
		Name:        "spirv-val",
		Candidates:  []string{"spirv-val"},
		VersionArgs: []string{"--version"},
		Purpose:     "validates the SPIR-V modules of the Vulkan backend",
		Install:     "apt-get install -y spirv-tools",
		Required:    RequiredCI,
	},
	{
		Name:       "vulkaninfo",
		Candidates: []string{"vulkaninfo"},
		// vulkaninfo has no --version; the summary's first lines carry the
		// instance version.
		VersionArgs: []string{"--summary"},
		Purpose:     "reports which Vulkan devices the tests can run on",
		Install:     "apt-get install -y vulkan-tools",
		Required:    RequiredCI,
	},
	{
		// Not an executable: found through its Vulkan ICD manifest.
		Name:     "lavapipe",
		Purpose:  "CPU Vulkan driver that runs the Vulkan kernels without a GPU",
		Install:  "apt-get install -y mesa-vulkan-drivers",
		Required: RequiredCI,
	},
	{
		Name:        "clinfo",
		Candidates:  []string{"clinfo"},
		VersionArgs: []string{"--version"},
		Purpose:     "lists the OpenCL platforms the OpenCL backend's checks can run on (PoCL in CI: pocl-opencl-icd, built against ocl-icd-opencl-dev)",
		Install:     "apt-get install -y clinfo pocl-opencl-icd ocl-icd-opencl-dev",
		Required:    RequiredCI,
	},
	{
		Name:        "nvcc",
		Candidates:  []string{"nvcc"},
		VersionArgs: []string{"--version"},
		Purpose:     "compiles and runs the CUDA backend on NVIDIA GPUs",
		Install:     "NVIDIA CUDA toolkit (GPU hosts only)",
		Required:    Optional,
	},
	{
		Name:        "xcrun-metal",
		Candidates:  []string{"xcrun"},
		VersionArgs: []string{metallib.Compiler, "--version"},
		Purpose:     "compiles the Metal backend's shaders",
		Install:     "Xcode command line tools (macOS only)",
		Required:    Optional,
	},
	{
		Name:        "icpx",
		Candidates:  []string{"icpx"},
		VersionArgs: []string{"--version"},
		Purpose:     "Intel's SYCL compiler (reported only: kernelgen build drives acpp)",
		Install:     "Intel oneAPI DPC++/C++ compiler (optional)",
		Required:    Optional,
	},
	{
		Name:       "acpp",
		Candidates: []string{"acpp"},
		// --version is forwarded to the clang behind acpp.
		VersionArgs: []string{"--acpp-version"},
		Purpose:     "AdaptiveCpp's SYCL compiler: kernelgen build --backend sycl compiles and runs every SYCL kernel with it",
		Install:     "build AdaptiveCpp from source with its OpenMP backend (README, section SYCL) and put acpp on PATH",
		Required:    Optional,
	},
}

// Known returns every tool kernelgen knows about. The slices are copies, so
// callers may modify them without affecting the table.
func Known() []Tool {
	out := make([]Tool, len(known))
	for i, t := range known {
		out[i] = t.clone()
	}
	return out
}

// Lookup returns the known tool with the given name.
func Lookup(name string) (Tool, error) {
	names := make([]string, 0, len(known))
	for _, t := range known {
		if t.Name == name {
			return t.clone(), nil
		}
		names = append(names, t.Name)
	}
	return Tool{}, fmt.Errorf("toolchain: unknown tool %q (known: %s)", name, strings.Join(names, ", "))
}

func (t Tool) clone() Tool {
	t.Candidates = append([]string(nil), t.Candidates...)
	t.VersionArgs = append([]string(nil), t.VersionArgs...)
	return t
}
