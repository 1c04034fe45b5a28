package registry

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// notYetMoved are the files that still name backends though they are not
// a backend's own: each with why, so the list can only shrink.
var notYetMoved = map[string]string{
	"ops/arith.go":                  "the native contracts' arithmetic styles, per backend (ops.Contract declared by the backends is not built yet)",
	"ops/variants.go":               "the tilings and batched schedules per backend (ops.Tuning declared by the backends is not built yet)",
	"internal/patch/plan.go":        "the series' order of backends and their integration steps (the integration manifest is not built yet)",
	"internal/patch/vulkan.go":      "vulkan's integration step (the integration manifest is not built yet)",
	"internal/patch/others.go":      "metal's, sycl's and cuda's integration steps (the integration manifest is not built yet)",
	"tools/toolchain/toolchain.go":  "xcrun's metal tool, a command name",
	"internal/upstream/upstream.go": "the upstream kernels of metal, sycl and cuda, a function each (they join their backends with the integration manifest)",
	"internal/upstream/vulkan.go":   "vulkan's upstream shaders (they join the backend with the integration manifest)",
	"internal/patch/opencl.go":      "opencl's integration step (the integration manifest is not built yet)",
	"internal/upstream/opencl.go":   "opencl's upstream kernels (they join the backend with the integration manifest)",
	"verify/cases/unfused.go":       "the batched op's base tiling is Vulkan's (ops.Tuning declared by the backends is not built yet)",
	"bench/vulkan/main.go":          "compares its dispatch with bench/cuda's (a flag for cuda's CSV, cuda's tiling)",
}

// No file outside a backend's own folder, the files it owns and this
// registry names a backend: a new backend is its folder and one line here.
func TestOnlyBackendsNameThemselves(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string][]string{} // backend name -> folders and files it owns
	for _, b := range all {
		owners[b.Name] = append([]string{"internal/backend/" + b.Dir}, b.Owns...)
		for _, o := range b.Owns {
			if _, err := os.Stat(filepath.Join(root, o)); err != nil {
				t.Errorf("%s owns %s, which does not exist", b.Name, o)
			}
		}
	}
	owned := func(rel, name string) bool {
		if strings.HasPrefix(rel, "internal/registry/") {
			return true
		}
		for _, o := range owners[name] {
			if rel == o || strings.HasPrefix(rel, o+"/") {
				return true
			}
		}
		return false
	}
	var bad []string
	used := map[string]bool{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "generated" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if _, isBackend := owners[s]; !isBackend || owned(rel, s) {
				return true
			}
			if _, ok := notYetMoved[rel]; ok {
				used[rel] = true
				return true
			}
			bad = append(bad, fset.Position(lit.Pos()).String()[len(root)+1:]+": names backend "+strconv.Quote(s))
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b + " (move it into the backend's folder, or list the file in its Owns)")
	}
	for rel := range notYetMoved {
		if !used[rel] {
			t.Errorf("%s no longer names a backend: take it off notYetMoved", rel)
		}
	}
}
