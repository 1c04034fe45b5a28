package toolchain

// The CUDA backend's tools (internal/backend/cuda owns this file).

// NVCC is NVIDIA's CUDA compiler, on GPU hosts.
var NVCC = Tool{
	Name:          "nvcc",
	Candidates:    []string{"nvcc"},
	VersionArgs:   []string{"--version"},
	VersionMarker: "release",
	Purpose:       "compiles and runs the CUDA backend on NVIDIA GPUs",
	Install:       "NVIDIA CUDA toolkit (GPU hosts only)",
	Required:      Optional,
}
