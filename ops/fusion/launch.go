package fusion

import (
	"fmt"

	"github.com/kernelgen/kernelgen/ir"
	ctypes "github.com/kernelgen/kernelgen/ir/ctype"
	"github.com/kernelgen/kernelgen/ops"
)

// Launch is a pattern's dispatch as a backend's upstream kernels run it:
// the shared kernel of the family that runs the pattern's Kernel, the
// shared gather, and what each of their buffers binds.
type Launch struct {
	Shared *ops.Shared
	// Kernel and Gather are the shared kernel and the gather under the
	// backend's native contract.
	Kernel, Gather *ir.Kernel
	// KernelBinds and GatherBinds are each buffer's Bind, by the kernel's
	// buffer name: the shared kernel's by the node role its buffer shares
	// with the pattern's kernel, the gather's by name.
	KernelBinds, GatherBinds map[string]Bind
	// Scratch is the gather's scratch, which both kernels bind.
	Scratch Bind
}

// Launch resolves pt's dispatch for a backend: the family kernel that runs
// the pattern's Kernel (its SlotsKernel, which writes the snapshot slots,
// where that is the family's Slots op). Every buffer of both kernels must be
// bound and every arg given a value by the plan (Args, or the scale).
func (pt *Pattern) Launch(backend string) (*Launch, error) {
	op := pt.Kernel
	l := &Launch{Shared: ops.SharedFor(op), KernelBinds: map[string]Bind{}, GatherBinds: map[string]Bind{}}
	if l.Shared == nil {
		return nil, fmt.Errorf("%s: %s has no upstream kernel", pt.Name, op)
	}
	a := ir.Native(backend)
	var err error
	if l.Kernel, err = l.Shared.FusionKernel(op, a); err != nil {
		return nil, err
	}
	if l.Gather, err = ops.SharedGather(); err != nil {
		return nil, err
	}
	planOp, err := ops.Lookup(pt.Kernel)
	if err != nil {
		return nil, err
	}
	planK, err := planOp.Kernel(a)
	if err != nil {
		return nil, err
	}
	binds := map[string]Bind{}
	for _, b := range pt.Buffers {
		binds[b.Buffer] = b
	}
	var ok bool
	if l.Scratch, ok = binds["scratch"]; !ok {
		return nil, fmt.Errorf("%s: no scratch", pt.Name)
	}
	args := map[string]bool{}
	for _, x := range pt.Args {
		args[x.Name] = true
	}
	if pt.Scale != "" {
		args["scale"] = true
	}
	for _, k := range []*ir.Kernel{l.Kernel, l.Gather} {
		for _, b := range k.Buffers {
			name := b.Name
			if k == l.Kernel && name != "scratch" {
				name = ""
				for _, pb := range planK.Buffers {
					if pb.Role == b.Role {
						name = pb.Name
					}
				}
			}
			bind, ok := binds[name]
			if !ok {
				return nil, fmt.Errorf("%s: %s's buffer %s is not bound", pt.Name, k.Name, b.Name)
			}
			if k == l.Kernel {
				l.KernelBinds[b.Name] = bind
			} else {
				l.GatherBinds[b.Name] = bind
			}
		}
		for _, x := range k.Args {
			if !args[x.Name] {
				return nil, fmt.Errorf("%s: %s's arg %s has no value in the plan", pt.Name, k.Name, x.Name)
			}
		}
	}
	return l, nil
}

// ArgsC are the C expressions of pt's kernel args over a match whose
// fields field names: each plan arg its field, the scale 1/sqrt of its
// param as ggml computes it on the host.
func (pt *Pattern) ArgsC(field func(string) string) map[string]string {
	args := map[string]string{}
	for _, x := range pt.Args {
		args[x.Name] = field(x.Name)
	}
	if pt.Scale != "" {
		args["scale"] = fmt.Sprintf("1.0f / sqrtf((float) %s)", field(pt.Scale))
	}
	return args
}

// DataC is the pointer a C call passes for kernel buffer b bound as bind:
// the data of the match's tensor (field names it), typed as b's elements,
// const where b is only read, from bind's offset on.
func DataC(b *ir.Buffer, bind Bind, field func(string) string) string {
	c := ""
	if b.Access == ir.Read {
		c = "const "
	}
	t := ctypes.C.Of(b.Elem)
	if bind.Whole() {
		return fmt.Sprintf("(%s%s *) %s->data", c, t, field(bind.Role))
	}
	return fmt.Sprintf("(%s%s *) ((%schar *) %s->data + %s)", c, t, c, field(bind.Role), bind.Offset.C(field))
}

// CallC are the arguments of a C call of k, the launch's Kernel or Gather
// with its binds, over a match: each buffer its tensor's data (DataC), the
// scratch the caller's local scratch, then each arg as args (ArgsC) spells
// it. Launch has checked that the plan binds and gives them all.
func CallC(k *ir.Kernel, binds map[string]Bind, args map[string]string, field func(string) string) []string {
	var call []string
	for _, b := range k.Buffers {
		if b.Name == "scratch" {
			call = append(call, "scratch")
			continue
		}
		call = append(call, DataC(b, binds[b.Name], field))
	}
	for _, x := range k.Args {
		call = append(call, args[x.Name])
	}
	return call
}

// WholeC are k's buffers as a backend that binds whole tensors passes them
// (the launch's Kernel or Gather, with its binds): the scratch as the
// caller's local scratch, set at its offset, every other buffer as tensor
// spells its role's tensor. Only the scratch may be bound at an offset.
func WholeC(k *ir.Kernel, binds map[string]Bind, tensor func(role string) string) ([]string, error) {
	var out []string
	for _, b := range k.Buffers {
		bind := binds[b.Name]
		switch {
		case b.Name == "scratch":
			out = append(out, "scratch")
		case !bind.Whole():
			return nil, fmt.Errorf("buffer %s is bound at an offset: only the scratch may be", b.Name)
		default:
			out = append(out, tensor(bind.Role))
		}
	}
	return out, nil
}

// GatherDocC is the comment on a backend's function that runs the gather
// and then the barrier the fused kernel needs.
const GatherDocC = "// copies into scratch the rows a sequence reads that another sequence overwrites, then a barrier:\n" +
	"// the compute reads what the copy wrote\n"

// GatherGuardC opens the block that runs the gather, over a match whose
// fields field names: with one sequence no source row is another
// sequence's destination, so the gather copies nothing and is skipped.
func GatherGuardC(field func(string) string) string {
	return "    // with one sequence no source is another sequence's destination: the gather copies nothing\n" +
		"    if (" + field("n_seqs") + " >= 2) {\n"
}

// InMatch is a field of the match as a step's functions name it: their
// match parameter is m.
func InMatch(field string) string { return "m." + field }

// BoolsC are a variant's bools as a fused step picks them: flag, the one
// the fusion sets (each sequence reads its rows by its slot id), as set
// (left out where set is ""), every other one from the match, nonzero.
func BoolsC(bools []string, flag, set string) []string {
	var out []string
	for _, b := range bools {
		switch {
		case b != flag:
			out = append(out, InMatch(b)+" != 0")
		case set != "":
			out = append(out, set)
		}
	}
	return out
}
