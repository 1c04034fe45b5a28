package upstream_test

import (
	"context"
	"errors"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	backendcuda "github.com/kernelgen/kernelgen/internal/backend/cuda"
	backendmetal "github.com/kernelgen/kernelgen/internal/backend/metal"
	backendsycl "github.com/kernelgen/kernelgen/internal/backend/sycl"
	"github.com/kernelgen/kernelgen/internal/tier"
	"github.com/kernelgen/kernelgen/internal/upstream"
	"github.com/kernelgen/kernelgen/ir"

	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/emit/msl"
	"github.com/kernelgen/kernelgen/emit/sycl"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/templates"
	"github.com/kernelgen/kernelgen/tools/ptx"
	"github.com/kernelgen/kernelgen/verify/emulate"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

func asToolError(err error, te **hostemu.ToolError) bool { return errors.As(err, te) }

// The CUDA kernels the ops form's .cu files get compile under host
// emulation and run every variant of ops A-D, gathers included, like the Go
// reference, at warp 32 and at HIP's 64 (ggml_cuda_get_physical_warp_size()
// on GFX8/9): a column reduces over min(S_v, 32) lanes with
// warp_reduce_sum<W>, a cluster within one warp of either width, so the
// kernels need no physical warp of exactly 32 and supports_op refuses no
// device for it. (The headers the fusion form includes are the same kernels
// but for fastdiv: they compile to PTX below.)
func TestCUDAKernelsRunLikeTheGoReference(t *testing.T) {
	files, err := backendcuda.UpstreamSources()
	if err != nil {
		t.Fatal(err)
	}
	byOp, err := upstream.ByOp("cuda", func(i int, k upstream.Kernel) *program {
		return build(t, hostemu.CUDA, "cuda", files[i].Name, cuda.KernelName(k.K), append([]byte(fastdivStandIn), files[i].Data...), k)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{32, 64} {
		checkFamilies(t, "cuda", byOp, width)
	}
}

// The fusion form's CUDA kernels (the GDN kernel writing the snapshot
// slots too, upstream.FusionKernels) run ops A-D and op B with slots
// (ops.SlotsOp) like the Go reference under host emulation.
func TestCUDAFusionKernelsRunLikeTheGoReference(t *testing.T) {
	ks, err := upstream.FusionKernels("cuda")
	if err != nil {
		t.Fatal(err)
	}
	files, err := upstream.RenderKernels(ks, ".cu", cuda.UpstreamSource)
	if err != nil {
		t.Fatal(err)
	}
	byOp := upstream.Index(ks, func(i int, k upstream.Kernel) *program {
		return build(t, hostemu.CUDA, "cuda", files[i].Name, cuda.KernelName(k.K), append([]byte(fastdivStandIn), files[i].Data...), k)
	})
	if byOp[ops.SlotsOp] == nil {
		t.Fatal("no fusion kernel runs the slots op")
	}
	checkFamilies(t, "cuda", byOp, 32)
}

// The SYCL headers upstream gets run every variant of ops A-D, gathers
// included, like the Go reference at the sub-group widths of Intel (16,
// which takes xor_reduce_sum's local-memory path where W is 32), NVIDIA
// (32) and, in the full tier, AMD's 64 and a narrow 8.
func TestSYCLKernelsRunLikeTheGoReference(t *testing.T) {
	files, err := backendsycl.UpstreamKernels()
	if err != nil {
		t.Fatal(err)
	}
	if !files[0].InGlue {
		t.Fatalf("%s: the SYCL gather should join the glue's header", files[0].Name)
	}
	// the glue's header includes sycl.hpp before the gather
	gsrc := append([]byte("#pragma once\n\n#include <sycl/sycl.hpp>\n\n"), files[0].Data...)
	byOp, err := upstream.ByOp("sycl", func(i int, k upstream.Kernel) *program {
		src := files[i].Data
		if k.Shared == nil {
			src = gsrc
		}
		return build(t, hostemu.SYCL, "sycl", files[i].Name, sycl.FunctionName(k.K), src, k)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, width := range tier.Pick([]int{16, 32}, []int{8, 16, 32, 64}) {
		checkFamilies(t, "sycl", byOp, width)
	}
}

// The fusion form's SYCL kernels (the GDN kernel writing the snapshot
// slots too, upstream.FusionKernels; the text the fusion step's headers
// carry before their launches) run ops A-D and op B with slots
// (ops.SlotsOp) like the Go reference under host emulation at Intel's
// sub-group width 16 and at 32.
func TestSYCLFusionKernelsRunLikeTheGoReference(t *testing.T) {
	byOp := syclFusionPrograms(t, hostemu.Options{Flags: emulate.WarningFlags})
	for _, width := range []int{16, 32} {
		checkFamilies(t, "sycl", byOp, width)
	}
}

// The same kernels compiled by AdaptiveCpp (acpp --acpp-targets=
// omp.library-only, the flow kernelgen build uses, emulate.ACPPTargets) run
// like the Go reference on its OpenMP host device. acpp is never in CI:
// this runs where it is on PATH (docs/runtimes.md says how it was built).
func TestSYCLFusionKernelsUnderACPP(t *testing.T) {
	acpp, err := exec.LookPath("acpp")
	if err != nil {
		t.Skip("acpp not on PATH: the AdaptiveCpp run is by hand")
	}
	// the implementation picks its sub-group width; the job's is not read
	checkFamilies(t, "sycl", syclFusionPrograms(t, emulate.ACPPOptions(acpp, emulate.ACPPTargets)), 32)
}

// syclFusionPrograms builds the fusion form's SYCL kernels with o, by the
// op each runs.
func syclFusionPrograms(t *testing.T, o hostemu.Options) map[string]*program {
	t.Helper()
	ks, err := upstream.FusionKernels("sycl")
	if err != nil {
		t.Fatal(err)
	}
	files, err := backendsycl.FusionKernels()
	if err != nil {
		t.Fatal(err)
	}
	byOp := upstream.Index(ks, func(i int, k upstream.Kernel) *program {
		return buildWith(t, o, hostemu.SYCL, "sycl", files[i].Name, sycl.FunctionName(k.K), files[i].Data, k)
	})
	if byOp[ops.SlotsOp] == nil {
		t.Fatal("no fusion kernel runs the slots op")
	}
	return byOp
}

// The Metal kernels upstream gets (the text joining ggml-metal.metal, after
// that file's prelude) run every variant of ops A-D, gathers included, like
// the Go reference at Apple's simdgroup width, 32.
func TestMetalKernelsRunLikeTheGoReference(t *testing.T) {
	lib, err := backendmetal.UpstreamLibrary()
	if err != nil {
		t.Fatal(err)
	}
	// the kargs structs are ggml-metal-impl.h's, which the library includes first
	_, sections, err := templates.UpstreamGlue(glueTarget(t, "metal"))
	if err != nil {
		t.Fatal(err)
	}
	src := []byte("#include <metal_stdlib>\n\nusing namespace metal;\n" + sections["upstream-kargs"] + "\n")
	src = append(src, lib...)
	const file = "ggml-metal.metal"
	byOp, err := upstream.ByOp("metal", func(i int, k upstream.Kernel) *program {
		return build(t, hostemu.MSL, "metal", file, msl.FunctionName(k.K), src, k)
	})
	if err != nil {
		t.Fatal(err)
	}
	checkFamilies(t, "metal", byOp, 32)
}

// The fusion form's Metal kernels (the GDN kernel writing the snapshot
// slots too, backendmetal.FusionLibrary, over the kargs of the glue's
// fusion view) run ops A-D and op B with slots (ops.SlotsOp) like the Go
// reference under host emulation, the slots op bit for bit.
func TestMetalFusionKernelsRunLikeTheGoReference(t *testing.T) {
	lib, err := backendmetal.FusionLibrary()
	if err != nil {
		t.Fatal(err)
	}
	g := *glueTarget(t, "metal")
	g.Names.Slots = true
	_, sections, err := templates.UpstreamGlue(&g)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sections["upstream-kargs"], "K, ss;") {
		t.Fatalf("the fusion view's kargs lack the slot args:\n%s", sections["upstream-kargs"])
	}
	src := append([]byte("#include <metal_stdlib>\n\nusing namespace metal;\n"+sections["upstream-kargs"]+"\n"), lib...)
	ks, err := upstream.FusionKernels("metal")
	if err != nil {
		t.Fatal(err)
	}
	byOp := upstream.Index(ks, func(i int, k upstream.Kernel) *program {
		return build(t, hostemu.MSL, "metal", "ggml-metal.metal", msl.FunctionName(k.K), src, k)
	})
	if byOp[ops.SlotsOp] == nil {
		t.Fatal("no fusion kernel runs the slots op")
	}
	checkFamilies(t, "metal", byOp, 32)
	checkBitForBit(t, "metal", byOp, ops.SlotsOp, 32)
}

// ggml-metal.metal specialises a kernel by function constants where its
// neighbours do (FC_gated_delta_net_ne20): the upstream kernels take their
// bools (KDA, IDS, SILU) as function constants, instantiating one template
// per remaining variant, and the glue defines each constant's index base in
// ggml-metal-impl.h and sets every constant where it builds the pipeline.
func TestMetalKernelsTakeBoolsAsFunctionConstants(t *testing.T) {
	lib, err := backendmetal.UpstreamLibrary()
	if err != nil {
		t.Fatal(err)
	}
	_, sections, err := templates.UpstreamGlue(glueTarget(t, "metal"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(lib)
	if n := strings.Count(text, "[[host_name("); n != 4+7 {
		t.Errorf("%d instantiations, want 11 (GDN: 4 tilings, conv: 7 d_conv; the bools are no template arguments)", n)
	}
	if regexp.MustCompile(`template <[^>]*\bbool\b`).MatchString(text) {
		t.Error("a kernel takes a bool template parameter")
	}
	fcs := regexp.MustCompile(`constant bool (\w+) \[\[function_constant\((\w+) \+ (\d+)\)\]\];`).FindAllStringSubmatch(text, -1)
	if len(fcs) != 4 {
		t.Fatalf("%d bool function constants, want 4 (KDA, IDS; SILU, IDS)", len(fcs))
	}
	for _, fc := range fcs {
		if !regexp.MustCompile(`(?m)^#define ` + fc[2] + ` +\d+$`).MatchString(sections["upstream-function-constants"]) {
			t.Errorf("%s's base %s is not defined for ggml-metal-impl.h", fc[1], fc[2])
		}
		if !strings.Contains(sections["upstream-pipelines"], fc[2]+" + "+fc[3]+");") {
			t.Errorf("no pipeline getter sets %s (%s + %s)", fc[1], fc[2], fc[3])
		}
		if !strings.Contains(text, "if ("+fc[1]+")") {
			t.Errorf("no kernel reads %s", fc[1])
		}
	}
}

// fastdivStandIn stands in for ggml-cuda's fastdiv (common.cuh), by the
// same algorithm (Granlund and Montgomery's): for a divisor d, L = ceil(log2
// d) and mp = floor(2^32 (2^L - d) / d) + 1, packed with d in a uint3, give
// n / d = (umulhi(n, mp) + n) >> L.
const fastdivStandIn = `
static inline uint3 init_fastdiv_values(uint64_t d_64) {
    const uint32_t d = (uint32_t) d_64;
    uint32_t L = 0;
    while (L < 32 && (uint64_t(1) << L) < d) {
        L++;
    }
    const uint32_t mp = (uint32_t) (((uint64_t(1) << 32) * ((uint64_t(1) << L) - d)) / d + 1);
    uint3 v;
    v.x = mp;
    v.y = L;
    v.z = d;
    return v;
}
static __device__ __forceinline__ uint32_t fastdiv(uint32_t n, const uint3 v) {
    const uint32_t hi = (uint32_t) (((uint64_t) n * v.x) >> 32);
    return (hi + n) >> v.y;
}
static __device__ __forceinline__ uint32_t fastmodulo(uint32_t n, const uint3 v) {
    return n - fastdiv(n, v) * v.z;
}
`

// warpReduceSum stands in for ggml-cuda's common.cuh warp_reduce_sum (the
// xor butterfly over width lanes), which the upstream kernels call, and its
// GGML_CUDA_RESTRICT as it is where PDL is off.
const warpReduceSum = `#define GGML_CUDA_RESTRICT __restrict__
template <int width = 32>
static __device__ __forceinline__ float warp_reduce_sum(float x) {
#pragma unroll
    for (int offset = width / 2; offset > 0; offset >>= 1) {
        x += __shfl_xor_sync(0xffffffff, x, offset, width);
    }
    return x;
}
`

// The CUDA kernels upstream gets, the ops form's .cu text and headers and
// the fusion form's headers (the GDN kernel with the snapshot slots), compile to PTX for sm_90 with clang-22, -Wall -Werror,
// every variant instantiated, as kernelgen build compiles generated/cuda.
func TestCUDAKernelsCompileToPTX(t *testing.T) {
	for _, form := range []struct {
		kernels func(string) ([]upstream.Kernel, error)
		files   func() ([]upstream.File, error)
		inst    func(ir.Instance) string
	}{{upstream.Kernels, backendcuda.UpstreamSources, cuda.SourceInstantiation}, {upstream.Kernels, backendcuda.UpstreamKernels, cuda.Instantiation},
		{upstream.FusionKernels, backendcuda.FusionKernels, cuda.Instantiation}} {
		ks, err := form.kernels("cuda")
		if err != nil {
			t.Fatal(err)
		}
		files, err := form.files()
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range files {
			k, variants := ks[i], []ops.Variant{{}} // the gather has one
			if k.Shared != nil {
				variants = k.Shared.Variants(ops.TargetOf("cuda"))
			}
			var inst []string
			for _, v := range variants {
				inst = append(inst, form.inst(v.Of(k.K)))
			}
			got, err := ptx.Compile(context.Background(), f.Name, append([]byte(warpReduceSum+"struct uint3 { unsigned x, y, z; };\n"+fastdivStandIn), f.Data...), inst)
			if errors.Is(err, ptx.ErrNoClang) {
				t.Skip("clang++-22 not installed")
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != len(inst) {
				t.Errorf("%s: PTX has %d kernels, want %d", f.Name, got, len(inst))
			}
		}
	}
}

// PDL and __restrict__ conflict (nvcc may move a restrict load above the
// griddepcontrol.wait), so ggml-cuda spells the qualifier GGML_CUDA_RESTRICT,
// empty where PDL is on: the kernels upstream gets use it, never a raw
// __restrict__, and the glue says which wait the compute kernel relies on.
func TestCUDAKernelsUseGGMLRestrict(t *testing.T) {
	headers, err := backendcuda.UpstreamKernels()
	if err != nil {
		t.Fatal(err)
	}
	sources, err := backendcuda.UpstreamSources()
	if err != nil {
		t.Fatal(err)
	}
	files := append(headers, sources...)
	for _, f := range files {
		if strings.Contains(string(f.Data), "__restrict__") {
			t.Errorf("%s has a raw __restrict__", f.Name)
		}
		if !strings.Contains(string(f.Data), "GGML_CUDA_RESTRICT") {
			t.Errorf("%s has no GGML_CUDA_RESTRICT", f.Name)
		}
		// The macro differs between nvcc's host and device passes, so a
		// signature spelled with it differs too and nvcc refuses the
		// template kernels: restrict-qualified locals, as ggml-cuda's own.
		for _, params := range kernelParamLists(string(f.Data)) {
			if strings.Contains(params, "GGML_CUDA_RESTRICT") {
				t.Errorf("%s: GGML_CUDA_RESTRICT in a kernel's parameters (%s): restrict a local copy of the pointer instead", f.Name, strings.Join(strings.Fields(params), " "))
			}
		}
	}
	var kernels [][]byte
	for _, f := range sources {
		kernels = append(kernels, f.Data)
	}
	glue, _, err := templates.UpstreamGlue(glueTarget(t, "cuda"), kernels...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(glue[0].Data), "waits only before it reads scratch") {
		t.Errorf("%s does not say which PDL wait the compute kernel relies on", glue[0].Name)
	}
}

// kernelParamLists returns the parameter lists of the __global__ functions
// in src.
func kernelParamLists(src string) []string {
	var out []string
	for rest := src; ; {
		i := strings.Index(rest, "__global__")
		if i < 0 {
			return out
		}
		rest = rest[i:]
		// The list opens at the last '(' before ") {": past __launch_bounds__(...).
		end := strings.Index(rest, ") {")
		open := strings.LastIndex(rest[:max(end, 0)], "(")
		if end < 0 || open < 0 {
			return out
		}
		out = append(out, rest[open+1:end])
		rest = rest[end:]
	}
}
