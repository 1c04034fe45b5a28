package sycl

import (
	"github.com/kernelgen/kernelgen/emit/sycl"
	"github.com/kernelgen/kernelgen/internal/upstream"
	"github.com/kernelgen/kernelgen/ops"
)

// UpstreamKernels are ggml-sycl's kernel headers, one per family
// (<name>.hpp), after the gather, which joins the glue's header (InGlue).
func UpstreamKernels() ([]upstream.File, error) {
	files, err := upstream.Render(name, ".hpp", sycl.Upstream)
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
	files[0] = upstream.File{Name: files[0].Name, Data: src, InGlue: true}
	return files, nil
}
