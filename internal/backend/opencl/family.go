package opencl

import (
	"fmt"

	"github.com/kernelgen/kernelgen/glue"
)

// family is what ggml-opencl's upstream glue (templates/opencl/
// upstream.cpp.tmpl) renders of a shared kernel beyond the common fields
// (glue.FamilyView.Own): one program per variant of the family's .cl
// file, built with the variant's params as defines (FamilyView.Table's
// columns over its rows, the bools by the loops' indices), and each
// kernel buffer as the tensor whose cl_mem and offset it takes.
type family struct {
	// Buffers are the kernel's buffers in order: the node's tensor each
	// binds (a C expression), or "" for the gather's scratch.
	Buffers []string
	// GatherBuffers are the gather's, the same way.
	GatherBuffers []string
}

// newFamily builds a shared kernel's OpenCL part (glue.Names.Family).
func newFamily(p glue.FamilyParts) (any, error) {
	fv, k := p.View, p.Kernel
	if n := len(fv.Table.Bools); n != 2 {
		return nil, fmt.Errorf("opencl: %s: the upstream glue indexes kernels by two bools, the kernel has %d", fv.Name, n)
	}
	f := &family{}
	tensor := func(bind *glue.Binding, inPlain bool) (string, error) {
		switch {
		case bind == nil || bind.Offset != "":
			return "", fmt.Errorf("opencl: %s: a buffer binds no whole tensor", fv.Name)
		case bind.Tensor == "scratch":
			return "", nil
		case bind.Tensor == "op":
			return "op", nil
		case !inPlain:
			// the plain form has no such tensor: the node stands in, never read
			return fmt.Sprintf("%s ? op->%s : op", fv.Flag, bind.Tensor), nil
		}
		return "op->" + bind.Tensor, nil
	}
	for _, b := range k.Buffers {
		t, err := tensor(p.Bind(b))
		if err != nil {
			return nil, err
		}
		f.Buffers = append(f.Buffers, t)
	}
	for i := range p.Gather.Kernel.Buffers {
		t, err := tensor(&p.Gather.Bind[i], true)
		if err != nil {
			return nil, err
		}
		f.GatherBuffers = append(f.GatherBuffers, t)
	}
	return f, nil
}
