package ops

import (
	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
)

// Vulkan (the vulkan backend): ggml-vulkan's arithmetic, its own GDN
// tiling and its one-dispatch schedules of ops B and D.
func init() {
	declare(native{backend: "vulkan",
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
			// Tiers (1, 4, 8) from three sequences, then (1, 2, 16), (1,
			// 2, 20), (1, 2, 24), (1, 2, 32), then split by aliasing (1,
			// 2, 18, SPT 2) and (1, 2, 20, SPT 2): one warp per sequence
			// row. (1, 4, 8) on the H100 (bench/vulkan -batched, S_v 128, H 32 / 48) ran op B
			// at n_seqs 2, 4, 8 in 13.2/15.1, 15.1/18.0, 20.6/26.9 us where
			// gather + compute took 15.6/17.4, 18.7/21.7, 25.5/32.3; of the
			// shapes timed beside it (NWxCPW 1x2, 1x8, 2x2, 2x4) it had the
			// lowest sum over those six. Past 8 (H100, bench/vulkan -only
			// chain -batched, bench/RESULTS.md "one dispatch in tiers"):
			// at 16 sequences (1, 2, 16) ran identity ids in 0.88 / 0.96x
			// the time of gather + compute, (1, 4, 16) 0.90 / 0.96x; every
			// ids pattern within 1.0x of identity. From 17 a workgroup's
			// rows grow with n_seqs (bench/RESULTS.md "rows that fit
			// n_seqs", calls 21, 22 and 27; identity ids over the chained
			// schedule's, H 32 / 48): (1, 2, 20) 0.93-0.98x at 17..20,
			// where the 32-row tier idling 15 rows took 1.07 / 1.11x at
			// 17; (1, 2, 24) 0.99-1.03x at 21..24; (1, 2, 32) 0.99-1.01x
			// at 25..32. Past 32 a row runs two slots, the second staged
			// in shared memory where its source is another sequence's
			// destination: (1, 2, 18, SPT 2) 1.029 / 1.047x at 34 and
			// 1.023 / 1.037x at 36 (call 27), (1, 2, 20, SPT 2) 1.021 /
			// 1.037x at 37 and 1.014 / 1.027x at 40 (call 22), every ids
			// pattern within 1.06x of its identity, where the chained
			// schedule's worst takes 1.33-1.42x; at 33 (1, 2, 18, SPT 2)
			// took 1.035 / 1.052x, so 33 stayed chained (until the split
			// by aliasing, below). On
			// NVIDIA's driver a workgroup's threads and shared memory
			// cost occupancy more than under CUDA: (1, 2, 24, SPT 2), 768
			// threads, took 1.21-1.32x at 40..48, three slots of 16-22
			// rows 1.24-1.52x at 41..64. At one sequence a batched
			// workgroup idles all rows but one, and at two gather +
			// compute at (4, 2) leads by 0.9 / 1.2 us with identity ids
			// (H200): the schedule starts past the small-n tiling
			// (ops.Target.GDNBatchFrom: three sequences at S_v 128).
			// On the H200 (call 42) every tier held every pattern
			// within 1.07x of its identity, but at 24, 25 and 34..40
			// identity ids took 1.04-1.11x the chained schedule's
			// time (1.01-1.02x at 32, 0.83-0.98x at 3..20): they stay
			// for the bound, the chained schedule's worst being
			// 1.39-1.52x there. From 33 the tiers are Aliased: identity
			// ids run the chained compute, and only a step whose sources
			// alias runs the batched dispatch (H200, bench/RESULTS.md
			// "split by aliasing"; over the chained schedule's
			// identity, H 32 / 48): identity 1.000-1.003x where the
			// tiers alone took 1.07-1.13x at 34..40, the worst pattern
			// (1, 2, 18, SPT 2) 1.20-1.27x at 33..36, (1, 2, 20, SPT 2)
			// 1.18-1.21 / 1.22-1.25x at 37..40 (calls 60 and 62). Past
			// 40 no shape split stays within 1.3x ((1, 2, 22, SPT 2)
			// 1.64-1.88x at 41..44, call 62; (1, 2, 24, SPT 2) 1.57 /
			// 1.60x at 48, (1, 2, 32, SPT 2) 1.42-1.55x at 56..64):
			// chained.
			GDNBatch: func(int) []Batch {
				return []Batch{{NW: 1, CPW: 4, NS: 8, SPT: 1}, {NW: 1, CPW: 2, NS: 16, SPT: 1}, {NW: 1, CPW: 2, NS: 20, SPT: 1},
					{NW: 1, CPW: 2, NS: 24, SPT: 1}, {NW: 1, CPW: 2, NS: 32, SPT: 1},
					{NW: 1, CPW: 2, NS: 18, SPT: 2, Aliased: true}, {NW: 1, CPW: 2, NS: 20, SPT: 2, Aliased: true}}
			},
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
			// at 256 (call 7). It runs from 17 sequences where the
			// one-dispatch schedule does not: 33 and from 41.
			ChainFrom: 17,
			// 8 segments per chain: once the chain gather copied its cut
			// rows eight at a time, op B's worst pattern took 1.41-1.47x
			// its identity at 33 sequences and 1.23-1.32x at 256 at split
			// 8, against 1.41-1.52x and 1.32-1.45x at 4 (H200, bench/
			// RESULTS.md "cut rows in flight"; identity does not read the
			// plan). Before that change 4 was the best of 4, 8 and 64 at
			// 16 to 64 sequences on the H100 (call 6). From 96 sequences
			// 16: the worst pattern took 1.29 / 1.25x its identity at 128
			// (H 32 / 48) and 1.23 / 1.19x at 256, against 1.33 / 1.26x
			// and 1.32 / 1.23x at 8; at 96 1.33 / 1.29x against 1.35 /
			// 1.28x, and with the chain gather's plan made cheaper 1.29 /
			// 1.26x against 1.31 / 1.25x; at 64 16 took 1.34-1.40x
			// against 8's 1.29-1.38x (H200, calls 39 and 47,
			// bench/RESULTS.md "a wider chain split").
			ChainSplit: 8, ChainWideFrom: 96, ChainWideSplit: 16,
			// Op D never (as CUDA): 1.9-3.9x today's worst pattern.
			ConvChainFrom: 0,
		}})
}
