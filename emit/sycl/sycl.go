// Package sycl lowers IR kernels to SYCL C++ in ggml-sycl's style: one
// header per op with a device function template per contract, called from a
// parallel_for over an nd_range (the launcher lives in the glue). SYCL's
// nd_range lists dimensions slowest first, so the IR's x (fastest) is SYCL
// dimension 2.
//
// Contracts on SYCL. native-sycl writes arithmetic as ggml-sycl does (a*b + c,
// sycl::native::exp) for icpx's default -fp-model=fast. portable kernels
// contain only exactly specified operations and turn contraction and
// reassociation off for their bodies with clang's fp pragma (DPC++ and
// AdaptiveCpp are clang-based); denormals must not be flushed.
package sycl

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/emit/internal/cfamily"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ir/ctype"
	"github.com/kernelgen/kernelgen/pass"
)

// FunctionName is the device function of a kernel.
func FunctionName(k *ir.Kernel) string { return cfamily.Named(k, "", "_f32") }

// Emit returns one op's header with its kernels under the contracts SYCL uses.
func Emit(u ir.Unit) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// %s: %s\n\n#pragma once\n\n#include <sycl/sycl.hpp>\n", u.Op, u.Summary)
	if err := cfamily.AppendKernels(&b, u.Kernels, func(k *ir.Kernel) (string, error) { return kernel(k, false) }); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ReduceSum is the function the upstream kernels reduce with.
const ReduceSum = "xor_reduce_sum"

// reduceSum is the xor butterfly Emit's kernels write at each reduction,
// as one function: over the sub-group where it covers the width W, else
// through local memory (red, one float per work-item); every work-item of
// the work-group calls it.
const reduceSum = `
// sum over each aligned group of W work-items (the xor butterfly): in the
// sub-group where it covers W, else through local memory, one float per
// work-item (every work-item of the work-group must call it)
template <uint32_t W>
static inline float xor_reduce_sum(float x, const sycl::nd_item<3> & item, float * red) {
    const sycl::sub_group sg = item.get_sub_group();
    if (sg.get_max_local_range()[0] >= W) {
#pragma unroll
        for (uint32_t off = W / 2; off > 0; off >>= 1) {
            x += sycl::permute_group_by_xor(sg, x, off);
        }
        return x;
    }
    const uint32_t lin = item.get_local_linear_id();
    for (uint32_t off = W / 2; off > 0; off >>= 1) {
        red[lin] = x;
        sycl::group_barrier(item.get_group());
        x += red[lin ^ off];
        sycl::group_barrier(item.get_group());
    }
    return x;
}
`

// Upstream returns the header ggml-sycl itself gets for kernels, each under
// the native contract or contract-free (the caller's to ensure): what Emit
// writes for them, in ggml-sycl's style. There is no generated-file header;
// the reductions call one function (xor_reduce_sum, the same butterfly);
// locals are named by scope (cfamily.Printer.ScopeNames).
func Upstream(summary string, kernels []*ir.Kernel) ([]byte, error) {
	body, err := UpstreamBody(summary, kernels)
	return append([]byte("#pragma once\n\n#include <sycl/sycl.hpp>\n"), body...), err
}

// UpstreamBody is Upstream's text without the header's prelude, for the
// ggml-sycl source that launches the kernels (it has sycl.hpp through
// common.hpp): the summary, xor_reduce_sum where a kernel reduces, the
// kernels.
func UpstreamBody(summary string, kernels []*ir.Kernel) ([]byte, error) {
	var b bytes.Buffer
	if summary != "" {
		b.WriteString("\n" + cfamily.Comment(summary, 100))
	}
	reduces := false
	for _, k := range kernels {
		if k.Arith.Native && k.Arith.Backend != "sycl" {
			return nil, fmt.Errorf("sycl: %s is another backend's contract", k.ID())
		}
		reduces = reduces || ir.HasReduce(k)
	}
	if reduces {
		b.WriteString(reduceSum)
	}
	err := cfamily.AppendKernels(&b, kernels, func(k *ir.Kernel) (string, error) { return kernel(k, true) })
	return b.Bytes(), err
}

// UpstreamInline returns a kernel without reductions as Upstream writes it,
// but for a header that already includes sycl.hpp (the glue's, beside the
// kernel's launcher): no prelude, no summary, static inline.
func UpstreamInline(k *ir.Kernel) ([]byte, error) {
	if ir.HasReduce(k) {
		return nil, fmt.Errorf("sycl: %s reduces: it needs Upstream's xor_reduce_sum", k.ID())
	}
	src, err := kernel(k, true)
	return []byte(src), err
}

func kernel(k *ir.Kernel, upstream bool) (string, error) {
	if err := cfamily.Unsupported("sycl", k); err != nil {
		return "", err
	}
	p := cfamily.New(lang, k)
	if upstream {
		p = cfamily.NewUpstream(upstreamLang{lang}, k)
	}
	var b strings.Builder
	if !upstream {
		fmt.Fprintf(&b, "// %s\n", k.ID())
	}
	tparams := p.TemplateParams()
	if len(tparams) > 0 {
		fmt.Fprintf(&b, "template <%s>\n", strings.Join(tparams, ", "))
	} else if upstream {
		b.WriteString("static inline ")
	} else {
		b.WriteString("inline\n")
	}
	fmt.Fprintf(&b, "void %s(\n", FunctionName(k))
	params := p.PointerParams()
	params = append(params, "const sycl::nd_item<3> & item")
	reduce := ir.HasReduce(k)
	var x *pass.Exchange
	if reduce && upstream {
		params = append(params, "float * red")
	} else if reduce {
		x = p.LowerReduce()
		params = append(params, fmt.Sprintf("%s * %s /* local memory, one float per work-item */", lang.Type(x.Shared.Elem), p.Name(x.Shared, x.Shared.Name)))
	}
	for _, a := range ir.SharedArrays(k) {
		params = append(params, fmt.Sprintf("%s * %s /* local memory: %s elements */", lang.Type(a.Elem), p.Name(a, a.Name), p.Expr(a.Len)))
	}
	if upstream {
		p.WritePackedParams(&b, params[len(k.Buffers)+len(k.Args):]...)
	} else {
		cfamily.WriteParams(&b, params)
	}
	p.Indent()
	if !k.Arith.Native && !upstream {
		p.Line("#pragma clang fp contract(off) reassociate(off)")
	}
	if x != nil {
		p.Line("// Work-items exchange through local memory when the sub-group is narrower than a reduction.")
		p.Line("const sycl::sub_group kg_sg = item.get_sub_group();")
		p.Line("const uint32_t kg_sgw = kg_sg.get_max_local_range()[0];")
		p.Line("const %s %s = item.get_local_linear_id();", lang.Type(x.Lin.Type), p.Name(x.Lin, x.Lin.Name))
	}
	p.Stmts(k.Body)
	p.WriteBody(&b)
	return b.String(), nil
}

type dialect struct{ cfamily.CStyle }

var lang = dialect{cfamily.CStyle{Types: ctype.C}}

func (d dialect) Bitcast(from, to ir.Type, x string) string {
	return fmt.Sprintf("sycl::bit_cast<%s>(%s)", d.Type(to), x)
}

func (dialect) Call(fn ir.Intrinsic, args []string) string {
	switch fn {
	case ir.FMA:
		return "sycl::fma(" + strings.Join(args, ", ") + ")"
	case ir.ExpNative:
		return "sycl::native::exp(" + args[0] + ")"
	case ir.Dot4:
		return fmt.Sprintf("sycl::dot(sycl::float4(%s), sycl::float4(%s))", strings.Join(args[:4], ", "), strings.Join(args[4:], ", "))
	}
	return fmt.Sprintf("<%s unsupported>", fn)
}

// ExactBinary: the fp pragma at the top of portable bodies does the work.
func (dialect) ExactBinary(ir.BinOp, string, string) string { return "" }

// Builtin maps the IR's x, y, z to SYCL dimensions 2, 1, 0.
func (dialect) Builtin(b ir.Builtin, dim int) string {
	if b == ir.GroupID {
		return fmt.Sprintf("(uint32_t) item.get_group(%d)", 2-dim)
	}
	return fmt.Sprintf("(uint32_t) item.get_local_id(%d)", 2-dim)
}

func (dialect) Unroll() string { return "#pragma unroll" }

// Barrier: group_barrier fences every address space at work-group scope.
func (dialect) Barrier(bool) string { return "sycl::group_barrier(item.get_group());" }

// Reduce: permute_group_by_xor butterflies when the sub-group covers the
// width (ggml-sycl's warp_reduce_sum is one), otherwise local memory.
func (dialect) Reduce(out, x, width string, _ ir.Order, _ bool, ex cfamily.Exchange) []string {
	lines := []string{fmt.Sprintf("float %s = %s;", out, x), fmt.Sprintf("if (kg_sgw >= %s) {", width)}
	lines = append(lines, cfamily.ShuffleLoop(lang.Type(ir.U32), ex.Off, width, fmt.Sprintf("%s += sycl::permute_group_by_xor(kg_sg, %s, %s);", out, out, ex.Off))...)
	return append(lines, cfamily.SharedButterfly(lang, ex, out, width, "")...)
}

// upstreamLang is SYCL as the upstream kernels write it: a reduction is a
// call of xor_reduce_sum.
type upstreamLang struct{ dialect }

func (upstreamLang) Reduce(out, x, width string, _ ir.Order, _ bool, _ cfamily.Exchange) []string {
	return []string{fmt.Sprintf("const float %s = %s<%s>(%s, item, red);", out, ReduceSum, width, x)}
}

func (upstreamLang) Reserved(name string) bool {
	return reserved[name] || name == ReduceSum || name == "red"
}

var reserved = cfamily.CPPReserved(`int32_t uint32_t size_t sycl item
	exp fma min max dot select sqrt kg_sg kg_sgw`)

func (dialect) Reserved(name string) bool { return reserved[name] }

// DepSync: an in-order queue runs the dispatches one after the other.
func (dialect) DepSync(ir.DepKind) string { return "" }
