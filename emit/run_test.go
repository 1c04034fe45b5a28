package emit_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"

	"github.com/kernelgen/kernelgen/emit/glsl"
	"github.com/kernelgen/kernelgen/emit/opencl"
	"github.com/kernelgen/kernelgen/internal/tier"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/tools/spvbuild"
	"github.com/kernelgen/kernelgen/verify/clrun"
	"github.com/kernelgen/kernelgen/verify/emulate"
	"github.com/kernelgen/kernelgen/verify/hostemu"
	"github.com/kernelgen/kernelgen/verify/vkrun"
)

// The shape every construct runs at: n workgroups of 32 threads (the
// constructs' grid is (n, 1, 1)), over buffers of bufLen floats.
const (
	runN   = 40
	bufLen = runN * 32
)

// sentinel marks out's elements a construct does not write.
var sentinel = math.Float32frombits(0x7fc0dead)

// Every construct runs in CUDA, MSL and SYCL (the fast tier: one of them,
// in turn) under host emulation (subgroup
// widths 8 and 32, so reductions go both through shuffles and through
// shared memory), in OpenCL C on PoCL (local memory) and in GLSL on lavapipe, and writes what its expect
// function says: bit for bit under the portable contract; under a native one
// (the language's own exp, or simd_sum's order) within a relative 2^-20.
// This is what the goldens cannot show: the lowering computes the IR.
func TestConstructsRun(t *testing.T) {
	ctx := tier.Context(t)
	rng := rand.New(rand.NewPCG(7, 11))
	in := make([]float32, bufLen)
	for i := range in {
		in[i] = float32(rng.NormFloat64())
	}
	emulated := []*hostemu.Lang{hostemu.CUDA, hostemu.MSL, hostemu.SYCL}
	for ci, c := range constructs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := lower(t, c)
			// The fast tier builds each construct in one emulated
			// language, taken in turn (the ops' kernels run in all three
			// under build --check); the full tier in all three.
			langs := tier.Pick(emulated[ci%len(emulated):ci%len(emulated)+1], emulated)
			want := make([]float32, bufLen)
			for i := range want {
				want[i] = sentinel
			}
			c.expect(in, runN, want)
			check := func(t *testing.T, got []float32) {
				t.Helper()
				compare(t, c.arith, want, got)
			}
			for _, lang := range langs {
				t.Run(lang.String(), func(t *testing.T) {
					if _, err := exec.LookPath(cxx()); err != nil {
						missing(t, err)
					}
					prog, err := emulate.KernelProgram("construct_run_"+c.name+"_"+lang.String(), lang,
						emulate.Kernel{Op: c.name, Summary: "construct", K: l.k}, []ops.Variant{variant(c)})
					if err != nil {
						t.Fatal(err)
					}
					bin, err := hostemu.BuildWith(ctx, prog, hostemu.Options{Flags: emulate.WarningFlags})
					if err != nil {
						t.Fatal(err)
					}
					for _, width := range []int{8, 32} {
						job := emulate.LaunchJob(0, [3]uint32{runN, 1, 1}, [3]uint32{32, 1, 1}, width)
						job.Args = append(job.Args, hostemu.U32("n", runN))
						job.Buffers = []hostemu.Buffer{hostemu.F32Buffer("in", in), hostemu.F32Buffer("out", filled(sentinel))}
						out, err := bin.Run(ctx, job, 0)
						if err != nil {
							t.Fatalf("width %d: %v", width, err)
						}
						t.Run(fmt.Sprint("width", width), func(t *testing.T) { check(t, hostemu.AsF32(out["out"])) })
					}
				})
			}
			t.Run("opencl", func(t *testing.T) {
				got, err := runOpenCL(ctx, c, l, in)
				if errors.Is(err, clrun.ErrMissingTool) || errors.Is(err, clrun.ErrNoDevice) {
					missing(t, err)
				}
				if err != nil {
					t.Fatal(err)
				}
				check(t, got)
			})
			t.Run("glsl", func(t *testing.T) {
				got, err := runGLSL(ctx, c, l, in)
				if errors.Is(err, spvbuild.ErrMissingTool) || errors.Is(err, vkrun.ErrMissingTool) || errors.Is(err, vkrun.ErrNoDevice) {
					missing(t, err)
				}
				if err != nil {
					t.Fatal(err)
				}
				check(t, got)
			})
		})
	}
}

// runGLSL compiles the construct's shader and runs it on the first Vulkan
// device (lavapipe in CI) with in and out bound at 0 and 1 and n pushed.
func runGLSL(ctx context.Context, c construct, l lowering, in []float32) ([]float32, error) {
	tools, err := spvbuild.FindTools(ctx)
	if err != nil {
		return nil, err
	}
	defs, err := glsl.Defines(variant(c).Of(l.k))
	if err != nil {
		return nil, err
	}
	res, err := tools.Build(ctx, []spvbuild.Unit{{File: c.name + ".comp", Source: l.glsl, Defines: defs, Name: c.name}}, nil)
	if err != nil {
		return nil, err
	}
	runner, err := vkrun.Build(ctx)
	if err != nil {
		return nil, err
	}
	push := binary.LittleEndian.AppendUint32(nil, runN)
	out, err := runner.Run(ctx, vkrun.Job{
		Buffers:    [][]byte{f32Bytes(in), f32Bytes(filled(sentinel))},
		Dispatches: []vkrun.Dispatch{{SPIRV: res[0].SPIRV, Push: push, Groups: [3]uint32{runN, 1, 1}, Bindings: []int{0, 1}}},
	})
	if err != nil {
		return nil, err
	}
	return hostemu.AsF32(out.Buffers[1]), nil
}

// runOpenCL builds the construct's OpenCL C and runs it on the first
// OpenCL device (PoCL in CI) with in, out and n as its arguments.
func runOpenCL(ctx context.Context, c construct, l lowering, in []float32) ([]float32, error) {
	defs, err := opencl.Defines(variant(c).Of(l.k))
	if err != nil {
		return nil, err
	}
	runner, err := clrun.Build(ctx)
	if err != nil {
		return nil, err
	}
	out, err := runner.Run(ctx, clrun.Batch{
		Programs: []clrun.Program{{Source: l.opencl, Options: opencl.BuildOptions(defs), Name: c.name + ".cl"}},
		Jobs: []clrun.Job{{
			Buffers: [][]byte{f32Bytes(in), f32Bytes(filled(sentinel))},
			Launches: []clrun.Launch{{Kernel: opencl.KernelName(l.k), Args: []clrun.Arg{{Buffer: 0}, {Buffer: 1}, {Buffer: -1, Value: runN}},
				Groups: [3]uint32{runN, 1, 1}, Local: [3]uint32{32, 1, 1}}},
		}},
	})
	if err != nil {
		return nil, err
	}
	return hostemu.AsF32(out[0][1]), nil
}

// compare checks got against want element by element: bits under the
// portable contract, a relative 2^-20 under a native one.
func compare(t *testing.T, arith ir.Arith, want, got []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("out has %d elements, want %d", len(got), len(want))
	}
	bad := 0
	for i := range want {
		w, g := want[i], got[i]
		ok := math.Float32bits(w) == math.Float32bits(g)
		if !ok && arith.Native && w != sentinel && g != sentinel {
			ok = math.Abs(float64(g)-float64(w)) <= math.Abs(float64(w))*0x1p-20
		}
		if !ok {
			if bad++; bad <= 5 {
				t.Errorf("out[%d] = %v (%#08x), want %v (%#08x)", i, g, math.Float32bits(g), w, math.Float32bits(w))
			}
		}
	}
	if bad > 5 {
		t.Errorf("... %d elements differ", bad)
	}
}

func filled(v float32) []float32 {
	out := make([]float32, bufLen)
	for i := range out {
		out[i] = v
	}
	return out
}

func f32Bytes(v []float32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func cxx() string {
	if c := os.Getenv("CXX"); c != "" {
		return c
	}
	return "g++"
}

// missing skips a test whose tool is absent, or fails it where
// KERNELGEN_REQUIRE_TOOLS is set (CI).
func missing(t *testing.T, err error) {
	t.Helper()
	if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
		t.Fatal(err)
	}
	t.Skip(err)
}
