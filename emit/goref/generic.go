package goref

import (
	"bytes"
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/kernelgen/kernelgen/ir"
)

// EmitRegistry returns registry.go: for every op, an adapter from generic
// maps (params and args by IR name, args as 32-bit patterns, buffers as
// typed slices) to the op's typed entry point, and the table Run of them, so
// verification code can drive any kernel by name.
func EmitRegistry(opsList []ir.Unit) ([]byte, error) {
	f := jen.NewFile("goref")
	var entries []jen.Code
	for _, op := range opsList {
		k := op.Kernels[0]
		typ := goName(op.Op)
		fn := "run" + typ
		var body []jen.Code
		body = append(body, jen.Var().Id("p").Id(typ+"Params"), jen.Var().Id("a").Id(typ+"Args"), jen.Var().Id("b").Id(typ+"Buffers"))
		for _, x := range k.Params {
			if x.Derived != nil {
				continue
			}
			get := jen.List(jen.Id("v"), jen.Id("ok")).Op(":=").Id("params").Index(jen.Lit(x.Name))
			missing := jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(op.Op + ": param " + x.Name + " not set"))))
			var set jen.Code
			if x.Type == ir.Bool {
				set = jen.Id("p").Dot(goName(x.Name)).Op("=").Id("v").Op("!=").Lit(0)
			} else {
				set = jen.Id("p").Dot(goName(x.Name)).Op("=").Id(goType(x.Type)).Call(jen.Id("v"))
			}
			body = append(body, jen.Block(get, missing, set))
		}
		for _, x := range k.Args {
			get := jen.List(jen.Id("v"), jen.Id("ok")).Op(":=").Id("args").Index(jen.Lit(x.Name))
			missing := jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(op.Op + ": arg " + x.Name + " not set"))))
			var val jen.Code
			switch x.Type {
			case ir.F32:
				val = jen.Qual(rtPath, "BitsToF32").Call(jen.Id("v"))
			case ir.I32:
				val = jen.Int32().Call(jen.Id("v"))
			default:
				val = jen.Id("v")
			}
			body = append(body, jen.Block(get, missing, jen.Id("a").Dot(goName(x.Name)).Op("=").Add(val)))
		}
		for _, x := range k.Buffers {
			t := goType(x.Elem)
			body = append(body, jen.Block(
				jen.List(jen.Id("v"), jen.Id("ok")).Op(":=").Id("bufs").Index(jen.Lit(x.Name)).Assert(jen.Index().Id(t)),
				jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(op.Op+": buffer "+x.Name+" must be a []"+t+", got %T"), jen.Id("bufs").Index(jen.Lit(x.Name))))),
				jen.Id("b").Dot(goName(x.Name)).Op("=").Id("v"),
			))
		}
		body = append(body, jen.Return(jen.Id(typ).Call(jen.Id("arith"), jen.Id("p"), jen.Id("a"), jen.Id("b"))))
		f.Func().Id(fn).Params(
			jen.Id("arith").String(),
			jen.Id("params").Map(jen.String()).Int64(),
			jen.Id("args").Map(jen.String()).Uint32(),
			jen.Id("bufs").Map(jen.String()).Any(),
		).Error().Block(body...)
		entries = append(entries, jen.Lit(op.Op).Op(":").Id(fn))
	}
	f.Comment("Run maps an op name to an entry point taking the contract name, params and")
	f.Comment("args by IR name (args as 32-bit patterns; f32 as its bits) and buffers by IR")
	f.Comment("name ([]float32, []int32 or []uint16 for bf16). Buffers are modified in place.")
	f.Var().Id("Run").Op("=").Map(jen.String()).Func().Params(jen.String(), jen.Map(jen.String()).Int64(), jen.Map(jen.String()).Uint32(), jen.Map(jen.String()).Any()).Error().Values(jen.DictFunc(func(d jen.Dict) {
		for _, op := range opsList {
			d[jen.Lit(op.Op)] = jen.Id("run" + goName(op.Op))
		}
	}))
	_ = entries
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("goref: registry: %v", err)
	}
	return buf.Bytes(), nil
}
