package vulkan

import (
	"encoding/binary"
	"fmt"

	"github.com/kernelgen/kernelgen/emit/glsl"
	"github.com/kernelgen/kernelgen/internal/upstream"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/tools/spvbuild"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/vkrun"
)

// UpstreamKernels are ggml-vulkan's shaders: the gather
// (<SharedGatherName>.comp), then one per family (<name>.comp), each one
// module for all its variants (specialization constants, glsl.SpecConstants).
func UpstreamKernels() ([]upstream.File, error) {
	ks, err := upstream.Kernels(name)
	if err != nil {
		return nil, err
	}
	return shaders(ks)
}

// FusionKernels are the fusion form's shaders (upstream.FusionKernels: the
// GDN shader writes the snapshot slots too).
func FusionKernels() ([]upstream.File, error) {
	ks, err := upstream.FusionKernels(name)
	if err != nil {
		return nil, err
	}
	return shaders(ks)
}

func shaders(ks []upstream.Kernel) ([]upstream.File, error) {
	var out []upstream.File
	for _, k := range ks {
		var values map[string]int64
		if k.Shared != nil {
			values = k.Shared.Variants(target)[0].Values
		}
		src, err := glsl.Upstream(k.Summary, k.K, values)
		if err != nil {
			return nil, err
		}
		out = append(out, upstream.File{Name: k.FileName(".comp"), Data: src})
	}
	return out, nil
}

// UpstreamShader is one upstream shader compiled to SPIR-V, the kernel it
// renders and, for a family, the shared kernel whose flag it takes.
type UpstreamShader struct {
	SPIRV  []byte
	K      *ir.Kernel
	Shared *ops.Shared
}

// UpstreamShaders compiles UpstreamKernels' shaders with build (glslang and
// spirv-val, or a cache of their modules on a host without them) and
// returns them by the op each runs: a family's plain and ids ops, and the
// ids op's gather.
func UpstreamShaders(build func([]spvbuild.Unit) ([][]byte, error)) (map[string]*UpstreamShader, error) {
	return compiled(build, "upstream", upstream.Kernels, UpstreamKernels)
}

// FusionShaders are the fusion form's shaders (FusionKernels) compiled as
// UpstreamShaders: the GDN shader runs the slots op too.
func FusionShaders(build func([]spvbuild.Unit) ([][]byte, error)) (map[string]*UpstreamShader, error) {
	return compiled(build, "fusion", upstream.FusionKernels, FusionKernels)
}

// compiled builds render's shaders as units named "<form> <file>": a
// builder may memoize a module by its unit's name, and the two forms'
// GDN shaders share a file name.
func compiled(build func([]spvbuild.Unit) ([][]byte, error), form string, kernels func(string) ([]upstream.Kernel, error), render func() ([]upstream.File, error)) (map[string]*UpstreamShader, error) {
	files, err := render()
	if err != nil {
		return nil, err
	}
	ks, err := kernels(name)
	if err != nil {
		return nil, err
	}
	var units []spvbuild.Unit
	for _, f := range files {
		units = append(units, spvbuild.Unit{File: "vulkan-shaders/" + f.Name, Source: f.Data, Name: form + " " + f.Name})
	}
	res, err := build(units)
	if err != nil {
		return nil, err
	}
	return upstream.Index(ks, func(i int, k upstream.Kernel) *UpstreamShader {
		return &UpstreamShader{SPIRV: res[i], K: k.K, Shared: k.Shared}
	}), nil
}

// Dispatch is launch l of a case as the upstream glue dispatches it: the
// variant's params (and the family's flag) as specialization constants
// (glsl.SpecConstants), the shader's args as push constants (rs_head 0
// where the plain op has none), each binding the buffer (index into the
// job's buffers, by case buffer name) that l's kernel binds to the same
// node slot. A slot l's op lacks binds a buffer of its own, appended to
// job's buffers and named in the result: it must stay as it was.
func (s *UpstreamShader) Dispatch(l cases.Launch, job *vkrun.Job, index map[string]int, untouched []byte) (extra map[int]string, err error) {
	params, err := upstream.Params(s.Shared, l.Op.Name, l.Params)
	if err != nil {
		return nil, err
	}
	d := vkrun.Dispatch{SPIRV: s.SPIRV, Groups: l.Grid}
	for i, p := range glsl.SpecConstants(s.K) {
		v, ok := params[p.Name]
		if p.Derived != nil {
			v, ok = ir.EvalInt(p.Derived, params)
		}
		if !ok {
			return nil, fmt.Errorf("%s: no value for %s", s.K.Name, p.Name)
		}
		d.Spec = append(d.Spec, vkrun.SpecConst{ID: uint32(i), Value: uint32(v)})
	}
	args, err := upstream.Args(l, s.K)
	if err != nil {
		return nil, err
	}
	for _, bits := range args {
		d.Push = binary.LittleEndian.AppendUint32(d.Push, bits)
	}
	extra = map[int]string{}
	for _, kb := range s.K.Buffers {
		bi := -1
		if name := upstream.Bound(l, kb); name != "" {
			i, ok := index[name]
			if !ok {
				return nil, fmt.Errorf("%s binds %s, which the job lacks", l.Kernel.Name, name)
			}
			bi = i
		}
		if bi < 0 {
			bi = len(job.Buffers)
			job.Buffers = append(job.Buffers, append([]byte(nil), untouched...))
			extra[bi] = kb.Name
		}
		d.Bindings = append(d.Bindings, bi)
	}
	job.Dispatches = append(job.Dispatches, d)
	return extra, nil
}
