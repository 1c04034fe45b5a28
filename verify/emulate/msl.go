package emulate

// MSL's skin of the harness (internal/backend/metal owns this file).

import (
	"strings"

	"github.com/kernelgen/kernelgen/emit/msl"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

func init() {
	declare(hostemu.MSL, skin{
		ext:        ".metal",
		emit:       msl.Emit,
		function:   msl.FunctionName,
		argsStruct: msl.KargsName,
		setup: func(w writer, _ *ir.Kernel) []string {
			w("    const uint3 kg_grid(kg_g[0], kg_g[1], kg_g[2]), kg_tg(kg_w[0], kg_w[1], kg_w[2]);\n")
			return []string{"p.tgpig", "p.tpitg", "p.ntg", "p.tpsg"}
		},
		launch: func(w writer, h harness, in ir.Instance, name, inst, args string) error {
			if h.upstream {
				// the bools are function constants: globals here (the skin
				// ignores the attribute), set before the launch as the
				// pipeline's constant values would be
				for _, q := range in.Kernel.Params {
					if q.Type == ir.Bool && q.Derived == nil {
						fc, _ := msl.FunctionConstant(in.Kernel, q)
						w("      %s = %s;\n", fc, in.Bare(q))
					}
				}
				inst = h.fn(in.Kernel)
				if targs := msl.UpstreamTemplateArgs(in); len(targs) > 0 {
					inst += "<" + strings.Join(targs, ", ") + ">"
				}
			}
			w("      hostemu::msl::launch(%q, kg_grid, kg_tg, [&](const hostemu::msl::pos& p) { %s(%s); });\n", name, inst, args)
			return nil
		},
	})
}
