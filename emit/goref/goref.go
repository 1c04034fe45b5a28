// Package goref lowers IR kernels to Go: the executable CPU reference every
// backend is checked against. The generated code runs each workgroup's
// threads in lockstep between collectives: a barrier-free stretch of
// statements runs for thread 0, 1, ... in turn (a valid schedule under the
// IR's memory model), reductions combine per-thread values with the IR's
// butterfly, and every f32 operation rounds as the IR says (products are
// converted explicitly so Go never fuses them; FMA is exact, from rt).
package goref

import (
	"bytes"
	"fmt"
	"go/token"
	"sort"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/kernelgen/kernelgen/ir"
)

const rtPath = "github.com/kernelgen/kernelgen/emit/goref/rt"

// arithFree: the op's one kernel is marked arith-free in its IR, and every
// contract uses it.
func arithFree(op ir.Unit) bool { return len(op.Kernels) == 1 && op.Kernels[0].ArithFree }

// Emit returns the Go source of one op's kernels (one per contract, sharing
// one interface): exported Params, Args and Buffers types, one function per
// contract, and a dispatcher by contract name (an arith-free kernel's over
// the unit's Contracts).
func Emit(op ir.Unit) ([]byte, error) {
	ariths := op.Contracts
	if len(op.Kernels) == 0 {
		return nil, fmt.Errorf("goref: op %s has no kernels", op.Op)
	}
	first := op.Kernels[0]
	for _, k := range op.Kernels[1:] {
		if err := sameInterface(first, k); err != nil {
			return nil, fmt.Errorf("goref: op %s: %v", op.Op, err)
		}
	}
	f := jen.NewFile("goref")
	typ := goName(op.Op)
	declareTypes(f, typ, first)

	var cases []jen.Code
	for _, k := range op.Kernels {
		fn := typ + goName(strings.ReplaceAll(k.Arith.String(), "-", "_"))
		if arithFree(op) {
			fn = lowerFirst(typ)
		}
		body, err := lowerKernel(k, typ)
		if err != nil {
			return nil, fmt.Errorf("goref: %s: %v", k.ID(), err)
		}
		f.Commentf("%s runs %s.", fn, k.ID())
		f.Func().Id(fn).Params(
			jen.Id("kgP").Id(typ+"Params"),
			jen.Id("kgA").Id(typ+"Args"),
			jen.Id("kgB").Id(typ+"Buffers"),
		).Error().Block(body...)
		if !arithFree(op) {
			cases = append(cases, jen.Case(jen.Lit(k.Arith.String())).Block(
				jen.Return(jen.Id(fn).Call(jen.Id("p"), jen.Id("a"), jen.Id("b")))))
		}
	}
	doc := fmt.Sprintf("%s runs %s under the named contract", typ, op.Op)
	if arithFree(op) {
		doc = fmt.Sprintf("%s runs %s, a pure copy that every contract shares", typ, op.Op)
		cases = append(cases, jen.Case(arithLits(ariths)...).Block(
			jen.Return(jen.Id(lowerFirst(typ)).Call(jen.Id("p"), jen.Id("a"), jen.Id("b")))))
	}
	f.Comment(doc + ". Buffers are modified in place.")
	cases = append(cases, jen.Default().Block(jen.Return(jen.Qual("fmt", "Errorf").Call(
		jen.Lit(op.Op+": unknown contract %q; valid: "+arithList(ariths)), jen.Id("arith")))))
	f.Func().Id(typ).Params(
		jen.Id("arith").String(),
		jen.Id("p").Id(typ+"Params"),
		jen.Id("a").Id(typ+"Args"),
		jen.Id("b").Id(typ+"Buffers"),
	).Error().Block(jen.Switch(jen.Id("arith")).Block(cases...))

	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("goref: %s: %v", op.Op, err)
	}
	return buf.Bytes(), nil
}

func arithLits(ariths []ir.Arith) []jen.Code {
	var out []jen.Code
	for _, a := range ariths {
		out = append(out, jen.Lit(a.String()))
	}
	return out
}

func arithList(ariths []ir.Arith) string {
	var s []string
	for _, a := range ariths {
		s = append(s, a.String())
	}
	return strings.Join(s, ", ")
}

func sameInterface(a, b *ir.Kernel) error {
	sig := func(k *ir.Kernel) string {
		var s strings.Builder
		for _, p := range k.Params {
			fmt.Fprintf(&s, "param %s %s %v|", p.Name, p.Type, p.Derived != nil)
		}
		for _, x := range k.Args {
			fmt.Fprintf(&s, "arg %s %s|", x.Name, x.Type)
		}
		for _, x := range k.Buffers {
			fmt.Fprintf(&s, "buf %s %s %s|", x.Name, x.Elem, x.Access)
		}
		return s.String()
	}
	if sig(a) != sig(b) {
		return fmt.Errorf("%s and %s differ in params, args or buffers", a.ID(), b.ID())
	}
	return nil
}

func goType(t ir.Type) string {
	switch t {
	case ir.F32:
		return "float32"
	case ir.I32:
		return "int32"
	case ir.U32:
		return "uint32"
	case ir.U64:
		return "uint64"
	case ir.Bool:
		return "bool"
	case ir.BF16:
		return "uint16"
	}
	return "invalid"
}

func declareTypes(f *jen.File, typ string, k *ir.Kernel) {
	var params, args, bufs []jen.Code
	for _, p := range k.Params {
		if p.Derived != nil {
			continue
		}
		c := jen.Id(goName(p.Name)).Id(goType(p.Type))
		if p.Domain != nil {
			c.Comment(fmt.Sprintf("%s in %v", p.Name, p.Domain))
		} else {
			c.Comment(p.Name)
		}
		params = append(params, c)
	}
	for _, a := range k.Args {
		args = append(args, jen.Id(goName(a.Name)).Id(goType(a.Type)).Comment(a.Name+": "+a.Doc))
	}
	for _, b := range k.Buffers {
		bufs = append(bufs, jen.Id(goName(b.Name)).Index().Id(goType(b.Elem)).Comment(fmt.Sprintf("%s (%s, %s): %s", b.Name, b.Role, b.Access, b.Doc)))
	}
	f.Commentf("%sParams are the compile-time parameters of a variant.", typ)
	f.Type().Id(typ + "Params").Struct(params...)
	f.Commentf("%sArgs are the runtime scalar arguments.", typ)
	f.Type().Id(typ + "Args").Struct(args...)
	f.Commentf("%sBuffers are the bound buffers; indices are in elements.", typ)
	f.Type().Id(typ + "Buffers").Struct(bufs...)
}

// goName turns snake_case (or S_v) into an exported Go name.
func goName(s string) string {
	var b strings.Builder
	for _, part := range strings.Split(s, "_") {
		if part == "" {
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }

// reservedGo are names an IR identifier must not shadow in generated code.
var reservedGo = map[string]bool{
	"rt": true, "fmt": true, "math": true, "len": true, "cap": true, "make": true, "new": true,
	"copy": true, "append": true, "min": true, "max": true, "int": true, "uint32": true, "uint64": true,
	"int32": true, "float32": true, "float64": true, "bool": true, "true": true, "false": true,
	"nil": true, "panic": true, "error": true, "string": true, "byte": true, "uint16": true,
	"iota": true, "clear": true, "close": true, "complex": true, "real": true, "imag": true,
	"print": true, "println": true, "recover": true, "delete": true, "any": true, "uint": true,
}

// sortedKeys is used to make anything derived from maps deterministic.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func safeIdent(name string) (string, error) {
	if strings.HasPrefix(name, "kg") {
		return "", fmt.Errorf("name %s uses the prefix kg, reserved for generated helpers", name)
	}
	if token.IsKeyword(name) || reservedGo[name] {
		return name + "_", nil
	}
	return name, nil
}
