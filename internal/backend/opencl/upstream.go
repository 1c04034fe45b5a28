package opencl

import (
	"github.com/kernelgen/kernelgen/emit/opencl"
	"github.com/kernelgen/kernelgen/internal/upstream"
	"github.com/kernelgen/kernelgen/ir"
)

// UpstreamKernels are ggml-opencl's kernels (its kernels/*.cl): the gather
// (<SharedGatherName>.cl), then one file per family (<name>.cl), each
// built once per variant with the variant's params as defines
// (opencl.UpstreamDefines), IDS included.
func UpstreamKernels() ([]upstream.File, error) {
	return upstream.Render(name, ".cl", func(summary string, ks []*ir.Kernel) ([]byte, error) {
		return opencl.Upstream(summary, ks[0])
	})
}

// FusionKernels are the fusion form's kernels (upstream.FusionKernels: the
// GDN kernel writes the snapshot slots too), the files UpstreamKernels
// names.
func FusionKernels() ([]upstream.File, error) {
	ks, err := upstream.FusionKernels(name)
	if err != nil {
		return nil, err
	}
	return upstream.RenderKernels(ks, ".cl", func(summary string, ks []*ir.Kernel) ([]byte, error) {
		return opencl.Upstream(summary, ks[0])
	})
}
