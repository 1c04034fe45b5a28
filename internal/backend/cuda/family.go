package cuda

import (
	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/glue"
)

// family is CUDA's own part of a family's upstream glue.
type family struct {
	// CallArgs are the kernel call's arguments as glue.FamilyView's, but
	// for each fast divisor (cuda.FastDivisors) the uint3 the host
	// precomputes for it.
	CallArgs []string
}

func familyOf(p glue.FamilyParts) (any, error) {
	fast := cuda.FastDivisors(p.Kernel)
	ptrs := map[string]string{}
	for _, l := range p.View.Pointers {
		ptrs[l.Name] = l.Expr
	}
	var call []string
	for _, b := range p.Kernel.Buffers {
		e, ok := ptrs[b.Name]
		if !ok {
			e = "scratch" // the launcher's own
		}
		call = append(call, e)
	}
	for _, a := range p.Kernel.Args {
		e := p.Args[a.Name]
		if fast[a] {
			e = "init_fastdiv_values(" + e + ")"
		}
		call = append(call, e)
	}
	return family{CallArgs: glue.Wrap(call, 100)}, nil
}
