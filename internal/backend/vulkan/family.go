package vulkan

import (
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/emit/glsl"
	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/ir"
	ctypes "github.com/kernelgen/kernelgen/ir/ctype"
)

// family is what ggml-vulkan's upstream glue (templates/vulkan/
// upstream.cpp.tmpl) renders of a shared kernel beyond the common fields
// (glue.FamilyView.Own): one pipeline per variant of the family's one
// module (specialization constants), created from a table of the
// variants' non-bool params and indexed by the bools.
type family struct {
	// Spec is the specialization constants over the names of
	// FamilyView.Table and Derived (glsl.SpecConstants).
	Spec string
	// Derived are the derived params the specialization constants take,
	// each a local of the create loop over the table's names.
	Derived []derived
	// PushDecl and PushInit are the push-constant struct's member lines and
	// initialiser lines, GatherPushDecl and GatherPushInit the gather's.
	PushDecl, PushInit, GatherPushDecl, GatherPushInit []string
	// Buffers are each kernel buffer's binding over the node (dst and
	// scratch being the launcher's), in lines; Bindings their count.
	Buffers  []string
	Bindings int
	// Grid is the group counts over the push constants.
	Grid [3]string
	// Subgroup is the pipeline's required subgroup size where its kernel
	// reduces across invocations (the device's, as the plain GDN
	// pipelines ask), so that the shuffles see one size on drivers that
	// vary it; empty where nothing crosses invocations.
	Subgroup string
	// FullSubgroups, with Subgroup, says when the pipeline asks for full
	// subgroups, as the plain GDN pipelines do where they shuffle: where the
	// workgroup's x size is a multiple of the subgroup size, the only shape
	// Vulkan allows it for (a GDN column of min(S_v, 32) lanes is not on
	// 64-wide subgroups, nor at S_v 16).
	FullSubgroups string
}

// derived is a derived param as a local: its name and C expression.
type derived struct{ Name, Expr string }

// newFamily builds a shared kernel's Vulkan part (glue.Names.Family).
func newFamily(p glue.FamilyParts) (any, error) {
	fv, k := p.View, p.Kernel
	if n := len(fv.Table.Bools); n != 2 {
		return nil, fmt.Errorf("vulkan: %s: the upstream glue indexes pipelines by two bools, the kernel has %d", fv.Name, n)
	}
	f := &family{}
	var spec []string
	for _, q := range glsl.SpecConstants(k) {
		switch {
		case q.Derived != nil:
			f.Derived = append(f.Derived, derived{q.Name, glue.CExpr(q.Derived, nil)})
			spec = append(spec, q.Name)
		case q.Type == ir.Bool:
			spec = append(spec, strings.ToLower(q.Name))
		default:
			spec = append(spec, q.Name)
		}
	}
	f.Spec = strings.Join(spec, ", ")
	f.PushDecl, f.PushInit = pushStruct(k, p.Args)
	f.GatherPushDecl, f.GatherPushInit = pushStruct(p.Gather.Kernel, p.GatherArgs)
	for _, b := range k.Buffers {
		bind, inPlain := p.Bind(b)
		if bind == nil || bind.Offset != "" {
			return nil, fmt.Errorf("vulkan: %s: buffer %s binds no whole tensor", fv.Name, b.Name)
		}
		e := "scratch"
		switch {
		case bind.Tensor == "op":
			e = "dst"
		case bind.Tensor != "scratch":
			e = fmt.Sprintf("ggml_vk_tensor_subbuffer(ctx, op->%s)", bind.Tensor)
			if !inPlain {
				// the plain form has no such tensor: dst stands in, never read
				e = fmt.Sprintf("%s ? %s : dst", fv.Flag, e)
			}
		}
		f.Buffers = append(f.Buffers, e)
	}
	f.Buffers = glue.Wrap(f.Buffers, 100)
	f.Bindings = len(k.Buffers)
	if ir.HasReduce(k) {
		f.Subgroup = "device->subgroup_size"
		f.FullSubgroups = glue.CExpr(k.Workgroup[0], nil) + " % device->subgroup_size == 0"
	}
	// the group counts over the push constants (uint32_t, as the dispatch takes them)
	pcArgs := map[string]string{}
	for _, a := range k.Args {
		pcArgs[a.Name] = "pc." + a.Name
	}
	for i, g := range k.Grid {
		e := glue.CExpr(g, pcArgs)
		f.Grid[i] = strings.TrimSuffix(strings.TrimPrefix(e, "("), ")")
		if strings.Count(f.Grid[i], "(") != strings.Count(f.Grid[i], ")") {
			f.Grid[i] = e // the parentheses were not one pair
		}
	}
	return f, nil
}

// pushStruct is a kernel's push constants as struct member lines (those of
// a type together) and its initialiser over the node, in lines.
func pushStruct(k *ir.Kernel, exprs map[string]string) (decl, init []string) {
	for i := 0; i < len(k.Args); {
		j := i
		var names []string
		for ; j < len(k.Args) && k.Args[j].Type == k.Args[i].Type; j++ {
			names = append(names, k.Args[j].Name)
		}
		for _, l := range glue.Wrap(names, 80) {
			decl = append(decl, ctypes.C.Of(k.Args[i].Type)+" "+strings.TrimSuffix(l, ",")+";")
		}
		i = j
	}
	var vals []string
	for _, a := range k.Args {
		e := exprs[a.Name]
		if a.Type != ir.F32 {
			e = "(" + ctypes.C.Of(a.Type) + ") (" + e + ")"
		}
		vals = append(vals, e)
	}
	return decl, glue.Wrap(vals, 100)
}
