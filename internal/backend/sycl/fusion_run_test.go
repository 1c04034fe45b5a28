package sycl

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops/fusion"
	vfusion "github.com/kernelgen/kernelgen/verify/fusion"
)

// fusionRunner is a host program over both steps' headers (the host
// emulation's SYCL): it reads a graph (graphText) and its memory, matches
// it with the generated matchers, runs the step of one anchor node as the
// graph loop's call does, and writes the memory back.
const fusionRunner = `#include "gdn-fusion.hpp"
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

static ggml_op op_of(const std::string & s) {
    static const std::pair<const char *, ggml_op> ops[] = {
        {"NONE", GGML_OP_NONE}, {"VIEW", GGML_OP_VIEW}, {"RESHAPE", GGML_OP_RESHAPE}, {"TRANSPOSE", GGML_OP_TRANSPOSE},
        {"PERMUTE", GGML_OP_PERMUTE}, {"GET_ROWS", GGML_OP_GET_ROWS}, {"CPY", GGML_OP_CPY}, {"CONCAT", GGML_OP_CONCAT},
        {"SSM_CONV", GGML_OP_SSM_CONV}, {"ADD", GGML_OP_ADD}, {"SILU", GGML_OP_UNARY}, {"GATED_DELTA_NET", GGML_OP_GATED_DELTA_NET},
        {"SCALE", GGML_OP_SCALE}, {"MUL_MAT", GGML_OP_MUL_MAT}, {"L2_NORM", GGML_OP_L2_NORM}, {"CONT", GGML_OP_CONT},
        {"MUL", GGML_OP_MUL}, {"SIGMOID", GGML_OP_SIGMOID}, {"RMS_NORM", GGML_OP_RMS_NORM}, {"SUM", GGML_OP_SUM},
    };
    for (const auto & o : ops) {
        if (s == o.first) {
            return o.second;
        }
    }
    fprintf(stderr, "no op %s\n", s.c_str());
    exit(2);
}

int main(int argc, char ** argv) {
    if (argc != 5) {
        return 2;
    }
    std::ifstream in(argv[1]);
    size_t n_tensors, n_nodes, size;
    in >> n_tensors >> n_nodes >> size;
    std::vector<char> arena(size);
    std::ifstream(argv[2], std::ios::binary).read(arena.data(), size);
    std::vector<ggml_tensor> T(n_tensors);
    static ggml_backend_buffer buffers[8];
    for (size_t i = 0; i < n_tensors; ++i) {
        std::string op, type;
        int n_params, n_src, view_src, output, buffer;
        long long view_offs, data;
        in >> op >> type;
        T[i].op = op_of(op);
        T[i].type = type == "i32" ? GGML_TYPE_I32 : type == "f16" ? GGML_TYPE_F16 : GGML_TYPE_F32;
        for (int d = 0; d < 4; ++d) {
            in >> T[i].ne[d] >> T[i].nb[d];
        }
        in >> n_params;
        for (int j = 0; j < n_params; ++j) {
            in >> T[i].op_params[j];
        }
        if (op == "SILU") {
            T[i].op_params[0] = GGML_UNARY_OP_SILU;
        }
        in >> n_src;
        for (int j = 0; j < n_src; ++j) {
            int s;
            in >> s;
            T[i].src[j] = s < 0 ? nullptr : &T[s];
        }
        in >> view_src >> view_offs >> output >> buffer >> data;
        T[i].view_src = view_src < 0 ? nullptr : &T[view_src];
        T[i].view_offs = view_offs;
        T[i].flags = output ? GGML_TENSOR_FLAG_OUTPUT : 0;
        T[i].buffer = &buffers[buffer];
        buffers[buffer].context = nullptr;
        T[i].data = arena.data() + data;
    }
    std::vector<ggml_tensor *> nodes(n_nodes);
    for (size_t i = 0; i < n_nodes; ++i) {
        int j;
        in >> j;
        nodes[i] = &T[j];
    }
    const int owned = std::atoi(argv[4]);
    ggml_cgraph g = { (int) n_nodes, nodes.data() };
    ggml_sycl_gdn_fusion_matches ms;
    ggml_sycl_gdn_fusion_find(&g, [&](const ggml_tensor * cache) { return cache->buffer == &buffers[owned]; }, ms);
    const ggml_tensor * anchor = nodes[std::atoi(argv[3])];
    if (ms.gdn_state.count(anchor) == 0 && ms.conv_state.count(anchor) == 0) {
        fprintf(stderr, "the generated matcher does not anchor a step at %s\n", anchor->name);
        return 3;
    }
    ggml_backend_sycl_context ctx;
    if (!ggml_sycl_gdn_fusion_run(ctx, ms, anchor)) {
        return 4;
    }
    std::ofstream(argv[2], std::ios::binary).write(arena.data(), size);
    return 0;
}
`

// graphText lays g out for fusionRunner: every tensor (its op, shape,
// params, srcs, view, output flag, buffer and byte offset in one arena, a
// view at its root's plus its offset), then the nodes; roots gives each
// root's offset, buffers each buffer's index.
func graphText(g *fusion.Graph, buffers map[string]int) (text string, roots map[*fusion.Tensor]int64, size int64) {
	index := map[*fusion.Tensor]int{}
	roots = map[*fusion.Tensor]int64{}
	var all []*fusion.Tensor
	var add func(t *fusion.Tensor)
	add = func(t *fusion.Tensor) {
		if t == nil {
			return
		}
		if _, ok := index[t]; ok {
			return
		}
		for _, s := range append(append([]*fusion.Tensor{}, t.Src...), t.ViewSrc) {
			add(s)
		}
		index[t] = len(all)
		all = append(all, t)
	}
	for _, n := range g.Nodes {
		add(n)
	}
	for _, t := range all {
		if t.ViewSrc == nil {
			roots[t] = size
			size += (t.Elems()*4 + 64 + 255) / 256 * 256
		}
		if _, ok := buffers[t.Root().Buffer]; !ok {
			buffers[t.Root().Buffer] = len(buffers)
		}
	}
	var w strings.Builder
	fmt.Fprintf(&w, "%d %d %d\n", len(all), len(g.Nodes), size)
	for _, t := range all {
		fmt.Fprintf(&w, "%s %s", t.Op, t.Type)
		for d := 0; d < 4; d++ {
			fmt.Fprintf(&w, " %d %d", t.Ne[d], t.Nb[d])
		}
		params := t.Params
		if t.Op == "SCALE" {
			params = nil
		}
		fmt.Fprintf(&w, " %d", len(params))
		for _, p := range params {
			fmt.Fprintf(&w, " %d", p)
		}
		fmt.Fprintf(&w, " %d", len(t.Src))
		for _, s := range t.Src {
			if s == nil {
				fmt.Fprintf(&w, " -1")
			} else {
				fmt.Fprintf(&w, " %d", index[s])
			}
		}
		vs := -1
		if t.ViewSrc != nil {
			vs = index[t.ViewSrc]
		}
		out := 0
		if t.Output {
			out = 1
		}
		fmt.Fprintf(&w, " %d %d %d %d %d\n", vs, t.ViewOffs, out, buffers[t.Root().Buffer], roots[t.Root()]+t.ViewOffs)
	}
	for _, n := range g.Nodes {
		fmt.Fprintf(&w, "%d\n", index[n])
	}
	return w.String(), roots, size
}

// TestFusionStepRunsLikeTheReference: the SYCL step as a whole (the
// generated matchers find the match, the run binds the gather and the
// kernel from the plan and launches them) under host emulation, at each
// anchor of llama.cpp's decode graph while the Go reference runs every
// other node, leaves the outputs and both whole caches as the unfused
// graph does: ids that rotate the window, share a row or name rows outside
// it, kv_head > 0, S_v 64 and 128, KDA, d_conv 2..4, and K > 1 snapshots
// (both fused, every slot written in place), bit for bit: the Go reference runs
// SYCL's native contract, as the emulated kernels do.
func TestFusionStepRunsLikeTheReference(t *testing.T) {
	h := newStepHost(t)
	h.write("runner.cpp", []byte(fusionRunner))
	if err := h.compile("-o", "runner", "runner.cpp"); err != nil {
		t.Fatalf("the runner does not build: %v", err)
	}
	bin := h.path("runner")

	c := vfusion.Contract{Arith: ir.Native(name), Target: name}
	be := fusion.Backend{Target: name, Buffers: []string{"cache", "compute", "input", "weights"}}
	for i, l := range []fusion.Layer{
		{SV: 64, H: 2, HK: 1, Seqs: 3, T: 1, K: 1, DConv: 4, C: 16, MemSize: 6, KVHead: 2, RowZero: -1},
		{SV: 128, H: 1, HK: 1, KDA: true, Seqs: 4, T: 1, K: 1, DConv: 3, C: 24, MemSize: 7, KVHead: 1, RowZero: 2},
		{SV: 64, H: 2, HK: 2, Bias: true, Seqs: 5, T: 1, K: 1, DConv: 2, C: 8, MemSize: 5, KVHead: 0, RowZero: -1},
		{SV: 64, H: 2, HK: 1, Seqs: 3, T: 3, K: 3, DConv: 4, C: 16, MemSize: 5, KVHead: 1, RowZero: -1},
	} {
		for _, kind := range []string{"rotation", "shared", "outside"} {
			t.Run(fmt.Sprintf("%d_%s", i, kind), func(t *testing.T) {
				b := l.Build()
				state, _ := fusion.StatePattern.Find(b.G, be)
				conv, _ := fusion.ConvPattern.Find(b.G, be)
				if len(state) != 1 || len(conv) != 1 {
					t.Fatalf("%d state, %d conv matches", len(state), len(conv))
				}
				ids := make([]int32, l.Seqs)
				for s := range ids {
					switch kind {
					case "rotation":
						ids[s] = int32(l.KVHead + (s+1)%l.Seqs)
					case "shared":
						ids[s] = int32(l.KVHead + l.Seqs/2)
					default:
						ids[s] = int32((l.KVHead + l.Seqs + s) % l.MemSize)
					}
				}
				want := vfusion.NewMemory(b.G, uint64(i+1))
				copy(want.I32[b.Ids], ids)
				got := want.Clone()
				if err := c.RunUnfused(b.G, want); err != nil {
					t.Fatal(err)
				}
				buffers := map[string]int{}
				text, roots, size := graphText(b.G, buffers)
				h.write("graph.txt", []byte(text))
				ran := 0
				sycl := func(m *vfusion.Memory, mt *fusion.Match) error {
					arena := make([]byte, size)
					for r, x := range m.F32 {
						for j, v := range x {
							binary.LittleEndian.PutUint32(arena[roots[r]+int64(4*j):], math.Float32bits(v))
						}
					}
					for r, x := range m.I32 {
						for j, v := range x {
							binary.LittleEndian.PutUint32(arena[roots[r]+int64(4*j):], uint32(v))
						}
					}
					h.write("arena.bin", arena)
					anchor := -1
					for j, n := range b.G.Nodes {
						if n == mt.Anchor {
							anchor = j
						}
					}
					ctx, cancel := context.WithTimeout(context.Background(), 60e9)
					defer cancel()
					out, err := exec.CommandContext(ctx, bin, h.path("graph.txt"), h.path("arena.bin"), fmt.Sprint(anchor), fmt.Sprint(buffers["cache"])).CombinedOutput()
					if err != nil {
						return fmt.Errorf("%s at %s: %v\n%s", mt.P.Name, mt.Anchor.Name, err, out)
					}
					arena, err = os.ReadFile(h.path("arena.bin"))
					if err != nil {
						return err
					}
					for r, x := range m.F32 {
						for j := range x {
							x[j] = math.Float32frombits(binary.LittleEndian.Uint32(arena[roots[r]+int64(4*j):]))
						}
					}
					for r, x := range m.I32 {
						for j := range x {
							x[j] = int32(binary.LittleEndian.Uint32(arena[roots[r]+int64(4*j):]))
						}
					}
					ran++
					return nil
				}
				if err := c.RunFusedBy(b.G, got, append(state, conv...), sycl); err != nil {
					t.Fatal(err)
				}
				if ran != len(state)+len(conv) {
					t.Fatalf("%d steps ran, want %d", ran, len(state)+len(conv))
				}
				if d := sameMemory(append(state, conv...), got, want); d != "" {
					t.Error(d)
				}
			})
		}
	}
}

// sameMemory is "" where got holds want's bits in every root a fused run
// must leave as the unfused one does: every root but the fused nodes' own
// (scratch or unwritten), and of the GDN's result only the attention (its
// state region is the gather's scratch).
func sameMemory(matches []*fusion.Match, got, want *vfusion.Memory) string {
	fused := map[*fusion.Tensor]bool{}
	for _, m := range matches {
		for _, t := range m.Fused {
			if t != m.Bound["out"] {
				fused[t] = true
			}
		}
	}
	for root, w := range want.I32 {
		for i := range w {
			if got.I32[root][i] != w[i] {
				return fmt.Sprintf("%s[%d]: %d, want %d", root.Name, i, got.I32[root][i], w[i])
			}
		}
	}
	for root, w := range want.F32 {
		g, n := got.F32[root], len(w)
		if root.Op == "GATED_DELTA_NET" {
			v := root.Src[2]
			n = int(v.Ne[0] * v.Ne[1] * v.Ne[2] * v.Ne[3])
		} else if fused[root] {
			continue
		}
		for i := 0; i < n; i++ {
			if math.Float32bits(g[i]) != math.Float32bits(w[i]) {
				return fmt.Sprintf("%s[%d]: %v, want %v (bit for bit)", root.Name, i, g[i], w[i])
			}
		}
	}
	return ""
}
