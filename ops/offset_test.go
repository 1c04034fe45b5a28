package ops

import (
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/verify/interp"
)

// A cache offset past 2^32 elements comes out exact: row src of a cache of
// row_len-element rows, plus an offset within the row, built as the ops
// build theirs (cacheRow, along) and run by the interpreter. Offsets are
// read back as their high and low 32 bits.
func TestCacheOffsetPast32Bits(t *testing.T) {
	cases := []struct {
		src            int32
		rowLen, within uint32
	}{
		{5, 1 << 30, 7},                     // 5 GiB-elements in
		{8191, 32 * 128 * 128, 128*128 - 1}, // GDN: the last head's last element of cell 8191 (H 32, S_v 128)
		{3, 1 << 20, 0},                     // below 2^32: unchanged
	}
	for _, c := range cases {
		b := dsl.New("offset_probe", ir.Portable)
		rowLen := b.Arg("row_len", ir.U32, "elements per row")
		within := b.Arg("within", ir.U32, "offset inside the row")
		ids := b.Buffer("ids", ir.I32, ir.Read, "src0", "source slot")
		out := b.Buffer("out", ir.U32, ir.Write, "dst", "the offset: high bits, low bits")
		b.Workgroup(1, 1, 1)
		b.Grid(1, 1, 1)
		row := b.Let("row", cacheRow(b.Let("src", ids.Load(0)), rowLen))
		off := b.Let("off", row.Add(along(row, within)))
		out.Store(0, off.Shr(32).U32())
		out.Store(1, off.U32())
		k, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		p, err := interp.Compile(k)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]uint32, 2)
		if err := p.Run(nil, map[string]uint32{"row_len": c.rowLen, "within": c.within}, map[string]any{"ids": []int32{c.src}, "out": got}); err != nil {
			t.Fatal(err)
		}
		want := uint64(c.src)*uint64(c.rowLen) + uint64(c.within)
		if g := uint64(got[0])<<32 | uint64(got[1]); g != want {
			t.Errorf("cell %d, row_len %d, +%d: offset %d, want %d (a 32-bit offset wraps to %d)", c.src, c.rowLen, c.within, g, want, uint32(want))
		}
	}
}

// Every offset the ops build from a source slot scaled by a row stride (a
// row of the whole cache) is u64, in every kernel that reads through ids.
// Offsets into the destination window ((src - rs_head) * stride) index
// what one dispatch owns and stay u32.
func TestCacheOffsetsAreWide(t *testing.T) {
	for _, op := range All() {
		if !strings.Contains(op.Name, "_ids") && op.Name != GatherOp && !strings.Contains(op.Name, "_gather") {
			continue
		}
		for _, a := range op.Ariths() {
			k, err := op.Kernel(a)
			if err != nil {
				t.Fatal(err)
			}
			rows := 0
			ir.WalkStmts(k.Body, func(s ir.Stmt) {
				for _, e := range ir.StmtExprs(s) {
					ir.WalkExpr(e, func(x ir.Expr) {
						m, ok := x.(*ir.Binary)
						if !ok || m.Op != ir.Mul || !scaledSource(m.X) {
							return
						}
						rows++
						if m.Type() != ir.U64 {
							t.Errorf("%s: %s: cache row offset %s is %s; a cache may hold 2^32 elements or more", k.ID(), m.At, ir.ExprString(m), m.Type())
						}
					})
				}
			})
			if rows == 0 {
				t.Errorf("%s: no cache row offset found: the check no longer sees how the op reads the cache", k.ID())
			}
		}
	}
}

// scaledSource: e is the ids value (a variable loaded from ids) converted
// to an integer type, as it is before being scaled into a row offset.
func scaledSource(e ir.Expr) bool {
	u, ok := e.(*ir.Unary)
	if !ok || u.Op != ir.Convert {
		return false
	}
	v, ok := u.X.(*ir.VarRef)
	return ok && strings.HasPrefix(v.Var.Name, "src")
}
