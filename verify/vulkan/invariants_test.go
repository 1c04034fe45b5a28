package vulkan

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/kernelgen/kernelgen/internal/tier"

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
			var variants []ops.Variant
			for _, v := range ops.VariantsOf(fused) {
				if v.Values["SILU"] != 1 { // ggml applies SiLU as a separate op after ssm_conv
					variants = append(variants, v)
				}
			}
			for _, vi := range tier.Sample(t, len(variants), 3) {
				v := variants[vi]
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

// The shaders upstream gets (internal/backend/vulkan's upstream text: one
// module per family, the variant as specialization constants) run every
// variant of ops A-D, gathers included, once per case, and that one run is
// checked three ways: against the Go reference (native, within NMSE); with
// SiLU off (ggml applies it as a separate op), against the generated
// non-fused path on the same inputs, bit for bit; and a node slot the op
// does not have, bound to a buffer of its own, is left untouched. The fast
// tier runs three sampled variants per op.
func TestUpstreamShaders(t *testing.T) {
	e := setup(t)
	ctx := tier.Context(t)
	// through e.comp, so a GPU host without glslang runs from the cache
	byOp, err := backendvulkan.UpstreamShaders(func(units []spvbuild.Unit) ([][]byte, error) { return e.comp.Build(ctx, units) })
	if err != nil {
		t.Fatalf("the upstream shaders do not compile: %v", err)
	}
	n, unfused := runUpstreamShaders(t, e, byOp, "gated_delta_net_inplace", "gated_delta_net_inplace_ids", "ssm_conv_update_inplace", "ssm_conv_update_inplace_ids")
	t.Logf("%d upstream cases equal to the Go reference, %d of them bit for bit equal to the non-fused path", n, unfused)
}

// The fusion form's shaders (the GDN and conv shaders writing the snapshot
// slots too, backendvulkan.FusionShaders) run ops B and D with slots
// (ops.SlotsOp, ops.ConvSlotsOp: the fused decode step with K > 1) like the
// Go reference and bit for bit like the non-fused path (GATED_DELTA_NET
// with its K snapshots; SSM_CONV over the taps and tokens, SiLU off, and
// the views llama copies), and op B as the ops form's shader does.
func TestFusionShaders(t *testing.T) {
	e := setup(t)
	ctx := tier.Context(t)
	byOp, err := backendvulkan.FusionShaders(func(units []spvbuild.Unit) ([][]byte, error) { return e.comp.Build(ctx, units) })
	if err != nil {
		t.Fatalf("the fusion form's shaders do not compile: %v", err)
	}
	n, unfused := runUpstreamShaders(t, e, byOp, ops.SlotsOp, ops.ConvSlotsOp, "gated_delta_net_inplace_ids")
	if unfused == 0 {
		t.Fatal("no case compared with the non-fused path")
	}
	t.Logf("%d cases equal to the Go reference, %d of them bit for bit equal to the non-fused path", n, unfused)
}

// runUpstreamShaders runs sampled variants of each op in fused on byOp's
// shaders (the rest of a case's launches on the generated ones) and checks
// them as TestUpstreamShaders says; it returns how many cases ran and how
// many of them were compared with the non-fused path.
func runUpstreamShaders(t *testing.T, e *env, byOp map[string]*backendvulkan.UpstreamShader, fused ...string) (n, unfused int) {
	t.Helper()
	ctx := tier.Context(t)
	a := ir.Native("vulkan")
	untouched := bytes.Repeat([]byte{0x01, 0x00, 0xc0, 0x7f}, 4) // NaNs no kernel writes
	for _, fused := range fused {
		variants := ops.TargetOf("vulkan").Variants(fused)
		for _, vi := range tier.Sample(t, len(variants), 3) {
			v := variants[vi]
			name := fmt.Sprintf("upstream %s@%s[%s]", fused, a, v)
			c, err := cases.Random(fused, a, seed("fused", name), cases.Small, &v)
			if err != nil {
				t.Fatal(err)
			}
			check := func(map[string][]byte) error { return nil }
			if v.Values["SILU"] != 1 {
				if check, err = cases.AddUnfused(c, "vulkan"); err != nil {
					t.Fatal(err)
				}
				unfused++
			}
			// the fused op's launches (and its gather's) on the upstream
			// shaders, the non-fused path's on the generated ones
			var job vkrun.Job
			index := map[string]int{}
			for i, b := range c.Buffers {
				index[b.Name] = i
				job.Buffers = append(job.Buffers, b.Bytes())
			}
			extra := map[int]string{}
			for _, l := range c.Launches {
				if s := byOp[l.Op.Name]; s != nil {
					x, err := s.Dispatch(l, &job, index, untouched)
					if err != nil {
						t.Fatalf("%s: %v", c.Name, err)
					}
					for i, n := range x {
						extra[i] = n
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
			for i, name := range extra {
				if string(res.Buffers[i]) != string(untouched) {
					t.Errorf("%s: the shader wrote %s, a buffer its op does not have", c.Name, name)
				}
			}
			got := Outputs(c, res)
			if err := c.Compare(got); err != nil {
				t.Errorf("%s: the upstream shader and the Go reference differ: %v", c.Name, err)
			}
			if err := check(got); err != nil {
				t.Errorf("%s: the upstream shader and the non-fused path differ: %v", c.Name, err)
			}
			n++
		}
	}
	return n, unfused
}
