// Package cpu is the ggml-cpu backend: the fused ops' kernels in ggml-cpu's
// C++ (emit/ggmlcpu), lowered from the native-cpu IR. ggml takes a new op
// with its CPU kernel, so they are the reference of the series: they join
// the commit that adds the ops (integration.Manifest.Ops), and on a tree
// that already carries the series' ops this backend's own commit fixes them.
package cpu

import (
	"fmt"

	"github.com/kernelgen/kernelgen/emit/ggmlcpu"
	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/internal/backend"
	"github.com/kernelgen/kernelgen/ir"
)

const name = "cpu"

// Backend is ggml-cpu.
var Backend = &backend.Backend{Name: name, Dir: name, Summary: "ggml-cpu C++ (ops.cpp): the fused ops' reference kernels, in the ops commit", Issue: 43,
	Generate: generate, Integration: Manifest,
	Owns: []string{"emit/ggmlcpu", "ops/backend_cpu.go", "bench/ggmlcpu", "generated/cpu"}}

// generate writes the kernel text upstream gets, one file per family (and
// the fix of the series' op D), for review beside the other backends'.
func generate() ([]backend.File, error) {
	ks, err := UpstreamKernels()
	if err != nil {
		return nil, err
	}
	var files []backend.File
	for _, k := range ks {
		if isKernel(k.Name) {
			files = append(files, backend.File{Path: name + "/" + k.Name + ".cpp", Data: k.Data})
		}
	}
	return files, nil
}

// family lowers the native-cpu family op (glue.Families) of the two
// fusions ("AB": ops A and B) as one entry point for both.
func family(fusions string) (*ggmlcpu.Unit, error) {
	fams, err := glue.Families(ir.Native(name))
	if err != nil {
		return nil, err
	}
	for _, f := range fams {
		if f.Fusion == fusions {
			return ggmlcpu.Emit([]*glue.Op{f}, name)
		}
	}
	return nil, fmt.Errorf("the native-cpu glue has no family of the fusions %s", fusions)
}

// unit lowers the native-cpu kernels of the named fusions, one entry point
// per op.
func unit(fusions ...string) (*ggmlcpu.Unit, error) {
	model, err := glue.Model(ir.Native(name))
	if err != nil {
		return nil, err
	}
	var ops []*glue.Op
	for _, f := range fusions {
		for _, op := range model {
			if op.Fusion == f {
				ops = append(ops, op)
			}
		}
	}
	if len(ops) != len(fusions) {
		return nil, fmt.Errorf("the native-cpu glue model lacks one of the fusions %v", fusions)
	}
	return ggmlcpu.Emit(ops, name)
}
