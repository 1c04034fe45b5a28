package cuda_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// clang finds clang++-22, which compiles CUDA to PTX without the CUDA SDK.
// Missing, the test skips locally and fails where KERNELGEN_REQUIRE_TOOLS is
// set (CI installs clang-22).
func clang(t *testing.T) string {
	path, err := exec.LookPath("clang++-22")
	if err != nil {
		if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
			t.Fatal("clang++-22 not found: apt-get install clang-22")
		}
		t.Skip("clang++-22 not found (apt-get install clang-22); skipping the PTX tier")
	}
	return path
}

// instantiations spells an explicit instantiation of kernel k for every
// variant of its op in the variant table.
func instantiations(op *ops.Op, k *ir.Kernel) []string {
	var out []string
	for _, v := range ops.VariantsOf(op.Name) {
		var targs []string
		for _, prm := range k.Params {
			if prm.Derived != nil {
				continue
			}
			val := v.Values[prm.Name]
			if prm.Type == ir.Bool {
				targs = append(targs, fmt.Sprint(val == 1))
			} else {
				targs = append(targs, fmt.Sprintf("%du", val))
			}
		}
		var ptypes []string
		for _, b := range k.Buffers {
			t := map[ir.Type]string{ir.F32: "float", ir.I32: "int32_t"}[b.Elem]
			if b.Access == ir.Read {
				ptypes = append(ptypes, "const "+t+" * __restrict__")
			} else {
				ptypes = append(ptypes, t+" * __restrict__")
			}
		}
		for _, a := range k.Args {
			ptypes = append(ptypes, "const "+map[ir.Type]string{ir.F32: "float", ir.U32: "uint32_t", ir.I32: "int32_t"}[a.Type])
		}
		name := cuda.KernelName(k, op.ArithFree)
		if len(targs) == 0 {
			// Not a template: its definition is the one instance.
			out = append(out, "")
			continue
		}
		name += "<" + strings.Join(targs, ", ") + ">"
		out = append(out, fmt.Sprintf("template __global__ void %s(%s);", name, strings.Join(ptypes, ", ")))
	}
	return out
}

// Every variant of every op, under both CUDA contracts, compiles to PTX for
// sm_90 (the H100), and the portable kernels contain no contracted f32
// arithmetic besides the IR's own fmas.
func TestEveryVariantCompilesToPTX(t *testing.T) {
	cc := clang(t)
	if _, err := ops.Variants(); err != nil {
		t.Fatal(err)
	}
	prelude, err := filepath.Abs(filepath.Join("testdata", "kernelgen_cuda_prelude.h"))
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range ops.All() {
		op := op
		t.Run(op.Name, func(t *testing.T) {
			t.Parallel()
			var ks []*ir.Kernel
			for _, a := range op.Ariths() {
				if a == ir.Portable || a == ir.Native("cuda") {
					k, err := op.Kernel(a)
					if err != nil {
						t.Fatal(err)
					}
					ks = append(ks, k)
				}
			}
			src, err := cuda.Emit(op.Name, op.Summary, ks, op.ArithFree)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			hdr := filepath.Join(dir, op.Name+".cuh")
			if err := os.WriteFile(hdr, src, 0o644); err != nil {
				t.Fatal(err)
			}
			tu := []string{fmt.Sprintf("#include %q", op.Name+".cuh")}
			want := 0
			for _, k := range ks {
				inst := instantiations(op, k)
				want += len(inst)
				tu = append(tu, inst...)
			}
			tuPath := filepath.Join(dir, "instances.cu")
			if err := os.WriteFile(tuPath, []byte(strings.Join(tu, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			ptx := filepath.Join(dir, "out.ptx")
			cmd := exec.CommandContext(ctx, cc, "-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib",
				"--cuda-gpu-arch=sm_90", "-Xclang", "-target-feature", "-Xclang", "+ptx80", "-O3",
				"-Werror", "-include", prelude, "-S", tuPath, "-o", ptx)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "LC_ALL=C")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("clang: %v\n%s", err, out)
			}
			text, err := os.ReadFile(ptx)
			if err != nil {
				t.Fatal(err)
			}
			entries := regexp.MustCompile(`(?m)^\.visible \.entry `).FindAll(text, -1)
			if len(entries) != want {
				t.Errorf("PTX has %d kernels, want %d (one per variant and contract)", len(entries), want)
			}
		})
	}
}
