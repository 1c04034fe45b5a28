package cuda

import (
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/emit/internal/cfamily"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ir/ctype"
)

// Instantiation spells the explicit instantiation of an instance's
// __global__ template ("" for a kernel without params, whose definition is
// its one instance).
func Instantiation(in ir.Instance) string { return instantiation(in, nil) }

// SourceInstantiation is Instantiation for the kernel as UpstreamSource
// writes it (its fast divisors uint3).
func SourceInstantiation(in ir.Instance) string {
	return instantiation(in, FastDivisors(in.Kernel))
}

func instantiation(in ir.Instance, fast map[*ir.Arg]bool) string {
	k := in.Kernel
	targs := in.TemplateArgs()
	if len(targs) == 0 {
		return ""
	}
	var ptypes []string
	for _, b := range k.Buffers {
		ptypes = append(ptypes, strings.TrimSpace(cfamily.PointerType(dialect{}, b)))
	}
	for _, a := range k.Args {
		t := ctype.C.Of(a.Type)
		if fast[a] {
			t = "uint3"
		}
		ptypes = append(ptypes, "const "+t)
	}
	name := KernelName(k) + "<" + strings.Join(targs, ", ") + ">"
	return fmt.Sprintf("template __global__ void %s(%s);", name, strings.Join(ptypes, ", "))
}
