package pass

import (
	"slices"
	"testing"

	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
)

// The passes are a named list that runs in order, once per kernel: a
// kernel asked for again, by any number of emitters and build steps, gets
// the facts of that one run.
func TestPassesRunOncePerKernelInOrder(t *testing.T) {
	if got := Names(); !slices.Equal(got, []string{"needs", "lower-reduce"}) {
		t.Errorf("passes %v", got)
	}
	saved := passes
	defer func() { passes = saved }()
	var runs []string
	passes = slices.Clone(saved)
	for i, p := range saved {
		passes[i].Run = func(k *ir.Kernel, f *Facts) { runs = append(runs, k.Name+":"+p.Name); p.Run(k, f) }
	}
	build := func(name string) *ir.Kernel {
		b := dsl.New(name, ir.Portable)
		out := b.Buffer("out", ir.F32, ir.Write, "dst", "")
		b.Workgroup(32, 1, 1)
		b.Grid(1, 1, 1)
		out.Store(b.LocalID(0), b.F32(1))
		k, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	a, c := build("a"), build("c")
	fa := Of(a)
	if Of(a) != fa {
		t.Error("a second Of(a) gave other facts")
	}
	Of(c)
	if want := []string{"a:needs", "a:lower-reduce", "c:needs", "c:lower-reduce"}; !slices.Equal(runs, want) {
		t.Errorf("runs %v, want %v", runs, want)
	}
	if fa.Exchange != nil {
		t.Errorf("a kernel without reductions has the exchange %+v", fa.Exchange)
	}
}
