package gentree

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Module is kernelgen's module path; its root holds the generated/ tree.
const Module = "github.com/kernelgen/kernelgen"

// DirName is the generated tree's directory under the module root.
const DirName = "generated"

// ModuleRoot finds the root of the kernelgen module that holds dir, the way
// go does: the nearest directory at or above dir with a go.mod. An error
// says when there is none, or when the nearest one is another module's.
func ModuleRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		switch {
		case err == nil:
			if m := modulePath(data); m != Module {
				return "", fmt.Errorf("%s is not in a kernelgen checkout: the nearest go.mod (%s) is module %q, not %s", abs, filepath.Join(d, "go.mod"), m, Module)
			}
			return d, nil
		case !errors.Is(err, fs.ErrNotExist):
			return "", err
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%s is not in a kernelgen checkout: no go.mod in it or any parent", abs)
		}
	}
}

// modulePath reads the module directive of a go.mod.
func modulePath(gomod []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}
