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
	"unicode"
)

// homonyms are strings that spell a backend's name but mean something
// else, each for one file and one name only: the file is held to every
// other name.
var homonyms = map[[2]string]string{
	{"tools/toolchain/toolchain.go", "go"}:      "the go command, which builds kernelgen, not the Go reference backend",
	{"internal/backend/cuda/cuda.go", "vulkan"}: "the path of CUDA's own file in Vulkan's bench folder (bench/vulkan/cuda.go), which it owns",
}

// languageOf maps a word to the backend whose name or language it is: an
// identifier or a string with one of these words (cudaHarness, "xcrun-metal",
// emit/msl) names that backend as much as its name does. "go" and "ir"
// are words of their own too often to be read inside others; they count
// only as a whole string (above).
var languageOf = map[string]string{
	"metal": "metal", "msl": "metal", "xcrun": "metal", "metallib": "metal",
	"vulkan": "vulkan", "glsl": "vulkan", "spirv": "vulkan", "spv": "vulkan", "glslang": "vulkan", "vk": "vulkan", "vkrun": "vulkan", "spvbuild": "vulkan",
	"sycl": "sycl", "dpcpp": "sycl", "icpx": "sycl",
	"cuda": "cuda", "ptx": "cuda", "nvcc": "cuda",
	"opencl": "opencl", "pocl": "opencl",
	"goref":   "go",
	"ggmlcpu": "cpu",
}

// backendWords are the backends named by the words of s: split at
// non-letters and at case changes (openclDialect, SYCLSkin, sycl_skin),
// compared in lower case, one word or a run of up to three (OpenCLThing
// splits as Open, CL, Thing: the run Open+CL is opencl).
func backendWords(s string) []string {
	var out []string
	seen := map[string]bool{}
	words := splitWords(s)
	for i := range words {
		run := ""
		for j := i; j < len(words) && j < i+3; j++ {
			run += strings.ToLower(words[j])
			if be, ok := languageOf[run]; ok && !seen[be] {
				seen[be] = true
				out = append(out, be)
			}
		}
	}
	return out
}

// splitWords splits s at non-letters, at lower-to-upper case changes and
// before the last capital of a run of capitals followed by a lower-case
// letter (the C of SYCLChecks).
func splitWords(s string) []string {
	var out []string
	rs := []rune(s)
	start := 0
	flush := func(i int) {
		if i > start {
			out = append(out, string(rs[start:i]))
		}
		start = i
	}
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r):
			flush(i)
			start = i + 1
		case i > start && unicode.IsUpper(r) && unicode.IsLower(rs[i-1]):
			flush(i)
		case i > start && unicode.IsUpper(r) && i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]):
			flush(i)
		}
	}
	flush(len(rs))
	return out
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
	bad, usedHomonyms, err := leaks(root, owners)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b + " (move it into the backend's folder, or list the file in its Owns)")
	}
	for h := range homonyms {
		if !usedHomonyms[h] {
			t.Errorf("%s no longer spells %q: take it off homonyms", h[0], h[1])
		}
	}
}

// The check sees a backend in every spelling a Go file gives it: planted
// in a shared folder of a copy of the tree's layout, each is reported, and
// the same words in the backend's own folder are not.
func TestTheCheckSeesPlantedNames(t *testing.T) {
	root := t.TempDir()
	planted := map[string]string{
		"glue/a.go":          "package glue\n\nvar OpenCLThing = 1\n",
		"glue/b.go":          "package glue\n\nfunc runSPIRV() {}\n",
		"glue/c.go":          "package glue\n\nvar x = \"xcrun-metal\"\n",
		"glue/d.go":          "package glue\n\nvar y = \"cuda\"\n",
		"glue/e.go":          "package glue\n\ntype openclDialect struct{}\n",
		"glue/f.go":          "package glue\n\nvar SYCLChecks = 0\n",
		"glue/ok.go":         "package glue\n\n// OpenCL in a comment is prose.\nvar Opener, Clear = 1, 2\n",
		"emit/opencl/own.go": "package opencl\n\nvar OpenCLThing = 1\n",
	}
	for rel, src := range planted {
		full := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	owners := map[string][]string{"opencl": {"emit/opencl"}, "vulkan": nil, "metal": nil, "cuda": nil, "sycl": nil}
	bad, _, err := leaks(root, owners)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"glue/a.go:3:5: identifier OpenCLThing names backend \"opencl\"",
		"glue/b.go:3:6: identifier runSPIRV names backend \"vulkan\"",
		"glue/c.go:3:9: \"xcrun-metal\" names backend \"metal\"",
		"glue/d.go:3:9: \"cuda\" names backend \"cuda\"",
		"glue/e.go:3:6: identifier openclDialect names backend \"opencl\"",
		"glue/f.go:3:5: identifier SYCLChecks names backend \"sycl\"",
	}
	if strings.Join(bad, "\n") != strings.Join(want, "\n") {
		t.Errorf("reported:\n%s\nwant:\n%s", strings.Join(bad, "\n"), strings.Join(want, "\n"))
	}
}

// leaks walks the Go files under root (generated/, testdata and tests
// aside) and returns, sorted, where one names a backend it is not owned by
// (owners: backend name -> its folders and files), and the homonyms used.
func leaks(root string, owners map[string][]string) ([]string, map[[2]string]bool, error) {
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
	usedHomonyms := map[[2]string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
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
			var names []string // the backends n names
			var what string
			switch n := n.(type) {
			case *ast.BasicLit:
				s, err := strconv.Unquote(n.Value)
				if n.Kind != token.STRING || err != nil {
					return true
				}
				if _, isBackend := owners[s]; isBackend {
					names = append(names, s)
				}
				if !strings.ContainsAny(s, " \n\t") { // a name or path, not prose
					names = append(names, backendWords(s)...)
				}
				what = strconv.Quote(s)
			case *ast.Ident:
				names, what = backendWords(n.Name), "identifier "+n.Name
			default:
				return true
			}
			seen := map[string]bool{}
			for _, s := range names {
				if _, isBackend := owners[s]; !isBackend || owned(rel, s) || seen[s] {
					continue
				}
				seen[s] = true
				if _, ok := homonyms[[2]string{rel, s}]; ok {
					usedHomonyms[[2]string{rel, s}] = true
					continue
				}
				bad = append(bad, fset.Position(n.Pos()).String()[len(root)+1:]+": "+what+" names backend "+strconv.Quote(s))
			}
			return true
		})
		return nil
	})
	sort.Strings(bad)
	return bad, usedHomonyms, err
}
