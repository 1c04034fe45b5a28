// Package cuda lowers IR kernels to CUDA in ggml-cuda's style: one header
// per op holding a __global__ function template per contract, specialised by
// the op's params as template arguments (derived params are defaulted
// template arguments, so launch bounds can use them).
//
// Contracts on CUDA. native-cuda writes arithmetic as ggml's hand-written
// kernels do (a*b + c, expf), so under ggml's -use_fast_math nvcc contracts
// and approximates exactly as it does for them. portable spells every f32
// add, sub and mul as __fadd_rn/__fsub_rn/__fmul_rn, which nvcc never
// contracts, and fma as fmaf; its bits match every other backend as long as
// the translation unit is built without flush-to-zero (-ftz=false), which
// -use_fast_math turns on.
package cuda

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/emit/internal/cfamily"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ir/ctype"
	"github.com/kernelgen/kernelgen/pass"
)

// KernelName is the __global__ function's name for a kernel: ggml's
// <op>_f32 for the native contract (and the contract-free gathers), with a
// _portable suffix for the portable one.
func KernelName(k *ir.Kernel) string { return cfamily.Named(k, "", "_f32") }

// Emit returns one op's header: its kernels under the contracts CUDA uses,
// then each kernel's launch geometry (GridName), once per kernel name.
func Emit(u ir.Unit) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// %s: %s\n\n#pragma once\n", u.Op, u.Summary)
	if err := cfamily.AppendKernels(&b, u.Kernels, func(k *ir.Kernel) (string, error) { return kernel(k, nil) }); err != nil {
		return nil, err
	}
	helpers := map[string]string{}
	for _, k := range u.Kernels {
		g := geometry(k)
		if prev, ok := helpers[k.Name]; ok {
			if prev != g {
				return nil, fmt.Errorf("cuda: %s: its contracts launch on different geometries", k.ID())
			}
			continue
		}
		helpers[k.Name] = g
		b.WriteString("\n" + g)
	}
	return b.Bytes(), nil
}

// GridName and BlockName are the host functions Emit writes beside a
// kernel's contracts: its workgroups per grid dimension and threads per
// workgroup as a dim3, from the IR's Kernel.Grid and Workgroup, so a
// launch written by hand (bench/cuda) takes them rather than repeating
// them. They take the kernel's template arguments, then GridArgs or
// BlockArgs.
func GridName(k *ir.Kernel) string  { return k.Name + "_grid" }
func BlockName(k *ir.Kernel) string { return k.Name + "_block" }

// GridArgs and BlockArgs are the args the grid and the workgroup name, in
// the kernel's order: GridName's and BlockName's parameters.
func GridArgs(k *ir.Kernel) []*ir.Arg  { return argsNamed(k, k.Grid) }
func BlockArgs(k *ir.Kernel) []*ir.Arg { return argsNamed(k, k.Workgroup) }

func argsNamed(k *ir.Kernel, dims [3]ir.Expr) []*ir.Arg {
	named := map[*ir.Arg]bool{}
	for _, e := range dims {
		ir.WalkExpr(e, func(x ir.Expr) {
			if r, ok := x.(*ir.ArgRef); ok {
				named[r.Arg] = true
			}
		})
	}
	var out []*ir.Arg
	for _, a := range k.Args {
		if named[a] {
			out = append(out, a)
		}
	}
	return out
}

// geometry renders GridName's and BlockName's functions for k.
func geometry(k *ir.Kernel) string {
	p := cfamily.New(lang, k)
	var tmpl string
	if tp := p.TemplateParams(); len(tp) > 0 {
		tmpl = fmt.Sprintf("template <%s>\n", strings.Join(tp, ", "))
	}
	var parts []string
	for _, f := range []struct {
		name, what string
		dims       [3]ir.Expr
		args       []*ir.Arg
	}{
		{GridName(k), "workgroups per grid dimension", k.Grid, GridArgs(k)},
		{BlockName(k), "threads per workgroup", k.Workgroup, BlockArgs(k)},
	} {
		var params []string
		for _, a := range f.args {
			params = append(params, fmt.Sprintf("const %s %s", lang.Type(a.Type), p.Name(a, a.Name)))
		}
		parts = append(parts, fmt.Sprintf("// %s's %s.\n%sstatic inline dim3 %s(%s) {\n    return dim3(%s, %s, %s);\n}\n",
			k.Name, f.what, tmpl, f.name, strings.Join(params, ", "), p.Expr(f.dims[0]), p.Expr(f.dims[1]), p.Expr(f.dims[2])))
	}
	return strings.Join(parts, "\n")
}

// Upstream returns the header ggml-cuda itself gets for kernels, each under
// the native contract, or contract-free (the caller's to ensure): what Emit
// writes for them, in the hand-written kernels' style. There is no
// generated-file header; a reduction is ggml's warp_reduce_sum (the same xor
// butterfly, for the warps of at least W lanes every CUDA and HIP device
// has); locals are named by scope (cfamily.Printer.ScopeNames); kernels are
// named <name>_f32 and carry their doc, not their contract.
func Upstream(summary string, kernels []*ir.Kernel) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("#pragma once\n")
	if summary != "" {
		b.WriteString("\n" + cfamily.Comment(summary, 100))
	}
	err := upstreamKernels(&b, kernels, upstreamLang{dialect: lang})
	return b.Bytes(), err
}

// UpstreamSource is Upstream's kernels as the text a .cu file of ggml-cuda
// takes beside their launchers (gated_delta_net.cu, ssm-conv.cu): the
// summary is the first kernel's comment, and an arg the kernel only divides
// by is a uint3 for fastdiv / fastmodulo (FastDivisors), as the neighbours'
// kernels take theirs.
func UpstreamSource(summary string, kernels []*ir.Kernel) ([]byte, error) {
	var b, ks bytes.Buffer
	if summary != "" {
		b.WriteString(cfamily.Comment(summary, 100))
	}
	err := upstreamKernels(&ks, kernels, upstreamLang{dialect: lang, fastdiv: true})
	b.Write(bytes.TrimPrefix(ks.Bytes(), []byte("\n")))
	return b.Bytes(), err
}

func upstreamKernels(b *bytes.Buffer, kernels []*ir.Kernel, l upstreamLang) error {
	for _, k := range kernels {
		if k.Arith.Native && k.Arith.Backend != "cuda" {
			return fmt.Errorf("cuda: %s is another backend's contract", k.ID())
		}
	}
	return cfamily.AppendKernels(b, kernels, func(k *ir.Kernel) (string, error) { return kernel(k, &l) })
}

// kernel renders k, as ggml-cuda gets it where up is set.
func kernel(k *ir.Kernel, up *upstreamLang) (string, error) {
	upstream := up != nil
	var err error
	ir.WalkStmts(k.Body, func(s ir.Stmt) {
		for _, e := range ir.StmtExprs(s) {
			ir.WalkExpr(e, func(x ir.Expr) {
				if c, ok := x.(*ir.Call); ok && c.Fn == ir.Dot4 && err == nil {
					err = fmt.Errorf("cuda: %s uses dot4, which CUDA has no native spelling for", k.ID())
				}
			})
		}
	})
	if err == nil {
		err = cfamily.Unsupported("cuda", k)
	}
	if err != nil {
		return "", err
	}
	p := cfamily.New(lang, k)
	if upstream {
		p = cfamily.NewUpstream(*up, k)
	}
	var b strings.Builder
	if k.Doc != "" {
		for _, l := range strings.Split(strings.TrimSpace(k.Doc), "\n") {
			fmt.Fprintf(&b, "// %s\n", l)
		}
	}
	if !upstream {
		fmt.Fprintf(&b, "// %s\n", k.ID())
	}
	if tp := p.TemplateParams(); len(tp) > 0 {
		fmt.Fprintf(&b, "template <%s>\n", strings.Join(tp, ", "))
	}
	bounds := p.WorkgroupSize()
	if k.MinWorkgroupsPerCore > 0 {
		bounds += fmt.Sprintf(", %d", k.MinWorkgroupsPerCore)
	}
	fmt.Fprintf(&b, "__global__ void __launch_bounds__(%s) %s(\n", bounds, KernelName(k))
	if upstream {
		p.WritePackedParams(&b)
	} else {
		cfamily.WriteParams(&b, p.PointerParams())
	}
	p.Indent()
	p.RestrictLocals()
	if x := lowerReduce(p, upstream); x != nil {
		p.Line("// Lanes exchange through shared memory when the hardware warp is narrower than a reduction.")
		p.Line("__shared__ %s %s[%s];", lang.Type(x.Shared.Elem), p.Name(x.Shared, x.Shared.Name), p.Expr(x.Shared.Len))
		p.Line("const %s %s = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);", lang.Type(x.Lin.Type), p.Name(x.Lin, x.Lin.Name))
	}
	for _, a := range ir.SharedArrays(k) {
		p.Line("__shared__ %s %s[%s];", lang.Type(a.Elem), p.Name(a, a.Name), p.Expr(a.Len))
	}
	p.Stmts(k.Body)
	p.WriteBody(&b)
	return b.String(), nil
}

// dialect is CUDA's spelling of the C-family constructs.
type dialect struct{ cfamily.CStyle }

var lang = dialect{cfamily.CStyle{Types: ctype.C}}

func (d dialect) Bitcast(from, to ir.Type, x string) string {
	switch {
	case from == ir.F32 && to == ir.I32:
		return "__float_as_int(" + x + ")"
	case from == ir.F32 && to == ir.U32:
		return "__float_as_uint(" + x + ")"
	case from == ir.I32 && to == ir.F32:
		return "__int_as_float(" + x + ")"
	case from == ir.U32 && to == ir.F32:
		return "__uint_as_float(" + x + ")"
	}
	return d.Convert(from, to, x)
}

func (dialect) Call(fn ir.Intrinsic, args []string) string {
	switch fn {
	case ir.FMA:
		return "fmaf(" + strings.Join(args, ", ") + ")"
	case ir.ExpNative:
		return "expf(" + args[0] + ")"
	}
	return fmt.Sprintf("<%s unsupported>", fn)
}

func (dialect) ExactBinary(op ir.BinOp, x, y string) string {
	fn := map[ir.BinOp]string{ir.Add: "__fadd_rn", ir.Sub: "__fsub_rn", ir.Mul: "__fmul_rn"}[op]
	return fmt.Sprintf("%s(%s, %s)", fn, x, y)
}

func (dialect) Builtin(b ir.Builtin, dim int) string {
	c := "xyz"[dim : dim+1]
	if b == ir.GroupID {
		return "blockIdx." + c
	}
	return "threadIdx." + c
}

func (dialect) Unroll() string { return "#pragma unroll" }

// Barrier: __syncthreads orders the block's global memory accesses too.
func (dialect) Barrier(bool) string { return "__syncthreads();" }

// Reduce is the xor butterfly (CUDA's warp_reduce_sum is one, so native and
// portable agree): shuffles within the warp when it is at least width lanes,
// otherwise the same butterfly through shared memory.
func (dialect) Reduce(out, x, width string, _ ir.Order, _ bool, ex cfamily.Exchange) []string {
	lines := []string{fmt.Sprintf("float %s = %s;", out, x), fmt.Sprintf("if ((uint32_t) warpSize >= %s) {", width)}
	lines = append(lines, cfamily.ShuffleLoop("int", ex.Off, width, fmt.Sprintf("%s += __shfl_xor_sync(0xffffffff, %s, %s, %s);", out, out, ex.Off, width))...)
	return append(lines, cfamily.SharedButterfly(lang, ex, out, width, "")...)
}

// lowerReduce: the generated kernels reduce through the exchange
// (pass.Facts.Exchange); ggml's own take warps as wide as every reduction.
func lowerReduce(p *cfamily.Printer, upstream bool) *pass.Exchange {
	if upstream {
		return nil
	}
	return p.LowerReduce()
}

// upstreamLang is CUDA as ggml-cuda's own kernels write it: reductions
// through common.cuh's warp_reduce_sum.
type upstreamLang struct {
	dialect
	// fastdiv: the kernel divides by its FastDivisors through fastdiv
	fastdiv bool
}

func (upstreamLang) Reduce(out, x, width string, _ ir.Order, _ bool, _ cfamily.Exchange) []string {
	return []string{fmt.Sprintf("const float %s = warp_reduce_sum<%s>(%s);", out, width, x)}
}

// Restrict is ggml-cuda's GGML_CUDA_RESTRICT: nvcc may move a restrict load
// above a PDL wait (griddepcontrol.wait), so ggml-cuda drops the qualifier
// where PDL is on.
func (upstreamLang) Restrict() string { return "GGML_CUDA_RESTRICT" }

func (upstreamLang) Reserved(name string) bool { return reserved[name] || name == "warp_reduce_sum" }

var reserved = cfamily.CPPReserved(`int32_t uint32_t int64_t uint64_t size_t
	threadIdx blockIdx blockDim gridDim warpSize exp expf fma fmaf min max div dot select sqrt sqrtf`)

func (dialect) Reserved(name string) bool { return reserved[name] }

// DepSync uses ggml-cuda's programmatic-dependent-launch helpers (no-ops
// below Hopper or when PDL is off): ggml_cuda_pdl_sync waits for the
// previous kernel, ggml_cuda_pdl_lc lets the next one start.
func (dialect) DepSync(k ir.DepKind) string {
	if k == ir.DepRelease {
		return "ggml_cuda_pdl_lc();"
	}
	return "ggml_cuda_pdl_sync();"
}
