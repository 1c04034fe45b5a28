// Package goref is the Go reference backend: every op under every contract
// lowered to Go (emit/goref), the CPU oracle every backend is checked against.
package goref

import (
	"github.com/kernelgen/kernelgen/emit/goref"
	"github.com/kernelgen/kernelgen/internal/backend"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// Backend is the Go reference. Being the oracle, it also owns what reads
// it as one: the cases' expected buffers (verify/cases runs generated/goref),
// the graph-fusion reference's runs (verify/fusion) and the interpreter,
// which evaluates with its runtime (emit/goref/rt).
var Backend = &backend.Backend{Name: "go", Dir: "goref", Summary: "Go reference kernels (the CPU oracle every backend is checked against)",
	Reference: true, Generate: generate, Owns: []string{"emit/goref", "generated/goref", "verify/cases/cases.go", "verify/fusion/exec.go", "verify/interp"}}

func generate() ([]backend.File, error) {
	var files []backend.File
	var all []ir.Unit
	for _, op := range ops.All() {
		g := ir.Unit{Op: op.Name, Summary: op.Summary, Contracts: ops.Ariths()}
		for _, a := range op.Ariths() {
			k, err := op.Kernel(a)
			if err != nil {
				return nil, err
			}
			g.Kernels = append(g.Kernels, k)
		}
		src, err := goref.Emit(g)
		if err != nil {
			return nil, err
		}
		files = append(files, backend.File{Path: "goref/" + op.Name + ".go", Data: src, Op: op.Name})
		all = append(all, g)
	}
	reg, err := goref.EmitRegistry(all)
	if err != nil {
		return nil, err
	}
	files = append(files, backend.File{Path: "goref/doc.go", Data: []byte(gorefDoc)}, backend.File{Path: "goref/registry.go", Data: reg})
	return files, nil
}

const gorefDoc = `// Package goref holds the Go reference kernels: every op of kernelgen's IR
// under every arithmetic contract, lowered to Go. Each op has Params (the
// variant), Args (runtime scalars) and Buffers types and a function taking a
// contract name ("portable", "native-cuda", ...). The tests in emit/goref check
// them bit for bit against an independent oracle.
package goref
`
