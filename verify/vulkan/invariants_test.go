package vulkan

import (
	"fmt"
	"testing"

	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/verify/cases"
)

// The native contract's promise (issue 5): on one driver, a generated fused
// kernel gives the bits of the generated non-fused path on the same inputs.
// Each check runs the fused op and its non-fused counterpart in one job, on
// buffers of their own (cases.AddUnfused lists the pairs), and compares bit
// for bit, under native-vulkan and under portable.
func TestFusedMatchesUnfused(t *testing.T) {
	e := setup(t)
	for _, fused := range cases.FusedOps {
		for _, a := range contracts {
			for _, v := range ops.VariantsOf(fused) {
				if v.Values["SILU"] == 1 {
					continue // ggml applies SiLU as a separate op after ssm_conv
				}
				name := fmt.Sprintf("%s@%s[%s]", fused, a, v)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					c, err := cases.Random(fused, a, seed("fused", name), cases.Small, &v)
					if err != nil {
						t.Fatal(err)
					}
					check, err := cases.AddUnfused(c)
					if err != nil {
						t.Fatal(err)
					}
					got := e.run(t, c)
					if err := check(got); err != nil {
						t.Fatalf("%s: fused and non-fused differ: %v", c.Name, err)
					}
					// The fused op also matches the reference (the extra
					// buffers are not in Expected).
					if why := e.compare(t, c, got); why != "" {
						t.Log(why)
					}
				})
			}
		}
	}
}
