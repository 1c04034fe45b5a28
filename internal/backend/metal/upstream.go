package metal

import (
	"github.com/kernelgen/kernelgen/emit/msl"
	"github.com/kernelgen/kernelgen/internal/upstream"
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
	ks, err := upstream.Kernels(name)
	if err != nil {
		return nil, err
	}
	return library(ks)
}

// FusionKernels are the fusion form's kernels (upstream.FusionKernels: the
// GDN kernel writes the snapshot slots too), joining ggml-metal.metal as
// UpstreamKernels' do.
func FusionKernels() ([]upstream.File, error) {
	lib, err := FusionLibrary()
	if err != nil {
		return nil, err
	}
	return []upstream.File{{Name: libraryFile, Data: lib, Spliced: true}}, nil
}

// FusionLibrary is FusionKernels' text.
func FusionLibrary() ([]byte, error) {
	ks, err := upstream.FusionKernels(name)
	if err != nil {
		return nil, err
	}
	return library(ks)
}

// library renders ks as one library source: the gather, then each
// family's kernel with its instantiations for the variants Metal builds.
func library(ks []upstream.Kernel) ([]byte, error) {
	var out []byte
	for i, k := range ks {
		u := msl.Upstream{K: k.K, Kargs: msl.KargsName(k.K.Name)}
		if k.Shared != nil {
			for _, v := range k.Shared.Variants(target) {
				u.Instances = append(u.Instances, v.Of(k.K))
			}
		}
		src, err := msl.UpstreamLibrary(k.Summary, []msl.Upstream{u})
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out = append(out, '\n')
		}
		out = append(out, src...)
	}
	return out, nil
}
