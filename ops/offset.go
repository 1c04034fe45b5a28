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

// along is x, an offset within a row, in base's type: added to a u64 cache
// offset it is widened first, added to a u32 one it stays as it is.
func along(base, x dsl.Val) dsl.Val {
	if base.Type() == ir.U64 {
		return x.U64()
	}
	return x
}
