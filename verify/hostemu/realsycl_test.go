package hostemu

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Under RealSYCL the build tree leaves out the skin's sycl/sycl.hpp, so the
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
			t.Errorf("RealSYCL=%v: the skin's sycl/sycl.hpp in the build tree: %v", real, skin)
		}
		if _, err := os.Stat(filepath.Join(dir, includeDir, filepath.FromSlash(realSYCLHeader))); err != nil {
			t.Errorf("RealSYCL=%v: %v", real, err)
		}
		flags, err := flagsFor(SYCL, false, real)
		if err != nil {
			t.Fatal(err)
		}
		forced := flags[slices.Index(flags, "-include")+1]
		if want := map[bool]string{false: "hostemu/sycl.h", true: realSYCLHeader}[real]; forced != want {
			t.Errorf("RealSYCL=%v: -include %s, want %s", real, forced, want)
		}
		// Every real SYCL implementation is clang-based: no gcc-only flags.
		if real && slices.Contains(flags, "-Wno-maybe-uninitialized") {
			t.Errorf("RealSYCL flags carry gcc's -Wno-maybe-uninitialized: %q", flags)
		}
	}
	if _, err := flagsFor(CUDA, false, true); err == nil || !strings.Contains(err.Error(), "RealSYCL builds SYCL programs, not cuda") {
		t.Errorf("RealSYCL for CUDA: %v", err)
	}
}
