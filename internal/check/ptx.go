package check

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

//go:embed cuda_prelude.h
var cudaPrelude []byte

// ErrNoClang is returned when clang++-22 is missing.
var ErrNoClang = errors.New("clang++-22 not found: apt-get install clang-22")

// PTXFlags compile CUDA to PTX for the H100 without the CUDA SDK.
var PTXFlags = []string{"-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib",
	"--cuda-gpu-arch=sm_90", "-Xclang", "-target-feature", "-Xclang", "+ptx80", "-O3", "-Wall", "-Werror"}

// PTX compiles one op's generated CUDA header with clang++-22, instantiating
// every variant of the variant table under each of its kernels, and returns
// how many kernels the PTX holds.
func PTX(ctx context.Context, op *ops.Op, header []byte, kernels []*ir.Kernel) (int, error) {
	var inst []string
	for _, k := range kernels {
		inst = append(inst, Instantiations(op, k)...)
	}
	got, err := CompilePTX(ctx, op.Name+".cuh", header, inst)
	if err == nil && got != len(inst) {
		err = fmt.Errorf("%s: PTX has %d kernels, want %d (one per variant and contract)", op.Name, got, len(inst))
	}
	return got, err
}

// CompilePTX compiles a CUDA header, saved as file, in a translation unit
// that includes it followed by the lines tu (explicit instantiations), with
// clang++-22 and PTXFlags, and returns how many kernel entries the PTX holds.
// Compiler messages name the header as generated/cuda/<file>.
func CompilePTX(ctx context.Context, file string, header []byte, tu []string) (int, error) {
	cc, err := exec.LookPath("clang++-22")
	if err != nil {
		return 0, ErrNoClang
	}
	dir, err := os.MkdirTemp("", "kernelgen-ptx-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	prelude := filepath.Join(dir, "kernelgen_cuda_prelude.h")
	if err := os.WriteFile(prelude, cudaPrelude, 0o644); err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(dir, file), header, 0o644); err != nil {
		return 0, err
	}
	lines := append([]string{fmt.Sprintf("#include %q", file)}, tu...)
	tuPath := filepath.Join(dir, "instances.cu")
	if err := os.WriteFile(tuPath, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	ptx := filepath.Join(dir, "out.ptx")
	args := append(append([]string{}, PTXFlags...), "-include", prelude, "-S", tuPath, "-o", ptx)
	cmd := exec.CommandContext(ctx, cc, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("clang: %s: %v\n%s", file, err, strings.ReplaceAll(string(out), dir+string(filepath.Separator), "generated/cuda/"))
	}
	text, err := os.ReadFile(ptx)
	if err != nil {
		return 0, err
	}
	return len(ptxEntry.FindAll(text, -1)), nil
}

var ptxEntry = regexp.MustCompile(`(?m)^\.visible \.entry `)

// Instantiations spells an explicit instantiation of k for every variant the
// CUDA backend builds of its op (the definition itself for a kernel that is
// not a template).
func Instantiations(op *ops.Op, k *ir.Kernel) []string {
	var out []string
	for _, v := range ops.VariantsFor(op.Name, "cuda") {
		out = append(out, Instantiation(k, op.ArithFree, v))
	}
	return out
}

// Instantiation spells the explicit instantiation of k's __global__
// template at variant v ("" for a kernel without params, whose definition
// is its one instance).
func Instantiation(k *ir.Kernel, arithFree bool, v ops.Variant) string {
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
	if len(targs) == 0 {
		return ""
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
	name := cuda.KernelName(k, arithFree) + "<" + strings.Join(targs, ", ") + ">"
	return fmt.Sprintf("template __global__ void %s(%s);", name, strings.Join(ptypes, ", "))
}
