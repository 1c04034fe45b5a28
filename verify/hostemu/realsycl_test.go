package hostemu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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

// A language is its declaration: the shared build reads its skin, its check
// and its clang rewrite from the Lang value alone, so a new language is a
// new value, not an edit of the build.
func TestALanguageIsItsDeclaration(t *testing.T) {
	lang := &Lang{name: "toy", skin: "hostemu/toy.h",
		check: func(file string, toks []token) []string {
			var msgs []string
			for _, tk := range toks {
				if tk.text == "forbidden" {
					msgs = append(msgs, fmt.Sprintf("%s:%d: error: forbidden", file, tk.line))
				}
			}
			return msgs
		},
		forClang: func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("gcc_only"), nil) },
	}
	p := Program{Name: "toy", Lang: lang, Sources: map[string][]byte{"k.toy": []byte("int a;\nforbidden b;\ngcc_only int c;\n")}}
	flags, err := flagsFor(lang, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if forced := flags[slices.Index(flags, "-include")+1]; forced != "hostemu/toy.h" {
		t.Errorf("-include %s, want the language's skin", forced)
	}
	if msg := checkSources(p, []string{"k.toy"}); msg != "k.toy:2: error: forbidden" {
		t.Errorf("checkSources = %q, want the language's check", msg)
	}
	if got := string(forClang(p).Sources["k.toy"]); got != "int a;\nforbidden b;\n int c;\n" {
		t.Errorf("forClang = %q, want the language's rewrite", got)
	}
	if _, err := BuildWith(context.Background(), p, Options{CacheDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "k.toy:2: error: forbidden") {
		t.Errorf("BuildWith: %v, want the language's check before any compiler", err)
	}
	if _, err := flagsFor(lang, false, true); err == nil {
		t.Error("Options.Real for a language no compiler implements: no error")
	}
}
