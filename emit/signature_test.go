package emit_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/emit/ggmlcpu"
	"github.com/kernelgen/kernelgen/emit/glsl"
	"github.com/kernelgen/kernelgen/emit/goref"
	"github.com/kernelgen/kernelgen/emit/msl"
	"github.com/kernelgen/kernelgen/emit/opencl"
	"github.com/kernelgen/kernelgen/emit/sycl"
	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// emitters are every language's emitter under the one signature: a unit
// (an op, its kernels, their instances) in, bytes out.
var emitters = map[string]func(ir.Unit) ([]byte, error){
	"cuda": cuda.Emit, "ggmlcpu": ggmlcpu.Emit, "glsl": glsl.Emit, "go": goref.Emit, "msl": msl.Emit, "opencl": opencl.Emit, "sycl": sycl.Emit,
}

// namers are the C-family emitters' names of a kernel; each takes ggml's
// name under the native contract and for a contract-free kernel, and adds
// _portable under the portable one (cfamily.Named).
var namers = map[string]func(*ir.Kernel) string{
	"cuda": cuda.KernelName, "ggmlcpu": ggmlcpu.FunctionName, "msl": msl.FunctionName, "opencl": opencl.KernelName, "sycl": sycl.FunctionName,
	"glsl": func(k *ir.Kernel) string { return strings.TrimSuffix(glsl.FileName(k), ".comp") },
}

// Each emitter takes a unit of an op's portable and native kernels at the
// table's variants, and writes each kernel under the name its language
// gives it; the names follow one rule.
func TestOneEmitterSignature(t *testing.T) {
	op, err := ops.Lookup("ssm_conv")
	if err != nil {
		t.Fatal(err)
	}
	for lang, emit := range emitters {
		native := ir.Native("cuda")
		switch lang {
		case "msl":
			native = ir.Native("metal")
		case "glsl":
			native = ir.Native("vulkan")
		case "opencl", "sycl":
			native = ir.Native(lang)
		}
		u := ir.Unit{Op: op.Name, Summary: op.Summary, Contracts: []ir.Arith{ir.Portable, native}}
		for _, a := range u.Contracts {
			k, err := op.Kernel(a)
			if err != nil {
				t.Fatal(err)
			}
			u.Kernels = append(u.Kernels, k)
			for _, v := range ops.VariantsOf(op.Name) {
				u.Instances = append(u.Instances, v.Of(k))
			}
		}
		units := []ir.Unit{u}
		switch lang {
		case "glsl": // a shader per kernel
			units = []ir.Unit{u.Only(u.Kernels[0]), u.Only(u.Kernels[1])}
		case "ggmlcpu": // the kernels a glue op dispatches, the node feeding them
			units = []ir.Unit{cpuUnit(t)}
		}
		for _, u := range units {
			src, err := emit(u)
			if err != nil {
				t.Fatalf("%s: %v", lang, err)
			}
			if name := namers[lang]; name != nil && lang != "glsl" { // a shader's name is its file's
				for _, k := range u.Kernels {
					want := name(k)
					if lang == "ggmlcpu" { // a caller-bound kernel is named after the op that runs it
						want = ggmlcpu.DispatchedName(u.Op, k)
					}
					if !bytes.Contains(src, []byte(want)) {
						t.Errorf("%s: the source of %s does not name %s", lang, k.ID(), want)
					}
				}
			}
		}
	}
	for lang, name := range namers {
		native, err := op.Kernel(ir.Native("cuda"))
		if err != nil {
			t.Fatal(err)
		}
		portable, err := op.Kernel(ir.Portable)
		if err != nil {
			t.Fatal(err)
		}
		if name(portable) != name(native)+"_portable" {
			t.Errorf("%s: portable %s, native %s: want the native name and _portable", lang, name(portable), name(native))
		}
		gather, err := ops.Lookup(ops.ChainGatherOp)
		if err != nil {
			t.Fatal(err)
		}
		k, err := gather.Kernel(ir.Portable)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name(k), "_portable") {
			t.Errorf("%s: the contract-free %s is named %s", lang, k.ID(), name(k))
		}
	}
}

// cpuUnit is what ggml-cpu's emitter takes: the kernels of a native-cpu
// glue op of two dispatches (an ids op: its arith-free gather, then its
// compute kernel).
func cpuUnit(t *testing.T) ir.Unit {
	a := ir.Native("cpu")
	m, err := glue.Model(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range m {
		if len(op.Dispatches) == 2 {
			u := ir.Unit{Op: op.Name, Contracts: []ir.Arith{a}, Instances: op.Instances(ops.TargetOf("cpu").Variants)}
			for _, d := range op.Dispatches {
				u.Kernels = append(u.Kernels, d.Kernel)
			}
			return u
		}
	}
	t.Fatal("no native-cpu glue op dispatches two kernels")
	return ir.Unit{}
}
