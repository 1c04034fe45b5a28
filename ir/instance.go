package ir

import (
	"fmt"
	"strings"
)

// Instance is a kernel at one set of parameter values: the unit a backend
// compiles, names and checks. Values holds every non-derived param.
type Instance struct {
	Kernel *Kernel
	Values map[string]int64
}

// Literal spells param p's value as a C-family literal of its type: true
// or false, 16u for a U32, 16 for an I32. Every backend, check and bench
// spells a variant's template arguments and defines with it.
func (in Instance) Literal(p *Param) string {
	if p.Type == U32 {
		return fmt.Sprintf("%du", in.Values[p.Name])
	}
	return in.Bare(p)
}

// Bare spells param p's value without a type suffix: true or false, else
// the number (16 for a U32 too). Metal's instantiations and the upstream
// glue's dispatch tables write a variant so; the template parameter's type
// converts it.
func (in Instance) Bare(p *Param) string {
	v := in.Values[p.Name]
	if p.Type == Bool {
		return fmt.Sprint(v != 0)
	}
	return fmt.Sprint(v)
}

// TemplateArgs are the non-derived params' literals in the kernel's param
// order: a template's arguments.
func (in Instance) TemplateArgs() []string { return in.args(in.Literal) }

// BareTemplateArgs are TemplateArgs spelled by Bare.
func (in Instance) BareTemplateArgs() []string { return in.args(in.Bare) }

func (in Instance) args(spell func(*Param) string) []string {
	var out []string
	for _, p := range in.Kernel.Params {
		if p.Derived == nil {
			out = append(out, spell(p))
		}
	}
	return out
}

// String is the instance in the kernel's param order, e.g. "S_v=128,KDA=0".
func (in Instance) String() string {
	var parts []string
	for _, p := range in.Kernel.Params {
		if v, ok := in.Values[p.Name]; ok && p.Derived == nil {
			parts = append(parts, fmt.Sprintf("%s=%d", p.Name, v))
		}
	}
	return strings.Join(parts, ",")
}
