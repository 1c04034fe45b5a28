package clrun

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/tier"
)

func runner(t *testing.T) (*Runner, context.Context) {
	t.Helper()
	ctx := tier.Context(t)
	r, err := Build(ctx)
	if err == nil {
		_, err = r.Devices(ctx)
	}
	if errors.Is(err, ErrMissingTool) || errors.Is(err, ErrNoDevice) {
		if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return r, ctx
}

const axpy = `kernel __attribute__((reqd_work_group_size(4, 1, 1))) void axpy(
        global const float * restrict x, global float * restrict y, const float a, const uint n) {
    const uint i = get_group_id(0) * 4u + get_local_id(0);
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}
`

func f32s(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// Two launches in one job run in order on the same buffers, scalars
// arrive as their bits, and a second job has buffers of its own.
func TestRunsLaunchesInOrder(t *testing.T) {
	r, ctx := runner(t)
	l := Launch{Program: 0, Kernel: "axpy", Args: []Arg{{Buffer: 0}, {Buffer: 1}, {Buffer: -1, Value: math.Float32bits(2)}, {Buffer: -1, Value: 5}},
		Groups: [3]uint32{2, 1, 1}, Local: [3]uint32{4, 1, 1}}
	b := Batch{
		Programs: []Program{{Source: []byte(axpy), Name: "axpy"}},
		Jobs: []Job{
			{Buffers: [][]byte{f32s(1, 2, 3, 4, 5, 6), f32s(10, 10, 10, 10, 10, 10)}, Launches: []Launch{l, l}},
			{Buffers: [][]byte{f32s(1), f32s(0)}, Launches: nil},
		},
	}
	out, err := r.Run(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	// y += 2x twice on the first five elements (n = 5); the sixth untouched.
	if want := f32s(14, 18, 22, 26, 30, 10); string(out[0][1]) != string(want) {
		t.Errorf("job 0 y = %x, want %x", out[0][1], want)
	}
	if want := f32s(0); string(out[1][1]) != string(want) {
		t.Errorf("job 1 y = %x, want %x", out[1][1], want)
	}
}

// A program that does not build, or builds with a warning, is ErrBuild
// with the compiler's message.
func TestBuildFailuresAreReported(t *testing.T) {
	r, ctx := runner(t)
	for _, src := range []string{"#warning kernelgen-test\n" + axpy, "kernel void broken( {"} {
		_, err := r.Run(ctx, Batch{Programs: []Program{{Source: []byte(src), Options: "-DX=1", Name: "probe.cl"}}})
		if !errors.Is(err, ErrBuild) || !strings.Contains(err.Error(), "probe.cl") {
			t.Errorf("%q: error %v, want ErrBuild naming probe.cl", src[:20], err)
		}
	}
}

// A Wide scalar arrives as a ulong, both halves (ggml-opencl's buffer offsets).
func TestWideScalarsArriveAsUlong(t *testing.T) {
	r, ctx := runner(t)
	const src = `kernel void pick(global const char * x, ulong off, global float * y) {
    y[0] = *(global const float *) (x + (off & 0xffffffffUL));
    y[1] = (float) (off >> 32);
}
`
	l := Launch{Program: 0, Kernel: "pick", Args: []Arg{{Buffer: 0}, {Buffer: -1, Wide: true, Value: 8, High: 3}, {Buffer: 1}},
		Groups: [3]uint32{1, 1, 1}, Local: [3]uint32{1, 1, 1}}
	out, err := r.Run(ctx, Batch{
		Programs: []Program{{Source: []byte(src), Name: "pick"}},
		Jobs:     []Job{{Buffers: [][]byte{f32s(1, 2, 7, 4), f32s(0, 0)}, Launches: []Launch{l}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := f32s(7, 3); string(out[0][1]) != string(want) {
		t.Errorf("y = %x, want %x", out[0][1], want)
	}
}

// The selected device reports the -cl-std ggml-opencl would build for, and
// ggml-opencl's options build a program there; KERNELGEN_CL_DEVICE picks
// the device as clrun does.
func TestSelectedDeviceTakesGGMLOptions(t *testing.T) {
	r, ctx := runner(t)
	d, err := r.Selected(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^CL[1-9]\.\d+$`).MatchString(d.GGMLStd) {
		t.Fatalf("%s: GGMLStd %q", d.Name, d.GGMLStd)
	}
	opts := d.GGMLOptions()
	if !strings.HasPrefix(opts, "-cl-std="+d.GGMLStd+" ") || !strings.HasSuffix(opts, GGMLFlags) {
		t.Errorf("options %q", opts)
	}
	if _, err := r.Run(ctx, Batch{Programs: []Program{{Source: []byte(axpy), Options: opts, Name: "axpy.cl"}}}); err != nil {
		t.Fatalf("axpy with %q: %v", opts, err)
	}
	r2 := &Runner{path: r.path, Env: []string{"KERNELGEN_CL_DEVICE=#0"}}
	if d0, err := r2.Selected(ctx); err != nil || d0.Name != d.Name && os.Getenv("KERNELGEN_CL_DEVICE") == "" {
		t.Errorf("#0: %+v, %v", d0, err)
	}
	r2.Env = []string{"KERNELGEN_CL_DEVICE=no such device name"}
	if _, err := r2.Selected(ctx); !errors.Is(err, ErrNoDevice) {
		t.Errorf("an unknown name: %v, want ErrNoDevice", err)
	}
}
