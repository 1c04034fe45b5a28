// Package backend is what an output backend is: a value with its name, its
// directory under generated/, what it generates and how its output is
// checked. Each backend lives in its own folder below this one
// (internal/backend/<name>) and is listed once in internal/registry; nothing
// else names a backend.
package backend

import (
	"context"
	"sync/atomic"

	"github.com/kernelgen/kernelgen/emit"
	"github.com/kernelgen/kernelgen/internal/integration"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/templates"
	"github.com/kernelgen/kernelgen/tools/toolchain"
)

// File is one generated file, its path relative to the output directory.
type File struct {
	Path string
	Data []byte
	Op   string
}

// Backend is one output target.
type Backend struct {
	Name    string
	Dir     string // subdirectory of generated/
	Summary string
	// Issue tracks the work for backends not implemented yet.
	Issue int
	// Reference: the backend writes every op under every contract (the Go
	// reference, the IR text); otherwise it builds the variants of each op
	// the variant table gives it (ops.Variant.BuiltOn).
	Reference bool
	// Generate is nil until the backend exists. Its files carry no
	// generated-file header: Generation adds it, upstream text never has it.
	Generate func() ([]File, error)
	// Verify, when set, compiles and checks the generated files with the
	// backend's real toolchain before anything is written. It returns a
	// one-line summary.
	Verify func(ctx context.Context, files []File, progress func(done, total int)) (string, error)
	// Integration, when set, is the backend's integration manifest: what
	// `kernelgen patch` splices into a ggml tree, its commit, and the glue
	// templates the review copy under generated/<dir>/glue renders too.
	Integration *integration.Manifest
	// Fusion, when set, is the backend's step in the fusion form of the
	// series (`kernelgen patch --form fusion`, docs/fusion.md).
	Fusion *integration.Fusion
	// Owns lists the files and folders outside internal/backend/<name> that
	// belong to this backend and may therefore name it: its emitter, its
	// templates, its host-emulation skin, its benchmarks.
	Owns []string

	// Tools are the external programs of the backend's checks (its
	// compilers, validators, drivers), which `kernelgen doctor` probes
	// after the shared ones (toolchain.Known).
	Tools []toolchain.Tool
	// Cache, when set, is where the backend keeps what its checks compiled.
	Cache *Cache
	// Doctor, when set, is what `kernelgen doctor` reports of the backend
	// beyond its tools, read from their probes (probed: Tools' results, in
	// their order).
	Doctor func(ctx context.Context, probed []toolchain.Result) Fact
}

// Cache is a backend's cache of compiled programs: doctor --json's
// cache.<Key>, at Dir.
type Cache struct {
	Key string
	Dir func() (string, error)
}

// Fact is what `kernelgen doctor` says of a backend beyond its tools: the
// value doctor --json holds under Key (a JSON object, documented in the
// README) and the lines of the text report.
type Fact struct {
	Key   string
	Value any
	Lines []string
}

// Glue is the backend's ggml glue (templates/<name>), which its
// integration manifest names; nil for a backend without one.
func (b *Backend) Glue() *templates.Target {
	if b.Integration == nil {
		return nil
	}
	return b.Integration.Glue
}

// Implemented reports whether the backend can generate.
func (b *Backend) Implemented() bool { return b.Generate != nil }

// Generation is what one build generates for one backend, built once:
// the files build writes (Written, each with its header) are the files
// --check compares and the files Verify compiles and runs, so what is
// checked is, byte for byte, what is written.
type Generation struct {
	Backend *Backend
	written []File
}

// generations counts Generation calls, so tests can hold a build to one
// per backend.
var generations atomic.Int64

// Generations is how many generations this process has built.
func Generations() int64 { return generations.Load() }

// Generation runs the backend's generator once and marks its files with
// the generated-file header (emit.Mark), the one place it is added.
func (b *Backend) Generation() (*Generation, error) {
	generations.Add(1)
	files, err := b.Generate()
	if err != nil {
		return nil, err
	}
	out := make([]File, len(files))
	for i, f := range files {
		out[i] = File{Path: f.Path, Data: emit.Mark(b.Name, f.Path, f.Data), Op: f.Op}
	}
	return &Generation{Backend: b, written: out}, nil
}

// Written is what the build writes under generated/ for the backend.
// Callers must not modify it.
func (g *Generation) Written() []File { return g.written }

// Verify runs the backend's toolchain checks on the written files and
// returns their summary; "" for a backend without checks.
func (g *Generation) Verify(ctx context.Context, progress func(done, total int)) (string, error) {
	if g.Backend.Verify == nil {
		return "", nil
	}
	return g.Backend.Verify(ctx, g.written, progress)
}

// Written is the files of a fresh Generation.
func (b *Backend) Written() ([]File, error) {
	g, err := b.Generation()
	if err != nil {
		return nil, err
	}
	return g.Written(), nil
}

// Builds reports whether the backend generates op.
func (b *Backend) Builds(op *ops.Op) bool {
	if !b.Implemented() {
		return false
	}
	return b.Reference || BuiltOn(op, b.Target())
}

// Target is the backend as ops knows it (its tuning), resolved by name.
func (b *Backend) Target() ops.Target { return ops.TargetOf(b.Name) }

// BuiltOn: some variant of op is built on target t.
func BuiltOn(op *ops.Op, t ops.Target) bool { return len(t.Variants(op.Name)) > 0 }

// KernelsFor returns an op's kernels under the given contracts (the one
// shared kernel for ops whose IR is marked arith-free).
func KernelsFor(op *ops.Op, ariths ...ir.Arith) ([]*ir.Kernel, error) {
	if k, err := op.Kernel(ir.Portable); err != nil || k.ArithFree {
		return []*ir.Kernel{k}, err
	}
	var ks []*ir.Kernel
	for _, a := range ariths {
		k, err := op.Kernel(a)
		if err != nil {
			return nil, err
		}
		ks = append(ks, k)
	}
	return ks, nil
}

// PerOp emits every op the named backend builds as one unit (UnitOf): its
// portable and native kernels together and their instances. emit returns
// the unit's files, paths relative to the backend's directory dir.
func PerOp(name, dir string, emit func(u ir.Unit) ([]File, error)) ([]File, error) {
	var files []File
	t := ops.TargetOf(name)
	for _, op := range ops.All() {
		if !BuiltOn(op, t) {
			continue
		}
		u, err := UnitOf(op, t)
		if err != nil {
			return nil, err
		}
		fs, err := emit(u)
		if err != nil {
			return nil, err
		}
		for _, f := range fs {
			f.Path, f.Op = dir+"/"+f.Path, op.Name
			files = append(files, f)
		}
	}
	return files, nil
}

// UnitOf is what an emitter takes of op on target t: its kernels under the
// portable and t's native contract (or its one arith-free kernel), each at
// every variant t builds.
func UnitOf(op *ops.Op, t ops.Target) (ir.Unit, error) {
	contracts := []ir.Arith{ir.Portable, ir.Native(t.Name)}
	ks, err := KernelsFor(op, contracts...)
	if err != nil {
		return ir.Unit{}, err
	}
	u := ir.Unit{Op: op.Name, Summary: op.Summary, Kernels: ks, Contracts: contracts}
	for _, k := range ks {
		for _, v := range t.Variants(op.Name) {
			u.Instances = append(u.Instances, v.Of(k))
		}
	}
	return u, nil
}

// One is an op's single source file.
func One(path string, src []byte, err error) ([]File, error) {
	if err != nil {
		return nil, err
	}
	return []File{{Path: path, Data: src}}, nil
}

// WithGlue appends the review copy of the backend's glue under <dir>/glue/:
// the glue templates its integration manifest names, headed by the places
// the manifest gives its sections.
func WithGlue(files []File, dir string, m *integration.Manifest) ([]File, error) {
	glueFiles, err := templates.Glue(m.Glue, m.Heading)
	if err != nil {
		return nil, err
	}
	for _, f := range glueFiles {
		files = append(files, File{Path: dir + "/glue/" + f.Name, Data: f.Data})
	}
	return files, nil
}
