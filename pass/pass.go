package pass

import (
	"sync"

	"github.com/kernelgen/kernelgen/ir"
)

// Facts are what the passes read of one kernel.
type Facts struct {
	// Needs is what the kernel asks of a target (pass "needs").
	Needs Needs
	// Exchange is its reductions' lowering, nil when it does not reduce
	// (pass "lower-reduce").
	Exchange *Exchange
}

// Pass is one named step from a kernel's IR to its facts.
type Pass struct {
	Name string
	Run  func(k *ir.Kernel, f *Facts)
}

// passes run in this order over each kernel, once (Of): a kernel's
// instances share its facts, which read no parameter's value.
var passes = []Pass{
	{"needs", func(k *ir.Kernel, f *Facts) { f.Needs = needsOf(k) }},
	{"lower-reduce", func(k *ir.Kernel, f *Facts) { f.Exchange = lowerReduce(k) }},
}

// Names are the passes' names, in the order they run.
func Names() []string {
	out := make([]string, len(passes))
	for i, p := range passes {
		out[i] = p.Name
	}
	return out
}

type once struct {
	sync.Once
	f *Facts
}

var ran sync.Map // *ir.Kernel -> *once

// Of returns k's facts: the passes run over k, in order, the first time
// it is asked, and every emitter and build step after reads what they
// found.
func Of(k *ir.Kernel) *Facts {
	v, _ := ran.LoadOrStore(k, new(once))
	o := v.(*once)
	o.Do(func() {
		o.f = &Facts{}
		for _, p := range passes {
			p.Run(k, o.f)
		}
	})
	return o.f
}
