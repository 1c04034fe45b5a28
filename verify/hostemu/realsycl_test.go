package hostemu

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Under Options.Real the build tree leaves out the skin's sycl/sycl.hpp, so the
// include finds the implementation's, and force-includes sycl_real.h
// instead of the skin; the emulation build keeps both as they are.
func TestRealSYCLBuildTree(t *testing.T) {
	p := Program{Name: "t", Lang: SYCL, Sources: map[string][]byte{"k.hpp": []byte("#include <sycl/sycl.hpp>\n")}, Harness: []byte("")}
	for _, real := range []bool{false, true} {
		dir := t.TempDir()
		if err := writeTree(dir, p, []string{"k.hpp"}, real); err != nil {
			t.Fatal(err)
		}
		_, err := os.Stat(filepath.Join(dir, includeDir, "sycl", "sycl.hpp"))
		if skin := err == nil; skin == real {
			t.Errorf("Real=%v: the skin's sycl/sycl.hpp in the build tree: %v", real, skin)
		}
		if _, err := os.Stat(filepath.Join(dir, includeDir, filepath.FromSlash(SYCL.real))); err != nil {
			t.Errorf("Real=%v: %v", real, err)
		}
		flags, err := flagsFor(SYCL, false, real)
		if err != nil {
			t.Fatal(err)
		}
		forced := flags[slices.Index(flags, "-include")+1]
		if want := map[bool]string{false: "hostemu/sycl.h", true: SYCL.real}[real]; forced != want {
			t.Errorf("Real=%v: -include %s, want %s", real, forced, want)
		}
		// Every real SYCL implementation is clang-based: no gcc-only flags.
		if real && slices.Contains(flags, "-Wno-maybe-uninitialized") {
			t.Errorf("Real SYCL flags carry gcc's -Wno-maybe-uninitialized: %q", flags)
		}
	}
	if _, err := flagsFor(CUDA, false, true); err == nil || !strings.Contains(err.Error(), "no compiler implements cuda here") {
		t.Errorf("Real for CUDA: %v", err)
	}
}

// A program that does not compile is compiled once per process: every case
// of it gets the same CompileError (with a real SYCL compiler each attempt
// costs minutes).
func TestFailedBuildCompilesOnce(t *testing.T) {
	needCompiler(t, defaultCXX())
	p := Program{Name: "broken_once", Lang: CUDA,
		Sources: map[string][]byte{"k.cu": []byte("__global__ void k(float* o) { o[0] = no_such_name; }\n")},
		Harness: []byte("void hostemu_run(hostemu::Job&) {}\n")}
	o := Options{CacheDir: t.TempDir()}
	n0 := compilerRuns.Load()
	_, err1 := BuildWith(context.Background(), p, o)
	_, err2 := BuildWith(context.Background(), p, o)
	var ce *CompileError
	if !errors.As(err1, &ce) || err2 == nil || err1.Error() != err2.Error() {
		t.Fatalf("want the same CompileError twice, got %v and %v", err1, err2)
	}
	if d := compilerRuns.Load() - n0; d != 1 {
		t.Errorf("%d compiler runs for two builds of one broken program, want 1", d)
	}
}
