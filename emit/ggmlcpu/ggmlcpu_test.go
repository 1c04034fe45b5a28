package ggmlcpu

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/ir"
)

var update = flag.Bool("update", false, "rewrite testdata/native-cpu*.cpp, the lowered sources (review the diff)")

// The native-cpu sources are reviewed as golden files: one function per op
// (what a tree with the series' op D gets in its place), and one per family,
// the text upstream gets.
func TestSourceGolden(t *testing.T) {
	for _, c := range []struct {
		file    string
		unit    func(*testing.T, ir.Arith) *lowered
		entries []string
	}{
		{"native-cpu.cpp", unit, []string{
			"A ggml_compute_forward_gated_delta_net_inplace_f32 ",
			"B ggml_compute_forward_gated_delta_net_inplace_ids ",
			"C ggml_compute_forward_ssm_conv_update_inplace_f32 ",
			"D ggml_compute_forward_ssm_conv_update_inplace_ids ggml_ssm_conv_update_inplace_ids_work_size",
		}},
		{"native-cpu-families.cpp", familyUnit, []string{
			"A ggml_compute_forward_gated_delta_net_inplace ",
			"B ggml_compute_forward_gated_delta_net_inplace ",
			"C ggml_compute_forward_ssm_conv_update_inplace ",
			"D ggml_compute_forward_ssm_conv_update_inplace ggml_ssm_conv_update_inplace_work_size",
		}},
	} {
		u := c.unit(t, ir.Native("cpu"))
		path := filepath.Join("testdata", c.file)
		if *update {
			if err := os.WriteFile(path, []byte(u.source), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./emit/ggmlcpu -update)", err)
		}
		if d := cmp.Diff(string(want), u.source); d != "" {
			t.Errorf("%s is stale (-golden +now); review and run go test ./emit/ggmlcpu -update:\n%s", path, d)
		}
		var entries []string
		for _, e := range u.ops {
			entries = append(entries, e.Fusion+" "+e.Compute+" "+e.WorkSize)
		}
		if d := cmp.Diff(c.entries, entries); d != "" {
			t.Errorf("%s: entry points (-want +got):\n%s", c.file, d)
		}
	}
}

// What ggml-cpu's lowering cannot run is refused with the reason.
func TestEmitRefuses(t *testing.T) {
	for _, c := range []struct {
		arith ir.Arith
		want  string
	}{
		{ir.Native("vulkan"), "alternative schedules (one_dispatch) are not lowered for ggml-cpu"},
		{ir.Native("metal"), "a native-order reduction has no ggml-cpu lowering"},
	} {
		m, err := glue.Model(c.arith)
		if err != nil {
			t.Fatal(err)
		}
		if c.arith.Backend == "vulkan" {
			m = m[1:2] // op B, which has a one-dispatch schedule there
		}
		_, err = lower(m, instances(m, c.arith))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Emit = %v, want an error saying %q", c.arith, err, c.want)
		}
	}
}

// A unit whose kernels no glue op dispatches, in that order, is refused:
// the node's bindings come from the op that runs them.
func TestEmitFindsTheGlueOpOfTheUnit(t *testing.T) {
	a := ir.Native("cpu")
	m, err := glue.Model(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range m {
		if len(op.Dispatches) != 2 {
			continue
		}
		gather, compute := op.Dispatches[0].Kernel, op.Dispatches[1].Kernel
		u := ir.Unit{Op: op.Name, Contracts: []ir.Arith{a}, Kernels: []*ir.Kernel{gather, compute}, Instances: instances([]*glue.Op{op}, a)}
		src, err := Emit(u)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), "static void "+FunctionName(compute)+"(") {
			t.Errorf("%s: the source does not define %s", op.Name, FunctionName(compute))
		}
		u.Kernels = []*ir.Kernel{compute, gather}
		if _, err := Emit(u); err == nil || !strings.Contains(err.Error(), "dispatches the unit's kernels") {
			t.Errorf("%s: kernels out of order: Emit = %v, want a refusal", op.Name, err)
		}
		return
	}
	t.Fatal("no native-cpu glue op dispatches two kernels")
}
