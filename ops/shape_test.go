package ops

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// ops takes no backend names: a backend is asked through its Target,
// resolved once (TargetOf), and no function grows past what one reads at
// once (buildGDN was 659 lines; issue 43).
func TestOpsTakesNoBackendNames(t *testing.T) {
	const maxLines = 250
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line; n > maxLines {
				t.Errorf("%s: %s is %d lines, more than %d: split it", fset.Position(fn.Pos()), fn.Name.Name, n, maxLines)
			}
			if !fn.Name.IsExported() {
				continue
			}
			for _, p := range fn.Type.Params.List {
				if id, ok := p.Type.(*ast.Ident); !ok || id.Name != "string" {
					continue
				}
				for _, n := range p.Names {
					if l := strings.ToLower(n.Name); strings.Contains(l, "backend") || l == "be" {
						t.Errorf("%s: %s takes a backend name (%s): take an ops.Target", fset.Position(n.Pos()), fn.Name.Name, n.Name)
					}
				}
			}
		}
	}
}
