package metal

import (
	"github.com/kernelgen/kernelgen/emit/msl"
	"github.com/kernelgen/kernelgen/internal/upstream"
	"github.com/kernelgen/kernelgen/ops"
)

// libraryFile is the library source the kernels join: ggml-metal.metal is
// compiled as one library.
const libraryFile = "ggml-metal.metal"

// UpstreamKernels is what ggml-metal.metal gets (Spliced, one library
// source): the gather, then each family's kernel, each after its kargs
// struct, with their instantiations for the variants Metal builds.
func UpstreamKernels() ([]upstream.File, error) {
	lib, err := UpstreamLibrary()
	if err != nil {
		return nil, err
	}
	return []upstream.File{{Name: libraryFile, Data: lib, Spliced: true}}, nil
}

// UpstreamLibrary is UpstreamKernels' text.
func UpstreamLibrary() ([]byte, error) {
	fams, err := upstream.Families()
	if err != nil {
		return nil, err
	}
	gather, err := ops.SharedGather()
	if err != nil {
		return nil, err
	}
	out, err := msl.UpstreamLibrary(upstream.GatherSummary, []msl.Upstream{{K: gather, Kargs: msl.KargsName(gather.Name)}})
	if err != nil {
		return nil, err
	}
	for _, f := range fams {
		k, err := f.Kernel(name)
		if err != nil {
			return nil, err
		}
		src, err := msl.UpstreamLibrary(f.Shared.Summary, []msl.Upstream{{K: k, Kargs: msl.KargsName(k.Name), Variants: f.Shared.Variants(name)}})
		if err != nil {
			return nil, err
		}
		out = append(append(out, '\n'), src...)
	}
	return out, nil
}
