// Package upstream is what the backends' upstream kernels share. The kernels
// kernelgen hands a ggml tree are each backend's native contract only (the
// portable one stays in generated/ and kernelgen's own checks), the two ops
// of a family that share a body as one kernel (ops.Shared, picked by a
// template parameter), and the one gather both ids ops run first
// (ops.SharedGather), in the target's own style. Each backend renders its
// own (internal/backend/<name>) with the helpers here; the tests here run
// every kernel under host emulation against the Go reference.
package upstream

import (
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// Family is one shared kernel and the gather its ids op runs first.
type Family struct {
	Shared *ops.Shared
	Gather *ops.Op
}

// Families are the fused ops' kernels: GDN (ops A, B) and the conv update
// (ops C, D).
func Families() ([]Family, error) {
	var out []Family
	for _, s := range ops.SharedKernels() {
		g, err := ops.Lookup(gatherOf(s))
		if err != nil {
			return nil, err
		}
		out = append(out, Family{Shared: s, Gather: g})
	}
	return out, nil
}

// gatherOf names the gather of a shared kernel's ids op.
func gatherOf(s *ops.Shared) string {
	if s.Name == "ssm_conv_update_inplace" {
		return "ssm_conv_gather"
	}
	return "gated_delta_net_gather"
}

// File is one file of a backend's upstream kernels.
type File struct {
	Name string
	Data []byte
	// InGlue: the text joins the glue's header beside its launcher instead
	// of a file of its own (Name is then only its name in tests).
	InGlue bool
	// Spliced: the text joins an existing source of the tree (Name), where
	// the backend's integration manifest puts it.
	Spliced bool
}

// Kernel returns f's shared kernel under backend's native contract.
func (f Family) Kernel(backend string) (*ir.Kernel, error) {
	return f.Shared.Kernel(ir.Native(backend))
}

// FileName is the header holding f's kernels on a backend with extension ext.
func FileName(f Family, ext string) string { return f.Shared.Name + ext }

// GatherSummary heads the gather's file.
const GatherSummary = "copies into scratch the rows a sequence reads that another sequence of the same node overwrites"

// Render renders one header per family (<name><ext>) after the gather's
// (<SharedGatherName><ext>), each by emit, the families' kernels under
// backend's native contract.
func Render(backend, ext string, emit func(summary string, ks []*ir.Kernel) ([]byte, error)) ([]File, error) {
	fams, err := Families()
	if err != nil {
		return nil, err
	}
	gather, err := ops.SharedGather()
	if err != nil {
		return nil, err
	}
	src, err := emit(GatherSummary, []*ir.Kernel{gather})
	if err != nil {
		return nil, err
	}
	out := []File{{Name: ops.SharedGatherName + ext, Data: src}}
	for _, f := range fams {
		k, err := f.Kernel(backend)
		if err != nil {
			return nil, err
		}
		src, err := emit(f.Shared.Summary, []*ir.Kernel{k})
		if err != nil {
			return nil, err
		}
		out = append(out, File{Name: FileName(f, ext), Data: src})
	}
	return out, nil
}

// SameSlot says whether an op's kernel buffer ob is the upstream kernel's
// buffer kb: the same node slot, or for the shared gather, whose roles name
// no slot (its two ops read the cache and ids from different srcs), the
// buffer of the same name.
func SameSlot(ob, kb *ir.Buffer) bool {
	return ob.Role == kb.Role || kb.Role == kb.Name && ob.Name == kb.Name
}
