package vulkan

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kernelgen/kernelgen/internal/spvbuild"
	"github.com/kernelgen/kernelgen/internal/upstream"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/vkrun"
)

// The native contract's promise (issue 5): on one driver, a generated fused
// kernel gives the bits of the generated non-fused path on the same inputs.
// Each check runs the fused op and its non-fused counterpart in one job, on
// buffers of their own, and compares bit for bit, under native-vulkan and
// under portable:
//
//	A: gated_delta_net_inplace vs gated_delta_net (K = 1): attention and final state
//	B: gated_delta_net_inplace_ids vs gated_delta_net fed the pre-op states,
//	   gathered here on the host; the same for op B's batched kernel
//	C: ssm_conv_update_inplace (SILU off) vs ssm_conv over [taps, x] (n_t = 1)
//	D: ssm_conv_update_inplace_ids (SILU off) vs ssm_conv over the gathered
//	   windows; the same for op D's batched kernel
func TestFusedMatchesUnfused(t *testing.T) {
	e := setup(t)
	for _, fused := range []string{"gated_delta_net_inplace", "gated_delta_net_inplace_ids", "gated_delta_net_inplace_ids_batched", "ssm_conv_update_inplace", "ssm_conv_update_inplace_ids", "ssm_conv_update_inplace_ids_batched"} {
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
					var check func(got map[string][]byte) error
					if fused[0] == 'g' {
						check, err = addBaseGDN(c)
					} else {
						check, err = addPlainConv(c)
					}
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

// launch is a dispatch of op's kernel under a, its buffers bound by name
// (kernel buffer name -> case buffer; unnamed ones bind the same name).
func launch(opName string, a ir.Arith, params map[string]int64, args map[string]uint32, bind map[string]string) (cases.Launch, error) {
	op, err := ops.Lookup(opName)
	if err != nil {
		return cases.Launch{}, err
	}
	k, err := op.Kernel(a)
	if err != nil {
		return cases.Launch{}, err
	}
	l := cases.Launch{Op: op, Kernel: k, Params: params, Args: args}
	for _, kb := range k.Buffers {
		name := kb.Name
		if b, ok := bind[kb.Name]; ok {
			name = b
		}
		l.Bind = append(l.Bind, name)
	}
	if l.Grid, err = Grid(k, params, args); err != nil {
		return l, err
	}
	for d := range l.Workgroup {
		w, _ := ir.EvalInt(k.Workgroup[d], params)
		l.Workgroup[d] = uint32(w)
	}
	return l, nil
}

// tableVariant finds op's variant with the given values (the non-fused
// kernels must be ones the table compiles).
func tableVariant(op string, want map[string]int64) (map[string]int64, error) {
	for _, v := range ops.VariantsOf(op) {
		match := len(v.Values) == len(want)
		for k, x := range want {
			match = match && v.Values[k] == x
		}
		if match {
			return v.Values, nil
		}
	}
	return nil, fmt.Errorf("%s has no variant %v", op, want)
}

func addBuffer(c *cases.Case, name string, elem ir.Type, f32 []float32) {
	c.Buffers = append(c.Buffers, &cases.Buffer{Name: name, Elem: elem, F32: f32})
}

// sameWords compares n 4-byte words of a from word ai with b from word bi.
func sameWords(what string, a []byte, ai int, b []byte, bi int, n int) error {
	for i := 0; i < n; i++ {
		x, y := a[4*(ai+i):4*(ai+i)+4], b[4*(bi+i):4*(bi+i)+4]
		if string(x) != string(y) {
			return fmt.Errorf("%s word %d: fused %x, non-fused %x", what, i, x, y)
		}
	}
	return nil
}

// preState is the prior state (or taps) sequence s reads under ops B and D:
// its own destination row (identity) or cache row ids[s], both pre-op.
func preRow(c *cases.Case, dstName string, s int, rowLen int) []float32 {
	l := c.Launches[len(c.Launches)-1]
	src := int(c.Buffer("ids").I32[s])
	if src == int(int32(l.Args["rs_head"]))+s {
		return c.Buffer(dstName).F32[s*rowLen : (s+1)*rowLen]
	}
	return c.Buffer("cache").F32[src*rowLen : (src+1)*rowLen]
}

// addBaseGDN appends gated_delta_net (K = 1) on the fused op's inputs (op A)
// or on the gathered pre-op states (op B), writing dst_base.
func addBaseGDN(c *cases.Case) (func(map[string][]byte) error, error) {
	fl := c.Launches[len(c.Launches)-1]
	sv, H := int(fl.Params["S_v"]), int(fl.Args["H"])
	T, n := int(fl.Args["n_tokens"]), int(fl.Args["n_seqs"])
	D, attn := sv*sv*H, sv*H*T*n
	if int(fl.Args["sd1"]) != D {
		return nil, fmt.Errorf("sd1 %d, want %d: the comparison assumes packed rows", fl.Args["sd1"], D)
	}
	base := func(nw, cpw int64) (map[string]int64, error) {
		return tableVariant("gated_delta_net", map[string]int64{"S_v": fl.Params["S_v"], "KDA": fl.Params["KDA"], "KEEP_RS": 0, "NW": nw, "CPW": cpw})
	}
	params, err := base(fl.Params["NW"], fl.Params["CPW"])
	if err != nil {
		// A shape only the in-place ops have (the batched schedule, a
		// small-n tiling): the base op at Vulkan's own tiling, as tilings
		// do not change a column's arithmetic.
		w, c := ops.GDNTiling("vulkan", sv)
		params, err = base(int64(w), int64(c))
	}
	if err != nil {
		return nil, err
	}
	args := map[string]uint32{"K": 1, "s_off": uint32(attn)}
	for k, x := range fl.Args {
		if k != "sd1" && k != "rs_head" {
			args[k] = x
		}
	}
	state := "state"
	if fl.Op.Name != "gated_delta_net_inplace" {
		pre := make([]float32, 0, n*D)
		for s := 0; s < n; s++ {
			pre = append(pre, preRow(c, "state_dst", s, D)...)
		}
		state = "pre_state"
		addBuffer(c, state, ir.F32, pre)
	}
	addBuffer(c, "dst_base", ir.F32, make([]float32, attn+n*D))
	l, err := launch("gated_delta_net", c.Arith, params, args, map[string]string{"state": state, "dst": "dst_base"})
	if err != nil {
		return nil, err
	}
	c.Launches = append(c.Launches, l)
	return func(got map[string][]byte) error {
		if err := sameWords("attention", got["dst"], 0, got["dst_base"], 0, attn); err != nil {
			return err
		}
		return sameWords("final state", got["state_dst"], 0, got["dst_base"], attn, n*D)
	}, nil
}

// addPlainConv appends ssm_conv over each sequence's window [taps, x] (n_t =
// 1): op C's conv_states, op D's gathered pre-op taps.
func addPlainConv(c *cases.Case) (func(map[string][]byte) error, error) {
	fl := c.Launches[len(c.Launches)-1]
	K := int(fl.Params["d_conv"])
	C, n := int(fl.Args["n_ch"]), int(fl.Args["n_seqs"])
	cs1, cs2, x2 := int(fl.Args["cs1"]), int(fl.Args["cs2"]), int(fl.Args["x2"])
	if cs1 != K-1 || int(fl.Args["sd1"]) != cs2 {
		return nil, fmt.Errorf("cs1 %d, sd1 %d, cs2 %d: the comparison assumes packed rows", cs1, fl.Args["sd1"], cs2)
	}
	params, err := tableVariant("ssm_conv", map[string]int64{"d_conv": int64(K)})
	if err != nil {
		return nil, err
	}
	x := c.Buffer("x_cur").F32
	sx := make([]float32, n*C*K)
	for s := 0; s < n; s++ {
		var taps []float32
		if fl.Op.Name != "ssm_conv_update_inplace" {
			taps = preRow(c, "conv_state_dst", s, cs2)
		} else {
			taps = c.Buffer("conv_states").F32[s*cs2 : (s+1)*cs2]
		}
		for ch := 0; ch < C; ch++ {
			w := sx[(s*C+ch)*K : (s*C+ch+1)*K]
			copy(w, taps[ch*cs1:ch*cs1+K-1])
			w[K-1] = x[s*x2+ch]
		}
	}
	addBuffer(c, "sx", ir.F32, sx)
	addBuffer(c, "dst_conv", ir.F32, make([]float32, n*C))
	args := map[string]uint32{"n_ch": uint32(C), "n_t": 1, "n_s": uint32(n), "sx1": uint32(K), "sx2": uint32(C * K),
		"w1": uint32(K), "d1": uint32(C), "d2": uint32(C)}
	l, err := launch("ssm_conv", c.Arith, params, args, map[string]string{"dst": "dst_conv"})
	if err != nil {
		return nil, err
	}
	c.Launches = append(c.Launches, l)
	return func(got map[string][]byte) error {
		return sameWords("conv output", got["dst"], 0, got["dst_conv"], 0, n*C)
	}, nil
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
	byOp, err := upstream.VulkanShaders(func(units []spvbuild.Unit) ([][]byte, error) { return e.comp.Build(ctx, units) })
	if err != nil {
		t.Fatal(err)
	}
	a := ir.Native("vulkan")
	n := 0
	for _, fused := range []string{"gated_delta_net_inplace", "gated_delta_net_inplace_ids", "ssm_conv_update_inplace", "ssm_conv_update_inplace_ids"} {
		for _, v := range ops.VariantsFor(fused, "vulkan") {
			if v.Values["SILU"] == 1 {
				continue // ggml applies SiLU as a separate op after ssm_conv
			}
			name := fmt.Sprintf("upstream %s@%s[%s]", fused, a, v)
			c, err := cases.Random(fused, a, seed("fused", name), cases.Small, &v)
			if err != nil {
				t.Fatal(err)
			}
			var check func(got map[string][]byte) error
			if fused[0] == 'g' {
				check, err = addBaseGDN(c)
			} else {
				check, err = addPlainConv(c)
			}
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
