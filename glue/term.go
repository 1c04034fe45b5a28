package glue

import (
	"fmt"
	"strings"
)

// Term is a C expression over the node kept in its parts: the node's
// fields it reads (Field) and the text around them (a format with one %s
// per field). C prints it over the node (`op->src[2]->ne[1]`); a backend
// that names the node's tensors prints it over its names (In).
type Term struct {
	format string
	fields []Field
	// opaque: built from text alone (raw), printable only as C
	opaque bool
}

// Field is one value of the node a Term reads.
type Field struct {
	// Src is the source slot, -1 the node itself.
	Src int
	// Kind is FieldNe, FieldStride (nb[Dim] in elements of 4 bytes), FieldParam
	// (op param Dim as int32) or FieldSet (the source slot is set).
	Kind FieldKind
	Dim  int
}

// FieldKind says which value of the node a Field is.
type FieldKind int

const (
	FieldNe FieldKind = iota
	FieldStride
	FieldParam
	FieldSet
)

// term is a Term over fields: format has one %s per field.
func term(format string, fields ...Field) Term { return Term{format: format, fields: fields} }

// raw is a Term that is C text over the node and nothing else.
func raw(c string) Term { return Term{format: strings.ReplaceAll(c, "%", "%%"), opaque: true} }

func neT(src, dim int) Term     { return term("%s", Field{src, FieldNe, dim}) }
func strideT(src, dim int) Term { return term("%s", Field{src, FieldStride, dim}) }
func paramT(i int) Term         { return term("%s", Field{-1, FieldParam, i}) }

// C is the term over the node, `op`.
func (t Term) C() string {
	s, _ := t.In(func(f Field) string {
		tensor := "op"
		if f.Src >= 0 {
			tensor = fmt.Sprintf("op->src[%d]", f.Src)
		}
		switch f.Kind {
		case FieldNe:
			return fmt.Sprintf("%s->ne[%d]", tensor, f.Dim)
		case FieldStride:
			return fmt.Sprintf("%s->nb[%d] / 4", tensor, f.Dim)
		case FieldParam:
			return fmt.Sprintf("ggml_get_op_params_i32(op, %d)", f.Dim)
		}
		return tensor + " != NULL"
	})
	return s
}

// In prints the term with each field as name says; a raw term, whose
// fields are not known, is an error.
func (t Term) In(name func(Field) string) (string, error) {
	if t.opaque {
		c := strings.ReplaceAll(t.format, "%%", "%")
		return c, fmt.Errorf("glue: %q is C text over the node, not a term of its fields", c)
	}
	var parts []any
	for _, f := range t.fields {
		parts = append(parts, name(f))
	}
	return fmt.Sprintf(t.format, parts...), nil
}

// Fields are the node's values the term reads.
func (t Term) Fields() []Field { return t.fields }

// argTable maps kernel args to their terms over the node.
type argTable map[string]Term

// C is the table as C over the node.
func (a argTable) C() map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v.C()
	}
	return out
}
