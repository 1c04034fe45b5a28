package cuda

import (
	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/internal/upstream"
)

// UpstreamKernels are ggml-cuda's kernels, the gather's then each family's:
// their text joins the sources that launch them (state-gather.cu, and
// gated_delta_net.cu and ssm-conv.cu beside the plain kernels), through the
// upstream glue templates.
func UpstreamKernels() ([]upstream.File, error) {
	files, err := upstream.Render(name, ".cu", cuda.Upstream)
	for i := range files {
		files[i].InGlue = true
	}
	return files, err
}
