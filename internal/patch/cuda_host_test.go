package patch

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/tier"
)

// cudaFusionGuards are the CUDA step's edits to ggml_cuda_can_fuse.
const cudaFusionGuards = "fusion leaves conv-update alone"

// runCUDAFusion builds testdata/cuda-host/fusion.cpp over the stand-in
// ggml-cuda.cu, patched with the CUDA step's fusion guards or (guards
// false) as it is, and runs it: its output and whether it passed.
func runCUDAFusion(t *testing.T, guards bool) (string, bool) {
	t.Helper()
	cxx := hostCXX(t)
	dir := t.TempDir()
	for _, name := range []string{"ggml-cuda.cu", "fusion.cpp"} {
		data, err := os.ReadFile(filepath.Join("testdata/cuda-host", name))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if name == "ggml-cuda.cu" && guards {
			var ls []Located
			for _, e := range stepOf(t, "cuda").Edits {
				if !strings.HasSuffix(e.Name, cudaFusionGuards) {
					continue
				}
				l := locate(e, text)
				if l.State != Pending {
					t.Fatalf("edit %q is %v in the stand-in: %s", e.Name, l.State, l.Why)
				}
				ls = append(ls, l)
			}
			if len(ls) != 2 {
				t.Fatalf("%d CUDA edits end in %q, want 2 (SSM_CONV+SILU, SSM_CONV+ADD+SILU)", len(ls), cudaFusionGuards)
			}
			text = insertAll(text, ls)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "fusion")
	ctx := tier.Context(t)
	args := append(append([]string{}, cxx[1:]...), "-std=c++17", "-Wall", "-Werror", "-x", "c++", "fusion.cpp", "-o", bin)
	cmd := exec.CommandContext(ctx, cxx[0], args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fusion.cpp does not build: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(ctx, bin).CombinedOutput()
	return string(out), err == nil && strings.Contains(string(out), "0 failures")
}

// ggml-cuda's SSM_CONV(+ADD)+SILU fusion runs the plain SSM_CONV kernel: with
// the CUDA step's guards it leaves a conv-update node (src[3] set) to the
// fused-op kernel and still fuses a plain SSM_CONV.
func TestCUDAFusionLeavesConvUpdateAlone(t *testing.T) {
	if out, ok := runCUDAFusion(t, true); !ok {
		t.Fatalf("with the guards:\n%s", out)
	}
}

// The control: without the guards the stand-in fuses the conv-update node,
// so the test above passing means the guards closed it.
func TestCUDAFusionTakesConvUpdateWithoutTheGuards(t *testing.T) {
	out, ok := runCUDAFusion(t, false)
	if ok {
		t.Fatalf("without the guards the stand-in fused no conv-update node:\n%s", out)
	}
	for _, want := range []string{
		"FAIL a conv-update node then SILU: fused into the plain SSM_CONV+SILU path",
		"FAIL a conv-update node then ADD and SILU: fused into the plain SSM_CONV+ADD+SILU path",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// The in-place kernels live in the .cu files of their plain neighbours,
// beside their launchers (gated_delta_net.cu, ssm-conv.cu; the gather both
// run in state-gather.cu), declared in those files' headers: no kernel or
// launcher in a header, none in ggml-cuda.cu.
func TestCUDAKernelsLiveInTheirSources(t *testing.T) {
	root := fixture(t, "")
	if _, err := Apply(context.Background(), open(t, root), plan(t)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "src", "ggml-cuda")
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	for file, want := range map[string][]string{
		"gated_delta_net.cu":  {"__global__ void __launch_bounds__", " gated_delta_net_inplace_f32(", "void ggml_cuda_op_gated_delta_net_inplace(ggml_backend_cuda_context & ctx, ggml_tensor * dst) {"},
		"gated_delta_net.cuh": {"void ggml_cuda_op_gated_delta_net_inplace(ggml_backend_cuda_context & ctx, ggml_tensor * dst);"},
		"ssm-conv.cu":         {" ssm_conv_update_inplace_f32(", "void ggml_cuda_op_ssm_conv_update_inplace(ggml_backend_cuda_context & ctx, ggml_tensor * dst) {"},
		"ssm-conv.cuh":        {"void ggml_cuda_op_ssm_conv_update_inplace(ggml_backend_cuda_context & ctx, ggml_tensor * dst);"},
		"state-gather.cu":     {" state_gather_f32(", "void ggml_cuda_state_gather(cudaStream_t stream, "},
		"state-gather.cuh":    {"void ggml_cuda_state_gather(cudaStream_t stream, "},
	} {
		text := read(file)
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s lacks %q", file, w)
			}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		text := read(e.Name())
		if !strings.HasSuffix(e.Name(), ".cuh") && e.Name() != "ggml-cuda.cu" {
			continue
		}
		for _, bad := range []string{"__global__", "ggml_cuda_kernel_launch("} {
			if strings.Contains(text, bad) {
				t.Errorf("%s holds %q: a kernel or its launch belongs in the .cu file beside its plain neighbour", e.Name(), bad)
			}
		}
	}
}

// The GDN kernel divides by its broadcast ratios (the q/k head, the q/k
// sequence) as gated_delta_net.cu's own kernel does: through uint3 values
// its launcher precomputes with init_fastdiv_values, and fastdiv /
// fastmodulo, never a hardware division by a runtime shape.
func TestCUDAKernelsDivideByShapesWithFastdiv(t *testing.T) {
	root := fixture(t, "")
	if _, err := Apply(context.Background(), open(t, root), plan(t)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "src", "ggml-cuda", "gated_delta_net.cu"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	divisors := regexp.MustCompile(`const uint3 ([a-z_0-9]+)`).FindAllStringSubmatch(text, -1)
	if len(divisors) < 2 {
		t.Fatalf("gated_delta_net.cu: %d uint3 divisors in the in-place kernel, want the head and sequence ratios", len(divisors))
	}
	for _, d := range divisors {
		name := d[1]
		if regexp.MustCompile(`[/%] ` + name + `\b`).MatchString(text) {
			t.Errorf("gated_delta_net.cu divides by %s with an operator", name)
		}
		if !regexp.MustCompile(`fast(div|modulo)\([a-z_0-9]+, ` + name + `\)`).MatchString(text) {
			t.Errorf("gated_delta_net.cu takes %s but never calls fastdiv or fastmodulo with it", name)
		}
	}
	if n := strings.Count(text, "init_fastdiv_values("); n != len(divisors) {
		t.Errorf("the launcher precomputes %d divisors with init_fastdiv_values, want %d", n, len(divisors))
	}
}

// The in-place launchers read as gated_delta_net.cu's own
// (ggml_cuda_op_gated_delta_net): the node's tensors named, their ne and
// nb through GGML_TENSOR_LOCALS, strides in floats as named locals
// (sizeof(float), never 4), and the kernel instance picked by if/else, no
// conditional expression choosing among instances.
func TestCUDALaunchersNameTheirTensors(t *testing.T) {
	root := fixture(t, "")
	if _, err := Apply(context.Background(), open(t, root), plan(t)); err != nil {
		t.Fatal(err)
	}
	launcher := regexp.MustCompile(`(?s)\nstatic void launch_[a-z_]+\(.*?\n}\n`)
	inline := regexp.MustCompile(`->src\[[0-9]\]->n[eb]\[`)
	for _, name := range []string{"gated_delta_net.cu", "ssm-conv.cu"} {
		data, err := os.ReadFile(filepath.Join(root, "src", "ggml-cuda", name))
		if err != nil {
			t.Fatal(err)
		}
		found := launcher.FindAllString(string(data), -1)
		if len(found) != 1 {
			t.Fatalf("%s: %d in-place launchers, want 1", name, len(found))
		}
		text := found[0]
		if !strings.Contains(text, "GGML_TENSOR_LOCALS(") {
			t.Errorf("%s: the launcher declares no GGML_TENSOR_LOCALS", name)
		}
		for _, line := range strings.Split(text, "\n") {
			if inline.MatchString(line) {
				t.Errorf("%s: a tensor's ne or nb read through the node inline: %s", name, strings.TrimSpace(line))
			}
			if regexp.MustCompile(`/ 4\b`).MatchString(line) {
				t.Errorf("%s: a stride divided by 4, not sizeof(float): %s", name, strings.TrimSpace(line))
			}
			if strings.Contains(line, "_f32<") && strings.Contains(line, "?") {
				t.Errorf("%s: the kernel instance chosen by a conditional expression: %s", name, strings.TrimSpace(line))
			}
		}
	}
}
