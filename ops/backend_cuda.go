package ops

import "github.com/kernelgen/kernelgen/ir"

// CUDA (the cuda backend): ggml-cuda's arithmetic and tiling.
func init() {
	declare(native{backend: "cuda", listed: 1,
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
			// The chained schedule of op B (ops/chain.go), H100, graph
			// replay, ChainSplit 8 (bench/RESULTS.md, issue #21): identity
			// ids 0.93-0.99x today's schedule at every n_seqs 4..256;
			// its worst ids pattern 0.99 / 0.99x today's worst at 16
			// sequences (H 32 / 48), 0.81 / 0.84x at 32, 0.74 / 0.79x at
			// 256, but 1.40-1.59x at 2..8, where today's gather copies two
			// to eight rows and the plan costs more than it saves.
			ChainFrom: 16,
			// 8 segments per chain: the best of 4, 8 and 64 for op B's
			// worst pattern, or within 0.07 of it, from 32 sequences.
			ChainSplit: 8,
			// Op D never: where its sources alias the chain gather's plan
			// (microseconds) outweighs its 2-30 us op (2.8-3.9x today's
			// worst pattern); its kernels stay generated for the bench.
			ConvChainFrom: 0,
		}})
}
