// Package registry is the one table of output backends, one line each, in
// kernelgen's one order: what list, doctor and build print, the commits of
// the series, and the native contracts of ops (ListIn). The CLI's list,
// doctor, build and patch read it; a backend's own folder
// (internal/backend/<name>) says everything else.
package registry

import (
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/internal/backend"
	"github.com/kernelgen/kernelgen/internal/backend/cpu"
	"github.com/kernelgen/kernelgen/internal/backend/cuda"
	"github.com/kernelgen/kernelgen/internal/backend/goref"
	"github.com/kernelgen/kernelgen/internal/backend/ir"
	"github.com/kernelgen/kernelgen/internal/backend/metal"
	"github.com/kernelgen/kernelgen/internal/backend/opencl"
	"github.com/kernelgen/kernelgen/internal/backend/sycl"
	"github.com/kernelgen/kernelgen/internal/backend/vulkan"
	"github.com/kernelgen/kernelgen/internal/integration"
	"github.com/kernelgen/kernelgen/ops"
)

var all = []*backend.Backend{
	goref.Backend,
	ir.Backend,
	metal.Backend,
	sycl.Backend,
	vulkan.Backend,
	cuda.Backend,
	opencl.Backend,
	cpu.Backend,
}

func init() { ops.ListIn(Names()) }

// All returns every backend, implemented or not, in listing order.
func All() []*backend.Backend { return all }

// Names lists every backend name.
func Names() []string {
	var s []string
	for _, b := range all {
		s = append(s, b.Name)
	}
	return s
}

// Implemented lists the backends that generate today.
func Implemented() []*backend.Backend {
	var out []*backend.Backend
	for _, b := range all {
		if b.Implemented() {
			out = append(out, b)
		}
	}
	return out
}

// Integrations are the integration manifests of the backends that have one
// (what `kernelgen patch` splices), in listing order: the series' order.
func Integrations() []*integration.Manifest {
	var out []*integration.Manifest
	for _, b := range Implemented() {
		if b.Integration != nil {
			out = append(out, b.Integration)
		}
	}
	return out
}

// Fusions are the backends' steps of the fusion form, in table order.
func Fusions() []*integration.Fusion {
	var out []*integration.Fusion
	for _, b := range Implemented() {
		if b.Fusion != nil {
			out = append(out, b.Fusion)
		}
	}
	return out
}

// Resolve turns a --backend value (a name or "all") into backends. Unknown
// names and backends that do not exist yet are errors naming the valid ones.
func Resolve(name string) ([]*backend.Backend, error) {
	if name == "all" {
		return Implemented(), nil
	}
	for _, b := range all {
		if b.Name == name {
			if !b.Implemented() {
				return nil, fmt.Errorf("backend %s is not implemented yet (issue #%d); implemented: %s", name, b.Issue, strings.Join(implementedNames(), ", "))
			}
			return []*backend.Backend{b}, nil
		}
	}
	return nil, fmt.Errorf("unknown backend %q; valid: all, %s", name, strings.Join(Names(), ", "))
}

func implementedNames() []string {
	var s []string
	for _, b := range Implemented() {
		s = append(s, b.Name)
	}
	return s
}
