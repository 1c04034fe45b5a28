package ops

import (
	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
)

// Vulkan (the vulkan backend): ggml-vulkan's arithmetic, its own GDN
// tiling and its one-dispatch schedules of ops B and D.
func init() {
	declare(native{backend: "vulkan", listed: 3,
		style: style{order: ir.NativeOrder,
			convDot4: func(k dsl.Val) dsl.Val { return k.Eq(4) }},
		tuning: Tuning{
			// S_v 128 at (8, 4): op B's compute ran 1-7% faster than at
			// (16, 4) at every n_seqs (bench/vulkan -tilings,
			// bench/RESULTS.md).
			GDN: func(sv int) (nw, cpw int, ok bool) {
				if sv == 128 {
					return 8, 4, true
				}
				return 0, 0, false
			},
			// (4, 2) for one and two sequences, S_v 128 (H 32 / 48,
			// bench/RESULTS.md): at two the gather and the compute dispatch
			// at (4, 2) took 8.9 / 10.6 us on the H200 where the batched
			// dispatch took 9.9 / 11.8, the compute alone 6.3 / 7.9 at
			// (4, 2) against 6.5 / 8.4 at (4, 1) and 6.8 / 8.0 at (8, 4);
			// at one (4, 2) is within 0.1 us of (4, 1) there (0.2 on the
			// H100), against 0.9 / 0.7 us for (8, 4).
			GDNSmall: func(sv int) (nw, cpw, maxSeqs int, ok bool) {
				if sv != 128 {
					return 0, 0, 0, false
				}
				return 4, 2, 2, true
			},
			// (1, 4, 8), one warp of four columns per sequence. On the
			// H100 (bench/vulkan -batched, S_v 128, H 32 / 48) it ran op
			// B at n_seqs 2, 4, 8 in 13.2/15.1, 15.1/18.0, 20.6/26.9 us
			// where gather + compute took 15.6/17.4, 18.7/21.7,
			// 25.5/32.3 (bench/RESULTS.md); of the shapes timed beside it
			// (NWxCPW 1x2, 1x8, 2x2, 2x4) it had the lowest sum over those
			// six, each within 4% of the best at n_seqs 8. At n_seqs 1 a
			// batched workgroup idles all rows but one (12.2 vs 9.2 us
			// for the compute dispatch alone), and at 32 a 32-row batch
			// trailed gather + compute on the H200 (55.6 vs 51.6 us): the
			// schedule is for 2..NS; it starts past the small-n tiling
			// (ops.GDNBatchFrom: three sequences at S_v 128). At two it
			// trails gather + compute at (4, 2) by 0.9 / 1.2 us with identity
			// ids and leads it by 0.5 / 0.8 us when every source aliases
			// (H200, bench/RESULTS.md): steady decode is the common case.
			GDNBatch: func(int) (nw, cpw, ns int) { return 1, 4, 8 },
			// 8, as op B's; on the H100 op D at C 8192 / 10240 took 7.6 /
			// 8.0 us at n_seqs 8 where gather + compute took 12.9 / 12.6
			// (bench/RESULTS.md).
			ConvBatch: 8,
			// The chained schedule of op B (ops/chain.go), H100
			// (bench/RESULTS.md calls 6 and 7, issue #21): identity ids
			// +1.9 / +2.3% over today's at 16 sequences (H 32 / 48) in
			// one call, -2.7 / -1.3% in the other; +1.6 / +1.0% and -1.3 /
			// -0.8% at 32; within 1% from 64. Its worst ids pattern 0.94 /
			// 0.90x today's worst at 16, 0.77 / 0.74x at 32, 0.62 / 0.58x
			// at 256 (call 7). From 32, where both calls agree identity
			// pays at most 1.6%.
			ChainFrom: 32,
			// 4 segments per chain: the best of 4, 8 and 64 for op B's
			// worst pattern at 16 to 64 sequences (call 6), within 0.07 of
			// 8 above.
			ChainSplit: 4,
			// Op D never (as CUDA): 1.9-3.9x today's worst pattern.
			ConvChainFrom: 0,
		}})
}
