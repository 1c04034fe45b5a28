// Package ggmlcpu lowers IR kernels to C++ in ggml-cpu's style (ops.cpp):
// one static function per kernel, taking (const ggml_compute_params *
// params, ggml_tensor * dst) and reading its params, args and buffers from
// the node as the glue model says. A kernel runs as goref runs it: its
// workgroups are split over params->ith / params->nth, and each workgroup
// runs its threads one after another in phases between barriers. An op of
// two dispatches (the ids ops: gather, then compute) gets an entry function
// that runs them with ggml_barrier between, so every prior state is read
// before any is written whatever the threads do; a gather scratch that does
// not live in the node's own output is params->wdata, sized by a work-size
// function for ggml_graph_plan. A family op (glue.Families: ops A and B, or
// C and D, over their shared kernel) gets one entry function for both
// forms, which gathers only for the ids form.
package ggmlcpu

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/kernelgen/kernelgen/emit/internal/cfamily"
	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/ir"
)

// Emit lowers unit u to ggml-cpu's C++. u is the native-cpu kernels one
// glue op dispatches, in order (Op names it: an op of glue.Model or a
// family op of glue.Families), at the instances that bound its stack
// arrays. The text is each kernel's function, then the op's entry point
// and work size where it has them (Entries names them). How the node feeds
// each kernel is the glue op's, found in the glue model of u's contract.
func Emit(u ir.Unit) ([]byte, error) {
	op, err := glueOf(u)
	if err != nil {
		return nil, err
	}
	l, err := lower([]*glue.Op{op}, u.Instances)
	if err != nil {
		return nil, err
	}
	return []byte(l.source), nil
}

// glueOf is the glue op named u.Op whose dispatches run u's kernels.
func glueOf(u ir.Unit) (*glue.Op, error) {
	if len(u.Contracts) != 1 {
		return nil, fmt.Errorf("ggmlcpu: unit %s serves %d contracts; ggml-cpu's serves one", u.Op, len(u.Contracts))
	}
	for _, model := range []func(ir.Arith) ([]*glue.Op, error){glue.Model, glue.Families} {
		m, err := model(u.Contracts[0])
		if err != nil {
			return nil, err
		}
		for _, op := range m {
			if op.Name == u.Op && runs(op, u.Kernels) {
				return op, nil
			}
		}
	}
	return nil, fmt.Errorf("ggmlcpu: no %s glue op %s dispatches the unit's kernels", u.Contracts[0], u.Op)
}

// runs: op's dispatches are of kernels ks, in order.
func runs(op *glue.Op, ks []*ir.Kernel) bool {
	if len(op.Dispatches) != len(ks) {
		return false
	}
	for i, d := range op.Dispatches {
		if d.Kernel != ks[i] {
			return false
		}
	}
	return true
}

// FunctionName is a kernel's function, ggml-cpu's forward name
// (cfamily.Named).
func FunctionName(k *ir.Kernel) string { return cfamily.Named(k, "ggml_compute_forward_", "_f32") }

// DispatchedName is the function of kernel k as glue op op dispatches it:
// a kernel with buffers bound as its caller's (ir.CallerRole) reads them
// from the node's srcs, which differ by op, so each op gets its own copy,
// named after the op; any other kernel is its FunctionName.
func DispatchedName(op string, k *ir.Kernel) string {
	for _, b := range k.Buffers {
		if b.Role == ir.CallerRole {
			return cfamily.Named(k, "ggml_compute_forward_"+op+"_", "_f32")
		}
	}
	return FunctionName(k)
}

// Entry is how ggml-cpu runs one fused op.
type Entry struct {
	// Op is the glue op (the compute kernel's name); Fusion its series letter.
	Op, Fusion string
	// Compute is called by the op's dispatcher with (params, dst).
	Compute string
	// WorkSize, when set, is `size_t WorkSize(const ggml_tensor * dst)`, the
	// bytes of params->wdata the op needs (its gather scratch).
	WorkSize string
}

// Entries are the entry points of op's forms (one, or a family op's two)
// as its lowering (Emit) names them.
func Entries(op *glue.Op) []Entry {
	compute := DispatchedName(op.Name, op.Dispatches[0].Kernel)
	if len(op.Dispatches) > 1 {
		compute = "ggml_compute_forward_" + op.Name
	}
	// a family op (glue.Families) is the entry point of both its forms;
	// only a form with a scratch outside dst needs the work size
	forms := op.Forms
	if forms == nil {
		forms = []*glue.Op{op}
	}
	var out []Entry
	for _, f := range forms {
		e := Entry{Op: f.Name, Fusion: f.Fusion, Compute: compute}
		if f.Scratch != nil && !f.Scratch.InDst {
			e.WorkSize = workSizeName(op)
		}
		out = append(out, e)
	}
	return out
}

func workSizeName(op *glue.Op) string { return "ggml_" + op.Name + "_work_size" }

// lowered is the ggml-cpu source of some glue ops and their entry points.
type lowered struct {
	source string
	ops    []Entry
}

// lower lowers the kernels of model (glue ops of one contract) for
// ggml-cpu at instances, which bound the arrays the lowering puts on the
// stack.
func lower(model []*glue.Op, instances []ir.Instance) (*lowered, error) {
	e := &emitter{instances: instances}
	var funcs []string
	u := &lowered{}
	for _, op := range model {
		if len(op.Schedules) > 0 {
			return nil, fmt.Errorf("ggmlcpu: %s: alternative schedules (%s) are not lowered for ggml-cpu", op.Name, op.Schedules[0].Local)
		}
		var calls []string
		for _, d := range op.Dispatches {
			text, err := e.kernel(op, d)
			if err != nil {
				return nil, err
			}
			funcs = append(funcs, text)
			calls = append(calls, DispatchedName(op.Name, d.Kernel))
		}
		entries := Entries(op)
		if len(op.Dispatches) > 1 {
			funcs = append(funcs, entryFunc(entries[0].Compute, op, calls))
		}
		if s := op.Scratch; s != nil && !s.InDst {
			funcs = append(funcs, fmt.Sprintf("size_t %s(const ggml_tensor * dst) {\n    return %s * sizeof(float);\n}\n", workSizeName(op), node(s.Elements)))
		}
		u.ops = append(u.ops, entries...)
	}
	var b strings.Builder
	for _, h := range helpers {
		if e.uses[h.name] {
			b.WriteString(h.text + "\n")
		}
	}
	b.WriteString(strings.Join(funcs, "\n"))
	u.source = b.String()
	return u, nil
}

type emitter struct {
	instances []ir.Instance   // the kernels' instances (bounds)
	uses      map[string]bool // helpers the kernels call
}

// entryFunc runs an op's dispatches in order, a barrier after each that
// another follows; a guarded dispatch (ops.Guard) is skipped with its barrier.
func entryFunc(name string, op *glue.Op, calls []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "static void %s(const ggml_compute_params * params, ggml_tensor * dst) {\n", name)
	for i, d := range op.Dispatches {
		call := fmt.Sprintf("%s(params, dst);\n", calls[i])
		if i+1 < len(calls) {
			call += "ggml_barrier(params->threadpool);\n"
		}
		if d.When == "" {
			b.WriteString(indent(call, 1))
			continue
		}
		fmt.Fprintf(&b, "    // %s\n    if (%s) {\n%s    }\n", d.WhenWhy, node(d.When), indent(call, 2))
	}
	b.WriteString("}\n")
	return b.String()
}

func indent(s string, depth int) string {
	pad := strings.Repeat("    ", depth)
	return pad + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+pad) + "\n"
}

// opRef is glue's name for the node in its C expressions.
var opRef = regexp.MustCompile(`\bop\b`)

// node spells a glue expression over the node as ggml-cpu names it (dst).
func node(expr string) string { return opRef.ReplaceAllString(expr, "dst") }

// helpers are the functions lowered kernels call, each emitted once when used.
var helpers = []struct{ name, text string }{
	{"dot_f32", `static float dot_f32(int n, const float * x, const float * y) {
    float sum;
    ggml_vec_dot_f32(n, &sum, 0, x, 0, y, 0, 1);
    return sum;
}
`},
	{"butterfly_sum", `// each cluster of width lanes of x gets its sum: for off = width/2 .. 1, every
// lane adds its partner's (lane ^ off) value from the step before
static void butterfly_sum(float * x, uint32_t n, uint32_t width) {
    for (uint32_t off = width / 2; off > 0; off >>= 1) {
        for (uint32_t i = 0; i < n; ++i) {
            if ((i & off) == 0) {
                const float sum = x[i] + x[i | off];
                x[i]       = sum;
                x[i | off] = sum;
            }
        }
    }
}
`},
	{"f32_bits", `static uint32_t f32_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof(u));
    return u;
}
`},
	{"bits_f32", `static float bits_f32(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof(x));
    return x;
}
`},
}

// bounds evaluates compile-time expressions of a kernel over the variants
// of its op: the stack arrays take the largest length any variant needs.
type bounds struct {
	k        *ir.Kernel
	variants []map[string]int64
}

func newBounds(k *ir.Kernel, instances []ir.Instance) *bounds {
	b := &bounds{k: k}
	for _, in := range instances {
		if in.Kernel == k {
			b.variants = append(b.variants, in.Values)
		}
	}
	if len(b.variants) == 0 {
		b.variants = []map[string]int64{{}}
	}
	return b
}

// max is e's largest value over the variants; ok is false when some variant
// cannot evaluate it.
func (b *bounds) max(e ir.Expr) (int64, bool) {
	var m int64
	for _, v := range b.variants {
		x, ok := ir.EvalInt(e, v)
		if !ok {
			return 0, false
		}
		m = max(m, x)
	}
	return m, true
}

// static is e's value when no param or arg enters it.
func static(e ir.Expr) (int64, bool) { return ir.EvalInt(e, nil) }
