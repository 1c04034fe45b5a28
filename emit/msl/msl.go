// Package msl lowers IR kernels to Metal Shading Language in ggml-metal's
// style: a kargs struct in constant buffer 0, device buffers from index 1, a
// kernel function template per contract specialised by the op's params, and
// one explicit instantiation per variant with a host name.
//
// Contracts on Metal. native-metal writes arithmetic as ggml's Metal kernels
// do (a*b + c, exp, simd_sum), for the library's default fast math. portable
// kernels contain only exactly specified operations, and ask the compiler
// (MSL 3.2+) for safe math without contraction; on older Metal the portable
// kernels must be built into a library compiled with -fno-fast-math.
package msl

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/emit/internal/cfamily"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// KargsName is the kargs struct of an op, named as ggml-metal-impl.h names them.
func KargsName(op string) string { return "ggml_metal_kargs_" + op }

// FunctionName is the kernel template of a kernel.
func FunctionName(k *ir.Kernel, arithFree bool) string {
	if k.Arith.Native || arithFree {
		return "kernel_" + k.Name + "_f32"
	}
	return "kernel_" + k.Name + "_f32_portable"
}

// HostName is the pipeline name of one variant: the function name followed
// by each param's name and value.
func HostName(k *ir.Kernel, arithFree bool, v ops.Variant) string {
	name := FunctionName(k, arithFree)
	for _, x := range k.Params {
		if x.Derived == nil {
			name += fmt.Sprintf("_%s%d", x.Name, v.Values[x.Name])
		}
	}
	return name
}

// Emit returns one op's Metal source: the kargs struct, the kernels under the
// contracts Metal uses, and their instantiations for every variant.
func Emit(op, summary string, kernels []*ir.Kernel, arithFree bool, variants []ops.Variant) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// %s: %s\n\n#include <metal_stdlib>\n\nusing namespace metal;\n\n", op, summary)
	first := kernels[0]
	if len(first.Args) > 0 {
		// The same struct goes into ggml-metal-impl.h (the glue); the guard
		// lets both reach the one embedded library.
		fmt.Fprintf(&b, "#ifndef KG_KARGS_%s\n#define KG_KARGS_%s\n", op, op)
		b.WriteString("typedef struct {\n")
		for _, a := range first.Args {
			fmt.Fprintf(&b, "    %s %s;\n", map[ir.Type]string{ir.F32: "float", ir.U32: "uint32_t", ir.I32: "int32_t"}[a.Type], a.Name)
		}
		fmt.Fprintf(&b, "} %s;\n#endif\n", KargsName(op))
	}
	err := cfamily.AppendKernels(&b, kernels, func(k *ir.Kernel) (string, error) { return kernel(op, k, arithFree, variants) })
	if err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func kernel(op string, k *ir.Kernel, arithFree bool, variants []ops.Variant) (string, error) {
	if err := cfamily.Unsupported("msl", k); err != nil {
		return "", err
	}
	p := cfamily.New(lang, k)
	for _, a := range k.Args {
		p.SetName(a, "args."+a.Name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "// %s\n", k.ID())
	tparams := p.TemplateParams()
	if len(tparams) > 0 {
		fmt.Fprintf(&b, "template <%s>\n", strings.Join(tparams, ", "))
	}
	fn := FunctionName(k, arithFree)
	fmt.Fprintf(&b, "kernel void %s(\n", fn)
	var params []string
	if len(k.Args) > 0 {
		params = append(params, fmt.Sprintf("constant %s & args [[buffer(0)]]", KargsName(op)))
	}
	for i, buf := range k.Buffers {
		t := lang.Type(buf.Elem)
		c := ""
		if buf.Access == ir.Read {
			c = "const "
		}
		params = append(params, fmt.Sprintf("device %s%s * %s [[buffer(%d)]]", c, t, p.Name(buf, buf.Name), i+1))
	}
	params = append(params,
		"uint3 tgpig [[threadgroup_position_in_grid]]",
		"uint3 tpitg [[thread_position_in_threadgroup]]",
		"uint3 ntg [[threads_per_threadgroup]]",
		"uint kg_sgw [[threads_per_simdgroup]]")
	cfamily.WriteParams(&b, params)
	p.Indent()
	if !k.Arith.Native {
		p.Line("#if __METAL_VERSION__ >= 320")
		p.Line("#pragma METAL fp math_mode(safe)")
		p.Line("#pragma METAL fp contract(off)")
		p.Line("#endif")
	}
	if ir.HasReduce(k) {
		p.Line("// Lanes exchange through threadgroup memory when the simdgroup is narrower than a reduction.")
		p.Line("threadgroup float kg_red[%s];", p.WorkgroupSize())
		p.Line("const uint kg_lin = tpitg.x + ntg.x * (tpitg.y + ntg.y * tpitg.z);")
	}
	for _, a := range ir.SharedArrays(k) {
		p.Line("threadgroup %s %s[%s];", lang.Type(a.Elem), p.Name(a, a.Name), p.Expr(a.Len))
	}
	p.Line("(void) ntg;")
	p.Line("(void) kg_sgw;")
	p.Stmts(k.Body)
	p.WriteBody(&b)
	if len(tparams) == 0 {
		return b.String(), nil
	}
	typ := fn + "_t"
	fmt.Fprintf(&b, "\ntypedef decltype(%s<%s>) %s;\n\n", fn, targs(k, variants[0]), typ)
	for _, v := range variants {
		fmt.Fprintf(&b, "template [[host_name(%q)]] kernel %s %s<%s>;\n", HostName(k, arithFree, v), typ, fn, targs(k, v))
	}
	return b.String(), nil
}

func targs(k *ir.Kernel, v ops.Variant) string {
	var out []string
	for _, x := range k.Params {
		if x.Derived != nil {
			continue
		}
		val := v.Values[x.Name]
		if x.Type == ir.Bool {
			out = append(out, fmt.Sprint(val != 0))
		} else {
			out = append(out, fmt.Sprint(val))
		}
	}
	return strings.Join(out, ", ")
}

type dialect struct{ cfamily.CStyle }

var lang = dialect{cfamily.CStyle{F32: "float", U32: "uint", I32: "int"}}

func (d dialect) Bitcast(from, to ir.Type, x string) string {
	return fmt.Sprintf("as_type<%s>(%s)", d.Type(to), x)
}

func (dialect) Call(fn ir.Intrinsic, args []string) string {
	switch fn {
	case ir.FMA:
		return "fma(" + strings.Join(args, ", ") + ")"
	case ir.ExpNative:
		return "exp(" + args[0] + ")"
	case ir.Dot4:
		return fmt.Sprintf("dot(float4(%s), float4(%s))", strings.Join(args[:4], ", "), strings.Join(args[4:], ", "))
	}
	return fmt.Sprintf("<%s unsupported>", fn)
}

// ExactBinary: Metal has no per-operation rounding control; portable kernels
// rely on the math-mode pragmas (and contain no mul feeding an add).
func (dialect) ExactBinary(ir.BinOp, string, string) string { return "" }

func (dialect) Builtin(b ir.Builtin, dim int) string {
	c := "xyz"[dim : dim+1]
	if b == ir.GroupID {
		return "tgpig." + c
	}
	return "tpitg." + c
}

func (dialect) Unroll() string { return "#pragma unroll" }
func (dialect) Barrier(device bool) string {
	if device {
		return "threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);"
	}
	return "threadgroup_barrier(mem_flags::mem_threadgroup);"
}

// Reduce: simd_shuffle_xor butterflies (or, native with the width equal to
// the simdgroup, simd_sum as ggml's kernels use) when the simdgroup covers the
// width; otherwise the butterfly through threadgroup memory.
func (dialect) Reduce(out, x, width string, order ir.Order, _ bool) []string {
	lines := []string{
		fmt.Sprintf("float %s = %s;", out, x),
		fmt.Sprintf("if (kg_sgw >= %s) {", width),
	}
	shuffle := cfamily.ShuffleLoop("ushort", width, fmt.Sprintf("%s += simd_shuffle_xor(%s, kg_off);", out, out))
	if order == ir.NativeOrder {
		lines = append(lines, fmt.Sprintf("    if (kg_sgw == %s) {", width), fmt.Sprintf("        %s = simd_sum(%s);", out, out), "    } else {")
		for _, l := range shuffle {
			lines = append(lines, "    "+l)
		}
		lines = append(lines, "    }")
	} else {
		lines = append(lines, shuffle...)
	}
	return append(lines, cfamily.SharedButterfly(lang, out, width, "")...)
}

var reserved = cfamily.CPPReserved(`kernel vertex fragment device constant threadgroup thread
	half float2 float3 float4 uint2 uint3 uint4 int2 int3 int4 uint ushort uchar
	exp fma min max dot select sqrt abs clamp mix args tgpig tpitg ntg kg_red kg_lin kg_off kg_sgw`)

func (dialect) Reserved(name string) bool {
	return reserved[name] || strings.HasPrefix(name, "simd_") || strings.HasPrefix(name, "as_type")
}

// DepSync: Metal orders the dispatches with a barrier; nothing to do here.
func (dialect) DepSync(ir.DepKind) string { return "" }
