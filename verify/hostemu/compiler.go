package hostemu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Compiler is the host C++ compiler a build runs: Options.CXX, else $CXX,
// else g++. Like make's $(CXX), the setting is a command split on spaces,
// so "ccache g++" and "g++ -O0" work (the arguments come before
// kernelgen's flags, which therefore win where they conflict).
type Compiler struct {
	Setting string   // what was asked for
	Source  string   // where it came from: "Options.CXX", "$CXX" or "default"
	Command []string // Setting split on spaces
	Path    string   // Command[0] found on PATH
	Version string   // the first line of `Command --version`
	Clang   bool     // clang (by name or by its version), as macOS's g++ is
}

// ToolError is a build that failed because of the compiler, not the
// program: not found, not startable, or unable to compile even the
// emulation runtime alone with kernelgen's flags. Its message names the
// setting and what to do.
type ToolError struct {
	Compiler string // the setting, e.g. "g++" or "ccache g++"
	Source   string
	Msg      string
}

func (e *ToolError) Error() string {
	fix := "set CXX to a C++20 compiler (g++ 12 or clang++ 16 or newer; a command with arguments such as \"ccache g++\" works), or unset it to use g++"
	if e.Source == "default" {
		fix = "install g++ (Debian: apt-get install g++) or set CXX to another C++20 compiler"
	}
	what := fmt.Sprintf("the C++ compiler %q", e.Compiler)
	if e.Source == "$CXX" {
		what = fmt.Sprintf("the C++ compiler CXX=%q", e.Compiler)
	}
	return fmt.Sprintf("hostemu: %s %s; %s", what, e.Msg, fix)
}

// compilers caches FindCompiler by setting: one --version run per process.
var compilers sync.Map // setting + "\x00" + source -> *compilerOnce

type compilerOnce struct {
	once sync.Once
	c    *Compiler
	err  error
}

// FindCompiler resolves the compiler Options o select (see Compiler).
func FindCompiler(o Options) (*Compiler, error) {
	setting, source := o.CXX, "Options.CXX"
	if setting == "" {
		setting, source = os.Getenv("CXX"), "$CXX"
	}
	if strings.TrimSpace(setting) == "" {
		setting, source = "g++", "default"
	}
	v, _ := compilers.LoadOrStore(setting+"\x00"+source, new(compilerOnce))
	e := v.(*compilerOnce)
	e.once.Do(func() { e.c, e.err = findCompiler(setting, source) })
	return e.c, e.err
}

func findCompiler(setting, source string) (*Compiler, error) {
	c := &Compiler{Setting: setting, Source: source, Command: strings.Fields(setting)}
	terr := func(format string, args ...any) error {
		return &ToolError{Compiler: setting, Source: source, Msg: fmt.Sprintf(format, args...)}
	}
	path, err := exec.LookPath(c.Command[0])
	if err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			err = ee.Err
		}
		return nil, terr("was not found: %s: %v", c.Command[0], err)
	}
	c.Path = path
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, append(c.Command[1:], "--version")...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, terr("does not run (`%s --version`: %v): %s", setting, err, firstLine(out))
	}
	c.Version = firstLine(out)
	c.Clang = strings.Contains(filepath.Base(path), "clang") || bytes.Contains(out, []byte("clang"))
	return c, nil
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// probeRuntime compiles an empty program with the runtime and the flags in
// dir (a build directory holding the runtime headers). A compiler that
// cannot do even that is the environment's fault: the *ToolError says so.
func probeRuntime(ctx context.Context, c *Compiler, flags []string, dir string) error {
	v, _ := probes.LoadOrStore(c.Setting+"\x00"+strings.Join(flags, "\x00"), new(probeOnce))
	p := v.(*probeOnce)
	p.once.Do(func() {
		src := filepath.Join(dir, "hostemu_probe.cpp")
		if p.err = os.WriteFile(src, []byte("#include <hostemu/main.h>\nvoid hostemu_run(hostemu::Job&) {}\n"), 0o644); p.err != nil {
			return
		}
		args := append(append(append([]string{}, c.Command[1:]...), flags...), "-o", "hostemu_probe", "hostemu_probe.cpp")
		cmd := exec.CommandContext(ctx, c.Path, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		killTree(cmd)
		if out, err := cmd.CombinedOutput(); err != nil && ctx.Err() == nil {
			msg := strings.TrimSpace(string(out))
			if len(msg) > 2000 {
				msg = msg[:2000] + "\n..."
			}
			p.err = &ToolError{Compiler: c.Setting, Source: c.Source,
				Msg: fmt.Sprintf("cannot compile even an empty program with the emulation runtime and kernelgen's flags (%v):\n%s\n", err, msg)}
		}
	})
	return p.err
}

var probes sync.Map // setting + flags -> *probeOnce

type probeOnce struct {
	once sync.Once
	err  error
}
