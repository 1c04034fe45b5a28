package cuda_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/backend/backendtest"
	backend "github.com/kernelgen/kernelgen/internal/backend/cuda"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/tools/ptx"
)

// Every CUDA variant of every op, under both CUDA contracts, in the headers
// build writes, compiles to PTX for sm_90 (the H100) with clang-22, which
// needs no CUDA SDK. Missing, the test skips locally and fails where
// KERNELGEN_REQUIRE_TOOLS is set (CI). Ops CUDA does not build (Vulkan's
// batched op B) are not written for it.
func TestEveryVariantCompilesToPTX(t *testing.T) {
	if _, err := ops.Variants(); err != nil {
		t.Fatal(err)
	}
	// The headers as build writes them.
	written := map[string][]byte{}
	for _, f := range backendtest.Written(t, backend.Backend) {
		if strings.HasSuffix(f.Path, ".cuh") && f.Op != "" {
			written[f.Op] = f.Data
		}
	}
	for _, op := range ops.All() {
		op := op
		if len(ops.TargetOf("cuda").Variants(op.Name)) == 0 {
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
			src, ok := written[op.Name]
			if !ok {
				t.Fatalf("no %s.cuh was written", op.Name)
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
