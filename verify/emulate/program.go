// Package emulate runs the generated CUDA, Metal Shading Language and SYCL
// kernels under host emulation (verify/hostemu) on the random problems of
// verify/cases, so CI checks every emitted kernel against the Go reference
// without a GPU.
//
// Program builds one hostemu program per (language, op, contract): the
// emitter's source for that op's kernel plus a generated harness that
// instantiates every variant of the variant table and picks one per job.
// Run replays a case's launches (gather, then compute, for the ids ops) on
// the same buffers and returns every buffer afterwards.
//
// # Job protocol of the generated harness
//
// Args: kg_variant (index into ops.VariantsOf(op)), kg_grid_x/y/z and
// kg_wg_x/y/z (workgroups and threads per workgroup, IR order: x fastest),
// and the kernel's args by their IR names. Buffers: the kernel's buffers by
// their IR names.
package emulate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/emit/msl"
	"github.com/kernelgen/kernelgen/emit/sycl"
	"github.com/kernelgen/kernelgen/ir"
	ctypes "github.com/kernelgen/kernelgen/ir/ctype"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

// Job argument names the harness reads besides the kernel's own args.
const (
	ArgVariant = "kg_variant"
)

// geometryArgs are the launch geometry args, grid then workgroup, x y z.
var geometryArgs = [6]string{"kg_grid_x", "kg_grid_y", "kg_grid_z", "kg_wg_x", "kg_wg_y", "kg_wg_z"}

// Program returns the host-emulation program of op under contract a in lang:
// the emitted source of that one kernel (the shared kernel for ArithFree
// ops, whatever a is) and a harness dispatching on kg_variant.
func Program(lang hostemu.Lang, op *ops.Op, a ir.Arith) (hostemu.Program, error) {
	k, err := op.Kernel(a)
	if err != nil {
		return hostemu.Program{}, err
	}
	variants := ops.VariantsOf(op.Name)
	if len(variants) == 0 {
		return hostemu.Program{}, fmt.Errorf("emulate: op %s has no variants", op.Name)
	}
	name := fmt.Sprintf("%s_%s_%s", lang, op.Name, contractName(op, a))
	return KernelProgram(name, lang, Kernel{Op: op.Name, Summary: op.Summary, K: k}, variants)
}

// Kernel is one kernel as an emitter takes it: op, summary and kernel name
// the file and its functions.
type Kernel struct {
	Op, Summary string
	K           *ir.Kernel
}

// KernelProgram returns the host-emulation program of any kernel (an op's,
// or a test's own) in lang for the given variants, which the harness
// numbers as kg_variant; program names the cached executable.
func KernelProgram(program string, lang hostemu.Lang, kern Kernel, variants []ops.Variant) (hostemu.Program, error) {
	k := kern.K
	for _, b := range k.Buffers {
		if b.Elem != ir.F32 && b.Elem != ir.I32 {
			return hostemu.Program{}, fmt.Errorf("emulate: %s: buffer %s has element type %s; only f32 and i32 are supported", k.ID(), b.Name, b.Elem)
		}
	}
	kernels := []*ir.Kernel{k}
	var src []byte
	var file, fn string
	var err error
	switch lang {
	case hostemu.CUDA:
		src, err = cuda.Emit(kern.Op, kern.Summary, kernels)
		file, fn = kern.Op+".cuh", cuda.KernelName(k)
	case hostemu.MSL:
		src, err = msl.Emit(kern.Op, kern.Summary, kernels, variants)
		file, fn = kern.Op+".metal", msl.FunctionName(k)
	case hostemu.SYCL:
		src, err = sycl.Emit(kern.Op, kern.Summary, kernels)
		file, fn = kern.Op+".hpp", sycl.FunctionName(k)
	default:
		return hostemu.Program{}, fmt.Errorf("emulate: unknown language %v", lang)
	}
	if err != nil {
		return hostemu.Program{}, err
	}
	return SourceProgram(program, lang, kern.Op, k, file, fn, src, variants)
}

// SourceProgram is KernelProgram for a source the caller emitted: function
// fn of file src runs k (for MSL, with op's kargs struct).
func SourceProgram(program string, lang hostemu.Lang, op string, k *ir.Kernel, file, fn string, src []byte, variants []ops.Variant) (hostemu.Program, error) {
	h := harness{lang: lang, kargs: msl.KargsName(op), k: k, fn: fn}
	hsrc, err := h.source(variants)
	if err != nil {
		return hostemu.Program{}, err
	}
	return hostemu.Program{
		Name:    program,
		Lang:    lang,
		Sources: map[string][]byte{file: src},
		Harness: []byte(hsrc),
	}, nil
}

// contractName is the program's contract in names: "any" for ArithFree ops,
// whose one kernel serves every contract.
func contractName(op *ops.Op, a ir.Arith) string {
	if op.ArithFree() {
		return "any"
	}
	return strings.ReplaceAll(a.String(), "-", "_")
}

type harness struct {
	lang  hostemu.Lang
	kargs string // MSL's kargs struct
	k     *ir.Kernel
	fn    string
}

// ctype is the C++ type every skin accepts for an IR scalar or element type
// (MSL's uint and int are the same types under the skin).
func ctype(t ir.Type) string { return ctypes.C.Of(t) }

func argGetter(t ir.Type) string {
	switch t {
	case ir.F32:
		return "arg_f32"
	case ir.I32:
		return "arg_i32"
	}
	return "arg_u32"
}

// templateArgs spells one instance's explicit template arguments (derived
// params take their defaults), or "" for a kernel without params.
func templateArgs(in ir.Instance) string {
	targs := in.TemplateArgs()
	if len(targs) == 0 {
		return ""
	}
	return "<" + strings.Join(targs, ", ") + ">"
}

func (h harness) source(variants []ops.Variant) (string, error) {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	k := h.k
	w("// Generated by verify/emulate: runs %s (%s) in %s under host emulation.\n", k.ID(), h.fn, h.lang)
	w("void hostemu_run(hostemu::Job& job) {\n")
	w("  const uint32_t kg_g[3] = {job.arg_u32(%q), job.arg_u32(%q), job.arg_u32(%q)};\n", geometryArgs[0], geometryArgs[1], geometryArgs[2])
	w("  const uint32_t kg_w[3] = {job.arg_u32(%q), job.arg_u32(%q), job.arg_u32(%q)};\n", geometryArgs[3], geometryArgs[4], geometryArgs[5])
	// Locals are prefixed so no IR name can clash with the harness's or the skin's.
	var call []string
	if h.lang == hostemu.MSL && len(k.Args) > 0 {
		w("  %s kg_args;\n", h.kargs)
		for _, a := range k.Args {
			w("  kg_args.%s = job.%s(%q);\n", a.Name, argGetter(a.Type), a.Name)
		}
		call = append(call, "kg_args")
	}
	for _, buf := range k.Buffers {
		c := ""
		if buf.Access == ir.Read {
			c = "const "
		}
		w("  %s%s* const b_%s = job.buffer<%s>(%q);\n", c, ctype(buf.Elem), buf.Name, ctype(buf.Elem), buf.Name)
		call = append(call, "b_"+buf.Name)
	}
	if h.lang != hostemu.MSL {
		for _, a := range k.Args {
			w("  const %s a_%s = job.%s(%q);\n", ctype(a.Type), a.Name, argGetter(a.Type), a.Name)
			call = append(call, "a_"+a.Name)
		}
	}
	switch h.lang {
	case hostemu.CUDA:
		w("  const dim3 kg_grid(kg_g[0], kg_g[1], kg_g[2]), kg_block(kg_w[0], kg_w[1], kg_w[2]);\n")
	case hostemu.MSL:
		w("  const uint3 kg_grid(kg_g[0], kg_g[1], kg_g[2]), kg_tg(kg_w[0], kg_w[1], kg_w[2]);\n")
		call = append(call, "p.tgpig", "p.tpitg", "p.ntg", "p.tpsg")
	case hostemu.SYCL:
		w("  sycl::queue kg_q;\n")
		// SYCL lists dimensions slowest first: the IR's x is dimension 2.
		w("  const sycl::nd_range<3> kg_range(sycl::range<3>(size_t(kg_g[2]) * kg_w[2], size_t(kg_g[1]) * kg_w[1], size_t(kg_g[0]) * kg_w[0]),\n")
		w("                                   sycl::range<3>(kg_w[2], kg_w[1], kg_w[0]));\n")
		call = append(call, "item")
		// &acc[0], not get_multi_ptr: AdaptiveCpp's local_accessor has no
		// get_multi_ptr (24.06), and the emulation skin leaves it out too.
		if ir.HasReduce(k) {
			call = append(call, "&kg_red[0]")
		}
	}
	args := strings.Join(call, ", ")
	w("  switch (job.arg_u32(%q)) {\n", ArgVariant)
	for i, v := range variants {
		name := h.fn
		if s := v.String(); s != "" {
			name += "<" + s + ">"
		}
		inst := h.fn + templateArgs(v.Of(k))
		w("    case %d:\n", i)
		switch h.lang {
		case hostemu.CUDA:
			w("      hostemu::cuda::launch(%q, kg_grid, kg_block, [&] { %s(%s); });\n", name, inst, args)
		case hostemu.MSL:
			w("      hostemu::msl::launch(%q, kg_grid, kg_tg, [&](const hostemu::msl::pos& p) { %s(%s); });\n", name, inst, args)
		case hostemu.SYCL:
			w("      hostemu::sycl::launch(%q, [&] {\n", name)
			w("        kg_q.submit([&](sycl::handler& kg_h) {\n")
			if ir.HasReduce(k) {
				w("          sycl::local_accessor<float, 1> kg_red(sycl::range<1>(size_t(kg_w[0]) * kg_w[1] * kg_w[2]), kg_h);\n")
			}
			// Shared arrays are local memory the launcher sizes, per variant.
			local := ""
			for _, a := range ir.SharedArrays(k) {
				n, ok := ir.EvalInt(a.Len, v.Values)
				if !ok {
					return "", fmt.Errorf("emulate: %s: shared array %s: length not computable for %s", k.ID(), a.Name, v)
				}
				w("          sycl::local_accessor<%s, 1> kg_sh_%s(sycl::range<1>(%d), kg_h);\n", ctype(a.Elem), a.Name, n)
				local += fmt.Sprintf(", &kg_sh_%s[0]", a.Name)
			}
			w("          kg_h.parallel_for(kg_range, [=](sycl::nd_item<3> item) { %s(%s%s); });\n", inst, args, local)
			w("        }).wait();\n")
			w("      });\n")
		}
		w("      break;\n")
	}
	w("    default:\n")
	w("      hostemu::detail::fail(\"%s: kg_variant %%u is not in the variant table (%d variants)\", job.arg_u32(%q));\n", h.fn, len(variants), ArgVariant)
	w("  }\n}\n")
	return b.String(), nil
}

// variantIndex finds the variant of op whose param values a launch uses.
func variantIndex(op *ops.Op, k *ir.Kernel, params map[string]int64) (int, error) {
	for i, v := range ops.VariantsOf(op.Name) {
		match := true
		for _, p := range k.Params {
			if p.Derived == nil && v.Values[p.Name] != params[p.Name] {
				match = false
				break
			}
		}
		if match {
			return i, nil
		}
	}
	keys := make([]string, 0, len(params))
	for n, v := range params {
		keys = append(keys, fmt.Sprintf("%s=%d", n, v))
	}
	slices.Sort(keys)
	return 0, fmt.Errorf("emulate: %s: params %s are not in the variant table", k.ID(), strings.Join(keys, ","))
}
