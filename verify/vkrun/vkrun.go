package vkrun

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

//go:embed csrc/vkrun.c
var source []byte

// Errors that [Runner.Run], [Runner.Devices] and [Build] wrap.
var (
	// ErrNoDevice: no Vulkan loader, no driver, or no device matching the
	// selection (the runner exited 4). The message says what to install.
	ErrNoDevice = errors.New("no Vulkan device")
	// ErrUnsupported: the device lacks a feature or limit the job needs
	// (the runner exited 3).
	ErrUnsupported = errors.New("unsupported by the Vulkan device")
	// ErrMissingTool: the C compiler or the Vulkan headers are missing, so
	// the runner cannot be built. The message names the Debian package.
	ErrMissingTool = errors.New("missing tool")
)

// SpecConst sets one specialization constant. Every value is 32 bits: a bool
// constant is 0 or 1 (see [SpecBool]), a float its IEEE bits ([SpecFloat]).
type SpecConst struct {
	ID    uint32
	Value uint32
}

// SpecBool is a bool specialization constant.
func SpecBool(id uint32, v bool) SpecConst {
	if v {
		return SpecConst{id, 1}
	}
	return SpecConst{id, 0}
}

// SpecFloat is a float specialization constant.
func SpecFloat(id uint32, v float32) SpecConst { return SpecConst{id, math.Float32bits(v)} }

// SpecInt is an int specialization constant.
func SpecInt(id uint32, v int32) SpecConst { return SpecConst{id, uint32(v)} }

// Dispatch is one vkCmdDispatch with its own pipeline.
type Dispatch struct {
	SPIRV []byte
	// Entry is the GLCompute entry point; "" means "main".
	Entry string
	Spec  []SpecConst
	// Push is the push-constant block's bytes (zero-padded to a multiple of 4).
	Push   []byte
	Groups [3]uint32
	// Bindings are indices into Job.Buffers: Bindings[k] is bound to
	// set 0, binding k.
	Bindings []int
	// RequiredSubgroupSize, when > 0, requires that subgroup size for the
	// pipeline (ErrUnsupported when the device cannot).
	RequiredSubgroupSize uint32
	// FullSubgroups requires full subgroups (local_size_x must be a multiple
	// of the subgroup size).
	FullSubgroups bool
	// Offsets and Ranges, when either is set, bind part of a buffer:
	// binding k starts Offsets[k] bytes into its buffer (a multiple of the
	// device's minStorageBufferOffsetAlignment, which is at most 256) and
	// covers Ranges[k] bytes (0: to the end). A nil slice means all zeros.
	Offsets, Ranges []uint64
}

// Job is a list of dispatches over a shared list of storage buffers, run in
// one command buffer with a full memory barrier between dispatches.
type Job struct {
	// Device selects the physical device: "" means $KERNELGEN_VK_DEVICE, and
	// when that is unset too, the first device; "#N" is device index N; any
	// other string picks the first device whose name contains it (ASCII
	// case-insensitive).
	Device string
	// Buffers are the storage buffers' initial contents. A zero-length
	// buffer is bound as a 4-byte dummy and reads back empty.
	Buffers    [][]byte
	Dispatches []Dispatch
	// Timeout bounds the GPU work (each fence wait). 0 sets no bound: the
	// wait ends with Run's context (a test's, go test's deadline), so a
	// busy machine cannot fail a job that a fixed figure would.
	Timeout time.Duration

	// The fields below serve benchmarks on a discrete GPU.

	// Sizes, when set, gives buffer i a size of Sizes[i] bytes (0:
	// len(Buffers[i])) and initial contents Buffers[i] repeated to that size
	// (zeros when empty), so a pool of gigabytes costs its pattern's bytes.
	Sizes []uint64
	// DeviceLocal puts the buffers in device-local memory, filled and read
	// back through a staging buffer (host-visible memory on a discrete GPU
	// is system memory, reached across the bus).
	DeviceLocal bool
	// NoReadback leaves the buffers unread: Result.Buffers are all empty.
	NoReadback bool
	// TimeEvery, when > 0, writes a GPU timestamp before the first dispatch
	// and after every TimeEvery dispatches (the dispatch count must be a
	// multiple of it); Result.Times holds the intervals.
	TimeEvery int
	// GGMLBarrier records between dispatches the barrier ggml-vulkan puts
	// between dependent nodes (ggml_vk_sync_buffers on its compute queue:
	// compute and transfer stages, shader and transfer accesses) instead
	// of the default compute-to-compute one with memory accesses.
	GGMLBarrier bool
}

// Result is what a job left in its buffers.
type Result struct {
	Device string
	// SubgroupSize is the device's default subgroup size.
	SubgroupSize int
	Buffers      [][]byte
	// Times are the microseconds between consecutive GPU timestamps, one
	// per group of Job.TimeEvery dispatches.
	Times []float64
	// Log is everything the runner printed on stderr.
	Log string
}

// DeviceInfo describes one physical device, as `vkrun --list` prints it.
type DeviceInfo struct {
	Index      int
	Name       string
	Type       string // cpu, discrete, integrated, virtual, other
	APIVersion string // e.g. "1.3.230"
	VendorID   uint32
	DeviceID   uint32
	Driver     string // e.g. "llvmpipe", "NVIDIA" (Vulkan 1.2 devices)
	DriverInfo string
	// SubgroupSize is the default subgroup size.
	SubgroupSize int
	// MinSubgroupSize, MaxSubgroupSize and MaxWorkgroupSubgroups are 0
	// without subgroup size control (Vulkan 1.3 or VK_EXT_subgroup_size_control).
	MinSubgroupSize       int
	MaxSubgroupSize       int
	MaxWorkgroupSubgroups int
	// SubgroupSizeControl: a compute shader may require a subgroup size.
	SubgroupSizeControl bool
	// FullSubgroups: computeFullSubgroups is supported.
	FullSubgroups bool
	// SubgroupInCompute: subgroup operations are supported in compute shaders.
	SubgroupInCompute bool
	// Float64: shaderFloat64 is supported (portable kernels' exact fma needs it).
	Float64 bool
	// DenormPreserveFloat32: shaders may ask for 32-bit denormals to be
	// preserved (float controls, shaderDenormPreserveFloat32).
	DenormPreserveFloat32 bool
	// SubgroupOps are the supported subgroup operation classes: basic, vote,
	// arithmetic, ballot, shuffle, shuffle_relative, clustered, quad, ...
	SubgroupOps []string
}

// HasSubgroupOp reports whether op is among d.SubgroupOps.
func (d DeviceInfo) HasSubgroupOp(op string) bool {
	for _, o := range d.SubgroupOps {
		if o == op {
			return true
		}
	}
	return false
}

// Runner is a built vkrun program.
type Runner struct {
	path string
	// Env is added to the environment the program runs with (after
	// os.Environ, so it overrides).
	Env []string
}

// Path is the built program, so that a script can carry it to another
// machine (it needs libvulkan.so.1 and a driver there, nothing else but libc).
func (r *Runner) Path() string { return r.path }

// cflags are the compiler flags; part of the cache key.
var (
	cflags = []string{"-std=c11", "-O2", "-Wall"}
	libs   = []string{"-ldl"}
)

// compiles counts compiler runs (tests check that a warm Build does none).
var compiles atomic.Int64

// CacheDir is where built runners are kept: $KERNELGEN_CACHE/vkrun, or
// kernelgen/vkrun in the user cache directory.
func CacheDir() (string, error) {
	if d := os.Getenv("KERNELGEN_CACHE"); d != "" {
		return filepath.Join(d, "vkrun"), nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "kernelgen", "vkrun"), nil
}

// Build compiles vkrun.c with $CC (default cc) and caches the program by the
// hash of the source and flags; a warm Build runs no compiler. $KERNELGEN_VKRUN_CFLAGS adds compiler flags (e.g. -I for Vulkan
// headers elsewhere); $KERNELGEN_VKRUN names a prebuilt program to use as is.
func Build(ctx context.Context) (*Runner, error) {
	if p := os.Getenv("KERNELGEN_VKRUN"); p != "" {
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("vkrun: $KERNELGEN_VKRUN=%s is not a file: %v", p, err)
		}
		return &Runner{path: p}, nil
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	args := append(append([]string{}, cflags...), strings.Fields(os.Getenv("KERNELGEN_VKRUN_CFLAGS"))...)
	h := sha256.New()
	// The compiler's name is not part of the key: any C11 compiler builds the
	// same program, and a cache carried to another machine stays valid there.
	fmt.Fprintf(h, "vkrun build 1\x00%s/%s\x00%s\x00%s\x00", runtime.GOOS, runtime.GOARCH,
		strings.Join(args, "\x01"), strings.Join(libs, "\x01"))
	h.Write(source)
	key := hex.EncodeToString(h.Sum(nil))[:24]

	dir, err := CacheDir()
	if err != nil {
		return nil, fmt.Errorf("vkrun: no cache directory (set KERNELGEN_CACHE): %w", err)
	}
	bin := filepath.Join(dir, "vkrun-"+key)
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return &Runner{path: bin}, nil
	}

	ccPath, err := exec.LookPath(cc)
	if err != nil {
		return nil, fmt.Errorf("%w: C compiler %q not found, needed to build the Vulkan runner; install it with `apt-get install gcc` (or set CC)", ErrMissingTool, cc)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	src := filepath.Join(work, "vkrun.c")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		return nil, err
	}
	out := filepath.Join(work, "vkrun")
	cmdArgs := append(append(append([]string{}, args...), "-o", out, src), libs...)
	cmd := exec.CommandContext(ctx, ccPath, cmdArgs...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	msg, err := cmd.CombinedOutput()
	compiles.Add(1)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("vkrun: building: %w", ctx.Err())
		}
		text := strings.TrimSpace(string(msg))
		if strings.Contains(text, "vulkan/vulkan.h") || strings.Contains(text, "vulkan_core.h") {
			return nil, fmt.Errorf("%w: the Vulkan headers are missing, needed to build the Vulkan runner; install them with `apt-get install libvulkan-dev` (or add -I... to KERNELGEN_VKRUN_CFLAGS)\n%s", ErrMissingTool, text)
		}
		return nil, fmt.Errorf("vkrun: %s %s failed: %v\n%s", cc, strings.Join(cmdArgs, " "), err, text)
	}
	// Publish atomically: a concurrent or interrupted build never leaves half a program.
	if err := os.Chmod(out, 0o755); err != nil {
		return nil, err
	}
	if err := os.Rename(out, bin); err != nil {
		return nil, err
	}
	return &Runner{path: bin}, nil
}

const (
	jobMagic      = "KGVKJOB\x00"
	outMagic      = "KGVKOUT\x00"
	timeMagic     = "KGVKTIME"
	formatVersion = 1
	flagFull      = 1
	flagRanges    = 2

	jobDeviceLocal = 1
	jobTiled       = 2
	jobNoReadback  = 4
	jobTimestamps  = 8
	jobGGMLBarrier = 16
)

// resolveDevice turns Job.Device into the job file's index and name.
func resolveDevice(sel string) (int32, string, error) {
	if sel == "" {
		sel = os.Getenv("KERNELGEN_VK_DEVICE")
	}
	if strings.HasPrefix(sel, "#") {
		n, err := strconv.ParseInt(sel[1:], 10, 32)
		if err != nil || n < 0 {
			return 0, "", fmt.Errorf("vkrun: device %q: want #N with N a device index", sel)
		}
		return int32(n), "", nil
	}
	return -1, sel, nil
}

// EncodeJob writes job in the job-file format (see the package doc),
// checking what can be checked without a device.
func EncodeJob(job Job) ([]byte, error) {
	idx, name, err := resolveDevice(job.Device)
	if err != nil {
		return nil, err
	}
	if len(job.Dispatches) == 0 {
		return nil, errors.New("vkrun: job has no dispatches")
	}
	var flags uint32
	if job.DeviceLocal {
		flags |= jobDeviceLocal
	}
	if job.Sizes != nil {
		flags |= jobTiled
		if len(job.Sizes) != len(job.Buffers) {
			return nil, fmt.Errorf("vkrun: %d sizes for %d buffers", len(job.Sizes), len(job.Buffers))
		}
	}
	if job.NoReadback {
		flags |= jobNoReadback
	}
	if job.TimeEvery < 0 || job.TimeEvery > 0 && len(job.Dispatches)%job.TimeEvery != 0 {
		return nil, fmt.Errorf("vkrun: %d dispatches, not a multiple of TimeEvery %d", len(job.Dispatches), job.TimeEvery)
	}
	if job.TimeEvery > 0 {
		flags |= jobTimestamps
	}
	if job.GGMLBarrier {
		flags |= jobGGMLBarrier
	}
	size := func(i int) uint64 {
		if job.Sizes != nil && job.Sizes[i] != 0 {
			return job.Sizes[i]
		}
		return uint64(len(job.Buffers[i]))
	}
	var b bytes.Buffer
	u32 := func(v uint32) { binary.Write(&b, binary.LittleEndian, v) }
	u64 := func(v uint64) { binary.Write(&b, binary.LittleEndian, v) }
	blob := func(p []byte) { u32(uint32(len(p))); b.Write(p) }
	b.WriteString(jobMagic)
	u32(formatVersion)
	u32(flags)
	u32(uint32(idx))
	blob([]byte(name))
	ms := job.Timeout.Milliseconds()
	switch {
	case job.Timeout < 0:
		return nil, errors.New("vkrun: negative timeout")
	case job.Timeout == 0:
		ms = math.MaxUint32 // the runner's "no bound"
	case ms == 0:
		ms = 1
	case ms >= math.MaxUint32:
		ms = math.MaxUint32 - 1
	}
	u32(uint32(ms))
	if job.TimeEvery > 0 {
		u32(uint32(job.TimeEvery))
	}
	u32(uint32(len(job.Buffers)))
	for i, buf := range job.Buffers {
		if uint64(len(buf)) > size(i) {
			return nil, fmt.Errorf("vkrun: buffer %d: %d bytes of contents, size %d", i, len(buf), size(i))
		}
		u64(size(i))
		if job.Sizes != nil {
			u64(uint64(len(buf)))
		}
		b.Write(buf)
	}
	u32(uint32(len(job.Dispatches)))
	// A module repeated in later dispatches (benchmark repetitions) is
	// sent once; the runner also gives them one pipeline.
	firstUse := map[string]int{}
	for i, d := range job.Dispatches {
		if len(d.SPIRV) == 0 || len(d.SPIRV)%4 != 0 {
			return nil, fmt.Errorf("vkrun: dispatch %d: SPIR-V is %d bytes, not a positive multiple of 4", i, len(d.SPIRV))
		}
		if len(d.SPIRV) > math.MaxUint32 || len(d.Push) > math.MaxUint32 {
			return nil, fmt.Errorf("vkrun: dispatch %d: too large", i)
		}
		entry := d.Entry
		if entry == "" {
			entry = "main"
		}
		if strings.IndexByte(entry, 0) >= 0 {
			return nil, fmt.Errorf("vkrun: dispatch %d: entry point name contains NUL", i)
		}
		if first, ok := firstUse[string(d.SPIRV)]; ok {
			u32(0)
			u32(uint32(first))
		} else {
			firstUse[string(d.SPIRV)] = i
			blob(d.SPIRV)
		}
		blob([]byte(entry))
		seen := map[uint32]bool{}
		u32(uint32(len(d.Spec)))
		for _, s := range d.Spec {
			if seen[s.ID] {
				return nil, fmt.Errorf("vkrun: dispatch %d: specialization constant %d given twice", i, s.ID)
			}
			seen[s.ID] = true
			u32(s.ID)
			u32(s.Value)
		}
		blob(d.Push)
		for _, g := range d.Groups {
			u32(g)
		}
		u32(uint32(len(d.Bindings)))
		for k, bi := range d.Bindings {
			if bi < 0 || bi >= len(job.Buffers) {
				return nil, fmt.Errorf("vkrun: dispatch %d: binding %d names buffer %d, the job has %d buffers", i, k, bi, len(job.Buffers))
			}
			u32(uint32(bi))
		}
		u32(d.RequiredSubgroupSize)
		ranged := d.Offsets != nil || d.Ranges != nil
		var flags uint32
		if d.FullSubgroups {
			flags |= flagFull
		}
		if ranged {
			flags |= flagRanges
		}
		u32(flags)
		if !ranged {
			continue
		}
		if d.Offsets != nil && len(d.Offsets) != len(d.Bindings) || d.Ranges != nil && len(d.Ranges) != len(d.Bindings) {
			return nil, fmt.Errorf("vkrun: dispatch %d: %d offsets and %d ranges for %d bindings", i, len(d.Offsets), len(d.Ranges), len(d.Bindings))
		}
		for k, bi := range d.Bindings {
			var off, rng uint64
			if d.Offsets != nil {
				off = d.Offsets[k]
			}
			if d.Ranges != nil {
				rng = d.Ranges[k]
			}
			if off > size(bi) || off+rng > size(bi) {
				return nil, fmt.Errorf("vkrun: dispatch %d: binding %d: bytes [%d, %d) of buffer %d, which has %d", i, k, off, off+rng, bi, size(bi))
			}
			u64(off)
			u64(rng)
		}
	}
	return b.Bytes(), nil
}

// DecodeOutput reads a runner's output file.
func DecodeOutput(p []byte) (*Result, error) {
	bad := func(what string) (*Result, error) {
		return nil, fmt.Errorf("vkrun: malformed output file: %s", what)
	}
	if len(p) < 12 || string(p[:8]) != outMagic {
		return bad("bad magic")
	}
	if v := binary.LittleEndian.Uint32(p[8:]); v != formatVersion {
		return bad(fmt.Sprintf("version %d, want %d", v, formatVersion))
	}
	p = p[12:]
	u32 := func() (uint32, bool) {
		if len(p) < 4 {
			return 0, false
		}
		v := binary.LittleEndian.Uint32(p)
		p = p[4:]
		return v, true
	}
	take := func(n uint64) ([]byte, bool) {
		if uint64(len(p)) < n {
			return nil, false
		}
		b := p[:n:n]
		p = p[n:]
		return b, true
	}
	sg, ok1 := u32()
	nl, ok2 := u32()
	if !ok1 || !ok2 {
		return bad("truncated header")
	}
	name, ok := take(uint64(nl))
	if !ok {
		return bad("truncated device name")
	}
	nb, ok := u32()
	if !ok {
		return bad("truncated buffer count")
	}
	res := &Result{Device: string(name), SubgroupSize: int(sg)}
	for i := uint32(0); i < nb; i++ {
		lo, ok1 := u32()
		hi, ok2 := u32()
		if !ok1 || !ok2 {
			return bad(fmt.Sprintf("truncated size of buffer %d", i))
		}
		buf, ok := take(uint64(hi)<<32 | uint64(lo))
		if !ok {
			return bad(fmt.Sprintf("truncated buffer %d", i))
		}
		res.Buffers = append(res.Buffers, buf)
	}
	if len(p) >= 12 && string(p[:8]) == timeMagic {
		p = p[8:]
		n, _ := u32()
		for i := uint32(0); i < n; i++ {
			b, ok := take(8)
			if !ok {
				return bad("truncated timestamps")
			}
			res.Times = append(res.Times, math.Float64frombits(binary.LittleEndian.Uint64(b)))
		}
	}
	if len(p) != 0 {
		return bad("trailing bytes")
	}
	return res, nil
}

// exec runs the program; its error carries stderr and maps exit codes 3
// and 4 to ErrUnsupported and ErrNoDevice.
func (r *Runner) exec(ctx context.Context, args ...string) (stdout []byte, stderr string, err error) {
	cmd := exec.CommandContext(ctx, r.path, args...)
	cmd.Env = append(os.Environ(), r.Env...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	stderr = se.String()
	msg := strings.TrimSpace(stderr)
	if err == nil {
		return so.Bytes(), stderr, nil
	}
	if ctx.Err() != nil {
		return nil, stderr, fmt.Errorf("vkrun: %w\n%s", ctx.Err(), msg)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return nil, stderr, fmt.Errorf("vkrun: running %s: %w", r.path, err)
	}
	switch code := ee.ExitCode(); code {
	case 4:
		return nil, stderr, fmt.Errorf("%w (vkrun exit 4):\n%s", ErrNoDevice, msg)
	case 3:
		return nil, stderr, fmt.Errorf("%w (vkrun exit 3):\n%s", ErrUnsupported, msg)
	case -1:
		return nil, stderr, fmt.Errorf("vkrun crashed (%v):\n%s", ee, msg)
	default:
		return nil, stderr, fmt.Errorf("vkrun failed (exit %d):\n%s", code, msg)
	}
}

// Run runs job and returns every buffer's final contents.
func (r *Runner) Run(ctx context.Context, job Job) (*Result, error) {
	data, err := EncodeJob(job)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kernelgen-vkrun-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	jobPath, outPath := filepath.Join(dir, "job.bin"), filepath.Join(dir, "out.bin")
	if err := os.WriteFile(jobPath, data, 0o644); err != nil {
		return nil, err
	}
	_, log, err := r.exec(ctx, jobPath, outPath)
	if err != nil {
		return nil, err
	}
	out, err := os.ReadFile(outPath)
	if err != nil {
		return nil, fmt.Errorf("vkrun: reading its output: %w\n%s", err, strings.TrimSpace(log))
	}
	res, err := DecodeOutput(out)
	if err != nil {
		return nil, err
	}
	if len(res.Buffers) != len(job.Buffers) {
		return nil, fmt.Errorf("vkrun: output has %d buffers, the job %d", len(res.Buffers), len(job.Buffers))
	}
	res.Log = log
	return res, nil
}

// Devices lists the physical devices (`vkrun --list`).
func (r *Runner) Devices(ctx context.Context) ([]DeviceInfo, error) {
	out, _, err := r.exec(ctx, "--list")
	if err != nil {
		return nil, err
	}
	return parseDevices(string(out))
}

func parseDevices(s string) ([]DeviceInfo, error) {
	var devs []DeviceInfo
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if line == "" {
			continue
		}
		var d DeviceInfo
		atoi := func(v string) int { n, _ := strconv.Atoi(v); return n }
		hex32 := func(v string) uint32 { n, _ := strconv.ParseUint(v, 0, 32); return uint32(n) }
		seenIndex := false
		for _, field := range strings.Split(line, "\t") {
			k, v, ok := strings.Cut(field, "=")
			if !ok {
				return nil, fmt.Errorf("vkrun --list: malformed field %q in %q", field, line)
			}
			switch k {
			case "index":
				d.Index, seenIndex = atoi(v), true
			case "name":
				d.Name = v
			case "type":
				d.Type = v
			case "api":
				d.APIVersion = v
			case "vendor":
				d.VendorID = hex32(v)
			case "device_id":
				d.DeviceID = hex32(v)
			case "driver":
				d.Driver = v
			case "driver_info":
				d.DriverInfo = v
			case "subgroup":
				d.SubgroupSize = atoi(v)
			case "min_subgroup":
				d.MinSubgroupSize = atoi(v)
			case "max_subgroup":
				d.MaxSubgroupSize = atoi(v)
			case "max_workgroup_subgroups":
				d.MaxWorkgroupSubgroups = atoi(v)
			case "size_control":
				d.SubgroupSizeControl = v == "1"
			case "full_subgroups":
				d.FullSubgroups = v == "1"
			case "subgroup_compute":
				d.SubgroupInCompute = v == "1"
			case "float64":
				d.Float64 = v == "1"
			case "denorm_preserve32":
				d.DenormPreserveFloat32 = v == "1"
			case "ops":
				if v != "" {
					d.SubgroupOps = strings.Split(v, ",")
				}
			}
		}
		if !seenIndex {
			return nil, fmt.Errorf("vkrun --list: no index in %q", line)
		}
		devs = append(devs, d)
	}
	return devs, nil
}
