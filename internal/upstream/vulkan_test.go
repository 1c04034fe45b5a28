package upstream

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kernelgen/kernelgen/emit/glsl"
	"github.com/kernelgen/kernelgen/internal/spvbuild"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/vkrun"
	"github.com/kernelgen/kernelgen/verify/vulkan"
)

// vkShader is one upstream shader compiled to SPIR-V, with the kernel it
// renders and, for a family, the shared kernel whose flag it takes.
type vkShader struct {
	spirv  []byte
	k      *ir.Kernel
	shared *ops.Shared
}

func skipOrFailVulkan(t *testing.T, err error) {
	t.Helper()
	if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
		t.Fatal(err)
	}
	t.Skip(err)
}

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
		skipOrFailVulkan(t, err)
	}
	files, err := Vulkan()
	if err != nil {
		t.Fatal(err)
	}
	var units []spvbuild.Unit
	for _, f := range files {
		units = append(units, spvbuild.Unit{File: "vulkan-shaders/" + f.Name, Source: f.Data, Name: "upstream " + f.Name})
	}
	res, err := tools.Build(ctx, units, nil)
	if err != nil {
		t.Fatalf("the upstream shaders do not compile: %v", err)
	}
	r, err := vkrun.Build(ctx)
	if errors.Is(err, vkrun.ErrMissingTool) {
		skipOrFailVulkan(t, err)
	} else if err != nil {
		t.Fatal(err)
	}
	devs, err := r.Devices(ctx)
	if errors.Is(err, vkrun.ErrNoDevice) {
		skipOrFailVulkan(t, err)
	} else if err != nil {
		t.Fatal(err)
	}
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
		skipOrFailVulkan(t, fmt.Errorf("no Vulkan device matching %q (install mesa-vulkan-drivers for lavapipe)", want))
	}
	fams, err := Families()
	if err != nil {
		t.Fatal(err)
	}
	gather, err := ops.SharedGather()
	if err != nil {
		t.Fatal(err)
	}
	g := &vkShader{spirv: res[0].SPIRV, k: gather}
	byOp := map[string]*vkShader{}
	for i, f := range fams {
		k, err := f.Kernel("vulkan")
		if err != nil {
			t.Fatal(err)
		}
		s := &vkShader{spirv: res[i+1].SPIRV, k: k, shared: f.Shared}
		byOp[f.Shared.Plain], byOp[f.Shared.Ids], byOp[f.Gather.Name] = s, s, g
	}
	n := 0
	for _, f := range fams {
		for _, op := range []string{f.Shared.Plain, f.Shared.Ids} {
			for i, v := range ops.VariantsFor(op, "vulkan") {
				v := v
				c, err := cases.Random(op, ir.Native("vulkan"), rand.New(rand.NewPCG(uint64(i), 17)), cases.Small, &v)
				if err != nil {
					t.Fatal(err)
				}
				job, extra, err := vulkanJob(c, byOp)
				if err != nil {
					t.Fatal(err)
				}
				job.Device = sel
				out, err := r.Run(ctx, job)
				if err != nil {
					t.Errorf("%s: %v", c.Name, err)
					continue
				}
				got := vulkan.Outputs(c, out)
				for j := len(c.Buffers); j < len(out.Buffers); j++ {
					if string(out.Buffers[j]) != string(untouched()) {
						t.Errorf("%s: the shader wrote %s, a buffer its op does not have", c.Name, extra[j-len(c.Buffers)])
					}
				}
				if err := c.Compare(got); err != nil {
					t.Error(err)
				}
				n++
			}
		}
	}
	t.Logf("%d cases on %s, every launch on the upstream shaders", n, sel)
}

// vulkanJob replays c's launches on the upstream shaders: the variant's
// params (and the family's flag) as specialization constants, the shader's
// args as push constants (rs_head 0 where the plain op has none), each
// binding the case buffer the op's kernel binds to the same node slot, or
// a buffer of its own (extra, named) that must stay untouched.
func vulkanJob(c *cases.Case, byOp map[string]*vkShader) (vkrun.Job, []string, error) {
	var job vkrun.Job
	index := map[string]int{}
	for i, b := range c.Buffers {
		index[b.Name] = i
		job.Buffers = append(job.Buffers, b.Bytes())
	}
	var extra []string
	for _, l := range c.Launches {
		s := byOp[l.Op.Name]
		if s == nil {
			return job, nil, fmt.Errorf("%s: no upstream shader runs %s", c.Name, l.Op.Name)
		}
		params := map[string]int64{}
		for k, v := range l.Params {
			params[k] = v
		}
		if s.shared != nil {
			v, err := s.shared.Value(l.Op.Name)
			if err != nil {
				return job, nil, err
			}
			params[s.shared.Flag] = v
		}
		d := vkrun.Dispatch{SPIRV: s.spirv, Groups: l.Grid}
		for i, p := range glsl.SpecConstants(s.k) {
			v, ok := params[p.Name]
			if p.Derived != nil {
				v, ok = ir.EvalInt(p.Derived, params)
			}
			if !ok {
				return job, nil, fmt.Errorf("%s: %s has no value for %s", c.Name, s.k.Name, p.Name)
			}
			d.Spec = append(d.Spec, vkrun.SpecConst{ID: uint32(i), Value: uint32(v)})
		}
		args := map[string]uint32{"rs_head": 0}
		for k, v := range l.Args {
			args[k] = v
		}
		var err error
		if d.Push, err = vulkan.Push(s.k, args); err != nil {
			return job, nil, err
		}
		for _, kb := range s.k.Buffers {
			name := ""
			for j, ob := range l.Kernel.Buffers {
				if ob.Role == kb.Role {
					name = l.Bind[j]
				}
			}
			bi, ok := index[name]
			if !ok {
				bi = len(job.Buffers)
				job.Buffers = append(job.Buffers, untouched())
				extra = append(extra, kb.Name)
			}
			d.Bindings = append(d.Bindings, bi)
		}
		job.Dispatches = append(job.Dispatches, d)
	}
	return job, extra, nil
}
