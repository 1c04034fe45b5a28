package templates_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/templates"
)

// The llama.cpp gate (the llama-probe and llama-gate sections kernelgen
// patch puts in llama-context.cpp) compiles, -Wall -Wextra -Werror, against
// a stand-in of the llama.cpp and ggml declarations it uses
// (testdata/llama_gate.h), and keeps the fused nodes on exactly where every
// device that takes a plain op takes its fused forms too.
func TestLlamaGateCompilesAndDecides(t *testing.T) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
			t.Fatal("g++ not found: apt-get install g++")
		}
		t.Skip("g++ not found")
	}
	dir := t.TempDir()
	for _, s := range []struct{ section, file string }{{"llama-probe", "probe.inc"}, {"llama-gate", "gate.inc"}} {
		text, err := templates.CommonSection(s.section)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, s.file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testdata, _ := filepath.Abs("testdata")
	bin := filepath.Join(dir, "gate")
	cmd := exec.Command(cxx, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-Wno-unused-function",
		"-I", testdata, "-I", dir, `-DKG_PROBE="probe.inc"`, `-DKG_GATE="gate.inc"`,
		filepath.Join(testdata, "llama_gate_main.cpp"), "-o", bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compiling the llama gate: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "0 failures") {
		t.Fatalf("%v\n%s", err, out)
	}
}
