package ops

import (
	"fmt"
	"sync"

	"github.com/kernelgen/kernelgen/ir"
)

// Shared is one kernel for two ops that share a body, as upstream wants
// them (issue #18): the plain op with the bool param Flag false, the ids op
// with it true. It is built from the same builder as the two ops, so its
// body is theirs; the ids op's gather runs before it as before.
type Shared struct {
	// Name is the kernel's name (the plain op's).
	Name string
	// Flag is the bool param that picks the ids op.
	Flag string
	// Plain and Ids are the two ops it runs.
	Plain, Ids string
	// Summary says what it does, for the comment above it.
	Summary string
	// Slots, where set, is the op with snapshot slots (SlotsOp) that the
	// family's kernel runs as well when built by SlotsKernel: the fusion
	// form's kernel (ops/fusion), with the slot args SlotArgs after the
	// others. The ops form's kernel (Kernel) has none, so its text stays.
	Slots string
	// SlotsNote is what SlotsKernel adds to Summary, for the comment above it.
	SlotsNote  string
	build      func(ir.Arith) (*ir.Kernel, error)
	buildSlots func(ir.Arith) (*ir.Kernel, error)

	mu                sync.Mutex
	cache, slotsCache map[string]built
}

var shared = []*Shared{
	{Name: "gated_delta_net_inplace", Flag: sharedFlag, Plain: "gated_delta_net_inplace", Ids: "gated_delta_net_inplace_ids",
		Summary:   "gated delta net writing the final state in place (src[6]); with IDS, sequence s reads its prior state from row ids[s] (src[7]), which the gather first copied to scratch where another sequence overwrites it",
		build:     func(a ir.Arith) (*ir.Kernel, error) { return buildGDN("gated_delta_net_inplace", gdnShared, a) },
		Slots:     SlotsOp,
		SlotsNote: "with K > 1 it writes the state after token t into snapshot slot n_tokens-1-t, ss further per slot",
		buildSlots: func(a ir.Arith) (*ir.Kernel, error) {
			return buildGDNSharedSlots("gated_delta_net_inplace", a)
		}},
	{Name: "ssm_conv_update_inplace", Flag: sharedFlag, Plain: "ssm_conv_update_inplace", Ids: "ssm_conv_update_inplace_ids",
		Summary: "conv over the cached taps and the new token (SiLU folded), the taps shifted in place (src[3]); with IDS, sequence s reads its taps from row ids[s] (src[4]), which the gather first copied to scratch where another sequence overwrites it",
		build: func(a ir.Arith) (*ir.Kernel, error) {
			return buildConvUpdate("ssm_conv_update_inplace", convShared, a)
		},
		Slots:     ConvSlotsOp,
		SlotsNote: "with slots it runs the n_t tokens of a step and writes the taps after token t into snapshot slot n_t-1-t, ss further per slot",
		buildSlots: func(a ir.Arith) (*ir.Kernel, error) {
			return buildConvUpdateOf("ssm_conv_update_inplace", convShared, true, a)
		}},
}

// SharedKernels lists the shared kernels.
func SharedKernels() []*Shared { return shared }

// SharedFor returns the shared kernel that runs op, or nil: the family
// whose Slots op is op where its SlotsKernel runs it.
func SharedFor(op string) *Shared {
	for _, s := range shared {
		if s.Plain == op || s.Ids == op || (s.Slots != "" && s.Slots == op) {
			return s
		}
	}
	return nil
}

// SlotArgs are the args SlotsKernel has beyond Kernel's, and what they
// are for a node that writes no snapshot slots (an ops-form node): the
// conv's also runs one token, so its token strides are unread.
var SlotArgs = map[string]int64{"K": 1, "ss": 0, "n_t": 1, "x1": 0, "d1": 0}

// SlotsKernel returns the family's kernel that also writes its Slots op's
// snapshot slots, under contract a, built once; without a Slots op, the
// family's kernel (Kernel).
func (s *Shared) SlotsKernel(a ir.Arith) (*ir.Kernel, error) {
	if s.buildSlots == nil {
		return s.Kernel(a)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.slotsCache == nil {
		s.slotsCache = map[string]built{}
	}
	if b, ok := s.slotsCache[a.String()]; ok {
		return b.k, b.err
	}
	k, err := s.buildSlots(a)
	s.slotsCache[a.String()] = built{k, err}
	return k, err
}

// Kernel returns the shared kernel under contract a, built once.
func (s *Shared) Kernel(a ir.Arith) (*ir.Kernel, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cache == nil {
		s.cache = map[string]built{}
	}
	if b, ok := s.cache[a.String()]; ok {
		return b.k, b.err
	}
	k, err := s.build(a)
	s.cache[a.String()] = built{k, err}
	return k, err
}

// FusionKernel is the family's kernel that runs op under contract a: its
// SlotsKernel for its Slots op, else Kernel.
func (s *Shared) FusionKernel(op string, a ir.Arith) (*ir.Kernel, error) {
	if s.Slots != "" && op == s.Slots {
		return s.SlotsKernel(a)
	}
	return s.Kernel(a)
}

// Variants are the shared kernel's variants on target t: the plain op's
// with Flag 0, then the ids op's with Flag 1.
func (s *Shared) Variants(t Target) []Variant {
	var out []Variant
	for i, op := range []string{s.Plain, s.Ids} {
		for _, v := range t.Variants(op) {
			values := map[string]int64{s.Flag: int64(i)}
			for k, x := range v.Values {
				values[k] = x
			}
			v.Op, v.Values = s.Name, values
			out = append(out, v)
		}
	}
	return out
}

// Value is the flag's value that runs op.
func (s *Shared) Value(op string) (int64, error) {
	switch op {
	case s.Plain:
		return 0, nil
	case s.Ids:
		return 1, nil
	}
	if s.Slots != "" && op == s.Slots {
		return 1, nil // the ids op's, with slots
	}
	return 0, fmt.Errorf("shared kernel %s runs %s and %s, not %s", s.Name, s.Plain, s.Ids, op)
}

// SharedGatherName names the one gather upstream gets for both ids ops.
const SharedGatherName = "state_gather"

// SharedGather is that gather: the gather op (GatherOp, buildGather) under
// upstream's name. Its cache and ids are different srcs for the two ops,
// so they are the caller's (ir.CallerRole): the glue binds them as the
// dispatching op's.
func SharedGather() (*ir.Kernel, error) {
	return buildGather(SharedGatherName)
}
