package upstream_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/kernelgen/kernelgen/internal/tier"
	"github.com/kernelgen/kernelgen/internal/upstream"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/emulate"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

// program is one upstream kernel built for host emulation, with the
// variants its harness numbers.
type program struct {
	bin      *hostemu.Binary
	k        *ir.Kernel
	variants []ops.Variant
	shared   *ops.Shared // nil for a gather
}

// skipOrFail skips t for err, a tool or device this machine lacks, or
// fails it where KERNELGEN_REQUIRE_TOOLS is set (CI).
func skipOrFail(t *testing.T, err error) {
	t.Helper()
	if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
		t.Fatal(err)
	}
	t.Skip(err)
}

// needTool fails t on err, but where err is missing (a tool or device
// this machine lacks) hands it to skipOrFail.
func needTool(t *testing.T, err, missing error) {
	t.Helper()
	if errors.Is(err, missing) {
		skipOrFail(t, err)
	} else if err != nil {
		t.Fatal(err)
	}
}

// build compiles upstream kernel uk, function fn of the upstream file src,
// for every variant it has on backend.
func build(t *testing.T, lang *hostemu.Lang, backend, file, fn string, src []byte, uk upstream.Kernel) *program {
	t.Helper()
	return buildWith(t, hostemu.Options{Flags: emulate.WarningFlags}, lang, backend, file, fn, src, uk)
}

// buildWith is build with the compiler options o (a real SYCL compiler's,
// emulate.ACPPOptions).
func buildWith(t *testing.T, o hostemu.Options, lang *hostemu.Lang, backend, file, fn string, src []byte, uk upstream.Kernel) *program {
	t.Helper()
	k := uk.K
	p := &program{k: k, shared: uk.Shared}
	if uk.Shared != nil {
		p.variants = uk.Shared.Variants(ops.TargetOf(backend))
	} else {
		p.variants = ops.TargetOf(backend).Variants(uk.Ops[0]) // the gather's: one kernel under each family's gather name
	}
	prog, err := emulate.SourceProgram(fmt.Sprintf("upstream_%s_%s", lang, fn), lang, k.Name, k, file, fn, src, p.variants)
	if err != nil {
		t.Fatal(err)
	}
	p.bin, err = hostemu.BuildWith(context.Background(), prog, o)
	if err != nil {
		var te *hostemu.ToolError
		if asToolError(err, &te) {
			t.Skipf("no host C++ compiler: %v", err)
		}
		t.Fatalf("%s does not compile under host emulation: %v", file, err)
	}
	return p
}

// run replays c's launches on the upstream kernels (byOp: the program that
// runs each op) and returns the case's buffers afterwards.
func run(c *cases.Case, byOp map[string]*program, width int) (map[string][]byte, error) {
	state := map[string][]byte{}
	for _, b := range c.Buffers {
		state[b.Name] = b.Bytes()
	}
	for i, l := range c.Launches {
		p := byOp[l.Op.Name]
		if p == nil {
			return nil, fmt.Errorf("%s: no upstream kernel runs %s", c.Name, l.Op.Name)
		}
		params, err := upstream.Params(p.shared, l.Op.Name, l.Params)
		if err != nil {
			return nil, err
		}
		vi := -1
		for j, v := range p.variants {
			match := true
			for _, prm := range p.k.Params {
				if prm.Derived == nil && v.Values[prm.Name] != params[prm.Name] {
					match = false
				}
			}
			if match {
				vi = j
				break
			}
		}
		if vi < 0 {
			return nil, fmt.Errorf("%s: %s has no variant %v", c.Name, p.k.Name, params)
		}
		job := emulate.LaunchJob(vi, l.Grid, l.Workgroup, width)
		args, err := upstream.Args(l, p.k)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		for j, a := range p.k.Args {
			job.Args = append(job.Args, hostemu.Arg{Name: a.Name, Bits: args[j]})
		}
		// Each upstream buffer takes the case buffer the op's kernel binds to
		// the same node slot; slots the op lacks get a buffer of their own
		// that the kernel must not touch (checked below).
		bound := map[string]string{}
		for _, kb := range p.k.Buffers {
			name := upstream.Bound(l, kb)
			if name == "" {
				name = "unbound_" + kb.Name
				if _, ok := state[name]; !ok {
					state[name] = untouched()
				}
			}
			bound[kb.Name] = name
			job.Buffers = append(job.Buffers, hostemu.Buffer{Name: kb.Name, ElemSize: 4, Data: state[name]})
		}
		out, err := p.bin.Run(context.Background(), job, emulate.RunTimeout)
		if err != nil {
			return nil, fmt.Errorf("%s: launch %d (%s) at width %d: %w", c.Name, i, p.k.Name, width, err)
		}
		for _, kb := range p.k.Buffers {
			state[bound[kb.Name]] = out[kb.Name]
		}
	}
	for name, data := range state {
		if len(name) > 8 && name[:8] == "unbound_" && string(data) != string(untouched()) {
			return nil, fmt.Errorf("%s: the kernel wrote %s, a buffer its op does not have", c.Name, name[8:])
		}
	}
	return state, nil
}

// untouched is the contents of a buffer an op does not bind: a few NaNs.
func untouched() []byte {
	b := make([]byte, 16)
	for i := 0; i < len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = 0x01, 0x00, 0xc0, 0x7f
	}
	return b
}

// checkFamilies runs a random case of every variant of the fused ops and
// their gathers (three sampled per op in the fast tier) through byOp's kernels at subgroup width, comparing every
// buffer with the Go reference as kernelgen's own checks do (cases.Compare:
// bit for bit for contract-free and integer buffers, the native contract's
// NMSE otherwise).
func checkFamilies(t *testing.T, backend string, byOp map[string]*program, width int) {
	fams, err := upstream.Families()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range fams {
		fops := []string{f.Shared.Plain, f.Shared.Ids}
		if f.Shared.Slots != "" && byOp[f.Shared.Slots] != nil { // the fusion form's kernel runs it too
			fops = append(fops, f.Shared.Slots)
		}
		for _, op := range fops {
			variants := ops.TargetOf(backend).Variants(op)
			for _, i := range tier.Sample(t, len(variants), 3) {
				v := variants[i]
				r := rand.New(rand.NewPCG(uint64(i), 11))
				c, err := cases.Random(op, ir.Native(backend), r, cases.Small, &v)
				if err != nil {
					t.Fatal(err)
				}
				got, err := run(c, byOp, width)
				if err != nil {
					t.Error(err)
					continue
				}
				if err := c.Compare(got); err != nil {
					t.Error(err)
				}
				n++
			}
		}
	}
	t.Logf("%d cases at subgroup width %d, every launch on the upstream kernels", n, width)
}

// checkBitForBit runs sampled variants of op on byOp's kernels and compares
// every buffer the Go reference writes bit for bit, where checkFamilies
// allows native arithmetic its tolerance. With snapshot slots (args K and
// n_tokens) it draws each variant's case until one writes a slot past the
// first (K and n_tokens at least 2).
func checkBitForBit(t *testing.T, backend string, byOp map[string]*program, op string, width int) {
	t.Helper()
	variants := ops.TargetOf(backend).Variants(op)
	n := 0
	for _, i := range tier.Sample(t, len(variants), 3) {
		v := variants[i]
		var c *cases.Case
		for seed := uint64(0); seed < 64; seed++ {
			var err error
			if c, err = cases.Random(op, ir.Native(backend), rand.New(rand.NewPCG(uint64(i), 12+seed)), cases.Small, &v); err != nil {
				t.Fatal(err)
			}
			last := c.Launches[len(c.Launches)-1].Args
			if _, slots := last["K"]; !slots || (last["K"] >= 2 && last["n_tokens"] >= 2) {
				break
			}
		}
		got, err := run(c, byOp, width)
		if err != nil {
			t.Fatal(err)
		}
		same := true
		for _, want := range c.Expected {
			g, w := got[want.Name], want.Bytes()
			if len(g) != len(w) {
				t.Fatalf("%s: %s has %d bytes, want %d", c.Name, want.Name, len(g), len(w))
			}
			for j := 0; j+4 <= len(w); j += 4 {
				if string(g[j:j+4]) != string(w[j:j+4]) {
					t.Errorf("%s: %s[%d] differs from the Go reference (bit for bit)", c.Name, want.Name, j/4)
					same = false
					break
				}
			}
		}
		if same {
			last := c.Launches[len(c.Launches)-1].Args
			t.Logf("%s: K %d, n_tokens %d", c.Name, last["K"], last["n_tokens"])
			n++
		}
	}
	t.Logf("%d %s cases bit for bit equal to the Go reference", n, op)
}
