// Package ir is the IR backend: each kernel's IR text, which kernelgen
// diff reads back (ir/irtext) to compare two revisions' kernels on meaning.
package ir

import (
	"github.com/kernelgen/kernelgen/internal/backend"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// Backend is the IR text.
var Backend = &backend.Backend{Name: "ir", Dir: "ir", Summary: "IR text of every kernel (what kernelgen diff reads back)",
	Reference: true, Generate: generate}

func generate() ([]backend.File, error) {
	var files []backend.File
	for _, op := range ops.All() {
		for _, a := range op.Ariths() {
			k, err := op.Kernel(a)
			if err != nil {
				return nil, err
			}
			files = append(files, backend.File{Path: "ir/" + k.ID() + ".ir", Data: []byte(ir.Print(k)), Op: op.Name})
		}
	}
	return files, nil
}
