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
	"github.com/kernelgen/kernelgen/ir/ctype"
)

// KargsName is the kargs struct of an op, named as ggml-metal-impl.h names them.
func KargsName(op string) string { return "ggml_metal_kargs_" + op }

// FunctionName is the kernel template of a kernel.
func FunctionName(k *ir.Kernel) string { return cfamily.Named(k, "kernel_", "_f32") }

// HostName is the pipeline name of one instance: the function name
// followed by each param's name and value.
func HostName(in ir.Instance) string {
	name := FunctionName(in.Kernel)
	for _, x := range in.Kernel.Params {
		if x.Derived == nil {
			name += fmt.Sprintf("_%s%d", x.Name, in.Values[x.Name])
		}
	}
	return name
}

// FunctionConstants is the index base of an upstream kernel's function
// constants, a macro of ggml-metal-impl.h as its neighbours' are
// (FC_GATED_DELTA_NET): ggml-metal.metal takes a kernel's bool params as
// function constants, which the pipeline getter sets, and its other params
// as template arguments, which size its arrays.
func FunctionConstants(k *ir.Kernel) string { return "FC_" + strings.ToUpper(stem(k)) }

// FunctionConstant is the function constant an upstream kernel takes bool
// param q as (FC_gated_delta_net_inplace_kda), and its index past
// FunctionConstants: its place among the kernel's bool params.
func FunctionConstant(k *ir.Kernel, q *ir.Param) (name string, index int) {
	for _, x := range k.Params {
		if x == q {
			return "FC_" + stem(k) + "_" + strings.ToLower(q.Name), index
		}
		if constantParam(x) {
			index++
		}
	}
	panic("msl: " + q.Name + " is no param of " + k.ID())
}

// constantParam: an upstream kernel takes q as a function constant.
func constantParam(q *ir.Param) bool { return q.Type == ir.Bool && q.Derived == nil }

func stem(k *ir.Kernel) string {
	return strings.TrimSuffix(strings.TrimPrefix(FunctionName(k), "kernel_"), "_f32")
}

// UpstreamHostName is an upstream instance's pipeline function: the
// function name and each template argument (HostName without the function
// constants).
func UpstreamHostName(in ir.Instance) string {
	name := FunctionName(in.Kernel)
	for _, x := range in.Kernel.Params {
		if x.Derived == nil && !constantParam(x) {
			name += fmt.Sprintf("_%s%d", x.Name, in.Values[x.Name])
		}
	}
	return name
}

// UpstreamTemplateArgs are an upstream instance's template arguments: its
// params but the function constants, bare.
func UpstreamTemplateArgs(in ir.Instance) []string {
	var out []string
	for _, x := range in.Kernel.Params {
		if x.Derived == nil && !constantParam(x) {
			out = append(out, in.Bare(x))
		}
	}
	return out
}

// Emit returns one op's Metal source: the kargs struct, the kernels under the
// contracts Metal uses, and their instantiations, one per instance.
func Emit(u ir.Unit) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// %s: %s\n\n#include <metal_stdlib>\n\nusing namespace metal;\n\n", u.Op, u.Summary)
	return appendOp(&b, u)
}

func appendOp(b *bytes.Buffer, u ir.Unit) ([]byte, error) {
	op, first := u.Op, u.Kernels[0]
	if len(first.Args) > 0 {
		// The same struct goes into ggml-metal-impl.h (the glue); the guard
		// lets both reach the one embedded library.
		fmt.Fprintf(b, "#ifndef KG_KARGS_%s\n#define KG_KARGS_%s\n", op, op)
		b.WriteString("typedef struct {\n")
		for _, a := range first.Args {
			fmt.Fprintf(b, "    %s %s;\n", ctype.C.Of(a.Type), a.Name)
		}
		fmt.Fprintf(b, "} %s;\n#endif\n", KargsName(op))
	}
	err := cfamily.AppendKernels(b, u.Kernels, func(k *ir.Kernel) (string, error) { return kernel(op, k, u.InstancesOf(k), false) })
	if err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Kargs is a kargs struct's definition as the upstream text writes it:
// the args of a type on one line (the same struct for host code).
func Kargs(name string, args []*ir.Arg) string {
	var b strings.Builder
	fmt.Fprintf(&b, "typedef struct {\n")
	for i := 0; i < len(args); {
		j := i
		var names []string
		for ; j < len(args) && args[j].Type == args[i].Type; j++ {
			names = append(names, args[j].Name)
		}
		t := ctype.C.Of(args[i].Type)
		for n, l := range wrapNames(names, 88) {
			if n == 0 {
				fmt.Fprintf(&b, "    %s %s", t, l)
			} else {
				fmt.Fprintf(&b, "\n        %s", l)
			}
		}
		b.WriteString(";\n")
		i = j
	}
	fmt.Fprintf(&b, "} %s;\n", name)
	return b.String()
}

func wrapNames(names []string, width int) []string {
	var lines []string
	cur := ""
	for i, n := range names {
		if i < len(names)-1 {
			n += ","
		}
		if cur != "" && len(cur)+1+len(n) > width {
			lines = append(lines, cur)
			cur = ""
		}
		if cur != "" {
			cur += " "
		}
		cur += n
	}
	return append(lines, cur)
}

// ReduceSum is the function the upstream kernels reduce with.
const ReduceSum = "xor_reduce_sum"

// reduceSum is the reduction Emit's native kernels write inline, as one
// function: simd_sum where the width is the whole simdgroup, else the xor
// butterfly over aligned groups of W lanes. Apple GPUs' simdgroups have 32
// lanes, never fewer than W, so the threadgroup-memory path Emit keeps
// for narrower emulated simdgroups is not part of it.
const reduceSum = `
// sum over each aligned group of W lanes of the simdgroup (the xor butterfly;
// simd_sum where W is the whole simdgroup)
template <ushort W>
static inline float xor_reduce_sum(float x, ushort sgw) {
    if (sgw == W) {
        return simd_sum(x);
    }
    for (ushort off = W / 2; off > 0; off >>= 1) {
        x += simd_shuffle_xor(x, off);
    }
    return x;
}
`

// Upstream is one kernel as ggml-metal.metal gets it: its kargs struct's
// name and its instances.
type Upstream struct {
	K         *ir.Kernel
	Kargs     string
	Instances []ir.Instance
}

// UpstreamLibrary returns the text ggml-metal.metal gets for kernels, each
// under the native contract or contract-free (the caller's to ensure):
// after summary, the reduction function where one reduces, each kernel and
// its instantiations (host names as HostName's). Their kargs structs are
// ggml-metal-impl.h's (Kargs), which the library includes.
// Locals are named by scope; there is no prelude (the library has it).
func UpstreamLibrary(summary string, kernels []Upstream) ([]byte, error) {
	var b bytes.Buffer
	if summary != "" {
		b.WriteString(cfamily.Comment(summary, 100))
	}
	reduces := false
	for _, u := range kernels {
		if u.K.Arith.Native && u.K.Arith.Backend != "metal" {
			return nil, fmt.Errorf("msl: %s is another backend's contract", u.K.ID())
		}
		reduces = reduces || ir.HasReduce(u.K)
	}
	if reduces {
		b.WriteString(reduceSum)
	}
	for _, u := range kernels {
		src, err := kernelText(u.Kargs, u.K, u.Instances, true)
		if err != nil {
			return nil, err
		}
		b.WriteString("\n" + src)
	}
	return b.Bytes(), nil
}

func kernel(op string, k *ir.Kernel, instances []ir.Instance, upstream bool) (string, error) {
	return kernelText(KargsName(op), k, instances, upstream)
}

func kernelText(kargs string, k *ir.Kernel, instances []ir.Instance, upstream bool) (string, error) {
	if err := cfamily.Unsupported("msl", k); err != nil {
		return "", err
	}
	p := cfamily.New(lang, k)
	if upstream {
		p = cfamily.NewUpstream(upstreamLang{lang}, k)
	}
	for _, a := range k.Args {
		p.SetName(a, "args."+a.Name)
	}
	var b strings.Builder
	if !upstream {
		fmt.Fprintf(&b, "// %s\n", k.ID())
	}
	tparams := p.TemplateParams()
	if upstream {
		// the bools are function constants, declared before the kernel
		var kept []string
		for i, q := range k.Params {
			if !constantParam(q) {
				kept = append(kept, tparams[i])
				continue
			}
			name, index := FunctionConstant(k, q)
			p.SetName(q, name)
			fmt.Fprintf(&b, "constant bool %s [[function_constant(%s + %d)]];\n", name, FunctionConstants(k), index)
		}
		if len(kept) < len(tparams) {
			b.WriteString("\n")
		}
		tparams = kept
	}
	if len(tparams) > 0 {
		fmt.Fprintf(&b, "template <%s>\n", strings.Join(tparams, ", "))
	}
	fn := FunctionName(k)
	fmt.Fprintf(&b, "kernel void %s(\n", fn)
	var params []string
	if len(k.Args) > 0 {
		params = append(params, fmt.Sprintf("constant %s & args [[buffer(0)]]", kargs))
	}
	for i, buf := range k.Buffers {
		t := lang.Type(buf.Elem)
		c := ""
		if buf.Access == ir.Read {
			c = "const "
		}
		params = append(params, fmt.Sprintf("device %s%s * %s [[buffer(%d)]]", c, t, p.Name(buf, buf.Name), i+1))
	}
	sgw := "uint kg_sgw"
	if upstream {
		sgw = "ushort sgw"
	}
	params = append(params,
		"uint3 tgpig [[threadgroup_position_in_grid]]",
		"uint3 tpitg [[thread_position_in_threadgroup]]",
		"uint3 ntg [[threads_per_threadgroup]]",
		sgw+" [[threads_per_simdgroup]]")
	if upstream {
		writeUpstreamParams(&b, params)
	} else {
		cfamily.WriteParams(&b, params)
	}
	p.Indent()
	if !k.Arith.Native && !upstream {
		p.Line("#if __METAL_VERSION__ >= 320")
		p.Line("#pragma METAL fp math_mode(safe)")
		p.Line("#pragma METAL fp contract(off)")
		p.Line("#endif")
	}
	if ir.HasReduce(k) && !upstream {
		x := p.LowerReduce()
		p.Line("// Lanes exchange through threadgroup memory when the simdgroup is narrower than a reduction.")
		p.Line("threadgroup %s %s[%s];", lang.Type(x.Shared.Elem), p.Name(x.Shared, x.Shared.Name), p.Expr(x.Shared.Len))
		p.Line("const %s %s = tpitg.x + ntg.x * (tpitg.y + ntg.y * tpitg.z);", lang.Type(x.Lin.Type), p.Name(x.Lin, x.Lin.Name))
	}
	for _, a := range ir.SharedArrays(k) {
		p.Line("threadgroup %s %s[%s];", lang.Type(a.Elem), p.Name(a, a.Name), p.Expr(a.Len))
	}
	if !upstream {
		p.Line("(void) ntg;")
		p.Line("(void) kg_sgw;")
	}
	p.Stmts(k.Body)
	p.WriteBody(&b)
	if len(tparams) == 0 {
		return b.String(), nil
	}
	typ := fn + "_t"
	if len(instances) == 0 {
		return "", fmt.Errorf("msl: %s has template params but no instances", k.ID())
	}
	hostName, args := HostName, targs
	if upstream {
		hostName = UpstreamHostName
		args = func(in ir.Instance) string { return strings.Join(UpstreamTemplateArgs(in), ", ") }
	}
	fmt.Fprintf(&b, "\ntypedef decltype(%s<%s>) %s;\n\n", fn, args(instances[0]), typ)
	seen := map[string]bool{}
	for _, in := range instances {
		if name := hostName(in); !seen[name] {
			seen[name] = true
			fmt.Fprintf(&b, "template [[host_name(%q)]] kernel %s %s<%s>;\n", name, typ, fn, args(in))
		}
	}
	return b.String(), nil
}

// targs are an instance's template arguments as Metal's instantiations
// write them: bare values (ir.Instance.Bare).
func targs(in ir.Instance) string { return strings.Join(in.BareTemplateArgs(), ", ") }

// writeUpstreamParams writes a kernel's parameter list as ggml-metal.metal's
// kernels do: one per line, the position attributes on one line at the end.
func writeUpstreamParams(b *strings.Builder, params []string) {
	n := len(params) - 4
	for _, s := range params[:n] {
		fmt.Fprintf(b, "        %s,\n", s)
	}
	fmt.Fprintf(b, "        %s,\n        %s) {\n", strings.Join(params[n:n+2], ", "), strings.Join(params[n+2:], ", "))
}

// upstreamLang is MSL as the upstream kernels write it: a reduction is a
// call of xor_reduce_sum.
type upstreamLang struct{ dialect }

func (upstreamLang) Reduce(out, x, width string, _ ir.Order, _ bool, _ cfamily.Exchange) []string {
	return []string{fmt.Sprintf("const float %s = %s<%s>(%s, sgw);", out, ReduceSum, width, x)}
}

func (upstreamLang) Reserved(name string) bool {
	return lang.Reserved(name) || name == ReduceSum || name == "sgw"
}

type dialect struct{ cfamily.CStyle }

// Types is MSL's spelling of the IR's types: 32-bit integers by their short
// names (uint32_t is a typedef there too, but kernels are written with uint
// and int), 64-bit ones ulong.
var Types = ctype.ShortInts

var lang = dialect{cfamily.CStyle{Types: Types}}

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
func (dialect) Reduce(out, x, width string, order ir.Order, _ bool, ex cfamily.Exchange) []string {
	lines := []string{
		fmt.Sprintf("float %s = %s;", out, x),
		fmt.Sprintf("if (kg_sgw >= %s) {", width),
	}
	shuffle := cfamily.ShuffleLoop("ushort", ex.Off, width, fmt.Sprintf("%s += simd_shuffle_xor(%s, %s);", out, out, ex.Off))
	if order == ir.NativeOrder {
		lines = append(lines, fmt.Sprintf("    if (kg_sgw == %s) {", width), fmt.Sprintf("        %s = simd_sum(%s);", out, out), "    } else {")
		for _, l := range shuffle {
			lines = append(lines, "    "+l)
		}
		lines = append(lines, "    }")
	} else {
		lines = append(lines, shuffle...)
	}
	return append(lines, cfamily.SharedButterfly(lang, ex, out, width, "")...)
}

var reserved = cfamily.CPPReserved(`kernel vertex fragment device constant threadgroup thread
	half float2 float3 float4 uint2 uint3 uint4 int2 int3 int4 uint ushort uchar
	exp fma min max dot select sqrt abs clamp mix args tgpig tpitg ntg kg_sgw`)

func (dialect) Reserved(name string) bool {
	return reserved[name] || strings.HasPrefix(name, "simd_") || strings.HasPrefix(name, "as_type")
}

// DepSync: Metal orders the dispatches with a barrier; nothing to do here.
func (dialect) DepSync(ir.DepKind) string { return "" }
