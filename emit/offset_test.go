package emit_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/emit/glsl"
	"github.com/kernelgen/kernelgen/emit/msl"
	"github.com/kernelgen/kernelgen/emit/opencl"
	"github.com/kernelgen/kernelgen/emit/sycl"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ir/ctype"
	"github.com/kernelgen/kernelgen/ops"
)

// The kernels that read a cache row through ids print its offset in the
// language's 64-bit unsigned type: the source slot is widened before it is
// scaled by the row stride, never after (a u32 product wraps past 2^32
// elements). GLSL spells the IR's u64 as uint (glsl.Types says why) and so
// must print no 64-bit integer at all.
func TestCacheOffsetsPrintWide(t *testing.T) {
	type lang struct {
		d    ctype.Dialect
		emit func(op *ops.Op, ks []*ir.Kernel) ([]byte, error)
	}
	// By backend name: each prints its portable and native kernels.
	langs := map[string]lang{
		"cuda":   {ctype.C, func(op *ops.Op, ks []*ir.Kernel) ([]byte, error) { return cuda.Emit(unitOf(op, ks)) }},
		"sycl":   {ctype.C, func(op *ops.Op, ks []*ir.Kernel) ([]byte, error) { return sycl.Emit(unitOf(op, ks)) }},
		"opencl": {opencl.Types, func(op *ops.Op, ks []*ir.Kernel) ([]byte, error) { return opencl.Emit(unitOf(op, ks)) }},
		"metal":  {msl.Types, func(op *ops.Op, ks []*ir.Kernel) ([]byte, error) { return msl.Emit(unitOf(op, ks)) }},
	}
	for _, op := range ops.All() {
		if !strings.Contains(op.Name, "_ids") && op.Name != ops.GatherOp && !strings.Contains(op.Name, "_gather") {
			continue
		}
		kernels := func(backend string) []*ir.Kernel {
			var ks []*ir.Kernel
			for _, a := range []ir.Arith{ir.Portable, ir.Native(backend)} {
				k, err := op.Kernel(a)
				if err != nil {
					t.Fatal(err)
				}
				if len(ks) == 0 || ks[0] != k { // an arith-free op has one kernel
					ks = append(ks, k)
				}
			}
			return ks
		}
		for name, l := range langs {
			if len(ops.TargetOf(name).Variants(op.Name)) == 0 {
				continue // not built there
			}
			src, err := l.emit(op, kernels(name))
			if err != nil {
				t.Fatalf("%s %s: %v", name, op.Name, err)
			}
			// The stride needs no cast of its own: C widens it (cfamily's
			// Printer.operands).
			wide := fmt.Sprintf("(%s) src * ", l.d.Of(ir.U64))
			narrow := fmt.Sprintf("(%s) src * ", l.d.Of(ir.U32))
			if !strings.Contains(string(src), wide) {
				t.Errorf("%s %s: no cache offset %q...", name, op.Name, wide)
			}
			if strings.Contains(string(src), narrow) {
				t.Errorf("%s %s: a cache offset is scaled in 32 bits (%q)", name, op.Name, narrow)
			}
		}
		if len(ops.TargetOf("vulkan").Variants(op.Name)) == 0 {
			continue
		}
		for _, k := range kernels("vulkan") {
			src, err := glsl.Emit(unitOf(op, []*ir.Kernel{k}))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(src), "uint(src) * ") {
				t.Errorf("glsl %s: no cache offset uint(src) * ...", k.ID())
			}
			for _, w := range []string{"int64", "uint64", "u64vec"} {
				if strings.Contains(string(src), w) {
					t.Errorf("glsl %s: prints %s; a binding's offsets fit 32 bits", k.ID(), w)
				}
			}
		}
	}
}

// unitOf is op's kernels ks at every variant of the table.
func unitOf(op *ops.Op, ks []*ir.Kernel) ir.Unit {
	u := ir.Unit{Op: op.Name, Summary: op.Summary, Kernels: ks}
	for _, k := range ks {
		for _, v := range ops.VariantsOf(op.Name) {
			u.Instances = append(u.Instances, v.Of(k))
		}
	}
	return u
}
