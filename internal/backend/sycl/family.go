package sycl

import (
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/ir"
	ctypes "github.com/kernelgen/kernelgen/ir/ctype"
)

// family is what ggml-sycl's upstream glue (templates/sycl/upstream.hpp.tmpl)
// renders of a shared kernel beyond the common fields (glue.FamilyView.Own):
// the launcher's template parameters, the bools turned template arguments
// through std::bool_constant, and whether the launch allocates local memory.
type family struct {
	// TemplateParams are the kernel's non-derived params as the launcher's
	// template parameter list.
	TemplateParams string
	// Reduces: the kernel takes local memory for its reductions.
	Reduces bool
	// BoolTypes are the bool params as a generic lambda's parameters (each
	// a std::bool_constant, named in lower case), BoolValues the calls of
	// that lambda, run, for the bools' values, as nested conditionals.
	BoolTypes, BoolValues string
}

// newFamily builds a shared kernel's SYCL part (glue.Names.Family).
func newFamily(p glue.FamilyParts) (any, error) {
	bools := p.View.Table.Bools
	var tp, bt []string
	for _, q := range p.Kernel.Params {
		if q.Derived == nil {
			tp = append(tp, ctypes.C.Of(q.Type)+" "+q.Name)
		}
	}
	for _, b := range bools {
		bt = append(bt, "auto "+strings.ToLower(b))
	}
	var fan func(i int, vals []string) string
	fan = func(i int, vals []string) string {
		if i == len(bools) {
			return "run(" + strings.Join(vals, ", ") + ")"
		}
		t := fan(i+1, append(append([]string{}, vals...), "std::true_type()"))
		f := fan(i+1, append(append([]string{}, vals...), "std::false_type()"))
		sep := " : "
		if i == 0 {
			sep = "\n        : " // the two halves on two lines
		}
		return fmt.Sprintf("%s ? %s%s%s", bools[i], glue.Paren(t), sep, glue.Paren(f))
	}
	return &family{TemplateParams: strings.Join(tp, ", "), Reduces: ir.HasReduce(p.Kernel), BoolTypes: strings.Join(bt, ", "), BoolValues: fan(0, nil)}, nil
}
