package toolchain

// The SYCL backend's tools (internal/backend/sycl owns this file).

var (
	// ICPX is Intel's SYCL compiler, which kernelgen reports but does not run.
	ICPX = Tool{
		Name:        "icpx",
		Candidates:  []string{"icpx"},
		VersionArgs: []string{"--version"},
		Purpose:     "Intel's SYCL compiler (reported only: kernelgen build drives acpp)",
		Install:     "Intel oneAPI DPC++/C++ compiler (optional)",
		Required:    Optional,
	}
	// ACPP is AdaptiveCpp's SYCL compiler, which kernelgen build drives.
	ACPP = Tool{
		Name:       "acpp",
		Candidates: []string{"acpp"},
		// --version is forwarded to the clang behind acpp.
		VersionArgs:   []string{"--acpp-version"},
		VersionMarker: "AdaptiveCpp version",
		Purpose:       "AdaptiveCpp's SYCL compiler: kernelgen build --backend sycl compiles and runs every SYCL kernel with it",
		Install:       "build AdaptiveCpp from source with its OpenMP backend (README, section SYCL) and put acpp on PATH",
		Required:      Optional,
	}
)
