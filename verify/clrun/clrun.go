// Package clrun is a small OpenCL runner (csrc/clrun.c, built on first use
// and cached): it builds OpenCL C programs on one device and runs batches
// of jobs, each a list of kernel launches over shared buffers, returning
// every buffer's final contents. PoCL (a CPU implementation) runs it in CI.
//
// Batch file (little-endian u32s; str is a u32 length then its bytes):
//
//	"KGCLJOB1"
//	u32 programs, each: str source, str build options, str name
//	u32 jobs, each: u32 buffers, each str contents;
//	                u32 launches, each: u32 program, str kernel,
//	                    u32 args, each: u32 kind (0 buffer index, 1 4-byte scalar,
//	                    2 8-byte scalar), u32 value (kind 2: low half, then a u32 high half);
//	                    3 x (u32 groups, u32 local size)
//
// Output: "KGCLOUT1", u32 jobs, each: u32 buffers, each str contents.
package clrun

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

//go:embed csrc/clrun.c
var source []byte

var (
	// ErrNoDevice: no OpenCL loader, platform or device (exit 4).
	ErrNoDevice = errors.New("no OpenCL device")
	// ErrBuild: a program did not build, or built with warnings (exit 3).
	ErrBuild = errors.New("OpenCL program build failed")
	// ErrMissingTool: no C compiler or OpenCL headers to build the runner.
	ErrMissingTool = errors.New("missing tool")
)

// Program is one OpenCL C source and its build options.
type Program struct {
	Source  []byte
	Options string
	Name    string // for messages
}

// Arg is one kernel argument: a buffer of the job, or a 32-bit scalar, or
// with Wide a 64-bit one (a ulong, as ggml-opencl passes buffer offsets).
type Arg struct {
	Buffer int // index into Job.Buffers; -1 for a scalar
	Value  uint32
	Wide   bool
	High   uint32 // the high half of a Wide scalar
}

// Launch is one clEnqueueNDRangeKernel: Groups workgroups of Local work-items.
type Launch struct {
	Program       int
	Kernel        string
	Args          []Arg
	Groups, Local [3]uint32
}

// Job is launches run in order over buffers of its own.
type Job struct {
	Buffers  [][]byte
	Launches []Launch
}

// Batch is programs built once and the jobs that use them.
type Batch struct {
	Programs []Program
	Jobs     []Job
}

// Device is one device as `clrun --list` prints it.
type Device struct {
	Platform, Name, CVersion string
	Extensions               []string
	// GGMLStd is the OpenCL C version ggml-opencl builds its kernels for on
	// the device ("CL3.0"): on an OpenCL 3 platform the largest the device
	// lists, else its CL_DEVICE_OPENCL_C_VERSION.
	GGMLStd string
}

// GGMLFlags are the options ggml-opencl's load_cl_kernels builds every
// kernel with, after -cl-std=CL<the device's OpenCL C version>.
const GGMLFlags = "-cl-mad-enable -cl-unsafe-math-optimizations -cl-finite-math-only -cl-fast-relaxed-math"

// GGMLOptions are the options ggml-opencl builds its kernels with on d.
func (d Device) GGMLOptions() string { return "-cl-std=" + d.GGMLStd + " " + GGMLFlags }

// Has reports whether the device offers extension ext.
func (d Device) Has(ext string) bool {
	for _, e := range d.Extensions {
		if e == ext {
			return true
		}
	}
	return false
}

// Runner is a built clrun program. Env adds environment variables to its runs.
type Runner struct {
	path string
	Env  []string
}

var cflags = []string{"-std=c11", "-O2", "-Wall", "-Werror"}

// CacheDir is where built runners are kept: $KERNELGEN_CACHE/clrun, or
// kernelgen/clrun in the user cache directory.
func CacheDir() (string, error) {
	if d := os.Getenv("KERNELGEN_CACHE"); d != "" {
		return filepath.Join(d, "clrun"), nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "kernelgen", "clrun"), nil
}

// Build compiles clrun.c with $CC (default cc), cached by the hash of the
// source and flags.
func Build(ctx context.Context) (*Runner, error) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	h := sha256.New()
	fmt.Fprintf(h, "clrun build 1\x00%s/%s\x00%s\x00", runtime.GOOS, runtime.GOARCH, strings.Join(cflags, "\x01"))
	h.Write(source)
	dir, err := CacheDir()
	if err != nil {
		return nil, fmt.Errorf("clrun: no cache directory (set KERNELGEN_CACHE): %w", err)
	}
	bin := filepath.Join(dir, "clrun-"+hex.EncodeToString(h.Sum(nil))[:24])
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
		return &Runner{path: bin}, nil
	}
	ccPath, err := exec.LookPath(cc)
	if err != nil {
		return nil, fmt.Errorf("%w: C compiler %q not found, needed to build the OpenCL runner; install it with `apt-get install gcc` (or set CC)", ErrMissingTool, cc)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	src, out := filepath.Join(work, "clrun.c"), filepath.Join(work, "clrun")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		return nil, err
	}
	args := append(append([]string{}, cflags...), "-o", out, src, "-ldl")
	cmd := exec.CommandContext(ctx, ccPath, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if msg, err := cmd.CombinedOutput(); err != nil {
		text := strings.TrimSpace(string(msg))
		if strings.Contains(text, "CL/cl.h") {
			return nil, fmt.Errorf("%w: the OpenCL headers are missing, needed to build the OpenCL runner; install them with `apt-get install ocl-icd-opencl-dev`\n%s", ErrMissingTool, text)
		}
		return nil, fmt.Errorf("clrun: %s %s failed: %v\n%s", cc, strings.Join(args, " "), err, text)
	}
	// Publish atomically: a concurrent build never leaves half a program.
	if err := os.Rename(out, bin); err != nil {
		return nil, err
	}
	return &Runner{path: bin}, nil
}

func (r *Runner) exec(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, r.path, args...)
	cmd.Env = append(os.Environ(), r.Env...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	msg := strings.TrimSpace(se.String())
	if err == nil {
		return so.Bytes(), nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("clrun: %w\n%s", ctx.Err(), msg)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return nil, fmt.Errorf("clrun: running %s: %w", r.path, err)
	}
	switch code := ee.ExitCode(); code {
	case 4:
		return nil, fmt.Errorf("%w (clrun exit 4):\n%s", ErrNoDevice, msg)
	case 3:
		return nil, fmt.Errorf("%w:\n%s", ErrBuild, msg)
	default:
		return nil, fmt.Errorf("clrun failed (exit %d):\n%s", code, msg)
	}
}

// Devices lists every OpenCL device (`clrun --list`).
func (r *Runner) Devices(ctx context.Context) ([]Device, error) {
	out, err := r.exec(ctx, "--list")
	if err != nil {
		return nil, err
	}
	var ds []Device
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			return nil, fmt.Errorf("clrun --list: malformed line %q", line)
		}
		ds = append(ds, Device{Platform: strings.TrimSpace(f[0]), Name: strings.TrimSpace(f[1]), CVersion: strings.TrimSpace(f[2]), Extensions: strings.Fields(f[3]), GGMLStd: strings.TrimSpace(f[4])})
	}
	return ds, nil
}

// Selected is the device a run uses, as clrun picks it: the one
// $KERNELGEN_CL_DEVICE names ("#N", or a substring of its name; r.Env
// before the process's environment), else the first.
func (r *Runner) Selected(ctx context.Context) (Device, error) {
	ds, err := r.Devices(ctx)
	if err != nil {
		return Device{}, err
	}
	if len(ds) == 0 {
		return Device{}, ErrNoDevice
	}
	want := os.Getenv("KERNELGEN_CL_DEVICE")
	for _, e := range r.Env {
		if v, ok := strings.CutPrefix(e, "KERNELGEN_CL_DEVICE="); ok {
			want = v
		}
	}
	if want == "" {
		return ds[0], nil
	}
	if n, ok := strings.CutPrefix(want, "#"); ok {
		i, err := strconv.Atoi(n)
		if err != nil || i < 0 || i >= len(ds) {
			return Device{}, fmt.Errorf("%w: no OpenCL device %s (%d found)", ErrNoDevice, want, len(ds))
		}
		return ds[i], nil
	}
	for _, d := range ds {
		if strings.Contains(d.Name, want) {
			return d, nil
		}
	}
	return Device{}, fmt.Errorf("%w: no OpenCL device whose name contains %s", ErrNoDevice, want)
}

// Encode writes a batch file.
func Encode(b Batch) []byte {
	var w bytes.Buffer
	u := func(v uint32) { binary.Write(&w, binary.LittleEndian, v) }
	str := func(s []byte) { u(uint32(len(s))); w.Write(s) }
	w.WriteString("KGCLJOB1")
	u(uint32(len(b.Programs)))
	for _, p := range b.Programs {
		str(p.Source)
		str([]byte(p.Options))
		str([]byte(p.Name))
	}
	u(uint32(len(b.Jobs)))
	for _, j := range b.Jobs {
		u(uint32(len(j.Buffers)))
		for _, buf := range j.Buffers {
			str(buf)
		}
		u(uint32(len(j.Launches)))
		for _, l := range j.Launches {
			u(uint32(l.Program))
			str([]byte(l.Kernel))
			u(uint32(len(l.Args)))
			for _, a := range l.Args {
				if a.Buffer >= 0 {
					u(0)
					u(uint32(a.Buffer))
				} else if a.Wide {
					u(2)
					u(a.Value)
					u(a.High)
				} else {
					u(1)
					u(a.Value)
				}
			}
			for d := 0; d < 3; d++ {
				u(l.Groups[d])
				u(l.Local[d])
			}
		}
	}
	return w.Bytes()
}

// Decode reads an output file: each job's buffers.
func Decode(p []byte) ([][][]byte, error) {
	if len(p) < 12 || string(p[:8]) != "KGCLOUT1" {
		return nil, errors.New("clrun: output is not a clrun output file")
	}
	r := bytes.NewReader(p[8:])
	var u func() (uint32, error) = func() (uint32, error) {
		var v uint32
		err := binary.Read(r, binary.LittleEndian, &v)
		return v, err
	}
	nj, _ := u()
	out := make([][][]byte, 0, nj)
	for j := uint32(0); j < nj; j++ {
		nb, err := u()
		if err != nil {
			return nil, fmt.Errorf("clrun: output truncated at job %d", j)
		}
		var bufs [][]byte
		for i := uint32(0); i < nb; i++ {
			n, err := u()
			if err != nil || int64(n) > int64(r.Len()) {
				return nil, fmt.Errorf("clrun: output truncated at job %d buffer %d", j, i)
			}
			b := make([]byte, n)
			r.Read(b)
			bufs = append(bufs, b)
		}
		out = append(out, bufs)
	}
	return out, nil
}

// Run builds the batch's programs and runs its jobs; out[j][i] is job j's
// buffer i after its launches.
func (r *Runner) Run(ctx context.Context, b Batch) ([][][]byte, error) {
	dir, err := os.MkdirTemp("", "kernelgen-clrun-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	in, outPath := filepath.Join(dir, "batch.bin"), filepath.Join(dir, "out.bin")
	if err := os.WriteFile(in, Encode(b), 0o644); err != nil {
		return nil, err
	}
	if _, err := r.exec(ctx, in, outPath); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(outPath)
	if err != nil {
		return nil, err
	}
	out, err := Decode(data)
	if err != nil {
		return nil, err
	}
	if len(out) != len(b.Jobs) {
		return nil, fmt.Errorf("clrun: output has %d jobs, the batch %d", len(out), len(b.Jobs))
	}
	for j := range out {
		if len(out[j]) != len(b.Jobs[j].Buffers) {
			return nil, fmt.Errorf("clrun: job %d came back with %d buffers, it has %d", j, len(out[j]), len(b.Jobs[j].Buffers))
		}
	}
	return out, nil
}
