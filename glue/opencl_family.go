package glue

import (
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// OpenCLFamily is what ggml-opencl's upstream glue renders beyond the
// common fields: one program per variant of the family's .cl file, built
// with the variant's params as defines (the table's columns over its rows,
// the bools by the loops' indices), and each kernel buffer as the tensor
// whose cl_mem and offset it takes.
type OpenCLFamily struct {
	// Columns are the switch key, then the other non-bool params; Rows
	// the variants' values of them, one C initialiser each.
	Columns, Rows []string
	// Bools are the bool params, BoolIndex their lower-case loop indices.
	Bools, BoolIndex []string
	// Buffers are the kernel's buffers in order: the node's tensor each
	// binds (a C expression), or "" for the gather's scratch.
	Buffers []string
	// GatherBuffers are the gather's, the same way.
	GatherBuffers []string
}

// opencl fills fv.OpenCL.
func (fv *FamilyView) opencl(s *ops.Shared, k *ir.Kernel, compute, gather Dispatch, plainRoles map[string]bool) error {
	o := &OpenCLFamily{Columns: []string{fv.Key}}
	for _, p := range k.Params {
		switch {
		case p.Derived != nil:
		case p.Type == ir.Bool:
			o.Bools = append(o.Bools, p.Name)
			o.BoolIndex = append(o.BoolIndex, strings.ToLower(p.Name))
		case p.Name != fv.Key:
			o.Columns = append(o.Columns, p.Name)
		}
	}
	if len(o.Bools) != 2 {
		return fmt.Errorf("glue: %s: the OpenCL glue indexes kernels by two bools, the kernel has %d", s.Name, len(o.Bools))
	}
	for _, c := range fv.Cases {
		o.Rows = append(o.Rows, "{"+c.TemplateArgs+"}")
	}
	tensor := func(bind *Binding, ownSlot bool) (string, error) {
		switch {
		case bind == nil || bind.Offset != "":
			return "", fmt.Errorf("glue: %s: a buffer binds no whole tensor", s.Name)
		case bind.Tensor == "scratch":
			return "", nil
		case bind.Tensor == "op":
			return "op", nil
		case !ownSlot:
			// the plain form has no such tensor: the node stands in, never read
			return fmt.Sprintf("%s ? op->%s : op", s.Flag, bind.Tensor), nil
		}
		return "op->" + bind.Tensor, nil
	}
	for _, b := range k.Buffers {
		var bind *Binding
		for i, cb := range compute.Kernel.Buffers {
			if cb.Role == b.Role {
				bind = &compute.Bind[i]
			}
		}
		t, err := tensor(bind, plainRoles[b.Role])
		if err != nil {
			return err
		}
		o.Buffers = append(o.Buffers, t)
	}
	for i := range gather.Kernel.Buffers {
		t, err := tensor(&gather.Bind[i], true)
		if err != nil {
			return err
		}
		o.GatherBuffers = append(o.GatherBuffers, t)
	}
	fv.OpenCL = o
	return nil
}
