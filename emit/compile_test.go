package emit_test

import (
	"context"
	"errors"
	"os/exec"
	"testing"

	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/emit/glsl"
	"github.com/kernelgen/kernelgen/tools/ptx"
	"github.com/kernelgen/kernelgen/tools/spvbuild"
	"github.com/kernelgen/kernelgen/verify/emulate"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

// Every construct's lowerings compile with the real compilers, so what the
// goldens show (renamed identifiers included) is valid source, not only
// reviewed text: GLSL with glslangValidator and spirv-val, CUDA to PTX with
// clang-22, and CUDA, MSL and SYCL with the host C++ compiler under host
// emulation's headers (linked with a harness that runs nothing; running is
// verify/emulate's job, on the real ops), all with -Wall -Werror. A missing tool skips locally and
// fails where KERNELGEN_REQUIRE_TOOLS is set (CI).
func TestConstructsCompile(t *testing.T) {
	ctx := context.Background()
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
			for _, h := range []struct {
				lang hostemu.Lang
				file string
				src  []byte
			}{
				{hostemu.CUDA, c.name + ".cuh", l.cuda},
				{hostemu.MSL, c.name + ".metal", l.msl},
				{hostemu.SYCL, c.name + ".hpp", l.sycl},
			} {
				t.Run(h.lang.String(), func(t *testing.T) {
					if _, err := exec.LookPath(cxx()); err != nil {
						missing(t, err)
					}
					_, err := hostemu.BuildWith(ctx, hostemu.Program{
						Name:    "construct_" + c.name + "_" + h.lang.String(),
						Lang:    h.lang,
						Sources: map[string][]byte{h.file: h.src},
						Harness: []byte("void hostemu_run(hostemu::Job&) {}\n"),
					}, hostemu.Options{Flags: emulate.WarningFlags})
					if err != nil {
						t.Fatal(err)
					}
				})
			}
		})
	}
}
