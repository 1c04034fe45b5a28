package patch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/registry"
)

// opsBudget is issue #18's ceiling on the ops step (builders, the
// reference backend's kernels, test cases), in inserted lines (git's numstat: every added line,
// blank ones too), for the series made from the pristine fixture tree; each
// backend's is its manifest's Budget.
const opsBudget = 900

// budgets are the ceilings by the area a patch's subject names ("ggml" for
// the ops step).
func budgets(t *testing.T) map[string]int {
	out := map[string]int{"ggml": opsBudget}
	for _, m := range registry.Integrations() {
		if m.Ops != nil {
			continue // the reference's kernels are the ops step's; its own commit is for a tree with the series
		}
		if m.Budget <= 0 {
			t.Errorf("the %s manifest has no Budget", m.Backend)
		}
		out[m.Backend] = m.Budget
	}
	return out
}

// overBudget holds backends whose patch is not compact yet, with the size it
// may not grow past (a ratchet: lower it as the patch shrinks, and take the
// backend out once it fits its budget).
var overBudget = map[string]int{}

func TestSeriesPatchesFitTheirBudgets(t *testing.T) {
	root := fixture(t, "")
	names, err := Series(context.Background(), open(t, root), plan(t), filepath.Join(t.TempDir(), "series"))
	if err != nil {
		t.Fatal(err)
	}
	budgets := budgets(t)
	seen := map[string]bool{}
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		backend, added := patchBackend(string(data)), insertions(string(data))
		budget, ok := budgets[backend]
		if !ok {
			continue // a tree with the series gets a cases-only step instead
		}
		seen[backend] = true
		t.Logf("%s: %d insertions (budget %d)", backend, added, budget)
		if ceiling, pending := overBudget[backend]; pending {
			if added > ceiling {
				t.Errorf("%s: %d insertions, more than the %d it had before compaction (budget %d)", filepath.Base(n), added, ceiling, budget)
			}
			if added <= budget {
				t.Errorf("%s: %d insertions fit the budget of %d: take %s out of overBudget so the budget is asserted", filepath.Base(n), added, budget, backend)
			}
			continue
		}
		if added > budget {
			t.Errorf("%s: %d insertions, over the budget of %d", filepath.Base(n), added, budget)
		}
		if names := generatedNames(string(data)); len(names) > 0 {
			t.Errorf("%s: names no person would write: %s", filepath.Base(n), strings.Join(names, ", "))
		}
	}
	for b := range budgets {
		if !seen[b] {
			t.Errorf("the series has no %s patch", b)
		}
	}
}

// The fusion form's series (every backend with a fusion step) fits its
// budgets patch by patch: a backend's kernels and its matchers and dispatch
// each within the backend's Budget (integration.Fusion and its Kernels),
// as the before-stop hook counts them (git's insertions).
func TestFusionSeriesPatchesFitTheirBudgets(t *testing.T) {
	root := fixture(t, "")
	steps, err := FusionPlan(registry.Fusions(), []string{"all"})
	if err != nil {
		t.Fatal(err)
	}
	names, err := Series(context.Background(), open(t, root), steps, filepath.Join(t.TempDir(), "series"))
	if err != nil {
		t.Fatal(err)
	}
	budgets, want := map[string]int{}, 1 // the tests' patch, then each part of each backend
	for _, f := range registry.Fusions() {
		budgets[f.Backend] = f.Budget
		want += len(f.Parts())
	}
	if len(names) != want {
		t.Fatalf("%d patches, want %d", len(names), want)
	}
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		backend, added := patchBackend(string(data)), insertions(string(data))
		budget, ok := budgets[backend]
		if backend == "tests" {
			continue // the test-backend-ops cases have no budget of their own
		}
		if !ok || budget <= 0 {
			t.Errorf("%s: no budget for %q", filepath.Base(n), backend)
			continue
		}
		t.Logf("%s: %d insertions (budget %d)", filepath.Base(n), added, budget)
		if added > budget {
			t.Errorf("%s: %d insertions, over the budget of %d", filepath.Base(n), added, budget)
		}
	}
}

// patchBackend is the area a format-patch names in its subject ("cuda" for
// "Subject: [PATCH 5/5] cuda : ...").
func patchBackend(patch string) string {
	for _, l := range strings.Split(patch, "\n") {
		if s, ok := strings.CutPrefix(l, "Subject: "); ok {
			if i := strings.Index(s, "] "); i >= 0 {
				s = s[i+2:]
			}
			area, _, _ := strings.Cut(s, " :")
			return area
		}
	}
	return ""
}

// insertions counts a patch's added lines as git's numstat does: "+" lines
// of the diffs, not the "+++" file headers, nor anything in the message.
func insertions(patch string) int {
	n, inDiff := 0, false
	for _, l := range strings.Split(patch, "\n") {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			inDiff = true
		case inDiff && strings.HasPrefix(l, "+++ "):
		case inDiff && strings.HasPrefix(l, "+"):
			n++
		}
	}
	return n
}

func TestInsertionsCountsAddedLinesOnly(t *testing.T) {
	patch := "Subject: [PATCH 1/1] cuda : x\n\n+ not a diff line\n---\ndiff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1,3 @@\n a\n+b\n+\n-c\n"
	if got := insertions(patch); got != 2 {
		t.Errorf("insertions = %d, want 2", got)
	}
	if got := patchBackend(patch); got != "cuda" {
		t.Errorf("patchBackend = %q, want cuda", got)
	}
}

// generatedName matches what generated code names and a person would not:
// kernelgen's prefixes and the builder's numeric suffixes (col_1).
var generatedName = regexp.MustCompile(`\b(kg_\w+|KG_\w+|[a-z][a-z0-9_]*_[0-9]+)\b`)

// generatedNames lists, once each, the generated names in a patch's added lines.
func generatedNames(patch string) []string {
	seen := map[string]bool{}
	for _, l := range strings.Split(patch, "\n") {
		if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++ ") {
			for _, m := range generatedName.FindAllString(l, -1) {
				seen[m] = true
			}
		}
	}
	var out []string
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

func TestGeneratedNamesAreFound(t *testing.T) {
	got := generatedNames("+    const uint col_1 = kg_lin + KG_WG_X;\n+    float gated_delta_net_f32 = ne[0] * sq1;\n col_2\n")
	if want := "KG_WG_X col_1 kg_lin"; strings.Join(got, " ") != want {
		t.Errorf("generatedNames = %q, want %q", got, want)
	}
}

// The series reads as a colleague's: no "else if (!(a) && b)" after "if
// (a)", no "const float gate = e;" alias nor any local bound only to be
// stored (storedAliases), no pipeline named by a packed index
// (std::to_string(4 * i + ...)), no "y = y + 0.0f" without the
// comment that says why, no comment naming a fork patch, no commit message
// about generated kernels, no "return true && ..." in a supports helper (CUDA's
// included), no inline copy of ggml's helpers, no lane shuffle of CUDA's own
// beside ggml's warp_reduce_sum.
func TestSeriesTextReadsAsAColleagues(t *testing.T) {
	root := fixture(t, "")
	names, err := Series(context.Background(), open(t, root), plan(t), filepath.Join(t.TempDir(), "series"))
	if err != nil {
		t.Fatal(err)
	}
	negatedElse := regexp.MustCompile(`else if \(!\(|const float gate = e;|std::to_string\(4 \* i`)
	forkPatch := regexp.MustCompile(`(?i)patch 00[0-9][0-9]`)
	figure := regexp.MustCompile(`[0-9.]+ ?(x|%|us|µs|ms|GB/s)\b|(?i)\b(faster|speedup)\b`)
	plusZero := regexp.MustCompile(`= *([a-z_0-9]+) \+ 0\.0f?;`)
	// "return true" on a line of its own, the && (...) lines after it
	trueConj := regexp.MustCompile(`^\+\s*return true$|&& \(\(`)
	// inline copies of ggml_is_contiguous_rows and ggml_are_same_stride
	inlineHelper := regexp.MustCompile(`->nb\[0\] == 4\b|->nb\[[1-3]\] == op->src\[[0-9]\]->nb\[[1-3]\]`)
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		message, _, _ := strings.Cut(text, "\n---\n")
		if strings.Contains(strings.ToLower(message), "generated") {
			t.Errorf("%s: the commit message speaks of generated code", filepath.Base(n))
		}
		// bench/RESULTS.md measures no commit of these backends as the series
		// carries it (Metal and SYCL never ran, Vulkan and OpenCL only for
		// correctness): their messages claim no figure
		for _, b := range []string{"metal", "sycl", "vulkan", "opencl"} {
			if strings.Contains(filepath.Base(n), "-"+b+"-") && figure.MatchString(message) {
				t.Errorf("%s: the commit message claims a figure nothing measured: %q", filepath.Base(n), figure.FindString(message))
			}
		}
		lines := strings.Split(text, "\n")
		for _, a := range storedAliases(lines) {
			t.Errorf("%s:%s", filepath.Base(n), a)
		}
		for i, line := range lines {
			if !strings.HasPrefix(line, "+") {
				continue
			}
			if plusZero.MatchString(line) && (i == 0 || !strings.Contains(lines[i-1], "//")) {
				t.Errorf("%s:%d adds 0 with no comment that says why: %s", filepath.Base(n), i+1, line)
			}
			if negatedElse.MatchString(line) {
				t.Errorf("%s:%d: %s", filepath.Base(n), i+1, line)
			}
			if trueConj.MatchString(line) {
				t.Errorf("%s:%d starts a conjunction with true: %s", filepath.Base(n), i+1, line)
			}
			if inlineHelper.MatchString(line) {
				t.Errorf("%s:%d copies a ggml helper inline (ggml_is_contiguous_rows, ggml_are_same_stride): %s", filepath.Base(n), i+1, line)
			}
			if forkPatch.MatchString(line) {
				t.Errorf("%s:%d names a fork patch: %s", filepath.Base(n), i+1, line)
			}
			// CUDA's kernels reduce through common.cuh's warp_reduce_sum, not a
			// butterfly of their own
			if strings.Contains(n, "-cuda-") && strings.Contains(line, "__shfl") {
				t.Errorf("%s:%d shuffles lanes itself (warp_reduce_sum does that): %s", filepath.Base(n), i+1, line)
			}
		}
	}
}

// --author sets the commits' author line ("Name <email>"); a malformed one
// is refused before anything is written.
func TestSeriesAuthorIsConfigurable(t *testing.T) {
	root := fixture(t, "")
	names, err := SeriesBy(context.Background(), open(t, root), plan(t), filepath.Join(t.TempDir(), "series"), "Ada Lovelace <ada@example.org>")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "\nFrom: Ada Lovelace <ada@example.org>\n") {
			t.Errorf("%s: no author line for Ada Lovelace", filepath.Base(n))
		}
	}
	out := filepath.Join(t.TempDir(), "series")
	if _, err := SeriesBy(context.Background(), open(t, root), plan(t), out, "ada@example.org"); err == nil || !strings.Contains(err.Error(), "Name <email>") {
		t.Errorf("a bare address: got %v, want the form named", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused --author left %s behind", out)
	}
}

// The Metal kernels sit after kernel_gated_delta_net_impl's "#if 1 ... #else
// (a simplified version) ... #endif", not inside its first branch.
func TestMetalKernelsOutsideTheIfBlock(t *testing.T) {
	root := fixture(t, "")
	if _, err := Apply(context.Background(), open(t, root), plan(t)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "src", "ggml-metal", "ggml-metal.metal"))
	if err != nil {
		t.Fatal(err)
	}
	depth, found := 0, false
	for i, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "#if"):
			depth++
		case strings.HasPrefix(line, "#endif"):
			depth--
		}
		if strings.Contains(line, "kernel_gated_delta_net_inplace") || strings.Contains(line, "kernel_ssm_conv_update_inplace") {
			found = true
			if depth != 0 {
				t.Fatalf("ggml-metal.metal:%d: a fused kernel inside an #if block (depth %d): %s", i+1, depth, line)
			}
		}
	}
	if !found {
		t.Fatal("no fused kernel in ggml-metal.metal")
	}
}

// localDecl is an added line declaring a local with a value, in any of the
// series' kernel languages ("const float x = ...;", "float x = ...;").
var localDecl = regexp.MustCompile(`^\+\s*(?:const\s+)?[A-Za-z_]\w*\s+([A-Za-z_]\w*)\s*=\s*[^=].*;\s*$`)

// storedAliases are the added locals of a patch (lines, as git writes
// them) whose one use is storing them whole ("float e = exp(x); g_reg[r] = e;",
// "const float silu = ...; out = silu;") or declaring another local from
// them whole ("group_y = ...; s = group_y;"): the value belongs there.
// A local's uses run to its next declaration or the next file.
func storedAliases(lines []string) []string {
	var out []string
	for i, line := range lines {
		m := localDecl.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name := regexp.MustCompile(`\b` + m[1] + `\b`)
		var uses []string
		for _, l := range lines[i+1:] {
			if strings.HasPrefix(l, "diff --git ") {
				break
			}
			if d := localDecl.FindStringSubmatch(l); d != nil && d[1] == m[1] {
				break
			}
			if name.MatchString(l) {
				uses = append(uses, l)
			}
		}
		if len(uses) != 1 || !strings.HasSuffix(strings.TrimSpace(uses[0]), "= "+m[1]+";") {
			continue
		}
		what := "store"
		if localDecl.MatchString(uses[0]) {
			what = "rename" // "const uint32_t s = group_y;": one name too many
		}
		out = append(out, fmt.Sprintf("%d binds %s only to %s it (%s): %s", i+1, m[1], what, strings.TrimSpace(strings.TrimPrefix(uses[0], "+")), strings.TrimSpace(strings.TrimPrefix(line, "+"))))
	}
	return out
}
