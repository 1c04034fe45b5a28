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
			// The chained schedule (ops/chain.go): on the H200
			// (bench/RESULTS.md, issue #21) it costs identity ids (steady
			// decode) more than 2% at every n_seqs up to 256: op B 25 /
			// 20% at 16, 16 / 12% at 32, 5.2 / 4.7% at 128, 4.5% at 256
			// (H 32 / 48), op D 91-100% at 16 and 8-11% at 256; up to 8
			// the batched dispatches (op B from 3, op D from 2) already
			// run every ids pattern within 1.11x of identity. Where every
			// source aliases it takes op B from 1.7-2.0x identity to
			// 1.26-1.34x (0.67-0.88x today's time) from 32 sequences. So
			// none of the n_seqs llama.cpp runs (LLAMA_MAX_SEQ 256) takes
			// it; 257 keeps its kernels generated and checked until a
			// plan that costs identity ids less is measured.
			ChainFrom: 257,
			// 8 segments per chain: op B's worst ids pattern at 1.26-1.32x
			// its identity from 32 to 128 sequences, 1.28-1.34x at 256
			// (64 segments: 1.28x there; 4 is best at 16 and 32).
			ChainSplit: 8,
		}})
}
