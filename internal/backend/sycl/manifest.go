package sycl

import (
	"github.com/kernelgen/kernelgen/internal/integration"
)

const cpp = "src/ggml-sycl/ggml-sycl.cpp"

// Manifest is SYCL's integration with a ggml tree (internal/integration):
// the commit of the series that carries its kernels and glue.
var Manifest = &integration.Manifest{
	Backend: name, Budget: 450,
	Subject: "sycl : add fused gated delta net and conv-update kernels",
	Body: `Add SYCL kernels for the four fused decode nodes (GATED_DELTA_NET with
src[6] / src[6]+src[7], SSM_CONV with src[3] / src[3]+src[4]). The ids
variants copy the non-identity source slots into a pool scratch first;
work is in order on the device queue, so the copy finishes before the
compute starts.

supports_op answers for these nodes: it accepts them only where a kernel
exists, so a node outside the kernels' table is refused instead of being
run by the plain kernel, which would ignore the slot it writes.
The kernels keep the non-fused path's arithmetic (sub-group XOR
butterfly, sycl::native::exp); a column reduces over at most 16 lanes,
so it stays within one sub-group at WARP_SIZE 16 (Intel) and 32.
`,
	Dir:     "src/ggml-sycl/",
	Glue:    glueTarget,
	Kernels: UpstreamKernels,
	Sections: []integration.Section{
		{Name: "include", File: cpp, Place: integration.After,
			Anchor: []string{`#include "ggml-sycl/gated_delta_net.hpp"`},
			Text:   integration.Text{Literal: "#include \"ggml-sycl/fused-ops.hpp\"\n"}},
		{Name: "compute_forward", File: cpp, Place: integration.Before,
			Anchor: []string{"static bool ggml_sycl_compute_forward(ggml_backend_sycl_context & ctx, struct ggml_tensor * dst) try {", "switch (dst->op) {"},
			Text:   integration.Text{Section: "upstream-compute-forward", BlankAfter: true}},
		{Name: "supports_op", File: cpp, Place: integration.Before,
			Anchor: []string{"static bool do_ggml_backend_sycl_device_supports_op(ggml_backend_dev_t dev, const ggml_tensor * op) {", "switch (op->op) {"},
			Text:   integration.Text{Section: "upstream-supports-op", BlankAfter: true}},
	},
}
