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
	"fmt"
	"slices"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/verify/cases"
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
		g, err := ops.Lookup(ops.GatherOp)
		if err != nil {
			return nil, err
		}
		out = append(out, Family{Shared: s, Gather: g})
	}
	return out, nil
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

// GatherSummary heads the gather's file.
const GatherSummary = "copies into scratch the rows a sequence reads that another sequence of the same node overwrites"

// Kernel is one of a backend's upstream kernels: the gather, or a
// family's shared kernel under the backend's native contract.
type Kernel struct {
	Summary string // heads its file
	K       *ir.Kernel
	// Shared is the family's shared kernel, nil for the gather.
	Shared *ops.Shared
	// Ops are the ops it runs: a family's plain and ids ops, or every
	// family's gather (in Families' order).
	Ops []string
}

// FileName is k's file on a backend with extension ext: <name><ext>, the
// gather's <SharedGatherName><ext>.
func (k Kernel) FileName(ext string) string {
	if k.Shared == nil {
		return ops.SharedGatherName + ext
	}
	return k.Shared.Name + ext
}

// Kernels are backend's upstream kernels in the order of their files: the
// gather, then each family's.
func Kernels(backend string) ([]Kernel, error) { return kernels(backend, false) }

// FusionKernels are the fusion form's (ops/fusion): Kernels, a family with
// a Slots op its SlotsKernel, which runs that op too.
func FusionKernels(backend string) ([]Kernel, error) { return kernels(backend, true) }

func kernels(backend string, slots bool) ([]Kernel, error) {
	fams, err := Families()
	if err != nil {
		return nil, err
	}
	gather, err := ops.SharedGather()
	if err != nil {
		return nil, err
	}
	out := []Kernel{{Summary: GatherSummary, K: gather}}
	for _, f := range fams {
		k, err := f.Kernel(backend)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out[0].Ops, f.Gather.Name) { // one gather op runs for every family
			out[0].Ops = append(out[0].Ops, f.Gather.Name)
		}
		kk := Kernel{Summary: f.Shared.Summary, K: k, Shared: f.Shared, Ops: []string{f.Shared.Plain, f.Shared.Ids}}
		if slots && f.Shared.Slots != "" {
			if kk.K, err = f.Shared.SlotsKernel(ir.Native(backend)); err != nil {
				return nil, err
			}
			kk.Summary, kk.Ops = f.Shared.Summary+"; "+f.Shared.SlotsNote, append(kk.Ops, f.Shared.Slots)
		}
		out = append(out, kk)
	}
	return out, nil
}

// ByOp is backend's upstream kernels (Kernels) by the op each runs, each
// made once by mk from the kernel and its index among Kernels (and so
// among Render's files).
func ByOp[T any](backend string, mk func(i int, k Kernel) T) (map[string]T, error) {
	ks, err := Kernels(backend)
	if err != nil {
		return nil, err
	}
	return Index(ks, mk), nil
}

// Index is ks by the op each runs, as ByOp makes it (FusionKernels').
func Index[T any](ks []Kernel, mk func(i int, k Kernel) T) map[string]T {
	out := map[string]T{}
	for i, k := range ks {
		v := mk(i, k)
		for _, op := range k.Ops {
			out[op] = v
		}
	}
	return out
}

// Render renders one header per family (<name><ext>) after the gather's
// (<SharedGatherName><ext>), each by emit, the families' kernels under
// backend's native contract.
func Render(backend, ext string, emit func(summary string, ks []*ir.Kernel) ([]byte, error)) ([]File, error) {
	ks, err := Kernels(backend)
	if err != nil {
		return nil, err
	}
	return RenderKernels(ks, ext, emit)
}

// RenderKernels renders ks as Render does (FusionKernels, for the fusion
// form).
func RenderKernels(ks []Kernel, ext string, emit func(summary string, ks []*ir.Kernel) ([]byte, error)) ([]File, error) {
	var out []File
	for _, k := range ks {
		src, err := emit(k.Summary, []*ir.Kernel{k.K})
		if err != nil {
			return nil, err
		}
		out = append(out, File{Name: k.FileName(ext), Data: src})
	}
	return out, nil
}

// Params are a launch's variant params (params) as an upstream kernel
// takes them: for a family's kernel (s non-nil), with its flag set as op
// needs it.
func Params(s *ops.Shared, op string, params map[string]int64) (map[string]int64, error) {
	out := map[string]int64{}
	for k, v := range params {
		out[k] = v
	}
	if s != nil {
		v, err := s.Value(op)
		if err != nil {
			return nil, err
		}
		out[s.Flag] = v
	}
	return out, nil
}

// SameSlot says whether an op's kernel buffer ob is the upstream kernel's
// buffer kb: the same node slot, or where either is the caller's
// (ir.CallerRole: the gather's cache and ids, which its two ops read from
// different srcs), the buffer of the same name.
func SameSlot(ob, kb *ir.Buffer) bool {
	if ob.Role == ir.CallerRole || kb.Role == ir.CallerRole {
		return ob.Name == kb.Name
	}
	return ob.Role == kb.Role
}

// Bound is the case buffer launch l's kernel binds to the node slot of
// upstream kernel buffer kb (SameSlot), "" where l's op has no such slot.
func Bound(l cases.Launch, kb *ir.Buffer) string {
	name := ""
	for j, ob := range l.Kernel.Buffers {
		if SameSlot(ob, kb) {
			name = l.Bind[j]
		}
	}
	return name
}

// Args are upstream kernel k's args (as bits, in k's order) over launch
// l's: rs_head is 0 where the plain op has none, and the slot args of a
// SlotsKernel those of no snapshot slots (ops.SlotArgs) where l's op has
// none.
func Args(l cases.Launch, k *ir.Kernel) ([]uint32, error) {
	var out []uint32
	for _, a := range k.Args {
		bits, ok := l.Args[a.Name]
		if v, slot := ops.SlotArgs[a.Name]; !ok && slot {
			bits, ok = uint32(v), true
		}
		if !ok && a.Name != "rs_head" {
			return nil, fmt.Errorf("%s's arg %s has no value in %s", k.Name, a.Name, l.Kernel.Name)
		}
		out = append(out, bits)
	}
	return out, nil
}
