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
			// At one sequence, S_v 128, the compute dispatch took 5.20 /
			// 5.97 us at (4, 1) against 6.22 / 6.87 at (8, 4) (H 32 /
			// 48, H100); at two, (4, 1) was 0.4 us faster at H 32 and
			// 0.4 us slower at H 48.
			GDNSmall: func(sv int) (nw, cpw, maxSeqs int, ok bool) {
				if sv != 128 {
					return 0, 0, 0, false
				}
				return 4, 1, 1, true
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
			// schedule is for 2..NS. At two sequences, since the gather's
			// rewrite, it trails gather + compute by 0.15-0.5 us with
			// identity ids and leads by 1.5-1.7 us when every source
			// aliases (H100, bench/RESULTS.md): kept there.
			GDNBatch: func(int) (nw, cpw, ns int) { return 1, 4, 8 },
			// 8, as op B's; on the H100 op D at C 8192 / 10240 took 7.6 /
			// 8.0 us at n_seqs 8 where gather + compute took 12.9 / 12.6
			// (bench/RESULTS.md).
			ConvBatch: 8,
		}})
}
