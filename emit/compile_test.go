package emit_test

import (
	"errors"
	"testing"

	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/emit/glsl"
	"github.com/kernelgen/kernelgen/internal/tier"
	"github.com/kernelgen/kernelgen/tools/ptx"
	"github.com/kernelgen/kernelgen/tools/spvbuild"
)

// Every construct's lowerings compile with the real compilers, so what the
// goldens show (renamed identifiers included) is valid source, not only
// reviewed text: GLSL with glslangValidator and spirv-val, CUDA to PTX with
// clang-22, with warnings as errors. CUDA, MSL and SYCL compile with the
// host C++ compiler, -Wall -Werror, in TestConstructsRun, which runs them.
// A missing tool skips locally and fails where KERNELGEN_REQUIRE_TOOLS is
// set (CI).
func TestConstructsCompile(t *testing.T) {
	ctx := tier.Context(t)
	for _, c := range constructs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := lower(t, c)
			t.Run("glsl", func(t *testing.T) {
				tools, err := spvbuild.FindTools(ctx)
				if err != nil {
					missing(t, err)
				}
				defs, err := glsl.Defines(variant(c).Of(l.k))
				if err != nil {
					t.Fatal(err)
				}
				unit := spvbuild.Unit{File: c.name + ".comp", Source: l.glsl, Defines: defs, Name: c.name}
				if _, err := tools.Build(ctx, []spvbuild.Unit{unit}, nil); err != nil {
					t.Fatal(err)
				}
			})
			t.Run("ptx", func(t *testing.T) {
				n, err := ptx.Compile(ctx, c.name+".cuh", l.cuda, []string{cuda.Instantiation(variant(c).Of(l.k))})
				if errors.Is(err, ptx.ErrNoClang) {
					missing(t, err)
				}
				if err != nil {
					t.Fatal(err)
				}
				if n != 1 {
					t.Fatalf("PTX has %d kernels, want 1", n)
				}
			})
		})
	}
}
