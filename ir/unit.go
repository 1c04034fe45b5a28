package ir

import "fmt"

// Unit is what an emitter turns into one file's bytes: one op's kernels
// (one per contract the file carries, or the op's one arith-free kernel)
// and the instances a backend builds of them.
type Unit struct {
	// Op names the op (and the file); Summary is one line about it.
	Op, Summary string
	Kernels     []*Kernel
	// Instances are the kernels at the parameter values the backend
	// builds, each of one of Kernels (for emitters that instantiate or
	// name them: Metal's host names).
	Instances []Instance
	// Contracts are the contracts the unit serves: an arith-free kernel
	// serves every one (the Go reference dispatches on them).
	Contracts []Arith
}

// InstancesOf are the unit's instances of kernel k, in order.
func (u Unit) InstancesOf(k *Kernel) []Instance {
	var out []Instance
	for _, in := range u.Instances {
		if in.Kernel == k {
			out = append(out, in)
		}
	}
	return out
}

// One is the unit's one kernel, for a language with a file per kernel
// (GLSL); more or fewer is an error naming lang.
func (u Unit) One(lang string) (*Kernel, error) {
	if len(u.Kernels) != 1 {
		return nil, fmt.Errorf("%s: unit %s has %d kernels; a file holds one", lang, u.Op, len(u.Kernels))
	}
	return u.Kernels[0], nil
}

// Only is the unit of kernel k alone, with its instances: a file of one
// kernel.
func (u Unit) Only(k *Kernel) Unit {
	return Unit{Op: u.Op, Summary: u.Summary, Kernels: []*Kernel{k}, Instances: u.InstancesOf(k), Contracts: u.Contracts}
}
