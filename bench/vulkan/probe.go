package main

// Probes of op B at one sequence (-only probe): where the compute
// dispatch's time goes above the empty dispatch. Each probe is a stripped
// model of the generated kernel (generated/vulkan/gated_delta_net_inplace_ids.comp,
// S_v 128, KDA off, identity ids) at the same tiling, grid, window and
// pool as gdnJob, with one part of the work kept or removed; and the
// dispatches the floor is made of (the empty shader over op B's grid, the
// window streamed in place, one thread's dependent loads). Timing models,
// not kernels: their results are not checked.

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/tools/spvbuild"
	"github.com/kernelgen/kernelgen/verify/vkrun"
	"github.com/kernelgen/kernelgen/verify/vulkan"
)

// probeShader is op B's compute at S_v 128 (W 32 lanes, R 4 rows each),
// NW columns in flight per workgroup, CPW per column group, with the parts
// switched by defines: IDS (the source row read through ids[s]; else the
// sequence's own row), MATH (the token loads and the recurrence; else the
// state is loaded and stored back), SHUFFLE (the two subgroup reductions
// per column; else each lane keeps its partial sum), HOIST (the token
// loads issued before ids[s] and the state, overlapping their latency),
// SPEC (the sequence's own slot loaded beside ids[s], the steady-decode
// source, and reloaded from the row ids names when that is another).
const probeShader = `#version 450
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_shuffle : enable
#extension GL_EXT_control_flow_attributes : enable
layout(local_size_x = 32, local_size_y = NW) in;
layout(binding = 0, std430) readonly buffer buf_q { float q[]; };
layout(binding = 1, std430) readonly buffer buf_k { float k[]; };
layout(binding = 2, std430) readonly buffer buf_v { float v[]; };
layout(binding = 3, std430) readonly buffer buf_g { float g[]; };
layout(binding = 4, std430) readonly buffer buf_beta { float beta[]; };
layout(binding = 5, std430) buffer buf_state { float state[]; };
layout(binding = 6, std430) writeonly buffer buf_dst { float dst[]; };
layout(binding = 7, std430) readonly buffer buf_ids { int ids[]; };
layout(push_constant) uniform parameter { uint H; uint rs_head; float scale; } pc;
const uint S_v = 128u, W = 32u, R = 4u;
void main() {
    uint h = gl_WorkGroupID.x, s = gl_WorkGroupID.y, lane = gl_LocalInvocationID.x;
    uint col0 = gl_WorkGroupID.z * (NW * CPW) + gl_LocalInvocationID.y;
    uint block = S_v * S_v;
    uint qk = (s * pc.H + h) * S_v;
#if MATH && HOIST
    float q_reg[R], k_reg[R];
    [[unroll]] for (uint r = 0u; r < R; ++r) { q_reg[r] = q[qk + r * W + lane]; k_reg[r] = k[qk + r * W + lane]; }
    float gate = exp(g[s * pc.H + h]);
    float beta_t = beta[s * pc.H + h];
#endif
#if IDS
    uint row = uint(ids[s]) - pc.rs_head;
#else
    uint row = s;
#endif
    float sh[CPW * R];
#if SPEC
    // the own slot loaded beside ids[s], not after it; reloaded when ids
    // names another row
    uint own = (s * pc.H + h) * block;
    [[unroll]] for (uint cc = 0u; cc < CPW; ++cc)
        [[unroll]] for (uint r = 0u; r < R; ++r) sh[cc * R + r] = state[own + (col0 + cc * NW) * S_v + r * W + lane];
    if (row != s) {
#endif
    uint base = (row * pc.H + h) * block;
    [[unroll]] for (uint cc = 0u; cc < CPW; ++cc)
        [[unroll]] for (uint r = 0u; r < R; ++r) sh[cc * R + r] = state[base + (col0 + cc * NW) * S_v + r * W + lane];
#if SPEC
    }
#endif
#if MATH
#if !HOIST
    float q_reg[R], k_reg[R];
    [[unroll]] for (uint r = 0u; r < R; ++r) { q_reg[r] = q[qk + r * W + lane]; k_reg[r] = k[qk + r * W + lane]; }
    float gate = exp(g[s * pc.H + h]);
    float beta_t = beta[s * pc.H + h];
#endif
    [[unroll]] for (uint cc = 0u; cc < CPW; ++cc) {
        uint col = col0 + cc * NW;
        float kv = 0.0;
        [[unroll]] for (uint r = 0u; r < R; ++r) { sh[cc * R + r] *= gate; kv += sh[cc * R + r] * k_reg[r]; }
#if SHUFFLE
        [[unroll]] for (uint o = W / 2u; o > 0u; o >>= 1u) kv += subgroupShuffleXor(kv, o);
#endif
        float delta = (v[qk + col] - kv) * beta_t;
        float attn = 0.0;
        [[unroll]] for (uint r = 0u; r < R; ++r) { sh[cc * R + r] += k_reg[r] * delta; attn += sh[cc * R + r] * q_reg[r]; }
#if SHUFFLE
        [[unroll]] for (uint o = W / 2u; o > 0u; o >>= 1u) attn += subgroupShuffleXor(attn, o);
#endif
        if (lane == 0u) dst[qk + col] = attn * pc.scale;
    }
#endif
    uint out_base = (s * pc.H + h) * block;
    [[unroll]] for (uint cc = 0u; cc < CPW; ++cc)
        [[unroll]] for (uint r = 0u; r < R; ++r) state[out_base + (col0 + cc * NW) * S_v + r * W + lane] = sh[cc * R + r];
}
`

// streamShader moves the window in place, 16 bytes per invocation
// (x ^ pc.salt, salt 0: the compiler cannot drop the store): the copy
// rate at the state's size, with the dispatch's ramp-up and drain.
const streamShader = `#version 450
layout(local_size_x = 256) in;
layout(binding = 0, std430) buffer buf_x { uvec4 x[]; };
layout(push_constant) uniform parameter { uint n; uint salt; } pc;
void main() {
    uint i = gl_WorkGroupID.x * 256u + gl_LocalInvocationID.x;
    if (i < pc.n) x[i] = x[i] ^ uvec4(pc.salt);
}
`

// touchShader is one thread's dependent chain: ids[0], then one float of
// the row it names, written back: two DRAM round trips and a store, the
// latency under any kernel that reads its state through ids.
const touchShader = `#version 450
layout(local_size_x = 1) in;
layout(binding = 0, std430) buffer buf_x { float x[]; };
layout(binding = 1, std430) readonly buffer buf_ids { int ids[]; };
layout(push_constant) uniform parameter { uint rs_head; uint row; } pc;
void main() {
    uint r = uint(ids[0]) - pc.rs_head;
    x[r * pc.row] = x[r * pc.row] + 1.0;
}
`

// emptyGrid is the empty shader at op B's workgroup size.
const emptyGrid = `#version 450
layout(local_size_x = 32, local_size_y = NW) in;
void main() {}
`

// probeKind names one probe.
type probeKind struct {
	name    string
	src     string
	defines map[string]string
}

var probeKinds = []probeKind{
	{"empty grid", emptyGrid, nil},
	{"stream", streamShader, nil},
	{"touch", touchShader, nil},
	{"state", probeShader, map[string]string{"IDS": "0", "MATH": "0", "SHUFFLE": "0", "HOIST": "0", "SPEC": "0"}},
	{"state ids", probeShader, map[string]string{"IDS": "1", "MATH": "0", "SHUFFLE": "0", "HOIST": "0", "SPEC": "0"}},
	{"math ids", probeShader, map[string]string{"IDS": "1", "MATH": "1", "SHUFFLE": "0", "HOIST": "0", "SPEC": "0"}},
	{"full ids", probeShader, map[string]string{"IDS": "1", "MATH": "1", "SHUFFLE": "1", "HOIST": "0", "SPEC": "0"}},
	{"full ids hoist", probeShader, map[string]string{"IDS": "1", "MATH": "1", "SHUFFLE": "1", "HOIST": "1", "SPEC": "0"}},
	{"full ids spec", probeShader, map[string]string{"IDS": "1", "MATH": "1", "SHUFFLE": "1", "HOIST": "0", "SPEC": "1"}},
	{"full noids", probeShader, map[string]string{"IDS": "0", "MATH": "1", "SHUFFLE": "1", "HOIST": "0", "SPEC": "0"}},
}

// probeTilings are the tilings the op B probes run at: the glue's small-n
// one first.
func probeTilings() []tiling {
	nw, cpw, _, _ := ops.TargetOf("vulkan").GDNSmallTiling(sv)
	out := []tiling{{nw, cpw}}
	for _, t := range []tiling{{1, 1}, {2, 1}, {8, 1}} {
		if t != out[0] {
			out = append(out, t)
		}
	}
	return out
}

// probeJob is one probe at H heads, one sequence, tiling t; the pool and
// the moving window as gdnJob's.
func probeJob(cfg config, comp *vulkan.Compiler, H int, t tiling, p probeKind) (vkrun.Job, entry, error) {
	const n = 1
	b := &builder{comp: comp, rng: rand.New(rand.NewPCG(uint64(H), 7))}
	D := sv * sv * H
	slotBytes := uint64(4 * D)
	slots, err := pool(n, cfg.runs(), slotBytes, cfg.gdnPool, cfg.poolCap)
	if err != nil {
		return b.job, entry{}, err
	}
	head := func(rep int) int { return rep * n % (slots - n) }
	defs := map[string]string{"NW": strconv.Itoa(t.nw), "CPW": strconv.Itoa(t.cpw)}
	for k, v := range p.defines {
		defs[k] = v
	}
	spv, err := comp.Build(context.Background(), []spvbuild.Unit{{File: "bench/vulkan/probe.comp", Source: []byte(p.src), Defines: defs,
		Name: fmt.Sprintf("bench probe %s %dx%d", p.name, t.nw, t.cpw)}})
	if err != nil {
		return b.job, entry{}, err
	}
	tok := uint64(4 * sv * H * n)
	cache := b.buffer(uint64(slots)*slotBytes, b.f32s(1<<14, -1, 1))
	idsBytes := make([]byte, uint64(cfg.runs())*idsStride(n))
	for rep := 0; rep < cfg.runs(); rep++ {
		putIDs(idsBytes, rep, []int32{int32(head(rep))})
	}
	idsBuf := b.buffer(0, idsBytes)
	window := func(rep int) uint64 { return uint64(head(rep)) * slotBytes }
	var bufs []int
	if p.src == probeShader {
		q := b.buffer(tok, b.f32s(4096, -1, 1))
		k := b.buffer(tok, b.f32s(4096, -1, 1))
		v := b.buffer(tok, b.f32s(4096, -0.3, 5))
		g := b.buffer(uint64(4*H*n), b.f32s(1024, -20, -1e-4))
		beta := b.buffer(uint64(4*H*n), b.f32s(1024, 0, 1))
		dst := b.buffer(tok, nil)
		bufs = []int{q, k, v, g, beta, cache, dst, idsBuf}
	}
	for rep := 0; rep < cfg.runs(); rep++ {
		d := vkrun.Dispatch{SPIRV: spv[0]}
		push := func(xs ...uint32) {
			for _, x := range xs {
				d.Push = binary.LittleEndian.AppendUint32(d.Push, x)
			}
		}
		idsBind := uint64(rep) * idsStride(n)
		switch p.src {
		case emptyGrid:
			d.Groups = [3]uint32{uint32(H), n, uint32(sv / (t.nw * t.cpw))}
		case streamShader:
			words := uint32(uint64(n) * slotBytes / 16)
			push(words, 0)
			d.Groups = [3]uint32{(words + 255) / 256, 1, 1}
			d.Bindings, d.Offsets, d.Ranges = []int{cache}, []uint64{window(rep)}, []uint64{uint64(n) * slotBytes}
		case touchShader:
			push(uint32(head(rep)), uint32(D))
			d.Groups = [3]uint32{1, 1, 1}
			d.Bindings = []int{cache, idsBuf}
			d.Offsets = []uint64{window(rep), idsBind}
			d.Ranges = []uint64{uint64(n) * slotBytes, uint64(4 * n)}
		default:
			push(uint32(H), uint32(head(rep)), math.Float32bits(float32(1/math.Sqrt(sv))))
			d.Groups = [3]uint32{uint32(H), n, uint32(sv / (t.nw * t.cpw))}
			d.Bindings = bufs
			d.Offsets = make([]uint64, len(bufs))
			d.Ranges = make([]uint64, len(bufs))
			d.Offsets[5], d.Ranges[5] = window(rep), uint64(n)*slotBytes
			d.Offsets[7], d.Ranges[7] = idsBind, uint64(4*n)
		}
		b.job.Dispatches = append(b.job.Dispatches, d)
	}
	impl := fmt.Sprintf("probe %s %dx%d", p.name, t.nw, t.cpw)
	if p.src == streamShader || p.src == touchShader {
		impl = "probe " + p.name
	}
	e := entry{bench: "gdn_probe", shape: fmt.Sprintf("H=%d", H), n: n, impl: impl, bytes: 2 * float64(slotBytes) * n}
	b.timing(cfg, &e)
	return b.job, e, nil
}

// probeJobs lists every probe at every head count: the floors once, the
// op B models at each tiling.
func probeJobs(cfg config, comp *vulkan.Compiler, add func(vkrun.Job, entry, error) error) error {
	for _, H := range cfg.heads {
		for _, p := range probeKinds {
			ts := probeTilings()
			if p.src == streamShader || p.src == touchShader {
				ts = ts[:1]
			}
			for _, t := range ts {
				if err := add(probeJob(cfg, comp, H, t, p)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
