// Package opencl runs the generated OpenCL C kernels through clrun on an
// OpenCL device (PoCL in CI) and compares them with the Go reference:
// portable bit for bit, native within NMSE (cases.Case.Compare). Only the
// variants the OpenCL backend builds are run (ops.Target.Variants "opencl").
//
// Cost: PoCL compiles a program's kernels at their first launch (LLVM, for
// the workgroup size) and caches them ($POCL_CACHE_DIR, else
// ~/.cache/pocl). Warm, the sample runs in seconds; cold, every variant
// takes ~2 minutes of CPU. `kernelgen build --check` runs the sample
// (Sample) and builds, without running, every other variant; go test
// ./verify/opencl runs them all in the full tier (KERNELGEN_FULL=1, CI),
// -args -sample the sample. $KERNELGEN_CL_DEVICE picks another device
// ("#N" or part of its name).
package opencl

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"

	mark "github.com/kernelgen/kernelgen/emit"
	emit "github.com/kernelgen/kernelgen/emit/opencl"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/clrun"
)

// Contracts are the OpenCL backend's.
var Contracts = []ir.Arith{ir.Portable, ir.Native("opencl")}

// Source is the .cl file of an op exactly as `kernelgen build --backend
// opencl` writes it, header included, so the programs built here and by
// build --check are one PoCL cache entry.
func Source(op *ops.Op) ([]byte, error) {
	var ks []*ir.Kernel
	for _, a := range Contracts {
		if op.ArithFree() && a.Native {
			continue
		}
		k, err := op.Kernel(a)
		if err != nil {
			return nil, err
		}
		ks = append(ks, k)
	}
	src, err := emit.Emit(ir.Unit{Op: op.Name, Summary: op.Summary, Kernels: ks})
	if err != nil {
		return nil, err
	}
	return mark.Mark("opencl", op.Name+".cl", src), nil
}

var sources sync.Map // op name -> []byte

func source(op *ops.Op) ([]byte, error) {
	if s, ok := sources.Load(op.Name); ok {
		return s.([]byte), nil
	}
	s, err := Source(op)
	if err != nil {
		return nil, err
	}
	sources.Store(op.Name, s)
	return s, nil
}

// Programs collects the programs a batch builds: one per op and variant
// (the file holds every contract's kernel).
type Programs struct {
	// Sources, when set, holds the .cl files to build by op name (as
	// `kernelgen build` is about to write them); otherwise Source's.
	Sources map[string][]byte
	// Options come before each program's defines: the OpenCL C version
	// ggml-opencl builds for on the device (-cl-std, ProgramOptions), as
	// BuildAll and RunCases set them.
	Options string
	list    []clrun.Program
	index   map[string]int
}

// Add returns the index of the program that holds k's variant v.
func (p *Programs) Add(k *ir.Kernel, v ops.Variant) (int, error) {
	op, err := ops.Lookup(k.Name)
	if err != nil {
		return 0, err
	}
	defs, err := emit.Defines(v.Of(k))
	if err != nil {
		return 0, err
	}
	opts := strings.TrimSpace(p.Options + " " + emit.BuildOptions(defs))
	key := op.Name + " " + opts
	if i, ok := p.index[key]; ok {
		return i, nil
	}
	src, ok := p.Sources[op.Name]
	if !ok {
		if src, err = source(op); err != nil {
			return 0, err
		}
	}
	if p.index == nil {
		p.index = map[string]int{}
	}
	p.index[key] = len(p.list)
	p.list = append(p.list, clrun.Program{Source: src, Options: opts, Name: "generated/opencl/" + emit.FileName(op.Name) + " [" + v.String() + "]"})
	return len(p.list) - 1, nil
}

// List is the programs in the order Add numbered them.
func (p *Programs) List() []clrun.Program { return p.list }

// Job turns a case into a clrun job: the case's buffers in order, and per
// launch the kernel's buffers (as Bind names them) then its args in IR
// order, Launch.Grid workgroups of Launch.Workgroup work-items.
func Job(c *cases.Case, progs *Programs) (clrun.Job, error) {
	var job clrun.Job
	index := map[string]int{}
	for i, b := range c.Buffers {
		index[b.Name] = i
		job.Buffers = append(job.Buffers, b.Bytes())
	}
	for li, l := range c.Launches {
		k := l.Kernel
		if len(l.Bind) != len(k.Buffers) {
			return job, fmt.Errorf("%s: launch %d (%s) binds %d buffers, the kernel has %d", c.Name, li, k.ID(), len(l.Bind), len(k.Buffers))
		}
		pi, err := progs.Add(k, ops.Variant{Op: l.Op.Name, Values: l.Params})
		if err != nil {
			return job, err
		}
		cl := clrun.Launch{Program: pi, Kernel: emit.KernelName(k), Groups: l.Grid, Local: l.Workgroup}
		for i, name := range l.Bind {
			bi, ok := index[name]
			if !ok {
				return job, fmt.Errorf("%s: launch %d (%s) binds %s to %s, which the case lacks", c.Name, li, k.ID(), k.Buffers[i].Name, name)
			}
			cl.Args = append(cl.Args, clrun.Arg{Buffer: bi})
		}
		for _, a := range k.Args {
			v, ok := l.Args[a.Name]
			if !ok {
				return job, fmt.Errorf("%s: arg %s has no value", k.ID(), a.Name)
			}
			cl.Args = append(cl.Args, clrun.Arg{Buffer: -1, Value: v})
		}
		job.Launches = append(job.Launches, cl)
	}
	return job, nil
}

// Outputs names a job's buffers as the case does, for Case.Compare.
func Outputs(c *cases.Case, bufs [][]byte) map[string][]byte {
	got := map[string][]byte{}
	for i, b := range c.Buffers {
		if i < len(bufs) {
			got[b.Name] = bufs[i]
		}
	}
	return got
}

// Sample is the representative subset the default check runs: every op and
// contract, at S_v 16 (one row per lane) and 128 (four rows per lane, the
// 16x4 tiling), d_conv 3 and 4 (the float4 taps), each with every
// KDA / KEEP_RS / SILU setting. All, instead, is every variant.
func Sample(v ops.Variant) bool {
	if sv, ok := v.Values["S_v"]; ok && sv != 16 && sv != 128 {
		return false
	}
	if dc, ok := v.Values["d_conv"]; ok && dc != 3 && dc != 4 {
		return false
	}
	return true
}

// Variants lists what the OpenCL backend builds of op, all of them or the sample.
func Variants(op *ops.Op, all bool) []ops.Variant {
	var out []ops.Variant
	for _, v := range ops.TargetOf("opencl").Variants(op.Name) {
		if all || Sample(v) {
			out = append(out, v)
		}
	}
	return out
}

// Seed makes a case reproducible from its name.
func Seed(name string) uint64 {
	var h uint64 = 14695981039346656037
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * 1099511628211
	}
	return h
}

// Report is what Check did.
type Report struct {
	Device           clrun.Device
	Programs, Cases  int
	BitExact, Native int
}

// BuildAll builds every program of every variant the OpenCL backend builds
// (both contracts' kernels are in each), split into parts batches run side
// by side, and returns how many it built.
func BuildAll(ctx context.Context, r *clrun.Runner, sources map[string][]byte, parts int) (int, error) {
	dev, err := r.Selected(ctx)
	if err != nil {
		return 0, err
	}
	progs := Programs{Sources: sources, Options: ProgramOptions(dev)}
	for _, op := range ops.All() {
		k, err := op.Kernel(ir.Portable)
		if err != nil {
			return 0, err
		}
		for _, v := range ops.TargetOf("opencl").Variants(op.Name) {
			if _, err := progs.Add(k, v); err != nil {
				return 0, err
			}
		}
	}
	list := progs.List()
	if parts < 1 {
		parts = 1
	}
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := 0; p < parts; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			_, errs[p] = r.Run(ctx, clrun.Batch{Programs: list[p*len(list)/parts : (p+1)*len(list)/parts]})
		}(p)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return 0, fmt.Errorf("opencl: %w", err)
		}
	}
	return len(list), nil
}

// Check builds every program the cases need on the device and runs one
// random case per op, contract and variant (Variants), split into parts
// batches run side by side. It fails on the first case that differs.
func Check(ctx context.Context, r *clrun.Runner, sources map[string][]byte, all bool, parts int, progress func(done, total int)) (*Report, error) {
	var cs []*cases.Case
	for _, op := range ops.All() {
		for _, a := range Contracts {
			if op.ArithFree() && a.Native {
				continue
			}
			for _, v := range Variants(op, all) {
				name := fmt.Sprintf("%s@%s[%s]", op.Name, a, v)
				c, err := cases.Random(op.Name, a, rand.New(rand.NewPCG(Seed(name), 5)), cases.Small, &v)
				if err != nil {
					return nil, err
				}
				cs = append(cs, c)
			}
		}
	}
	rep := &Report{Cases: len(cs)}
	if err := RunCases(ctx, r, sources, cs, parts, progress, func(c *cases.Case, got map[string][]byte) error {
		if err := c.Compare(got); err != nil {
			return err
		}
		if c.Arith.Native {
			rep.Native++
		} else {
			rep.BitExact++
		}
		return nil
	}, &rep.Programs); err != nil {
		return nil, err
	}
	return rep, nil
}

// RunCases runs cases in parts batches, grouped by op so that a batch
// builds each program once, and calls check on each result (one at a time).
// programs, when not nil, receives the number of programs built.
func RunCases(ctx context.Context, r *clrun.Runner, sources map[string][]byte, cs []*cases.Case, parts int, progress func(done, total int), check func(*cases.Case, map[string][]byte) error, programs *int) error {
	if parts < 1 {
		parts = 1
	}
	dev, err := r.Selected(ctx)
	if err != nil {
		return err
	}
	// Cases sharing a program go into one batch: sort by op and variant.
	sorted := append([]*cases.Case(nil), cs...)
	sort.SliceStable(sorted, func(i, j int) bool {
		return sorted[i].Op+sorted[i].Variant.String() < sorted[j].Op+sorted[j].Variant.String()
	})
	batches := make([][]*cases.Case, parts)
	for i, c := range sorted {
		p := i * parts / len(sorted)
		batches[p] = append(batches[p], c)
	}
	var (
		mu    sync.Mutex
		done  int
		built int
		errs  []string
		wg    sync.WaitGroup
	)
	for _, batch := range batches {
		if len(batch) == 0 {
			continue
		}
		wg.Add(1)
		go func(batch []*cases.Case) {
			defer wg.Done()
			fail := func(err error) {
				mu.Lock()
				errs = append(errs, err.Error())
				mu.Unlock()
			}
			progs := Programs{Sources: sources, Options: ProgramOptions(dev)}
			var b clrun.Batch
			for _, c := range batch {
				j, err := Job(c, &progs)
				if err != nil {
					fail(err)
					return
				}
				b.Jobs = append(b.Jobs, j)
			}
			b.Programs = progs.List()
			out, err := r.Run(ctx, b)
			if err != nil {
				fail(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			built += len(b.Programs)
			for i, c := range batch {
				if err := check(c, Outputs(c, out[i])); err != nil {
					errs = append(errs, err.Error())
				}
				done++
				if progress != nil {
					progress(done, len(cs))
				}
			}
		}(batch)
	}
	wg.Wait()
	if programs != nil {
		*programs = built
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		more := ""
		if len(errs) > 5 {
			more = fmt.Sprintf("\n(and %d more)", len(errs)-5)
			errs = errs[:5]
		}
		return fmt.Errorf("opencl: %s%s", strings.Join(errs, "\n"), more)
	}
	return nil
}

// ProgramOptions are the options kernelgen's own programs build with on d:
// ggml-opencl's -cl-std, not its fast-math flags. Each program holds the
// portable kernel beside the native one, and the portable contract's bits
// need IEEE denormals, which -cl-fast-relaxed-math lets the compiler flush
// (PoCL does: results one ulp off, all of them denormal). The upstream
// kernels, native only, run under ggml-opencl's whole options in
// internal/upstream, and under these where their bits are compared with
// another program's.
func ProgramOptions(d clrun.Device) string { return "-cl-std=" + d.GGMLStd }
