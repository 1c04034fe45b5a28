package ops

import "github.com/kernelgen/kernelgen/ir"

// CUDA (the cuda backend): ggml-cuda's arithmetic and tiling.
func init() {
	declare(native{backend: "cuda",
		// ggml-cuda: the gate multiplies the reduced dot of the undecayed
		// state; the plain conv adds its zero bias.
		style: style{gateAfterReduce: true, order: ir.Butterfly, convZero: true},
		tuning: Tuning{
			// At one sequence, S_v 128: op B replayed from a CUDA graph
			// on the H100 took 3.13 / 3.86 us at (8, 2) against 4.11 /
			// 4.99 at (16, 4) (H 32 / 48); at two sequences the two were
			// within 0.4 us of each other (bench/RESULTS.md, issue #21).
			GDNSmall: func(sv int) (nw, cpw, maxSeqs int, ok bool) {
				if sv != 128 {
					return 0, 0, 0, false
				}
				return 8, 2, 1, true
			},
			// Op B in one dispatch (gated_delta_net_inplace_ids_batched)
			// from 5 to 16 sequences: tiers (1, 4, 8) and (1, 4, 16). On
			// the H100, graph replay (bench/RESULTS.md "one dispatch in
			// tiers"), identity ids at 8 / 12 / 16 sequences took 0.86 /
			// 0.94 / 0.96x the time of gather + compute at H 32 (0.90 /
			// 0.98 / 1.00x at H 48), every ids pattern within 1.01x of
			// that, where gather + compute's worst took 1.40-1.85x; at 5
			// to 7 0.85-0.94x. At three and four it took 1.08-1.15x and
			// 1.00-1.07x, where gather + compute's worst pattern stays
			// within 1.30x: from five. From 17 to 32 a row of threads
			// runs two slots, the second staged in shared memory where its
			// source is another sequence's destination (bench/RESULTS.md
			// "rows that fit n_seqs", calls 21 and 22): identity ids took
			// 1.002-1.035x the chained schedule's time at 17..20 (1, 4,
			// 10, SPT 2), 1.019-1.030x at 21..24 (1, 4, 12, SPT 2) and
			// 1.033-1.047x at 25..32 (1, 4, 16, SPT 2; (1, 4, 14, SPT 2)
			// no better), every ids pattern within 1.07x of its own
			// identity, where the chained schedule's worst takes
			// 1.60-1.77x. Three slots of 8 cost more (1.033-1.087x at
			// 17..24: a row runs three sequences one after another), and
			// so do workgroups past 384 threads, whose registers the
			// occupancy bound cuts to 48 or fewer ((1, 4, 20), (1, 4, 20,
			// SPT 2): 1.04-1.09x). From 33 every shape that fits 48 KiB
			// of shared memory costs 6% or more ((1, 2, 20, SPT 2) 1.059 /
			// 1.073x at 40, (1, 2, 16, SPT 3) 1.11-1.15x at 40..48).
			//
			// From 33 to 40 the tiers are Aliased: identity ids run the
			// chained compute, and only a step whose sources alias runs
			// the batched dispatch (H200, graph replay, bench/RESULTS.md
			// "split by aliasing", calls 59 and 61; over the chained
			// schedule's identity, H 32 / 48): identity 0.999-1.005x,
			// the worst pattern (1, 2, 18, SPT 2) 1.22-1.27x at 33..36,
			// (1, 2, 20, SPT 2) 1.21-1.25x at 37..40, where the chained
			// schedule's worst takes 1.34-1.46x. From 41 the block schedule
			// (GDNBlocks, below) bounds every pattern lower than the split
			// tiers did there ((1, 2, 22, SPT 2) 1.28-1.33x at 41..44,
			// (1, 2, 16, SPT 3) 1.25-1.30x at 45..48).
			GDNBatch: func(int) []Batch {
				return []Batch{{NW: 1, CPW: 4, NS: 8, SPT: 1}, {NW: 1, CPW: 4, NS: 16, SPT: 1},
					{NW: 1, CPW: 4, NS: 10, SPT: 2}, {NW: 1, CPW: 4, NS: 12, SPT: 2}, {NW: 1, CPW: 4, NS: 16, SPT: 2},
					{NW: 1, CPW: 2, NS: 18, SPT: 2, Aliased: true}, {NW: 1, CPW: 2, NS: 20, SPT: 2, Aliased: true}}
			},
			GDNBatchFrom: 5,
			// The chained schedule of op B (ops/chain.go), H100, graph
			// replay, ChainSplit 8 (bench/RESULTS.md call 7, issue #21):
			// identity ids 0.91-0.996x today's schedule at n_seqs 4..256;
			// its worst ids pattern 1.02 / 1.00x today's worst at 16
			// sequences (H 32 / 48), 0.82 / 0.80x at 32, 0.65 / 0.62x at
			// 256, but 1.43-1.65x at 2..8, where today's gather copies two
			// to eight rows and the plan costs more than it saves. It
			// runs from 17 sequences where the one-dispatch schedule does
			// not: from 33.
			ChainFrom: 17,
			// 8 segments per chain: the better of 4 and 8 for op B's worst
			// pattern from 64 sequences (4 by 0.03-0.09 at 32; call 6: 8
			// within 0.07 of the best of 4, 8 and 64 from 32). Still so
			// with the chain gather's cut rows in flight (H200, call 31:
			// 16 better only at 128..256 with H 32). From 256 sequences 16:
			// the worst pattern took 1.23 / 1.22x its identity (H 32 / 48)
			// against 1.28 / 1.22x at 8 (H200, call 39; 1.23 against 1.28
			// in call 31 too); at 128 16 took 1.29 / 1.25x against 8's
			// 1.29 / 1.22x, and 8 led below (bench/RESULTS.md "a wider
			// chain split").
			ChainSplit: 8, ChainWideFrom: 256, ChainWideSplit: 16,
			// Op D never: where its sources alias the chain gather's plan
			// (microseconds) outweighs its 2-37 us op (2.3-4.1x today's
			// worst pattern); its kernels stay generated for the bench.
			ConvChainFrom: 0,
			// Op B's chained schedule is the block schedule (docs/ops.md#blocks,
			// bench/RESULTS.md "the block schedule", H200, graph replay, call
			// 71; over the chained schedule's identity, H 32 / 48): identity
			// 1.003-1.011x at 41..48, 1.015 / 1.016x at 49 (a fourth block
			// holding one sequence), 0.999-1.007x from 56; the worst ids
			// pattern 1.26 / 1.24x at 41, 1.18-1.23x at 44..48, 1.33x at 49,
			// 1.14-1.23x at 56..256, where the chained schedule's took
			// 1.29-1.39x at 41..64 and 1.17-1.28x at 96..256, and the split
			// tiers 1.28-1.33x at 41..44. Below 41 the split tiers stay: there
			// the block schedule's worst took 1.25-1.41x. On NVIDIA's Vulkan
			// driver its identity took 1.09-1.22x the chained schedule's at
			// every tiling timed (call 70): not there.
			GDNBlocks: true,
		}})
}
