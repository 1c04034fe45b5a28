package upstream

import (
	"github.com/kernelgen/kernelgen/emit/opencl"
	"github.com/kernelgen/kernelgen/ops"
)

// OpenCL returns ggml-opencl's kernels (its kernels/*.cl): the gather
// (<SharedGatherName>.cl), then one file per family (<name>.cl), each
// built once per variant with the variant's params as defines
// (opencl.UpstreamDefines), IDS included.
func OpenCL() ([]File, error) {
	gather, err := ops.SharedGather()
	if err != nil {
		return nil, err
	}
	src, err := opencl.Upstream(GatherSummary, gather, true)
	if err != nil {
		return nil, err
	}
	out := []File{{Name: ops.SharedGatherName + ".cl", Data: src}}
	fams, err := Families()
	if err != nil {
		return nil, err
	}
	for _, f := range fams {
		k, err := f.Kernel("opencl")
		if err != nil {
			return nil, err
		}
		src, err := opencl.Upstream(summary(f), k, false)
		if err != nil {
			return nil, err
		}
		out = append(out, File{Name: FileName(f, ".cl"), Data: src})
	}
	return out, nil
}
