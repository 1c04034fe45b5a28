package opencl_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/tier"

	"github.com/kernelgen/kernelgen/emit/opencl"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// PoCL, which CI runs the kernels on (verify/opencl), offers no subgroups,
// so there every reduction takes the local-memory butterfly. The subgroup
// branches are compiled here by clang-22 as OpenCL C 3.0 for SPIR-V with
// the extension switched on, and the preprocessed source must call that
// extension's shuffle: cl_khr_subgroup_shuffle and cl_intel_subgroups.
// Qualcomm's cl_qcom_subgroup_shuffle has no declarations in clang and is
// not compiled here.
func TestSubgroupBranchesCompile(t *testing.T) {
	clang, err := exec.LookPath("clang-22")
	if err != nil {
		if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	for _, ext := range []struct{ name, clExt, shuffle string }{
		{"cl_khr_subgroup_shuffle", "+cl_khr_subgroup_shuffle", " sub_group_shuffle_xor("},
		{"cl_intel_subgroups", "-cl_khr_subgroup_shuffle,+cl_intel_subgroups", "intel_sub_group_shuffle_xor("},
	} {
		for _, op := range ops.All() {
			vs := ops.TargetOf("opencl").Variants(op.Name)
			if len(vs) == 0 {
				continue
			}
			t.Run(ext.name+"/"+op.Name, func(t *testing.T) {
				t.Parallel()
				var ks []*ir.Kernel
				reduces := false
				for _, a := range []ir.Arith{ir.Portable, ir.Native("opencl")} {
					if op.ArithFree() && a.Native {
						continue
					}
					k, err := op.Kernel(a)
					if err != nil {
						t.Fatal(err)
					}
					reduces = reduces || ir.HasReduce(k)
					ks = append(ks, k)
				}
				src, err := opencl.Emit(ir.Unit{Op: op.Name, Summary: op.Summary, Kernels: ks})
				if err != nil {
					t.Fatal(err)
				}
				// The widest variant: reductions over 32 lanes.
				defs, err := opencl.Defines(vs[len(vs)-1].Of(ks[0]))
				if err != nil {
					t.Fatal(err)
				}
				args := []string{"--target=spir64", "-x", "cl", "-cl-std=CL3.0", "-Xclang", "-cl-ext=" + ext.clExt, "-Wall", "-Werror"}
				args = append(args, strings.Fields(opencl.BuildOptions(defs))...)
				ctx := tier.Context(t)
				run := func(mode ...string) string {
					cmd := exec.CommandContext(ctx, clang, append(append(append([]string{}, args...), mode...), "-")...)
					cmd.Stdin = strings.NewReader(string(src))
					out, err := cmd.CombinedOutput()
					if err != nil {
						t.Fatalf("clang-22 %s %s: %v\n%s", strings.Join(args, " "), mode, err, out)
					}
					return string(out)
				}
				run("-include", "opencl-c.h", "-fsyntax-only")
				// Without the header, -E shows the kernels alone.
				if pre := run("-E"); reduces && !strings.Contains(pre, ext.shuffle) {
					t.Errorf("with %s the reductions do not call %s", ext.name, ext.shuffle)
				}
			})
		}
	}
}
