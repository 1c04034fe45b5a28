// Package emulate runs the generated CUDA, Metal Shading Language and SYCL
// kernels under host emulation (verify/hostemu) on the random problems of
// verify/cases, so CI checks every kernel against the Go reference without
// a GPU.
//
// Check, what kernelgen build runs, builds one hostemu program per file a
// backend wrote, byte for byte as written: the file plus a generated
// harness over every instance of it the backend builds (each variant under
// each kernel the file holds). Program, for the emitters' tests, builds one
// per (language, op, contract) from the IR: that one kernel under every
// variant of the table. Run replays a case's launches (gather, then
// compute, for the ids ops) on the same buffers and returns every buffer
// afterwards.
//
// # Job protocol of the generated harness
//
// Args: kg_variant (index into the program's instances: for Program and
// KernelProgram, the variants given), kg_grid_x/y/z and kg_wg_x/y/z
// (workgroups and threads per workgroup, IR order: x fastest), and the
// kernel's args by their IR names. Buffers: the kernel's buffers by their
// IR names.
package emulate

import (
	"fmt"
	"slices"
	"strings"

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

// Program returns the host-emulation program of op under contract a in lang,
// emitted here from the IR: that one kernel (the shared kernel for
// ArithFree ops, whatever a is) and a harness dispatching on kg_variant over
// every variant of the table, whichever backend builds it. The emitters'
// tests run it; kernelgen build runs the files it writes instead (Check).
func Program(lang *hostemu.Lang, op *ops.Op, a ir.Arith) (hostemu.Program, error) {
	p, err := emittedProgram(lang, op, a)
	return p.Program, err
}

func emittedProgram(lang *hostemu.Lang, op *ops.Op, a ir.Arith) (program, error) {
	k, err := op.Kernel(a)
	if err != nil {
		return program{}, err
	}
	variants := ops.VariantsOf(op.Name)
	if len(variants) == 0 {
		return program{}, fmt.Errorf("emulate: op %s has no variants", op.Name)
	}
	name := fmt.Sprintf("%s_%s_%s", lang, op.Name, contractName(op, a))
	return kernelProgram(name, lang, Kernel{Op: op.Name, Summary: op.Summary, K: k}, variants)
}

// program is a hostemu program and the instances its harness runs,
// numbered by kg_variant.
type program struct {
	hostemu.Program
	instances []ir.Instance
}

// instance finds the harness's number of the instance of k at params.
func (p program) instance(k *ir.Kernel, params map[string]int64) (int, error) {
	for i, in := range p.instances {
		if in.Kernel.ID() != k.ID() {
			continue
		}
		match := true
		for _, prm := range k.Params {
			if prm.Derived == nil && in.Values[prm.Name] != params[prm.Name] {
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
	return 0, fmt.Errorf("emulate: %s: params %s are not among the instances of program %s", k.ID(), strings.Join(keys, ","), p.Name)
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
func KernelProgram(program string, lang *hostemu.Lang, kern Kernel, variants []ops.Variant) (hostemu.Program, error) {
	p, err := kernelProgram(program, lang, kern, variants)
	return p.Program, err
}

func kernelProgram(name string, lang *hostemu.Lang, kern Kernel, variants []ops.Variant) (program, error) {
	s, err := skinOf(lang)
	if err != nil {
		return program{}, err
	}
	instances := instancesOf(kern.K, variants)
	src, err := s.emit(ir.Unit{Op: kern.Op, Summary: kern.Summary, Kernels: []*ir.Kernel{kern.K}, Instances: instances})
	if err != nil {
		return program{}, err
	}
	return newProgram(name, lang, kern.Op, File{Name: kern.Op + s.ext, Data: src}, instances)
}

// SourceProgram is KernelProgram for a source the caller emitted: function
// fn of file src runs k (for MSL, with op's kargs struct).
func SourceProgram(program string, lang *hostemu.Lang, op string, k *ir.Kernel, file, fn string, src []byte, variants []ops.Variant) (hostemu.Program, error) {
	s, err := skinOf(lang)
	if err != nil {
		return hostemu.Program{}, err
	}
	h := harness{lang: lang, skin: s, kargs: s.argsStruct(op), fn: func(*ir.Kernel) string { return fn }, upstream: true}
	hsrc, err := h.source(instancesOf(k, variants))
	if err != nil {
		return hostemu.Program{}, err
	}
	return hostemu.Program{Name: program, Lang: lang, Sources: map[string][]byte{file: src}, Harness: []byte(hsrc)}, nil
}

// File is a file a backend writes for one op, as kernelgen build writes it
// (its header included): what Check compiles and runs, byte for byte.
type File struct {
	Name string // its name in compiler messages, e.g. ssm_conv.metal
	Data []byte
}

// writtenProgram is the program of the file written for op in lang: the
// file as written, and a harness over every instance of it the backend
// builds (its variants under each kernel it holds).
func writtenProgram(lang *hostemu.Lang, backend string, op *ops.Op, f File) (program, error) {
	var kernels []*ir.Kernel
	for _, a := range contractsOn(op, ir.Native(backend)) {
		k, err := op.Kernel(a)
		if err != nil {
			return program{}, err
		}
		kernels = append(kernels, k)
	}
	var instances []ir.Instance
	for _, k := range kernels {
		instances = append(instances, instancesOf(k, ops.TargetOf(backend).Variants(op.Name))...)
	}
	name := fmt.Sprintf("%s_%s_written", lang, op.Name)
	return newProgram(name, lang, op.Name, f, instances)
}

// contractsOn are the contracts a backend with contract native builds op
// under: portable and native, the one kernel of an ArithFree op once.
func contractsOn(op *ops.Op, native ir.Arith) []ir.Arith {
	if op.ArithFree() {
		return []ir.Arith{ir.Portable}
	}
	return []ir.Arith{ir.Portable, native}
}

func instancesOf(k *ir.Kernel, variants []ops.Variant) []ir.Instance {
	out := make([]ir.Instance, len(variants))
	for i, v := range variants {
		out[i] = v.Of(k)
	}
	return out
}

// newProgram is file f and a harness running instances, each by the
// function lang's emitter names for its kernel.
func newProgram(name string, lang *hostemu.Lang, op string, f File, instances []ir.Instance) (program, error) {
	for _, in := range instances {
		for _, b := range in.Kernel.Buffers {
			if b.Elem != ir.F32 && b.Elem != ir.I32 {
				return program{}, fmt.Errorf("emulate: %s: buffer %s has element type %s; only f32 and i32 are supported", in.Kernel.ID(), b.Name, b.Elem)
			}
		}
	}
	s, err := skinOf(lang)
	if err != nil {
		return program{}, err
	}
	h := harness{lang: lang, skin: s, kargs: s.argsStruct(op), fn: s.function, emitted: true}
	hsrc, err := h.source(instances)
	if err != nil {
		return program{}, err
	}
	return program{
		Program:   hostemu.Program{Name: name, Lang: lang, Sources: map[string][]byte{f.Name: f.Data}, Harness: []byte(hsrc)},
		instances: instances,
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
	lang  *hostemu.Lang
	skin  skin
	kargs string                  // the struct the kernel takes its args in, "" for parameters
	fn    func(*ir.Kernel) string // a kernel's function in the source
	// emitted: the source is the language's emitter's own, whose helpers
	// (a launch geometry) the skin may check against the job's.
	emitted bool
	// upstream: the source is the text a ggml tree gets (SourceProgram),
	// which may take some params otherwise than as template arguments
	// (MSL's function constants).
	upstream bool
}

// writer writes harness text.
type writer func(format string, args ...any)

// skin is one language's side of the harness: how its emitter is called and
// names a kernel's function, and how a kernel is launched. Each is declared
// from the init of the file its backend owns (verify/emulate/<language>.go),
// as ops' backends declare their contracts.
type skin struct {
	ext      string                          // its files' extension
	emit     func(u ir.Unit) ([]byte, error) // the language's emitter
	function func(*ir.Kernel) string
	// argsStruct, when set, is the struct an op's kernels take their args
	// in; otherwise each arg is a parameter after the buffers.
	argsStruct func(op string) string
	// prelude, when set, writes what the launches need before
	// hostemu_run.
	prelude func(w writer, h harness)
	// setup writes a kernel's launch geometry and returns what the call
	// passes after its buffers and args.
	setup func(w writer, k *ir.Kernel) []string
	// launch writes the run of one instance: function inst (its template
	// arguments spelled) on args, named name in messages.
	launch func(w writer, h harness, in ir.Instance, name, inst, args string) error
	// arg, when set, is what the call passes for arg a of k, whose value
	// the local v holds (a kernel may take an arg in a form of its own).
	arg func(h harness, k *ir.Kernel, a *ir.Arg, v string) string
}

var skins = map[*hostemu.Lang]skin{}

// declare adds lang's skin; each language's file calls it from its init.
func declare(lang *hostemu.Lang, s skin) {
	if s.argsStruct == nil {
		s.argsStruct = func(string) string { return "" }
	}
	skins[lang] = s
}

func skinOf(lang *hostemu.Lang) (skin, error) {
	s, ok := skins[lang]
	if !ok {
		return skin{}, fmt.Errorf("emulate: unknown language %v", lang)
	}
	return s, nil
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

// source is the harness: job kg_variant runs instances[kg_variant]. The
// instances of one kernel are consecutive; each kernel's block reads its
// buffers and args.
func (h harness) source(instances []ir.Instance) (string, error) {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	var ids []string
	for i, in := range instances {
		if i == 0 || in.Kernel != instances[i-1].Kernel {
			ids = append(ids, fmt.Sprintf("%s (%s)", in.Kernel.ID(), h.fn(in.Kernel)))
		}
	}
	w("// Generated by verify/emulate: runs %s in %s under host emulation.\n", strings.Join(ids, ", "), h.lang)
	if h.skin.prelude != nil {
		h.skin.prelude(w, h)
	}
	w("void hostemu_run(hostemu::Job& job) {\n")
	w("  const uint32_t kg_g[3] = {job.arg_u32(%q), job.arg_u32(%q), job.arg_u32(%q)};\n", geometryArgs[0], geometryArgs[1], geometryArgs[2])
	w("  const uint32_t kg_w[3] = {job.arg_u32(%q), job.arg_u32(%q), job.arg_u32(%q)};\n", geometryArgs[3], geometryArgs[4], geometryArgs[5])
	w("  const uint32_t kg_i = job.arg_u32(%q);\n", ArgVariant)
	for first := 0; first < len(instances); {
		last := first
		for last+1 < len(instances) && instances[last+1].Kernel == instances[first].Kernel {
			last++
		}
		if err := h.kernelBlock(w, instances, first, last); err != nil {
			return "", err
		}
		first = last + 1
	}
	w("  hostemu::detail::fail(\"kg_variant %%u is not an instance of this program (%d instances)\", kg_i);\n", len(instances))
	w("}\n")
	return b.String(), nil
}

// kernelBlock runs instances first..last, all of one kernel.
func (h harness) kernelBlock(w writer, instances []ir.Instance, first, last int) error {
	k := instances[first].Kernel
	fn := h.fn(k)
	w("  if (kg_i >= %du && kg_i <= %du) {\n", first, last)
	// Locals are prefixed so no IR name can clash with the harness's or the skin's.
	var call []string
	if h.kargs != "" && len(k.Args) > 0 {
		w("    %s kg_args;\n", h.kargs)
		for _, a := range k.Args {
			w("    kg_args.%s = job.%s(%q);\n", a.Name, argGetter(a.Type), a.Name)
		}
		call = append(call, "kg_args")
	}
	for _, buf := range k.Buffers {
		c := ""
		if buf.Access == ir.Read {
			c = "const "
		}
		w("    %s%s* const b_%s = job.buffer<%s>(%q);\n", c, ctype(buf.Elem), buf.Name, ctype(buf.Elem), buf.Name)
		call = append(call, "b_"+buf.Name)
	}
	if h.kargs == "" {
		for _, a := range k.Args {
			w("    const %s a_%s = job.%s(%q);\n", ctype(a.Type), a.Name, argGetter(a.Type), a.Name)
			v := "a_" + a.Name
			if h.skin.arg != nil {
				v = h.skin.arg(h, k, a, v)
			}
			call = append(call, v)
		}
	}
	call = append(call, h.skin.setup(w, k)...)
	args := strings.Join(call, ", ")
	w("    switch (kg_i) {\n")
	for i := first; i <= last; i++ {
		in := instances[i]
		name := fn
		if s := in.String(); s != "" {
			name += "<" + s + ">"
		}
		inst := fn + templateArgs(in)
		w("    case %d:\n", i)
		if err := h.skin.launch(w, h, in, name, inst, args); err != nil {
			return err
		}
		w("      return;\n")
	}
	w("    }\n  }\n")
	return nil
}
