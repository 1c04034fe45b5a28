package glsl

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/emit/internal/cfamily"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/pass"
)

// ReduceSum is the function the upstream shaders reduce with.
const ReduceSum = "xor_reduce_sum"

// reduceSum is Emit's butterfly as one function, in the same order: subgroup
// shuffles where the subgroup covers the width, else through shared memory
// (red, one float per invocation); every invocation of the workgroup calls it.
const reduceSum = `
// sum over each aligned group of width invocations (the xor butterfly): through
// subgroup shuffles where the subgroup covers it, else through shared memory
// (every invocation of the workgroup must call it)
float xor_reduce_sum(float x, const uint width) {
    if (gl_SubgroupSize >= width) {
        for (uint off = width / 2u; off > 0u; off >>= 1u) {
            x += subgroupShuffleXor(x, off);
        }
        return x;
    }
    const uint lin = gl_LocalInvocationIndex;
    for (uint off = width / 2u; off > 0u; off >>= 1u) {
        red[lin] = x;
        barrier();
        x += red[lin ^ off];
        barrier();
    }
    return x;
}
`

// SpecConstants are the specialization constants of k's upstream shader,
// constant_id i being the i-th: the variant params in order, then the
// derived params its workgroup size names (local sizes take only
// specialization constants, so the host sets those to their value).
func SpecConstants(k *ir.Kernel) []*ir.Param {
	var out []*ir.Param
	for _, p := range k.Params {
		if p.Derived == nil {
			out = append(out, p)
		}
	}
	for _, p := range k.Params {
		if p.Derived != nil && workgroupNames(k, p) {
			out = append(out, p)
		}
	}
	return out
}

func workgroupNames(k *ir.Kernel, p *ir.Param) bool {
	for _, w := range k.Workgroup {
		if r, ok := w.(*ir.ParamRef); ok && r.Param == p {
			return true
		}
	}
	return false
}

type upstreamDialect struct{ dialect }

func (upstreamDialect) Reduce(out, x, width string, _ ir.Order, _ bool, _ cfamily.Exchange) []string {
	return []string{fmt.Sprintf("const float %s = %s(%s, %s);", out, ReduceSum, x, width)}
}

func (upstreamDialect) Reserved(name string) bool {
	return reserved[name] || strings.HasPrefix(name, "gl_") || name == ReduceSum || name == "red" || name == "lin" || name == "off"
}

// Upstream returns the shader ggml-vulkan itself gets for k, under the
// native contract or contract-free (the caller's to ensure): what Emit writes,
// in ggml's style. No generated-file header; the variant params are
// specialization constants (SpecConstants; defaults holds their values when
// the host sets none), so one module serves every variant; the reductions
// call one function (xor_reduce_sum, the same butterfly); locals are named
// by scope and the push constants of a type share a line.
func Upstream(summary string, k *ir.Kernel, defaults map[string]int64) ([]byte, error) {
	if err := cfamily.Unsupported("glsl", k); err != nil {
		return nil, err
	}
	if !k.Arith.Native && k.Arith.Backend != "" {
		return nil, fmt.Errorf("glsl: %s: upstream shaders carry the native contract only", k.ID())
	}
	d := upstreamDialect{dialect{uses: &helperUse{}}}
	p := cfamily.NewUpstream(d, k)
	for _, a := range k.Args {
		p.SetName(a, "pc."+a.Name)
	}
	p.Indent()
	p.Stmts(k.Body)
	if n := pass.Of(k).Needs; n.ExactFMA || n.ZeroAdd || n.DenormPreserve {
		return nil, fmt.Errorf("glsl: %s: upstream shaders carry the native contract only", k.ID())
	}
	reduce := ir.HasReduce(k)
	var b bytes.Buffer
	b.WriteString("#version 450\n\n#extension GL_EXT_control_flow_attributes : enable\n")
	if reduce {
		b.WriteString("#extension GL_KHR_shader_subgroup_basic : enable\n#extension GL_KHR_shader_subgroup_shuffle : enable\n")
	}
	if d.uses.scopes {
		b.WriteString("#extension GL_KHR_memory_scope_semantics : enable\n")
	}
	if summary != "" {
		b.WriteString("\n" + cfamily.Comment(summary, 100))
	}
	b.WriteString("\n")
	spec := SpecConstants(k)
	id := map[*ir.Param]int{}
	// The defaults as an instance, derived params included, spell the values.
	def := ir.Instance{Kernel: k, Values: map[string]int64{}}
	for i, x := range spec {
		id[x] = i
		v, ok := defaults[x.Name]
		if x.Derived != nil {
			v, ok = ir.EvalInt(x.Derived, defaults)
		}
		if !ok {
			return nil, fmt.Errorf("glsl: %s: no default value for %s", k.ID(), x.Name)
		}
		def.Values[x.Name] = v
		val := def.Literal(x)
		note := ""
		if x.Derived != nil {
			note = " // " + p.Expr(x.Derived) + ", set by the host for the workgroup size"
		}
		fmt.Fprintf(&b, "layout(constant_id = %d) const %s %s = %s;%s\n", i, dialect{}.Type(x.Type), x.Name, val, note)
	}
	var sizes []string
	for i, w := range k.Workgroup {
		c := "xyz"[i : i+1]
		if n, ok := ir.EvalInt(w, nil); ok {
			sizes = append(sizes, fmt.Sprintf("local_size_%s = %d", c, n))
		} else if r, ok := w.(*ir.ParamRef); ok {
			sizes = append(sizes, fmt.Sprintf("local_size_%s_id = %d", c, id[r.Param]))
		} else {
			return nil, fmt.Errorf("glsl: %s: workgroup size %s is neither a constant nor a param", k.ID(), ir.ExprString(w))
		}
	}
	fmt.Fprintf(&b, "\nlayout(%s) in;\n\n", strings.Join(sizes, ", "))
	for i, buf := range k.Buffers {
		qual := map[ir.Access]string{ir.Read: "readonly ", ir.Write: "writeonly ", ir.ReadWrite: ""}[buf.Access]
		fmt.Fprintf(&b, "layout(binding = %d, std430) %sbuffer buf_%s { %s %s[]; };\n", i, qual, buf.Name, dialect{}.Type(buf.Elem), p.Name(buf, buf.Name))
	}
	if len(k.Args) > 0 {
		b.WriteString("\nlayout(push_constant) uniform parameter {\n")
		for i := 0; i < len(k.Args); {
			j := i
			var names []string
			for ; j < len(k.Args) && k.Args[j].Type == k.Args[i].Type; j++ {
				names = append(names, k.Args[j].Name)
			}
			for _, l := range wrapList(names, 92) {
				fmt.Fprintf(&b, "    %s %s;\n", dialect{}.Type(k.Args[i].Type), l)
			}
			i = j
		}
		b.WriteString("} pc;\n")
	}
	var derived []string
	for _, x := range k.Params {
		if _, isSpec := id[x]; x.Derived != nil && !isSpec {
			derived = append(derived, fmt.Sprintf("const %s %s = %s;", dialect{}.Type(x.Type), p.Name(x, x.Name), p.Expr(x.Derived)))
		}
	}
	if len(derived) > 0 {
		b.WriteString("\n" + strings.Join(derived, "\n") + "\n")
	}
	if reduce {
		var wg []string
		for _, w := range k.Workgroup {
			wg = append(wg, p.Expr(w))
		}
		fmt.Fprintf(&b, "\nshared float red[%s];\n", strings.Join(wg, " * "))
		b.WriteString(reduceSum)
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

// wrapList joins names with ", " into lines of at most about width columns.
func wrapList(names []string, width int) []string {
	var out []string
	line := ""
	for _, n := range names {
		if line != "" && len(line)+2+len(n) > width {
			out = append(out, line)
			line = ""
		}
		if line != "" {
			line += ", "
		}
		line += n
	}
	return append(out, line)
}
