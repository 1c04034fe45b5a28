package emulate

// CUDA's skin of the harness (internal/backend/cuda owns this file).

import (
	"strings"

	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

func init() {
	declare(hostemu.CUDA, skin{
		ext:      ".cuh",
		emit:     cuda.Emit,
		function: cuda.KernelName,
		prelude:  cudaPrelude,
		setup: func(w writer, _ *ir.Kernel) []string {
			w("    const dim3 kg_grid(kg_g[0], kg_g[1], kg_g[2]), kg_block(kg_w[0], kg_w[1], kg_w[2]);\n")
			return nil
		},
		launch: cudaLaunch,
		arg:    cudaArg,
	})
}

// cudaArg passes an upstream kernel's fast divisor (cuda.FastDivisors) as
// its launcher does, through init_fastdiv_values, which the source's
// caller provides as ggml-cuda's common.cuh does: a CUDA source the caller
// emitted (SourceProgram) is the ops form's text (cuda.UpstreamSource).
func cudaArg(h harness, k *ir.Kernel, a *ir.Arg, v string) string {
	if !h.emitted && cuda.FastDivisors(k)[a] {
		return "init_fastdiv_values(" + v + ")"
	}
	return v
}

// cudaPrelude defines the geometry check: an emitted source's geometry
// helpers (cuda.GridName) are checked, each launch, against the geometry
// the job gives, which the Go side evaluated from the IR.
func cudaPrelude(w writer, h harness) {
	if !h.emitted {
		return
	}
	w("static void kg_check_geometry(const char* helper, dim3 got, const uint32_t want[3]) {\n")
	w("  if (got.x != want[0] || got.y != want[1] || got.z != want[2])\n")
	w("    hostemu::detail::fail(\"%%s gives (%%u, %%u, %%u), but the IR's geometry is (%%u, %%u, %%u)\", helper, got.x, got.y, got.z, want[0], want[1], want[2]);\n")
	w("}\n")
}

func cudaLaunch(w writer, h harness, in ir.Instance, name, inst, args string) error {
	k := in.Kernel
	if h.emitted {
		targs := templateArgs(in)
		for _, g := range []struct {
			fn   string
			args []*ir.Arg
			want string
		}{{cuda.GridName(k), cuda.GridArgs(k), "kg_g"}, {cuda.BlockName(k), cuda.BlockArgs(k), "kg_w"}} {
			var as []string
			for _, a := range g.args {
				as = append(as, "a_"+a.Name)
			}
			w("      kg_check_geometry(%q, %s%s(%s), %s);\n", g.fn+targs, g.fn, targs, strings.Join(as, ", "), g.want)
		}
	}
	w("      hostemu::cuda::launch(%q, kg_grid, kg_block, [&] { %s(%s); });\n", name, inst, args)
	return nil
}
