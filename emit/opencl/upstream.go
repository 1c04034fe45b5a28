package opencl

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/emit/internal/cfamily"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/pass"
)

// upstreamSubgroups picks the subgroup shuffle the device offers (the
// extensions ggml-opencl's kernels use); without one, SUBGROUP_SIZE is 0
// and every reduction takes the local-memory butterfly.
const upstreamSubgroups = `
#if defined(cl_khr_subgroup_shuffle)
#define SUBGROUP_SIZE get_max_sub_group_size()
#define SUBGROUP_SHUFFLE_XOR(x, m) sub_group_shuffle_xor((x), (m))
#elif defined(cl_intel_subgroups)
#define SUBGROUP_SIZE get_max_sub_group_size()
#define SUBGROUP_SHUFFLE_XOR(x, m) intel_sub_group_shuffle_xor((x), (m))
#elif defined(cl_khr_subgroups) && defined(cl_qcom_subgroup_shuffle)
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#pragma OPENCL EXTENSION cl_qcom_subgroup_shuffle : enable
#define SUBGROUP_SIZE get_max_sub_group_size()
#define SUBGROUP_SHUFFLE_XOR(x, m) qcom_sub_group_shuffle_xor((x), (m), CLK_SUB_GROUP_SHUFFLE_WIDTH_WAVE_SIZE_QCOM, (x))
#else
#define SUBGROUP_SIZE 0u
#define SUBGROUP_SHUFFLE_XOR(x, m) (x)
#endif
`

type upstreamDialect struct{ dialect }

// reduceAdd is the macro that holds a file's one spelling of the reduction
// (reduceAddDefine); each reduction of the kernel calls it.
const reduceAdd = "REDUCE_ADD"

// reduceAddDefine is reduceAdd's definition, written beside the subgroup
// defines of a file whose kernel reduces. A macro, not a function: PoCL 3.1
// gave nondeterministic sums with the barriers inside a called function,
// and a macro's barriers expand into the kernel body at each use.
func (d upstreamDialect) reduceAddDefine() string {
	var b strings.Builder
	fmt.Fprintf(&b, `
// %s sets sum to its total over the n consecutive work-items it
// shares a group with (n a power of two, groups aligned), adding in the same
// xor butterfly either way: subgroup shuffles where the subgroup spans n,
// else local memory red (one float per work-item, lid this one's slot).
// Every work-item of the work-group must reach it; a macro, not a function,
// so that its barriers stay in the kernel body.
`, reduceAdd)
	fmt.Fprintf(&b, "#define %s(sum, n, red, lid) do { \\\n", reduceAdd)
	for _, l := range d.butterfly("sum", "(n)", cfamily.Exchange{Shared: "red", Lin: "lid", Off: "off"}) {
		fmt.Fprintf(&b, "    %s \\\n", l)
	}
	b.WriteString("} while (0)\n")
	return b.String()
}

// butterfly is the reduction in place on sum: through subgroup shuffles
// where the subgroup covers the width, else through local memory
// (ex.Shared, one float per work-item).
func (d upstreamDialect) butterfly(sum, width string, ex cfamily.Exchange) []string {
	return append([]string{
		fmt.Sprintf("if (SUBGROUP_SIZE >= %s) {", width),
		fmt.Sprintf("    for (uint %s = %s / 2u; %s > 0u; %s >>= 1u) {", ex.Off, width, ex.Off, ex.Off),
		fmt.Sprintf("        %s += SUBGROUP_SHUFFLE_XOR(%s, %s);", sum, sum, ex.Off),
		"    }",
	}, cfamily.SharedButterfly(d, ex, sum, width, "u")...)
}

// Reduce is Emit's xor butterfly, through the file's reduceAdd.
func (upstreamDialect) Reduce(out, x, width string, _ ir.Order, _ bool, ex cfamily.Exchange) []string {
	return []string{
		fmt.Sprintf("float %s = %s;", out, x),
		fmt.Sprintf("%s(%s, %s, %s, %s);", reduceAdd, out, width, ex.Shared, ex.Lin),
	}
}

func (upstreamDialect) Reserved(name string) bool {
	return reserved[name] || name == "red" || name == "lin" || name == "off" || name == "SUBGROUP_SIZE" ||
		name == "SUBGROUP_SHUFFLE_XOR" || name == reduceAdd || strings.HasSuffix(name, "_buf") || strings.HasPrefix(name, "off_")
}

// UpstreamDefines are the build options' defines an upstream kernel takes:
// its non-derived params, as ggml-opencl builds a program per variant
// (-DS_v=128 -DKDA=1 ...).
func UpstreamDefines(k *ir.Kernel) []string {
	var out []string
	for _, x := range k.Params {
		if x.Derived == nil {
			out = append(out, x.Name)
		}
	}
	return out
}

// Upstream returns the .cl file ggml-opencl itself gets for k, under the
// native contract or contract-free (k.ArithFree): what Emit
// writes, in ggml-opencl's style. No generated-file header; each buffer is
// a char pointer and a byte offset (ggml-opencl binds a tensor as its
// cl_mem and extra->offset + view_offs); the variant params are defines
// the host passes (UpstreamDefines), the derived ones macros over them and
// the workgroup size a reqd_work_group_size over those; the reductions are
// the same butterfly, spelled once per file (reduceAddDefine); locals are
// named by scope.
func Upstream(summary string, k *ir.Kernel) ([]byte, error) {
	if err := cfamily.Unsupported("opencl", k); err != nil {
		return nil, err
	}
	if !k.ArithFree && (!k.Arith.Native || k.Arith.Backend != "opencl") {
		return nil, fmt.Errorf("opencl: %s: upstream kernels carry the native-opencl contract only", k.ID())
	}
	d := upstreamDialect{lang}
	p := cfamily.NewUpstream(d, k)
	var defines []string
	for _, x := range k.Params {
		p.SetName(x, x.Name)
		if x.Derived == nil {
			defines = append(defines, x.Name)
		}
	}
	var b bytes.Buffer
	if summary != "" {
		b.WriteString(cfamily.Comment(summary, 100))
	}
	if len(defines) > 0 {
		fmt.Fprintf(&b, "// built once per variant with -D%s\n", strings.Join(defines, "=... -D")+"=...")
	}
	reduce := ir.HasReduce(k)
	if reduce {
		b.WriteString(upstreamSubgroups)
		b.WriteString(d.reduceAddDefine())
	}
	b.WriteString("\n")
	for _, x := range k.Params {
		if x.Derived != nil {
			fmt.Fprintf(&b, "#define %s %s\n", x.Name, parenthesized(p.Expr(x.Derived)))
		}
	}
	var wg []string
	for _, w := range k.Workgroup {
		wg = append(wg, p.Expr(w))
	}
	if len(k.Params) > len(defines) {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "kernel __attribute__((reqd_work_group_size(%s))) void %s(\n", strings.Join(wg, ", "), KernelName(k))
	var params []string
	for _, buf := range k.Buffers {
		c := ""
		if buf.Access == ir.Read {
			c = "const "
		}
		n := buf.Name
		params = append(params, fmt.Sprintf("global %schar * %s_buf, ulong off_%s", c, n, n))
	}
	var scalars []string
	for _, a := range k.Args {
		scalars = append(scalars, lang.Type(a.Type)+" "+p.Name(a, a.Name))
	}
	params = append(params, wrapNames(scalars, 92)...)
	for i, s := range params {
		sep := ","
		if i == len(params)-1 {
			sep = ") {"
		}
		fmt.Fprintf(&b, "        %s%s\n", strings.TrimSuffix(s, ","), sep)
	}
	p.Indent()
	for _, buf := range k.Buffers {
		c := ""
		if buf.Access == ir.Read {
			c = "const "
		}
		t := lang.Type(buf.Elem)
		p.Line("global %s%s * %s = (global %s%s *) (%s_buf + off_%s);", c, t, p.Name(buf, buf.Name), c, t, buf.Name, buf.Name)
	}
	if x := p.LowerReduce(); x != nil {
		// ggml's short names for the exchange (Reserved keeps them free)
		p.SetName(x.Shared, "red")
		p.SetName(x.Lin, "lin")
		p.SetName(x.Off, "off")
		p.Line("")
		p.Line("// reductions exchange through local memory where the subgroup is narrower")
		p.Line("local %s red[%s];", lang.Type(x.Shared.Elem), strings.Join(wg, " * "))
		p.Line("const %s lin = get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2));", lang.Type(x.Lin.Type))
	}
	for _, a := range ir.SharedArrays(k) {
		p.Line("local %s %s[%s];", lang.Type(a.Elem), p.Name(a, a.Name), p.Expr(a.Len))
	}
	p.Line("")
	p.Stmts(k.Body)
	if n := pass.Of(k).Needs; !k.ArithFree && (n.ExactFMA || n.ZeroAdd || n.DenormPreserve) {
		return nil, fmt.Errorf("opencl: %s: upstream kernels carry the native contract only", k.ID())
	}
	var body strings.Builder
	p.WriteBody(&body)
	b.WriteString(body.String())
	return b.Bytes(), nil
}

// wrapNames joins names with ", " into lines of at most about width columns.
func wrapNames(names []string, width int) []string {
	var out []string
	line := ""
	for _, n := range names {
		if line != "" && len(line)+2+len(n) > width {
			out = append(out, line+",")
			line = ""
		}
		if line != "" {
			line += ", "
		}
		line += n
	}
	return append(out, line)
}

// parenthesized is e in one pair of parentheses, as a macro's body wants.
func parenthesized(e string) string {
	if strings.HasPrefix(e, "(") && strings.HasSuffix(e, ")") {
		depth := 0
		for i, c := range e {
			switch c {
			case '(':
				depth++
			case ')':
				depth--
			}
			if depth == 0 && i < len(e)-1 {
				return "(" + e + ")"
			}
		}
		return e
	}
	return "(" + e + ")"
}
