package vulkan

import (
	"context"
	"fmt"
	"testing"
	"time"

	backendvulkan "github.com/kernelgen/kernelgen/internal/backend/vulkan"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/tools/spvbuild"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/vkrun"
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
					check, err := cases.AddUnfused(c, "vulkan")
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

// The same promise for the shaders upstream gets (internal/upstream): ops
// A-D (SILU off) on the upstream modules, their gathers too, against the
// generated non-fused path on the same inputs, bit for bit, native only
// (upstream carries no other contract).
func TestUpstreamFusedMatchesUnfused(t *testing.T) {
	e := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// through e.comp, so a GPU host without glslang runs from the cache
	byOp, err := backendvulkan.UpstreamShaders(func(units []spvbuild.Unit) ([][]byte, error) { return e.comp.Build(ctx, units) })
	if err != nil {
		t.Fatal(err)
	}
	a := ir.Native("vulkan")
	n := 0
	for _, fused := range []string{"gated_delta_net_inplace", "gated_delta_net_inplace_ids", "ssm_conv_update_inplace", "ssm_conv_update_inplace_ids"} {
		for _, v := range ops.TargetOf("vulkan").Variants(fused) {
			if v.Values["SILU"] == 1 {
				continue // ggml applies SiLU as a separate op after ssm_conv
			}
			name := fmt.Sprintf("upstream %s@%s[%s]", fused, a, v)
			c, err := cases.Random(fused, a, seed("fused", name), cases.Small, &v)
			if err != nil {
				t.Fatal(err)
			}
			check, err := cases.AddUnfused(c, "vulkan")
			if err != nil {
				t.Fatal(err)
			}
			// the fused op's launches (and its gather's) on the upstream
			// shaders, the non-fused path's on the generated ones
			var job vkrun.Job
			index := map[string]int{}
			for i, b := range c.Buffers {
				index[b.Name] = i
				job.Buffers = append(job.Buffers, b.Bytes())
			}
			for _, l := range c.Launches {
				if s := byOp[l.Op.Name]; s != nil {
					if _, err := s.Dispatch(l, &job, index, nil); err != nil {
						t.Fatalf("%s: %v", c.Name, err)
					}
					continue
				}
				one := &cases.Case{Name: c.Name, Buffers: c.Buffers, Launches: []cases.Launch{l}}
				j, err := Job(one, e.spirv)
				if err != nil {
					t.Fatal(err)
				}
				job.Dispatches = append(job.Dispatches, j.Dispatches...)
			}
			job.Device = e.sel
			res, err := e.runner.Run(ctx, job)
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			if err := check(Outputs(c, res)); err != nil {
				t.Errorf("%s: the upstream shader and the non-fused path differ: %v", c.Name, err)
			}
			n++
		}
	}
	t.Logf("%d upstream cases bit for bit equal to the non-fused path", n)
}
