package ops_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

var update = flag.Bool("update", false, "rewrite the golden IR files under testdata/")

// The IR text of every kernel is a reviewed golden file: a change to an op
// program shows up as a diff of these files.
func TestIRGolden(t *testing.T) {
	ks, err := ops.Kernels()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("testdata", "ir")
	want := map[string]bool{}
	for _, k := range ks {
		name := k.Name + "@" + k.Arith.String() + ".ir"
		want[name] = true
		path := filepath.Join(dir, name)
		got := ir.Print(k)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (run go test ./ops -update)", path, err)
			continue
		}
		if d := cmp.Diff(string(old), got); d != "" {
			t.Errorf("%s is stale (-golden +now); review and run go test ./ops -update:\n%s", path, d)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !want[e.Name()] {
			t.Errorf("%s: golden file of no kernel; delete it", filepath.Join(dir, e.Name()))
		}
	}
}

func TestEveryOpBuildsUnderEveryContract(t *testing.T) {
	for _, op := range ops.All() {
		for _, a := range ops.Ariths() {
			k, err := op.Kernel(a)
			if err != nil {
				t.Fatalf("%s@%s: %v", op.Name, a, err)
			}
			if err := ir.Validate(k); err != nil {
				t.Errorf("%s: %v", k.ID(), err)
			}
			if !op.ArithFree() && k.Arith != a {
				t.Errorf("%s built as %s", op.Name, k.Arith)
			}
			// The mark lives in the IR: an arith-free op's one kernel carries
			// it, whatever contract was asked for; no other kernel does.
			if k.ArithFree != op.ArithFree() || op.ArithFree() && k.Arith != ir.Portable {
				t.Errorf("%s@%s: kernel marked arith-free %v (%s), op says %v", op.Name, a, k.ArithFree, k.Arith, op.ArithFree())
			}
			if gather := op.Name == ops.GatherOp || op.Name == ops.RowGatherOp || strings.Contains(op.Name, "_gather"); k.ArithFree != gather {
				t.Errorf("%s: arith-free %v; exactly the gathers (copies, and the chain gathers' integer plans) are", op.Name, k.ArithFree)
			}
		}
	}
}

// Building twice gives the same IR: nothing depends on map order or globals.
func TestBuildIsDeterministic(t *testing.T) {
	for _, op := range ops.All() {
		for _, a := range op.Ariths() {
			k1, err := op.Kernel(a)
			if err != nil {
				t.Fatal(err)
			}
			k2, err := ops.Rebuild(op, a)
			if err != nil {
				t.Fatal(err)
			}
			if ir.Print(k1) != ir.Print(k2) {
				t.Errorf("%s: two builds print differently", k1.ID())
			}
		}
	}
}

func TestVariantTable(t *testing.T) {
	vs, err := ops.Variants()
	if err != nil {
		t.Fatalf("the committed variant table is invalid:\n%v", err)
	}
	// Every backend builds, per op: S_v {16,32,64,128} x KDA x (KEEP_RS for
	// the base op); d_conv 2..8 x SiLU. The table holds Vulkan's own S_v 128
	// tiling besides the shared one. A backend with its own form of the
	// gathers (ggml-cpu's row copies, Gather) builds that instead. Backends with a batched op B
	// (GDNBatch) build it at S_v x KDA, at the shape their glue asks for.
	for _, be := range ops.NativeBackends() {
		want := map[string]int{
			"gated_delta_net": 16, "gated_delta_net_inplace": 8, "gated_delta_net_inplace_ids": 8, ops.SlotsOp: 8,
			ops.GatherOp: 1, "ssm_conv": 7, "ssm_conv_update_inplace": 14,
			"ssm_conv_update_inplace_ids": 14, ops.ConvSlotsOp: 14,
		}
		if own := ops.TargetOf(be).Gather(); own != ops.GatherOp {
			delete(want, ops.GatherOp)
			want[own] = 1
		}
		if _, ok := ops.TargetOf(be).ConvBatch(); ok {
			want["ssm_conv_update_inplace_ids_batched"] = 14
		}
		if tiers := ops.TargetOf(be).GDNBatch(128); len(tiers) > 0 {
			for _, sv := range []int64{16, 32, 64, 128} {
				for _, bt := range ops.TargetOf(be).GDNBatch(int(sv)) {
					want["gated_delta_net_inplace_ids_batched"] += 2
					found := 0
					for _, v := range ops.TargetOf(be).Variants("gated_delta_net_inplace_ids_batched") {
						if v.Values["S_v"] == sv && v.Values["NW"] == int64(bt.NW) && v.Values["CPW"] == int64(bt.CPW) && v.Values["NS"] == int64(bt.NS) && v.Values["SPT"] == int64(bt.SPT) {
							found++
						}
					}
					if found != 2 {
						t.Errorf("%s: batched op B builds %d variants with S_v %d at its tier %+v, want 2", be, found, sv, bt)
					}
				}
			}
		}
		// The chained schedule: one plan and gather both ops share, op B's
		// compute kernel at the backend's tiling, op D's per d_conv and SiLU.
		if _, ok := ops.TargetOf(be).ChainFrom(); ok {
			want[ops.ChainGatherOp] = 1
			want["gated_delta_net_inplace_ids_chained"] = 8
			want["ssm_conv_update_inplace_ids_chained"] = 14
			for _, sv := range []int64{16, 32, 64, 128} {
				nw, cpw := ops.TargetOf(be).GDNTiling(int(sv))
				found := 0
				for _, v := range ops.TargetOf(be).Variants("gated_delta_net_inplace_ids_chained") {
					if v.Values["S_v"] == sv && v.Values["NW"] == int64(nw) && v.Values["CPW"] == int64(cpw) {
						found++
					}
				}
				if found != 2 {
					t.Errorf("%s: chained op B builds %d variants with S_v %d at its tiling (%d, %d), want 2", be, found, sv, nw, cpw)
				}
			}
		}
		// The block schedule's shapes (GDNBlocks) add KDA variants of its
		// compute each, and its gather.
		if ops.TargetOf(be).GDNBlocks() {
			want["gated_delta_net_block_gather"] = 1
			want["gated_delta_net_inplace_ids_blocks"] = 8 // S_v x KDA at the op's tiling
		}
		// A small-n tiling (GDNSmallTiling) adds S_v 128 x KDA to ops A and B.
		if nw, cpw, _, ok := ops.TargetOf(be).GDNSmallTiling(128); ok {
			want["gated_delta_net_inplace"] += 2
			want["gated_delta_net_inplace_ids"] += 2
			for _, op := range []string{"gated_delta_net_inplace", "gated_delta_net_inplace_ids"} {
				found := 0
				for _, v := range ops.TargetOf(be).Variants(op) {
					if v.Values["S_v"] == 128 && v.Values["NW"] == int64(nw) && v.Values["CPW"] == int64(cpw) {
						found++
					}
				}
				if found != 2 {
					t.Errorf("%s: %s builds %d variants at its small-n tiling (%d, %d), want 2", be, op, found, nw, cpw)
				}
			}
		}
		count := map[string]int{}
		for _, v := range vs {
			if v.BuiltOn(ops.TargetOf(be)) {
				count[v.Op]++
			}
		}
		if d := cmp.Diff(want, count); d != "" {
			t.Errorf("%s: variants per op (-want +got):\n%s", be, d)
		}
		// The tiling a backend's glue asks for (GDNTiling) is one it builds.
		for _, sv := range []int64{16, 32, 64, 128} {
			nw, cpw := ops.TargetOf(be).GDNTiling(int(sv))
			for _, op := range []string{"gated_delta_net_inplace", "gated_delta_net_inplace_ids"} {
				found := 0
				for _, v := range ops.TargetOf(be).Variants(op) {
					if v.Values["S_v"] == sv && v.Values["NW"] == int64(nw) && v.Values["CPW"] == int64(cpw) {
						found++
					}
				}
				if found != 2 { // KDA off and on
					t.Errorf("%s: %s builds %d variants with S_v %d at its tiling (%d, %d), want 2", be, op, found, sv, nw, cpw)
				}
			}
		}
	}
	if n := len(ops.VariantsOf("gated_delta_net_inplace_ids")); n != 14 {
		t.Errorf("gated_delta_net_inplace_ids: %d variants in the table, want 14 (8 shared + Vulkan's 2 of S_v 128 + CUDA's and Vulkan's 2 small-n ones)", n)
	}
}

// A bad variant names the table line and the fix.
func TestVariantErrorsPointAtTheTable(t *testing.T) {
	cases := []struct {
		v    ops.Variant
		want string
	}{
		{ops.V("gated_delta_net_inplace", "S_v", 48, "KDA", false, "NW", 4, "CPW", 1), "S_v 48 is not supported; valid values are {16, 32, 64, 128}"},
		{ops.V("ssm_conv_update_inplace", "d_conv", 9, "SILU", true), "d_conv 9 is not supported; valid values are {2, 3, 4, 5, 6, 7, 8}"},
		{ops.V("ssm_conv_update_inplace", "d_conv", 4), "SILU is not set"},
		{ops.V("ssm_conv", "d_conv", 4, "silu", 1), "silu is not a param of this op; its params are d_conv"},
		{ops.V("gated_delta_net_inplace", "S_v", 16, "KDA", false, "NW", 16, "CPW", 2), "S_v must be a multiple of NW*CPW"},
		{ops.V("gated_delta_net_inplace", "S_v", 16, "KDA", 2, "NW", 4, "CPW", 1), "KDA is a bool"},
		{ops.V("no_such_op"), `unknown op "no_such_op"; valid ops: gated_delta_net`},
	}
	for _, c := range cases {
		err := ops.CheckVariants([]ops.Variant{c.v})
		if err == nil {
			t.Errorf("%s %s: no error", c.v.Op, c.v)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %q does not say %q", err, c.want)
		}
		if !strings.HasPrefix(err.Error(), "ops/ops_test.go:") {
			t.Errorf("error %q does not point at this file", err)
		}
	}
	// Two identical entries are one mistake.
	v := ops.V("ssm_conv", "d_conv", 3)
	if err := ops.CheckVariants([]ops.Variant{v, v}); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("duplicate variant not reported: %v", err)
	}
}

func TestLookupListsValidNames(t *testing.T) {
	_, err := ops.Lookup("gdn")
	if err == nil || !strings.Contains(err.Error(), "ssm_conv_update_inplace_ids") {
		t.Errorf("Lookup error %v should list the valid ops", err)
	}
	op, _ := ops.Lookup("ssm_conv")
	if _, err := op.Kernel(ir.Native("webgpu")); err == nil || !strings.Contains(err.Error(), "native-metal") {
		t.Errorf("unknown contract error %v should list the valid ones", err)
	}
}

// Where its guard leaves the gather out, an ids op's compute kernel is the
// op's first launch, and on a backend that overlaps launches (CUDA's
// programmatic dependent launch) it must itself wait for the launches before
// it, which wrote its inputs: before its first load, a DepWait that runs at
// one sequence. At two it runs only where needed (after the gather, which
// waited), so the overlap is kept.
func TestIdsComputeWaitsWhereTheGatherIsLeftOut(t *testing.T) {
	for _, name := range []string{"gated_delta_net_inplace_ids", "ssm_conv_update_inplace_ids"} {
		op, err := ops.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range []ir.Arith{ir.Portable, ir.Native("cuda")} {
			k, err := op.Kernel(a)
			if err != nil {
				t.Fatal(err)
			}
			waits := func(nSeqs int64) bool {
				for _, st := range k.Body {
					switch s := st.(type) {
					case *ir.DepSync:
						if s.Kind == ir.DepWait {
							return true
						}
					case *ir.If:
						c, ok := ir.EvalInt(s.Cond, map[string]int64{"n_seqs": nSeqs})
						if ok && c != 0 {
							for _, x := range s.Then {
								if d, ok := x.(*ir.DepSync); ok && d.Kind == ir.DepWait {
									return true
								}
							}
						}
					}
					if hasLoad(st) {
						return false
					}
				}
				return false
			}
			if !waits(1) {
				t.Errorf("%s: no DepWait before the first load at n_seqs 1, where the gather is left out", k.ID())
			}
			if waits(2) {
				t.Errorf("%s: an unconditional DepWait before the first load at n_seqs 2: the overlap with the gather is lost", k.ID())
			}
		}
	}
}

// hasLoad reports whether a statement reads a buffer.
func hasLoad(s ir.Stmt) bool {
	found := false
	ir.WalkStmts([]ir.Stmt{s}, func(st ir.Stmt) {
		for _, e := range ir.StmtExprs(st) {
			ir.WalkExpr(e, func(x ir.Expr) {
				if _, ok := x.(*ir.Load); ok {
					found = true
				}
			})
		}
	})
	return found
}

// The batched kernels (ops B and D in one dispatch) read a source that
// another sequence of the same workgroup writes; only their device barrier
// orders those threads (the Go reference runs threads in phases and cannot
// tell). So, under every contract: one device barrier (the IR validator
// keeps it in uniform code), at the top of the kernel or inside top-level
// loops and branches; in the innermost statement list that holds it with
// anything else, every load of the state (the destination rows or the
// cache) comes before it and every store of the destination after it.
// Around that list the state is only read before it (op B's staging) and
// not touched after it. Op B's barrier runs in its first slot only: its
// later slots read only their own rows, the cache outside the window and
// the staged copies, which the bit-for-bit tests (verify/cases,
// verify/vulkan, emit/goref) check, not this one.
func TestBatchedReadsEveryStateBeforeTheBarrier(t *testing.T) {
	for _, x := range []struct{ op, dst string }{
		{"gated_delta_net_inplace_ids_batched", "state_dst"},
		{"ssm_conv_update_inplace_ids_batched", "conv_state_dst"},
	} {
		checkReadsBeforeBarrier(t, x.op, x.dst)
	}
}

// barrierPath is the statement lists from body down to the one that holds
// a device barrier, each with the index of the statement that leads on (the
// barrier itself in the last); nil without one.
func barrierPath(body []ir.Stmt) []pathStep {
	for i, s := range body {
		if b, ok := s.(*ir.Barrier); ok && b.Device {
			return []pathStep{{body, i}}
		}
		var subs [][]ir.Stmt
		switch x := s.(type) {
		case *ir.For:
			subs = [][]ir.Stmt{x.Body}
		case *ir.If:
			subs = [][]ir.Stmt{x.Then, x.Else}
		}
		for _, sub := range subs {
			if p := barrierPath(sub); p != nil {
				return append([]pathStep{{body, i}}, p...)
			}
		}
	}
	return nil
}

// lastLoop is the innermost loop on the path to the barrier; nil if none.
func lastLoop(path []pathStep) *ir.For {
	var loop *ir.For
	for _, step := range path {
		if f, ok := step.list[step.at].(*ir.For); ok {
			loop = f
		}
	}
	return loop
}

// firstIterationOnly: the barrier is alone in a branch taken when loop's
// variable equals its start (op B's slot 0, which every later slot follows).
func firstIterationOnly(path []pathStep, loop *ir.For) bool {
	if len(path) < 2 || !alone(path[len(path)-1].list) {
		return false
	}
	br, ok := path[len(path)-2].list[path[len(path)-2].at].(*ir.If)
	if !ok || len(br.Else) > 0 {
		return false
	}
	eq, ok := br.Cond.(*ir.Binary)
	if !ok || eq.Op != ir.Eq {
		return false
	}
	v, ok := eq.X.(*ir.VarRef)
	start, ok2 := loop.Start.(*ir.Const)
	end, ok3 := eq.Y.(*ir.Const)
	return ok && ok2 && ok3 && v.Var == loop.Var && start.I == end.I
}

// alone: list is one statement and comments.
func alone(list []ir.Stmt) bool {
	n := 0
	for _, s := range list {
		if _, ok := s.(*ir.Comment); !ok {
			n++
		}
	}
	return n == 1
}

type pathStep struct {
	list []ir.Stmt
	at   int
}

func checkReadsBeforeBarrier(t *testing.T, name, dstName string) {
	op, err := ops.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range op.Ariths() {
		k, err := op.Kernel(a)
		if err != nil {
			t.Fatal(err)
		}
		all := 0
		ir.WalkStmts(k.Body, func(s ir.Stmt) {
			if b, ok := s.(*ir.Barrier); ok && b.Device {
				all++
			}
		})
		if all != 1 {
			t.Fatalf("%s: %d device barriers, want 1", k.ID(), all)
		}
		path := barrierPath(k.Body)
		if loop := lastLoop(path); loop != nil && !firstIterationOnly(path, loop) {
			t.Errorf("%s: the barrier inside the loop over %s does not run in its first iteration alone (if %s == start)", k.ID(), loop.Var.Name, loop.Var.Name)
		}
		for len(path) > 1 && alone(path[len(path)-1].list) { // the barrier alone in a branch
			path = path[:len(path)-1]
		}
		loads, stores := 0, 0
		// visit calls f for each state load and destination store in stmts
		visit := func(stmts []ir.Stmt, f func(load bool, at ir.Pos)) {
			ir.WalkStmts(stmts, func(s ir.Stmt) {
				if st, ok := s.(*ir.Store); ok && st.Buf.Name == dstName {
					stores++
					f(false, st.At)
				}
				for _, e := range ir.StmtExprs(s) {
					ir.WalkExpr(e, func(x ir.Expr) {
						if l, ok := x.(*ir.Load); ok && (l.Buf.Name == dstName || l.Buf.Name == "cache") {
							loads++
							f(true, l.At)
						}
					})
				}
			})
		}
		for depth, step := range path {
			innermost := depth == len(path)-1
			for i, top := range step.list {
				if i == step.at {
					continue
				}
				visit([]ir.Stmt{top}, func(load bool, at ir.Pos) {
					switch {
					case innermost && i < step.at && !load:
						t.Errorf("%s: a store of %s before the barrier (%s)", k.ID(), dstName, at)
					case innermost && i > step.at && load:
						t.Errorf("%s: a state load after the barrier (%s)", k.ID(), at)
					case !innermost && i < step.at && !load:
						t.Errorf("%s: a store of %s before the statement that holds the barrier (%s)", k.ID(), dstName, at)
					case !innermost && i > step.at:
						t.Errorf("%s: the state touched after the statement that holds the barrier (%s)", k.ID(), at)
					}
				})
			}
		}
		if loads == 0 || stores == 0 {
			t.Errorf("%s: %d state loads and %d stores: nothing checked", k.ID(), loads, stores)
		}
	}
}

// Op B's one-dispatch schedule starts past the small-n tiling's sequences:
// were they to overlap, the glue would run the batched kernel there and the
// small tiling would never reach op B.
func TestGDNBatchStartsPastTheSmallTiling(t *testing.T) {
	checked := 0
	for _, be := range ops.NativeBackends() {
		for _, sv := range []int{16, 32, 64, 128} {
			from := ops.TargetOf(be).GDNBatchFrom(sv)
			if from < 2 {
				t.Errorf("%s S_v %d: batched from %d sequences; one sequence has no aliasing to batch", be, sv, from)
			}
			ns := ops.TargetOf(be).GDNBatchMax(sv)
			_, _, maxSeqs, ok := ops.TargetOf(be).GDNSmallTiling(sv)
			if ns == 0 || !ok {
				continue
			}
			checked++
			if from <= maxSeqs {
				t.Errorf("%s S_v %d: the batched schedule takes %d sequences, where the small-n tiling runs up to %d", be, sv, from, maxSeqs)
			}
			if from > ns {
				t.Errorf("%s S_v %d: batched from %d sequences, past its NS %d", be, sv, from, ns)
			}
		}
	}
	if checked == 0 {
		t.Error("no backend has both a batched op B and a small-n tiling: the test checks nothing")
	}
}

// The one-dispatch schedule of op B takes the n_seqs of its spans and no
// others: each n_seqs in a span goes to the first tier that holds it, whose
// Aliased is the span's, and the spans are ascending and apart (tiers that
// follow each other merged), but where one split by aliasing meets one
// that is not.
func TestGDNBatchSpansAndTiers(t *testing.T) {
	checked := 0
	for _, be := range ops.NativeBackends() {
		for _, sv := range []int{16, 32, 64, 128} {
			tiers, spans := ops.TargetOf(be).GDNBatch(sv), ops.TargetOf(be).GDNBatchSpans(sv)
			if len(tiers) == 0 {
				continue
			}
			checked++
			for i := 1; i < len(spans); i++ {
				if spans[i].From < spans[i-1].To+1 || spans[i].From == spans[i-1].To+1 && spans[i].Aliased == spans[i-1].Aliased {
					t.Errorf("%s S_v %d: spans %v not ascending and apart", be, sv, spans)
				}
			}
			if spans[0].From != ops.TargetOf(be).GDNBatchFrom(sv) || spans[len(spans)-1].To != ops.TargetOf(be).GDNBatchMax(sv) {
				t.Errorf("%s S_v %d: spans %v, want %d..%d", be, sv, spans, ops.TargetOf(be).GDNBatchFrom(sv), ops.TargetOf(be).GDNBatchMax(sv))
			}
			for _, tier := range tiers {
				if tier.From == 0 {
					continue
				}
				if below, ok := ops.TargetOf(be).GDNBatchAt(sv, tier.From-1); ok && below == tier {
					t.Errorf("%s S_v %d: tier %+v takes %d sequences, before its From", be, sv, tier, tier.From-1)
				}
				if at, ok := ops.TargetOf(be).GDNBatchAt(sv, tier.From); !ok || at != tier {
					t.Errorf("%s S_v %d: %d sequences go to %+v (%v), want the tier %+v that starts there", be, sv, tier.From, at, ok, tier)
				}
			}
			for n := 1; n <= 2*ops.TargetOf(be).GDNBatchMax(sv); n++ {
				in, aliased := false, false
				for _, sp := range spans {
					if n >= sp.From && n <= sp.To {
						in, aliased = true, sp.Aliased
					}
				}
				bt, ok := ops.TargetOf(be).GDNBatchAt(sv, n)
				if ok != in {
					t.Errorf("%s S_v %d, %d sequences: batched %v, spans %v", be, sv, n, ok, spans)
				}
				if !ok {
					continue
				}
				first := tiers[0]
				for _, tier := range tiers {
					if tier.Seqs() >= n {
						first = tier
						break
					}
				}
				if bt != first || bt.Aliased != aliased {
					t.Errorf("%s S_v %d, %d sequences: tier %+v, want the first that holds it, %+v, in a span Aliased %v", be, sv, n, bt, first, aliased)
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no backend has a batched op B: the test checks nothing")
	}
}
