package emulate

import (
	"context"
	"fmt"
	"sync"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

// RunTimeout bounds one emulated launch; a hang is a deadlock, reported by
// hostemu with the kernel's name.
var RunTimeout = hostemu.DefaultTimeout

type programKey struct {
	lang  *hostemu.Lang
	op    string
	arith string
}

type programOnce struct {
	once sync.Once
	p    program
	err  error
}

// programs memoizes emittedProgram: emitting is deterministic, and the
// build cache key hashes the whole source anyway.
var programs sync.Map // programKey -> *programOnce

func cachedProgram(lang *hostemu.Lang, op *ops.Op, a ir.Arith) (program, error) {
	key := programKey{lang, op.Name, a.String()}
	if op.ArithFree() {
		key.arith = "" // one kernel for every contract
	}
	v, _ := programs.LoadOrStore(key, new(programOnce))
	e := v.(*programOnce)
	e.once.Do(func() { e.p, e.err = emittedProgram(lang, op, a) })
	return e.p, e.err
}

// source is the program a launch of op under contract a runs in.
type source func(op *ops.Op, a ir.Arith) (program, error)

// emitted runs every launch in the program emitted here from the IR.
func emitted(lang *hostemu.Lang) source {
	return func(op *ops.Op, a ir.Arith) (program, error) { return cachedProgram(lang, op, a) }
}

// writtenSource runs every launch in the program of the file written for
// its op (written: by op name). Every op the backend builds needs one.
func writtenSource(lang *hostemu.Lang, backend string, written map[string]File) (source, error) {
	progs := map[string]program{}
	for _, op := range ops.All() {
		if len(ops.TargetOf(backend).Variants(op.Name)) == 0 {
			continue
		}
		f, ok := written[op.Name]
		if !ok {
			return nil, fmt.Errorf("emulate: no %s file was written for op %s", backend, op.Name)
		}
		p, err := writtenProgram(lang, backend, op, f)
		if err != nil {
			return nil, err
		}
		progs[op.Name] = p
	}
	return func(op *ops.Op, _ ir.Arith) (program, error) {
		p, ok := progs[op.Name]
		if !ok {
			return program{}, fmt.Errorf("emulate: %s does not build op %s", backend, op.Name)
		}
		return p, nil
	}, nil
}

// WarningFlags make every warning of -Wall an error when the generated
// kernels (and their harness) are compiled: ggml builds with -Wall, and
// generated code must not add to what its users read (hostemu.Flags leaves
// out the one gcc warning whose verdict depends on the gcc version).
var WarningFlags = []string{"-Wall", "-Werror"}

// BuildFor builds (through hostemu's cache) every program c's launches need
// in lang, so a caller can build ahead of running and tell build failures
// from run failures.
func BuildFor(ctx context.Context, lang *hostemu.Lang, c *cases.Case) ([]*hostemu.Binary, error) {
	return BuildWith(ctx, lang, c, hostemu.Options{})
}

// BuildWith is BuildFor with hostemu options (another compiler, a real
// SYCL implementation); WarningFlags come before o.Flags.
func BuildWith(ctx context.Context, lang *hostemu.Lang, c *cases.Case, o hostemu.Options) ([]*hostemu.Binary, error) {
	bins, _, err := buildLaunches(ctx, emitted(lang), c, o)
	return bins, err
}

// buildProgram builds p as every launch runs it: with WarningFlags before
// o.Flags (the flags are part of hostemu's cache key, so a build ahead of
// the runs must use this too, or it compiles the program a second time).
func buildProgram(ctx context.Context, p hostemu.Program, o hostemu.Options) (*hostemu.Binary, error) {
	o.Flags = append(append([]string{}, WarningFlags...), o.Flags...)
	return hostemu.BuildWith(ctx, p, o)
}

// buildLaunches builds the program of each of c's launches, from src.
func buildLaunches(ctx context.Context, src source, c *cases.Case, o hostemu.Options) ([]*hostemu.Binary, []program, error) {
	var bins []*hostemu.Binary
	var progs []program
	for _, l := range c.Launches {
		p, err := src(l.Op, c.Arith)
		if err != nil {
			return nil, nil, err
		}
		bin, err := buildProgram(ctx, p.Program, o)
		if err != nil {
			return nil, nil, err
		}
		bins, progs = append(bins, bin), append(progs, p)
	}
	return bins, progs, nil
}

// Run replays c's launches in order in lang at subgroup width width, each
// launch on the buffers the previous one left, and returns every case
// buffer afterwards, by case buffer name (what cases.Case.Compare takes).
func Run(ctx context.Context, lang *hostemu.Lang, c *cases.Case, width int) (map[string][]byte, error) {
	return RunWith(ctx, lang, c, width, hostemu.Options{})
}

// RunWith is Run with the programs built by BuildWith(o). Under
// o.Real the implementation picks the sub-group width; width only
// fills the job.
func RunWith(ctx context.Context, lang *hostemu.Lang, c *cases.Case, width int, o hostemu.Options) (map[string][]byte, error) {
	return runLaunches(ctx, emitted(lang), c, width, o)
}

// runLaunches is RunWith on the programs of src.
func runLaunches(ctx context.Context, src source, c *cases.Case, width int, o hostemu.Options) (map[string][]byte, error) {
	bins, progs, err := buildLaunches(ctx, src, c, o)
	if err != nil {
		return nil, err
	}
	state := make(map[string][]byte, len(c.Buffers))
	for _, b := range c.Buffers {
		if b.Elem != ir.F32 && b.Elem != ir.I32 {
			return nil, fmt.Errorf("emulate: %s: buffer %s has element type %s", c.Name, b.Name, b.Elem)
		}
		state[b.Name] = b.Bytes()
	}
	for i, l := range c.Launches {
		job, err := launchJob(progs[i], l, state, width)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		out, err := bins[i].Run(ctx, job, RunTimeout)
		if err != nil {
			return nil, fmt.Errorf("%s: launch %d (%s) at subgroup width %d: %w", c.Name, i, l.Kernel.ID(), width, err)
		}
		for j, kb := range l.Kernel.Buffers {
			got, ok := out[kb.Name]
			if !ok || len(got) != len(state[l.Bind[j]]) {
				return nil, fmt.Errorf("%s: launch %d (%s) returned no or a resized buffer %s", c.Name, i, l.Kernel.ID(), kb.Name)
			}
			state[l.Bind[j]] = got
		}
	}
	return state, nil
}

// LaunchJob starts the job of one launch of a KernelProgram: the variant
// (its index in the program's variants), the geometry (workgroups and
// threads per workgroup, x y z) and the subgroup width. The caller appends
// the kernel's args and buffers by their IR names.
func LaunchJob(variant int, grid, workgroup [3]uint32, width int) hostemu.Job {
	job := hostemu.Job{SubgroupWidth: width, Args: []hostemu.Arg{hostemu.U32(ArgVariant, uint32(variant))}}
	for d := 0; d < 3; d++ {
		job.Args = append(job.Args, hostemu.U32(geometryArgs[d], grid[d]), hostemu.U32(geometryArgs[3+d], workgroup[d]))
	}
	return job
}

// launchJob is one launch's job: the kernel's buffers bound to the case's,
// its args, the variant and the geometry.
func launchJob(p program, l cases.Launch, state map[string][]byte, width int) (hostemu.Job, error) {
	k := l.Kernel
	if len(l.Bind) != len(k.Buffers) {
		return hostemu.Job{}, fmt.Errorf("%s: %d bindings for %d buffers", k.ID(), len(l.Bind), len(k.Buffers))
	}
	vi, err := p.instance(k, l.Params)
	if err != nil {
		return hostemu.Job{}, err
	}
	job := LaunchJob(vi, l.Grid, l.Workgroup, width)
	for _, a := range k.Args {
		bits, ok := l.Args[a.Name]
		if !ok {
			return hostemu.Job{}, fmt.Errorf("%s: arg %s has no value", k.ID(), a.Name)
		}
		job.Args = append(job.Args, hostemu.Arg{Name: a.Name, Bits: bits})
	}
	bound := map[string]string{}
	for i, kb := range k.Buffers {
		name := l.Bind[i]
		// hostemu gives every job buffer its own memory, so two kernel
		// buffers cannot share one case buffer.
		if prev, dup := bound[name]; dup {
			return hostemu.Job{}, fmt.Errorf("%s: buffers %s and %s both bind %s; aliasing is not supported", k.ID(), prev, kb.Name, name)
		}
		bound[name] = kb.Name
		data, ok := state[name]
		if !ok {
			return hostemu.Job{}, fmt.Errorf("%s: buffer %s is bound to %s, which the case lacks", k.ID(), kb.Name, name)
		}
		job.Buffers = append(job.Buffers, hostemu.Buffer{Name: kb.Name, ElemSize: 4, Data: data})
	}
	return job, nil
}
