// Package opencl lowers IR kernels to OpenCL C for ggml-opencl: one .cl
// file per op holding a kernel per contract, compiled once per variant with
// the op's params as preprocessor defines (-DS_v=128u -DKDA=0 ...), as
// ggml-opencl builds its kernels, plus KG_WG_X/Y/Z, the workgroup size the
// host evaluates from the IR (Defines).
//
// Contracts on OpenCL. OpenCL C lets a compiler contract a*b + c into one
// fma unless told otherwise (FP_CONTRACT is on by default), so the portable
// kernel is preceded by #pragma OPENCL FP_CONTRACT OFF and contains only
// exactly specified operations (fma is correctly rounded in OpenCL C); the
// program must be built without -cl-fast-relaxed-math, -cl-mad-enable and
// -cl-denorms-are-zero. native-opencl writes arithmetic as ggml-opencl's
// kernels do (a*b + c, exp, float4 dot) with contraction on.
//
// Reductions take the subgroup shuffles where the device offers them
// (cl_khr_subgroup_shuffle, or Intel's or Qualcomm's variants, the ones
// ggml-opencl uses) and its subgroup covers the reduction's width; otherwise
// the same xor butterfly through local memory. Both give the same bits.
package opencl

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/kernelgen/kernelgen/emit/internal/cfamily"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ir/ctype"
)

// FileName is an op's source file, as ggml-opencl names its kernels/*.cl.
func FileName(op string) string { return op + ".cl" }

// KernelName is a kernel's entry point: ggml-opencl's kernel_<op> for the
// native contract and the contract-free gathers, with a _portable suffix
// for the portable one.
func KernelName(k *ir.Kernel) string { return cfamily.Named(k, "kernel_", "") }

// Emit returns one op's OpenCL C source: its kernels under the contracts
// OpenCL uses.
func Emit(u ir.Unit) ([]byte, error) {
	kernels := u.Kernels
	var b bytes.Buffer
	fmt.Fprintf(&b, "// %s: %s\n", u.Op, u.Summary)
	var params []string
	for _, x := range kernels[0].Params {
		if x.Derived == nil {
			params = append(params, x.Name)
		}
	}
	if len(params) > 0 {
		fmt.Fprintf(&b, "// Variant defines: %s, and KG_WG_X/Y/Z (the workgroup size).\n", strings.Join(params, ", "))
	} else {
		b.WriteString("// Variant defines: KG_WG_X/Y/Z (the workgroup size).\n")
	}
	for _, k := range kernels {
		if ir.HasReduce(k) {
			b.WriteString(subgroupPrelude)
			break
		}
	}
	err := cfamily.AppendKernels(&b, kernels, func(k *ir.Kernel) (string, error) { return kernel(k) })
	if err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// subgroupPrelude picks the subgroup shuffle the device offers. Without
// one, KG_SUBGROUP_WIDTH is 0 and every reduction takes the local-memory
// butterfly (kg_shuffle_xor is then never called).
const subgroupPrelude = `
#if defined(cl_khr_subgroup_shuffle)
#define KG_SUBGROUP_WIDTH get_max_sub_group_size()
#define kg_shuffle_xor(x, m) sub_group_shuffle_xor((x), (m))
#elif defined(cl_intel_subgroups)
#define KG_SUBGROUP_WIDTH get_max_sub_group_size()
#define kg_shuffle_xor(x, m) intel_sub_group_shuffle_xor((x), (m))
#elif defined(cl_khr_subgroups) && defined(cl_qcom_subgroup_shuffle)
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#pragma OPENCL EXTENSION cl_qcom_subgroup_shuffle : enable
#define KG_SUBGROUP_WIDTH get_max_sub_group_size()
#define kg_shuffle_xor(x, m) qcom_sub_group_shuffle_xor((x), (m), CLK_SUB_GROUP_SHUFFLE_WIDTH_WAVE_SIZE_QCOM, (x))
#else
#define KG_SUBGROUP_WIDTH 0u
#define kg_shuffle_xor(x, m) (x)
#endif
`

func kernel(k *ir.Kernel) (string, error) {
	if err := cfamily.Unsupported("opencl", k); err != nil {
		return "", err
	}
	p := cfamily.New(lang, k)
	var b strings.Builder
	if k.Doc != "" {
		for _, l := range strings.Split(strings.TrimSpace(k.Doc), "\n") {
			fmt.Fprintf(&b, "// %s\n", l)
		}
	}
	fmt.Fprintf(&b, "// %s\n", k.ID())
	if k.Arith.Native {
		b.WriteString("#pragma OPENCL FP_CONTRACT ON\n")
	} else {
		b.WriteString("#pragma OPENCL FP_CONTRACT OFF\n")
	}
	// Derived params are macros: array lengths must be constant expressions.
	var derived []string
	for _, x := range k.Params {
		if x.Derived != nil {
			name := p.Name(x, x.Name)
			derived = append(derived, name)
			fmt.Fprintf(&b, "#define %s (%s)\n", name, p.Expr(x.Derived))
		}
	}
	fmt.Fprintf(&b, "kernel __attribute__((reqd_work_group_size(KG_WG_X, KG_WG_Y, KG_WG_Z))) void %s(\n", KernelName(k))
	var params []string
	for _, buf := range k.Buffers {
		c := ""
		if buf.Access == ir.Read {
			c = "const "
		}
		params = append(params, fmt.Sprintf("global %s%s * restrict %s", c, lang.Type(buf.Elem), p.Name(buf, buf.Name)))
	}
	for _, a := range k.Args {
		params = append(params, fmt.Sprintf("const %s %s", lang.Type(a.Type), p.Name(a, a.Name)))
	}
	cfamily.WriteParams(&b, params)
	p.Indent()
	if x := p.LowerReduce(); x != nil {
		// The workgroup's size is the KG_WG_* defines here, not its IR
		// expression (the program is built once per variant from them).
		p.Line("// Lanes exchange through local memory when the subgroup is narrower than a reduction.")
		p.Line("local %s %s[KG_WG_X * KG_WG_Y * KG_WG_Z];", lang.Type(x.Shared.Elem), p.Name(x.Shared, x.Shared.Name))
		p.Line("const %s %s = (uint) (get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)));", lang.Type(x.Lin.Type), p.Name(x.Lin, x.Lin.Name))
	}
	for _, a := range ir.SharedArrays(k) {
		p.Line("local %s %s[%s];", lang.Type(a.Elem), p.Name(a, a.Name), p.Expr(a.Len))
	}
	p.Stmts(k.Body)
	p.WriteBody(&b)
	for _, name := range derived {
		fmt.Fprintf(&b, "#undef %s\n", name)
	}
	return b.String(), nil
}

// Defines returns the build options' defines of one instance: its params
// (bools as 0 and 1) and the workgroup size evaluated from the IR.
func Defines(in ir.Instance) (map[string]string, error) {
	k, v := in.Kernel, in
	p := cfamily.New(lang, k)
	d := map[string]string{}
	for _, x := range k.Params {
		if x.Derived != nil {
			continue
		}
		val, ok := v.Values[x.Name]
		if !ok {
			return nil, fmt.Errorf("%s: instance %s does not set %s", k.ID(), v, x.Name)
		}
		switch x.Type {
		case ir.U32:
			d[p.Name(x, x.Name)] = fmt.Sprintf("%du", val)
		default:
			d[p.Name(x, x.Name)] = fmt.Sprint(val)
		}
	}
	for i, w := range k.Workgroup {
		n, ok := ir.EvalInt(w, v.Values)
		if !ok {
			return nil, fmt.Errorf("%s: workgroup size %s is not known for instance %s", k.ID(), ir.ExprString(w), v)
		}
		d["KG_WG_"+"XYZ"[i:i+1]] = fmt.Sprint(n)
	}
	return d, nil
}

// BuildOptions spells defines as clBuildProgram's options, sorted by name:
// the options a portable kernel may be built with (no fast-math flags).
func BuildOptions(defs map[string]string) string {
	names := make([]string, 0, len(defs))
	for n := range defs {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		parts = append(parts, "-D"+n+"="+defs[n])
	}
	return strings.Join(parts, " ")
}

// dialect is OpenCL C's spelling of the C-family constructs.
type dialect struct{ cfamily.CStyle }

// Types is OpenCL C's spelling of the IR's types: it has no <stdint.h>,
// its integers are uint, int and ulong.
var Types = ctype.ShortInts

var lang = dialect{cfamily.CStyle{Types: Types}}

func (d dialect) Bitcast(from, to ir.Type, x string) string {
	switch {
	case from == ir.F32 && to == ir.I32:
		return "as_int(" + x + ")"
	case from == ir.F32 && to == ir.U32:
		return "as_uint(" + x + ")"
	case (from == ir.I32 || from == ir.U32) && to == ir.F32:
		return "as_float(" + x + ")"
	}
	return d.Convert(from, to, x)
}

func (dialect) Call(fn ir.Intrinsic, args []string) string {
	switch fn {
	case ir.FMA:
		return "fma(" + strings.Join(args, ", ") + ")"
	case ir.ExpNative:
		return "exp(" + args[0] + ")"
	case ir.Dot4:
		return fmt.Sprintf("dot((float4)(%s), (float4)(%s))", strings.Join(args[:4], ", "), strings.Join(args[4:], ", "))
	}
	return fmt.Sprintf("<%s unsupported>", fn)
}

// ExactBinary: FP_CONTRACT OFF already keeps every operator on its own.
func (dialect) ExactBinary(ir.BinOp, string, string) string { return "" }

func (dialect) Builtin(b ir.Builtin, dim int) string {
	if b == ir.GroupID {
		return fmt.Sprintf("((uint) get_group_id(%d))", dim)
	}
	return fmt.Sprintf("((uint) get_local_id(%d))", dim)
}

func (dialect) Unroll() string { return "#pragma unroll" }

// Barrier: a device barrier also fences the workgroup's global memory accesses.
func (dialect) Barrier(device bool) string {
	if device {
		return "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);"
	}
	return "barrier(CLK_LOCAL_MEM_FENCE);"
}

// Reduce is the xor butterfly under both contracts (ggml-opencl's
// reduce_add_shmem is one): shuffles when the subgroup covers the width,
// otherwise through local memory. KG_SUBGROUP_WIDTH is uniform, so every
// lane of the workgroup takes the same branch and reaches its barriers.
func (dialect) Reduce(out, x, width string, _ ir.Order, _ bool, ex cfamily.Exchange) []string {
	return append([]string{
		fmt.Sprintf("float %s = %s;", out, x),
		fmt.Sprintf("if (KG_SUBGROUP_WIDTH >= %s) {", width),
		"    #pragma unroll",
		fmt.Sprintf("    for (uint %s = %s / 2u; %s > 0u; %s >>= 1u) {", ex.Off, width, ex.Off, ex.Off),
		fmt.Sprintf("        %s += kg_shuffle_xor(%s, %s);", out, out, ex.Off),
		"    }",
	}, cfamily.SharedButterfly(lang, ex, out, width, "u")...)
}

// reserved: OpenCL C's keywords and the builtins and macros a kernel here
// may meet, beyond C's (the C++ list covers those).
var reserved = cfamily.CPPReserved(`kernel __kernel global __global local __local constant __constant
	private __private read_only write_only read_write restrict uchar ushort uint ulong half size_t
	ptrdiff_t intptr_t uintptr_t float2 float3 float4 float8 float16 int2 int4 uint2 uint4 vec_type_hint
	reqd_work_group_size get_group_id get_local_id get_global_id get_local_size
	get_num_groups get_sub_group_id get_max_sub_group_size barrier exp fma dot min max mad select sqrt
	as_int as_uint as_float convert_int convert_uint convert_float
	KG_WG_X KG_WG_Y KG_WG_Z KG_SUBGROUP_WIDTH kg_shuffle_xor`)

func (dialect) Reserved(name string) bool { return reserved[name] }

// DepSync: an in-order queue runs dispatches one after another.
func (dialect) DepSync(ir.DepKind) string { return "" }
