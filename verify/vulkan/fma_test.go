package vulkan

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernelgen/kernelgen/internal/tier"

	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/emit/glsl"
	"github.com/kernelgen/kernelgen/emit/goref/rt"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/tools/spvbuild"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/vkrun"
)

// fmaInputs returns triples (a, b, c) that stress a single-precision fma:
// sums just off a float32 halfway point (where rounding through float64
// twice goes wrong), cancellation, overflow, denormal results, signed zeros,
// infinities and NaNs, then random operands over a wide exponent range.
func fmaInputs(r *rand.Rand) (in []float32, hazards int) {
	add := func(a, b, c float32) {
		in = append(in, a, b, c)
		if rt.FMA(a, b, c) != float32(math.FMA(float64(a), float64(b), float64(c))) {
			hazards++
		}
	}
	// (1+i*2^-12)(1+j*2^-12) = 1 + (i+j)*2^-12 + ij*2^-24: with ij odd the
	// product lies exactly halfway between two float32s, and a c far below
	// an ulp decides the rounding (c = 0: a tie, to even).
	for i := 1; i < 64; i += 2 {
		for j := 1; j < 64; j += 6 {
			a, b := float32(1+float64(i)/4096), float32(1+float64(j)/4096)
			for _, c := range []float32{0, 0x1p-80, -0x1p-80, 0x1p-50, -0x1p-50, 0x1p-149, -0x1p-149} {
				add(a, b, c)
				add(-a, b, -c)
			}
		}
	}
	for k := 0; k < 256; k++ { // cancellation: c is minus the rounded product
		a, b := float32(r.Float64()*2-1), float32(r.Float64()*2-1)
		add(a, b, -(a * b))
		add(a, b, math.Nextafter32(-(a*b), 0))
	}
	inf, nan, max := float32(math.Inf(1)), float32(math.NaN()), float32(math.MaxFloat32)
	negZero := float32(math.Copysign(0, -1))
	for _, t := range [][3]float32{
		{0, 0, 0}, {negZero, 1, 0}, {negZero, 1, negZero}, {1, negZero, negZero}, {negZero, negZero, negZero},
		{2, 3, -6}, {-2, 3, 6}, {inf, 1, -inf}, {inf, 0, 1}, {nan, 1, 1}, {1, 1, nan}, {inf, 2, 1}, {1, 1, -inf},
		{max, 2, -max}, {max, 1.5, 0}, {max, 1, max}, {max, -1, -max}, {0x1p64, 0x1p64, 0},
		{0x1p-75, 0x1p-75, 0}, {0x1p-75, 0x1p-75, 0x1p-149}, {0x1p-126, 0.5, 0}, {0x1p-100, 0x1p-40, -0x1p-140},
		{1.5, 0x1p-149, 0}, {-1.5, 0x1p-149, 0x1p-149}, {0x1.fffffep-1, 0x1p-126, 0},
	} {
		add(t[0], t[1], t[2])
	}
	for len(in) < 3*8192 {
		e := func() float32 {
			return float32(math.Ldexp(r.Float64()*2-1, r.IntN(120)-60))
		}
		add(e(), e(), e())
	}
	return in, hazards
}

// The portable GLSL's fma (kg_fma) is a correctly rounded binary32 fma on
// whatever the driver does with fma(): compared bit for bit with the Go
// reference's rt.FMA over thousands of hard and random operands. Built with
// DenormPreserve where the device offers it; results or operands that are
// denormal are left out only where it does not and the driver flushes them.
func TestPortableFMAIsCorrectlyRounded(t *testing.T) {
	e := setup(t)
	if !e.dev.Float64 {
		t.Skipf("%s has no shaderFloat64: the portable kernels cannot run there", e.dev.Name)
	}
	b := dsl.New("fma_probe", ir.Portable)
	n := b.Arg("n", ir.U32, "triples")
	in := b.Buffer("in", ir.F32, ir.Read, "src0", "")
	out := b.Buffer("out", ir.F32, ir.Write, "dst", "")
	b.Workgroup(64, 1, 1)
	b.Grid(n, 1, 1)
	i := b.Let("i", b.GroupID(0).Mul(64).Add(b.LocalID(0)))
	out.Store(i, b.FMA(in.Load(i.Mul(3)), in.Load(i.Mul(3).Add(1)), in.Load(i.Mul(3).Add(2))))
	k, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	src, err := glsl.Emit(ir.Unit{Op: k.Name, Summary: "fma probe", Kernels: []*ir.Kernel{k}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := tier.Context(t)
	defs := map[string]string{"KG_WG_X": "64", "KG_WG_Y": "1", "KG_WG_Z": "1"}
	if e.denorm {
		defs[glsl.DenormPreserve] = "1"
	}
	spv, err := e.comp.Build(ctx, []spvbuild.Unit{{File: "verify/vulkan/fma_probe.comp", Source: src, Name: "fma probe", Defines: defs}})
	if err != nil {
		t.Fatal(err)
	}

	vals, hazards := fmaInputs(rand.New(rand.NewPCG(3, 9)))
	if hazards < 100 {
		t.Fatalf("only %d inputs where rounding through float64 twice is wrong: the test would not see a double-rounding fma", hazards)
	}
	count := uint32(len(vals) / 3)
	inBuf := &cases.Buffer{Name: "in", Elem: ir.F32, F32: vals}
	push := binary.LittleEndian.AppendUint32(nil, count)
	res, err := e.runner.Run(ctx, vkrun.Job{Device: e.sel, Buffers: [][]byte{inBuf.Bytes(), make([]byte, 4*count)},
		Dispatches: []vkrun.Dispatch{{SPIRV: spv[0], Groups: [3]uint32{count / 64, 1, 1}, Bindings: []int{0, 1}, Push: push}}})
	if err != nil {
		t.Fatal(err)
	}
	denormal := func(x float32) bool { return x != 0 && math.Abs(float64(x)) < 0x1p-126 }
	checked, bad := 0, 0
	for j := 0; j < int(count); j++ {
		a, bb, c := vals[3*j], vals[3*j+1], vals[3*j+2]
		want := rt.FMA(a, bb, c)
		got := math.Float32frombits(binary.LittleEndian.Uint32(res.Buffers[1][4*j:]))
		if !e.ieee.denormals && !e.denorm && (denormal(a) || denormal(bb) || denormal(c) || denormal(want)) {
			continue
		}
		checked++
		same := math.Float32bits(got) == math.Float32bits(want) || got != got && want != want
		if !same {
			if bad++; bad <= 10 {
				t.Errorf("kg_fma(%g, %g, %g) = %g (%#08x), want %g (%#08x)", a, bb, c, got, math.Float32bits(got), want, math.Float32bits(want))
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d fma results differ on %s (%s)", bad, checked, e.dev.Name, e.ieee)
	}
	t.Logf("%s (%s; DenormPreserve: %v): %d of %d fma results bit for bit, %d of them where a double-rounding fma is wrong", e.dev.Name, e.ieee, e.denorm, checked, count, hazards)
}

// A chain of kg_fma in straight-line code, as an unrolled dot product
// (ssm_conv's window) has it, rounds to float at every step: each link's
// result is the Go reference's rt.FMA of the one before, bit for bit. A
// driver may take double(float(s)) for s between two inlined calls (Mesa
// 25's lavapipe does), which an fma probe of one call per result never sees;
// the inputs cancel, so a sum kept unrounded ends ulps away.
func TestPortableFMAChainsRoundEveryLink(t *testing.T) {
	e := setup(t)
	if !e.dev.Float64 {
		t.Skipf("%s has no shaderFloat64: the portable kernels cannot run there", e.dev.Name)
	}
	const links = 4
	b := dsl.New("fma_chain_probe", ir.Portable)
	n := b.Arg("n", ir.U32, "chains")
	in := b.Buffer("in", ir.F32, ir.Read, "src0", "")
	out := b.Buffer("out", ir.F32, ir.Write, "dst", "")
	b.Workgroup(64, 1, 1)
	b.Grid(n, 1, 1)
	i := b.Let("i", b.GroupID(0).Mul(64).Add(b.LocalID(0)))
	y := b.F32(0)
	for j := 0; j < links; j++ {
		y = b.FMA(in.Load(i.Mul(2*links).Add(2*j)), in.Load(i.Mul(2*links).Add(2*j+1)), y)
	}
	out.Store(i, y)
	k, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	src, err := glsl.Emit(ir.Unit{Op: k.Name, Summary: "fma chain probe", Kernels: []*ir.Kernel{k}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := tier.Context(t)
	defs := map[string]string{"KG_WG_X": "64", "KG_WG_Y": "1", "KG_WG_Z": "1"}
	if e.denorm {
		defs[glsl.DenormPreserve] = "1"
	}
	spv, err := e.comp.Build(ctx, []spvbuild.Unit{{File: "verify/vulkan/fma_chain_probe.comp", Source: src, Name: "fma chain probe", Defines: defs}})
	if err != nil {
		t.Fatal(err)
	}

	// Products of about the same size and alternating sign: the sum cancels,
	// so rounding a link or not shows in the result's last bits.
	r := rand.New(rand.NewPCG(5, 11))
	const count = 4096
	vals := make([]float32, 0, 2*links*count)
	want := make([]float32, count)
	hazards := 0
	for c := 0; c < count; c++ {
		var y float32
		var exact float64
		for j := 0; j < links; j++ {
			a, bb := float32(r.Float64()+0.5), float32(r.Float64()+0.5)
			if j%2 == 1 {
				a = -a
			}
			vals = append(vals, a, bb)
			y = rt.FMA(a, bb, y)
			exact += float64(a) * float64(bb)
		}
		want[c] = y
		if float32(exact) != y {
			hazards++
		}
	}
	if hazards < count/10 {
		t.Fatalf("only %d of %d chains where an unrounded link changes the result: the test would not see one", hazards, count)
	}
	inBuf := &cases.Buffer{Name: "in", Elem: ir.F32, F32: vals}
	push := binary.LittleEndian.AppendUint32(nil, count)
	res, err := e.runner.Run(ctx, vkrun.Job{Device: e.sel, Buffers: [][]byte{inBuf.Bytes(), make([]byte, 4*count)},
		Dispatches: []vkrun.Dispatch{{SPIRV: spv[0], Groups: [3]uint32{count / 64, 1, 1}, Bindings: []int{0, 1}, Push: push}}})
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for c := 0; c < count; c++ {
		got := math.Float32frombits(binary.LittleEndian.Uint32(res.Buffers[1][4*c:]))
		if math.Float32bits(got) != math.Float32bits(want[c]) {
			if bad++; bad <= 5 {
				t.Errorf("chain %d: %g (%#08x), want %g (%#08x)", c, got, math.Float32bits(got), want[c], math.Float32bits(want[c]))
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d chains of %d kg_fma differ on %s (%d where an unrounded link would)", bad, count, links, e.dev.Name, hazards)
	}
	t.Logf("%s: %d chains of %d kg_fma bit for bit, %d of them where an unrounded link would differ", e.dev.Name, count, links, hazards)
}
