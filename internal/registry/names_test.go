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
var notYetMoved = map[string]string{}

// homonyms are strings that spell a backend's name but mean something
// else, each for one file and one name only: the file is held to every
// other name.
var homonyms = map[[2]string]string{
	{"tools/toolchain/toolchain.go", "go"}: "the go command, which builds kernelgen, not the Go reference backend",
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
	usedHomonyms := map[[2]string]bool{}
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
			if _, ok := homonyms[[2]string{rel, s}]; ok {
				usedHomonyms[[2]string{rel, s}] = true
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
	for h := range homonyms {
		if !usedHomonyms[h] {
			t.Errorf("%s no longer spells %q: take it off homonyms", h[0], h[1])
		}
	}
}
