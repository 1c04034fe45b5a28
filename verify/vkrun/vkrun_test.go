package vkrun

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernelgen/kernelgen/internal/tier"

	"github.com/kernelgen/kernelgen/emit/glsl"
)

// The tests run on lavapipe (a device whose name contains "llvmpipe") unless
// KERNELGEN_VK_DEVICE selects another device ("NVIDIA", "#1"): on a GPU host,
// KERNELGEN_VK_DEVICE=NVIDIA go test ./verify/vkrun/. A missing compiler,
// header, glslang or device skips, and fails where KERNELGEN_REQUIRE_TOOLS is
// set (CI).

func TestMain(m *testing.M) {
	// A private runtime dir silences the loader's XDG_RUNTIME_DIR warnings; a
	// private cache makes every run build the runner cold once, unless
	// KERNELGEN_CACHE is set (a GPU host runs with a cache carried to it).
	var dirs []string
	for _, env := range []string{"XDG_RUNTIME_DIR", "KERNELGEN_CACHE"} {
		if env == "KERNELGEN_CACHE" && os.Getenv(env) != "" {
			continue
		}
		d, err := os.MkdirTemp("", "vkrun-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Chmod(d, 0o700)
		os.Setenv(env, d)
		dirs = append(dirs, d)
	}
	code := m.Run()
	for _, d := range dirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

func skipOrFail(t *testing.T, err error) {
	t.Helper()
	if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
		t.Fatal(err)
	}
	t.Skip(err)
}

var (
	buildOnce   sync.Once
	builtRunner *Runner
	buildErr    error
)

func testRunner(t *testing.T) *Runner {
	t.Helper()
	buildOnce.Do(func() {
		ctx := tier.Context(t)
		builtRunner, buildErr = Build(ctx)
	})
	if buildErr != nil {
		if errors.Is(buildErr, ErrMissingTool) {
			skipOrFail(t, buildErr)
		}
		t.Fatal(buildErr)
	}
	r := *builtRunner
	return &r
}

// lavapipe reports whether the tests target lavapipe (the default).
func lavapipe() bool { return os.Getenv("KERNELGEN_VK_DEVICE") == "" }

// testDevice returns the runner and the device the tests run on, with the
// Job.Device string that selects it.
func testDevice(t *testing.T) (*Runner, DeviceInfo, string) {
	t.Helper()
	r := testRunner(t)
	ctx := tier.Context(t)
	devs, err := r.Devices(ctx)
	if errors.Is(err, ErrNoDevice) {
		skipOrFail(t, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	want := os.Getenv("KERNELGEN_VK_DEVICE")
	if want == "" {
		want = "llvmpipe"
	}
	var names []string
	for _, d := range devs {
		names = append(names, fmt.Sprintf("#%d %s", d.Index, d.Name))
		if fmt.Sprintf("#%d", d.Index) == want || strings.Contains(strings.ToLower(d.Name), strings.ToLower(want)) {
			return r, d, fmt.Sprintf("#%d", d.Index)
		}
	}
	skipOrFail(t, fmt.Errorf("no Vulkan device matching %q (install mesa-vulkan-drivers for lavapipe); devices: %s", want, strings.Join(names, ", ")))
	return nil, DeviceInfo{}, ""
}

func compile(t *testing.T, src string, defines map[string]string) []byte {
	t.Helper()
	spv, err := CompileGLSL(context.Background(), []byte(src), defines, "comp")
	if errors.Is(err, ErrMissingTool) {
		skipOrFail(t, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return spv
}

func run(t *testing.T, r *Runner, job Job) *Result {
	t.Helper()
	ctx := tier.Context(t)
	res, err := r.Run(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func u32bytes(v []uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

func bytesF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func bytesU32(b []byte) []uint32 {
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

// 1. The device list finds lavapipe with subgroup size 8.
func TestDevicesFindsLavapipe(t *testing.T) {
	r, dev, _ := testDevice(t)
	t.Logf("device %+v", dev)
	if dev.SubgroupSize <= 0 || dev.SubgroupSize&(dev.SubgroupSize-1) != 0 {
		t.Errorf("subgroup size %d is not a power of two", dev.SubgroupSize)
	}
	if !dev.HasSubgroupOp("basic") || dev.APIVersion == "" || dev.Type == "" {
		t.Errorf("incomplete device info: %+v", dev)
	}
	if lavapipe() {
		if !strings.Contains(dev.Name, "llvmpipe") || dev.Type != "cpu" || dev.Driver != "llvmpipe" {
			t.Errorf("not lavapipe: %+v", dev)
		}
		if dev.SubgroupSize != 8 || dev.MinSubgroupSize != 8 || dev.MaxSubgroupSize != 8 {
			t.Errorf("lavapipe subgroup size %d [%d, %d], want 8 [8, 8]", dev.SubgroupSize, dev.MinSubgroupSize, dev.MaxSubgroupSize)
		}
		for _, op := range []string{"shuffle", "arithmetic", "ballot"} {
			if !dev.HasSubgroupOp(op) {
				t.Errorf("lavapipe lacks subgroup %s: %v", op, dev.SubgroupOps)
			}
		}
		if !dev.SubgroupSizeControl || !dev.FullSubgroups || !dev.SubgroupInCompute {
			t.Errorf("lavapipe subgroup control flags: %+v", dev)
		}
	}
	// The raw listing parses back and is one line per device.
	out, _, err := r.exec(context.Background(), "--list")
	if err != nil {
		t.Fatal(err)
	}
	devs, err := parseDevices(string(out))
	if err != nil || len(devs) != strings.Count(string(out), "\n") {
		t.Fatalf("parse: %v, %d devices for %q", err, len(devs), out)
	}
}

const addShader = `#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const float OFFSET = 0.0;
layout(constant_id = 1) const bool NEGATE = false;
layout(constant_id = 2) const uint N = 0u;
layout(push_constant) uniform Push { float scale; uint bias; } pc;
layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(std430, set = 0, binding = 3) writeonly buffer D { uint d[]; };
layout(std430, set = 0, binding = 4) writeonly buffer E { uint e[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i == 0u) {
        e[0] = floatBitsToUint(OFFSET);
        e[1] = NEGATE ? 1u : 0u;
        e[2] = N;
        e[3] = floatBitsToUint(pc.scale);
        e[4] = pc.bias;
    }
    if (i >= N) return;
    float v = a[i] * pc.scale + b[i] + OFFSET;
    c[i] = NEGATE ? -v : v;
    d[i] = i * 3u + pc.bias;
}
`

// 2. Two buffers added with a push-constant scale and specialization
// constants (a float, a bool and the element count).
func TestAddPushAndSpecConstants(t *testing.T) {
	r, _, sel := testDevice(t)
	spv := compile(t, addShader, nil)
	const n, tail = 1000, 24 // n is not a multiple of 64: the last group is partial
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i] = float32(i) * 0.25 // exact
		b[i] = float32(i%7) - 3 + 0.125*float32(i%3)
	}
	c := make([]float32, n+tail)
	for i := range c {
		c[i] = 12345 // sentinel: the guard must leave the tail alone
	}
	push := make([]byte, 8)
	binary.LittleEndian.PutUint32(push, math.Float32bits(3))
	binary.LittleEndian.PutUint32(push[4:], 7)
	for _, negate := range []bool{true, false} {
		spec := []SpecConst{SpecFloat(0, 0.5), SpecInt(2, n)}
		if negate { // otherwise the default (false) applies
			spec = append(spec, SpecBool(1, true))
		}
		res := run(t, r, Job{
			Device:  sel,
			Buffers: [][]byte{f32bytes(a), f32bytes(b), f32bytes(c), make([]byte, 4*n), make([]byte, 20)},
			Dispatches: []Dispatch{{
				SPIRV: spv, Spec: spec, Push: push,
				Groups: [3]uint32{(n + 63) / 64, 1, 1}, Bindings: []int{0, 1, 2, 3, 4},
			}},
		})
		// The constants arrive bit for bit.
		wantE := []uint32{math.Float32bits(0.5), 0, n, math.Float32bits(3), 7}
		if negate {
			wantE[1] = 1
		}
		if got := bytesU32(res.Buffers[4]); fmt.Sprint(got) != fmt.Sprint(wantE) {
			t.Fatalf("negate=%v: constants seen by the shader %v, want %v", negate, got, wantE)
		}
		if !strings.HasPrefix(res.Log, "device: "+res.Device+" subgroup=") {
			t.Errorf("stderr line 1: %q", res.Log)
		}
		gotC, gotD := bytesF32(res.Buffers[2]), bytesU32(res.Buffers[3])
		for i := 0; i < n; i++ {
			want := a[i]*3 + b[i] + 0.5 // every value is exact, fused or not
			if negate {
				want = -want
			}
			if math.Float32bits(gotC[i]) != math.Float32bits(want) {
				t.Fatalf("negate=%v: c[%d] = %v, want %v", negate, i, gotC[i], want)
			}
			if gotD[i] != uint32(i)*3+7 {
				t.Fatalf("d[%d] = %d, want %d", i, gotD[i], i*3+7)
			}
		}
		for i := n; i < n+tail; i++ {
			if gotC[i] != 12345 {
				t.Fatalf("c[%d] = %v: written past N", i, gotC[i])
			}
		}
		if string(res.Buffers[0]) != string(f32bytes(a)) || string(res.Buffers[1]) != string(f32bytes(b)) {
			t.Fatal("read-only inputs changed")
		}
	}
}

const butterflyShader = `#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(std430, binding = 2) writeonly buffer I { uint info[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    float v = x[i];
    y[4u * i] = v;
    v = v + subgroupShuffleXor(v, 4u);
    y[4u * i + 1u] = v;
    v = v + subgroupShuffleXor(v, 2u);
    y[4u * i + 2u] = v;
    v = v + subgroupShuffleXor(v, 1u);
    y[4u * i + 3u] = v;
    info[3u * i] = gl_SubgroupSize;
    info[3u * i + 1u] = gl_SubgroupID;
    info[3u * i + 2u] = gl_SubgroupInvocationID;
}
`

// 3. A subgroupShuffleXor butterfly over 8 lanes (masks 4, 2, 1): every
// lane's value after every step must have the bits of the butterfly order
// computed in Go from the lanes the device actually grouped.
func TestSubgroupShuffleXorButterfly(t *testing.T) {
	r, dev, sel := testDevice(t)
	if dev.SubgroupSize < 8 || !dev.HasSubgroupOp("shuffle") {
		skipOrFail(t, fmt.Errorf("device %s: subgroup size %d, ops %v: need >= 8 and shuffle", dev.Name, dev.SubgroupSize, dev.SubgroupOps))
	}
	spv := compile(t, butterflyShader, nil)
	const groups, local = 16, 64
	const n = groups * local
	rng := rand.New(rand.NewSource(1))
	x := make([]float32, n)
	for i := range x {
		// Mixed magnitudes and signs: float addition order shows in the bits.
		m := 1 + rng.Float64()
		e := rng.Intn(48) - 24
		s := 1.0
		if rng.Intn(2) == 0 {
			s = -1
		}
		x[i] = float32(s * math.Ldexp(m, e))
	}
	variants := []Dispatch{{}}
	if dev.SubgroupSizeControl && dev.FullSubgroups {
		variants = append(variants, Dispatch{RequiredSubgroupSize: uint32(dev.SubgroupSize), FullSubgroups: true})
	}
	for _, v := range variants {
		v.SPIRV, v.Groups, v.Bindings = spv, [3]uint32{groups, 1, 1}, []int{0, 1, 2}
		res := run(t, r, Job{Device: sel, Buffers: [][]byte{f32bytes(x), make([]byte, 16*n), make([]byte, 12*n)}, Dispatches: []Dispatch{v}})
		y, info := bytesF32(res.Buffers[1]), bytesU32(res.Buffers[2])
		// Group invocations by (workgroup, subgroup) and lane.
		type key struct{ wg, sg, lane uint32 }
		at := map[key]int{}
		for i := 0; i < n; i++ {
			size, sg, lane := info[3*i], info[3*i+1], info[3*i+2]
			if int(size) != res.SubgroupSize || lane >= size {
				t.Fatalf("invocation %d: gl_SubgroupSize %d (device says %d), lane %d", i, size, res.SubgroupSize, lane)
			}
			if lavapipe() && (size != 8 || int(sg) != (i%local)/8 || int(lane) != i%8) {
				t.Fatalf("lavapipe invocation %d: subgroup %d lane %d of %d, want %d lane %d of 8", i, sg, lane, size, (i%local)/8, i%8)
			}
			k := key{uint32(i / local), sg, lane}
			if _, dup := at[k]; dup {
				t.Fatalf("two invocations are %+v", k)
			}
			at[k] = i
		}
		orderMatters := 0
		for k, i := range at {
			var vals [8]float32 // the 8-lane cluster holding this lane
			base := k.lane &^ 7
			for l := uint32(0); l < 8; l++ {
				j, ok := at[key{k.wg, k.sg, base + l}]
				if !ok {
					t.Fatalf("lane %d of %+v missing", base+l, k)
				}
				vals[l] = x[j]
			}
			lane := k.lane & 7
			want := [4]float32{vals[lane]}
			cur := vals
			for step, mask := range []uint32{4, 2, 1} {
				var next [8]float32
				for l := uint32(0); l < 8; l++ {
					next[l] = cur[l] + cur[l^mask]
				}
				cur = next
				want[step+1] = cur[lane]
			}
			for s := 0; s < 4; s++ {
				if math.Float32bits(y[4*i+s]) != math.Float32bits(want[s]) {
					t.Fatalf("%+v invocation %d step %d: %v (%08x), want %v (%08x)", v.RequiredSubgroupSize, i, s, y[4*i+s], math.Float32bits(y[4*i+s]), want[s], math.Float32bits(want[s]))
				}
			}
			var seq float32
			for _, f := range vals {
				seq += f
			}
			if seq != want[3] {
				orderMatters++
			}
		}
		if orderMatters < n/8 {
			t.Fatalf("only %d of %d lanes' butterfly sums differ from the sequential sum: inputs too tame to test the order", orderMatters, n)
		}
	}
}

const phase1Shader = `#version 450
layout(local_size_x = 64) in;
layout(push_constant) uniform Push { uint n; } pc;
layout(std430, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, binding = 1) writeonly buffer Dst { uint dst[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) dst[i] = src[i] * 2u + 1u;
}
`

// Phase 2 reads what other workgroups of phase 1 wrote (the mirror index),
// so only the barrier between the dispatches makes it right.
const phase2Shader = `#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint ADD = 0u;
layout(push_constant) uniform Push { uint n; } pc;
layout(std430, binding = 0) writeonly buffer Out { uint outv[]; };
layout(std430, binding = 1) readonly buffer In { uint inv[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) outv[i] = inv[pc.n - 1u - i] + ADD;
}
`

// 4. Two dispatches in one job, binding subsets of the buffers in different
// orders: dispatch 1 writes B from A, dispatch 2 reads B into C; with the
// default barrier and with ggml-vulkan's.
func TestTwoDispatchesWithBarrier(t *testing.T) {
	for _, ggml := range []bool{false, true} {
		t.Run(fmt.Sprintf("ggml_barrier=%v", ggml), func(t *testing.T) { twoDispatches(t, ggml) })
	}
}

func twoDispatches(t *testing.T, ggmlBarrier bool) {
	r, _, sel := testDevice(t)
	p1, p2 := compile(t, phase1Shader, nil), compile(t, phase2Shader, nil)
	const n = 1 << 16
	a := make([]uint32, n)
	for i := range a {
		a[i] = uint32(i)*2654435761 ^ 0x5bd1e995
	}
	untouched := u32bytes([]uint32{0xdeadbeef, 1, 2, 3})
	push := u32bytes([]uint32{n})
	groups := [3]uint32{n / 64, 1, 1}
	res := run(t, r, Job{
		Device:      sel,
		GGMLBarrier: ggmlBarrier,
		// A, B, C, a buffer no dispatch binds, an empty buffer.
		Buffers: [][]byte{u32bytes(a), make([]byte, 4*n), make([]byte, 4*n), untouched, nil},
		Dispatches: []Dispatch{
			{SPIRV: p1, Push: push, Groups: groups, Bindings: []int{0, 1}},
			{SPIRV: p2, Push: push, Groups: groups, Bindings: []int{2, 1, 4}, Spec: []SpecConst{{0, 5}}},
		},
	})
	gotA, gotB, gotC := bytesU32(res.Buffers[0]), bytesU32(res.Buffers[1]), bytesU32(res.Buffers[2])
	for i := 0; i < n; i++ {
		if gotA[i] != a[i] {
			t.Fatalf("A[%d] changed", i)
		}
		if want := a[i]*2 + 1; gotB[i] != want {
			t.Fatalf("B[%d] = %d, want %d", i, gotB[i], want)
		}
		if want := a[n-1-i]*2 + 1 + 5; gotC[i] != want {
			t.Fatalf("C[%d] = %d, want %d (B[%d] + 5)", i, gotC[i], want, n-1-i)
		}
	}
	if string(res.Buffers[3]) != string(untouched) || len(res.Buffers[4]) != 0 {
		t.Fatalf("unbound buffer %x, empty buffer %d bytes", res.Buffers[3], len(res.Buffers[4]))
	}
}

// KERNELGEN_VULKAN_STATS asks the driver for each pipeline's statistics:
// a line per executable in the log where the device offers
// VK_KHR_pipeline_executable_properties (NVIDIA's driver does), else one
// line saying it has none; without the variable, neither.
func TestStatisticsOnRequest(t *testing.T) {
	r, _, sel := testDevice(t)
	spv := compile(t, phase1Shader, nil)
	const n = 256
	job := Job{
		Device:     sel,
		Buffers:    [][]byte{make([]byte, 4*n), make([]byte, 4*n)},
		Dispatches: []Dispatch{{SPIRV: spv, Push: u32bytes([]uint32{n}), Groups: [3]uint32{n / 64, 1, 1}, Bindings: []int{0, 1}}},
	}
	said := func(log string) bool {
		return strings.Contains(log, "vkrun: stats: dispatch 0 ") || strings.Contains(log, "no VK_KHR_pipeline_executable_properties: no statistics")
	}
	if log := run(t, r, job).Log; said(log) {
		t.Fatalf("statistics without KERNELGEN_VULKAN_STATS:\n%s", log)
	}
	stats := *r
	stats.Env = append(append([]string(nil), r.Env...), "KERNELGEN_VULKAN_STATS=1")
	if log := run(t, &stats, job).Log; !said(log) {
		t.Fatalf("KERNELGEN_VULKAN_STATS=1: no statistics and no line saying why:\n%s", log)
	}
}

// 5. Bad shaders and impossible requests are clear errors, not crashes.
func TestBadShadersAreClearErrors(t *testing.T) {
	r, dev, sel := testDevice(t)
	if _, err := CompileGLSL(context.Background(), []byte("#version 450\nvoid main() { undefined_name = 1; }\n"), nil, "comp"); !errors.Is(err, ErrMissingTool) && (err == nil || !strings.Contains(err.Error(), "undefined_name")) {
		t.Errorf("GLSL error not reported: %v", err)
	}
	good := compile(t, phase1Shader, nil)
	one := func(d Dispatch) Job {
		if d.Groups == [3]uint32{} {
			d.Groups = [3]uint32{1, 1, 1}
		}
		d.Bindings = []int{0, 1}
		d.Push = u32bytes([]uint32{4})
		return Job{Device: sel, Buffers: [][]byte{make([]byte, 16), make([]byte, 16)}, Dispatches: []Dispatch{d}}
	}
	corrupt := append([]byte{}, good...)
	binary.LittleEndian.PutUint32(corrupt[20:], 0xffff0011) // first instruction: word count 65535
	garbage := []byte("this is not SPIR-V at all")[:24]
	fullBad := compile(t, strings.Replace(phase1Shader, "local_size_x = 64", "local_size_x = 12", 1), nil)

	cases := []struct {
		name  string
		job   Job
		is    error
		wants []string
	}{
		{"bad entry point", one(Dispatch{SPIRV: good, Entry: "nope"}), nil, []string{`entry point "nope" not found`, "main"}},
		{"not SPIR-V", one(Dispatch{SPIRV: garbage}), nil, []string{"not a SPIR-V module"}},
		{"malformed SPIR-V", one(Dispatch{SPIRV: corrupt}), nil, []string{"malformed SPIR-V", "word count 65535"}},
		{"subgroup size not a power of two", one(Dispatch{SPIRV: good, RequiredSubgroupSize: 3}), ErrUnsupported, []string{"required subgroup size 3"}},
		{"subgroup size too large", one(Dispatch{SPIRV: good, RequiredSubgroupSize: 1 << 20}), ErrUnsupported, []string{"required subgroup size 1048576"}},
		{"too many workgroups", one(Dispatch{SPIRV: good, Groups: [3]uint32{1, 1, math.MaxUint32}}), ErrUnsupported, []string{"workgroups in dimension z"}},
		{"no such device", Job{Device: "no-such-device-xyzzy", Buffers: [][]byte{nil, nil}, Dispatches: []Dispatch{{SPIRV: good, Groups: [3]uint32{1, 1, 1}, Bindings: []int{0, 1}}}}, ErrNoDevice, []string{`"no-such-device-xyzzy"`, dev.Name}},
	}
	if !dev.DenormPreserveFloat32 { // lavapipe: runs only where not offered
		denorm := compile(t, strings.Replace(phase1Shader, "layout(local_size_x", glsl.DenormExtension+glsl.DenormMode+"layout(local_size_x", 1), nil)
		cases = append(cases, struct {
			name  string
			job   Job
			is    error
			wants []string
		}{"DenormPreserve not offered", one(Dispatch{SPIRV: denorm}), ErrUnsupported, []string{"shaderDenormPreserveFloat32", "KG_DENORM_PRESERVE"}})
	}
	if dev.FullSubgroups {
		cases = append(cases, struct {
			name  string
			job   Job
			is    error
			wants []string
		}{"full subgroups with local_size_x 12", one(Dispatch{SPIRV: fullBad, FullSubgroups: true}), ErrUnsupported, []string{"local_size_x (12)"}})
	}
	for _, c := range cases {
		_, err := r.Run(context.Background(), c.job)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("%s: %v is not %v", c.name, err, c.is)
		}
		if c.is == nil && (errors.Is(err, ErrNoDevice) || errors.Is(err, ErrUnsupported) || strings.Contains(err.Error(), "crashed")) {
			t.Errorf("%s: wrong kind of error: %v", c.name, err)
		}
		for _, w := range c.wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error does not mention %q:\n%v", c.name, w, err)
			}
		}
	}

	// Caught in Go before anything runs.
	for name, job := range map[string]Job{
		"binding out of range": {Buffers: [][]byte{nil}, Dispatches: []Dispatch{{SPIRV: good, Bindings: []int{0, 1}}}},
		"odd SPIR-V length":    {Dispatches: []Dispatch{{SPIRV: good[:len(good)-2]}}},
		"no dispatches":        {},
		"duplicate spec id":    {Dispatches: []Dispatch{{SPIRV: good, Spec: []SpecConst{{1, 1}, {1, 2}}}}},
		"bad device index":     {Device: "#x", Dispatches: []Dispatch{{SPIRV: good}}},
	} {
		if _, err := EncodeJob(job); err == nil {
			t.Errorf("%s: EncodeJob accepted it", name)
		}
	}
}

// 6. No driver: the loader finds no ICD, or there is no loader at all.
func TestMissingDeviceIsErrNoDevice(t *testing.T) {
	r := testRunner(t)
	spv := compile(t, phase1Shader, nil)
	empty := t.TempDir()
	job := Job{Buffers: [][]byte{nil, nil}, Dispatches: []Dispatch{{SPIRV: spv, Groups: [3]uint32{1, 1, 1}, Bindings: []int{0, 1}}}}
	for name, env := range map[string][]string{
		"no driver manifests":  {"VK_DRIVER_FILES=" + empty, "VK_ICD_FILENAMES=" + empty},
		"no loader":            {"KERNELGEN_VULKAN_LOADER=" + filepath.Join(empty, "libvulkan.so.1")},
		"no loader, no driver": {"KERNELGEN_VULKAN_LOADER=icd", "VK_DRIVER_FILES=" + empty},
	} {
		rr := *r
		rr.Env = env
		_, err := rr.Run(context.Background(), job)
		if !errors.Is(err, ErrNoDevice) || !strings.Contains(err.Error(), "mesa-vulkan-drivers") {
			t.Errorf("%s: Run: want ErrNoDevice with the install hint, got %v", name, err)
		}
		if _, err := rr.Devices(context.Background()); !errors.Is(err, ErrNoDevice) {
			t.Errorf("%s: Devices: want ErrNoDevice, got %v", name, err)
		}
	}
}

// Without a loader the runner calls the drivers directly.
func TestDriversWithoutLoader(t *testing.T) {
	r, dev, _ := testDevice(t)
	spv := compile(t, phase1Shader, nil)
	r.Env = []string{"KERNELGEN_VULKAN_LOADER=icd"}
	devs, err := r.Devices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	found := ""
	for _, d := range devs {
		if d.Name == dev.Name {
			found = fmt.Sprintf("#%d", d.Index)
		}
	}
	if found == "" {
		t.Fatalf("device %q not among %+v", dev.Name, devs)
	}
	res := run(t, r, Job{
		Device:     found,
		Buffers:    [][]byte{u32bytes([]uint32{1, 2, 3, 4}), make([]byte, 16)},
		Dispatches: []Dispatch{{SPIRV: spv, Push: u32bytes([]uint32{3}), Groups: [3]uint32{1, 1, 1}, Bindings: []int{0, 1}}},
	})
	if got := bytesU32(res.Buffers[1]); fmt.Sprint(got) != "[3 5 7 0]" || res.Device != dev.Name {
		t.Fatalf("got %v on %s", got, res.Device)
	}
}

// 7. A warm Build runs no compiler; a cold one without a compiler or without
// the Vulkan headers says which package to install.
func TestBuildCacheAndMissingTools(t *testing.T) {
	testRunner(t) // skips where the toolchain is missing
	t.Setenv("KERNELGEN_CACHE", t.TempDir())
	t.Setenv("KERNELGEN_VKRUN", "")
	ctx := context.Background()
	before := compiles.Load()
	r1, err := Build(ctx)
	if errors.Is(err, ErrMissingTool) { // e.g. a GPU host running a carried runner
		skipOrFail(t, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if compiles.Load() != before+1 {
		t.Fatalf("cold build ran the compiler %d times", compiles.Load()-before)
	}
	// Warm: no compiler is even on PATH.
	t.Setenv("PATH", t.TempDir())
	r2, err := Build(ctx)
	if err != nil || r2.Path() != r1.Path() || compiles.Load() != before+1 {
		t.Fatalf("warm build: err=%v path %s vs %s, %d compiles", err, r2.Path(), r1.Path(), compiles.Load()-before)
	}
	if fi, err := os.Stat(r1.Path()); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("built runner: %v %v", fi, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(r1.Path()))
	if len(entries) != 1 {
		t.Errorf("cache holds %d entries, want just the runner (no leftover temp dirs)", len(entries))
	}

	// Cold, no compiler.
	t.Setenv("KERNELGEN_CACHE", t.TempDir())
	if _, err := Build(ctx); !errors.Is(err, ErrMissingTool) || !strings.Contains(err.Error(), "apt-get install gcc") {
		t.Errorf("no compiler: %v", err)
	}
	// Cold, a compiler that cannot find the Vulkan headers.
	fake := filepath.Join(t.TempDir(), "fakecc")
	script := "#!/bin/sh\necho 'vkrun.c:27:10: fatal error: vulkan/vulkan.h: No such file or directory' >&2\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CC", fake)
	if _, err := Build(ctx); !errors.Is(err, ErrMissingTool) || !strings.Contains(err.Error(), "libvulkan-dev") {
		t.Errorf("no headers: %v", err)
	}
	// A prebuilt runner is used as is.
	t.Setenv("KERNELGEN_VKRUN", r1.Path())
	if r3, err := Build(ctx); err != nil || r3.Path() != r1.Path() {
		t.Errorf("KERNELGEN_VKRUN: %v %v", r3, err)
	}
}

// glslang missing names its package.
func TestCompileGLSLMissingGlslang(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	src := fmt.Sprintf("%s// %d\n", addShader, time.Now().UnixNano()) // not in the cache
	_, err := CompileGLSL(context.Background(), []byte(src), nil, "comp")
	if !errors.Is(err, ErrMissingTool) || !strings.Contains(err.Error(), "glslang-tools") {
		t.Fatalf("got %v", err)
	}
}

// The job encoding round-trips through the C parser's rules: a truncated or
// trailing-byte file is rejected by the runner with exit 1.
func TestRunnerRejectsMalformedJobFiles(t *testing.T) {
	r := testRunner(t)
	spv := compile(t, phase1Shader, nil)
	data, err := EncodeJob(Job{Buffers: [][]byte{nil, nil}, Dispatches: []Dispatch{{SPIRV: spv, Groups: [3]uint32{1, 1, 1}, Bindings: []int{0, 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{
		"truncated": data[:len(data)-3],
		"trailing":  append(append([]byte{}, data...), 0),
		"magic":     append([]byte("XXXXXXXX"), data[8:]...),
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		_, _, err := r.exec(context.Background(), p, filepath.Join(dir, name+".out"))
		if err == nil || !strings.Contains(err.Error(), "exit 1") || !strings.Contains(err.Error(), "job file") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// 8. The benchmark features: buffers sized beyond their pattern, device-local
// memory (uploaded and read back in chunks: the pattern buffer spans more than
// one 64 MiB staging chunk and its pattern does not divide the chunk), binding
// ranges at offsets, a module sent once for repeated dispatches, timestamps
// and no read-back.
func TestBenchFeatures(t *testing.T) {
	r, _, sel := testDevice(t)
	spv := compile(t, phase1Shader, nil)
	const big = 64<<20 + 256<<10 // bytes of the patterned source
	const n = 1000               // elements each dispatch writes
	pattern := u32bytes([]uint32{7, 11, 13})
	src := func(i uint64) uint32 { return []uint32{7, 11, 13}[i%3] }
	// Three dispatches, each reading a window of the source near or past the
	// first chunk and writing its own window of the destination.
	offs := []uint64{0, 64 << 20, big - 8192} // multiples of 256, the largest alignment allowed
	var ds []Dispatch
	for k, off := range offs {
		ds = append(ds, Dispatch{SPIRV: spv, Push: u32bytes([]uint32{n}), Groups: [3]uint32{(n + 63) / 64, 1, 1},
			Bindings: []int{0, 1}, Offsets: []uint64{off, uint64(k) * 4096}, Ranges: []uint64{0, 4 * n}})
	}
	for _, local := range []bool{false, true} {
		job := Job{Device: sel, Buffers: [][]byte{pattern, nil}, Sizes: []uint64{big, 3 * 4096},
			Dispatches: ds, DeviceLocal: local, TimeEvery: 1}
		if data, err := EncodeJob(job); err != nil || len(data) > 2*len(spv)+4096 {
			t.Fatalf("job file %d bytes for a %d-byte module (%v): the module must travel once", len(data), len(spv), err)
		}
		res := run(t, r, job)
		if len(res.Times) != len(ds) {
			t.Fatalf("local=%v: %d times, want %d", local, len(res.Times), len(ds))
		}
		for _, us := range res.Times {
			if !(us >= 0) || us > 10e6 {
				t.Fatalf("local=%v: times %v", local, res.Times)
			}
		}
		got := bytesU32(res.Buffers[0])
		if len(got) != big/4 {
			t.Fatalf("local=%v: source read back as %d bytes", local, len(res.Buffers[0]))
		}
		for i, v := range got {
			if v != src(uint64(i)) {
				t.Fatalf("local=%v: source[%d] = %d, want %d", local, i, v, src(uint64(i)))
			}
		}
		out := bytesU32(res.Buffers[1])
		for k, off := range offs {
			for i := 0; i < 4096/4; i++ {
				want := uint32(0)
				if i < n {
					want = src(off/4+uint64(i))*2 + 1
				}
				if g := out[k*1024+i]; g != want {
					t.Fatalf("local=%v: dispatch %d element %d = %d, want %d", local, k, i, g, want)
				}
			}
		}
		job.NoReadback = true
		res = run(t, r, job)
		if len(res.Buffers) != 2 || len(res.Buffers[0])+len(res.Buffers[1]) != 0 || len(res.Times) != len(ds) {
			t.Fatalf("local=%v, no read-back: %d buffers of %d and %d bytes, %d times", local, len(res.Buffers), len(res.Buffers[0]), len(res.Buffers[1]), len(res.Times))
		}
	}
	// Caught before the device: a range past the buffer's end, a period
	// that does not divide the dispatches.
	bad := Job{Buffers: [][]byte{pattern, nil}, Sizes: []uint64{64, 64}, Dispatches: []Dispatch{{SPIRV: spv, Bindings: []int{0, 1}, Offsets: []uint64{0, 32}, Ranges: []uint64{0, 64}}}}
	if _, err := EncodeJob(bad); err == nil || !strings.Contains(err.Error(), "bytes [32, 96) of buffer 1") {
		t.Errorf("range past the end: %v", err)
	}
	bad = Job{Buffers: [][]byte{nil}, Dispatches: []Dispatch{{SPIRV: spv}, {SPIRV: spv}, {SPIRV: spv}}, TimeEvery: 2}
	if _, err := EncodeJob(bad); err == nil {
		t.Error("TimeEvery 2 with 3 dispatches accepted")
	}
}
