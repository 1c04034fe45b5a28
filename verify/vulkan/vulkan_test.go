package vulkan

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kernelgen/kernelgen/internal/tier"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/tools/spvbuild"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/vkrun"
)

// The tests run on lavapipe (subgroup 8: reductions wider than 8 take the
// shared-memory path; TestOtherSubgroupWidths reruns them at 4 and 16) unless KERNELGEN_VK_DEVICE names another device
// ("NVIDIA": subgroup 32, the subgroup-shuffle path). A missing runner
// toolchain, glslang or device skips, and fails where KERNELGEN_REQUIRE_TOOLS
// is set (CI).

func TestMain(m *testing.M) {
	// A private runtime dir silences the loader's XDG_RUNTIME_DIR warnings.
	d, err := os.MkdirTemp("", "vulkan-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Chmod(d, 0o700)
	os.Setenv("XDG_RUNTIME_DIR", d)
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

func skipOrFail(t *testing.T, err error) {
	t.Helper()
	if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
		t.Fatal(err)
	}
	t.Skip(err)
}

// contracts are the Vulkan backend's.
var contracts = []ir.Arith{ir.Portable, ir.Native("vulkan")}

type env struct {
	runner *vkrun.Runner
	dev    vkrun.DeviceInfo
	sel    string // Job.Device selecting dev
	comp   *Compiler
	// ieee is what the driver does with the portable kernels' arithmetic
	// (probe_test.go).
	ieee ieee
	// denorm: the device offers shaderDenormPreserveFloat32, so portable
	// kernels run their glsl.DenormPreserve build and owe bit-exactness
	// whatever the driver's default.
	denorm bool
	spirv  SPIRVFunc
	// bitExact and loose count portable reference comparisons.
	bitExact, loose atomic.Int64
}

var (
	envOnce sync.Once
	envVal  *env
	envErr  error // a missing tool or device: skip or fail
	envHard error // anything else: fail
)

// setup builds the runner, finds the device and compiles every variant the
// tests use in one parallel batch (a cold cache costs ~15 s on 2 cores).
func setup(t *testing.T) *env {
	t.Helper()
	envOnce.Do(func() {
		ctx := tier.Context(t)
		r, err := vkrun.Build(ctx)
		if err != nil {
			if errors.Is(err, vkrun.ErrMissingTool) {
				envErr = err
			} else {
				envHard = err
			}
			return
		}
		devs, err := r.Devices(ctx)
		if err != nil {
			if errors.Is(err, vkrun.ErrNoDevice) {
				envErr = err
			} else {
				envHard = err
			}
			return
		}
		want := os.Getenv("KERNELGEN_VK_DEVICE")
		if want == "" {
			want = "llvmpipe"
		}
		e := &env{runner: r}
		var names []string
		for _, d := range devs {
			names = append(names, fmt.Sprintf("#%d %s", d.Index, d.Name))
			if e.sel == "" && (fmt.Sprintf("#%d", d.Index) == want || strings.Contains(strings.ToLower(d.Name), strings.ToLower(want))) {
				e.dev, e.sel = d, fmt.Sprintf("#%d", d.Index)
			}
		}
		if e.sel == "" {
			envErr = fmt.Errorf("no Vulkan device matching %q (install mesa-vulkan-drivers for lavapipe); devices: %s", want, strings.Join(names, ", "))
			return
		}
		e.comp = NewCompiler(ctx)
		e.denorm = e.dev.DenormPreserveFloat32
		e.spirv = e.comp.SPIRV
		if e.denorm {
			e.spirv = e.comp.SPIRVDenormPreserve
		}
		// Both builds everywhere: a cache filled here serves a GPU host
		// (doc.go) whichever it needs.
		units, err := AllUnits(contracts...)
		if err != nil {
			envHard = err
			return
		}
		denormUnits, err := AllDenormUnits(contracts...)
		if err != nil {
			envHard = err
			return
		}
		units = append(units, denormUnits...)
		units = append(units, probeUnit, denormProbeUnit) // the second compiled everywhere, run where offered
		if _, err := e.comp.Build(ctx, units); err != nil {
			if errors.Is(err, spvbuild.ErrMissingTool) {
				envErr = err
			} else {
				envHard = err
			}
			return
		}
		if want := os.Getenv(wantSubgroupEnv); want != "" && want != fmt.Sprint(e.dev.SubgroupSize) {
			envHard = fmt.Errorf("%s: subgroup %d, want %s (did lavapipe ignore LP_NATIVE_VECTOR_WIDTH?)", e.dev.Name, e.dev.SubgroupSize, want)
			return
		}
		if e.ieee, err = e.probe(ctx); err != nil {
			envHard = err
			return
		}
		envVal = e
	})
	if envHard != nil {
		t.Fatal(envHard)
	}
	if envErr != nil {
		skipOrFail(t, envErr)
	}
	return envVal
}

func (e *env) run(t *testing.T, c *cases.Case) map[string][]byte {
	t.Helper()
	job, err := Job(c, e.spirv)
	if err != nil {
		t.Fatal(err)
	}
	job.Device = e.sel
	ctx := tier.Context(t)
	res, err := e.runner.Run(ctx, job)
	if err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	return Outputs(c, res)
}

// seed makes every case reproducible from its name.
func seed(parts ...string) *rand.Rand {
	var h uint64 = 14695981039346656037
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			h = (h ^ uint64(p[i])) * 1099511628211
		}
		h = (h ^ 0xff) * 1099511628211
	}
	return rand.New(rand.NewPCG(h, 5))
}

// compare checks a device result against the Go reference. The portable
// contract needs IEEE binary32 arithmetic: a fused multiply-add, signed
// zeros and denormals kept. The generated GLSL spells the first two itself
// (kg_fma and kg_add_zero, see emit/glsl), so a driver that rounds fma()
// twice or folds x + 0.0 into x still matches bit for bit; denormals it asks
// for (DenormPreserve) where the device offers that. Only on a device that
// neither offers the mode nor keeps denormals by default (the probe), a
// portable case that is not bit for bit is held to the native tolerance
// instead and compare returns why.
func (e *env) compare(t *testing.T, c *cases.Case, got map[string][]byte) (loose string) {
	t.Helper()
	err := c.Compare(got)
	if c.Arith.Native {
		if err != nil {
			t.Fatal(err)
		}
		return ""
	}
	if err == nil {
		e.bitExact.Add(1)
		return ""
	}
	if e.ieee.denormals || e.denorm {
		t.Fatal(err)
	}
	lc := *c
	lc.Arith = ir.Native("vulkan")
	if lerr := lc.Compare(got); lerr != nil {
		t.Fatalf("%v\n(and beyond NMSE %g: %v)", err, cases.NMSETolerance, lerr)
	}
	e.loose.Add(1)
	return fmt.Sprintf("not bit for bit on a driver that flushes denormals and cannot be asked to keep them, within NMSE %g: %v", cases.NMSETolerance, err)
}

// Every op under both Vulkan contracts (the gathers once) and every variant
// (three sampled per op and contract in the fast tier, whose build --check
// has compiled every one): one random case, compared with the Go reference
// (portable bit for bit, native within NMSE).
func TestCasesMatchReference(t *testing.T) {
	e := setup(t)
	t.Logf("device %s (subgroup %d): %s; portable kernels built with DenormPreserve: %v", e.dev.Name, e.dev.SubgroupSize, e.ieee, e.denorm)
	b0, l0 := e.bitExact.Load(), e.loose.Load()
	t.Cleanup(func() { // after the parallel subtests
		t.Logf("portable: %d bit for bit, %d only within NMSE on this driver", e.bitExact.Load()-b0, e.loose.Load()-l0)
	})
	for _, op := range ops.All() {
		for _, a := range contracts {
			if op.ArithFree() && a.Native {
				continue
			}
			variants := ops.VariantsOf(op.Name)
			for _, vi := range tier.Sample(t, len(variants), 3) {
				v := variants[vi]
				name := fmt.Sprintf("%s@%s[%s]", op.Name, a, v)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					if !a.Native && !op.ArithFree() && !e.dev.Float64 {
						t.Skipf("%s has no shaderFloat64, which the portable fma needs", e.dev.Name)
					}
					c, err := cases.Random(op.Name, a, seed(name), cases.Small, &v)
					if err != nil {
						t.Fatal(err)
					}
					if why := e.compare(t, c, e.run(t, c)); why != "" {
						t.Skip(why)
					}
				})
			}
		}
	}
}

// Op B's batched kernel with SPT 2, 4 and 8 sequences per row of threads,
// off the variant table (which holds SPT 1), runs on the device as the Go
// reference does (verify/cases holds the reference to gather + compute bit
// for bit at every SPT): n_seqs up to NS*SPT, ids through the window.
func TestBatchedSequencesPerThread(t *testing.T) {
	e := setup(t)
	sz := cases.Size{MaxHeads: 2, MaxTokens: 3, MaxSeqs: 64, WindowIds: true}
	type shape struct {
		a ir.Arith
		v ops.Variant
	}
	var shapes []shape
	for _, a := range contracts {
		for _, spt := range []int{2, 3, 4, 8} {
			for _, sv := range []int{16, 32} {
				for _, kda := range []bool{false, true} {
					shapes = append(shapes, shape{a, ops.V("gated_delta_net_inplace_ids_batched", "S_v", sv, "KDA", kda, "NW", 2, "CPW", 1, "NS", 4, "SPT", spt, "SPLIT", spt == 2)})
				}
			}
		}
	}
	for _, i := range tier.Sample(t, len(shapes), 6) {
		a, v := shapes[i].a, shapes[i].v
		name := fmt.Sprintf("%s@%s[%s]", v.Op, a, v)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if !a.Native && !e.dev.Float64 {
				t.Skipf("%s has no shaderFloat64, which the portable fma needs", e.dev.Name)
			}
			r := seed(name)
			for range 3 {
				c, err := cases.Random(v.Op, a, r, sz, &v)
				if err != nil {
					t.Fatal(err)
				}
				if why := e.compare(t, c, e.run(t, c)); why != "" {
					t.Skip(why)
				}
			}
		})
	}
}

// The Job helper's layout: gather then compute, bindings in kernel order,
// push constants in IR order.
func TestJobLayout(t *testing.T) {
	c, err := cases.Random("gated_delta_net_inplace_ids", ir.Native("vulkan"), seed("layout"), cases.Small, nil)
	if err != nil {
		t.Fatal(err)
	}
	fake := func(k *ir.Kernel, v ops.Variant) ([]byte, error) {
		return []byte(k.ID() + " " + v.String()), nil // not SPIR-V: Job passes it through
	}
	job, err := Job(c, fake)
	if err != nil {
		t.Fatal(err)
	}
	if len(job.Dispatches) != 2 || !strings.HasPrefix(string(job.Dispatches[0].SPIRV), "gather@portable ") ||
		!strings.HasPrefix(string(job.Dispatches[1].SPIRV), "gated_delta_net_inplace_ids@native-vulkan S_v=") {
		t.Fatalf("dispatches: %q", [][]byte{job.Dispatches[0].SPIRV, job.Dispatches[1].SPIRV})
	}
	for li, l := range c.Launches {
		d := job.Dispatches[li]
		for i, bi := range d.Bindings {
			if c.Buffers[bi].Name != l.Bind[i] {
				t.Errorf("launch %d binding %d: buffer %s, want %s", li, i, c.Buffers[bi].Name, l.Bind[i])
			}
		}
		if d.Groups != l.Grid || len(d.Push) != 4*len(l.Kernel.Args) {
			t.Errorf("launch %d: groups %v push %d bytes", li, d.Groups, len(d.Push))
		}
		for i, a := range l.Kernel.Args {
			if got := uint32(d.Push[4*i]) | uint32(d.Push[4*i+1])<<8 | uint32(d.Push[4*i+2])<<16 | uint32(d.Push[4*i+3])<<24; got != l.Args[a.Name] {
				t.Errorf("launch %d push[%d] (%s) = %#x, want %#x", li, i, a.Name, got, l.Args[a.Name])
			}
		}
		if g, err := Grid(l.Kernel, l.Params, l.Args); err != nil || g != l.Grid {
			t.Errorf("launch %d: Grid %v %v, the case says %v", li, g, err, l.Grid)
		}
	}
	for i, b := range c.Buffers {
		if string(job.Buffers[i]) != string(b.Bytes()) {
			t.Errorf("buffer %d (%s) differs", i, b.Name)
		}
	}
}

// wantSubgroupEnv, set in a child run of TestOtherSubgroupWidths, is the
// subgroup size the device must have.
const wantSubgroupEnv = "KERNELGEN_VK_WANT_SUBGROUP"

// The reductions shuffle within the subgroup where it is at least their
// width and go through shared memory where it is narrower, so the subgroup
// size picks the code path. lavapipe's follows llvmpipe's vector width
// (LP_NATIVE_VECTOR_WIDTH, read when the driver loads): the cases and the
// fused == unfused checks (the upstream shaders' too) run again in child processes at subgroup 4 (every
// reduction through shared memory) and 16 (S_v 16 by shuffle, wider ones
// through shared memory), beside this process's 8 (the fast tier: one of
// the two, by KERNELGEN_SEED). Each child checks that
// it got the width it asked for. Not 32 or 64: at 1024 and 2048 bits
// lavapipe (Mesa 22.3, LLVM 15) reports those sizes but runs subgroups of 16
// invocations (gl_SubgroupID 7 at invocation 121 of 128, a 32-lane
// shuffle-xor sum off), so nothing there is a device of that width; 32 is
// the H100's.
func TestOtherSubgroupWidths(t *testing.T) {
	if os.Getenv(wantSubgroupEnv) != "" {
		t.Skip("a child run of this test")
	}
	e := setup(t)
	if !strings.Contains(e.dev.Name, "llvmpipe") {
		t.Skipf("%s: only lavapipe's subgroup size can be chosen", e.dev.Name)
	}
	if testing.Short() {
		t.Skip("-short")
	}
	widths := []struct{ vectorBits, subgroup int }{{128, 4}, {512, 16}}
	// The fast tier runs one of the two widths, drawn from its seed; each
	// child is a whole second run of the tests it names.
	for _, i := range tier.Sample(t, len(widths), 1) {
		w := widths[i]
		t.Run(fmt.Sprintf("subgroup_%d", w.subgroup), func(t *testing.T) {
			// The fast tier reruns the cases and the upstream shaders (a
			// sample of each); the full tier every test of the reductions.
			tests := tier.Pick([]string{"TestCasesMatchReference", "TestUpstreamShaders"},
				[]string{"TestCasesMatchReference", "TestBatchedSequencesPerThread", "TestFusedMatchesUnfused", "TestUpstreamShaders"})
			cmd := exec.Command(os.Args[0], "-test.run", "^("+strings.Join(tests, "|")+")$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), fmt.Sprintf("LP_NATIVE_VECTOR_WIDTH=%d", w.vectorBits),
				fmt.Sprintf("%s=%d", wantSubgroupEnv, w.subgroup), "KERNELGEN_REQUIRE_TOOLS=1")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("subgroup %d: %v\n%s", w.subgroup, err, tail(out, 40))
			}
			for _, test := range tests {
				if !bytes.Contains(out, []byte("--- PASS: "+test+" ")) {
					t.Errorf("subgroup %d: %s did not pass:\n%s", w.subgroup, test, tail(out, 40))
				}
			}
			t.Logf("subgroup %d: %d subtests passed", w.subgroup, bytes.Count(out, []byte("--- PASS: "))-len(tests))
		})
	}
}

// tail is the last n lines of out.
func tail(out []byte, n int) []byte {
	lines := bytes.Split(bytes.TrimRight(out, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return bytes.Join(lines, []byte("\n"))
}
