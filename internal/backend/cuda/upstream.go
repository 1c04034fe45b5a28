package cuda

import (
	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/internal/upstream"
)

// UpstreamKernels are ggml-cuda's kernel headers, one per family
// (<name>.cuh), after the gather's (the fusion form includes them).
func UpstreamKernels() ([]upstream.File, error) { return upstream.Render(name, ".cuh", cuda.Upstream) }

// FusionKernels are the fusion form's kernel headers (upstream.FusionKernels:
// the GDN kernel writes the snapshot slots too).
func FusionKernels() ([]upstream.File, error) {
	ks, err := upstream.FusionKernels(name)
	if err != nil {
		return nil, err
	}
	return upstream.RenderKernels(ks, ".cuh", cuda.Upstream)
}

// UpstreamSources are the same kernels as the ops form's text, the
// gather's then each family's: it joins the sources that launch them
// (state-gather.cu, and gated_delta_net.cu and ssm-conv.cu beside the plain
// kernels) through the upstream glue templates.
func UpstreamSources() ([]upstream.File, error) {
	files, err := upstream.Render(name, ".cu", cuda.UpstreamSource)
	for i := range files {
		files[i].InGlue = true
	}
	return files, err
}
