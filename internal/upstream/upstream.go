// Package upstream renders the kernels kernelgen hands a ggml tree: each
// backend's native contract only (the portable one stays in generated/ and
// kernelgen's own checks), the two ops of a family that share a body as one
// kernel (ops.Shared, picked by a template parameter), and the one gather
// both ids ops run first (ops.SharedGather), in the target's own style. The series' backend steps carry
// these files; the tests here run every kernel in them under host
// emulation against the Go reference.
package upstream

import (
	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/emit/glsl"
	"github.com/kernelgen/kernelgen/emit/msl"
	"github.com/kernelgen/kernelgen/emit/sycl"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// Family is one shared kernel and the gather its ids op runs first.
type Family struct {
	Shared *ops.Shared
	Gather *ops.Op
}

// Families are the fused ops' kernels: GDN (ops A, B) and the conv update
// (ops C, D).
func Families() ([]Family, error) {
	var out []Family
	for _, s := range ops.SharedKernels() {
		g, err := ops.Lookup(gatherOf(s))
		if err != nil {
			return nil, err
		}
		out = append(out, Family{Shared: s, Gather: g})
	}
	return out, nil
}

// gatherOf names the gather of a shared kernel's ids op.
func gatherOf(s *ops.Shared) string {
	if s.Name == "ssm_conv_update_inplace" {
		return "ssm_conv_gather"
	}
	return "gated_delta_net_gather"
}

// File is one file of a backend's upstream kernels.
type File struct {
	Name string
	Data []byte
	// InGlue: the text joins the glue's header beside its launcher instead
	// of a file of its own (Name is then only its name in tests).
	InGlue bool
}

// Kernel returns f's shared kernel under backend's native contract.
func (f Family) Kernel(backend string) (*ir.Kernel, error) {
	return f.Shared.Kernel(ir.Native(backend))
}

// CUDA returns ggml-cuda's kernel headers, one per family (<name>.cuh).
func CUDA() ([]File, error) { return render("cuda", ".cuh", cuda.Upstream) }

// SYCL returns ggml-sycl's kernel headers, one per family (<name>.hpp),
// after the gather, which joins the glue's header (InGlue).
func SYCL() ([]File, error) {
	files, err := render("sycl", ".hpp", sycl.Upstream)
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
	files[0] = File{Name: files[0].Name, Data: src, InGlue: true}
	return files, nil
}

// FileName is the header holding f's kernels on a backend with extension ext.
func FileName(f Family, ext string) string { return f.Shared.Name + ext }

// GatherSummary heads the gather's file.
const GatherSummary = "copies into scratch the rows a sequence reads that another sequence of the same node overwrites"

func render(backend, ext string, emit func(string, []*ir.Kernel) ([]byte, error)) ([]File, error) {
	fams, err := Families()
	if err != nil {
		return nil, err
	}
	gather, err := ops.SharedGather()
	if err != nil {
		return nil, err
	}
	src, err := emit(GatherSummary, []*ir.Kernel{gather})
	if err != nil {
		return nil, err
	}
	out := []File{{Name: ops.SharedGatherName + ext, Data: src}}
	for _, f := range fams {
		k, err := f.Kernel(backend)
		if err != nil {
			return nil, err
		}
		src, err := emit(summary(f), []*ir.Kernel{k})
		if err != nil {
			return nil, err
		}
		out = append(out, File{Name: FileName(f, ext), Data: src})
	}
	return out, nil
}

func summary(f Family) string { return f.Shared.Summary }

// Metal returns what ggml-metal.metal gets (one library source): the
// gather, then each family's kernel, each after its kargs struct, with
// their instantiations for the variants Metal builds.
func Metal() ([]byte, error) {
	fams, err := Families()
	if err != nil {
		return nil, err
	}
	gather, err := ops.SharedGather()
	if err != nil {
		return nil, err
	}
	out, err := msl.UpstreamLibrary(GatherSummary, []msl.Upstream{{K: gather, Kargs: msl.KargsName(gather.Name)}})
	if err != nil {
		return nil, err
	}
	for _, f := range fams {
		k, err := f.Kernel("metal")
		if err != nil {
			return nil, err
		}
		src, err := msl.UpstreamLibrary(summary(f), []msl.Upstream{{K: k, Kargs: msl.KargsName(k.Name), Variants: f.Shared.Variants("metal")}})
		if err != nil {
			return nil, err
		}
		out = append(append(out, '\n'), src...)
	}
	return out, nil
}

// Vulkan returns ggml-vulkan's shaders: the gather (<SharedGatherName>.comp),
// then one per family (<name>.comp), each one module for all its variants
// (specialization constants, glsl.SpecConstants).
func Vulkan() ([]File, error) {
	gather, err := ops.SharedGather()
	if err != nil {
		return nil, err
	}
	src, err := glsl.Upstream(GatherSummary, gather, nil)
	if err != nil {
		return nil, err
	}
	out := []File{{Name: ops.SharedGatherName + ".comp", Data: src}}
	fams, err := Families()
	if err != nil {
		return nil, err
	}
	for _, f := range fams {
		k, err := f.Kernel("vulkan")
		if err != nil {
			return nil, err
		}
		src, err := glsl.Upstream(summary(f), k, f.Shared.Variants("vulkan")[0].Values)
		if err != nil {
			return nil, err
		}
		out = append(out, File{Name: FileName(f, ".comp"), Data: src})
	}
	return out, nil
}
