package vulkan

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/tier"

	"github.com/kernelgen/kernelgen/emit/glsl"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/tools/spvbuild"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/vkrun"
)

// ieee is how a driver evaluates the three things the portable kernels rely
// on, written as they write them (precise locals).
type ieee struct {
	fma        string // "fused", "split" (two roundings) or "mixed (k of n fused)"
	denormals  bool   // a denormal product survives
	signedZero bool   // -0.0 + 0.0 is +0.0
}

func (x ieee) deviations() string {
	var d []string
	switch {
	case x.fma == "split":
		d = append(d, "rounds fma() twice")
	case x.fma != "fused":
		d = append(d, "fuses fma() only sometimes: "+x.fma)
	}
	if !x.denormals {
		d = append(d, "flushes denormals")
	}
	if !x.signedZero {
		d = append(d, "folds -0.0 + 0.0 to -0.0")
	}
	return strings.Join(d, ", ")
}

func (x ieee) String() string {
	if d := x.deviations(); d != "" {
		return "not IEEE: " + d
	}
	return "IEEE (fma fused, denormals kept, signed zeros kept)"
}

// probeSource: per invocation, fma(a, b, c); d * e, a denormal; y + 0.0
// with y = -0.0, the shape of the conv kernels' final add.
const probeSource = `#version 450
layout(local_size_x = 64) in;
layout(binding = 0, std430) readonly buffer buf_in { float x[]; };
layout(binding = 1, std430) writeonly buffer buf_out { float y[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    precise float f = fma(x[6u * i], x[6u * i + 1u], x[6u * i + 2u]);
    precise float p = x[6u * i + 3u] * x[6u * i + 4u];
    precise float z = x[6u * i + 5u];
    z = z + 0.0;
    y[3u * i] = f;
    y[3u * i + 1u] = p;
    y[3u * i + 2u] = z;
}
`

var probeUnit = spvbuild.Unit{File: "verify/vulkan/probe.comp", Source: []byte(probeSource), Name: "IEEE probe"}

// denormProbeUnit is the probe asking for denormals as the portable
// kernels' DenormPreserve build does.
var denormProbeUnit = spvbuild.Unit{File: "verify/vulkan/probe_denorm.comp", Name: "IEEE probe, DenormPreserve",
	Source: []byte(strings.Replace(probeSource, "layout(local_size_x", glsl.DenormExtension+glsl.DenormMode+"layout(local_size_x", 1))}

// probe runs probeSource on inputs where every deviation shows: fma triples
// whose fused and twice-rounded results differ, products of 2^-70-sized
// factors (exactly representable denormals), and -0.0.
func (e *env) probe(ctx context.Context) (ieee, error) {
	return e.probeUnit(ctx, probeUnit)
}

func (e *env) probeUnit(ctx context.Context, u spvbuild.Unit) (ieee, error) {
	spv, err := e.comp.Build(ctx, []spvbuild.Unit{u})
	if err != nil {
		return ieee{}, err
	}
	const n = 256
	r := rand.New(rand.NewPCG(7, 7))
	in := make([]float32, 0, 6*n)
	var fused, split, denorm []float32
	for len(fused) < n {
		a, b, c := float32(r.Float64()*2-1), float32(r.Float64()*2-1), float32(r.Float64()*2-1)
		f, s := float32(math.FMA(float64(a), float64(b), float64(c))), a*b+c
		if f == s {
			continue
		}
		d := float32(math.Ldexp(1+float64(len(fused)%8)/8, -70))
		in = append(in, a, b, c, d, d, float32(math.Copysign(0, -1)))
		fused, split, denorm = append(fused, f), append(split, s), append(denorm, d*d)
	}
	inBuf := &cases.Buffer{Name: "in", Elem: ir.F32, F32: in}
	res, err := e.runner.Run(ctx, vkrun.Job{Device: e.sel, Buffers: [][]byte{inBuf.Bytes(), make([]byte, 12*n)},
		Dispatches: []vkrun.Dispatch{{SPIRV: spv[0], Groups: [3]uint32{n / 64, 1, 1}, Bindings: []int{0, 1}}}})
	if err != nil {
		return ieee{}, err
	}
	out := func(i int) uint32 { return binary.LittleEndian.Uint32(res.Buffers[1][4*i:]) }
	nf, ns := 0, 0
	x := ieee{denormals: true, signedZero: true}
	for i := 0; i < n; i++ {
		f := math.Float32frombits(out(3 * i))
		if f == fused[i] {
			nf++
		}
		if f == split[i] {
			ns++
		}
		if out(3*i+1) != math.Float32bits(denorm[i]) {
			x.denormals = false
		}
		if out(3*i+2) != 0 {
			x.signedZero = false
		}
	}
	switch {
	case nf == n:
		x.fma = "fused"
	case ns == n:
		x.fma = "split"
	default:
		x.fma = fmt.Sprintf("mixed (%d of %d fused)", nf, n)
	}
	return x, nil
}

// What the driver does with the portable kernels' arithmetic decides
// whether they can match the reference bit for bit here (see compare).
// Where the device offers DenormPreserve, the probe also runs with that mode
// (as the portable kernels then do) and denormals must survive.
func TestDriverArithmetic(t *testing.T) {
	e := setup(t)
	t.Logf("%s: %s", e.dev.Name, e.ieee)
	if !e.denorm {
		t.Logf("%s does not offer shaderDenormPreserveFloat32: the portable kernels run without DenormPreserve", e.dev.Name)
		return
	}
	ctx := tier.Context(t)
	x, err := e.probeUnit(ctx, denormProbeUnit)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s with DenormPreserve: %s", e.dev.Name, x)
	if !x.denormals {
		t.Fatalf("%s offers shaderDenormPreserveFloat32 but flushed a denormal product under DenormPreserve", e.dev.Name)
	}
}
