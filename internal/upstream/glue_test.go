package upstream_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	backendcuda "github.com/kernelgen/kernelgen/internal/backend/cuda"
	backendsycl "github.com/kernelgen/kernelgen/internal/backend/sycl"
	"github.com/kernelgen/kernelgen/internal/upstream"

	"github.com/kernelgen/kernelgen/internal/registry"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/templates"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/emulate"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

// glueTarget is the registered backend's glue.
func glueTarget(t *testing.T, name string) *templates.Target {
	t.Helper()
	bs, err := registry.Resolve(name)
	if err != nil || bs[0].Glue() == nil {
		t.Fatalf("backend %s: %v (no glue?)", name, err)
	}
	return bs[0].Glue()
}

// ggmlStandIn is the part of ggml.h the glue reads, written for this test
// (the names follow ggml's).
const ggmlStandIn = `#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <vector>

enum ggml_type { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_I32 };
enum ggml_op { GGML_OP_NONE, GGML_OP_GATED_DELTA_NET, GGML_OP_SSM_CONV };

struct ggml_tensor {
    ggml_type type = GGML_TYPE_F32;
    int64_t ne[4] = {1, 1, 1, 1};
    size_t nb[4] = {4, 4, 4, 4};
    ggml_op op = GGML_OP_NONE;
    int32_t op_params[16] = {};
    ggml_tensor * src[10] = {};
    void * data = nullptr;
};

static inline int32_t ggml_get_op_params_i32(const ggml_tensor * t, uint32_t i) { return t->op_params[i]; }

static inline bool ggml_is_contiguous(const ggml_tensor * t) {
    size_t next = 4;
    for (int i = 0; i < 4; i++) {
        if (t->ne[i] != 1 && t->nb[i] != next) return false;
        next = t->nb[i] * t->ne[i];
    }
    return true;
}

static inline bool ggml_are_same_shape(const ggml_tensor * a, const ggml_tensor * b) {
    for (int i = 0; i < 4; i++) if (a->ne[i] != b->ne[i]) return false;
    return true;
}

static inline bool ggml_are_same_stride(const ggml_tensor * a, const ggml_tensor * b) {
    for (int i = 0; i < 4; i++) if (a->nb[i] != b->nb[i]) return false;
    return true;
}

static inline bool ggml_is_contiguous_rows(const ggml_tensor * t) { return t->ne[0] == 1 || t->nb[0] == 4; }

#define GGML_ABORT(...) (fprintf(stderr, __VA_ARGS__), abort())

// GGML_TENSOR_LOCALS: prefix0..prefix3 from the tensor's ne or nb, 0 for a null tensor
#define KG_TENSOR_LOCAL(type, prefix, i, t, field) const type prefix##i = (t) ? (t)->field[i] : 0; (void) prefix##i;
#define GGML_TENSOR_LOCALS(type, prefix, t, field) KG_TENSOR_LOCAL(type, prefix, 0, t, field) \
    KG_TENSOR_LOCAL(type, prefix, 1, t, field) KG_TENSOR_LOCAL(type, prefix, 2, t, field) KG_TENSOR_LOCAL(type, prefix, 3, t, field)
`

// The stand-ins for each backend's common header: its context, pool and
// launch, over the host emulation runtime.
var commonStandIn = map[string]string{
	"cuda": `#pragma once
#include "ggml.h"
typedef int cudaStream_t;
struct ggml_cuda_pool {};
template <typename T> struct ggml_cuda_pool_alloc {
    std::vector<T> v;
    explicit ggml_cuda_pool_alloc(ggml_cuda_pool &) {}
    T * alloc(size_t n) { v.resize(n); return v.data(); }
};
struct ggml_backend_cuda_context {
    ggml_cuda_pool p;
    cudaStream_t stream() { return 0; }
    ggml_cuda_pool & pool() { return p; }
};
struct ggml_cuda_kernel_launch_params {
    dim3 grid, block;
    ggml_cuda_kernel_launch_params(dim3 g, dim3 b, int, cudaStream_t) : grid(g), block(b) {}
};
template <typename K, typename... A>
static void ggml_cuda_kernel_launch(K kernel, const ggml_cuda_kernel_launch_params & p, A &&... a) {
    hostemu::cuda::launch("glue", p.grid, p.block, [&] { kernel(a...); });
}
#define SUPPORTS(op) ggml_cuda_fused_supports_op(op)
#define COMPUTE(op) ggml_cuda_fused_compute_forward(ctx, op)
typedef ggml_backend_cuda_context context;
` + fastdivStandIn,
	"sycl": `#pragma once
#include "ggml.h"
#define WARP_SIZE 16
namespace dpct { typedef sycl::queue * queue_ptr; }
struct ggml_sycl_pool {};
template <typename T> struct ggml_sycl_pool_alloc {
    std::vector<T> v;
    explicit ggml_sycl_pool_alloc(ggml_sycl_pool &) {}
    T * alloc(size_t n) { v.resize(n); return v.data(); }
};
struct ggml_backend_sycl_context {
    sycl::queue q;
    ggml_sycl_pool p;
    dpct::queue_ptr stream() { return &q; }
    ggml_sycl_pool & pool() { return p; }
};
#define SUPPORTS(op) ggml_sycl_fused_supports_op(op)
#define COMPUTE(op) ggml_sycl_fused_compute_forward(ctx, op)
typedef ggml_backend_sycl_context context;
`,
}

// glueHarness builds the node a job describes (srcI and dst: buffers with
// their type, ne and nb as args; op and op_params as args), asks the
// glue's supports_op and runs it through the glue's compute_forward.
const glueHarness = `
#include <string>
void hostemu_run(hostemu::Job& job) {
    static ggml_tensor t[11];
    ggml_tensor * node = &t[10];
    auto fill = [&](ggml_tensor * x, const std::string & name) {
        x->type = job.arg_u32(name + "_i32") ? GGML_TYPE_I32 : GGML_TYPE_F32;
        for (int d = 0; d < 4; d++) {
            x->ne[d] = job.arg_u32(name + "_ne" + std::to_string(d));
            x->nb[d] = job.arg_u32(name + "_nb" + std::to_string(d));
        }
        x->data = x->type == GGML_TYPE_I32 ? (void *) job.buffer<int32_t>(name) : (void *) job.buffer<float>(name);
    };
    for (int i = 0; i < 10; i++) {
        const std::string name = "src" + std::to_string(i);
        if (job.has_buffer(name)) {
            fill(&t[i], name);
            node->src[i] = &t[i];
        }
    }
    fill(node, "dst");
    node->op = job.arg_u32("conv") ? GGML_OP_SSM_CONV : GGML_OP_GATED_DELTA_NET;
    node->op_params[0] = job.arg_i32("param0");
    node->op_params[1] = job.arg_i32("param1");
    if (SUPPORTS(node) != 1) {
        hostemu::detail::fail("supports_op does not take the node");
    }
    context ctx;
    if (!COMPUTE(node)) {
        hostemu::detail::fail("compute_forward did not run the node");
    }
}
`

// tensor is a node source as the glue sees it.
type tensor struct {
	buf    string // the case buffer
	ne, nb [4]int64
	i32    bool
}

// node lays out a case of a fused op as ggml's builders shape the node
// (ops/gdn.go, ops/conv.go name the args by the tensors they come from).
func node(c *cases.Case) (srcs map[int]tensor, dst tensor, conv bool, params [2]int64, attn int64, err error) {
	var compute cases.Launch
	for _, l := range c.Launches {
		if l.Op.Fusion != "" && !l.Op.ArithFree() {
			compute = l
		}
	}
	role := map[string]string{}
	for j, kb := range compute.Kernel.Buffers {
		role[kb.Role] = compute.Bind[j]
	}
	a := func(n string) int64 { return int64(compute.Args[n]) }
	p := func(n string) int64 { return compute.Params[n] }
	length := func(name string) int64 { return int64(c.Buffer(name).Len()) }
	contiguous := func(ne [4]int64) [4]int64 {
		return [4]int64{4, 4 * ne[0], 4 * ne[0] * ne[1], 4 * ne[0] * ne[1] * ne[2]}
	}
	srcs = map[int]tensor{}
	set := func(i int, ne, nb [4]int64) { srcs[i] = tensor{buf: role[fmt.Sprintf("src%d", i)], ne: ne, nb: nb} }
	switch compute.Op.Fusion {
	case "A", "B":
		sv, T, n, H := p("S_v"), a("n_tokens"), a("n_seqs"), a("H")
		gd := int64(1)
		if p("KDA") == 1 {
			gd = sv
		}
		q := [4]int64{sv, a("neq1"), T, n / a("rq3")}
		set(0, q, [4]int64{4, 4 * a("sq1"), 4 * a("sq2"), 4 * a("sq3")})
		set(1, q, [4]int64{4, 4 * a("sq1"), 4 * a("sq2"), 4 * a("sq3")})
		set(2, [4]int64{sv, H, T, n}, [4]int64{4, 4 * a("sv1"), 4 * a("sv2"), 4 * a("sv3")})
		set(3, [4]int64{gd, H, T, n}, [4]int64{4, 4 * a("sg1"), 4 * a("sg2"), 4 * a("sg3")})
		set(4, [4]int64{1, H, T, n}, [4]int64{4, 4 * a("sb1"), 4 * a("sb2"), 4 * a("sb3")})
		D := sv * sv * H
		state := [4]int64{sv, sv, H, length(role["src5"]) / D}
		set(5, state, contiguous(state))
		set(6, [4]int64{D, length(role["src6"]) / D, 1, 1}, [4]int64{4, 4 * a("sd1"), 4 * length(role["src6"]), 4 * length(role["src6"])})
		attn = sv * H * T * n
		dne := [4]int64{sv * H, T*n + sv*n, 1, 1}
		dst = tensor{buf: role["dst"], ne: dne, nb: contiguous(dne)}
		params = [2]int64{1, a("rs_head")}
		if compute.Op.Fusion == "B" {
			srcs[7] = tensor{buf: role["src7"], ne: [4]int64{n, 1, 1, 1}, nb: contiguous([4]int64{n, 1, 1, 1}), i32: true}
		}
	case "C", "D":
		conv = true
		dc, C, n := p("d_conv"), a("n_ch"), a("n_seqs")
		set(0, [4]int64{dc - 1, C, length(role["src0"]) / a("cs2"), 1}, [4]int64{4, 4 * a("cs1"), 4 * a("cs2"), 4 * length(role["src0"])})
		set(1, [4]int64{dc, C, 1, 1}, [4]int64{4, 4 * a("w1"), 4 * a("w1") * C, 4 * a("w1") * C})
		set(2, [4]int64{C, 1, n, 1}, [4]int64{4, 4 * C, 4 * a("x2"), 4 * a("x2") * n})
		set(3, [4]int64{(dc - 1) * C, length(role["src3"]) / a("sd1"), 1, 1}, [4]int64{4, 4 * a("sd1"), 4 * length(role["src3"]), 4 * length(role["src3"])})
		attn = length(role["dst"])
		dst = tensor{buf: role["dst"], ne: [4]int64{C, 1, n, 1}, nb: [4]int64{4, 4 * C, 4 * a("d2"), 4 * a("d2") * n}}
		params = [2]int64{p("SILU"), a("rs_head")}
		if compute.Op.Fusion == "D" {
			srcs[4] = tensor{buf: role["src4"], ne: [4]int64{n, 1, 1, 1}, nb: contiguous([4]int64{n, 1, 1, 1}), i32: true}
		}
	default:
		return nil, dst, false, params, 0, fmt.Errorf("%s: not a fused op", c.Name)
	}
	return srcs, dst, conv, params, attn, nil
}

// runGlue runs case c through the glue (supports_op, then compute_forward
// with its gather, on a node built from the case) and compares what the
// node wrote with the Go reference: every buffer but the ops' own scratch,
// and dst up to attn (a GDN node's state region is the gather's scratch).
func runGlue(bin *hostemu.Binary, c *cases.Case, width int) error {
	srcs, dst, conv, params, attn, err := node(c)
	if err != nil {
		return err
	}
	job := hostemu.Job{SubgroupWidth: width, Args: []hostemu.Arg{
		hostemu.U32("conv", uint32(b2u(conv))), hostemu.I32("param0", int32(params[0])), hostemu.I32("param1", int32(params[1])),
	}}
	add := func(name string, t tensor) {
		job.Args = append(job.Args, hostemu.U32(name+"_i32", uint32(b2u(t.i32))))
		for d := 0; d < 4; d++ {
			job.Args = append(job.Args, hostemu.U32(fmt.Sprintf("%s_ne%d", name, d), uint32(t.ne[d])), hostemu.U32(fmt.Sprintf("%s_nb%d", name, d), uint32(t.nb[d])))
		}
		job.Buffers = append(job.Buffers, hostemu.Buffer{Name: name, ElemSize: 4, Data: c.Buffer(t.buf).Bytes()})
	}
	names := map[string]string{"dst": dst.buf}
	for i, t := range srcs {
		add(fmt.Sprintf("src%d", i), t)
		names[fmt.Sprintf("src%d", i)] = t.buf
	}
	add("dst", dst)
	out, err := bin.Run(context.Background(), job, emulate.RunTimeout)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	got := map[string][]byte{}
	for name, buf := range names {
		got[buf] = out[name]
	}
	want := *c
	want.Expected = nil
	for _, e := range c.Expected {
		if _, bound := got[e.Name]; !bound {
			continue // the ops' scratch: the glue keeps its own
		}
		if e.Name == dst.buf {
			e = e.Clone()
			e.F32 = e.F32[:attn]
			got[e.Name] = got[e.Name][:4*attn]
		}
		want.Expected = append(want.Expected, e)
	}
	return want.Compare(got)
}

func b2u(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The glue upstream gets, compiled with its kernels against stand-ins for
// ggml.h and the backend's common header over the host emulation runtime,
// takes a node of every variant of ops A-D built as ggml builds it
// (supports_op says 1) and runs it, gather included, like the Go
// reference.
func TestGlueRunsEveryFusedNode(t *testing.T) {
	for _, c := range []struct {
		backend, ext string
		lang         *hostemu.Lang
		files        func() ([]upstream.File, error)
		width        int
		// spliced, where set, is the text the backend's sections put into
		// the tree's existing sources, as one source of the program
		spliced func(sections map[string]string) (string, []byte)
		// flags are the backend's own warnings on top of emulate's
		flags []string
	}{
		// CUDA's launchers, op functions and kernels take no parameter they do not use
		{"cuda", ".cuh", hostemu.CUDA, backendcuda.UpstreamSources, 32, cudaSpliced, []string{"-Wunused-parameter"}},
		{"sycl", ".hpp", hostemu.SYCL, backendsycl.UpstreamKernels, 16, nil, nil},
	} {
		t.Run(c.backend, func(t *testing.T) {
			files, err := c.files()
			if err != nil {
				t.Fatal(err)
			}
			var inGlue [][]byte
			for _, f := range files {
				if f.InGlue {
					inGlue = append(inGlue, f.Data)
				}
			}
			glueFiles, sections, err := templates.UpstreamGlue(glueTarget(t, c.backend), inGlue...)
			if err != nil {
				t.Fatal(err)
			}
			src := map[string][]byte{"ggml.h": []byte(ggmlStandIn), "common" + c.ext: []byte(commonStandIn[c.backend])}
			if c.spliced != nil {
				name, text := c.spliced(sections)
				src[name] = text
			}
			for _, f := range glueFiles {
				src[f.Name] = f.Data
			}
			for _, f := range files {
				if !f.InGlue {
					src[f.Name] = f.Data
				}
			}
			prog := hostemu.Program{Name: "upstream_glue_" + c.backend, Lang: c.lang, Sources: src, Harness: []byte(glueHarness)}
			bin, err := hostemu.BuildWith(context.Background(), prog, hostemu.Options{Flags: append(append([]string{}, emulate.WarningFlags...), c.flags...)})
			if err != nil {
				var te *hostemu.ToolError
				if asToolError(err, &te) {
					t.Skipf("no host C++ compiler: %v", err)
				}
				t.Fatalf("the glue does not compile: %v", err)
			}
			fams, err := upstream.Families()
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, f := range fams {
				for _, op := range []string{f.Shared.Plain, f.Shared.Ids} {
					for i, v := range ops.TargetOf(c.backend).Variants(op) {
						v := v
						cs, err := cases.Random(op, ir.Native(c.backend), rand.New(rand.NewPCG(uint64(i), 13)), cases.Small, &v)
						if err != nil {
							t.Fatal(err)
						}
						if err := runGlue(bin, cs, c.width); err != nil {
							t.Error(err)
						}
						n++
					}
				}
			}
			t.Logf("%d nodes through the %s glue", n, c.backend)
		})
	}
}

// cudaSpliced is what the CUDA sections add to gated_delta_net.cu,
// ssm-conv.cu and ggml-cuda.cu, in one source: the in-place kernels and
// their launchers, the supports helper, and compute_forward's part in a
// function of its own.
func cudaSpliced(sections map[string]string) (string, []byte) {
	text := "#include \"state-gather.cuh\"\n"
	for _, n := range []string{"upstream-gated-delta-net-source", "upstream-ssm-conv-source", "upstream-supports"} {
		text += "\n" + sections[n]
	}
	text += "\nstatic bool ggml_cuda_fused_compute_forward(ggml_backend_cuda_context & ctx, ggml_tensor * dst) {\n" +
		sections["upstream-compute-forward"] + "    return false;\n}\n"
	return "ggml-cuda.cu", []byte(text)
}

// metalStandIn declares the part of ggml-metal's host API the glue calls,
// with the signatures of ggml-metal-device.h and ggml-metal-ops.cpp.
const metalStandIn = `#pragma once
#include "ggml.h"
struct ggml_metal_buffer_id { void * metal; size_t offs; };
typedef struct ggml_metal_pipeline * ggml_metal_pipeline_t;
struct ggml_metal_pipeline_with_params { ggml_metal_pipeline_t pipeline; int nsg; };
typedef struct ggml_metal_library * ggml_metal_library_t;
typedef struct ggml_metal_encoder * ggml_metal_encoder_t;
typedef struct ggml_metal_cv * ggml_metal_cv_t;
struct ggml_metal_op {
    ggml_metal_library_t lib;
    ggml_metal_encoder_t enc;
    ggml_tensor * node(int i);
};
typedef ggml_metal_op * ggml_metal_op_t;
struct ggml_metal_pipeline_with_params ggml_metal_library_get_pipeline(ggml_metal_library_t lib, const char * name);
struct ggml_metal_pipeline_with_params ggml_metal_library_compile_pipeline(ggml_metal_library_t lib, const char * base, const char * name, ggml_metal_cv_t cv);
ggml_metal_cv_t ggml_metal_cv_init(void);
void ggml_metal_cv_free(ggml_metal_cv_t cv);
void ggml_metal_cv_set_bool(ggml_metal_cv_t cv, bool value, int32_t idx);
void ggml_metal_encoder_set_pipeline(ggml_metal_encoder_t encoder, struct ggml_metal_pipeline_with_params pipeline);
void ggml_metal_encoder_set_bytes(ggml_metal_encoder_t encoder, void * data, size_t size, int idx);
void ggml_metal_encoder_set_buffer(ggml_metal_encoder_t encoder, struct ggml_metal_buffer_id buffer, int idx);
void ggml_metal_encoder_dispatch_threadgroups(ggml_metal_encoder_t encoder, int tg0, int tg1, int tg2, int tptg0, int tptg1, int tptg2);
ggml_metal_buffer_id ggml_metal_get_buffer_id(const ggml_tensor * t);
#include <cstdio>
bool ggml_metal_op_concurrency_reset(ggml_metal_op_t ctx);
size_t ggml_nbytes(const ggml_tensor * t);
`

// The Metal glue upstream gets compiles, -Wall -Werror, against ggml-metal's
// host API as declared at the series' pin (no Metal device here: its
// kernels run under host emulation, TestMetalKernelsRunLikeTheGoReference).
func TestMetalGlueCompiles(t *testing.T) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found")
	}
	glueFiles, sections, err := templates.UpstreamGlue(glueTarget(t, "metal"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ggml.h", ggmlStandIn)
	write("ggml-metal-ops.h", metalStandIn)
	for _, f := range glueFiles {
		write(f.Name, string(f.Data))
	}
	// the function constants' bases and the kargs join ggml-metal-impl.h, the
	// pipeline getters ggml-metal-device.h and .cpp, the encoders
	// ggml-metal-ops.cpp (after its includes)
	write("main.cpp", "#include \"ggml-metal-ops.h\"\n#include \""+templates.SupportsName+"\"\n"+sections["upstream-function-constants"]+"\n"+sections["upstream-kargs"]+"\n"+
		sections["upstream-pipeline-decls"]+"\n"+sections["upstream-pipelines"]+"\n"+
		sections["upstream-encoders"]+"\nint encode(ggml_metal_op_t ctx) { return ggml_metal_fused_encode(ctx, 0); }\n")
	out, err := exec.Command(cxx, "-std=c++17", "-fsyntax-only", "-Wall", "-Werror", "-I", dir, filepath.Join(dir, "main.cpp")).CombinedOutput()
	if err != nil {
		t.Fatalf("the Metal glue does not compile: %v\n%s", err, out)
	}
}
