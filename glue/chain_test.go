package glue

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// chainedOps are the ids ops that may get the chained schedule, with the
// C expression of their n_seqs and the window condition it requires.
var chainedOps = map[string][2]string{
	"gated_delta_net_inplace_ids": {ne(2, 3), stateDstIsWindow},
	"ssm_conv_update_inplace_ids": {ne(2, 2), convStateDstIsWindow},
}

// chainFrom is where op chains on backend (ops.Target.ChainFrom for op B,
// ops.Target.ConvChainFrom for op D).
func chainFrom(op, backend string) (int, bool) {
	if op == "ssm_conv_update_inplace_ids" {
		return ops.TargetOf(backend).ConvChainFrom()
	}
	return ops.TargetOf(backend).ChainFrom()
}

// Ops B and D run the chained schedule from ops.Target.ChainFrom sequences where
// the destination is the cache's window, on every backend that declares
// it and on no other; where the op's one-dispatch schedule reaches that
// far, the chained one runs only where it does not (TestBatchedTiers...
// evaluates both conditions over n_seqs).
func TestChainedScheduleCondition(t *testing.T) {
	for _, backend := range []string{"cpu", "metal", "vulkan", "sycl", "cuda", "opencl"} {
		model, err := Model(ir.Native(backend))
		if err != nil {
			t.Fatal(err)
		}
		seen, declared := 0, 0
		for name := range chainedOps {
			if _, ok := chainFrom(name, backend); ok {
				declared++
			}
		}
		for _, o := range model {
			s := scheduleOf(o, "chained")
			want, ids := chainedOps[o.Name]
			from, chains := chainFrom(o.Name, backend)
			if !chains || !ids {
				if s != nil {
					t.Errorf("%s %s: a chained schedule (%s) where none is declared", backend, o.Name, s.Cond)
				}
				continue
			}
			seen++
			if s == nil {
				t.Errorf("%s %s: no chained schedule (ops.Target.ChainFrom %d)", backend, o.Name, from)
				continue
			}
			c := fmt.Sprintf("%s >= %d && %s", want[0], from, want[1])
			if b := scheduleOf(o, "one_dispatch"); b != nil {
				most := ops.TargetOf(backend).GDNBatchMax(128)
				if o.Fusion == "D" {
					most, _ = ops.TargetOf(backend).ConvBatch()
				}
				if most == 0 || !strings.Contains(b.Cond, fmt.Sprintf(" <= %d", most)) {
					t.Errorf("%s %s: the one-dispatch schedule (%s) does not end at %d sequences", backend, o.Name, b.Cond, most)
				}
				if most >= from {
					c += " && !one_dispatch"
				}
			}
			if s.Cond != c {
				t.Errorf("%s %s: chained when %q, want %q", backend, o.Name, s.Cond, c)
			}
		}
		if seen != declared {
			t.Errorf("%s: %d of the %d chaining ids ops in the model", backend, seen, declared)
		}
	}
}

// A chained schedule inside the one-dispatch range is refused with the
// fix, and so are dispatches that are not a plan writer then its reader.
func TestChainedScheduleAboveBatched(t *testing.T) {
	o := &Op{Name: "x_ids", Scratch: &Scratch{}}
	withPlan := func(name string, a ir.Access) Dispatch {
		return Dispatch{Op: &ops.Op{Name: name}, Kernel: &ir.Kernel{Name: name}, Bind: []Binding{{Buffer: "plan", Tensor: "plan", Access: a}}}
	}
	ds := []Dispatch{withPlan("gather", ir.Write), withPlan("compute", ir.Read)}
	if err := o.chained(ds, "n", 16, 8, "w", "dst"); err != nil {
		t.Errorf("a plan writer then its reader: %v", err)
	}
	o.Schedules = nil
	guarded := withPlan("gather", ir.Write)
	guarded.Op.Guard = &ops.Guard{Arg: "n_seqs", Min: 2}
	if err := o.chained([]Dispatch{guarded, ds[1]}, "n", 1, 0, "w", "dst"); err == nil || !strings.Contains(err.Error(), "is skipped below n_seqs 2; ops.Tuning.ChainFrom must be at least 2") {
		t.Errorf("ChainFrom 1 with the chain gather guarded at 2: %v", err)
	}
	if err := o.chained(ds, "n", 8, 8, "w", "dst"); err == nil || !strings.Contains(err.Error(), "give it the one-dispatch schedule first") {
		t.Errorf("ChainFrom 8 inside a one-dispatch schedule the op lacks: %v", err)
	}
	o.Schedules = []*Schedule{{Local: "one_dispatch", Cond: "n <= 8"}}
	if err := o.chained(ds, "n", 8, 8, "w", "dst"); err != nil || o.Schedules[1].Cond != "n >= 8 && w && !one_dispatch" {
		t.Errorf("ChainFrom 8 inside the one-dispatch schedule: %v, it runs when %q, want it to exclude one_dispatch", err, o.Schedules[len(o.Schedules)-1].Cond)
	}
	o.Schedules = nil
	if err := o.chained(append(ds, ds[1]), "n", 16, 8, "w", "dst"); err == nil || !strings.Contains(err.Error(), "not 3 dispatches") {
		t.Errorf("three dispatches: %v", err)
	}
	if err := o.chained([]Dispatch{withPlan("gather", ir.Read), ds[1]}, "n", 16, 8, "w", "dst"); err == nil || !strings.Contains(err.Error(), "must write the plan the compute reads; it binds it read") {
		t.Errorf("a gather reading the plan: %v", err)
	}
	if err := o.chained([]Dispatch{ds[0], {Op: &ops.Op{Name: "compute"}, Kernel: &ir.Kernel{Name: "compute"}}}, "n", 16, 8, "w", "dst"); err == nil || !strings.Contains(err.Error(), "must read the plan the chain gather writes; it has no buffer of role plan") {
		t.Errorf("a compute without the plan: %v", err)
	}
	if err := (&Op{Name: "x_ids"}).chained(ds, "n", 16, 8, "w", "dst"); err == nil || !strings.Contains(err.Error(), "scratch") {
		t.Errorf("no scratch: %v", err)
	}
}

// The chained schedule runs the chain gather (guarded as the gather is),
// which writes the plan, then the chained compute, which reads it; both
// bind the plan by its role, the plan's size is n_seqs int32 beside the
// scratch, and the gather's seg is ops.Target.ChainSeg's at every n_seqs.
func TestChainedScheduleDispatches(t *testing.T) {
	for _, backend := range []string{"vulkan", "cuda"} {
		model, err := Model(ir.Native(backend))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range model {
			s := scheduleOf(o, "chained")
			if s == nil {
				continue
			}
			family := "gated_delta_net"
			if o.Fusion == "D" {
				family = "ssm_conv"
			}
			var names []string
			for i, d := range s.Dispatches {
				names = append(names, d.Op.Name)
				plan, access := "", ir.Access(0)
				for _, b := range d.Bind {
					if b.Buffer == "plan" {
						plan, access = b.Tensor, b.Access
					}
				}
				// the gather's cache and ids are the op's own (ir.CallerRole):
				// the chain gather is one kernel for both ops
				for _, b := range d.Bind {
					if (b.Buffer == "cache" || b.Buffer == "ids") && b.Tensor != bindingIn(o.Dispatches[len(o.Dispatches)-1], b.Buffer) {
						t.Errorf("%s %s: %s binds its %s to %s, the op's compute to %s", backend, o.Name, d.Op.Name, b.Buffer, b.Tensor, bindingIn(o.Dispatches[len(o.Dispatches)-1], b.Buffer))
					}
				}
				want := ir.Read
				if i == 0 {
					want = ir.Write
				}
				if plan != "plan" || access != want {
					t.Errorf("%s %s: %s binds its plan to %q (%v), want the plan (%v)", backend, o.Name, d.Op.Name, plan, access, want)
				}
			}
			blocks := o.Fusion == "B" && ops.TargetOf(backend).GDNBlocks()
			want := ops.ChainGatherOp + ", " + o.Name + "_chained"
			if blocks {
				want = family + "_block_gather, " + o.Name + "_blocks"
			}
			if got := strings.Join(names, ", "); got != want {
				t.Errorf("%s %s: chained dispatches %s, want %s", backend, o.Name, got, want)
			}
			nSeqs := chainedOps[o.Name][0]
			if len(s.Dispatches) == 2 {
				if g := s.Dispatches[0]; g.When != nSeqs+" >= 2" {
					t.Errorf("%s %s: the chain gather runs when %q, want the gather's guard", backend, o.Name, g.When)
				}
				if blocks {
					// blocks of the compute's NW: the same C expression
					block := ""
					for _, a := range s.Dispatches[0].Args {
						if a.Arg == "block_len" {
							block = a.Expr
						}
					}
					if nw := o.Choice(s.Dispatches[1], "NW"); block == "" || block != nw {
						t.Errorf("%s %s: the block gather's block is %q, not the blocks compute's NW %q", backend, o.Name, block, nw)
					}
				}
			}
			if len(s.Dispatches) == 2 && !blocks {
				seg := ""
				for _, a := range s.Dispatches[0].Args {
					if a.Arg == "seg" {
						seg = a.Expr
					}
				}
				at, err := segAt(seg, nSeqs)
				if err != nil {
					t.Errorf("%s %s: %v", backend, o.Name, err)
				}
				for n := 1; n <= 4096 && at != nil; n++ {
					if got := at(n); got != ops.TargetOf(backend).ChainSeg(n) {
						t.Errorf("%s %s: seg %s is %d at %d sequences, ops.Target.ChainSeg %d", backend, o.Name, seg, got, n, ops.TargetOf(backend).ChainSeg(n))
						break
					}
				}
			}
			if o.Scratch == nil || o.Scratch.Plan != nSeqs {
				t.Errorf("%s %s: scratch %+v, want a plan of %s", backend, o.Name, o.Scratch, nSeqs)
			}
		}
	}
}

// In the view, each schedule's dispatches run where its local is set, a
// barrier between them, and the op's own where no schedule is chosen.
func TestChainedScheduleView(t *testing.T) {
	v, err := NewView(Names{Backend: "vulkan", Function: func(k *ir.Kernel) string { return k.Name }})
	if err != nil {
		t.Fatal(err)
	}
	for _, ov := range v.Ops {
		if _, ids := chainedOps[ov.Name]; !ids {
			continue
		}
		if _, ok := chainFrom(ov.Name, "vulkan"); !ok {
			continue
		}
		if ov.PlanSize == "" || ov.PlanWhen != "chained" {
			t.Errorf("%s: plan %q used where %q", ov.Name, ov.PlanSize, ov.PlanWhen)
		}
		var whens []string
		for _, d := range ov.Dispatches {
			w := fmt.Sprintf("%s [%s] barrier %v", d.Kernel, d.When, d.Barrier)
			if d.BarrierWhen != "" {
				w += " if " + d.BarrierWhen
			}
			whens = append(whens, w)
		}
		got := strings.Join(whens, "\n")
		n := chainedOps[ov.Name][0]
		gather := ops.TargetOf("vulkan").Gather()
		lines := []string{ov.Name + "_batched [one_dispatch] barrier false"}
		if one := scheduleOf(ov.Op, "one_dispatch"); len(one.Dispatches) > 1 { // split by aliasing: the chained compute after it, where its tiers are
			split := one.Dispatches[1].When
			lines = []string{ov.Name + "_batched [one_dispatch] barrier true if " + split, ov.Name + "_chained [one_dispatch && " + split + "] barrier false"}
		}
		none := "!one_dispatch && !chained"
		want := strings.Join(append(lines,
			ops.ChainGatherOp+" [chained && "+n+" >= 2] barrier true",
			ov.Name+"_chained [chained] barrier false",
			gather+" ["+none+" && "+n+" >= 2] barrier true",
			ov.Name+" ["+none+"] barrier false",
		), "\n")
		if got != want {
			t.Errorf("%s: dispatches\n%s\nwant\n%s", ov.Name, got, want)
		}
	}
}

// segAt evaluates the glue's seg expression over nSeqs: (N + a) / b, or
// tiers of it, (N >= f ? (N + a) / b : rest).
func segAt(expr, nSeqs string) (func(int) int, error) {
	q := regexp.QuoteMeta(nSeqs)
	div := regexp.MustCompile(`^\(` + q + ` \+ (\d+)\) / (\d+)$`)
	tier := regexp.MustCompile(`^\(` + q + ` >= (\d+) \? (\(` + q + ` \+ \d+\) / \d+) : (.*)\)$`)
	if m := div.FindStringSubmatch(expr); m != nil {
		add, _ := strconv.Atoi(m[1])
		d, _ := strconv.Atoi(m[2])
		return func(n int) int { return (n + add) / d }, nil
	}
	m := tier.FindStringSubmatch(expr)
	if m == nil {
		return nil, fmt.Errorf("seg is %q, not (n_seqs + a) / b or a tier of it", expr)
	}
	from, _ := strconv.Atoi(m[1])
	wide, err := segAt(m[2], nSeqs)
	if err != nil {
		return nil, err
	}
	rest, err := segAt(m[3], nSeqs)
	if err != nil {
		return nil, err
	}
	return func(n int) int {
		if n >= from {
			return wide(n)
		}
		return rest(n)
	}, nil
}

// bindingIn is the tensor d binds its buffer of that name to.
func bindingIn(d Dispatch, buffer string) string {
	for _, b := range d.Bind {
		if b.Buffer == buffer {
			return b.Tensor
		}
	}
	return ""
}
