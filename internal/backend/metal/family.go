package metal

import (
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/emit/msl"
	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/ir"
	ctypes "github.com/kernelgen/kernelgen/ir/ctype"
)

// family is what ggml-metal's upstream glue (templates/metal/upstream.h.tmpl)
// renders of a shared kernel beyond the common fields (glue.FamilyView.Own):
// the kargs structs, each buffer's id and the pipeline's name.
type family struct {
	// KargsType is the kernel's kargs struct, KargsDef its definition and
	// ArgExprs its initialiser over the node, in lines.
	KargsType, KargsDef string
	ArgExprs            []string
	// BufferIDs are the buffer id of each kernel buffer over the node.
	BufferIDs []glue.Local
	// HostNameFormat is the pipeline's function (msl.UpstreamHostName) as
	// a printf format over the template params, HostNameArgs its
	// arguments; NameFormat and NameArgs, the pipeline's name, add the
	// function constants (the pipeline getter's).
	HostNameFormat, HostNameArgs, NameFormat, NameArgs string
	// ConstantsDefine is ggml-metal-impl.h's define of the index base of the
	// kernel's function constants, ConstantSets the getter's calls that set
	// each from its param.
	ConstantsDefine string
	ConstantSets    []string
	// EncodeLocals are the variant params the encoder itself reads: its
	// flag and those the launch geometry names, directly or through a
	// derived param (the pipeline getter chooses the rest).
	EncodeLocals []glue.Local
	// GatherKargsType and GatherKargsDef are the gather's kargs struct,
	// GatherHostName its pipeline and GatherCall its buffer ids and args
	// over the node.
	GatherKargsType, GatherKargsDef, GatherHostName, GatherCall string
}

// familyAfter builds a shared kernel's Metal part (glue.Names.Family) for a
// tree whose highest function constant base is last.
func familyAfter(last lastBase) func(glue.FamilyParts) (any, error) {
	return func(p glue.FamilyParts) (any, error) { return newFamily(p, last) }
}

func newFamily(p glue.FamilyParts, last lastBase) (any, error) {
	fv, k := p.View, p.Kernel
	f := &family{KargsType: msl.KargsName(k.Name)}
	f.KargsDef = msl.Kargs(f.KargsType, k.Args)
	f.ArgExprs = glue.Wrap(argExprs(k, p.Args), 92)
	for _, b := range k.Buffers {
		bind, inPlain := p.Bind(b)
		if bind == nil {
			return nil, fmt.Errorf("metal: %s: buffer %s has no binding", fv.Name, b.Name)
		}
		id := "scratch"
		switch {
		case bind.Tensor == "op":
			id = "ggml_metal_get_buffer_id(op)"
		case bind.Tensor != "scratch":
			id = fmt.Sprintf("ggml_metal_get_buffer_id(op->%s)", bind.Tensor)
			if !inPlain {
				// the plain op has no such tensor: its own output stands in, never read
				id = fmt.Sprintf("%s ? %s : ggml_metal_get_buffer_id(op)", fv.Flag, id)
			}
		}
		f.BufferIDs = append(f.BufferIDs, glue.Local{Name: b.Name, Expr: id})
	}
	base, ok := last.base(k.Name)
	if !ok {
		return nil, fmt.Errorf("metal: %s: its function constants have no index base (constantKernels)", fv.Name)
	}
	f.ConstantsDefine = fmt.Sprintf("#define %-30s %d", msl.FunctionConstants(k), base)
	var fmts, vals, cfmts, cvals []string
	for _, q := range k.Params {
		switch {
		case q.Derived != nil:
		case q.Type == ir.Bool:
			_, index := msl.FunctionConstant(k, q)
			cfmts, cvals = append(cfmts, "_"+q.Name+"=%d"), append(cvals, "(int) "+q.Name)
			f.ConstantSets = append(f.ConstantSets, fmt.Sprintf("ggml_metal_cv_set_bool(cv, %s, %s + %d);", q.Name, msl.FunctionConstants(k), index))
		default:
			fmts, vals = append(fmts, "_"+q.Name+"%d"), append(vals, "(int) "+q.Name)
		}
	}
	f.HostNameFormat, f.HostNameArgs = fv.Function+strings.Join(fmts, ""), strings.Join(vals, ", ")
	f.NameFormat, f.NameArgs = f.HostNameFormat+strings.Join(cfmts, ""), strings.Join(append(vals, cvals...), ", ")
	f.EncodeLocals = encodeLocals(fv, k)
	gk := p.Gather.Kernel
	f.GatherKargsType = msl.KargsName(gk.Name)
	f.GatherKargsDef = msl.Kargs(f.GatherKargsType, gk.Args)
	f.GatherHostName = msl.FunctionName(gk)
	var call []string
	for _, gb := range p.Gather.Bind {
		if gb.Tensor == "scratch" {
			call = append(call, "scratch")
		} else {
			call = append(call, fmt.Sprintf("ggml_metal_get_buffer_id(op->%s)", gb.Tensor))
		}
	}
	f.GatherCall = strings.Join(append(call, argExprs(gk, p.GatherArgs)...), ", ")
	return f, nil
}

// argExprs are a kernel's args over the node, in order, each cast to its
// type (a braced initialiser does not narrow).
func argExprs(k *ir.Kernel, exprs map[string]string) []string {
	var out []string
	for _, a := range k.Args {
		out = append(out, fmt.Sprintf("(%s) (%s)", ctypes.C.Of(a.Type), exprs[a.Name]))
	}
	return out
}

// encodeLocals are fv's variant params that k's launch geometry reads
// (through its derived params too), and the flag.
func encodeLocals(fv *glue.FamilyView, k *ir.Kernel) []glue.Local {
	read := map[string]bool{fv.Flag: true}
	var geometry []ir.Expr
	geometry = append(append(geometry, k.Grid[:]...), k.Workgroup[:]...)
	for _, q := range k.Params {
		if q.Derived != nil {
			geometry = append(geometry, q.Derived)
		}
	}
	for _, e := range geometry {
		ir.WalkExpr(e, func(x ir.Expr) {
			if r, ok := x.(*ir.ParamRef); ok {
				read[r.Param.Name] = true
			}
		})
	}
	var out []glue.Local
	for _, l := range fv.AllLocals {
		if read[l.Name] {
			out = append(out, l)
		}
	}
	return out
}
