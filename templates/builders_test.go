package templates_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/templates"
)

// The ops step's builders (ggml.c) refuse each malformed call with the
// assert that names what is wrong, one condition per GGML_ASSERT: S_k !=
// S_v, q and k of other shapes or strides, g and beta of other shapes, x and
// the conv kernel strided, ids of another length than the sequences, rs_head
// outside the cache (testdata/builders_main.cpp, over a stand-in of ggml.h).
func TestBuildersAssertEachCondition(t *testing.T) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
			t.Fatal("g++ not found: apt-get install g++")
		}
		t.Skip("g++ not found")
	}
	var text strings.Builder
	for _, name := range []string{"ggml-c-conv", "ggml-c-gdn"} {
		s, err := templates.CommonSection(name)
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(s + "\n")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "builders.inc"), []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	testdata, _ := filepath.Abs("testdata")
	bin := filepath.Join(dir, "builders")
	cmd := exec.Command(cxx, "-std=c++17", "-Wall", "-Werror", "-Wno-unused-function", "-I", dir,
		filepath.Join(testdata, "builders_main.cpp"), "-o", bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compiling the builders: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "0 failures") {
		t.Fatalf("%v\n%s", err, out)
	}
}

// test-backend-ops' perf mode repeats and times the node build_graph
// returns: the series' cases return the fused node there, and the read
// after the in-place write (an ADD) in test mode, where the written slots
// are compared (testdata/perf_main.cpp, over stand-ins of test_case and the
// ggml calls the cases make).
func TestPerfModeTimesTheFusedNode(t *testing.T) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found")
	}
	dir := t.TempDir()
	for file, names := range map[string][]string{"builders.inc": {"ggml-c-conv", "ggml-c-gdn"}, "tbo.inc": {"tbo-classes"}} {
		var text strings.Builder
		for _, name := range names {
			s, err := templates.CommonSection(name)
			if err != nil {
				t.Fatal(err)
			}
			text.WriteString(s + "\n")
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testdata, _ := filepath.Abs("testdata")
	bin := filepath.Join(dir, "perf")
	cmd := exec.Command(cxx, "-std=c++17", "-Wall", "-Werror", "-Wno-unused-function", "-I", dir, "-I", testdata,
		filepath.Join(testdata, "perf_main.cpp"), "-o", bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compiling the cases: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "0 failures") {
		t.Fatalf("%v\n%s", err, out)
	}
}

// Only the CPU backend can stop on an id outside the cache (its kernels
// assert it, as GET_ROWS does): ggml.h says what every caller owes, beside
// each ids builder, as ggml_get_rows's callers owe it.
func TestIdsBuildersStateTheRange(t *testing.T) {
	for name, want := range map[string]string{
		"ggml-h-gdn":  "each ids[s] must be in [0, state->ne[3])",
		"ggml-h-conv": "each ids[s] must be in [0, conv_states->ne[2])",
	} {
		s, err := templates.CommonSection(name)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(strings.ReplaceAll(s, "//", "")), " ")
		if !strings.Contains(text, want) {
			t.Errorf("%s does not say %q:\n%s", name, want, s)
		}
	}
}
