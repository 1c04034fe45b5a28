package canon

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/kernelgen/kernelgen/ir"
)

// digest names a node by its content: two nodes have the same digest exactly
// when they are built by the same operation from operands with the same
// digests. It is comparable across forms.
type digest [16]byte

// node is one canonical value, memory version or effect. Nodes are
// hash-consed within a form: equal content is one node.
type node struct {
	op   string // what computes it; see the constructors in build.go
	typ  ir.Type
	attr string  // the operation's own data: a constant's bits, a buffer name, a label
	args []*node // operands, in the operation's order
	// terms of an integer polynomial (op "poly"); args then lists its atoms.
	terms []term
	// commutes: the operation's two operands are in digest order, which is
	// not part of any projection.
	commutes bool
	id       digest
}

type hasher struct{ buf []byte }

func (h *hasher) str(s string) {
	h.buf = binary.AppendUvarint(h.buf, uint64(len(s)))
	h.buf = append(h.buf, s...)
}

func (h *hasher) dig(d digest) { h.buf = append(h.buf, d[:]...) }

func (h *hasher) num(n uint64) { h.buf = binary.AppendUvarint(h.buf, n) }

func (h *hasher) sum() digest {
	s := sha256.Sum256(h.buf)
	var d digest
	copy(d[:], s[:16])
	return d
}

// table hash-conses the nodes of one form.
type table struct {
	nodes map[digest]*node
}

func (t *table) make(op string, typ ir.Type, attr string, args ...*node) *node {
	h := &hasher{}
	h.str(op)
	h.num(uint64(typ))
	h.str(attr)
	h.num(uint64(len(args)))
	for _, a := range args {
		h.dig(a.id)
	}
	return t.intern(&node{op: op, typ: typ, attr: attr, args: args}, h.sum())
}

func (t *table) intern(n *node, id digest) *node {
	if old, ok := t.nodes[id]; ok {
		return old
	}
	n.id = id
	t.nodes[id] = n
	return n
}
