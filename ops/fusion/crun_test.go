package fusion

import (
	"errors"
	"strings"
	"testing"
)

// The run writes each pattern's functions before itself, returns false for
// a node no step has, branches to each pattern's step, and names the
// pattern whose functions could not be written.
func TestRunWritesThePatternsThenTheirBranches(t *testing.T) {
	r := Run{
		Pattern:   func(w *strings.Builder, pt *Pattern) error { w.WriteString("// " + pt.Name + "\n"); return nil },
		Doc:       "runs node's step",
		Signature: "static bool run(const ms_t & ms, const ggml_tensor * node) {",
		Branch:    func(n string) string { return FindC("ms.", n, "        go_"+n+"("+n+"->second);\n") },
	}
	var w strings.Builder
	if err := r.C(&w, StatePattern, ConvPattern); err != nil {
		t.Fatal(err)
	}
	want := "// " + StatePattern.Name + "\n// " + ConvPattern.Name + "\n" + `
// runs node's step
static bool run(const ms_t & ms, const ggml_tensor * node) {
    if (ms.fused.count(node) == 0) {
        return false;
    }
    const auto ` + StatePattern.CName() + ` = ms.` + StatePattern.CName() + `.find(node);
    if (` + StatePattern.CName() + ` != ms.` + StatePattern.CName() + `.end()) {
        go_` + StatePattern.CName() + `(` + StatePattern.CName() + `->second);
    }
    const auto ` + ConvPattern.CName() + ` = ms.` + ConvPattern.CName() + `.find(node);
    if (` + ConvPattern.CName() + ` != ms.` + ConvPattern.CName() + `.end()) {
        go_` + ConvPattern.CName() + `(` + ConvPattern.CName() + `->second);
    }
    return true;
}
`
	if w.String() != want {
		t.Errorf("the run:\n%s\nwant:\n%s", w.String(), want)
	}
	r.Pattern = func(*strings.Builder, *Pattern) error { return errors.New("no kernel") }
	if err := r.C(&strings.Builder{}, ConvPattern); err == nil || !strings.Contains(err.Error(), ConvPattern.Name) {
		t.Errorf("the error %v does not name the pattern", err)
	}
}

// The node loop's calls: the matcher over the graph where the fusion is on,
// its test of a cache's memory continued under its return, and the run.
func TestFindAndRunCalls(t *testing.T) {
	sp := Spelling{Prefix: "kg"}
	got := sp.FindC(Find{Indent: "  ", On: "on", Matches: "ms", Local: true, Capture: "ctx", Owns: []string{"a &&", "b"}})
	want := `  kg_matches ms;
  if (on) {
      kg_find(cgraph, [ctx](const ggml_tensor * cache) {
          return a &&
                 b;
      }, ms);
  }
`
	if got != want {
		t.Errorf("the find:\n%s\nwant:\n%s", got, want)
	}
	if got, want := sp.RunCallC("  ", "ctx, ms, node"), "  if (kg_run(ctx, ms, node)) {\n      continue;\n  }\n"; got != want {
		t.Errorf("the run's call:\n%s\nwant:\n%s", got, want)
	}
}
