package patch

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	emit "github.com/kernelgen/kernelgen/emit/opencl"
	backendopencl "github.com/kernelgen/kernelgen/internal/backend/opencl"
	"github.com/kernelgen/kernelgen/internal/tier"
	"github.com/kernelgen/kernelgen/internal/upstream"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops/fusion"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/clrun"
	vfusion "github.com/kernelgen/kernelgen/verify/fusion"
)

// clLayout places every root tensor of a graph in its buffer's memory:
// buffers in order of first use, roots packed, each at a 256-byte boundary.
type clLayout struct {
	buffers []string
	buf     map[*fusion.Tensor]int
	offs    map[*fusion.Tensor]int64
	size    []int64
}

func layoutOf(g *fusion.Graph) (*clLayout, []*fusion.Tensor) {
	l := &clLayout{buf: map[*fusion.Tensor]int{}, offs: map[*fusion.Tensor]int64{}}
	idx := map[*fusion.Tensor]bool{}
	var all []*fusion.Tensor
	var add func(t *fusion.Tensor)
	add = func(t *fusion.Tensor) {
		if t == nil || idx[t] {
			return
		}
		for _, s := range append(append([]*fusion.Tensor{}, t.Src...), t.ViewSrc) {
			add(s)
		}
		idx[t] = true
		all = append(all, t)
	}
	for _, n := range g.Nodes {
		add(n)
	}
	for _, t := range all {
		if t.ViewSrc != nil {
			continue
		}
		b := -1
		for i, name := range l.buffers {
			if name == t.Buffer {
				b = i
			}
		}
		if b < 0 {
			b = len(l.buffers)
			l.buffers, l.size = append(l.buffers, t.Buffer), append(l.size, 0)
		}
		l.buf[t], l.offs[t] = b, l.size[b]
		l.size[b] += (t.Elems()*4 + 255) / 256 * 256
	}
	return l, all
}

// clDriver is driver.inc for the stand-in: g's tensors as ggml tensors
// (every root's extra the cl_mem of its buffer, numbered from 1, and its
// offset there; views share their root's), the graph, and the run
// graph_compute makes of it after the kernels load.
func clDriver(g *fusion.Graph, l *clLayout, all []*fusion.Tensor) string {
	var w strings.Builder
	idx := map[*fusion.Tensor]int{}
	for i, t := range all {
		idx[t] = i
	}
	var host int64
	base := make([]int64, len(l.buffers))
	for b := range l.buffers {
		base[b] = host
		host += l.size[b] + 256
	}
	fmt.Fprintf(&w, "static std::vector<char> host(%d);\nstatic ggml_tensor T[%d];\nstatic ggml_tensor_extra_cl E[%d];\nstatic ggml_tensor * nodes[%d];\n\nint main() {\n", host, len(all), len(all), len(g.Nodes))
	types := map[string]string{"f32": "GGML_TYPE_F32", "f16": "GGML_TYPE_F16", "i32": "GGML_TYPE_I32"}
	for i, t := range all {
		op := "GGML_OP_" + t.Op
		if t.Op == "SILU" {
			op = "GGML_OP_UNARY"
		}
		fmt.Fprintf(&w, "    T[%d].op = %s; T[%d].type = %s; snprintf(T[%d].name, 64, \"%s\");\n", i, op, i, types[t.Type], i, t.Name)
		if t.Op == "SILU" {
			fmt.Fprintf(&w, "    T[%d].op_params[0] = GGML_UNARY_OP_SILU;\n", i)
		}
		for d := 0; d < 4; d++ {
			fmt.Fprintf(&w, "    T[%d].ne[%d] = %d; T[%d].nb[%d] = %d;\n", i, d, t.Ne[d], i, d, t.Nb[d])
		}
		for j, p := range t.Params {
			if t.Op != "SCALE" {
				fmt.Fprintf(&w, "    T[%d].op_params[%d] = %d;\n", i, j, p)
			}
		}
		for j, s := range t.Src {
			fmt.Fprintf(&w, "    T[%d].src[%d] = &T[%d];\n", i, j, idx[s])
		}
		r := t.Root()
		if t.ViewSrc != nil {
			fmt.Fprintf(&w, "    T[%d].view_src = &T[%d]; T[%d].view_offs = %d;\n", i, idx[t.ViewSrc], i, t.ViewOffs)
		} else {
			fmt.Fprintf(&w, "    E[%d].data_device = (cl_mem) (uintptr_t) %d; E[%d].offset = %d;\n", i, l.buf[r]+1, i, l.offs[r])
		}
		if t.Output {
			fmt.Fprintf(&w, "    T[%d].flags = GGML_TENSOR_FLAG_OUTPUT;\n", i)
		}
		fmt.Fprintf(&w, "    T[%d].flags |= GGML_TENSOR_FLAG_COMPUTE;\n", i)
		fmt.Fprintf(&w, "    T[%d].extra = &E[%d];\n", i, idx[r])
		fmt.Fprintf(&w, "    T[%d].buffer = (ggml_backend_buffer *) (uintptr_t) %d;\n", i, l.buf[r]+1)
		fmt.Fprintf(&w, "    T[%d].data = host.data() + %d;\n", i, base[l.buf[r]]+l.offs[r]+t.ViewOffs)
	}
	for i, n := range g.Nodes {
		fmt.Fprintf(&w, "    nodes[%d] = &T[%d];\n", i, idx[n])
	}
	fmt.Fprintf(&w, "    ggml_backend_opencl_context ctx = {};\n    ggml_backend backend = { (ggml_backend_dev_t) (uintptr_t) 1, &ctx };\n")
	fmt.Fprintf(&w, "    load_cl_kernels(&ctx);\n    ggml_cgraph g = { %d, nodes };\n    return ggml_backend_opencl_graph_compute(&backend, &g);\n}\n", len(g.Nodes))
	return w.String()
}

// clTrace is what the stand-in printed: the programs, the launches with
// their arguments, the nodes left to the plain ops.
type clTrace struct {
	programs map[int][2]string // file, options
	launches []clTraceLaunch
	plain    []string
}

type clTraceLaunch struct {
	program       int
	global, local [3]uint32
	args          [][]byte
}

func parseTrace(t *testing.T, out string) clTrace {
	t.Helper()
	tr := clTrace{programs: map[int][2]string{}}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 3 && f[0] == "program":
			n, _ := strconv.Atoi(f[1])
			tr.programs[n] = [2]string{f[2], strings.Join(f[3:], " ")}
		case len(f) == 8 && f[0] == "launch":
			var v [7]uint64
			for i := range v {
				v[i], _ = strconv.ParseUint(f[i+1], 10, 32)
			}
			l := clTraceLaunch{program: int(v[0])}
			for d := 0; d < 3; d++ {
				l.global[d], l.local[d] = uint32(v[1+d]), uint32(v[4+d])
			}
			tr.launches = append(tr.launches, l)
		case len(f) >= 1 && f[0] == "arg" && len(tr.launches) > 0:
			b, err := hex.DecodeString(strings.Join(f[1:], ""))
			if err != nil {
				t.Fatal(err)
			}
			last := &tr.launches[len(tr.launches)-1]
			last.args = append(last.args, b)
		case len(f) == 2 && f[0] == "node":
			tr.plain = append(tr.plain, f[1])
		default:
			t.Fatalf("the stand-in printed %q", sc.Text())
		}
	}
	return tr
}

// The fusion form's OpenCL dispatch, as the patch writes it, runs the
// decode step on an OpenCL device (PoCL in CI) like the Go reference:
// the stand-in ggml-opencl.cpp with both steps applied runs graph_compute
// over llama.cpp's graph of one layer (ops/fusion.Layer), recording the
// programs it builds and every kernel launch with the arguments it set;
// the launches then run on the device with ggml-opencl's options, over
// the graph's memory, and every root that the unfused graph leaves as it
// must (both whole caches, the attention, the conv output) matches the Go
// reference's unfused run within the native contract's NMSE, the cache
// rows neither run writes bit for bit. The nodes graph_compute leaves to
// the plain ops are exactly those the reference matcher does not fuse; a
// graph the matcher refuses (a copy into the cache between the read and
// the write) launches nothing.
// ggml-opencl itself does not run on PoCL (no fp16, docs/runtimes.md).
func TestOpenCLFusionDispatchRunsLikeTheReference(t *testing.T) {
	ctx := tier.Context(t)
	r, err := clrun.Build(ctx)
	if err != nil {
		skipOrFailCL(t, err)
	}
	dev, err := r.Selected(ctx)
	if err != nil {
		skipOrFailCL(t, err)
	}
	cxx := hostCXX(t)
	text := openCLFusionText(t, 2)
	stand, err := os.ReadFile(filepath.Join("..", "..", "ops", "fusion", "testdata", "ggml.h"))
	if err != nil {
		t.Fatal(err)
	}
	ks, err := upstream.FusionKernels("opencl")
	if err != nil {
		t.Fatal(err)
	}
	files, err := backendopencl.FusionKernels()
	if err != nil {
		t.Fatal(err)
	}
	byFile := map[string]int{}
	for i, f := range files {
		byFile[f.Name] = i
	}
	contract := vfusion.Contract{Arith: ir.Native("opencl"), Target: "opencl"}
	for _, c := range []struct {
		name  string
		layer fusion.Layer
		ids   []int32
		fused int // matches the reference finds
	}{
		{"rotation", fusion.Layer{SV: 64, H: 2, HK: 2, Seqs: 3, T: 1, K: 1, DConv: 4, C: 32, MemSize: 6, KVHead: 1, RowZero: -1}, []int32{2, 3, 1}, 2},
		{"shared row, kv_head 2", fusion.Layer{SV: 16, H: 4, HK: 2, Seqs: 4, T: 1, K: 1, DConv: 3, C: 24, MemSize: 8, KVHead: 2, RowZero: -1}, []int32{3, 3, 3, 3}, 2},
		{"snapshots K 3", fusion.Layer{SV: 32, H: 2, HK: 2, Seqs: 2, T: 3, K: 3, DConv: 3, C: 16, MemSize: 4, KVHead: 1, RowZero: -1}, []int32{2, 1}, 2},
		// build_rs's copy of the extra states touches the caches between the read and the write: no match
		{"extra states: unfused", fusion.Layer{SV: 16, H: 2, HK: 2, Seqs: 2, T: 1, K: 1, DConv: 3, C: 16, MemSize: 6, KVHead: 1, Extra: 1, RowZero: -1}, []int32{2, 1}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := c.layer.Build()
			be := fusion.Backend{Buffers: []string{"cache", "compute", "input", "weights"}, Target: "opencl"}
			var matches []*fusion.Match
			fusedSet := map[*fusion.Tensor]bool{}
			for _, p := range fusion.Patterns {
				ms, _ := p.Find(b.G, be)
				matches = append(matches, ms...)
			}
			if len(matches) != c.fused {
				t.Fatalf("the reference matches %d patterns, want %d", len(matches), c.fused)
			}
			for _, m := range matches {
				for _, n := range m.Fused {
					fusedSet[n] = true
				}
			}
			initial := vfusion.NewMemory(b.G, 3)
			copy(initial.I32[b.Ids], c.ids)
			want := initial.Clone()
			if err := contract.RunUnfused(b.G, want); err != nil {
				t.Fatal(err)
			}
			// got: the nodes no dispatch replaces (seeded projections) on the
			// reference, then the recorded launches on the device
			got := initial.Clone()
			var plainWant []string
			for _, n := range b.G.Nodes {
				if fusedSet[n] {
					continue
				}
				plainWant = append(plainWant, n.Name)
				if err := contract.Unfused(got, n); err != nil {
					t.Fatal(err)
				}
			}

			l, all := layoutOf(b.G)
			dir := t.TempDir()
			for name, data := range map[string]string{"ggml.h": string(stand), "ggml-opencl.cpp": text, "driver.inc": clDriver(b.G, l, all)} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			bin := filepath.Join(dir, "driver")
			args := append(append([]string{}, cxx[1:]...), "-std=c++17", "-Wall", "-Werror", "-DKG_DRIVER", "-I", dir, filepath.Join(dir, "ggml-opencl.cpp"), "-o", bin)
			if out, err := exec.CommandContext(ctx, cxx[0], args...).CombinedOutput(); err != nil {
				t.Fatalf("the driver does not build: %v\n%s", err, out)
			}
			out, err := exec.CommandContext(ctx, bin).CombinedOutput()
			if err != nil {
				t.Fatalf("the driver: %v\n%s", err, out)
			}
			tr := parseTrace(t, string(out))
			if strings.Join(tr.plain, " ") != strings.Join(plainWant, " ") {
				t.Errorf("graph_compute leaves to the plain ops\n  %v\nthe reference fuses all but\n  %v", tr.plain, plainWant)
			}
			if len(tr.launches) == 0 != (c.fused == 0) {
				t.Fatalf("graph_compute launched %d kernels for %d matches", len(tr.launches), c.fused)
			}

			// the launches on the device, over the graph's buffers
			job := clrun.Job{}
			for b := range l.buffers {
				job.Buffers = append(job.Buffers, make([]byte, l.size[b]))
			}
			for root, x := range got.F32 {
				buf, off := job.Buffers[l.buf[root]], l.offs[root]
				for i, v := range x {
					binary.LittleEndian.PutUint32(buf[off+int64(i)*4:], math.Float32bits(v))
				}
			}
			for root, x := range got.I32 {
				buf, off := job.Buffers[l.buf[root]], l.offs[root]
				for i, v := range x {
					binary.LittleEndian.PutUint32(buf[off+int64(i)*4:], uint32(v))
				}
			}
			var batch clrun.Batch
			progIndex := map[int]int{}
			for _, tl := range tr.launches {
				p, ok := tr.programs[tl.program]
				if !ok {
					t.Fatalf("a launch of program %d, which was not built", tl.program)
				}
				fi, ok := byFile[p[0]]
				if !ok {
					t.Fatalf("program %d is %s, not one of the step's kernels", tl.program, p[0])
				}
				pi, ok := progIndex[tl.program]
				if !ok {
					pi = len(batch.Programs)
					progIndex[tl.program] = pi
					batch.Programs = append(batch.Programs, clrun.Program{Source: files[fi].Data, Options: strings.TrimSpace(dev.GGMLOptions() + " " + p[1]), Name: p[0] + " [" + p[1] + "]"})
				}
				k := ks[fi].K
				if len(tl.args) != 2*len(k.Buffers)+len(k.Args) {
					t.Fatalf("%s: %d arguments set, the kernel takes %d", p[0], len(tl.args), 2*len(k.Buffers)+len(k.Args))
				}
				cl := clrun.Launch{Program: pi, Kernel: emit.KernelName(k), Local: tl.local}
				for d := 0; d < 3; d++ {
					if tl.local[d] == 0 || tl.global[d]%tl.local[d] != 0 {
						t.Fatalf("%s: global size %v is not a multiple of the local %v", p[0], tl.global, tl.local)
					}
					cl.Groups[d] = tl.global[d] / tl.local[d]
				}
				for i, a := range tl.args {
					switch {
					case i < 2*len(k.Buffers) && i%2 == 0:
						mem := int(binary.LittleEndian.Uint64(a))
						if len(a) != 8 || mem < 1 || mem > len(job.Buffers) {
							t.Fatalf("%s: argument %d is no buffer of the graph (%x)", p[0], i, a)
						}
						cl.Args = append(cl.Args, clrun.Arg{Buffer: mem - 1})
					case i < 2*len(k.Buffers):
						v := binary.LittleEndian.Uint64(a)
						cl.Args = append(cl.Args, clrun.Arg{Buffer: -1, Wide: true, Value: uint32(v), High: uint32(v >> 32)})
					default:
						if len(a) != 4 {
							t.Fatalf("%s: argument %d has %d bytes, the kernel's scalars 4", p[0], i, len(a))
						}
						cl.Args = append(cl.Args, clrun.Arg{Buffer: -1, Value: binary.LittleEndian.Uint32(a)})
					}
				}
				job.Launches = append(job.Launches, cl)
			}
			if len(job.Launches) > 0 {
				batch.Jobs = []clrun.Job{job}
				res, err := r.Run(ctx, batch)
				if err != nil {
					t.Fatalf("on %s: %v", dev.Name, err)
				}
				for root, x := range got.F32 {
					buf, off := res[0][l.buf[root]], l.offs[root]
					for i := range x {
						x[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[off+int64(i)*4:]))
					}
				}
			}
			if d := compareClose(matches, initial, got, want); d != "" {
				t.Error(d)
			}
			t.Logf("%d launches (%d programs) on %s; left to the plain ops: %d nodes", len(tr.launches), len(batch.Programs), dev.Name, len(tr.plain))
		})
	}
}

// compareClose is "" where got holds want's values in every root the fused
// run must leave as the unfused one does (every root but the fused nodes',
// and the GDN's attention), within the native contract's NMSE, and the
// bits of every element the unfused run leaves as it was.
func compareClose(matches []*fusion.Match, initial, got, want *vfusion.Memory) string {
	fused := map[*fusion.Tensor]bool{}
	for _, m := range matches {
		for _, t := range m.Fused {
			if t != m.Bound["out"] {
				fused[t] = true
			}
		}
	}
	var roots []*fusion.Tensor
	for root := range want.F32 {
		roots = append(roots, root)
	}
	sort.Slice(roots, func(i, j int) bool { return roots[i].Name < roots[j].Name })
	for _, root := range roots {
		w, g, i0 := want.F32[root], got.F32[root], initial.F32[root]
		n := len(w)
		if root.Op == "GATED_DELTA_NET" {
			v := root.Src[2]
			n = int(v.Ne[0] * v.Ne[1] * v.Ne[2] * v.Ne[3])
		} else if fused[root] {
			continue
		}
		var num, den float64
		for i := 0; i < n; i++ {
			if math.Float32bits(w[i]) == math.Float32bits(i0[i]) && math.Float32bits(g[i]) != math.Float32bits(w[i]) {
				return fmt.Sprintf("%s[%d]: %v, but the unfused graph leaves it at %v", root.Name, i, g[i], w[i])
			}
			d := float64(g[i]) - float64(w[i])
			num, den = num+d*d, den+float64(w[i])*float64(w[i])
		}
		if den > 0 && num/den > cases.NMSETolerance {
			return fmt.Sprintf("%s: NMSE %.3g against the unfused reference, over %g", root.Name, num/den, cases.NMSETolerance)
		}
	}
	return ""
}

func skipOrFailCL(t *testing.T, err error) {
	t.Helper()
	if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
		t.Fatal(err)
	}
	t.Skip(err)
}
