package sycl

import (
	"github.com/kernelgen/kernelgen/emit/sycl"
	"github.com/kernelgen/kernelgen/internal/upstream"
	"github.com/kernelgen/kernelgen/ops"
)

// UpstreamKernels are ggml-sycl's kernels, all in the glue's source
// (InGlue) beside their launchers, as ggml-sycl's own .cpp files keep
// theirs: the gather, then each family's kernel after its summary.
func UpstreamKernels() ([]upstream.File, error) {
	files, err := upstream.Render(name, ".hpp", sycl.UpstreamBody)
	if err != nil {
		return nil, err
	}
	gather, err := ops.SharedGather()
	if err != nil {
		return nil, err
	}
	src, err := sycl.UpstreamInline(gather)
	if err != nil {
		return nil, err
	}
	files[0].Data = src
	for i := range files {
		files[i].InGlue = true
	}
	return files, nil
}

// FusionKernels are the fusion form's kernel headers (upstream.FusionKernels:
// the GDN kernel writes the snapshot slots too), one per kernel as
// Upstream writes it: the gather's, then each family's.
func FusionKernels() ([]upstream.File, error) {
	ks, err := upstream.FusionKernels(name)
	if err != nil {
		return nil, err
	}
	return upstream.RenderKernels(ks, ".hpp", sycl.Upstream)
}
