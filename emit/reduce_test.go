package emit_test

import (
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/emit/glsl"
	"github.com/kernelgen/kernelgen/emit/msl"
	"github.com/kernelgen/kernelgen/emit/opencl"
	"github.com/kernelgen/kernelgen/emit/sycl"
	"github.com/kernelgen/kernelgen/ir"
)

// Every dialect prints a reduction through the lowering's entities
// (pass.Facts.Exchange), named before the body: a kernel's own locals with
// those names give way (kg_off_), the exchange keeps its names.
func TestReduceLoweringNames(t *testing.T) {
	b := dsl.New("k", ir.Portable)
	out := b.Buffer("out", ir.F32, ir.Write, "dst", "")
	b.Workgroup(32, 1, 1)
	b.Grid(1, 1, 1)
	off := b.Let("kg_off", b.LocalID(0).F32())
	red := b.Let("kg_red", off.Add(1.0))
	out.Store(b.LocalID(0), b.Reduce("sum", red, 32, ir.Butterfly))
	k, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	u := ir.Unit{Op: "k", Kernels: []*ir.Kernel{k}, Instances: []ir.Instance{{Kernel: k, Values: map[string]int64{}}}}
	srcs := map[string]func() ([]byte, error){
		"cuda":   func() ([]byte, error) { return cuda.Emit(u) },
		"sycl":   func() ([]byte, error) { return sycl.Emit(u) },
		"opencl": func() ([]byte, error) { return opencl.Emit(u) },
		"msl":    func() ([]byte, error) { return msl.Emit(u) },
		"glsl":   func() ([]byte, error) { return glsl.Emit(u) },
	}
	for name, emit := range srcs {
		src, err := emit()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, want := range []string{"kg_red[kg_lin] = sum;", "sum += kg_red[kg_lin ^ kg_off];", "kg_off_ = ", "kg_red_ = ", "kg_off >>= 1"} {
			if !strings.Contains(string(src), want) {
				t.Errorf("%s: no %q in\n%s", name, want, src)
			}
		}
	}
}
