package cuda_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/kernelgen/kernelgen/emit/cuda"
	backend "github.com/kernelgen/kernelgen/internal/backend/cuda"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/tools/ptx"
)

// Every CUDA variant of every op, under both CUDA contracts, compiles to
// PTX for sm_90 (the H100) with clang-22, which needs no CUDA SDK. Missing,
// the test skips locally and fails where KERNELGEN_REQUIRE_TOOLS is set (CI).
// Ops CUDA does not build (Vulkan's batched op B) are not emitted for it.
func TestEveryVariantCompilesToPTX(t *testing.T) {
	if _, err := ops.Variants(); err != nil {
		t.Fatal(err)
	}
	for _, op := range ops.All() {
		op := op
		if len(ops.VariantsFor(op.Name, "cuda")) == 0 {
			continue
		}
		t.Run(op.Name, func(t *testing.T) {
			t.Parallel()
			var ks []*ir.Kernel
			for _, a := range op.Ariths() {
				if a == ir.Portable || a == ir.Native("cuda") {
					k, err := op.Kernel(a)
					if err != nil {
						t.Fatal(err)
					}
					ks = append(ks, k)
				}
			}
			src, err := cuda.Emit(op.Name, op.Summary, ks)
			if err != nil {
				t.Fatal(err)
			}
			n, err := backend.PTX(context.Background(), op, src, ks)
			if errors.Is(err, ptx.ErrNoClang) && os.Getenv("KERNELGEN_REQUIRE_TOOLS") == "" {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				t.Fatal("no kernels in the PTX")
			}
		})
	}
}
