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
	"goref": "go",
}

// backendWords are the backends named by the words of s: split at
// non-letters and at lower-to-upper case changes (openclDialect, SYCLSkin,
// sycl_skin), compared in lower case.
func backendWords(s string) []string {
	var out []string
	seen := map[string]bool{}
	word := func(w string) {
		if be, ok := languageOf[strings.ToLower(w)]; ok && !seen[be] {
			seen[be] = true
			out = append(out, be)
		}
	}
	rs := []rune(s)
	start := 0
	flush := func(i int) {
		if i > start {
			word(string(rs[start:i]))
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
			flush(i) // the C of SYCLChecks
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
			for _, s := range names {
				if _, isBackend := owners[s]; !isBackend || owned(rel, s) {
					continue
				}
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
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b + " (move it into the backend's folder, or list the file in its Owns)")
	}
	for h := range homonyms {
		if !usedHomonyms[h] {
			t.Errorf("%s no longer spells %q: take it off homonyms", h[0], h[1])
		}
	}
}
