// Package glsl lowers IR kernels to GLSL 4.50 compute shaders for ggml's
// Vulkan backend. Variants are compiled separately: the op's params arrive as
// preprocessor defines (-DS_v=128u -DKDA=true ...), as do the workgroup
// dimensions, which the host evaluates from the IR (Defines).
//
// Reductions honour the IR's logical width whatever the device's subgroup
// size: subgroup shuffles when gl_SubgroupSize covers the width, otherwise
// the same butterfly through shared memory (lavapipe's subgroups are 8 wide).
// Under the portable contract every f32 local is declared precise (SPIR-V
// NoContraction), so glslang and driver optimisers cannot fuse or reorder,
// and the two operations Vulkan leaves loose are spelled out: fma as kg_fma
// (correctly rounded through doubles, so such shaders need shaderFloat64,
// and rounded to float on the bits) and x + 0.0 as kg_add_zero. Denormals
// are still the driver's choice.
package glsl

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/emit/internal/cfamily"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ir/ctype"
	"github.com/kernelgen/kernelgen/pass"
)

// FileName is the shader file of a kernel: ggml's <op>.comp for the native
// contract and contract-free kernels, <op>_portable.comp for portable.
func FileName(k *ir.Kernel) string { return cfamily.Named(k, "", "") + ".comp" }

// Emit returns the shader source of the unit's one kernel (a shader per
// contract: glslang builds each instance from it by defines).
func Emit(u ir.Unit) ([]byte, error) {
	k, err := u.One("glsl")
	if err != nil {
		return nil, err
	}
	summary := u.Summary
	if err := cfamily.Unsupported("glsl", k); err != nil {
		return nil, err
	}
	d := dialect{portable: !k.Arith.Native, uses: &helperUse{}}
	p := cfamily.New(d, k)
	for _, a := range k.Args {
		p.SetName(a, "pc."+a.Name)
	}
	// The body is printed first, so that the memory-scope extension is
	// declared only where a barrier used it. The helpers follow the IR's
	// needs (pass.Facts.Needs): kg_fma needs shaderFloat64, which gathers must
	// not require.
	x := p.LowerReduce()
	reduce := x != nil
	p.Indent()
	if reduce {
		p.Line("const %s %s = gl_LocalInvocationIndex;", d.Type(x.Lin.Type), p.Name(x.Lin, x.Lin.Name))
	}
	p.Stmts(k.Body)
	var b bytes.Buffer
	b.WriteString("#version 450\n\n")
	fmt.Fprintf(&b, "// %s (%s): %s\n", k.Name, k.Arith, summary)
	var params []string
	for _, x := range k.Params {
		if x.Derived == nil {
			params = append(params, x.Name)
		}
	}
	if len(params) > 0 {
		fmt.Fprintf(&b, "// Variant defines: %s, and KG_WG_X/Y/Z (the workgroup size).\n", strings.Join(params, ", "))
	} else {
		b.WriteString("// Variant defines: KG_WG_X/Y/Z (the workgroup size).\n")
	}
	b.WriteString("\n#extension GL_EXT_control_flow_attributes : enable\n")
	needs := pass.Of(k).Needs
	if needs.DenormPreserve {
		b.WriteString(denormExtension)
	}
	if reduce {
		b.WriteString("#extension GL_KHR_shader_subgroup_basic : enable\n#extension GL_KHR_shader_subgroup_shuffle : enable\n")
	}
	if d.uses.scopes {
		b.WriteString("#extension GL_KHR_memory_scope_semantics : enable\n")
	}
	b.WriteString("\nlayout(local_size_x = KG_WG_X, local_size_y = KG_WG_Y, local_size_z = KG_WG_Z) in;\n\n")
	for i, buf := range k.Buffers {
		qual := map[ir.Access]string{ir.Read: "readonly ", ir.Write: "writeonly ", ir.ReadWrite: ""}[buf.Access]
		fmt.Fprintf(&b, "layout(binding = %d, std430) %sbuffer buf_%s { %s %s[]; };\n", i, qual, buf.Name, dialect{}.Type(buf.Elem), p.Name(buf, buf.Name))
	}
	if len(k.Args) > 0 {
		b.WriteString("\nlayout(push_constant) uniform parameter {\n")
		for _, a := range k.Args {
			fmt.Fprintf(&b, "    %s %s;\n", dialect{}.Type(a.Type), a.Name)
		}
		b.WriteString("} pc;\n")
	}
	var derived []string
	for _, x := range k.Params {
		if x.Derived != nil {
			derived = append(derived, fmt.Sprintf("const %s %s = %s;", dialect{}.Type(x.Type), p.Name(x, x.Name), p.Expr(x.Derived)))
		}
	}
	if len(derived) > 0 {
		b.WriteString("\n" + strings.Join(derived, "\n") + "\n")
	}
	if needs.DenormPreserve {
		b.WriteString(denormMode)
	}
	if needs.ExactFMA {
		b.WriteString(fmaHelper)
	}
	if needs.ZeroAdd {
		b.WriteString(addZeroHelper)
	}
	if reduce {
		b.WriteString("\n// Lanes exchange through shared memory when the subgroup is narrower than a reduction.\n")
		// The size is the KG_WG_* defines, as the layout's (one SPIR-V per
		// variant), not the workgroup's IR expression.
		fmt.Fprintf(&b, "shared %s %s[KG_WG_X * KG_WG_Y * KG_WG_Z];\n", d.Type(x.Shared.Elem), p.Name(x.Shared, x.Shared.Name))
	}
	if shared := ir.SharedArrays(k); len(shared) > 0 {
		b.WriteString("\n")
		for _, a := range shared {
			fmt.Fprintf(&b, "shared %s %s[%s];\n", d.Type(a.Elem), p.Name(a, a.Name), p.Expr(a.Len))
		}
	}
	b.WriteString("\nvoid main() {\n")
	for _, l := range p.Lines() {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// DenormPreserve is the define that builds a portable shader asking the
// driver to keep 32-bit denormals (SPV_KHR_float_controls, DenormPreserve).
// Without it, whether denormals survive is the driver's default (the H100's
// flushes them, lavapipe keeps them); with it, the module needs a device
// offering shaderDenormPreserveFloat32. Portable shaders with float
// arithmetic are built both ways; native ones and the copies never.
const DenormPreserve = "KG_DENORM_PRESERVE"

// DenormExtension and DenormMode are the two lines that ask for 32-bit
// denormals: the extension, before any declaration, and the execution mode.
// The SPIR-V numbers are the float controls extension's: capability
// DenormPreserve 4464, execution mode DenormPreserve 4459, on 32-bit floats.
const (
	DenormExtension = "#extension GL_EXT_spirv_intrinsics : require\n"
	DenormMode      = "spirv_execution_mode(extensions = [\"SPV_KHR_float_controls\"], capabilities = [4464], 4459, 32);\n"
)

const (
	denormExtension = "#ifdef " + DenormPreserve + "\n" + DenormExtension + "#endif\n"
	denormMode      = "\n#ifdef " + DenormPreserve + "\n// Keep 32-bit denormals, whatever the driver's default.\n" + DenormMode + "#endif\n"
)

// WithDenormPreserve returns a variant's defines plus DenormPreserve: the
// build for devices that offer shaderDenormPreserveFloat32.
func WithDenormPreserve(defs map[string]string) map[string]string {
	out := map[string]string{DenormPreserve: "1"}
	for n, v := range defs {
		out[n] = v
	}
	return out
}

// Defines returns the preprocessor defines of one instance: its params and
// the workgroup size evaluated from the IR.
func Defines(in ir.Instance) (map[string]string, error) {
	k, d := in.Kernel, map[string]string{}
	for _, x := range k.Params {
		if x.Derived != nil {
			continue
		}
		if _, ok := in.Values[x.Name]; !ok {
			return nil, fmt.Errorf("%s: instance %s does not set %s", k.ID(), in, x.Name)
		}
		d[x.Name] = in.Literal(x)
	}
	for i, w := range k.Workgroup {
		n, ok := ir.EvalInt(w, in.Values)
		if !ok {
			return nil, fmt.Errorf("%s: workgroup size %s is not known for instance %s", k.ID(), ir.ExprString(w), in)
		}
		d["KG_WG_"+"XYZ"[i:i+1]] = fmt.Sprint(n)
	}
	return d, nil
}

type dialect struct {
	portable bool
	uses     *helperUse // set while printing; nil where only types are spelled
}

// helperUse records which portable helpers the printed body calls.
// helperUse records what printing the body used that the shader must
// declare before it (pass.Needs holds what the IR says).
type helperUse struct{ scopes bool }

// The portable helpers implement two IEEE operations that Vulkan does not
// promise: fma() may be rounded twice (its precision is that of a multiply
// then an add; lavapipe does so), and x + 0.0 may be folded into x, losing
// -0.0 -> +0.0.
//
// fmaHelper computes the product exactly in double (48 significant bits fit
// in 53), adds c with an exact error term (TwoSum), rounds the sum to odd and
// then once to float: rounding to odd at 53 >= 24+2 bits makes the second
// rounding correct, so this is a single-precision fma (emit/goref/rt.FMA
// does the same on the host). It needs the device's shaderFloat64.
//
// The last rounding is done on the bits (kg_round_f32), not by float(s): a
// driver may drop a double -> float -> double round trip between two calls.
// Mesa 25's lavapipe does so in an unrolled chain of kg_fma (ssm_conv's
// window), keeping the unrounded sum (docs/runtimes.md); integer operations
// it cannot see through.
const fmaHelper = `
// s rounded to the nearest float, ties to even.
float kg_round_f32(double s) {
    uvec2 w = unpackDouble2x32(s);
    uint sign = w.y & 0x80000000u;
    int e = int((w.y >> 20) & 0x7ffu) - 896; // float's biased exponent
    uint top = ((w.y & 0xfffffu) << 3) | (w.x >> 29); // the 23 bits a float keeps
    uint rest = w.x & 0x1fffffffu; // the 29 it drops
    if (e == 0x7ff - 896) { // infinity or NaN (quiet, its high payload kept)
        return uintBitsToFloat(sign | 0x7f800000u | ((top | rest) != 0u ? 0x400000u | top : 0u));
    }
    if (e >= 255) {
        return uintBitsToFloat(sign | 0x7f800000u);
    }
    if (e >= 1) {
        uint bits = sign | (uint(e) << 23) | top;
        if (rest > 0x10000000u || (rest == 0x10000000u && (top & 1u) != 0u)) {
            bits += 1u; // a carry out of the significand steps the exponent, up to infinity
        }
        return uintBitsToFloat(bits);
    }
    if (e < -24) { // below half the smallest denormal (double zeros and denormals too)
        return uintBitsToFloat(sign);
    }
    // A denormal: the 24-bit significand shifted right by 1 - e (1 to 25).
    uint sig = top | 0x800000u;
    uint sh = uint(1 - e);
    uint m = sig >> sh;
    uint lost = sig & ((1u << sh) - 1u);
    uint halfway = 1u << (sh - 1u);
    if (lost > halfway || (lost == halfway && (rest != 0u || (m & 1u) != 0u))) {
        m += 1u;
    }
    return uintBitsToFloat(sign | m);
}

float kg_fma(float a, float b, float c) {
    precise double p = double(a) * double(b);
    precise double s = p + double(c);
    precise double t = s - p;
    precise double e = (p - (s - t)) + (double(c) - t);
    if (e != 0.0 && !isinf(s) && !isnan(s)) {
        uvec2 w = unpackDouble2x32(s);
        if ((w.x & 1u) == 0u) {
            // Round to odd: step s one ulp toward the exact sum.
            if ((e > 0.0) == (s > 0.0)) {
                w.x += 1u;
                if (w.x == 0u) {
                    w.y += 1u;
                }
            } else {
                if (w.x == 0u) {
                    w.y -= 1u;
                }
                w.x -= 1u;
            }
            s = packDouble2x32(w);
        }
    }
    return kg_round_f32(s);
}
`

// addZeroHelper spells x + 0.0 as IEEE rounds it: -0.0 becomes +0.0.
const addZeroHelper = `
float kg_add_zero(float x) {
    return x == 0.0 ? 0.0 : x;
}
`

// Types is GLSL's spelling of the IR's types: uint and int, and the IR's
// u64, an element offset (ir.U64), is uint too: a Vulkan storage-buffer
// binding spans at most maxStorageBufferRange bytes, a uint32_t, so every
// offset inside one fits 32 bits and 64-bit integers, an optional device
// feature (shaderInt64), buy nothing. This is the one place that decides it.
var Types = ctype.ShortInts.With(ir.U64, "uint")

func (dialect) Type(t ir.Type) string { return Types.Of(t) }

func (dialect) FloatLit(f float32) string { return cfamily.FloatDigits(f) }
func (dialect) UintLit(v uint32) string   { return fmt.Sprintf("%du", v) }
func (dialect) IntLit(v int32) string     { return fmt.Sprint(v) }

func (d dialect) Convert(from, to ir.Type, x string) string {
	return d.Type(to) + "(" + trimOuter(x) + ")"
}

func (d dialect) Bitcast(from, to ir.Type, x string) string {
	switch {
	case from == ir.F32 && to == ir.I32:
		return "floatBitsToInt(" + x + ")"
	case from == ir.F32 && to == ir.U32:
		return "floatBitsToUint(" + x + ")"
	case from == ir.I32 && to == ir.F32:
		return "intBitsToFloat(" + x + ")"
	case from == ir.U32 && to == ir.F32:
		return "uintBitsToFloat(" + x + ")"
	}
	return d.Type(to) + "(" + x + ")"
}

func (d dialect) Call(fn ir.Intrinsic, args []string) string {
	switch fn {
	case ir.FMA:
		if d.portable {
			return "kg_fma(" + strings.Join(args, ", ") + ")"
		}
		return "fma(" + strings.Join(args, ", ") + ")"
	case ir.ExpNative:
		return "exp(" + args[0] + ")"
	case ir.Dot4:
		return fmt.Sprintf("dot(vec4(%s), vec4(%s))", strings.Join(args[:4], ", "), strings.Join(args[4:], ", "))
	}
	return fmt.Sprintf("<%s unsupported>", fn)
}

// ExactBinary: GLSL marks exactness on declarations (precise), not
// operators, except x + 0.0, which drivers fold into x even when precise
// (lavapipe); kg_add_zero spells IEEE's result.
func (d dialect) ExactBinary(op ir.BinOp, x, y string) string {
	if op != ir.Add || x != "0.0" && y != "0.0" {
		return ""
	}
	if y == "0.0" {
		return "kg_add_zero(" + x + ")"
	}
	return "kg_add_zero(" + y + ")"
}

func (dialect) Builtin(b ir.Builtin, dim int) string {
	c := "xyz"[dim : dim+1]
	if b == ir.GroupID {
		return "gl_WorkGroupID." + c
	}
	return "gl_LocalInvocationID." + c
}

func (dialect) Load(_ *ir.Buffer, name, idx string) string { return name + "[" + idx + "]" }
func (dialect) Store(_ *ir.Buffer, name, idx, val string) string {
	return name + "[" + idx + "] = " + val
}

func (d dialect) Decl(v *ir.Var, portable bool) string {
	if portable && v.Type == ir.F32 {
		return "precise float"
	}
	return d.Type(v.Type)
}

func (d dialect) ArrayDecl(a *ir.Array, name, length string) string {
	return fmt.Sprintf("%s %s[%s];", d.Type(a.Elem), name, length)
}

func (dialect) Unroll() string { return "[[unroll]]" }
func (d dialect) Barrier(device bool) string {
	if device {
		// barrier() orders shared memory only, and memoryBarrierBuffer()
		// is device-wide (on NVIDIA it waits for every earlier store to
		// reach L2); the workgroup's buffer accesses need workgroup scope.
		d.uses.scopes = true
		return "controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, gl_StorageSemanticsBuffer | gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);"
	}
	return "barrier();"
}

// Reduce: the butterfly through subgroup shuffles when the subgroup covers
// the width, otherwise through shared memory, under both contracts. Native
// could take the driver's subgroupClusteredAdd, but on the H100 that ran op
// B's compute 3-8% slower than the shuffles (bench/RESULTS.md), and lavapipe
// does not offer the clustered class at all.
func (dialect) Reduce(out, x, width string, _ ir.Order, portable bool, ex cfamily.Exchange) []string {
	decl := "float"
	if portable {
		decl = "precise float"
	}
	lines := []string{
		fmt.Sprintf("%s %s = %s;", decl, out, x),
		fmt.Sprintf("if (gl_SubgroupSize >= %s) {", width),
		"    [[unroll]]",
		fmt.Sprintf("    for (uint %s = %s / 2u; %s > 0u; %s >>= 1u) {", ex.Off, width, ex.Off, ex.Off),
		fmt.Sprintf("        %s += subgroupShuffleXor(%s, %s);", out, out, ex.Off),
		"    }",
	}
	return append(lines, cfamily.SharedButterfly(dialect{}, ex, out, width, "u")...)
}

func trimOuter(s string) string {
	if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
		inner := s[1 : len(s)-1]
		depth := 0
		for _, c := range inner {
			if c == '(' {
				depth++
			} else if c == ')' {
				depth--
				if depth < 0 {
					return s
				}
			}
		}
		return inner
	}
	return s
}

var reserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`attribute const uniform varying buffer shared coherent volatile restrict
		readonly writeonly atomic_uint layout centroid flat smooth noperspective patch sample break continue
		do for while switch case default if else subroutine in out inout float double int void bool true false
		invariant precise discard return mat2 mat3 mat4 vec2 vec3 vec4 ivec2 ivec3 ivec4 bvec2 bvec3 bvec4 uint
		uvec2 uvec3 uvec4 dvec2 dvec3 dvec4 lowp mediump highp precision sampler2D image2D struct common
		partition active asm class union enum typedef template this resource goto inline noinline public
		static extern external interface long short half fixed unsigned superp input output hvec2 hvec3
		hvec4 fvec2 fvec3 fvec4 sampler3DRect filter sizeof cast namespace using texture
		exp fma min max dot mix step clamp abs sign floor ceil fract mod pow log sqrt length barrier
		kg_fma kg_round_f32 kg_add_zero pc main`) {
		reserved[w] = true
	}
}

func (dialect) Reserved(name string) bool { return reserved[name] || strings.HasPrefix(name, "gl_") }

// DepSync: Vulkan orders the dispatches with a barrier; nothing to do here.
func (dialect) DepSync(ir.DepKind) string { return "" }
