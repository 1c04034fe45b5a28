package ggmlcpu

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/emit/goref/rt"
	gen "github.com/kernelgen/kernelgen/generated/goref"
	"github.com/kernelgen/kernelgen/glue"
	"github.com/kernelgen/kernelgen/internal/tier"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/verify/cases"
)

var numCases = flag.Int("cases", 0, "random problems per op and contract, each run at 1, 2, 3 and 4 threads (default: 40 in the full tier, 12 in the fast one, 8 with -short)")

// The flags of ggml's own CPU build that judge generated code (ggml's
// GGML_ALL_WARNINGS), plus -ffp-contract=off: the Go reference rounds every
// product on its own.
var cxxFlags = []string{"-std=c++17", "-O2", "-pthread", "-ffp-contract=off",
	"-Wall", "-Wextra", "-Wpedantic", "-Wcast-qual", "-Wno-unused-function", "-Wmissing-declarations", "-Werror"}

func cxx() string {
	if c := os.Getenv("CXX"); c != "" {
		return c
	}
	return "g++"
}

// build compiles the unit with the stub ggml and the harness.
func build(t *testing.T, u *lowered, name string) string {
	t.Helper()
	if _, err := exec.LookPath(cxx()); err != nil {
		if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	var b strings.Builder
	b.WriteString("#include \"ggml_stub.h\"\n\n")
	for _, e := range u.ops {
		if e.WorkSize != "" {
			fmt.Fprintf(&b, "size_t %s(const ggml_tensor * dst);\n", e.WorkSize)
		}
	}
	b.WriteString("\n" + u.source + "\nstruct op_entry {\n    void (*compute)(const ggml_compute_params *, ggml_tensor *);\n    size_t (*work_size)(const ggml_tensor *);\n};\n\nstatic const op_entry ops[] = {\n")
	for _, e := range u.ops {
		ws := "nullptr"
		if e.WorkSize != "" {
			ws = e.WorkSize
		}
		fmt.Fprintf(&b, "    { %s, %s },\n", e.Compute, ws)
	}
	b.WriteString("};\n\n#include \"harness.cpp\"\n")
	dir := t.TempDir()
	src := filepath.Join(dir, name+".cpp")
	if err := os.WriteFile(src, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, name)
	args := append(append([]string{}, cxxFlags...), "-I", testdata, "-o", bin, src)
	if out, err := exec.Command(cxx(), args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s:\n%s", cxx(), strings.Join(args, " "), numbered(out, b.String()))
	}
	return bin
}

// numbered returns the compiler's complaint, and the source when it is short enough to read.
func numbered(diag []byte, src string) string {
	if len(diag) > 8000 {
		diag = diag[:8000]
	}
	lines := strings.Split(src, "\n")
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%5d  %s\n", i+1, l)
	}
	return string(diag) + "\n" + b.String()
}

// tensor is one node slot of a problem: shape, strides in bytes and where
// its data starts.
type tensor struct {
	typ        int32
	ne, nb     [4]int64
	block, off int
}

// problem is one call of an op: memory blocks, node slots (src[0..9],
// then the node itself) and op_params.
type problem struct {
	op       int
	threads  int
	blocks   [][]byte
	slots    [11]*tensor
	opParams [2]int32
}

func (p *problem) write(w io.Writer) error {
	var b []byte
	u32 := func(x uint32) { b = binary.LittleEndian.AppendUint32(b, x) }
	u64 := func(x uint64) { b = binary.LittleEndian.AppendUint64(b, x) }
	u32(uint32(p.op))
	u32(uint32(p.threads))
	u32(uint32(len(p.blocks)))
	for _, m := range p.blocks {
		u64(uint64(len(m)))
		b = append(b, m...)
	}
	for _, s := range p.slots {
		if s == nil {
			u32(0)
			continue
		}
		u32(1)
		u32(uint32(s.typ))
		for _, x := range s.ne {
			u64(uint64(x))
		}
		for _, x := range s.nb {
			u64(uint64(x))
		}
		u32(uint32(s.block))
		u64(uint64(s.off))
	}
	u32(uint32(p.opParams[0]))
	u32(uint32(p.opParams[1]))
	_, err := w.Write(b)
	return err
}

// runner is a running harness.
type runner struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func start(t *testing.T, bin string) *runner {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &runner{cmd: cmd, in: in, out: bufio.NewReader(out)}
	t.Cleanup(func() {
		r.in.Close()
		r.cmd.Wait()
	})
	return r
}

// run sends p and returns the blocks after the op ran.
func (r *runner) run(p *problem) ([][]byte, error) {
	if err := p.write(r.in); err != nil {
		return nil, err
	}
	out := make([][]byte, len(p.blocks))
	for i, m := range p.blocks {
		out[i] = make([]byte, len(m))
		if _, err := io.ReadFull(r.out, out[i]); err != nil {
			return nil, fmt.Errorf("the harness died (see its stderr): %v", err)
		}
	}
	return out, nil
}

// contiguous strides of a shape, in bytes.
func dense(ne [4]int64) [4]int64 {
	nb := [4]int64{4}
	for d := 1; d < 4; d++ {
		nb[d] = nb[d-1] * ne[d-1]
	}
	return nb
}

// strided tensor: element strides for dims 1..3, the rest follows.
func strided(ne [4]int64, s1, s2, s3 int64) [4]int64 {
	return [4]int64{4, 4 * s1, 4 * s2, 4 * s3}
}

// layout turns a case of one of the four fused ops into a problem: the node
// as ggml builds it, each case buffer a block. aliased makes the
// destination rows a view of the cache at rs_head, as the model does (the
// case's cache then holds the destination's initial rows there).
func layout(c *cases.Case, op int, aliased bool) (*problem, map[string]int) {
	l := c.Launches[len(c.Launches)-1]
	a := func(n string) int64 { return int64(l.Args[n]) }
	p := &problem{op: op}
	block := map[string]int{}
	add := func(name string) int {
		b := c.Buffer(name)
		block[name] = len(p.blocks)
		p.blocks = append(p.blocks, b.Bytes())
		return block[name]
	}
	length := func(name string) int64 { return int64(c.Buffer(name).Len()) }
	f32 := func(name string, ne, nb [4]int64) *tensor { return &tensor{ne: ne, nb: nb, block: add(name)} }
	ids := func() *tensor {
		n := length("ids")
		return &tensor{typ: 26, ne: [4]int64{n, 1, 1, 1}, nb: dense([4]int64{n, 1, 1, 1}), block: add("ids")}
	}
	rsHead := int64(0)
	if _, ok := l.Args["rs_head"]; ok {
		rsHead = a("rs_head")
	}
	// dstRows is state_dst / conv_state_dst: its own block, or the cache's
	// rows from rs_head.
	dstRows := func(name, cache string, row, rowStride, nSeqs int64) *tensor {
		if aliased {
			return &tensor{ne: [4]int64{row, nSeqs, 1, 1}, nb: [4]int64{4, 4 * rowStride, 4 * rowStride * nSeqs, 4 * rowStride * nSeqs}, block: block[cache], off: int(4 * rsHead * rowStride)}
		}
		rows := length(name) / rowStride
		return &tensor{ne: [4]int64{row, rows, 1, 1}, nb: [4]int64{4, 4 * rowStride, 4 * rowStride * rows, 4 * rowStride * rows}, block: add(name)}
	}
	if strings.HasPrefix(c.Op, "gated_delta_net") {
		sv, H, T, n := l.Params["S_v"], a("H"), a("n_tokens"), a("n_seqs")
		gd := int64(1)
		if l.Params["KDA"] == 1 {
			gd = sv
		}
		nq := n / a("rq3")
		D := sv * sv * H
		qk := [4]int64{sv, a("neq1"), T, nq}
		p.slots[0] = f32("q", qk, strided(qk, a("sq1"), a("sq2"), a("sq3")))
		p.slots[1] = f32("k", qk, strided(qk, a("sq1"), a("sq2"), a("sq3")))
		p.slots[2] = f32("v", [4]int64{sv, H, T, n}, strided([4]int64{}, a("sv1"), a("sv2"), a("sv3")))
		p.slots[3] = f32("g", [4]int64{gd, H, T, n}, strided([4]int64{}, a("sg1"), a("sg2"), a("sg3")))
		p.slots[4] = f32("beta", [4]int64{1, H, T, n}, strided([4]int64{}, a("sb1"), a("sb2"), a("sb3")))
		state := "state"
		if c.Buffer("cache") != nil {
			state = "cache"
		}
		cache := [4]int64{sv, sv, H, length(state) / D}
		p.slots[5] = f32(state, cache, dense(cache))
		p.slots[6] = dstRows("state_dst", state, D, a("sd1"), n)
		if c.Buffer("ids") != nil {
			p.slots[7] = ids()
		}
		out := [4]int64{sv * H, length("dst") / (sv * H), 1, 1}
		p.slots[10] = f32("dst", out, dense(out))
		p.opParams = [2]int32{1, int32(rsHead)}
		return p, block
	}
	K, C, n := l.Params["d_conv"], a("n_ch"), a("n_seqs")
	states := "conv_states"
	if c.Buffer("cache") != nil {
		states = "cache"
	}
	p.slots[0] = f32(states, [4]int64{K - 1, C, length(states) / a("cs2"), 1}, strided([4]int64{}, a("cs1"), a("cs2"), length(states)))
	p.slots[1] = f32("conv_kernel", [4]int64{K, C, 1, 1}, strided([4]int64{}, a("w1"), a("w1")*C, a("w1")*C))
	p.slots[2] = f32("x_cur", [4]int64{C, 1, n, 1}, strided([4]int64{}, C, a("x2"), a("x2")*n))
	p.slots[3] = dstRows("conv_state_dst", states, (K-1)*C, a("sd1"), n)
	if c.Buffer("ids") != nil {
		p.slots[4] = ids()
	}
	p.slots[10] = f32("dst", [4]int64{C, 1, n, 1}, strided([4]int64{}, C, a("d2"), a("d2")*n))
	p.opParams = [2]int32{int32(l.Params["SILU"]), int32(rsHead)}
	return p, block
}

// reference runs the case's launches on the Go reference from its initial
// buffers (as they are now) and returns every buffer after.
func reference(c *cases.Case) (map[string]*cases.Buffer, error) {
	state := map[string]*cases.Buffer{}
	for _, b := range c.Buffers {
		state[b.Name] = b.Clone()
	}
	for _, l := range c.Launches {
		bufs := map[string]any{}
		for i, kb := range l.Kernel.Buffers {
			b := state[l.Bind[i]]
			if b.Elem == ir.I32 {
				bufs[kb.Name] = b.I32
			} else {
				bufs[kb.Name] = b.F32
			}
		}
		if err := gen.Run[l.Op.Name](c.Arith.String(), l.Params, l.Args, bufs); err != nil {
			return nil, err
		}
	}
	return state, nil
}

// window says where an ids op's destination rows sit in the model's
// cache: from row rs_head, n rows of row elements.
func window(c *cases.Case) (dst string, rsHead, n, row int) {
	l := c.Launches[len(c.Launches)-1]
	rsHead, n = int(l.Args["rs_head"]), int(l.Args["n_seqs"])
	if strings.HasPrefix(c.Op, "ssm_conv") {
		return "conv_state_dst", rsHead, n, int(l.Args["cs2"])
	}
	return "state_dst", rsHead, n, int(l.Params["S_v"] * l.Params["S_v"] * int64(l.Args["H"]))
}

// aliasWindow makes the case's cache hold its destination rows at rs_head
// (the model's layout, where the destination is a view of the cache): those
// rows get the destination's initial values.
func aliasWindow(c *cases.Case) {
	dst, rsHead, n, row := window(c)
	copy(c.Buffer("cache").F32[rsHead*row:(rsHead+n)*row], c.Buffer(dst).F32[:n*row])
}

// compare checks what the harness left in each block against the Go
// reference, bit for bit. Where the node's output holds the GDN gather's
// scratch (glue's Scratch.InDst) it must equal the reference's scratch; a
// view's rows are checked in the block they live in.
func compare(c *cases.Case, got [][]byte, block map[string]int, aliased bool, want map[string]*cases.Buffer) error {
	l := c.Launches[len(c.Launches)-1]
	expect := make([][]byte, len(got))
	for name, i := range block {
		expect[i] = want[name].Bytes()
	}
	if d, ok := block["dst"]; ok && strings.HasPrefix(c.Op, "gated_delta_net") {
		attn := 4 * int(l.Params["S_v"]*int64(l.Args["H"]*l.Args["n_tokens"]*l.Args["n_seqs"]))
		if s := want["scratch"]; s != nil {
			copy(expect[d][attn:], s.Bytes())
		}
	}
	if aliased {
		dst, rsHead, n, row := window(c)
		copy(expect[block["cache"]][4*rsHead*row:], want[dst].Bytes()[:4*n*row])
	}
	for i := range got {
		if string(got[i]) == string(expect[i]) {
			continue
		}
		name := "?"
		for n, j := range block {
			if j == i {
				name = n
			}
		}
		for w := 0; w < len(got[i]); w += 4 {
			if string(got[i][w:w+4]) != string(expect[i][w:w+4]) {
				return fmt.Errorf("%s[%d] = %s, want %s", name, w/4, word(got[i][w:]), word(expect[i][w:]))
			}
		}
	}
	return nil
}

func word(b []byte) string {
	u := binary.LittleEndian.Uint32(b)
	return fmt.Sprintf("%v (0x%08x)", math.Float32frombits(u), u)
}

// unit emits the fused ops of contract a, one entry point per op.
func unit(t *testing.T, a ir.Arith) *lowered { return emitUnit(t, a, glue.Model) }

// familyUnit emits them as upstream gets them: one entry point per family
// (glue.Families), its shared kernel taking the ids form's path by IDS.
func familyUnit(t *testing.T, a ir.Arith) *lowered { return emitUnit(t, a, glue.Families) }

func emitUnit(t *testing.T, a ir.Arith, model func(ir.Arith) ([]*glue.Op, error)) *lowered {
	t.Helper()
	m, err := model(a)
	if err != nil {
		t.Fatal(err)
	}
	u, err := lower(m, instances(m, a))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// instances are model's kernels at the variants contract a's backend
// builds (every variant under the portable contract), as the cpu backend
// hands them to Emit.
func instances(model []*glue.Op, a ir.Arith) []ir.Instance {
	variants := ops.VariantsOf
	if a.Native {
		variants = ops.TargetOf(a.Backend).Variants
	}
	var out []ir.Instance
	for _, op := range model {
		out = append(out, op.Instances(variants)...)
	}
	return out
}

// TestLoweredOpsMatchTheGoReference runs the four fused ops, lowered for
// ggml-cpu under native-cpu and portable, one function per op and one per
// family (what upstream gets), on random problems at 1, 2, 3 and 4
// threads, with the destination rows separate and (ids ops) a view of the
// cache with aliasing ids, and compares every byte with the Go reference's
// lowering of each op's own IR.
func TestLoweredOpsMatchTheGoReference(t *testing.T) {
	n := *numCases
	switch {
	case n > 0:
	case testing.Short():
		n = 8
	default:
		n = tier.Pick(12, 40)
	}
	for _, a := range []ir.Arith{ir.Native("cpu"), ir.Portable} {
		for _, form := range []struct {
			name string
			unit func(*testing.T, ir.Arith) *lowered
		}{{"ops", unit}, {"families", familyUnit}} {
			t.Run(a.String()+"/"+form.name, func(t *testing.T) { matchTheGoReference(t, a, form.unit(t, a), n) })
		}
	}
}

func matchTheGoReference(t *testing.T, a ir.Arith, u *lowered, n int) {
	r := start(t, build(t, u, a.String()))
	rnd := rand.New(rand.NewPCG(18, uint64(len(a.String()))))
	size := cases.Size{MaxHeads: 2, MaxTokens: 3, MaxSeqs: 4, MaxChannels: 300}
	for op, e := range u.ops {
		aliasing := 0
		for i := 0; i < n; i++ {
			c, err := cases.Random(e.Op, a, rnd, size, nil)
			if err != nil {
				t.Fatal(err)
			}
			ids := c.Buffer("ids") != nil
			aliased := ids && i%2 == 0
			if aliased {
				aliasWindow(c)
			}
			want, err := reference(c)
			if err != nil {
				t.Fatal(err)
			}
			if ids {
				aliasing += countAliasing(c)
			}
			for threads := 1; threads <= 4; threads++ {
				p, block := layout(c, op, aliased)
				p.threads = threads
				got, err := r.run(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := compare(c, got, block, aliased, want); err != nil {
					t.Fatalf("%s, %d threads, destination rows %s: %v", c.Name, threads, map[bool]string{true: "in the cache", false: "separate"}[aliased], err)
				}
			}
		}
		if strings.HasSuffix(e.Op, "_ids") && aliasing == 0 {
			t.Errorf("%s: no case read another sequence's destination", e.Op)
		}
	}
}

// countAliasing counts the sequences whose source is another one's destination.
func countAliasing(c *cases.Case) int {
	l := c.Launches[len(c.Launches)-1]
	rsHead, n := int32(l.Args["rs_head"]), int32(l.Args["n_seqs"])
	count := 0
	for s, src := range c.Buffer("ids").I32 {
		if src != rsHead+int32(s) && src >= rsHead && src < rsHead+n {
			count++
		}
	}
	return count
}

// TestLoweringPhases runs a kernel the fused ops do not exercise: a shared
// array written before a barrier and read across lanes after it, a
// reduction, and values that lanes keep across both (per-lane storage),
// against the IR's meaning computed here.
func TestLoweringPhases(t *testing.T) {
	b := dsl.New("phases", ir.Portable)
	groups := b.Arg("n", ir.U32, "workgroups")
	in := b.Buffer("in", ir.F32, ir.Read, "src0", "32 floats per workgroup")
	out := b.Buffer("out", ir.F32, ir.Write, "dst", "32 floats per workgroup")
	b.Workgroup(32, 1, 1)
	b.Grid(groups, 1, 1)
	lane := b.Let("lane", b.LocalID(0))
	base := b.Let("base", b.GroupID(0).Mul(32))
	x := b.Let("x", in.Load(base.Add(lane)))
	buf := b.SharedArray("buf", ir.F32, 32)
	buf.Set(lane, x)
	b.Barrier()
	mirrored := b.Let("mirrored", buf.At(b.U32(31).Sub(lane)))
	sum := b.Reduce("sum", x, 8, ir.Butterfly)
	out.Store(base.Add(lane), mirrored.Add(sum))
	k, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	op := &glue.Op{Name: "phases", Dispatches: []glue.Dispatch{{
		Op: &ops.Op{Name: "phases"}, Kernel: k,
		Bind: []glue.Binding{{Buffer: "in", Tensor: "src[0]"}, {Buffer: "out", Tensor: "op"}},
		Args: []glue.Value{{Arg: "n", Type: ir.U32, Expr: "op->ne[1]"}},
	}}}
	u, err := lower([]*glue.Op{op}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"float buf[32];", "float x[32];", "butterfly_sum(sum, 32, 8u);"} {
		if !strings.Contains(u.source, want) {
			t.Errorf("the lowering has no %q:\n%s", want, u.source)
		}
	}
	r := start(t, build(t, u, "phases"))
	const n = 5
	rnd := rand.New(rand.NewPCG(1, 2))
	data := make([]float32, 32*n)
	for i := range data {
		data[i] = float32(rnd.NormFloat64())
	}
	want := make([]float32, len(data))
	for g := 0; g < n; g++ {
		sums := append([]float32(nil), data[32*g:32*g+32]...)
		rt.Butterfly(sums, 8)
		for l := 0; l < 32; l++ {
			want[32*g+l] = data[32*g+31-l] + sums[l]
		}
	}
	bytes := func(f []float32) []byte {
		out := make([]byte, 0, 4*len(f))
		for _, x := range f {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(x))
		}
		return out
	}
	shape := [4]int64{32, n, 1, 1}
	for threads := 1; threads <= 4; threads++ {
		p := &problem{threads: threads, blocks: [][]byte{bytes(data), make([]byte, 4*len(data))}}
		p.slots[0] = &tensor{ne: shape, nb: dense(shape)}
		p.slots[10] = &tensor{ne: shape, nb: dense(shape), block: 1}
		got, err := r.run(p)
		if err != nil {
			t.Fatal(err)
		}
		if string(got[1]) != string(bytes(want)) {
			t.Fatalf("%d threads: out differs from the IR's meaning", threads)
		}
	}
}

// ggml-cpu picks a GDN kernel's tiling from the node at run time, so a head
// size the tiling does not divide (S_v 18: columns 16 and 17 would be left
// unwritten) must stop the kernel, with the requirement's message.
func TestGDNRefusesAnUntiledHeadSize(t *testing.T) {
	u := unit(t, ir.Native("cpu"))
	bin := build(t, u, "untiled")
	const S = 18
	p := &problem{op: 0, threads: 2}
	vec := func(ne [4]int64) *tensor {
		n := ne[0] * ne[1] * ne[2] * ne[3]
		p.blocks = append(p.blocks, make([]byte, 4*n))
		return &tensor{ne: ne, nb: dense(ne), block: len(p.blocks) - 1}
	}
	p.slots[0] = vec([4]int64{S, 1, 1, 1}) // q
	p.slots[1] = vec([4]int64{S, 1, 1, 1}) // k
	p.slots[2] = vec([4]int64{S, 1, 1, 1}) // v
	p.slots[3] = vec([4]int64{1, 1, 1, 1}) // g
	p.slots[4] = vec([4]int64{1, 1, 1, 1}) // beta
	p.slots[5] = vec([4]int64{S, S, 1, 1}) // state
	p.slots[6] = vec([4]int64{S * S, 1, 1, 1})
	p.slots[10] = vec([4]int64{S, 1 + S, 1, 1})
	if u.ops[p.op].Fusion != "A" {
		t.Fatalf("entry %d is op %s, want A", p.op, u.ops[p.op].Fusion)
	}
	cmd := exec.Command(bin)
	var in strings.Builder
	if err := p.write(&in); err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = strings.NewReader(in.String())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil || !strings.Contains(stderr.String(), "S_v must be a multiple of NW*CPW") {
		t.Errorf("op A at S_v %d: exit %v, stderr %q; want the kernel to stop on its tiling requirement", S, err, stderr.String())
	}
}
