package emulate

import (
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/kernelgen/kernelgen/internal/tier"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

var seed = flag.Uint64("seed", 1, "seed of the random cases")

// widths are the subgroup widths every (language, op, contract) runs at.
var widths = []int{8, 16, 32, 64}

// language is one emulated backend and its own native contract.
type language struct {
	lang   *hostemu.Lang
	native ir.Arith
}

var languages = []language{
	{hostemu.CUDA, ir.Native("cuda")},
	{hostemu.MSL, ir.Native("metal")},
	{hostemu.SYCL, ir.Native("sycl")},
}

func TestMain(m *testing.M) {
	// Builds are cached across runs in the user cache (hostemu's default);
	// where there is none, in a directory for this run.
	if os.Getenv("KERNELGEN_CACHE") == "" {
		if _, err := os.UserCacheDir(); err != nil {
			if d, err := os.MkdirTemp("", "emulate-cache-"); err == nil {
				os.Setenv("KERNELGEN_CACHE", d)
				code := m.Run()
				os.RemoveAll(d)
				os.Exit(code)
			}
		}
	}
	os.Exit(m.Run())
}

// needCompiler skips without the host compiler, and fails where CI says
// every tool is installed (KERNELGEN_REQUIRE_TOOLS).
func needCompiler(t *testing.T) {
	t.Helper()
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "g++"
	}
	if _, err := exec.LookPath(cxx); err != nil {
		if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
			t.Fatalf("no C++ compiler %s (apt-get install g++): %v", cxx, err)
		}
		t.Skipf("no C++ compiler %s: %v", cxx, err)
	}
}

// contracts are the contracts lang builds op under: portable and its own
// native one; the gathers' one kernel once.
func contracts(l language, op *ops.Op) []ir.Arith {
	if op.ArithFree() {
		return []ir.Arith{ir.Portable}
	}
	return []ir.Arith{ir.Portable, l.native}
}

// rng gives each subtest its own stream, so a failure replays alone with -run.
func rng(t *testing.T) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(t.Name()))
	return rand.New(rand.NewPCG(*seed, h.Sum64()))
}

type buildResult struct {
	once sync.Once
	bin  *hostemu.Binary
	err  error
}

var builds sync.Map // programKey -> *buildResult

// build compiles the program of (lang, op, a) once per test binary, so a
// broken program fails its own subtest once, not every variant of it; the
// runs then find it in hostemu's cache.
func build(t *testing.T, lang *hostemu.Lang, op *ops.Op, a ir.Arith) *hostemu.Binary {
	t.Helper()
	key := programKey{lang, op.Name, a.String()}
	if op.ArithFree() {
		key.arith = ""
	}
	v, _ := builds.LoadOrStore(key, new(buildResult))
	r := v.(*buildResult)
	r.once.Do(func() {
		ctx := tier.Context(t)
		p, err := cachedProgram(lang, op, a)
		if err == nil {
			r.bin, err = buildProgram(ctx, p.Program, hostemu.Options{})
		}
		r.err = err
	})
	if r.err != nil {
		t.Fatalf("%s %s@%s: %v", lang, op.Name, a, r.err)
	}
	return r.bin
}

// gatherOf is the gather dispatch an ids op's cases run first, or nil.
func gatherOf(t *testing.T, op *ops.Op) *ops.Op {
	var name string
	switch op.Name {
	case "gated_delta_net_inplace_ids":
		name = ops.GatherOp
	case "ssm_conv_update_inplace_ids":
		name = ops.GatherOp
	default:
		return nil
	}
	g, err := ops.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func variantName(v ops.Variant) string {
	if s := v.String(); s != "" {
		return s
	}
	return "no_params"
}

// schedule pairs runs with variants and widths: every variant at least
// once and every width at least once (ops with fewer variants than widths
// repeat them). offset rotates the widths so languages and contracts put a
// given variant at different widths.
func schedule(variants []ops.Variant, offset int) map[int][]int {
	out := map[int][]int{} // variant index -> widths
	for i := 0; i < max(len(variants), len(widths)); i++ {
		vi := i % len(variants)
		out[vi] = append(out[vi], widths[(i+offset)%len(widths)])
	}
	return out
}

// Every generated kernel of every op, in every language, under portable and
// the language's native contract, for every variant of the table, runs under
// host emulation and leaves every buffer as the Go reference does: bit for
// bit under portable, within NMSE 1e-7 under native. Subtests read
// language/op/contract/variant/sgWIDTH.
func TestKernelsMatchReference(t *testing.T) {
	tier.FullOnly(t, "every variant of the table (not only a backend's) in programs emitted here, at every width; the fast tier runs the written kernels of every variant at the backend's width (build --check) and a sample at the other widths (internal/backend's TestWrittenKernelsAtOtherWidths)")
	needCompiler(t)
	if _, err := ops.Variants(); err != nil {
		t.Fatal(err)
	}
	for li, l := range languages {
		t.Run(l.lang.String(), func(t *testing.T) {
			t.Parallel()
			for _, op := range ops.All() {
				t.Run(op.Name, func(t *testing.T) {
					t.Parallel()
					for ci, a := range contracts(l, op) {
						t.Run(a.String(), func(t *testing.T) {
							t.Parallel()
							runContract(t, l, op, a, li+ci)
						})
					}
				})
			}
		})
	}
}

func runContract(t *testing.T, l language, op *ops.Op, a ir.Arith, offset int) {
	if g := gatherOf(t, op); g != nil {
		build(t, l.lang, g, a)
	}
	build(t, l.lang, op, a)
	variants := ops.VariantsOf(op.Name)
	plan := schedule(variants, offset)
	for vi, v := range variants {
		if len(plan[vi]) == 0 {
			continue
		}
		t.Run(variantName(v), func(t *testing.T) {
			for _, w := range plan[vi] {
				t.Run(fmt.Sprintf("sg%d", w), func(t *testing.T) {
					c, err := cases.Random(op.Name, a, rng(t), cases.Small, &v)
					if err != nil {
						t.Fatal(err)
					}
					// Compare picks bit-for-bit or NMSE from the case's
					// contract: it must be the one whose kernel ran.
					if c.Arith != a || c.Arith.Native != a.Native {
						t.Fatalf("case %s has contract %s, want %s", c.Name, c.Arith, a)
					}
					got, err := Run(tier.Context(t), l.lang, c, w)
					if err != nil {
						t.Fatal(err)
					}
					if err := c.Compare(got); err != nil {
						t.Fatalf("%s at subgroup width %d: %v", l.lang, w, err)
					}
				})
			}
		})
	}
}

// Every program carries exactly the kernel of its contract: the native
// programs call the native kernel (not the portable one under a native
// name), ArithFree ops share one program, and every variant has a case.
func TestProgramsCarryTheirContract(t *testing.T) {
	for _, l := range languages {
		for _, op := range ops.All() {
			for _, a := range contracts(l, op) {
				p, err := Program(l.lang, op, a)
				if err != nil {
					t.Fatalf("%s %s@%s: %v", l.lang, op.Name, a, err)
				}
				var src string
				for _, s := range p.Sources {
					src += string(s)
				}
				k, _ := op.Kernel(a)
				if !strings.Contains(src, "// "+k.ID()+"\n") {
					t.Errorf("%s %s@%s: source lacks kernel %s", l.lang, op.Name, a, k.ID())
				}
				portable := strings.Contains(src, "_f32_portable")
				if portable != (!a.Native && !op.ArithFree()) {
					t.Errorf("%s %s@%s: portable kernel present: %v", l.lang, op.Name, a, portable)
				}
				if n := strings.Count(string(p.Harness), "    case "); n != len(ops.VariantsOf(op.Name)) {
					t.Errorf("%s %s@%s: harness dispatches %d variants, the table has %d", l.lang, op.Name, a, n, len(ops.VariantsOf(op.Name)))
				}
				if op.ArithFree() {
					q, err := Program(l.lang, op, l.native)
					if err != nil || q.Name != p.Name || string(q.Harness) != string(p.Harness) {
						t.Errorf("%s %s: the native contract does not reuse the one program (%v)", l.lang, op.Name, err)
					}
				}
			}
		}
	}
}

// The build ahead of the runs is the build the runs use (same program,
// same flags: one cache entry), so no program is compiled twice.
func TestBuildAheadIsTheRunsBuild(t *testing.T) {
	needCompiler(t)
	t.Parallel()
	op, err := ops.Lookup("ssm_conv")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range languages {
		ahead := build(t, l.lang, op, ir.Portable)
		c, err := cases.Random(op.Name, ir.Portable, rng(t), cases.Small, nil)
		if err != nil {
			t.Fatal(err)
		}
		bins, err := BuildFor(context.Background(), l.lang, c)
		if err != nil {
			t.Fatal(err)
		}
		if len(bins) != 1 {
			t.Fatalf("%s: %d programs for one launch", l.lang, len(bins))
		}
		if bins[0].Path != ahead.Path {
			t.Errorf("%s: the runs use %s, the build ahead made %s", l.lang, bins[0].Path, ahead.Path)
		}
	}
}

// The check can fail: a result with one flipped bit in any buffer (outputs,
// in-place state, and inputs the op must leave alone) is reported, naming
// the buffer; Run returns exactly the case's buffers.
func TestCompareCatchesCorruption(t *testing.T) {
	needCompiler(t)
	t.Parallel()
	op, err := ops.Lookup("ssm_conv_update_inplace_ids")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range languages {
		t.Run(l.lang.String(), func(t *testing.T) {
			t.Parallel()
			build(t, l.lang, gatherOf(t, op), ir.Portable)
			build(t, l.lang, op, ir.Portable)
			c, err := cases.Random(op.Name, ir.Portable, rng(t), cases.Small, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Run(context.Background(), l.lang, c, 16)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.Buffers) {
				t.Fatalf("Run returned %d buffers, the case has %d", len(got), len(c.Buffers))
			}
			if err := c.Compare(got); err != nil {
				t.Fatalf("uncorrupted: %v", err)
			}
			for _, b := range c.Buffers {
				data := got[b.Name]
				i := 4 * (len(data) / 4 / 2) // a middle element
				data[i] ^= 1
				err := c.Compare(got)
				data[i] ^= 1
				if err == nil || !strings.Contains(err.Error(), " "+b.Name+"[") {
					t.Errorf("a flipped bit in %s: Compare said %v", b.Name, err)
				}
			}
		})
	}
}

// Native results are compared under the tolerance and portable ones bit for
// bit, decided by the case's contract: one ulp in the emulated native-metal
// result of a real run passes, the same ulp under portable does not, and a
// gross error fails under both.
func TestNativeUsesTolerance(t *testing.T) {
	needCompiler(t)
	t.Parallel()
	op, err := ops.Lookup("gated_delta_net_inplace")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []ir.Arith{ir.Portable, ir.Native("metal")} {
		t.Run(a.String(), func(t *testing.T) {
			t.Parallel()
			build(t, hostemu.MSL, op, a)
			c, err := cases.Random(op.Name, a, rng(t), cases.Small, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Run(context.Background(), hostemu.MSL, c, 32)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Compare(got); err != nil {
				t.Fatalf("unperturbed: %v", err)
			}
			// state_dst is written in place; nudge its first element.
			sd := got["state_dst"]
			orig := sd[0]
			sd[0] ^= 1 // one ulp: mantissa's low bit (little-endian)
			err = c.Compare(got)
			if a.Native && err != nil {
				t.Errorf("native: one ulp failed the tolerance: %v", err)
			}
			if !a.Native && err == nil {
				t.Errorf("portable: one ulp passed; portable must be bit for bit")
			}
			sd[0] = orig
			putF32(sd, 1, 1e6)
			if err := c.Compare(got); err == nil {
				t.Errorf("%s: state_dst[1] = 1e6 passed", a)
			}
		})
	}
}

func putF32(b []byte, i int, x float32) {
	u := math.Float32bits(x)
	b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
}

// Check's programs are the written files byte for byte, whatever they
// hold, with a harness over every instance the backend builds: each of
// its variants under each kernel of the file. A missing file is an error
// naming the op.
func TestWrittenProgramsAreTheFilesAsWritten(t *testing.T) {
	for _, l := range languages {
		backend := l.native.Backend
		written := map[string]File{}
		for _, op := range ops.All() {
			written[op.Name] = File{Name: op.Name + skins[l.lang].ext, Data: []byte("// as written: " + op.Name + "\n")}
		}
		for _, op := range ops.All() {
			variants := ops.TargetOf(backend).Variants(op.Name)
			if len(variants) == 0 {
				continue
			}
			p, err := writtenProgram(l.lang, backend, op, written[op.Name])
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Sources) != 1 || string(p.Sources[written[op.Name].Name]) != string(written[op.Name].Data) {
				t.Errorf("%s %s: the program's sources are not the written file: %q", l.lang, op.Name, p.Sources)
			}
			want := len(contracts(l, op)) * len(variants)
			if len(p.instances) != want || strings.Count(string(p.Harness), "    case ") != want {
				t.Errorf("%s %s: %d instances, %d harness cases; want %d", l.lang, op.Name, len(p.instances), strings.Count(string(p.Harness), "    case "), want)
			}
			for _, a := range contracts(l, op) {
				k, _ := op.Kernel(a)
				if _, err := p.instance(k, variants[0].Values); err != nil {
					t.Errorf("%s %s@%s: %v", l.lang, op.Name, a, err)
				}
			}
		}
		delete(written, "ssm_conv")
		if _, err := writtenSource(l.lang, backend, written); err == nil || !strings.Contains(err.Error(), "op ssm_conv") {
			t.Errorf("%s: a missing file: %v", l.lang, err)
		}
	}
}
