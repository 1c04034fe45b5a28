package upstream_test

import (
	"context"
	"fmt"
	backendvulkan "github.com/kernelgen/kernelgen/internal/backend/vulkan"
	"github.com/kernelgen/kernelgen/internal/upstream"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/tools/spvbuild"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/vkrun"
	"github.com/kernelgen/kernelgen/verify/vulkan"
)

// The Vulkan shaders upstream gets compile with glslang (one module each,
// spirv-val clean) and run every variant of ops A-D, gathers included, on
// lavapipe (or $KERNELGEN_VK_DEVICE) like the Go reference: each launch of
// a case runs its family's module with the variant as specialization
// constants (glsl.SpecConstants), the gather's for the gather.
func TestVulkanShadersRunLikeTheGoReference(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tools, err := spvbuild.FindTools(ctx)
	if err != nil {
		skipOrFail(t, err)
	}
	byOp, err := backendvulkan.UpstreamShaders(func(units []spvbuild.Unit) ([][]byte, error) {
		res, err := tools.Build(ctx, units, nil)
		var out [][]byte
		for _, r := range res {
			out = append(out, r.SPIRV)
		}
		return out, err
	})
	if err != nil {
		t.Fatalf("the upstream shaders do not compile: %v", err)
	}
	r, err := vkrun.Build(ctx)
	needTool(t, err, vkrun.ErrMissingTool)
	devs, err := r.Devices(ctx)
	needTool(t, err, vkrun.ErrNoDevice)
	want := os.Getenv("KERNELGEN_VK_DEVICE")
	if want == "" {
		want = "llvmpipe"
	}
	sel := ""
	for _, d := range devs {
		if sel == "" && strings.Contains(strings.ToLower(d.Name), strings.ToLower(want)) {
			sel = fmt.Sprintf("#%d", d.Index)
		}
	}
	if sel == "" {
		skipOrFail(t, fmt.Errorf("no Vulkan device matching %q (install mesa-vulkan-drivers for lavapipe)", want))
	}
	fams, err := upstream.Families()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range fams {
		for _, op := range []string{f.Shared.Plain, f.Shared.Ids} {
			for i, v := range ops.TargetOf("vulkan").Variants(op) {
				v := v
				c, err := cases.Random(op, ir.Native("vulkan"), rand.New(rand.NewPCG(uint64(i), 17)), cases.Small, &v)
				if err != nil {
					t.Fatal(err)
				}
				var job vkrun.Job
				index := map[string]int{}
				for i, b := range c.Buffers {
					index[b.Name] = i
					job.Buffers = append(job.Buffers, b.Bytes())
				}
				extra := map[int]string{}
				for _, l := range c.Launches {
					s := byOp[l.Op.Name]
					if s == nil {
						t.Fatalf("%s: no upstream shader runs %s", c.Name, l.Op.Name)
					}
					x, err := s.Dispatch(l, &job, index, untouched())
					if err != nil {
						t.Fatalf("%s: %v", c.Name, err)
					}
					for i, n := range x {
						extra[i] = n
					}
				}
				job.Device = sel
				out, err := r.Run(ctx, job)
				if err != nil {
					t.Errorf("%s: %v", c.Name, err)
					continue
				}
				for i, name := range extra {
					if string(out.Buffers[i]) != string(untouched()) {
						t.Errorf("%s: the shader wrote %s, a buffer its op does not have", c.Name, name)
					}
				}
				got := vulkan.Outputs(c, out)
				if err := c.Compare(got); err != nil {
					t.Error(err)
				}
				n++
			}
		}
	}
	t.Logf("%d cases on %s, every launch on the upstream shaders", n, sel)
}
