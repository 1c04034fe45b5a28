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
			// The chained schedule where every source may alias: to be
			// measured (issue #21).
			ChainFrom: 16,
		}})
}
