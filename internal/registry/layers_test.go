package registry

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/kernelgen/kernelgen/"

// The floors hold: a package imports nothing of the floors above it. Each
// rule names a folder and the folders its packages must not import (tests
// aside).
func TestLayers(t *testing.T) {
	rules := []struct {
		pkgs      string
		forbidden []string
	}{
		{"tools", []string{"ir", "dsl", "ops", "pass", "emit", "glue", "templates", "verify", "bench", "internal"}},
		{"ir", []string{"dsl", "ops", "pass", "emit", "glue", "templates", "verify", "bench", "internal", "tools"}},
		{"pass", []string{"dsl", "ops", "emit", "glue", "templates", "verify", "bench", "internal"}},
		{"ops", []string{"emit", "glue", "templates", "verify", "bench", "internal"}},
		{"glue", []string{"emit", "templates", "verify", "bench", "internal"}},
		// an emitter takes an ir.Unit: it reads nothing of ops
		{"emit", []string{"templates", "verify", "bench", "internal", "ops", "dsl"}},
		{"verify", []string{"bench", "internal"}},
		{"bench", []string{"internal"}},
		// the patch engine reads the manifests it is given and names no
		// backend; what a manifest is and what upstream kernels share sit
		// below the backends
		{"internal/patch", []string{"internal/registry", "internal/backend", "internal/cli"}},
		{"internal/integration", []string{"internal/patch", "internal/registry", "internal/backend", "internal/cli"}},
		{"internal/upstream", []string{"internal/patch", "internal/integration", "internal/registry", "internal/backend", "internal/cli"}},
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, r := range rules {
		err := filepath.WalkDir(filepath.Join(root, r.pkgs), func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			p, err := build.ImportDir(path, 0)
			if err != nil {
				return nil // no Go files here
			}
			checked++
			rel, _ := filepath.Rel(root, path)
			for _, imp := range p.Imports {
				for _, f := range r.forbidden {
					if imp == module+f || strings.HasPrefix(imp, module+f+"/") {
						t.Errorf("%s imports %s, a floor above it", filepath.ToSlash(rel), strings.TrimPrefix(imp, module))
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d packages; the walk found too few", checked)
	}
}
