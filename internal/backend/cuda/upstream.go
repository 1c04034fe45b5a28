package cuda

import (
	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/internal/upstream"
)

// UpstreamKernels are ggml-cuda's kernel headers, one per family
// (<name>.cuh), after the gather's.
func UpstreamKernels() ([]upstream.File, error) { return upstream.Render(name, ".cuh", cuda.Upstream) }
