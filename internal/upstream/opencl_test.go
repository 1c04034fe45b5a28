package upstream_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/tier"

	emit "github.com/kernelgen/kernelgen/emit/opencl"
	backendopencl "github.com/kernelgen/kernelgen/internal/backend/opencl"
	"github.com/kernelgen/kernelgen/internal/upstream"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/clrun"
	verifycl "github.com/kernelgen/kernelgen/verify/opencl"
)

// clPad is the bytes before each tensor in its cl_mem: every buffer is
// bound at a nonzero offset, as ggml-opencl binds a tensor (extra->offset
// + view_offs), so a kernel that ignores its offset reads the pad.
const clPad = 64

// clProgram is one upstream .cl file and the kernel it defines.
type clProgram struct {
	file   string
	src    []byte
	k      *ir.Kernel
	shared *ops.Shared // nil for the gather
	fn     string
}

// The kernels ggml-opencl gets build with ggml-opencl's own options and
// the variant defines its glue passes, and run every variant of ops A-D
// (three sampled per op in the fast tier; the gather included) on PoCL like the Go reference: each launch of a
// case runs its family's kernel with IDS set as the op needs, each buffer
// bound at an offset.
func TestOpenCLKernelsRunLikeTheGoReference(t *testing.T) {
	ctx := tier.Context(t)
	r, err := clrun.Build(ctx)
	needTool(t, err, clrun.ErrMissingTool)
	dev, err := r.Selected(ctx)
	needTool(t, err, clrun.ErrNoDevice)
	// ggml-opencl's options on this device: -cl-std=CL<the OpenCL C version
	// it takes> and its fast-math flags
	opts := dev.GGMLOptions()
	byOp, err := openCLPrograms()
	if err != nil {
		t.Fatal(err)
	}
	fams, err := upstream.Families()
	if err != nil {
		t.Fatal(err)
	}
	var (
		batch   clrun.Batch
		all     []*cases.Case
		index   = map[string]int{}
		maxNMSE float64
		worst   string
	)
	for _, f := range fams {
		for _, op := range []string{f.Shared.Plain, f.Shared.Ids} {
			variants := ops.TargetOf("opencl").Variants(op)
			for _, i := range tier.Sample(t, len(variants), 3) {
				v := variants[i]
				rng := rand.New(rand.NewPCG(uint64(i), 23))
				c, err := cases.Random(op, ir.Native("opencl"), rng, cases.Small, &v)
				if err != nil {
					t.Fatal(err)
				}
				job, err := openCLJob(c, byOp, opts, &batch, index)
				if err != nil {
					t.Fatal(err)
				}
				batch.Jobs = append(batch.Jobs, job)
				all = append(all, c)
			}
		}
	}
	out, err := r.Run(ctx, batch)
	if err != nil {
		t.Fatalf("on %s: %v", dev.Name, err)
	}
	for i, c := range all {
		got := map[string][]byte{}
		for j, b := range c.Buffers {
			data := out[i][j]
			if string(data[:clPad]) != string(untouchedPad()) {
				t.Errorf("%s: the bytes before %s were written (a buffer offset was not applied)", c.Name, b.Name)
			}
			got[b.Name] = data[clPad:]
		}
		for j := len(c.Buffers); j < len(out[i]); j++ {
			if string(out[i][j]) != string(untouched()) {
				t.Errorf("%s: the kernel wrote a buffer its op does not have", c.Name)
			}
		}
		if err := c.Compare(got); err != nil {
			t.Error(err)
		}
		if n := nmse(c, got); n > maxNMSE {
			maxNMSE, worst = n, c.Name
		}
	}
	t.Logf("%s (%s, %s): %d cases, %d programs built with %q; largest NMSE against the Go reference %.3g (%s), tolerance %g; %s",
		dev.Name, dev.Platform, dev.CVersion, len(all), len(batch.Programs), opts, maxNMSE, worst, cases.NMSETolerance, reductionPath(dev))
}

// The fusion form's kernels (backendopencl.FusionKernels: the GDN kernel
// writing the snapshot slots too), built with ggml-opencl's options and
// defines, run ops A-D and ops B and D with slots (ops.SlotsOp,
// ops.ConvSlotsOp, K up to 3) on PoCL like the Go reference (three variants
// sampled per slots op in the fast tier); and they give the bits of the
// non-fused path (cases.AddUnfused: kernelgen's own base GATED_DELTA_NET
// with its snapshots, fed the gathered prior states; SSM_CONV over the
// gathered taps and the tokens, SiLU off): the attention, the final state,
// the conv output and every snapshot slot, bit for bit.
//
// That comparison builds both programs with verifycl.ProgramOptions, without
// the fast-math flags: under ggml-opencl's -cl-unsafe-math-optimizations
// PoCL regroups products differently in two programs of the same arithmetic
// (docs/runtimes.md), so their bits compare only where the compiler keeps
// the source's order. The run under ggml's options is held to the Go
// reference.
func TestOpenCLFusionKernelsRunLikeTheGoReference(t *testing.T) {
	ctx := tier.Context(t)
	r, dev := openCLDevice(t)
	opts := dev.GGMLOptions()
	ks, err := upstream.FusionKernels("opencl")
	if err != nil {
		t.Fatal(err)
	}
	byOp, err := programsOf(ks, backendopencl.FusionKernels)
	if err != nil {
		t.Fatal(err)
	}
	if byOp[ops.SlotsOp] == nil {
		t.Fatal("no fusion kernel runs the slots op")
	}
	fams, err := upstream.Families()
	if err != nil {
		t.Fatal(err)
	}
	strict := verifycl.ProgramOptions(dev)
	gen := &verifycl.Programs{Options: strict}
	var (
		batch  clrun.Batch
		all    []*cases.Case
		checks []func(map[string][]byte) error
		index  = map[string]int{}
	)
	for _, f := range fams {
		fops := []string{f.Shared.Plain, f.Shared.Ids}
		if f.Shared.Slots != "" {
			fops = append(fops, f.Shared.Slots)
		}
		for _, op := range fops {
			variants := ops.TargetOf("opencl").Variants(op)
			// the fast tier: three of the slots op (the kernel the ops form's
			// tests do not run) and one of each other; PoCL's builds are the cost
			k := 1
			if op == f.Shared.Slots {
				k = 3
			}
			for _, i := range tier.SampleOf(t, op, len(variants), k) {
				v := variants[i]
				c, err := cases.Random(op, ir.Native("opencl"), rand.New(rand.NewPCG(uint64(i), 29)), cases.Small, &v)
				if err != nil {
					t.Fatal(err)
				}
				job, err := openCLJobOn(c, byOp, nil, opts, &batch, index)
				if err != nil {
					t.Fatal(err)
				}
				batch.Jobs = append(batch.Jobs, job)
				all, checks = append(all, c), append(checks, nil)
				if op != f.Shared.Slots || v.Values["SILU"] == 1 { // ggml runs SILU as a node of its own
					continue
				}
				// the same case again beside the non-fused path, both
				// built without the fast-math flags
				c, err = cases.Random(op, ir.Native("opencl"), rand.New(rand.NewPCG(uint64(i), 29)), cases.Small, &v)
				if err != nil {
					t.Fatal(err)
				}
				check, err := cases.AddUnfused(c, "opencl")
				if err != nil {
					t.Fatal(err)
				}
				if job, err = openCLJobOn(c, byOp, gen, strict, &batch, index); err != nil {
					t.Fatal(err)
				}
				batch.Jobs = append(batch.Jobs, job)
				all, checks = append(all, c), append(checks, check)
			}
		}
	}
	out, err := r.Run(ctx, batch)
	if err != nil {
		t.Fatalf("on %s: %v", dev.Name, err)
	}
	unfused := 0
	for i, c := range all {
		pad := clPad
		if checks[i] != nil {
			pad = 0
		}
		got := map[string][]byte{}
		for j, b := range c.Buffers {
			got[b.Name] = out[i][j][pad:]
		}
		if err := c.Compare(got); err != nil {
			t.Error(err)
		}
		if checks[i] != nil {
			if err := checks[i](got); err != nil {
				t.Errorf("%s: the slots kernel and the non-fused path differ: %v", c.Name, err)
			}
			unfused++
		}
	}
	if unfused == 0 {
		t.Fatal("no case compared with the non-fused path")
	}
	t.Logf("%s (%s): %d cases on the fusion form's kernels built with %q, %d of ops B and D with slots bit for bit equal to the non-fused path, both built with %q; %d programs",
		dev.Name, dev.Platform, len(all)-unfused, opts, unfused, strict, len(batch.Programs))
}

// reductionPath says which branch of the kernels' reductions d runs: with
// none of the shuffle extensions the kernels test for (PoCL), SUBGROUP_SIZE
// is 0 and every reduction goes through local memory.
func reductionPath(d clrun.Device) string {
	for _, ext := range []string{"cl_khr_subgroup_shuffle", "cl_intel_subgroups", "cl_qcom_subgroup_shuffle"} {
		if d.Has(ext) && (ext != "cl_qcom_subgroup_shuffle" || d.Has("cl_khr_subgroups")) {
			return "reductions by " + ext + " where the subgroup spans them"
		}
	}
	return "every reduction through local memory (no subgroup shuffle)"
}

// openCLDevice is the runner and its device (PoCL in CI), or a skip where
// there is none (a failure with KERNELGEN_REQUIRE_TOOLS).
func openCLDevice(t *testing.T) (*clrun.Runner, clrun.Device) {
	t.Helper()
	r, err := clrun.Build(tier.Context(t))
	needTool(t, err, clrun.ErrMissingTool)
	dev, err := r.Selected(tier.Context(t))
	needTool(t, err, clrun.ErrNoDevice)
	return r, dev
}

// openCLPrograms are UpstreamKernels' files by the op each runs: a family's
// plain and ids ops, and the ids op's gather.
func openCLPrograms() (map[string]*clProgram, error) {
	ks, err := upstream.Kernels("opencl")
	if err != nil {
		return nil, err
	}
	return programsOf(ks, backendopencl.UpstreamKernels)
}

// programsOf are files' programs (rendered from ks, in order) by the op each
// runs.
func programsOf(ks []upstream.Kernel, render func() ([]upstream.File, error)) (map[string]*clProgram, error) {
	files, err := render()
	if err != nil {
		return nil, err
	}
	if len(files) != len(ks) {
		return nil, fmt.Errorf("%d files for %d kernels", len(files), len(ks))
	}
	return upstream.Index(ks, func(i int, k upstream.Kernel) *clProgram {
		return &clProgram{file: files[i].Name, src: files[i].Data, k: k.K, shared: k.Shared, fn: emit.KernelName(k.K)}
	}), nil
}

// openCLJob is case c as the glue launches it: per launch, the program of
// its variant (the variant's params and the family's flag as defines, as
// ggml-opencl's load_cl_kernels passes them), each kernel buffer the case
// buffer the op binds to the same node slot (one of its own, untouched,
// where the op has none) as a cl_mem and a byte offset, then the args.
func openCLJob(c *cases.Case, byOp map[string]*clProgram, opts string, b *clrun.Batch, index map[string]int) (clrun.Job, error) {
	return openCLJobOn(c, byOp, nil, opts, b, index)
}

// openCLJobOn is openCLJob where gen, when set, runs the launches no
// upstream kernel runs (the non-fused path of cases.AddUnfused) on
// kernelgen's own programs built with the same options; the buffers are
// then bound from their start (kernelgen's kernels take no offset).
func openCLJobOn(c *cases.Case, byOp map[string]*clProgram, gen *verifycl.Programs, opts string, b *clrun.Batch, index map[string]int) (clrun.Job, error) {
	var job clrun.Job
	pad := untouchedPad()
	if gen != nil {
		pad = nil
	}
	bufIndex := map[string]int{}
	for i, buf := range c.Buffers {
		bufIndex[buf.Name] = i
		job.Buffers = append(job.Buffers, append(append([]byte(nil), pad...), buf.Bytes()...))
	}
	for _, l := range c.Launches {
		p := byOp[l.Op.Name]
		if p == nil && gen != nil {
			one, err := verifycl.Job(&cases.Case{Name: c.Name, Buffers: c.Buffers, Launches: []cases.Launch{l}}, gen)
			if err != nil {
				return job, err
			}
			cl := one.Launches[0]
			gp := gen.List()[cl.Program]
			key := gp.Name + " " + gp.Options
			pi, ok := index[key]
			if !ok {
				pi = len(b.Programs)
				index[key] = pi
				b.Programs = append(b.Programs, gp)
			}
			cl.Program = pi
			job.Launches = append(job.Launches, cl)
			continue
		}
		if p == nil {
			return job, fmt.Errorf("%s: no upstream kernel runs %s", c.Name, l.Op.Name)
		}
		params, err := upstream.Params(p.shared, l.Op.Name, l.Params)
		if err != nil {
			return job, err
		}
		defs, err := clDefines(p.k, params)
		if err != nil {
			return job, fmt.Errorf("%s: %w", c.Name, err)
		}
		o := strings.TrimSpace(opts + " " + strings.Join(defs, " "))
		key := p.file + " " + o
		pi, ok := index[key]
		if !ok {
			pi = len(b.Programs)
			index[key] = pi
			b.Programs = append(b.Programs, clrun.Program{Source: p.src, Options: o, Name: p.file + " [" + strings.Join(defs, " ") + "]"})
		}
		cl := clrun.Launch{Program: pi, Kernel: p.fn, Groups: l.Grid, Local: l.Workgroup}
		for _, kb := range p.k.Buffers {
			bi := -1
			if name := upstream.Bound(l, kb); name != "" {
				i, ok := bufIndex[name]
				if !ok {
					return job, fmt.Errorf("%s binds %s, which the case lacks", l.Kernel.Name, name)
				}
				bi = i
			}
			off := uint32(len(pad))
			if bi < 0 {
				bi, off = len(job.Buffers), 0
				job.Buffers = append(job.Buffers, untouched())
			}
			cl.Args = append(cl.Args, clrun.Arg{Buffer: bi}, clrun.Arg{Buffer: -1, Wide: true, Value: off})
		}
		args, err := upstream.Args(l, p.k)
		if err != nil {
			return job, fmt.Errorf("%s: %w", c.Name, err)
		}
		for _, bits := range args {
			cl.Args = append(cl.Args, clrun.Arg{Buffer: -1, Value: bits})
		}
		job.Launches = append(job.Launches, cl)
	}
	return job, nil
}

// clDefines are the -D options of upstream kernel k's program at the
// variant params, as ggml-opencl's load_cl_kernels passes them (sorted).
func clDefines(k *ir.Kernel, params map[string]int64) ([]string, error) {
	var defs []string
	for _, name := range emit.UpstreamDefines(k) {
		v, ok := params[name]
		if !ok {
			return nil, fmt.Errorf("no value for %s", name)
		}
		defs = append(defs, fmt.Sprintf("-D%s=%d", name, v))
	}
	sort.Strings(defs)
	return defs, nil
}

// untouchedPad is the bytes before every bound tensor: NaNs.
func untouchedPad() []byte {
	b := make([]byte, clPad)
	for i := 0; i < clPad; i += 4 {
		binary.LittleEndian.PutUint32(b[i:], 0x7fc00101)
	}
	return b
}

// nmse is the largest NMSE of c's f32 buffers in got against the reference.
func nmse(c *cases.Case, got map[string][]byte) float64 {
	worst := 0.0
	for _, want := range c.Expected {
		if want.Elem != ir.F32 {
			continue
		}
		wb, g := want.Bytes(), got[want.Name]
		var num, den float64
		for i := 0; i+4 <= len(wb) && i+4 <= len(g); i += 4 {
			w := float64(math.Float32frombits(binary.LittleEndian.Uint32(wb[i:])))
			x := float64(math.Float32frombits(binary.LittleEndian.Uint32(g[i:])))
			if math.IsNaN(w) || math.IsNaN(x) {
				continue
			}
			num += (x - w) * (x - w)
			den += w * w
		}
		if den > 0 && num/den > worst {
			worst = num / den
		}
	}
	return worst
}

// PoCL offers no subgroups, so there the reductions take the local-memory
// butterfly. The subgroup branches of the kernels ggml-opencl gets are
// compiled here by clang-22 (OpenCL C 3.0 for SPIR-V, ggml-opencl's
// options) with each extension switched on, for every variant, and the
// preprocessed source must call that extension's shuffle. Qualcomm's
// cl_qcom_subgroup_shuffle has no declarations in clang and is not
// compiled here.
func TestOpenCLSubgroupBranchesCompile(t *testing.T) {
	clang, err := exec.LookPath("clang-22")
	if err != nil {
		skipOrFail(t, err)
	}
	byOp, err := openCLPrograms()
	if err != nil {
		t.Fatal(err)
	}
	fams, err := upstream.Families()
	if err != nil {
		t.Fatal(err)
	}
	for _, ext := range []struct{ name, clExt, shuffle string }{
		{"cl_khr_subgroup_shuffle", "+cl_khr_subgroups,+cl_khr_subgroup_shuffle", " sub_group_shuffle_xor("},
		{"cl_intel_subgroups", "-cl_khr_subgroup_shuffle,+cl_intel_subgroups", "intel_sub_group_shuffle_xor("},
	} {
		for i, f := range fams {
			p := byOp[f.Shared.Plain]
			reduces := ir.HasReduce(p.k)
			if !reduces && i > 0 {
				continue // no subgroup branch: compiled once, with the first extension
			}
			t.Run(ext.name+"/"+p.file, func(t *testing.T) {
				t.Parallel()
				// each value of the switch key once, and the last variant (every bool set)
				vs := f.Shared.Variants(ops.TargetOf("opencl"))
				seen := map[int64]bool{}
				var pick []ops.Variant
				for _, v := range vs {
					if kv := v.Values[p.k.Params[0].Name]; !seen[kv] {
						seen[kv] = true
						pick = append(pick, v)
					}
				}
				for _, v := range append(pick, vs[len(vs)-1]) {
					args := []string{"--target=spir64", "-x", "cl", "-cl-std=CL3.0", "-Xclang", "-cl-ext=" + ext.clExt, "-Wall", "-Werror"}
					args = append(args, strings.Fields(clrun.GGMLFlags)...)
					for _, name := range emit.UpstreamDefines(p.k) {
						args = append(args, fmt.Sprintf("-D%s=%d", name, v.Values[name]))
					}
					ctx := tier.Context(t)
					run := func(mode ...string) string {
						cmd := exec.CommandContext(ctx, clang, append(append(append([]string{}, args...), mode...), "-")...)
						cmd.Stdin = strings.NewReader(string(p.src))
						out, err := cmd.CombinedOutput()
						if err != nil {
							t.Fatalf("clang-22 %s %s: %v\n%s", strings.Join(args, " "), mode, err, out)
						}
						return string(out)
					}
					run("-include", "opencl-c.h", "-fsyntax-only")
					if pre := run("-E"); reduces && !strings.Contains(pre, ext.shuffle) {
						t.Errorf("with %s the reductions do not call %s", ext.name, ext.shuffle)
					}
				}
			})
		}
	}
}

// Every program the fusion form's kernels step builds at ggml-opencl's
// start (load_cl_kernels: the gather, and each family's kernel at every
// row of its variant table and both values of each bool) builds on the
// OpenCL device (PoCL in CI) with ggml-opencl's options.
func TestOpenCLFusionProgramsBuild(t *testing.T) {
	ctx := tier.Context(t)
	r, dev := openCLDevice(t)
	opts := dev.GGMLOptions()
	ks, err := upstream.FusionKernels("opencl")
	if err != nil {
		t.Fatal(err)
	}
	files, err := backendopencl.FusionKernels()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var list []clrun.Program
	for i, k := range ks {
		variants := []map[string]int64{{}}
		if k.Shared != nil {
			variants = nil
			for _, v := range k.Shared.Variants(ops.TargetOf("opencl")) {
				for _, flag := range []int64{0, 1} {
					vals := map[string]int64{k.Shared.Flag: flag}
					for n, x := range v.Values {
						if n != k.Shared.Flag {
							vals[n] = x
						}
					}
					variants = append(variants, vals)
				}
			}
		}
		for _, vals := range variants {
			defs, err := clDefines(k.K, vals)
			if err != nil {
				t.Fatalf("%s: %v", files[i].Name, err)
			}
			o := strings.TrimSpace(opts + " " + strings.Join(defs, " "))
			if !seen[files[i].Name+o] {
				seen[files[i].Name+o] = true
				list = append(list, clrun.Program{Source: files[i].Data, Options: o, Name: files[i].Name + " [" + strings.Join(defs, " ") + "]"})
			}
		}
	}
	if _, err := r.Run(ctx, clrun.Batch{Programs: list}); err != nil {
		t.Fatalf("on %s: %v", dev.Name, err)
	}
	t.Logf("%s: %d programs built with %q", dev.Name, len(list), opts)
}
