package emulate

// MSL's skin of the harness (internal/backend/metal owns this file).

import (
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
		launch: func(w writer, _ harness, _ ir.Instance, name, inst, args string) error {
			w("      hostemu::msl::launch(%q, kg_grid, kg_tg, [&](const hostemu::msl::pos& p) { %s(%s); });\n", name, inst, args)
			return nil
		},
	})
}
