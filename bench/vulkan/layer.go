package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/tools/spvbuild"
	"github.com/kernelgen/kernelgen/verify/vkrun"
	"github.com/kernelgen/kernelgen/verify/vulkan"
)

// One GDN layer's decode step (T 1, identity ids), the part the fused nodes
// replace, as bench/cuda's layer rows time it: unfused, llama.cpp's graph
// (get_rows of the conv states, concat with the token's channels, the last
// d_conv-1 taps copied back into the cache, ssm_conv, silu; get_rows of the
// GDN states, gated_delta_net, its final state copied back into the cache),
// ggml's get_rows, concat, cpy and silu stood in for by the one-element-per-
// thread shaders below and ssm_conv and gated_delta_net by the generated
// native-vulkan kernels; fused, op D then op B as the glue dispatches them.

// layerModel is one model's layer shape: value heads of 128 and conv
// channels (Qwen 3.5/3.6).
type layerModel struct {
	name string
	H, C int
}

var layerModels = []layerModel{{"35B-A3B", 32, 8192}, {"27B", 48, 10240}}

const layerGetRows = `#version 450
layout(local_size_x = 256) in;
layout(binding = 0, std430) readonly buffer A { float src[]; };
layout(binding = 1, std430) readonly buffer I { int ids[]; };
layout(binding = 2, std430) writeonly buffer B { float dst[]; };
layout(push_constant) uniform P { uint row; } pc;
void main() {
    uint s = gl_WorkGroupID.y;
    uint from = uint(ids[s]) * pc.row, to = s * pc.row;
    for (uint e = gl_GlobalInvocationID.x; e < pc.row; e += gl_NumWorkGroups.x * 256u) dst[to + e] = src[from + e];
}
`

const layerCopy = `#version 450
layout(local_size_x = 256) in;
layout(binding = 0, std430) readonly buffer A { float src[]; };
layout(binding = 1, std430) writeonly buffer B { float dst[]; };
layout(push_constant) uniform P { uint n; } pc;
void main() {
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += gl_NumWorkGroups.x * 256u) dst[i] = src[i];
}
`

// conv_in[s][c] = (the 3 gathered taps of channel c, x[s][c]).
const layerConcat = `#version 450
layout(local_size_x = 256) in;
layout(binding = 0, std430) readonly buffer A { float taps[]; };
layout(binding = 1, std430) readonly buffer X { float x[]; };
layout(binding = 2, std430) writeonly buffer B { float conv_in[]; };
layout(push_constant) uniform P { uint n; } pc;
void main() {
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += gl_NumWorkGroups.x * 256u) {
        uint j = i % 4u, sc = i / 4u;
        conv_in[i] = j < 3u ? taps[sc * 3u + j] : x[sc];
    }
}
`

// window[s][c] = the last three taps of conv_in[s][c].
const layerStoreTaps = `#version 450
layout(local_size_x = 256) in;
layout(binding = 0, std430) readonly buffer A { float conv_in[]; };
layout(binding = 1, std430) writeonly buffer B { float window[]; };
layout(push_constant) uniform P { uint n; } pc;
void main() {
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += gl_NumWorkGroups.x * 256u) {
        uint j = i % 3u, sc = i / 3u;
        window[i] = conv_in[sc * 4u + 1u + j];
    }
}
`

const layerSilu = `#version 450
layout(local_size_x = 256) in;
layout(binding = 0, std430) readonly buffer A { float x[]; };
layout(binding = 1, std430) writeonly buffer B { float y[]; };
layout(push_constant) uniform P { uint n; } pc;
void main() {
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += gl_NumWorkGroups.x * 256u) y[i] = x[i] / (1.0 + exp(-x[i]));
}
`

func groups1D(n uint64) uint32 { return uint32(min((n+255)/256, 65535)) }

// raw adds a dispatch of a bench shader (no kernelgen op).
func (b *builder) raw(spv []byte, push []uint32, groups [3]uint32, binds ...bind) {
	d := vkrun.Dispatch{SPIRV: spv, Groups: groups}
	for _, x := range push {
		d.Push = binary.LittleEndian.AppendUint32(d.Push, x)
	}
	for _, bd := range binds {
		d.Bindings = append(d.Bindings, bd.buf)
		d.Offsets = append(d.Offsets, bd.off)
		d.Ranges = append(d.Ranges, bd.rng)
	}
	b.job.Dispatches = append(b.job.Dispatches, d)
}

// layerJob is one layer's decode step at n sequences, fused or unfused.
func layerJob(cfg config, comp *vulkan.Compiler, m layerModel, n int, fused bool) (vkrun.Job, entry, error) {
	b := &builder{comp: comp, rng: rand.New(rand.NewPCG(uint64(m.H), uint64(n))), offTable: true}
	spv, err := comp.Build(context.Background(), []spvbuild.Unit{
		{File: "bench/vulkan/get_rows.comp", Source: []byte(layerGetRows), Name: "bench get_rows"},
		{File: "bench/vulkan/cpy.comp", Source: []byte(layerCopy), Name: "bench cpy"},
		{File: "bench/vulkan/concat.comp", Source: []byte(layerConcat), Name: "bench concat"},
		{File: "bench/vulkan/store_taps.comp", Source: []byte(layerStoreTaps), Name: "bench store taps"},
		{File: "bench/vulkan/silu.comp", Source: []byte(layerSilu), Name: "bench silu"},
	})
	if err != nil {
		return b.job, entry{}, err
	}
	getRows, cpy, concat, storeTaps, silu := spv[0], spv[1], spv[2], spv[3], spv[4]
	H, C := m.H, m.C
	D := sv * sv * H
	slotBytes := uint64(4 * D)
	row := 3 * C
	rowBytes := uint64(4 * row)
	slots, err := pool(n, cfg.runs(), slotBytes, cfg.gdnPool, cfg.poolCap)
	if err != nil {
		return b.job, entry{}, err
	}
	cells, err := pool(n, cfg.runs(), rowBytes, cfg.convPool, cfg.poolCap)
	if err != nil {
		return b.job, entry{}, err
	}
	gHead := func(rep int) int { return rep * n % (slots - n) }
	cHead := func(rep int) int { return rep * n % (cells - n) }
	tok := uint64(4 * sv * H * n)
	q := b.buffer(tok, b.f32s(4096, -1, 1))
	k := b.buffer(tok, b.f32s(4096, -1, 1))
	v := b.buffer(tok, b.f32s(4096, -0.3, 5))
	g := b.buffer(uint64(4*H*n), b.f32s(1024, -20, -1e-4))
	beta := b.buffer(uint64(4*H*n), b.f32s(1024, 0, 1))
	gCache := b.buffer(uint64(slots)*slotBytes, b.f32s(1<<14, -1, 1))
	gDst := b.buffer(tok+uint64(n)*slotBytes, nil) // the base op's output and final state
	gScratch := b.buffer(uint64(n)*slotBytes, nil)
	cCache := b.buffer(uint64(cells)*rowBytes, b.f32s(1<<14, -1, 1))
	w := b.buffer(uint64(16*C), b.f32s(4*C, -1, 1))
	x := b.buffer(uint64(4*C*n), b.f32s(4096, -1, 1))
	cDst := b.buffer(uint64(4*C*n), nil)
	cScratch := b.buffer(uint64(n)*rowBytes, nil)
	convIn := b.buffer(uint64(16*C*n), nil)
	act := b.buffer(uint64(4*C*n), nil)
	gIDs := make([]byte, uint64(cfg.runs())*idsStride(n))
	cIDs := make([]byte, uint64(cfg.runs())*idsStride(n))
	for rep := 0; rep < cfg.runs(); rep++ {
		gi, ci := make([]int32, n), make([]int32, n)
		for s := range gi {
			gi[s], ci[s] = int32(gHead(rep)+s), int32(cHead(rep)+s) // steady decode: identity
		}
		putIDs(gIDs, rep, gi)
		putIDs(cIDs, rep, ci)
	}
	gIDsBuf, cIDsBuf := b.buffer(0, gIDs), b.buffer(0, cIDs)
	native := ir.Native("vulkan")
	h := uint32(H)
	gdnArgs := map[string]uint32{"H": h, "n_tokens": 1, "n_seqs": uint32(n), "neq1": h, "rq3": 1,
		"sq1": sv, "sq2": sv * h, "sq3": sv * h, "sv1": sv, "sv2": sv * h, "sv3": sv * h,
		"sg1": 1, "sg2": h, "sg3": h, "sb1": 1, "sb2": h, "sb3": h,
		"scale": math.Float32bits(float32(1 / math.Sqrt(sv))), "aliased_batched": 0}
	convArgs := map[string]uint32{"n_ch": uint32(C), "n_seqs": uint32(n), "cs1": 3, "cs2": uint32(row), "w1": 4,
		"x2": uint32(C), "sd1": uint32(row), "d2": uint32(C)}
	for rep := 0; rep < cfg.runs(); rep++ {
		gRS, cRS := gHead(rep), cHead(rep)
		gIDsRep := bind{gIDsBuf, uint64(rep) * idsStride(n), uint64(4 * n)}
		cIDsRep := bind{cIDsBuf, uint64(rep) * idsStride(n), uint64(4 * n)}
		gWindow := bind{gCache, uint64(gRS) * slotBytes, uint64(n) * slotBytes}
		cWindow := bind{cCache, uint64(cRS) * rowBytes, uint64(n) * rowBytes}
		if !fused {
			b.raw(getRows, []uint32{uint32(row)}, [3]uint32{groups1D(uint64(row)), uint32(n), 1}, whole(cCache), cIDsRep, whole(cScratch))
			b.raw(concat, []uint32{uint32(4 * C * n)}, [3]uint32{groups1D(uint64(4 * C * n)), 1, 1}, whole(cScratch), whole(x), whole(convIn))
			b.raw(storeTaps, []uint32{uint32(3 * C * n)}, [3]uint32{groups1D(uint64(3 * C * n)), 1, 1}, whole(convIn), cWindow)
			err := b.dispatch("ssm_conv", native, map[string]int64{"d_conv": 4},
				map[string]uint32{"n_ch": uint32(C), "n_t": 1, "n_s": uint32(n), "sx1": 4, "sx2": uint32(4 * C), "w1": 4, "d1": uint32(C), "d2": uint32(C)},
				map[string]bind{"sx": whole(convIn), "conv_kernel": whole(w), "dst": whole(cDst)})
			if err != nil {
				return b.job, entry{}, err
			}
			b.raw(silu, []uint32{uint32(C * n)}, [3]uint32{groups1D(uint64(C * n)), 1, 1}, whole(cDst), whole(act))
			b.raw(getRows, []uint32{uint32(D)}, [3]uint32{groups1D(uint64(D)), uint32(n), 1}, whole(gCache), gIDsRep, whole(gScratch))
			nw, cpw := ops.TargetOf("vulkan").GDNTiling(sv)
			args := map[string]uint32{"K": 1, "s_off": uint32(sv * H * n)}
			for a, x := range gdnArgs {
				args[a] = x
			}
			err = b.dispatch("gated_delta_net", native, map[string]int64{"S_v": sv, "KDA": 0, "KEEP_RS": 0, "NW": int64(nw), "CPW": int64(cpw)}, args,
				map[string]bind{"q": whole(q), "k": whole(k), "v": whole(v), "g": whole(g), "beta": whole(beta), "state": whole(gScratch), "dst": whole(gDst)})
			if err != nil {
				return b.job, entry{}, err
			}
			b.raw(cpy, []uint32{uint32(D * n)}, [3]uint32{groups1D(uint64(D * n)), 1, 1}, bind{gDst, tok, uint64(n) * slotBytes}, gWindow)
			continue
		}
		// Fused: what the glue dispatches at n (ops.Guard, ops.Target.ConvBatch,
		// ops.Target.GDNBatch, ops.Target.GDNSmallTiling).
		cArgs := map[string]uint32{"rs_head": uint32(cRS)}
		for a, x := range convArgs {
			cArgs[a] = x
		}
		if ns, ok := ops.TargetOf("vulkan").ConvBatch(); ok && n >= 2 && n <= ns {
			err = b.dispatch("ssm_conv_update_inplace_ids_batched", native, map[string]int64{"d_conv": 4, "SILU": 1, "NS": int64(ns)}, cArgs,
				map[string]bind{"cache": whole(cCache), "conv_kernel": whole(w), "x_cur": whole(x), "conv_state_dst": cWindow, "ids": cIDsRep, "dst": whole(cDst)})
		} else {
			err = b.dispatch(ops.GatherOp, ir.Portable, map[string]int64{},
				map[string]uint32{"row_len": uint32(row), "n_seqs": uint32(n), "rs_head": uint32(cRS)},
				map[string]bind{"cache": whole(cCache), "ids": cIDsRep, "scratch": whole(cScratch)})
			if err == nil {
				err = b.dispatch("ssm_conv_update_inplace_ids", native, map[string]int64{"d_conv": 4, "SILU": 1}, cArgs, map[string]bind{
					"cache": whole(cCache), "conv_kernel": whole(w), "x_cur": whole(x), "conv_state_dst": cWindow,
					"ids": cIDsRep, "scratch": whole(cScratch), "dst": whole(cDst)})
			}
		}
		if err != nil {
			return b.job, entry{}, err
		}
		gArgs := map[string]uint32{"sd1": uint32(D), "rs_head": uint32(gRS)}
		for a, x := range gdnArgs {
			gArgs[a] = x
		}
		gBind := map[string]bind{"q": whole(q), "k": whole(k), "v": whole(v), "g": whole(g), "beta": whole(beta), "cache": whole(gCache),
			"dst": whole(gDst), "state_dst": gWindow, "ids": gIDsRep, "scratch": whole(gScratch)}
		// An Aliased tier's steps with these ids (identity) run the chained
		// compute, which this bench leaves out (gather + compute, as past
		// the tiers).
		if bt, ok := ops.TargetOf("vulkan").GDNBatchAt(sv, n); ok && !bt.Aliased {
			err = b.dispatch("gated_delta_net_inplace_ids_batched", native,
				batchVariant(bt), gArgs, gBind)
		} else {
			nw, cpw := ops.TargetOf("vulkan").GDNTiling(sv)
			if snw, scpw, maxSeqs, ok := ops.TargetOf("vulkan").GDNSmallTiling(sv); ok && n <= maxSeqs {
				nw, cpw = snw, scpw
			}
			err = b.dispatch(ops.GatherOp, ir.Portable, map[string]int64{},
				map[string]uint32{"row_len": uint32(D), "n_seqs": uint32(n), "rs_head": uint32(gRS)},
				map[string]bind{"cache": whole(gCache), "ids": gIDsRep, "scratch": whole(gScratch)})
			if err == nil {
				err = b.dispatch("gated_delta_net_inplace_ids", native, map[string]int64{"S_v": sv, "KDA": 0, "NW": int64(nw), "CPW": int64(cpw)}, gArgs, gBind)
			}
		}
		if err != nil {
			return b.job, entry{}, err
		}
	}
	impl := "unfused"
	if fused {
		impl = "fused"
	}
	e := entry{bench: "layer", shape: fmt.Sprintf("%s H=%d C=%d", m.name, H, C), n: n, impl: impl,
		bytes: 2 * float64(slotBytes+rowBytes) * float64(n)}
	b.timing(cfg, &e)
	return b.job, e, nil
}
