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
			// The chained schedule (ops/chain.go): on the H200, graph
			// replay (bench/RESULTS.md, issue #21), it costs identity ids
			// (steady decode) more than 2% at every n_seqs up to 256: op B
			// 19 / 14% at 16, 11 / 7% at 32, 4.7 / 3.4% at 128, 3.7 /
			// 2.7% at 256 (H 32 / 48; the plan alone is 4.2-5.0 us), op D
			// 157-175% at 16 and 20-24% at 256; where every source
			// aliases it takes op B from 1.8-2.0x identity to 1.3-1.36x
			// (0.71-0.83x today's time) from 32 sequences. So none of the
			// n_seqs llama.cpp runs (LLAMA_MAX_SEQ 256) takes it; 257
			// keeps its kernels generated and checked until a plan that
			// costs identity ids less (an early exit where nothing
			// aliases) is measured.
			ChainFrom: 257,
			// 8 segments per chain: op B's worst ids pattern at 1.30-1.36x
			// its identity from 32 to 256 sequences, the best or within
			// 0.02 of the best of 2, 4, 8 and 64 there (op D, whose
			// segments are short work, does best at 64: 1.2-1.3x).
			ChainSplit: 8,
		}})
}
