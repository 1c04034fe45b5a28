package ggmlcpu

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/tier"
	"github.com/kernelgen/kernelgen/ir"
)

// TestFusedGDNIsTheUnfusedCPUPath runs the GDN entry point upstream gets
// (the family unit's, native-cpu) against ggml-cpu's unfused path for the
// node, written out in testdata/unfused_gdn.cpp over the stand-in's
// vector routines, bit for bit, on random shapes the Go reference's table
// does not reach: S_v from 1 to 256, k with strides other than q's.
func TestFusedGDNIsTheUnfusedCPUPath(t *testing.T) {
	u := familyUnit(t, ir.Native("cpu"))
	if out := runUnfused(t, u, tier.Pick(300, 1000)); !strings.HasPrefix(out, "ok ") {
		t.Errorf("the fused GDN differs from the unfused CPU path: %s", out)
	}
}

// runUnfused compiles the unit's GDN entry with unfused_gdn.cpp and runs
// cases random cases; it returns what the program printed.
func runUnfused(t *testing.T, u *lowered, cases int) string {
	t.Helper()
	if _, err := exec.LookPath(cxx()); err != nil {
		if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	var compute string
	for _, e := range u.ops {
		if e.Fusion == "B" {
			compute = e.Compute
		}
	}
	if compute == "" {
		t.Fatal("the unit has no entry point of op B")
	}
	var decls strings.Builder
	for _, e := range u.ops {
		if e.WorkSize != "" {
			fmt.Fprintf(&decls, "size_t %s(const ggml_tensor * dst);\n", e.WorkSize)
		}
	}
	src := "#include \"ggml_stub.h\"\n\n" + decls.String() + "\n" + u.source +
		"\nstatic void (*const fused_gdn)(const ggml_compute_params *, ggml_tensor *) = " + compute + ";\n\n#include \"unfused_gdn.cpp\"\n"
	dir := t.TempDir()
	path := filepath.Join(dir, "unfused.cpp")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "unfused")
	args := append(append([]string{}, cxxFlags...), "-I", testdata, "-o", bin, path)
	if out, err := exec.Command(cxx(), args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s:\n%s", cxx(), strings.Join(args, " "), numbered(out, src))
	}
	out, err := exec.Command(bin, "43", strconv.Itoa(cases)).CombinedOutput()
	if err != nil && !strings.Contains(string(out), "case ") {
		t.Fatalf("%s: %v\n%s", bin, err, out)
	}
	return strings.TrimSpace(string(out))
}

// The comparison catches a kernel that reads k with q's strides, or rounds
// the update's product on its own (not ggml_vec_mad_f32's FMA).
func TestUnfusedComparisonCatchesSabotage(t *testing.T) {
	for _, c := range []struct{ what, from, to string }{
		{"k read with q's strides", "const uint32_t k_off = sq * sk3 + t * sk2 + hq * sk1;", "const uint32_t k_off = sq * sq3 + t * sq2 + hq * sq1 + 0 * (sk1 + sk2 + sk3);"},
		{"the update unfused", "fmaf(k[k_off + i], delta, state_dst[r + i])", "state_dst[r + i] + k[k_off + i] * delta"},
	} {
		u := familyUnit(t, ir.Native("cpu"))
		if !strings.Contains(u.source, c.from) {
			t.Fatalf("%s: the unit has no %q to sabotage", c.what, c.from)
		}
		u.source = strings.Replace(u.source, c.from, c.to, 1)
		if out := runUnfused(t, u, 300); strings.HasPrefix(out, "ok ") {
			t.Errorf("%s: the comparison passed (%s)", c.what, out)
		} else {
			t.Logf("%s: %s", c.what, out)
		}
	}
}
