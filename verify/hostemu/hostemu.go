package hostemu

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kernelgen/kernelgen/tools/fsx"
)

//go:embed include
var includeFS embed.FS

// Lang is a kernel language the emulation runs: its skin and what the
// emulation checks and adapts of its sources. Each is declared in a file of
// its own here (cuda.go, msl.go, sycl.go, which their backends own); the
// rest of the package reads only these fields.
type Lang struct {
	name string
	skin string // the header force-included before the sources
	// real is the header that replaces the skin under Options.Real, for a
	// language whose own implementation a host compiler can be (every one
	// kernelgen drives is clang-based); "" when none is. realOwn is the
	// folder of the skin's include tree the implementation's own headers
	// replace: it is left out of the build tree.
	real, realOwn string
	// forClang rewrites a source for clang, in place on its lines so that
	// messages keep them; nil leaves it as it is.
	forClang func([]byte) []byte
	// check reports the constructs of one source the emulation cannot give
	// their meaning, as "file:line: error: ..." messages.
	check func(file string, toks []token) []string
}

func (l *Lang) String() string { return l.name }

// Program is generated kernel source plus a harness defining
// `void hostemu_run(hostemu::Job&)`.
type Program struct {
	Name string
	Lang *Lang
	// Sources maps a file name (a relative path) to its content. They are
	// written into the build directory under these names and #included, in
	// sorted name order, into one translation unit, so compiler messages say
	// e.g. gated_delta_net.cu:123.
	Sources map[string][]byte
	// Harness is included after the sources; messages call it hostemu_harness.cpp.
	Harness []byte
}

// Arg is a named 32-bit scalar argument.
type Arg struct {
	Name string
	Bits uint32
}

func U32(name string, v uint32) Arg  { return Arg{name, v} }
func I32(name string, v int32) Arg   { return Arg{name, uint32(v)} }
func F32(name string, v float32) Arg { return Arg{name, math.Float32bits(v)} }

// Buffer is a named array of little-endian elements of ElemSize (1, 2, 4 or 8) bytes.
type Buffer struct {
	Name     string
	ElemSize int
	Data     []byte
}

// Job is one run of a built program.
type Job struct {
	// SubgroupWidth is the emulated subgroup (warp / SIMD-group / sub-group)
	// width: a power of two in 1..64; 0 means 32. For SYCL kernels with
	// [[sycl::reqd_sub_group_size(N)]] pass N: the attribute is not seen.
	SubgroupWidth int
	Args          []Arg
	Buffers       []Buffer
}

// Options select the compiler and cache; the zero value is Build's defaults.
type Options struct {
	CXX      string   // compiler command (split on spaces); default $CXX, else g++ (see Compiler)
	Flags    []string // appended after the default flags (part of the cache key)
	CacheDir string   // default CacheDir()
	// Real builds the program with the compiler's own implementation of
	// its language (for SYCL: CXX is acpp or icpx, Flags select its
	// target) instead of the emulation skin: the language's real header
	// (hostemu/sycl_real.h) keeps the job protocol and the guarded
	// buffers, and the kernels run as the implementation runs them, on a
	// device that shares host memory.
	Real bool
}

// Binary is a built program.
type Binary struct {
	Path    string // the executable
	Program string // Program.Name
	Lang    *Lang
	Cached  bool // Build found it in the cache and ran no compiler
}

// CompileError is a failed build; Output is the compiler's (or the source
// check's) messages, which name the Program's source files and lines.
type CompileError struct {
	Program string
	Lang    *Lang
	Output  string
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("hostemu: program %s (%s) does not compile:\n%s", e.Program, e.Lang, strings.TrimRight(e.Output, "\n"))
}

// RunError is a failed run. Error() reads "kernel <Kernel>: <Msg>".
type RunError struct {
	Program  string
	Kernel   string // the kernel running when it failed (the program name when unknown)
	Msg      string
	TimedOut bool
	ExitCode int    // -1 when killed
	Stderr   string // the program's stderr, launch trace lines removed
	Stdout   string
}

func (e *RunError) Error() string { return fmt.Sprintf("kernel %s: %s", e.Kernel, e.Msg) }

// DefaultTimeout is the bound kernelgen's own checks give one run: ample
// for the small cases they run, short enough to report a deadlock.
const DefaultTimeout = 60 * time.Second

// ExitRuntimeError is the exit code of a program whose runtime detected an
// error (deadlock, bad job, out-of-bounds access, ...).
const ExitRuntimeError = 3

const (
	includeDir  = "hostemu_include"
	harnessFile = "hostemu_harness.cpp"
	tuFile      = "hostemu_tu.cpp"
	exeFile     = "prog"
	cacheFormat = "hostemu-cache-v1"
)

// compilerRuns counts compiler invocations (tests check warm builds run none).
var compilerRuns atomic.Int64

// CacheDir is where built programs are kept: $KERNELGEN_CACHE/hostemu, or
// <user cache dir>/kernelgen/hostemu.
func CacheDir() (string, error) {
	if d := os.Getenv("KERNELGEN_CACHE"); d != "" {
		return filepath.Join(d, "hostemu"), nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "kernelgen", "hostemu"), nil
}

// Flags returns the exact compiler flags Build uses for lang with the given
// compiler setting (see Compiler; before Options.Flags, the output and the
// input file).
func Flags(lang *Lang, compiler string) ([]string, error) {
	c, err := FindCompiler(Options{CXX: compiler})
	if err != nil {
		return nil, err
	}
	return flagsFor(lang, c.Clang, false)
}

func flagsFor(lang *Lang, clang, real bool) ([]string, error) {
	skin := lang.skin
	if real {
		if lang.real == "" {
			return nil, fmt.Errorf("hostemu: Options.Real: no compiler implements %s here", lang)
		}
		skin, clang = lang.real, true
	}
	f := []string{
		"-std=c++20", "-O1",
		// IEEE arithmetic as written: no fast-math, no fused multiply-add
		// contraction (kernels spell out every fma they mean).
		"-fno-fast-math", "-ffp-contract=off",
		// GPU integer arithmetic wraps; generated code casts between pointer types.
		"-fwrapv", "-fno-strict-aliasing",
		"-fdiagnostics-color=never",
		"-Wno-unknown-pragmas", // #pragma unroll
	}
	if clang {
		f = append(f, "-Wno-unknown-attributes", "-Wno-ignored-attributes")
	} else {
		f = append(f, "-Wno-attributes") // [[buffer(0)]], [[host_name(...)]], ...
		// Under -Wall, gcc's maybe-uninitialized verdicts change with its
		// version and the optimisation level (register arrays filled in
		// unrolled loops are the classic false positive): a build must not
		// depend on which gcc the user has. clang's analysis is exact.
		f = append(f, "-Wno-maybe-uninitialized")
	}
	// -isystem: warnings (-Wall) are about the generated code and the harness,
	// not the emulation runtime.
	return append(f, "-isystem", includeDir, "-include", skin), nil
}

// forClang returns p with its sources as its language has them rewritten
// for clang.
func forClang(p Program) Program {
	if p.Lang.forClang == nil {
		return p
	}
	src := make(map[string][]byte, len(p.Sources))
	for n, b := range p.Sources {
		src[n] = p.Lang.forClang(b)
	}
	p.Sources = src
	return p
}

// Build compiles p with the default options.
func Build(ctx context.Context, p Program) (*Binary, error) { return BuildWith(ctx, p, Options{}) }

var keyLocks sync.Map // cache key -> *sync.Mutex: one compile per key per process

// compileFailures keeps each key's CompileError for the process: the cases
// of one program share its build, and a failed one (not cached on disk)
// would otherwise be recompiled for every case, which with a real SYCL
// compiler costs minutes.
var compileFailures sync.Map // cache key -> *CompileError

// BuildWith compiles p into a cached executable. The cache key covers the
// sources, harness, runtime headers, flags and the compiler's identity (its
// resolved path, size and modification time), so a warm build runs nothing.
// Entries are built in a temporary directory and renamed into place.
func BuildWith(ctx context.Context, p Program, o Options) (*Binary, error) {
	if p.Name == "" {
		return nil, errors.New("hostemu: program has no name")
	}
	if p.Lang == nil {
		return nil, fmt.Errorf("hostemu: program %s has no language", p.Name)
	}
	names, err := sourceNames(p)
	if err != nil {
		return nil, err
	}
	if msg := checkSources(p, names); msg != "" {
		return nil, &CompileError{Program: p.Name, Lang: p.Lang, Output: msg}
	}
	cc, err := FindCompiler(o)
	if err != nil {
		return nil, err
	}
	flags, err := flagsFor(p.Lang, cc.Clang, o.Real)
	if err != nil {
		return nil, err
	}
	if cc.Clang {
		p = forClang(p)
	}
	flags = append(flags, o.Flags...)
	root := o.CacheDir
	if root == "" {
		if root, err = CacheDir(); err != nil {
			return nil, fmt.Errorf("hostemu: cache directory: %w", err)
		}
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	sweepOnce(root)
	key, err := cacheKey(p, names, cc, flags)
	if err != nil {
		return nil, err
	}
	final := filepath.Join(root, key)
	bin := &Binary{Path: filepath.Join(final, exeFile), Program: p.Name, Lang: p.Lang}

	mu, _ := keyLocks.LoadOrStore(key, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	if fi, err := os.Stat(bin.Path); err == nil && fi.Mode().IsRegular() {
		bin.Cached = true
		return bin, nil
	}
	if ce, ok := compileFailures.Load(key); ok {
		return nil, ce.(*CompileError)
	}

	work, err := os.MkdirTemp(root, ".build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work) // a no-op once renamed into place
	if err := writeTree(work, p, names, o.Real); err != nil {
		return nil, err
	}
	args := append(append(append([]string{}, cc.Command[1:]...), flags...), "-o", exeFile, tuFile)
	cmd := exec.CommandContext(ctx, cc.Path, args...)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	killTree(cmd)
	compilerRuns.Add(1)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("hostemu: building %s: %w", p.Name, ctx.Err())
		}
		// The program's fault only if the compiler can build the runtime
		// on its own.
		if perr := probeRuntime(ctx, cc, flags, work); perr != nil {
			return nil, perr
		}
		msg := string(out)
		if len(bytes.TrimSpace(out)) == 0 {
			msg = err.Error()
		}
		ce := &CompileError{Program: p.Name, Lang: p.Lang, Output: msg}
		compileFailures.Store(key, ce)
		return nil, ce
	}
	if err := os.Rename(work, final); err != nil {
		// Another process may have finished the same entry first; an entry
		// that lost its executable is replaced.
		if fi, serr := os.Stat(bin.Path); serr == nil && fi.Mode().IsRegular() {
			return bin, nil
		}
		if rerr := os.RemoveAll(final); rerr != nil {
			return nil, fmt.Errorf("hostemu: caching %s: %w", p.Name, rerr)
		}
		if err := os.Rename(work, final); err != nil {
			return nil, fmt.Errorf("hostemu: caching %s: %w", p.Name, err)
		}
	}
	return bin, nil
}

var swept sync.Map // cache root -> struct{}

// sweepOnce removes, once per process, build directories a killed build
// left in the cache.
func sweepOnce(root string) {
	if _, done := swept.LoadOrStore(root, struct{}{}); !done {
		fsx.RemoveStale(root, ".build-")
	}
}

func sourceNames(p Program) ([]string, error) {
	names := make([]string, 0, len(p.Sources))
	for n := range p.Sources {
		clean := path.Clean(n)
		switch {
		case n == "" || clean != n || !filepath.IsLocal(n) || strings.ContainsAny(n, "\"\\\n\r"):
			return nil, fmt.Errorf("hostemu: program %s: source name %q must be a clean relative path", p.Name, n)
		case strings.HasPrefix(n, "hostemu_") || n == exeFile:
			return nil, fmt.Errorf("hostemu: program %s: source name %q is reserved", p.Name, n)
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// cacheKey identifies a build: the compiler (its executable's resolved
// path, size and time; for a command with arguments also those and what
// --version says, which names the compiler behind a wrapper such as
// ccache), the flags, the runtime and the program. A plain compiler's key
// is what it was before commands were accepted, so caches stay warm.
func cacheKey(p Program, names []string, cc *Compiler, flags []string) (string, error) {
	h := sha256.New()
	id := cc.Path
	if real, err := filepath.EvalSymlinks(id); err == nil {
		id = real
	}
	fi, err := os.Stat(id)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d\x00%d\x00%s\x00", cacheFormat, p.Lang, id, fi.Size(), fi.ModTime().UnixNano(), strings.Join(flags, "\x01"))
	if len(cc.Command) > 1 {
		fmt.Fprintf(h, "C%s\x00%s\x00", strings.Join(cc.Command[1:], "\x01"), cc.Version)
	}
	err = fs.WalkDir(includeFS, "include", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := includeFS.ReadFile(name)
		fmt.Fprintf(h, "H%s\x00%d\x00", name, len(b))
		h.Write(b)
		return err
	})
	if err != nil {
		return "", err
	}
	for _, n := range names {
		fmt.Fprintf(h, "S%s\x00%d\x00", n, len(p.Sources[n]))
		h.Write(p.Sources[n])
	}
	fmt.Fprintf(h, "R%d\x00", len(p.Harness))
	h.Write(p.Harness)
	return hex.EncodeToString(h.Sum(nil))[:40], nil
}

// writeTree writes the build directory; under real without the skin's
// headers the implementation has (the language's realOwn), so its
// includes resolve to the implementation's.
func writeTree(dir string, p Program, names []string, real bool) error {
	write := func(rel string, b []byte) error {
		full := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		return os.WriteFile(full, b, 0o644)
	}
	err := fs.WalkDir(includeFS, "include", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if real && p.Lang.realOwn != "" && strings.HasPrefix(name, path.Join("include", p.Lang.realOwn)+"/") {
			return nil
		}
		b, err := includeFS.ReadFile(name)
		if err != nil {
			return err
		}
		return write(includeDir+strings.TrimPrefix(name, "include"), b)
	})
	if err != nil {
		return err
	}
	var tu strings.Builder
	fmt.Fprintf(&tu, "// hostemu translation unit for program %s (%s).\n", p.Name, p.Lang)
	for _, n := range names {
		if err := write(n, p.Sources[n]); err != nil {
			return err
		}
		fmt.Fprintf(&tu, "#include \"%s\"\n", n)
	}
	if err := write(harnessFile, p.Harness); err != nil {
		return err
	}
	fmt.Fprintf(&tu, "#include \"%s\"\n#include <hostemu/main.h>\n", harnessFile)
	return write(tuFile, []byte(tu.String()))
}

// Run executes the program on job and returns every buffer's bytes after the
// run. A run longer than timeout is killed and reported as "kernel <name>:
// timed out after <timeout> (deadlock?)"; timeout 0 sets no bound but ctx
// (tests: go test's deadline, not a figure tuned on an idle machine).
func (b *Binary) Run(ctx context.Context, job Job, timeout time.Duration) (map[string][]byte, error) {
	enc, err := encodeJob(job)
	if err != nil {
		return nil, fmt.Errorf("hostemu: program %s: %w", b.Program, err)
	}
	if timeout < 0 {
		return nil, fmt.Errorf("hostemu: program %s: negative timeout %v", b.Program, timeout)
	}
	dir, err := os.MkdirTemp("", "hostemu-run-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	jobPath, outPath := filepath.Join(dir, "job.bin"), filepath.Join(dir, "result.bin")
	if err := os.WriteFile(jobPath, enc, 0o644); err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancel(ctx)
	if timeout > 0 {
		rctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	var stdout, stderr capped
	cmd := exec.CommandContext(rctx, b.Path, jobPath, outPath)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 2 * time.Second
	runErr := cmd.Run()

	kernel, rest := splitTrace(stderr.String())
	if kernel == "" {
		kernel = b.Program
	}
	re := &RunError{Program: b.Program, Kernel: kernel, Stderr: rest, Stdout: stdout.String(), ExitCode: -1}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("kernel %s: %w", kernel, ctx.Err())
	}
	if rctx.Err() != nil {
		re.TimedOut = true
		re.Msg = fmt.Sprintf("timed out after %v (deadlock?)", timeout)
		return nil, re
	}
	if runErr != nil {
		var ee *exec.ExitError
		if !errors.As(runErr, &ee) {
			return nil, fmt.Errorf("hostemu: running %s: %w", b.Program, runErr)
		}
		re.ExitCode = ee.ExitCode()
		if msg, ok := runtimeMessage(rest); ok && re.ExitCode == ExitRuntimeError {
			if k, m, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(k, "kernel ") {
				re.Kernel, msg = strings.TrimPrefix(k, "kernel "), m
			}
			re.Msg = msg
		} else {
			re.Msg = fmt.Sprintf("program %s failed (%v)", b.Program, ee)
			if s := strings.TrimSpace(rest); s != "" {
				re.Msg += ":\n" + s
			}
		}
		return nil, re
	}
	res, err := os.ReadFile(outPath)
	if err != nil {
		return nil, fmt.Errorf("hostemu: program %s: reading results: %w", b.Program, err)
	}
	bufs, err := decodeResults(res)
	if err != nil {
		return nil, fmt.Errorf("hostemu: program %s: %w", b.Program, err)
	}
	return bufs, nil
}

// splitTrace takes out the runtime's "hostemu: launch <name>" lines and returns
// the last name and the remaining text.
func splitTrace(s string) (last, rest string) {
	var keep []string
	for _, line := range strings.SplitAfter(s, "\n") {
		if name, ok := strings.CutPrefix(line, "hostemu: launch "); ok {
			last = strings.TrimSpace(name)
			continue
		}
		keep = append(keep, line)
	}
	return last, strings.Join(keep, "")
}

func runtimeMessage(stderr string) (string, bool) {
	for _, line := range strings.Split(stderr, "\n") {
		if msg, ok := strings.CutPrefix(line, "hostemu: error: "); ok {
			return msg, true
		}
	}
	return "", false
}

// capped keeps the first 1 MiB written to it.
type capped struct{ bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := 1<<20 - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// Job and result files: see doc.go.
var (
	jobMagic    = []byte("HEJB")
	resultMagic = []byte("HERS")
)

const formatVersion = 1

func encodeJob(j Job) ([]byte, error) {
	sg := j.SubgroupWidth
	if sg == 0 {
		sg = 32
	}
	if sg < 1 || sg > 64 || sg&(sg-1) != 0 {
		return nil, fmt.Errorf("subgroup width %d: want a power of two in 1..64", sg)
	}
	var b bytes.Buffer
	le := binary.LittleEndian
	put32 := func(v uint32) { b.Write(le.AppendUint32(nil, v)) }
	putStr := func(s string) { put32(uint32(len(s))); b.WriteString(s) }
	b.Write(jobMagic)
	put32(formatVersion)
	put32(uint32(sg))
	seen := map[string]bool{}
	put32(uint32(len(j.Args)))
	for _, a := range j.Args {
		if a.Name == "" || seen["a"+a.Name] {
			return nil, fmt.Errorf("argument name %q is empty or repeated", a.Name)
		}
		seen["a"+a.Name] = true
		putStr(a.Name)
		put32(a.Bits)
	}
	put32(uint32(len(j.Buffers)))
	for _, buf := range j.Buffers {
		if buf.Name == "" || seen["b"+buf.Name] {
			return nil, fmt.Errorf("buffer name %q is empty or repeated", buf.Name)
		}
		seen["b"+buf.Name] = true
		switch buf.ElemSize {
		case 1, 2, 4, 8:
		default:
			return nil, fmt.Errorf("buffer %s: element size %d, want 1, 2, 4 or 8", buf.Name, buf.ElemSize)
		}
		if len(buf.Data)%buf.ElemSize != 0 {
			return nil, fmt.Errorf("buffer %s: %d bytes is not a whole number of %d-byte elements", buf.Name, len(buf.Data), buf.ElemSize)
		}
		putStr(buf.Name)
		put32(uint32(buf.ElemSize))
		b.Write(le.AppendUint64(nil, uint64(len(buf.Data)/buf.ElemSize)))
		b.Write(buf.Data)
	}
	return b.Bytes(), nil
}

func decodeResults(b []byte) (map[string][]byte, error) {
	r := bytes.NewReader(b)
	le := binary.LittleEndian
	var magic [4]byte
	var version, n uint32
	if _, err := io.ReadFull(r, magic[:]); err != nil || !bytes.Equal(magic[:], resultMagic) {
		return nil, errors.New("result file: bad magic")
	}
	if err := binary.Read(r, le, &version); err != nil || version != formatVersion {
		return nil, fmt.Errorf("result file: version %d, want %d", version, formatVersion)
	}
	if err := binary.Read(r, le, &n); err != nil {
		return nil, fmt.Errorf("result file: %w", err)
	}
	out := make(map[string][]byte, n)
	for i := uint32(0); i < n; i++ {
		var nameLen, elem uint32
		var count uint64
		if err := binary.Read(r, le, &nameLen); err != nil || int64(nameLen) > int64(r.Len()) {
			return nil, errors.New("result file: truncated")
		}
		name := make([]byte, nameLen)
		io.ReadFull(r, name)
		if err := binary.Read(r, le, &elem); err != nil {
			return nil, errors.New("result file: truncated")
		}
		if err := binary.Read(r, le, &count); err != nil || elem == 0 || count > uint64(r.Len())/uint64(elem) {
			return nil, errors.New("result file: truncated")
		}
		data := make([]byte, count*uint64(elem))
		io.ReadFull(r, data)
		out[string(name)] = data
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("result file: %d trailing bytes", r.Len())
	}
	return out, nil
}

// Helpers to build buffers and read results.

func F32Buffer(name string, v []float32) Buffer {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return Buffer{Name: name, ElemSize: 4, Data: b}
}

func U32Buffer(name string, v []uint32) Buffer {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	return Buffer{Name: name, ElemSize: 4, Data: b}
}

func I32Buffer(name string, v []int32) Buffer {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return Buffer{Name: name, ElemSize: 4, Data: b}
}

// ZeroBuffer is count zero elements of elemSize bytes.
func ZeroBuffer(name string, elemSize, count int) Buffer {
	return Buffer{Name: name, ElemSize: elemSize, Data: make([]byte, elemSize*count)}
}

func AsU32(b []byte) []uint32 {
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

func AsI32(b []byte) []int32 {
	v := make([]int32, len(b)/4)
	for i := range v {
		v[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func AsF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
