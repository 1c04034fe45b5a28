package hostemu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernelgen/kernelgen/internal/tier"
)

// The runtime's own proof: small kernels in testdata/, one program per skin,
// run at every subgroup width.

var widths = []int{8, 16, 32, 64}

type skin struct {
	lang *Lang
	dir  string // under testdata/
	src  string // kernel file name
}

var skins = []skin{{CUDA, "cuda", "kernels.cu"}, {MSL, "msl", "kernels.metal"}, {SYCL, "sycl", "kernels.cpp"}}

func TestMain(m *testing.M) {
	// Builds are cached across runs in the user cache; fall back to a
	// throwaway directory where there is none.
	if os.Getenv("KERNELGEN_CACHE") == "" {
		if _, err := os.UserCacheDir(); err != nil {
			d, err := os.MkdirTemp("", "hostemu-cache-")
			if err == nil {
				os.Setenv("KERNELGEN_CACHE", d)
				code := m.Run()
				os.RemoveAll(d)
				os.Exit(code)
			}
		}
	}
	os.Exit(m.Run())
}

func defaultCXX() string {
	if c := os.Getenv("CXX"); c != "" {
		return c
	}
	return "g++"
}

func needCompiler(t *testing.T, cxx string) {
	t.Helper()
	if _, err := FindCompiler(Options{CXX: cxx}); err != nil {
		t.Skipf("no C++ compiler %s: %v", cxx, err)
	}
}

func testProgram(t *testing.T, s skin) Program {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", s.dir, s.src))
	if err != nil {
		t.Fatal(err)
	}
	h, err := os.ReadFile(filepath.Join("testdata", s.dir, "harness.cpp"))
	if err != nil {
		t.Fatal(err)
	}
	return Program{Name: "hostemu_test_" + s.dir, Lang: s.lang, Sources: map[string][]byte{s.src: src}, Harness: h}
}

type buildOnce struct {
	once sync.Once
	bin  *Binary
	err  error
}

var builds sync.Map // string -> *buildOnce

// built builds s once per test binary (and, through the cache, once per
// content), shared by every test that uses it.
func built(t *testing.T, s skin, o Options) *Binary {
	t.Helper()
	cxx := o.CXX
	if cxx == "" {
		cxx = defaultCXX()
	}
	needCompiler(t, cxx)
	key := fmt.Sprintf("%s|%s|%q", s.dir, cxx, o.Flags)
	v, _ := builds.LoadOrStore(key, new(buildOnce))
	b := v.(*buildOnce)
	b.once.Do(func() {
		b.bin, b.err = BuildWith(tier.Context(t), testProgram(t, s), o)
	})
	if b.err != nil {
		t.Fatalf("build %s: %v", s.dir, b.err)
	}
	return b.bin
}

func run(t *testing.T, bin *Binary, job Job) map[string][]byte {
	t.Helper()
	out, err := bin.Run(tier.Context(t), job, 0)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return out
}

// runFail runs a job that must fail and returns its *RunError; timeout is
// Run's (0: none but go test's deadline).
func runFail(t *testing.T, bin *Binary, job Job, timeout time.Duration) *RunError {
	t.Helper()
	_, err := bin.Run(tier.Context(t), job, timeout)
	var re *RunError
	if !errors.As(err, &re) {
		t.Fatalf("want a *RunError, got %v", err)
	}
	return re
}

// forEach runs f for every skin and width as parallel subtests.
func forEach(t *testing.T, f func(t *testing.T, s skin, bin *Binary, sg int)) {
	for _, s := range skins {
		t.Run(s.dir, func(t *testing.T) {
			t.Parallel()
			bin := built(t, s, Options{})
			for _, sg := range widths {
				t.Run(fmt.Sprintf("sg%d", sg), func(t *testing.T) { f(t, s, bin, sg) })
			}
		})
	}
}

// butterfly is the documented reduction order, per lane: for m = n/2 .. 1,
// x[l] = x[l] + x[l^m].
func butterfly(x []float32) []float32 {
	v := append([]float32(nil), x...)
	for m := len(v) / 2; m >= 1; m /= 2 {
		nv := make([]float32, len(v))
		for l := range v {
			nv[l] = v[l] + v[l^m]
		}
		v = nv
	}
	return v
}

func ascendingButterfly(x []float32) float32 {
	v := append([]float32(nil), x...)
	for m := 1; m < len(v); m *= 2 {
		nv := make([]float32, len(v))
		for l := range v {
			nv[l] = v[l] + v[l^m]
		}
		v = nv
	}
	return v[0]
}

func sequential(x []float32) float32 {
	var s float32
	for _, v := range x {
		s += v
	}
	return s
}

// reduceInput gives values where the summation order shows in the bits:
// 1e8 swallows small addends unless it is cancelled first.
func reduceInput(n int) []float32 {
	big := []float32{1e8, 1, -1e8, 1}
	x := make([]float32, n)
	for i := range x {
		x[i] = big[i%4]*float32(1+i/4%3) + float32(i%5)*0.375
	}
	return x
}

func sameBits(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }

// 1. Subgroup reduction: every lane holds the butterfly-order sum, bit for bit.
func TestSubgroupReduce(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, s skin, bin *Binary, sg int) {
		x := reduceInput(2 * sg)
		out := AsF32(run(t, bin, Job{SubgroupWidth: sg, Args: []Arg{U32("test", 1)},
			Buffers: []Buffer{F32Buffer("x", x), ZeroBuffer("out", 4, 2*sg)}})["out"])
		for g := 0; g < 2; g++ {
			seg := x[g*sg : (g+1)*sg]
			want := butterfly(seg)
			// The input must tell the orders apart, or this test proves nothing.
			if sameBits(want[0], sequential(seg)) || sameBits(want[0], ascendingButterfly(seg)) {
				t.Fatalf("input does not separate summation orders at width %d", sg)
			}
			for l := 0; l < sg; l++ {
				if got := out[g*sg+l]; !sameBits(got, want[l]) {
					t.Errorf("workgroup %d lane %d: got %v (%#08x), want %v (%#08x)", g, l, got, math.Float32bits(got), want[l], math.Float32bits(want[l]))
				}
			}
		}
	})
}

// shuffleRows is what testdata's shuffle kernels write, row by row, per lane.
func shuffleRows(lang *Lang, sg int) []func(l int) int32 {
	var rows []func(l int) int32
	for m := 1; m < sg; m++ {
		rows = append(rows, func(l int) int32 { return int32(l^m) * 10 })
	}
	own := func(l, src int) int32 { return int32(src) * 10 }
	down1 := func(l int) int32 {
		if l+1 < sg {
			return own(l, l+1)
		}
		return own(l, l)
	}
	up2 := func(l int) int32 {
		if l >= 2 {
			return own(l, l-2)
		}
		return own(l, l)
	}
	floatBits := func(l int) int32 { return int32(math.Float32bits(float32((l^1)*10) + 0.5)) }
	switch lang {
	case CUDA:
		w := sg / 2
		for m := 1; m < sg; m++ {
			rows = append(rows, func(l int) int32 {
				src := l ^ m
				if src >= l&^(w-1)+w {
					src = l // a later segment: own value
				}
				return own(l, src)
			})
		}
		rows = append(rows, down1, func(l int) int32 { return own(l, l&^3+3) }, up2, floatBits)
	case MSL, SYCL:
		rows = append(rows, func(int) int32 { return 30 }, down1, up2,
			func(int) int32 { return int32(sg-1) * 10 }, floatBits)
	}
	return rows
}

// 2. Shuffle patterns: each row is one permutation of lane_id*10.
func TestShufflePatterns(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, s skin, bin *Binary, sg int) {
		rows := shuffleRows(s.lang, sg)
		out := AsI32(run(t, bin, Job{SubgroupWidth: sg, Args: []Arg{U32("test", 2)},
			Buffers: []Buffer{ZeroBuffer("out", 4, len(rows)*sg)}})["out"])
		for r, want := range rows {
			for l := 0; l < sg; l++ {
				if got := out[r*sg+l]; got != want(l) {
					t.Errorf("row %d lane %d: got %d, want %d", r, l, got, want(l))
				}
			}
		}
	})
}

// 3. Barrier ordering: each thread reads a neighbour's write from before the
// barrier, twice (the second time after everyone overwrote their slot).
func TestBarrierOrdering(t *testing.T) {
	t.Parallel()
	const n = 96 // not a multiple of 64: a partial last subgroup at width 64
	forEach(t, func(t *testing.T, s skin, bin *Binary, sg int) {
		out := AsI32(run(t, bin, Job{SubgroupWidth: sg, Args: []Arg{U32("test", 3), U32("n", n)},
			Buffers: []Buffer{ZeroBuffer("out", 4, 2*2*n)}})["out"])
		bad := 0
		for g := 0; g < 2; g++ {
			for i := 0; i < n; i++ {
				a, b := out[2*(g*n+i)], out[2*(g*n+i)+1]
				wa, wb := int32(g*1000+(i+1)%n), int32(g*1000+(i+2)%n+100000)
				if a != wa || b != wb {
					if bad++; bad <= 5 {
						t.Errorf("workgroup %d thread %d: read %d, %d; want %d, %d", g, i, a, b, wa, wb)
					}
				}
			}
		}
	})
}

// 4. Several subgroups per workgroup: results stay within each subgroup.
func TestSubgroupBoundaries(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, s skin, bin *Binary, sg int) {
		const groups, perGroup = 2, 4
		n := groups * perGroup * sg
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(i/sg+1)*1000 + float32(i%7)*0.25 + reduceInput(n)[i]*1e-3
		}
		out := AsF32(run(t, bin, Job{SubgroupWidth: sg, Args: []Arg{U32("test", 4)},
			Buffers: []Buffer{F32Buffer("x", x), ZeroBuffer("out", 4, 4*n)}})["out"])
		for i := 0; i < n; i++ {
			k := i / sg // subgroup, counted over the whole grid
			seg := x[k*sg : (k+1)*sg]
			want := []float32{butterfly(seg)[i%sg], seg[0], seg[sg-1], float32(k % perGroup)}
			for j, w := range want {
				if got := out[4*i+j]; !sameBits(got, w) {
					t.Errorf("thread %d (subgroup %d) field %d: got %v, want %v", i, k, j, got, w)
				}
			}
		}
	})
}

// 5. Deadlocks fail fast and name the kernel.
func TestDeadlocks(t *testing.T) {
	t.Parallel()
	names := map[*Lang][3]string{
		CUDA: {"barrier_deadlock_kernel", "shuffle_deadlock_kernel", "split_barrier_kernel"},
		MSL:  {"kernel_barrier_deadlock", "kernel_shuffle_deadlock", "kernel_split_barrier"},
		SYCL: {"barrier_deadlock_kernel", "shuffle_deadlock", "split_barrier"},
	}
	forEach(t, func(t *testing.T, s skin, bin *Binary, sg int) {
		job := func(test uint32) Job {
			return Job{SubgroupWidth: sg, Args: []Arg{U32("test", test)}, Buffers: []Buffer{ZeroBuffer("out", 4, 64)}}
		}
		re := runFail(t, bin, job(5), 0)
		want := fmt.Sprintf("kernel %s: barrier not reached by every thread of workgroup (0,0,0): 3 of 64 arrived", names[s.lang][0])
		if re.TimedOut || re.ExitCode != ExitRuntimeError || !strings.HasPrefix(re.Error(), want) {
			t.Errorf("barrier deadlock: got %q (exit %d), want prefix %q", re.Error(), re.ExitCode, want)
		}
		re = runFail(t, bin, job(6), 0)
		want = fmt.Sprintf("not reached by every lane of subgroup 0 of workgroup (0,0,0): 3 of %d arrived", sg)
		if re.Kernel != names[s.lang][1] || !strings.Contains(re.Msg, want) {
			t.Errorf("shuffle deadlock: got %q, want kernel %s and %q", re.Error(), names[s.lang][1], want)
		}
		re = runFail(t, bin, job(7), 0)
		if re.Kernel != names[s.lang][2] || !strings.Contains(re.Msg, "wait at different barriers") {
			t.Errorf("split barrier: got %q", re.Error())
		}
	})
}

// A kernel that never ends is killed by the watchdog, which names it.
func TestTimeout(t *testing.T) {
	t.Parallel()
	bin := built(t, skins[0], Options{})
	re := runFail(t, bin, Job{Args: []Arg{U32("test", 9)}, Buffers: []Buffer{ZeroBuffer("out", 4, 4)}}, 300*time.Millisecond)
	if want := "kernel spin_kernel: timed out after 300ms (deadlock?)"; !re.TimedOut || re.Error() != want {
		t.Errorf("got %q (timed out %v), want %q", re.Error(), re.TimedOut, want)
	}
}

// Accesses just past a job buffer and job mistakes are runtime errors.
func TestRuntimeErrors(t *testing.T) {
	t.Parallel()
	bin := built(t, skins[0], Options{})
	re := runFail(t, bin, Job{Args: []Arg{U32("test", 8)}, Buffers: []Buffer{ZeroBuffer("out", 4, 64)}}, 0)
	if want := `kernel oob_kernel: out-of-bounds access 0 bytes past the end of buffer "out" (256 bytes)`; !strings.HasPrefix(re.Error(), want) {
		t.Errorf("out of bounds: got %q, want prefix %q", re.Error(), want)
	}
	re = runFail(t, bin, Job{Args: []Arg{U32("test", 1)}, Buffers: []Buffer{ZeroBuffer("out", 4, 64)}}, 0)
	if want := `kernel hostemu_test_cuda: job: no buffer named "x"`; re.Error() != want {
		t.Errorf("missing buffer: got %q, want %q", re.Error(), want)
	}
	re = runFail(t, bin, Job{}, 0)
	if want := `job: no scalar argument named "test"`; !strings.HasSuffix(re.Error(), want) || re.ExitCode != ExitRuntimeError {
		t.Errorf("missing argument: got %q (exit %d)", re.Error(), re.ExitCode)
	}
	if _, err := bin.Run(tier.Context(t), Job{SubgroupWidth: 48}, 0); err == nil || !strings.Contains(err.Error(), "subgroup width 48") {
		t.Errorf("bad width: got %v", err)
	}
}

// 8. Positions: CUDA built-ins, MSL attributes, SYCL dimension order.
func TestPositions(t *testing.T) {
	t.Parallel()
	const fc = 0x5a5a0000
	forEach(t, func(t *testing.T, s skin, bin *Binary, sg int) {
		var fields int
		var check func(slot int, o []uint32) error
		switch s.lang {
		case CUDA, MSL:
			// grid (2,3,1) of (sg/2, 2, 3)
			bx, by, bz := sg/2, 2, 3
			nt := bx * by * bz
			fields = 16
			if s.lang == MSL {
				fields = 20
			}
			check = func(slot int, o []uint32) error {
				b, t := slot/nt, slot%nt
				g := [3]int{b % 2, b / 2, 0}
				tid := [3]int{t % bx, t / bx % by, t / (bx * by)}
				want := []int{tid[0], tid[1], tid[2], g[0], g[1], g[2], bx, by, bz, 2, 3, 1}
				if s.lang == CUDA {
					want = append(want, sg, t%sg, t/sg*sg, 0xC0DA)
				} else {
					dot := ((float32(t%sg) + 2) + 3) + 4
					want = append(want, g[0]*bx+tid[0], g[1]*by+tid[1], g[2]*bz+tid[2], t, t/sg, t%sg, sg,
						int(math.Float32bits(dot)^fc))
				}
				return compare(o, want)
			}
		case SYCL:
			// global (4, 3, 2sg), local (2, 3, sg): groups (2, 1, 2)
			L := [3]int{2, 3, sg}
			G := [3]int{2, 1, 2}
			nt := L[0] * L[1] * L[2]
			fields = 24
			check = func(slot int, o []uint32) error {
				gl, ll := slot/nt, slot%nt
				lid := [3]int{ll / (L[2] * L[1]), ll / L[2] % L[1], ll % L[2]} // dimension 2 fastest
				gid := [3]int{gl / (G[2] * G[1]), gl / G[2] % G[1], gl % G[2]}
				var want []int
				want = append(want, lid[:]...)
				want = append(want, gid[:]...)
				want = append(want, L[:]...)
				want = append(want, G[:]...)
				var glob [3]int
				for d := range glob {
					glob[d] = gid[d]*L[d] + lid[d]
				}
				want = append(want, glob[:]...)
				glin := glob[2] + 2*sg*(glob[1]+3*glob[0])
				dot := ((float32(lid[2]) + 2) + 3) + 4
				// With local range sg in dimension 2, get_local_id(2) is the lane.
				want = append(want, ll, gl, glin, lid[2], lid[2], ll/sg, sg, sg, int(math.Float32bits(dot)))
				return compare(o, want)
			}
		}
		slots := 6 * 3 * sg
		if s.lang == SYCL {
			slots = 4 * 6 * sg
		}
		out := AsU32(run(t, bin, Job{SubgroupWidth: sg, Args: []Arg{U32("test", 10), U32("fc", fc)},
			Buffers: []Buffer{ZeroBuffer("out", 4, fields*slots)}})["out"])
		bad := 0
		for slot := 0; slot < slots; slot++ {
			if err := check(slot, out[fields*slot:fields*(slot+1)]); err != nil {
				if bad++; bad <= 5 {
					t.Errorf("slot %d: %v", slot, err)
				}
			}
		}
	})
}

func compare(got []uint32, want []int) error {
	for i, w := range want {
		if got[i] != uint32(w) {
			return fmt.Errorf("field %d: got %d, want %d (all: %v)", i, got[i], uint32(w), got)
		}
	}
	return nil
}

// 6. Compile errors name the Program's file and line; unsupported constructs
// are rejected before compiling, also by name and line.
func TestCompileErrorsNameSources(t *testing.T) {
	t.Parallel()
	needCompiler(t, defaultCXX())
	harness := []byte("void hostemu_run(hostemu::Job&) {}\n")
	cases := []struct {
		name, want string
		p          Program
	}{
		{"cuda", "gated_delta_net.cu:4:", Program{Lang: CUDA, Sources: map[string][]byte{
			"a_helpers.cu":       []byte("__device__ float twice(float x) { return 2.0f * x; }\n"),
			"gated_delta_net.cu": []byte("// line 1\n__global__ void k(float* o) {\n  o[0] = twice(1.0f);\n  o[1] = undefined_name;\n}\n"),
		}}},
		{"msl", "ssm_conv.metal:6:", Program{Lang: MSL, Sources: map[string][]byte{
			"ssm_conv.metal": []byte("#include <metal_stdlib>\nusing namespace metal;\n\nkernel void k(device float * o [[buffer(0)]],\n              uint tiisg [[thread_index_in_simdgroup]]) {\n  o[tiisg] = simd_sum(o[tiisg]) +;\n}\n"),
		}}},
		{"msl-threadgroup-pointer", "tg.metal:5: error: threadgroup pointer or reference", Program{Lang: MSL, Sources: map[string][]byte{
			"tg.metal": []byte("#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device float * o [[buffer(0)]], uint t [[thread_index_in_threadgroup]]) {\n  threadgroup float tile[64];\n  threadgroup float * p = tile + t;\n  o[t] = *p;\n}\n"),
		}}},
		{"cuda-dynamic-shared", "dyn.cu:2: error: dynamic shared memory", Program{Lang: CUDA, Sources: map[string][]byte{
			"dyn.cu": []byte("__global__ void k(float* o) {\n  extern __shared__ float s[];\n  o[0] = s[0];\n}\n"),
		}}},
		{"sycl", "sycl_gdn.cpp:3:", Program{Lang: SYCL, Sources: map[string][]byte{
			"sycl_gdn.cpp": []byte("#include <sycl/sycl.hpp>\nvoid f(sycl::queue& q) {\n  q.parallel_for(sycl::nd_range<1>(64, 64), [=](sycl::nd_item<1> it) { it.no_such_member(); });\n}\n"),
		}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.p.Name, c.p.Harness = "broken_"+c.name, harness
			_, err := BuildWith(context.Background(), c.p, Options{CacheDir: t.TempDir()})
			var ce *CompileError
			if !errors.As(err, &ce) {
				t.Fatalf("want a *CompileError, got %v", err)
			}
			if !strings.Contains(ce.Output, c.want) {
				t.Errorf("compiler output does not contain %q:\n%s", c.want, ce.Output)
			}
			if strings.Contains(ce.Output, string(filepath.Separator)+".build-") {
				t.Errorf("output names the temporary build directory:\n%s", ce.Output)
			}
		})
	}
}

// 7. A warm Build of an unchanged program runs no compiler; a changed one does.
func TestWarmBuildRunsNoCompiler(t *testing.T) {
	needCompiler(t, defaultCXX())
	cache := t.TempDir()
	p := Program{Name: "warm", Lang: CUDA,
		Sources: map[string][]byte{"k.cu": []byte("__global__ void k(float* o) { o[threadIdx.x] = float(threadIdx.x * warpSize); }\n")},
		Harness: []byte(`void hostemu_run(hostemu::Job& job) {
  float* o = job.buffer<float>("o");
  hostemu::cuda::launch("k", dim3(1), dim3(4), [&] { k(o); });
}
`)}
	build := func() *Binary {
		t.Helper()
		b, err := BuildWith(context.Background(), p, Options{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	n0 := compilerRuns.Load()
	cold := build()
	if d := compilerRuns.Load() - n0; d != 1 || cold.Cached {
		t.Fatalf("cold build: %d compiler runs, cached %v; want 1, false", d, cold.Cached)
	}
	n1 := compilerRuns.Load()
	warm := build()
	if d := compilerRuns.Load() - n1; d != 0 || !warm.Cached || warm.Path != cold.Path {
		t.Fatalf("warm build: %d compiler runs, cached %v, path %s (cold %s); want 0, true, same path", d, warm.Cached, warm.Path, cold.Path)
	}
	if got := AsF32(run(t, warm, Job{SubgroupWidth: 16, Buffers: []Buffer{ZeroBuffer("o", 4, 4)}})["o"]); got[3] != 48 {
		t.Errorf("cached binary computed %v, want o[3] = 48", got)
	}
	entries, _ := os.ReadDir(cache)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".build-") {
			t.Errorf("leftover temporary directory %s", e.Name())
		}
	}
	p.Sources = map[string][]byte{"k.cu": []byte("__global__ void k(float* o) { o[threadIdx.x] = 1.0f; }\n")}
	n2 := compilerRuns.Load()
	if changed := build(); compilerRuns.Load()-n2 != 1 || changed.Cached || changed.Path == cold.Path {
		t.Errorf("changed source: want a new compile into a new entry")
	}
}

// The runtime also builds with clang++ (CUDA and SYCL skins; clang rejects
// MSL's attributes on explicit instantiations).
// clang builds every skin, MSL's explicit instantiations with host names
// included; so does a compiler named g++ that is clang (macOS), found by
// its --version.
func TestClang(t *testing.T) {
	t.Parallel()
	cxx := ""
	for _, c := range []string{"clang++-22", "clang++"} {
		if p, err := exec.LookPath(c); err == nil {
			cxx = p
			break
		}
	}
	if cxx == "" {
		t.Skip("no clang++")
	}
	gxx := filepath.Join(t.TempDir(), "g++")
	if err := os.WriteFile(gxx, []byte("#!/bin/sh\nexec "+cxx+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range skins {
		t.Run(s.dir, func(t *testing.T) {
			t.Parallel()
			bin := built(t, s, Options{CXX: cxx})
			checkReduceAndDeadlock(t, bin, 32)
		})
	}
	t.Run("g++ is clang", func(t *testing.T) {
		t.Parallel()
		bin := built(t, skins[1], Options{CXX: gxx})
		checkReduceAndDeadlock(t, bin, 32)
	})
}

// The portable ucontext fiber switch gives the same results as the x86-64 one.
func TestUcontextFallback(t *testing.T) {
	t.Parallel()
	bin := built(t, skins[0], Options{Flags: []string{"-DHOSTEMU_UCONTEXT"}})
	for _, sg := range []int{8, 64} {
		checkReduceAndDeadlock(t, bin, sg)
	}
}

func checkReduceAndDeadlock(t *testing.T, bin *Binary, sg int) {
	t.Helper()
	x := reduceInput(2 * sg)
	out := AsF32(run(t, bin, Job{SubgroupWidth: sg, Args: []Arg{U32("test", 1)},
		Buffers: []Buffer{F32Buffer("x", x), ZeroBuffer("out", 4, 2*sg)}})["out"])
	for i := range out {
		if want := butterfly(x[i/sg*sg : i/sg*sg+sg])[i%sg]; !sameBits(out[i], want) {
			t.Errorf("sg %d lane %d: got %v, want %v", sg, i, out[i], want)
		}
	}
	re := runFail(t, bin, Job{SubgroupWidth: sg, Args: []Arg{U32("test", 5)}, Buffers: []Buffer{ZeroBuffer("out", 4, 64)}}, 0)
	if !strings.Contains(re.Error(), "barrier not reached by every thread of workgroup (0,0,0): 3 of 64 arrived") {
		t.Errorf("deadlock: got %q", re.Error())
	}
}

// Math and intrinsics: IEEE operations exact, fma fused and a*b+c not,
// exp close to the true value (its bits are the host libm's).
func TestMath(t *testing.T) {
	t.Parallel()
	in := []float32{
		1.0000001, 3.3333333, -3.3333335,
		0.1, 0.2, 0.3,
		-7.5, 0.0625, 1.5,
		12345.678, -0.001, -2.25,
		1 + 1.0/(1<<12), 1 - 1.0/(1<<12), -1,
		3.1415927, 2.7182817, 0.5,
		-0.75, -0.8, 10,
		65504, 1e-3, -20,
	}
	fma32 := func(a, b, c float32) float32 {
		x := new(big.Float).SetPrec(256).SetFloat64(float64(a))
		x.Mul(x, new(big.Float).SetPrec(256).SetFloat64(float64(b)))
		x.Add(x, new(big.Float).SetPrec(256).SetFloat64(float64(c)))
		f, _ := x.Float32()
		return f
	}
	forEach(t, func(t *testing.T, s skin, bin *Binary, sg int) {
		out := AsF32(run(t, bin, Job{SubgroupWidth: sg, Args: []Arg{U32("test", 11)},
			Buffers: []Buffer{F32Buffer("in", in), ZeroBuffer("out", 4, 13*8)}})["out"])
		fusedDiffers, dotDiffers := false, false
		for i := 0; i < 8; i++ {
			a, b, c := in[3*i], in[3*i+1], in[3*i+2]
			// Explicit conversions keep Go from fusing.
			unfused := float32(a*b) + c
			fusedDiffers = fusedDiffers || !sameBits(unfused, fma32(a, b, c))
			dotDiffers = dotDiffers || !sameBits(float32(float32(a*a)+float32(b*b)), fma32(b, b, float32(a*a)))
			exact := []float32{
				0: fma32(a, b, c), 1: unfused, 2: float32(b * c), 3: float32(a + b), 4: float32(a - b),
				5: float32(a / b), 6: float32(math.Sqrt(float64(float32(math.Abs(float64(a)))))),
				9: -a, 10: min(a, b), 11: max(a, b),
				12: float32(float32(float32(float32(a*a)+float32(b*b))+float32(c*c)) + 2),
			}
			o := out[13*i : 13*i+13]
			for j, w := range exact {
				if j == 7 || j == 8 {
					continue
				}
				if !sameBits(o[j], w) {
					t.Errorf("thread %d result %d: got %v (%#08x), want %v (%#08x)", i, j, o[j], math.Float32bits(o[j]), w, math.Float32bits(w))
				}
			}
			e := math.Exp(float64(c))
			for _, j := range []int{7, 8} {
				if d := math.Abs(float64(o[j])-e) / e; d > 1e-6 {
					t.Errorf("thread %d exp result %d: got %v, want about %v", i, j, o[j], e)
				}
			}
		}
		if !fusedDiffers || !dotDiffers {
			t.Fatal("no input tells fused from unfused arithmetic")
		}
	})
}
