package ops

import (
	"fmt"
	"slices"
	"sort"

	"github.com/kernelgen/kernelgen/ir"
)

// native is what one backend declares to ops, in ops/backend_<name>.go (a
// file its Backend value lists in Owns): its native contract's arithmetic
// and its tuning of the variant table. The declarations live in ops, not
// in the backends' folders, because every kernel and variant is built
// under every contract where no backend is linked in (the ops, cases and
// Go reference tests); ops names no backend outside those files.
type native struct {
	backend string
	style   style
	tuning  Tuning
}

// natives are the declarations in listing order: the registry's (ListIn),
// then, by name, the backends it does not list.
var natives []native

// listing is the registry's order of the backends, once ListIn gave it.
var listing []string

// declare adds a backend's declaration; each ops/backend_<name>.go calls
// it from its init.
func declare(n native) {
	for _, d := range natives {
		if d.backend == n.backend {
			panic(fmt.Sprintf("ops: %s declares its contract twice", n.backend))
		}
	}
	natives = append(natives, n)
	sortNatives()
}

// ListIn orders the native contracts (Ariths, NativeBackends, Targets and
// the variant table built from them) as the registry lists the backends:
// kernelgen has one order, the registry's, and ops, a floor below it,
// takes it from there. The registry calls it from its init, before any
// variant is built; where no registry is linked in (ops' own tests) the
// contracts follow by name.
func ListIn(order []string) {
	if variantsBuilt.Load() {
		panic("ops: ListIn after the variant table was built")
	}
	listing = append([]string(nil), order...)
	sortNatives()
}

func sortNatives() {
	place := func(be string) int {
		if i := slices.Index(listing, be); i >= 0 {
			return i
		}
		return len(listing)
	}
	sort.SliceStable(natives, func(i, j int) bool {
		pi, pj := place(natives[i].backend), place(natives[j].backend)
		if pi != pj {
			return pi < pj
		}
		return natives[i].backend < natives[j].backend
	})
}

// NativeBackends are the backends with a native contract, in the order
// kernelgen lists them.
func NativeBackends() []string {
	out := make([]string, len(natives))
	for i, n := range natives {
		out[i] = n.backend
	}
	return out
}

func nativeOf(backend string) (native, bool) {
	for _, n := range natives {
		if n.backend == backend {
			return n, true
		}
	}
	return native{}, false
}

// styleOf is contract a's arithmetic style.
func styleOf(a ir.Arith) style {
	if !a.Native {
		return style{portable: true, order: ir.Butterfly, convZero: true}
	}
	n, ok := nativeOf(a.Backend)
	if !ok {
		panic("ops: no arithmetic style for backend " + a.Backend)
	}
	return n.style
}

// Target is one backend as ops knows it: its name and its tuning of the
// variant table, resolved once (TargetOf) and carried by value. What it
// decides, its methods say; a backend without a declaration tunes nothing.
type Target struct {
	// Name is the backend's name, as variants list it (Variant.On).
	Name   string
	tuning Tuning
}

// TargetOf resolves the backend named name: the one lookup by name; every
// other question to ops about a backend is a method of the Target.
func TargetOf(name string) Target {
	n, _ := nativeOf(name)
	return Target{Name: name, tuning: n.tuning}
}

// Targets are the backends that declare a native contract, in listing order.
func Targets() []Target {
	out := make([]Target, len(natives))
	for i, n := range natives {
		out[i] = Target{Name: n.backend, tuning: n.tuning}
	}
	return out
}

// tuned are the targets whose tuning has, in listing order.
func tuned(has func(Tuning) bool) []Target {
	var out []Target
	for _, t := range Targets() {
		if has(t.tuning) {
			out = append(out, t)
		}
	}
	return out
}

// names are the targets' names.
func names(ts []Target) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// tunedNames are the names of the targets whose tuning has.
func tunedNames(has func(Tuning) bool) []string { return names(tuned(has)) }
