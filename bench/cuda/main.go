// Command cuda prepares and checks kernelgen's CUDA verification on a GPU
// host (the CI has no GPU; see README and bench/cuda/run.sh).
//
//	go run ./bench/cuda prepare -o DIR    cases, harness and kernels for the GPU host
//	bash DIR/run.sh                       on the GPU host (nvcc): writes results.bin, bench.csv
//	go run ./bench/cuda compare -dir DIR -results results.bin
//
// compare checks the generated kernels against the Go reference (portable:
// bit for bit; native-cuda: NMSE <= 1e-7) and, when the harness ran the
// hand-written series kernels, the native-cuda kernels against them bit for
// bit (every buffer but the gather scratch, which the two fill differently
// by design).
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ir/ctype"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/verify/cases"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./bench/cuda prepare|compare [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "prepare":
		err = prepare(os.Args[2:])
	case "compare":
		err = compare(os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q: want prepare or compare", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/cuda:", err)
		os.Exit(1)
	}
}

// The CUDA contracts.
var contracts = []ir.Arith{ir.Portable, ir.Native("cuda")}

// device sizes: channel counts a multiple of 128, as ggml-cuda requires.
var size = cases.Size{MaxHeads: 2, MaxTokens: 3, MaxSeqs: 2, MaxChannels: 384, ChannelMultiple: 128}

// buildCases makes the verification cases: per op, contract and variant,
// perVariant random shapes. Deterministic in seed.
func buildCases(seed uint64, perVariant int) ([]*cases.Case, error) {
	var out []*cases.Case
	for _, op := range ops.All() {
		for _, a := range contracts {
			if op.ArithFree() && a.Native {
				continue
			}
			for vi, v := range ops.TargetOf("cuda").Variants(op.Name) {
				for i := 0; i < perVariant; i++ {
					r := rand.New(rand.NewPCG(seed, uint64(len(out))*7919+uint64(vi)))
					v := v
					c, err := cases.Random(op.Name, a, r, size, &v)
					if err != nil {
						return nil, err
					}
					out = append(out, c)
				}
			}
		}
	}
	return out, nil
}

func prepare(args []string) error {
	fs := flag.NewFlagSet("prepare", flag.ContinueOnError)
	dir := fs.String("o", ".dev/cuda", "output directory (carried to the GPU host)")
	seed := fs.Uint64("seed", 1, "random seed of the cases")
	per := fs.Int("per-variant", 1, "random shapes per variant and contract")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cs, err := buildCases(*seed, *per)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(*dir); err != nil {
		return err
	}
	for _, sub := range []string{"kernels", "src"} {
		if err := os.MkdirAll(filepath.Join(*dir, sub), 0o755); err != nil {
			return err
		}
	}
	// The kernels exactly as generated/ holds them.
	hdrs, err := filepath.Glob(filepath.Join("generated", "cuda", "*.cuh"))
	if err != nil || len(hdrs) == 0 {
		return fmt.Errorf("no generated/cuda/*.cuh here (run from the repository root after kernelgen build): %v", err)
	}
	for _, h := range hdrs {
		if err := copyFile(h, filepath.Join(*dir, "kernels", filepath.Base(h))); err != nil {
			return err
		}
	}
	glueFiles, _ := filepath.Glob(filepath.Join("generated", "cuda", "glue", "*"))
	for _, g := range glueFiles {
		if err := copyFile(g, filepath.Join(*dir, "kernels", filepath.Base(g))); err != nil {
			return err
		}
	}
	srcs, _ := filepath.Glob(filepath.Join("bench", "cuda", "src", "*"))
	for _, s := range srcs {
		if err := copyFile(s, filepath.Join(*dir, "src", filepath.Base(s))); err != nil {
			return err
		}
	}
	if err := copyFile(filepath.Join("bench", "cuda", "run.sh"), filepath.Join(*dir, "run.sh")); err != nil {
		return err
	}
	for _, a := range contracts {
		src, err := instances(a)
		if err != nil {
			return err
		}
		name := "kg_portable.cu"
		if a.Native {
			name = "kg_native.cu"
		}
		if err := os.WriteFile(filepath.Join(*dir, name), src, 0o644); err != nil {
			return err
		}
	}
	var b bytes.Buffer
	b.WriteString("KGCASES1")
	put32(&b, uint32(len(cs)))
	for _, c := range cs {
		writeCase(&b, c)
	}
	if err := os.WriteFile(filepath.Join(*dir, "cases.bin"), b.Bytes(), 0o644); err != nil {
		return err
	}
	meta := fmt.Sprintf("seed=%d per-variant=%d cases=%d\n", *seed, *per, len(cs))
	if err := os.WriteFile(filepath.Join(*dir, "cases.txt"), []byte(meta), 0o644); err != nil {
		return err
	}
	fmt.Printf("prepared %s: %d cases over %d kernel headers\n", *dir, len(cs), len(hdrs))
	return nil
}

func put32(b *bytes.Buffer, v uint32) { binary.Write(b, binary.LittleEndian, v) }
func put64(b *bytes.Buffer, v int64)  { binary.Write(b, binary.LittleEndian, v) }
func putStr(b *bytes.Buffer, s string) {
	put32(b, uint32(len(s)))
	b.WriteString(s)
}

// InstanceKey names a kernel instance in the harness: "<kernel>@<contract> <variant>".
func instanceKey(k *ir.Kernel, params map[string]int64) string {
	var parts []string
	for _, p := range k.Params {
		if p.Derived == nil {
			parts = append(parts, fmt.Sprintf("%s=%d", p.Name, params[p.Name]))
		}
	}
	return k.ID() + " " + strings.Join(parts, ",")
}

func writeCase(b *bytes.Buffer, c *cases.Case) {
	putStr(b, c.Name)
	put32(b, uint32(len(c.Buffers)))
	idx := map[string]int{}
	for i, buf := range c.Buffers {
		idx[buf.Name] = i
		putStr(b, buf.Name)
		data := buf.Bytes()
		put32(b, uint32(len(data)))
		b.Write(data)
	}
	put32(b, uint32(len(c.Launches)))
	for _, l := range c.Launches {
		putStr(b, instanceKey(l.Kernel, l.Params))
		putStr(b, l.Op.Name)
		keys := make([]string, 0, len(l.Params))
		for k := range l.Params {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		put32(b, uint32(len(keys)))
		for _, k := range keys {
			putStr(b, k)
			put64(b, l.Params[k])
		}
		put32(b, uint32(len(l.Kernel.Args)))
		for _, a := range l.Kernel.Args {
			putStr(b, a.Name)
			put32(b, l.Args[a.Name])
		}
		put32(b, uint32(len(l.Bind)))
		for i, name := range l.Bind {
			putStr(b, l.Kernel.Buffers[i].Name)
			put32(b, uint32(idx[name]))
			put32(b, uint32(l.Kernel.Buffers[i].Access))
		}
		for _, g := range l.Grid {
			put32(b, g)
		}
		for _, w := range l.Workgroup {
			put32(b, w)
		}
	}
}

// instances writes the launcher table of one contract: one launcher per
// kernel and variant of the variant table.
func instances(a ir.Arith) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Generated by go run ./bench/cuda prepare: launchers of the %s kernels.\n#include \"kg_harness.h\"\n", a)
	var body bytes.Buffer
	n := 0
	for _, op := range ops.All() {
		if op.ArithFree() && a.Native != true {
			// Contract-free kernels (the gathers) live in the native unit only.
			continue
		}
		if len(ops.TargetOf("cuda").Variants(op.Name)) == 0 {
			continue // another backend's schedule (the Vulkan batched kernels): no .cuh
		}
		fmt.Fprintf(&b, "#include %q\n", op.Name+".cuh")
		k, err := op.Kernel(a)
		if err != nil {
			return nil, err
		}
		for _, v := range ops.TargetOf("cuda").Variants(op.Name) {
			fmt.Fprintf(&body, "\nstatic void kg_launch_%d(void ** b, const uint32_t * a, dim3 g, dim3 blk, cudaStream_t s) {\n", n)
			fmt.Fprintf(&body, "    kg_launch_pdl(%s, g, blk, s, %s);\n}\n", callee(v.Of(k)), callArgs(k))
			fmt.Fprintf(&body, "static kg_register kg_reg_%d(%q, kg_launch_%d);\n", n, instanceKey(k, v.Values), n)
			n++
		}
	}
	b.Write(body.Bytes())
	return b.Bytes(), nil
}

func callee(in ir.Instance) string {
	name := cuda.KernelName(in.Kernel)
	if targs := in.TemplateArgs(); len(targs) > 0 {
		return name + "<" + strings.Join(targs, ", ") + ">"
	}
	return name
}

func callArgs(k *ir.Kernel) string {
	var out []string
	for i, buf := range k.Buffers {
		t := ctype.C.Of(buf.Elem)
		if buf.Access == ir.Read {
			out = append(out, fmt.Sprintf("(const %s *) b[%d]", t, i))
		} else {
			out = append(out, fmt.Sprintf("(%s *) b[%d]", t, i))
		}
	}
	for i, arg := range k.Args {
		switch arg.Type {
		case ir.F32:
			out = append(out, fmt.Sprintf("kg_f32(a[%d])", i))
		case ir.I32:
			out = append(out, fmt.Sprintf("(int32_t) a[%d]", i))
		default:
			out = append(out, fmt.Sprintf("a[%d]", i))
		}
	}
	return strings.Join(out, ", ")
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o644)
}

type resultReader struct {
	r   io.Reader
	err error
}

func (rr *resultReader) u32() uint32 {
	var v uint32
	if rr.err == nil {
		rr.err = binary.Read(rr.r, binary.LittleEndian, &v)
	}
	return v
}

func (rr *resultReader) str() string {
	n := rr.u32()
	buf := make([]byte, n)
	if rr.err == nil {
		_, rr.err = io.ReadFull(rr.r, buf)
	}
	return string(buf)
}

func (rr *resultReader) bufs() [][]byte {
	n := rr.u32()
	out := make([][]byte, n)
	for i := range out {
		out[i] = make([]byte, rr.u32())
		if rr.err == nil {
			_, rr.err = io.ReadFull(rr.r, out[i])
		}
	}
	return out
}

func compare(args []string) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	dir := fs.String("dir", ".dev/cuda", "the directory prepare wrote")
	results := fs.String("results", "", "results.bin from the GPU host")
	if err := fs.Parse(args); err != nil {
		return err
	}
	meta, err := os.ReadFile(filepath.Join(*dir, "cases.txt"))
	if err != nil {
		return err
	}
	var seed uint64
	var per, n int
	if _, err := fmt.Sscanf(string(meta), "seed=%d per-variant=%d cases=%d", &seed, &per, &n); err != nil {
		return fmt.Errorf("%s/cases.txt: %v", *dir, err)
	}
	cs, err := buildCases(seed, per)
	if err != nil {
		return err
	}
	if len(cs) != n {
		return fmt.Errorf("the cases changed since prepare (%d now, %d then): prepare and run again", len(cs), n)
	}
	f, err := os.Open(*results)
	if err != nil {
		return err
	}
	defer f.Close()
	rr := &resultReader{r: f}
	magic := make([]byte, 8)
	if _, err := io.ReadFull(f, magic); err != nil || string(magic) != "KGRESUL1" {
		return fmt.Errorf("%s is not a results file", *results)
	}
	if got := int(rr.u32()); got != len(cs) {
		return fmt.Errorf("%s has %d cases, want %d", *results, got, len(cs))
	}
	type tally struct{ pass, fail, refSame, refDiff, refNone int }
	per2 := map[string]*tally{}
	var failures []string
	for _, c := range cs {
		status, gen := rr.str(), rr.bufs()
		rstatus, ref := rr.str(), rr.bufs()
		if rr.err != nil {
			return fmt.Errorf("%s: %v", *results, rr.err)
		}
		key := c.Op + "@" + c.Arith.String()
		t := per2[key]
		if t == nil {
			t = &tally{}
			per2[key] = t
		}
		// The harness returns only buffers some launch may write; the others
		// are passed to kernels as const and keep their initial bytes.
		got := map[string][]byte{}
		for i, b := range c.Buffers {
			got[b.Name] = gen[i]
			if len(gen[i]) == 0 {
				got[b.Name] = b.Bytes()
			}
		}
		if status != "" {
			t.fail++
			failures = append(failures, c.Name+": "+status)
			continue
		}
		if err := c.Compare(got); err != nil {
			t.fail++
			failures = append(failures, err.Error())
		} else {
			t.pass++
		}
		if !c.Arith.Native {
			continue
		}
		if rstatus != "" || len(ref) == 0 {
			t.refNone++
			continue
		}
		same := true
		for i, b := range c.Buffers {
			if b.Name != "scratch" && !bytes.Equal(gen[i], ref[i]) && len(ref[i]) > 0 {
				same = false
				failures = append(failures, fmt.Sprintf("%s: %s differs from the hand-written kernel's", c.Name, b.Name))
				break
			}
		}
		if same {
			t.refSame++
		} else {
			t.refDiff++
		}
	}
	keys := make([]string, 0, len(per2))
	for k := range per2 {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Printf("%-46s %6s %6s   %s\n", "kernel@contract", "pass", "fail", "vs hand-written (bit for bit)")
	for _, k := range keys {
		t := per2[k]
		ref := "-"
		if strings.HasSuffix(k, "native-cuda") {
			ref = fmt.Sprintf("%d identical, %d different, %d without a reference", t.refSame, t.refDiff, t.refNone)
		}
		fmt.Printf("%-46s %6d %6d   %s\n", k, t.pass, t.fail, ref)
	}
	for i, f := range failures {
		if i == 20 {
			fmt.Printf("... %d more\n", len(failures)-20)
			break
		}
		fmt.Println("FAIL", f)
	}
	if len(failures) > 0 {
		return errors.New("some cases failed")
	}
	return nil
}
