package cuda

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/ir"
	ctypes "github.com/kernelgen/kernelgen/ir/ctype"
)

// family is CUDA's own part of a family's upstream glue: a launcher written
// as ggml-cuda's own (ggml_cuda_op_gated_delta_net): the node's tensors
// named by the kernel's buffers, their ne and nb through GGML_TENSOR_LOCALS,
// each kernel argument a local over those, and the instance picked by if/else.
type family struct {
	// Tensors declare the node's sources by name, TensorLocals their ne
	// and nb that the locals read, Locals the variant flags and the
	// arguments of the kernel and the gather.
	Tensors, TensorLocals, Locals []string
	// Scratch is the scratch's offset in dst (in-dst) or its size, over the
	// locals; GatherWhen the gather's condition past the flag, GatherArgs
	// its arguments.
	Scratch, GatherWhen string
	GatherArgs          []string
	// Pick chooses the kernel instance of the flags, one line each.
	Pick []string
	// Call is the launch's arguments by name, in lines, each fast divisor
	// (cuda.FastDivisors) as the uint3 the host precomputes for it.
	Call []string
	// Grid and Block are the launch over the locals.
	Grid, Block [3]string
	// Key is the dispatch key over the node (dst).
	Key string
}

// node is the launcher's name for the node, as ggml-cuda's op functions.
const node = "dst"

func familyOf(p glue.FamilyParts) (any, error) {
	f := &family{}
	return f, f.named(p, cuda.FastDivisors(p.Kernel))
}

// tensor is a node tensor the launcher names.
type tensor struct {
	name, prefix string // its local, and its GGML_TENSOR_LOCALS prefix after ne / nb
}

// named writes the launcher over named tensors: each source slot named
// src_<buffer> after the kernel buffer bound to it (its IR role), its
// GGML_TENSOR_LOCALS prefix the initials of that name.
func (f *family) named(p glue.FamilyParts, fast map[*ir.Arg]bool) error {
	tensors := map[int]tensor{-1: {node, ""}}
	slotOf := map[string]int{}
	prefixes := map[string]string{"": node}
	var slots []int
	for _, b := range p.Kernel.Buffers {
		bind, _ := p.Bind(b)
		var slot int
		if bind == nil || bind.Tensor == "scratch" || bind.Tensor == "op" {
			continue
		}
		if _, err := fmt.Sscanf(bind.Tensor, "src[%d]", &slot); err != nil {
			return fmt.Errorf("cuda: %s: buffer %s is bound to %s", p.View.Name, b.Name, bind.Tensor)
		}
		prefix := ""
		for _, w := range strings.Split(b.Name, "_") {
			prefix += w[:1]
		}
		if other, ok := prefixes[prefix]; ok {
			return fmt.Errorf("cuda: %s: buffers %s and %s have one GGML_TENSOR_LOCALS prefix, %q", p.View.Name, other, b.Name, prefix)
		}
		prefixes[prefix] = b.Name
		tensors[slot] = tensor{"src_" + b.Name, prefix}
		slotOf[b.Name] = slot
		slots = append(slots, slot)
	}
	sort.Ints(slots)
	var missing error
	name := func(fl glue.Field) string {
		t, ok := tensors[fl.Src]
		if !ok {
			missing = fmt.Errorf("cuda: %s: src[%d] is read, but no buffer of the kernel is bound to it", p.View.Name, fl.Src)
		}
		switch fl.Kind {
		case glue.FieldNe:
			return fmt.Sprintf("ne%s%d", t.prefix, fl.Dim)
		case glue.FieldStride:
			return fmt.Sprintf("nb%s%d / sizeof(float)", t.prefix, fl.Dim)
		case glue.FieldParam:
			return fmt.Sprintf("ggml_get_op_params_i32(%s, %d)", node, fl.Dim)
		}
		return t.name + " != NULL"
	}
	in := func(t glue.Term, what string) string {
		s, err := t.In(name)
		if err == nil && s == "" {
			err = fmt.Errorf("cuda: %s: %s has no term", p.View.Name, what)
		}
		if err != nil && missing == nil {
			missing = err
		}
		return s
	}
	width := 0
	for _, s := range slots {
		width = max(width, len(tensors[s].name))
	}
	for _, s := range slots {
		f.Tensors = append(f.Tensors, fmt.Sprintf("const ggml_tensor * %-*s = %s->src[%d];", width, tensors[s].name, node, s))
	}

	// the locals: the flags, then the kernel's args, then the gather's own
	type local struct {
		ctype, name, expr string
		fields            []glue.Field
	}
	var locals []local
	var terms []glue.Term
	add := func(ctype, n string, t glue.Term) {
		terms = append(terms, t)
		if e := in(t, n); e != n { // an arg GGML_TENSOR_LOCALS names already
			locals = append(locals, local{ctype, n, e, t.Fields()})
		}
	}
	for _, prm := range p.Kernel.Params {
		if prm.Derived == nil && prm.Type == ir.Bool {
			add("bool", prm.Name, p.Choices[prm.Name])
		}
	}
	declared := map[string]bool{}
	for _, a := range p.Kernel.Args {
		add(ctypes.C.Of(a.Type), a.Name, p.ArgTerms[a.Name])
		declared[a.Name] = true
	}
	for _, a := range p.Gather.Args {
		if !declared[a.Arg] {
			add(ctypes.C.Of(a.Type), a.Arg, p.GatherTerms[a.Arg])
			declared[a.Arg] = true
		}
	}
	f.Scratch = in(p.Scratch, "the scratch")
	terms = append(terms, p.Scratch)
	// one statement for consecutive locals of a type read from one tensor's
	// ne or its strides (H, n_tokens, n_seqs; sq1, sq2, sq3), as the
	// kernel's parameters group them
	group := func(l local) string {
		if len(l.fields) == 0 {
			return ""
		}
		g := fmt.Sprintf("%s %d %d", l.ctype, l.fields[0].Src, l.fields[0].Kind)
		for _, fl := range l.fields[1:] {
			if fmt.Sprintf("%s %d %d", l.ctype, fl.Src, fl.Kind) != g {
				return ""
			}
		}
		return g
	}
	for i := 0; i < len(locals); {
		j := i + 1
		for g := group(locals[i]); g != "" && j < len(locals) && group(locals[j]) == g; j++ {
		}
		var parts []string
		for _, l := range locals[i:j] {
			parts = append(parts, l.name+" = "+l.expr)
		}
		f.Locals = append(f.Locals, fmt.Sprintf("const %s %s;", locals[i].ctype, strings.Join(parts, ", ")))
		i = j
	}

	// GGML_TENSOR_LOCALS for each tensor's ne and nb that the terms read
	type use struct {
		src  int
		kind glue.FieldKind
	}
	used := map[use]bool{}
	for _, t := range terms {
		for _, fl := range t.Fields() {
			if fl.Kind == glue.FieldNe || fl.Kind == glue.FieldStride {
				used[use{fl.Src, fl.Kind}] = true
			}
		}
	}
	for _, s := range append(slots, -1) {
		t := tensors[s]
		if used[use{s, glue.FieldNe}] {
			f.TensorLocals = append(f.TensorLocals, fmt.Sprintf("GGML_TENSOR_LOCALS(int64_t, ne%s, %s, ne);", t.prefix, t.name))
		}
		if used[use{s, glue.FieldStride}] {
			f.TensorLocals = append(f.TensorLocals, fmt.Sprintf("GGML_TENSOR_LOCALS(size_t,  nb%s, %s, nb);", t.prefix, t.name))
		}
	}

	// the gather runs where the flag is set and its guard holds
	if g := p.Gather.Op.Guard; g != nil {
		if !declared[g.Arg] {
			return fmt.Errorf("cuda: %s: the gather's guard reads %s, which is no local", p.View.Name, g.Arg)
		}
		f.GatherWhen = fmt.Sprintf("%s >= %d", g.Arg, g.Min)
	}
	gather := []string{"ctx.stream()"}
	for i, b := range p.Gather.Bind {
		var slot int
		switch _, err := fmt.Sscanf(b.Tensor, "src[%d]", &slot); {
		case b.Tensor == "scratch":
			gather = append(gather, "scratch")
		case err != nil || tensors[slot].name == "":
			return fmt.Errorf("cuda: %s: the gather's buffer %s is bound to %s, no tensor of the kernel's", p.View.Name, b.Buffer, b.Tensor)
		default:
			c := ""
			if b.Access == ir.Read {
				c = "const "
			}
			gather = append(gather, fmt.Sprintf("(%s%s *) %s->data", c, ctypes.C.Of(p.Gather.Kernel.Buffers[i].Elem), tensors[slot].name))
		}
	}
	for _, a := range p.Gather.Args {
		gather = append(gather, a.Arg)
	}
	f.GatherArgs = glue.Wrap(gather, 96)

	f.Pick = instancePick(p)

	// the call: pointers to the named tensors, then the args by name
	var call []string
	for _, b := range p.Kernel.Buffers {
		bind, inPlain := p.Bind(b)
		switch {
		case bind == nil || bind.Tensor == "scratch":
			call = append(call, "scratch")
		default:
			c := ""
			if b.Access == ir.Read {
				c = "const "
			}
			t := node
			if s, ok := slotOf[b.Name]; ok {
				t = tensors[s].name
			}
			ptr := fmt.Sprintf("(%s%s *) %s->data", c, ctypes.C.Of(b.Elem), t)
			if !inPlain {
				ptr = fmt.Sprintf("%s ? %s : nullptr", p.View.Flag, ptr)
			}
			call = append(call, ptr)
		}
	}
	for _, a := range p.Kernel.Args {
		e := a.Name
		if fast[a] {
			e = "init_fastdiv_values(" + e + ")"
		}
		call = append(call, e)
	}
	f.Call = glue.Wrap(call, 100)

	key, err := p.Choices[p.View.Key].In(func(fl glue.Field) string {
		if fl.Kind == glue.FieldNe && fl.Src >= 0 {
			return fmt.Sprintf("%s->src[%d]->ne[%d]", node, fl.Src, fl.Dim)
		}
		missing = fmt.Errorf("cuda: %s: the key %s is not a source's extent", p.View.Name, p.View.Key)
		return ""
	})
	if err != nil {
		return err
	}
	f.Key = key
	for i := 0; i < 3; i++ {
		f.Grid[i], f.Block[i] = glue.CExpr(p.Kernel.Grid[i], nil), glue.CExpr(p.Kernel.Workgroup[i], nil)
	}
	return missing
}

// instancePick picks the kernel's instance over the flags: each combination,
// most flags set first, so every condition follows the ones that set more.
func instancePick(p glue.FamilyParts) []string {
	var flags []*ir.Param
	for _, prm := range p.Kernel.Params {
		if prm.Derived == nil && prm.Type == ir.Bool {
			flags = append(flags, prm)
		}
	}
	inst := func(mask int) string {
		var targs []string
		for _, prm := range p.Kernel.Params {
			switch {
			case prm.Derived != nil:
			case prm.Type == ir.Bool:
				for i, fl := range flags {
					if fl == prm {
						targs = append(targs, fmt.Sprint(mask>>(len(flags)-1-i)&1 == 1))
					}
				}
			default:
				targs = append(targs, prm.Name)
			}
		}
		return fmt.Sprintf("%s<%s>", p.View.Function, strings.Join(targs, ", "))
	}
	pick := []string{fmt.Sprintf("auto kernel = %s;", inst(0))}
	for mask := 1<<len(flags) - 1; mask > 0; mask-- {
		var set []string
		for i, fl := range flags {
			if mask>>(len(flags)-1-i)&1 == 1 {
				set = append(set, fl.Name)
			}
		}
		open := "if ("
		if mask != 1<<len(flags)-1 {
			open = "} else if ("
		}
		pick = append(pick, open+strings.Join(set, " && ")+") {", "    kernel = "+inst(mask)+";")
	}
	if len(flags) > 0 {
		pick = append(pick, "}")
	}
	return pick
}
