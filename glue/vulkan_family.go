package glue

import (
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// vulkan fills the Vulkan fields of fv: one pipeline per variant of the
// family's one module (specialization constants), created from a table of
// the variants' non-bool params and indexed by the bools.
func (fv *FamilyView) vulkan(n Names, s *ops.Shared, k *ir.Kernel, compute, gather Dispatch, plainRoles map[string]bool, exprs map[string]string) error {
	var bools []*ir.Param
	fv.VkColumns = []string{fv.Key}
	for _, p := range k.Params {
		switch {
		case p.Derived != nil:
		case p.Type == ir.Bool:
			bools = append(bools, p)
			fv.VkBools = append(fv.VkBools, strings.ToLower(p.Name))
			fv.VkBoolParams = append(fv.VkBoolParams, p.Name)
		case p.Name != fv.Key:
			fv.VkColumns = append(fv.VkColumns, p.Name)
		}
	}
	if len(bools) != 2 {
		return fmt.Errorf("glue: %s: the Vulkan glue indexes pipelines by two bools, the kernel has %d", s.Name, len(bools))
	}
	for _, c := range fv.Cases {
		fv.VkRows = append(fv.VkRows, "{"+c.TemplateArgs+"}")
	}
	var spec []string
	for _, p := range n.SpecConstants(k) {
		switch {
		case p.Derived != nil:
			spec = append(spec, cexpr(p.Derived))
		case p.Type == ir.Bool:
			spec = append(spec, strings.ToLower(p.Name))
		default:
			spec = append(spec, p.Name)
		}
	}
	fv.VkSpec = strings.Join(spec, ", ")
	fv.VkPushDecl, fv.VkPushInit = pushStruct(k, exprs)
	fv.VkGatherPushDecl, fv.VkGatherPushInit = pushStruct(gather.Kernel, gatherExprs(gather))
	for _, b := range k.Buffers {
		var bind *Binding
		for i, cb := range compute.Kernel.Buffers {
			if cb.Role == b.Role {
				bind = &compute.Bind[i]
			}
		}
		if bind == nil || bind.Offset != "" {
			return fmt.Errorf("glue: %s: buffer %s binds no whole tensor", s.Name, b.Name)
		}
		e := "scratch"
		switch {
		case bind.Tensor == "op":
			e = "dst"
		case bind.Tensor != "scratch":
			e = fmt.Sprintf("ggml_vk_tensor_subbuffer(ctx, op->%s)", bind.Tensor)
			if !plainRoles[b.Role] {
				// the plain form has no such tensor: dst stands in, never read
				e = fmt.Sprintf("%s ? %s : dst", s.Flag, e)
			}
		}
		fv.VkBuffers = append(fv.VkBuffers, e)
	}
	fv.VkBuffers = wrap(fv.VkBuffers, 100)
	fv.VkBindings = len(k.Buffers)
	// the group counts over the push constants (uint32_t, as the dispatch takes them)
	pcArgs := map[string]string{}
	for _, a := range k.Args {
		pcArgs[a.Name] = "pc." + a.Name
	}
	for i, g := range k.Grid {
		fv.VkGrid[i] = strings.TrimSuffix(strings.TrimPrefix(cexprOver(g, pcArgs), "("), ")")
		if strings.Count(fv.VkGrid[i], "(") != strings.Count(fv.VkGrid[i], ")") {
			fv.VkGrid[i] = cexprOver(g, pcArgs) // the parentheses were not one pair
		}
	}
	return nil
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
		for _, l := range wrap(names, 80) {
			decl = append(decl, ctype(k.Args[i].Type)+" "+strings.TrimSuffix(l, ",")+";")
		}
		i = j
	}
	var vals []string
	for _, a := range k.Args {
		e := exprs[a.Name]
		if a.Type != ir.F32 {
			e = "(" + ctype(a.Type) + ") (" + e + ")"
		}
		vals = append(vals, e)
	}
	return decl, wrap(vals, 100)
}
