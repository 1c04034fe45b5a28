// Package vulkan is the Vulkan backend: GLSL compute shaders (emit/glsl),
// every variant compiled to SPIR-V by glslang and checked by spirv-val.
package vulkan

import (
	"context"
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/emit/glsl"
	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/internal/backend"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/pass"
	"github.com/kernelgen/kernelgen/templates"
	"github.com/kernelgen/kernelgen/tools/spvbuild"
	"github.com/kernelgen/kernelgen/tools/toolchain"
)

const name = "vulkan"

// target is the backend's tuning (ops/backend_vulkan.go), resolved once.
var target = ops.TargetOf(name)

// Backend is Vulkan.
var Backend = &backend.Backend{Name: name, Dir: name, Summary: "GLSL compute shaders, compiled to SPIR-V by glslang and checked by spirv-val", Issue: 5,
	Generate: generate, Verify: verify, Integration: Manifest,
	Owns:  []string{"emit/glsl", "templates/vulkan", "verify/vulkan", "verify/vkrun", "tools/spvbuild", "bench/vulkan", "ops/backend_vulkan.go", "generated/vulkan", "tools/toolchain/vulkan.go"},
	Tools: toolchain.VulkanTools, Cache: &backend.Cache{Key: "spirv", Dir: spvbuild.CacheDir}, Doctor: doctor}

var glueTarget = &templates.Target{
	Names: glue.Names{Backend: name, Function: function, HostName: hostName, Defines: glsl.Defines, Family: newFamily,
		ArgsStruct: func(op string) string { return "vk_op_" + op + "_push_constants" }},
	Template: "vulkan/kernelgen-fused.hpp.tmpl", Out: "fused-ops.hpp", Prefix: "ggml_vk",
	// The upstream glue is spliced into ggml-vulkan.cpp whole: sections only.
	Upstream: &templates.Upstream{},
}

// function is a kernel's shader name: its file's stem.
func function(k *ir.Kernel) string {
	return strings.TrimSuffix(glsl.FileName(k), ".comp")
}

// hostName is a variant's shader name: ggml's SPIR-V symbol stem.
func hostName(fn string, in ir.Instance) string {
	name := fn
	for _, p := range in.Kernel.Params {
		if p.Derived == nil {
			name += fmt.Sprintf("_%s%d", strings.ToLower(p.Name), in.Values[p.Name])
		}
	}
	return name
}

// generate writes one shader per kernel (contract): glslang compiles each
// variant from it by defines.
func generate() ([]backend.File, error) {
	files, err := backend.PerOp(name, name, func(u ir.Unit) ([]backend.File, error) {
		var files []backend.File
		for _, k := range u.Kernels {
			src, err := glsl.Emit(u.Only(k))
			if err != nil {
				return nil, err
			}
			files = append(files, backend.File{Path: glsl.FileName(k), Data: src})
		}
		return files, nil
	})
	if err != nil {
		return nil, err
	}
	return backend.WithGlue(files, name, Manifest)
}

// Units lists every variant of every generated shader as a compile unit,
// and the portable shaders' glsl.DenormPreserve builds.
func Units(files []backend.File) ([]spvbuild.Unit, error) {
	byPath := map[string][]byte{}
	for _, f := range files {
		byPath[f.Path] = f.Data
	}
	var units []spvbuild.Unit
	for _, op := range ops.All() {
		if !backend.BuiltOn(op, target) {
			continue
		}
		ks, err := backend.KernelsFor(op, ir.Portable, ir.Native(name))
		if err != nil {
			return nil, err
		}
		for _, k := range ks {
			path := name + "/" + glsl.FileName(k)
			src, ok := byPath[path]
			if !ok {
				return nil, fmt.Errorf("%s was not generated", path)
			}
			for _, v := range target.Variants(op.Name) {
				defs, err := glsl.Defines(v.Of(k))
				if err != nil {
					return nil, err
				}
				u := spvbuild.Unit{File: "generated/" + path, Source: src, Defines: defs, Name: k.ID() + " " + v.String()}
				units = append(units, u)
				if pass.Of(k).Needs.DenormPreserve {
					// The build for devices that keep denormals on request.
					u.Defines, u.Name = glsl.WithDenormPreserve(defs), u.Name+" denorm-preserve"
					units = append(units, u)
				}
			}
		}
	}
	return units, nil
}

func verify(ctx context.Context, files []backend.File, progress func(done, total int)) (string, error) {
	units, err := Units(files)
	if err != nil {
		return "", err
	}
	tools, err := spvbuild.FindTools(ctx)
	if err != nil {
		return "", err
	}
	res, err := tools.Build(ctx, units, progress)
	if err != nil {
		return "", err
	}
	cached, denorm := 0, 0
	for i, r := range res {
		if r.Cached {
			cached++
		}
		if _, ok := units[i].Defines[glsl.DenormPreserve]; ok {
			denorm++
		}
	}
	return fmt.Sprintf("vulkan: %d variants and %d denorm-preserve builds compiled by glslangValidator and validated by spirv-val (%d from the cache)", len(res)-denorm, denorm, cached), nil
}
