package cases

import (
	"fmt"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// AddUnfused appends to a case of a fused op (A-D, batched or not) its
// non-fused counterpart on buffers of its own, and returns the check that
// the fused op's results equal the non-fused ones bit for bit (the native
// contract's promise: on one device, a fused kernel gives the bits of the
// non-fused path on the same inputs):
//
//	A: gated_delta_net_inplace vs gated_delta_net (K = 1): attention and final state
//	B: gated_delta_net_inplace_ids vs gated_delta_net fed the pre-op states,
//	   gathered here on the host; the same for op B's batched kernel, and
//	   for op B with slots (ops.SlotsOp) vs the base op's KEEP_RS slots
//	C: ssm_conv_update_inplace (SILU off) vs ssm_conv over [taps, x] (n_t = 1)
//	D: ssm_conv_update_inplace_ids (SILU off) vs ssm_conv over the gathered
//	   windows; the same for op D's batched kernel, and for op D with slots
//	   (ops.ConvSlotsOp) over its tokens, each slot vs the CONCAT's view
//	   that llama's graph copies into it
//
// backend runs both: the non-fused op runs a variant it builds.
func AddUnfused(c *Case, backend string) (func(got map[string][]byte) error, error) {
	if c.Op[0] == 'g' {
		return addBaseGDN(c, backend)
	}
	return addPlainConv(c)
}

// FusedOps are the ops AddUnfused takes.
var FusedOps = []string{"gated_delta_net_inplace", "gated_delta_net_inplace_ids", ops.SlotsOp, "gated_delta_net_inplace_ids_batched",
	"ssm_conv_update_inplace", "ssm_conv_update_inplace_ids", ops.ConvSlotsOp, "ssm_conv_update_inplace_ids_batched"}

// launch is a dispatch of op's kernel under a, its buffers bound by name
// (kernel buffer name -> case buffer; unnamed ones bind the same name).
func unfusedLaunch(opName string, a ir.Arith, params map[string]int64, args map[string]uint32, bind map[string]string) (Launch, error) {
	op, err := ops.Lookup(opName)
	if err != nil {
		return Launch{}, err
	}
	k, err := op.Kernel(a)
	if err != nil {
		return Launch{}, err
	}
	l := Launch{Op: op, Kernel: k, Params: params, Args: args}
	for _, kb := range k.Buffers {
		name := kb.Name
		if b, ok := bind[kb.Name]; ok {
			name = b
		}
		l.Bind = append(l.Bind, name)
	}
	vals := map[string]int64{}
	for n, v := range params {
		vals[n] = v
	}
	for _, a := range k.Args {
		if v, ok := args[a.Name]; ok && a.Type == ir.U32 {
			vals[a.Name] = int64(v)
		}
	}
	for d := 0; d < 3; d++ {
		g, ok1 := ir.EvalInt(k.Grid[d], vals)
		w, ok2 := ir.EvalInt(k.Workgroup[d], vals)
		if !ok1 || !ok2 {
			return l, fmt.Errorf("%s: launch geometry not computable", k.ID())
		}
		l.Grid[d], l.Workgroup[d] = uint32(g), uint32(w)
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

// builtVariant is the first variant of op that backend builds with the
// given values (others free).
func builtVariant(op, backend string, want map[string]int64) (map[string]int64, error) {
	for _, v := range ops.TargetOf(backend).Variants(op) {
		match := true
		for k, x := range want {
			match = match && v.Values[k] == x
		}
		if match {
			return v.Values, nil
		}
	}
	return nil, fmt.Errorf("%s has no variant %v on %s", op, want, backend)
}

func addBuffer(c *Case, name string, elem ir.Type, f32 []float32) {
	c.Buffers = append(c.Buffers, &Buffer{Name: name, Elem: elem, F32: f32})
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
func preRow(c *Case, dstName string, s int, rowLen int) []float32 {
	l := c.Launches[len(c.Launches)-1]
	src := int(c.Buffer("ids").I32[s])
	if src == int(int32(l.Args["rs_head"]))+s {
		return c.Buffer(dstName).F32[s*rowLen : (s+1)*rowLen]
	}
	return c.Buffer("cache").F32[src*rowLen : (src+1)*rowLen]
}

// addBaseGDN appends gated_delta_net (K = 1) on the fused op's inputs (op A)
// or on the gathered pre-op states (op B), writing dst_base.
func addBaseGDN(c *Case, backend string) (func(map[string][]byte) error, error) {
	fl := c.Launches[len(c.Launches)-1]
	sv, H := int(fl.Params["S_v"]), int(fl.Args["H"])
	T, n := int(fl.Args["n_tokens"]), int(fl.Args["n_seqs"])
	D, attn := sv*sv*H, sv*H*T*n
	if int(fl.Args["sd1"]) != D {
		return nil, fmt.Errorf("sd1 %d, want %d: the comparison assumes packed rows", fl.Args["sd1"], D)
	}
	// op B's snapshot slots (K > 1) are the base op's with KEEP_RS
	snaps := max(int(fl.Args["K"]), 1)
	keep := int64(0)
	if snaps > 1 {
		keep = 1
	}
	want := map[string]int64{"S_v": fl.Params["S_v"], "KDA": fl.Params["KDA"], "KEEP_RS": keep, "NW": fl.Params["NW"], "CPW": fl.Params["CPW"]}
	params, err := tableVariant("gated_delta_net", want)
	if err != nil {
		// A shape only the in-place ops have (the batched schedule, a
		// small-n tiling): the base op at the backend's own tiling, as
		// tilings do not change a column's arithmetic.
		params, err = builtVariant("gated_delta_net", backend, map[string]int64{"S_v": want["S_v"], "KDA": want["KDA"], "KEEP_RS": keep})
	}
	if err != nil {
		return nil, err
	}
	args := map[string]uint32{"K": uint32(snaps), "s_off": uint32(attn)}
	for k, x := range fl.Args {
		if k != "sd1" && k != "rs_head" && k != "K" && k != "ss" { // op B's in-place slots are not the base op's
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
	addBuffer(c, "dst_base", ir.F32, make([]float32, attn+snaps*n*D))
	l, err := unfusedLaunch("gated_delta_net", c.Arith, params, args, map[string]string{"state": state, "dst": "dst_base"})
	if err != nil {
		return nil, err
	}
	c.Launches = append(c.Launches, l)
	return func(got map[string][]byte) error {
		if err := sameWords("attention", got["dst"], 0, got["dst_base"], 0, attn); err != nil {
			return err
		}
		if err := sameWords("final state", got["state_dst"], 0, got["dst_base"], attn, n*D); err != nil {
			return err
		}
		for slot := 1; slot < min(snaps, T); slot++ { // slots past the tokens are written by neither
			ss := int(fl.Args["ss"])
			if err := sameWords(fmt.Sprintf("snapshot slot %d", slot), got["state_dst"], slot*ss, got["dst_base"], attn+slot*n*D, n*D); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// addPlainConv appends ssm_conv over each sequence's window [taps, x] (n_t =
// 1): op C's conv_states, op D's gathered pre-op taps.
func addPlainConv(c *Case) (func(map[string][]byte) error, error) {
	fl := c.Launches[len(c.Launches)-1]
	K := int(fl.Params["d_conv"])
	C, n := int(fl.Args["n_ch"]), int(fl.Args["n_seqs"])
	cs1, cs2, x2 := int(fl.Args["cs1"]), int(fl.Args["cs2"]), int(fl.Args["x2"])
	if cs1 != K-1 || int(fl.Args["sd1"]) != cs2 {
		return nil, fmt.Errorf("cs1 %d, sd1 %d, cs2 %d: the comparison assumes packed rows", cs1, fl.Args["sd1"], cs2)
	}
	// op D with slots: T tokens (x_cur's token stride x1) and K slots
	T, x1, snaps := max(int(fl.Args["n_t"]), 1), int(fl.Args["x1"]), max(int(fl.Args["K"]), 1)
	if int(fl.Args["d2"]) != T*C || (T > 1 && int(fl.Args["d1"]) != C) {
		return nil, fmt.Errorf("d1 %d, d2 %d: the comparison assumes packed output", fl.Args["d1"], fl.Args["d2"])
	}
	params, err := tableVariant("ssm_conv", map[string]int64{"d_conv": int64(K)})
	if err != nil {
		return nil, err
	}
	x := c.Buffer("x_cur").F32
	W := K - 1 + T // the CONCAT of the taps and the tokens, per channel
	sx := make([]float32, n*C*W)
	for s := 0; s < n; s++ {
		var taps []float32
		if fl.Op.Name != "ssm_conv_update_inplace" {
			taps = preRow(c, "conv_state_dst", s, cs2)
		} else {
			taps = c.Buffer("conv_states").F32[s*cs2 : (s+1)*cs2]
		}
		for ch := 0; ch < C; ch++ {
			w := sx[(s*C+ch)*W : (s*C+ch+1)*W]
			copy(w, taps[ch*cs1:ch*cs1+K-1])
			for t := 0; t < T; t++ {
				w[K-1+t] = x[s*x2+t*x1+ch]
			}
		}
	}
	addBuffer(c, "sx", ir.F32, sx)
	addBuffer(c, "dst_conv", ir.F32, make([]float32, n*T*C))
	args := map[string]uint32{"n_ch": uint32(C), "n_t": uint32(T), "n_s": uint32(n), "sx1": uint32(W), "sx2": uint32(C * W),
		"w1": uint32(K), "d1": uint32(C), "d2": uint32(T * C)}
	l, err := unfusedLaunch("ssm_conv", c.Arith, params, args, map[string]string{"dst": "dst_conv"})
	if err != nil {
		return nil, err
	}
	c.Launches = append(c.Launches, l)
	return func(got map[string][]byte) error {
		if err := sameWords("conv output", got["dst"], 0, got["dst_conv"], 0, n*T*C); err != nil {
			return err
		}
		if fl.Op.Name != ops.ConvSlotsOp {
			return nil
		}
		// slot i holds the graph's i-th copy: the CONCAT's d_conv-1 taps
		// from token offset T-i (the window ending at token T-1-i); slots
		// past the tokens are written by neither
		ss := int(fl.Args["ss"])
		want := make([]float32, n*cs2)
		for slot := 0; slot < min(snaps, T); slot++ {
			for s := 0; s < n; s++ {
				for ch := 0; ch < C; ch++ {
					from := (s*C+ch)*W + T - slot
					copy(want[s*cs2+ch*cs1:], sx[from:from+K-1])
				}
			}
			if err := sameWords(fmt.Sprintf("taps slot %d", slot), got["conv_state_dst"], slot*ss, (&Buffer{Elem: ir.F32, F32: want}).Bytes(), 0, n*cs2); err != nil {
				return err
			}
		}
		return nil
	}, nil
}
