package ops

import (
	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
)

// Offsets into a whole cache (every cell's row, read through ids) are u64:
// a GDN state cache of 32 heads of 128x128 floats passes 2^32 elements at
// 8192 cells, and a u32 offset would wrap there. Offsets into what one
// dispatch owns (its n_seqs rows: scratch, the destination window, the
// inputs) stay u32, as does everything within a row.

// cacheRow is the element offset of row src of a cache whose rows are
// rowLen elements apart.
func cacheRow(src, rowLen dsl.Val) dsl.Val { return src.U64().Mul(rowLen.U64()) }

// cacheRowsArg declares the count of the cache's rows, which the ids
// index, for a kernel that checks them (style.checksIds).
func cacheRowsArg(b *dsl.Builder) dsl.Val {
	return b.Arg("n_rows", ir.U32, "rows of the cache, which the ids index")
}

// assertRow asserts that src names one of the cache's nRows rows, one
// condition each, so that a failure says which.
func assertRow(b *dsl.Builder, src, nRows dsl.Val) {
	b.Assert(src.Ge(b.I32(0)))
	b.Assert(src.Lt(nRows.I32()))
}

// along is x, an offset within a row, in base's type: added to a u64 cache
// offset it is widened first, added to a u32 one it stays as it is.
func along(base, x dsl.Val) dsl.Val {
	if base.Type() == ir.U64 {
		return x.U64()
	}
	return x
}
