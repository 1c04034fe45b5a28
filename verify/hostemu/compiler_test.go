package hostemu

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// warmProgram is a small CUDA program and its harness.
var warmProgram = Program{Name: "cxx_setting", Lang: CUDA,
	Sources: map[string][]byte{"k.cu": []byte("__global__ void k(float* o) { o[threadIdx.x] = float(threadIdx.x + 1); }\n")},
	Harness: []byte(`void hostemu_run(hostemu::Job& job) {
  float* o = job.buffer<float>("o");
  hostemu::cuda::launch("k", dim3(1), dim3(4), [&] { k(o); });
}
`)}

func script(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// The compiler setting is a command, as make's $(CXX) is: a compiler with
// arguments, or behind a wrapper such as ccache, builds (each its own
// cache entry); a missing one, or one that cannot compile the runtime on
// its own, is a *ToolError naming the setting and the fix, never a
// *CompileError of the program.
func TestCompilerSetting(t *testing.T) {
	needCompiler(t, "g++")
	cache := t.TempDir()
	ctx := context.Background()
	paths := map[string]string{}
	wrapper := script(t, "wrap", `exec "$@"`)
	for _, cxx := range []string{"g++", "g++ -O0", wrapper + " g++"} {
		bin, err := BuildWith(ctx, warmProgram, Options{CXX: cxx, CacheDir: cache})
		if err != nil {
			t.Fatalf("CXX=%q: %v", cxx, err)
		}
		got := AsF32(run(t, bin, Job{Buffers: []Buffer{ZeroBuffer("o", 4, 4)}})["o"])
		if got[3] != 4 {
			t.Errorf("CXX=%q computed %v", cxx, got)
		}
		for other, p := range paths {
			if p == bin.Path {
				t.Errorf("CXX=%q and CXX=%q share a cache entry", cxx, other)
			}
		}
		paths[cxx] = bin.Path
	}

	broken := script(t, "cc", `if [ "$1" = --version ]; then echo "fakecc 1.0"; exit 0; fi
echo "fakecc: license expired" >&2; exit 1`)
	t.Setenv("CXX", "")
	for _, c := range []struct {
		o          Options
		env        string
		want, hint string
	}{
		{Options{CXX: "/nonexistent/g++"}, "", `the C++ compiler "/nonexistent/g++" was not found`, "set CXX"},
		{Options{}, "/nonexistent/g++ -O0", `CXX="/nonexistent/g++ -O0" was not found`, "set CXX"},
		{Options{CXX: broken}, "", "cannot compile even an empty program", "license expired"},
	} {
		t.Setenv("CXX", c.env)
		c.o.CacheDir = cache
		_, err := BuildWith(ctx, warmProgram, c.o)
		var te *ToolError
		if !errors.As(err, &te) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.hint) {
			t.Errorf("CXX %q/%q: %v; want a ToolError saying %q and %q", c.o.CXX, c.env, err, c.want, c.hint)
		}
	}
	t.Setenv("CXX", "")
	t.Setenv("PATH", t.TempDir())
	compilers.Delete("g++\x00default")
	defer compilers.Delete("g++\x00default")
	if _, err := BuildWith(ctx, warmProgram, Options{CacheDir: cache}); err == nil || !strings.Contains(err.Error(), "apt-get install g++") {
		t.Errorf("no g++ on PATH: %v", err)
	}
}
