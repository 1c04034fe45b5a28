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
	"github.com/kernelgen/kernelgen/ops"
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

// lowered is one glue op's ggml-cpu source and its forms' entry points.
type lowered struct {
	source  []byte
	entries []ggmlcpu.Entry
}

// family lowers the native-cpu family op (glue.Families) of the two
// fusions ("AB": ops A and B) as one entry point for both.
func family(fusions string) (*lowered, error) {
	fams, err := glue.Families(ir.Native(name))
	if err != nil {
		return nil, err
	}
	for _, f := range fams {
		if f.Fusion == fusions {
			return lower(f)
		}
	}
	return nil, fmt.Errorf("the native-cpu glue has no family of the fusions %s", fusions)
}

// single lowers the native-cpu op of one fusion ("D") as its own entry
// point.
func single(fusion string) (*lowered, error) {
	model, err := glue.Model(ir.Native(name))
	if err != nil {
		return nil, err
	}
	for _, op := range model {
		if op.Fusion == fusion {
			return lower(op)
		}
	}
	return nil, fmt.Errorf("the native-cpu glue model lacks the fusion %s", fusion)
}

// lower emits op's unit: the kernels it dispatches, at the variants this
// backend builds.
func lower(op *glue.Op) (*lowered, error) {
	src, err := ggmlcpu.Emit(unitOf(op))
	if err != nil {
		return nil, err
	}
	return &lowered{source: src, entries: ggmlcpu.Entries(op)}, nil
}

// unitOf is what ggml-cpu's emitter takes of a glue op: its dispatched
// kernels in order and their instances.
func unitOf(op *glue.Op) ir.Unit {
	u := ir.Unit{Op: op.Name, Contracts: []ir.Arith{ir.Native(name)},
		Instances: op.Instances(ops.TargetOf(name).Variants)}
	for _, d := range op.Dispatches {
		u.Kernels = append(u.Kernels, d.Kernel)
	}
	return u
}
