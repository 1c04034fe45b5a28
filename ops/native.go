package ops

import (
	"fmt"
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
	// listed is the contract's place among Ariths' native contracts (1
	// first): the order generated/ and kernelgen list write contracts in,
	// fixed once a backend has one.
	listed int
	style  style
	tuning Tuning
}

// natives are the declarations, by listed order once every file's init
// has run.
var natives []native

// declare adds a backend's declaration; each ops/backend_<name>.go calls
// it from its init.
func declare(n native) {
	for _, d := range natives {
		if d.backend == n.backend || d.listed == n.listed {
			panic(fmt.Sprintf("ops: %s and %s both declare contract %d or one backend twice", d.backend, n.backend, n.listed))
		}
	}
	natives = append(natives, n)
	sort.Slice(natives, func(i, j int) bool { return natives[i].listed < natives[j].listed })
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
