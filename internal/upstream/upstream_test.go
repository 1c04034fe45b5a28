package upstream_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/upstream"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/verify/cases"
)

// ByOp hands each op the kernel of its file among Render's: a family's
// plain and ids ops their shared kernel, every gather op the one gather,
// each made once.
func TestByOp(t *testing.T) {
	files, err := upstream.Render("cuda", ".x", func(summary string, ks []*ir.Kernel) ([]byte, error) {
		return []byte(ks[0].Name), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	made := 0
	byOp, err := upstream.ByOp("cuda", func(i int, k upstream.Kernel) string {
		made++
		return files[i].Name + " " + string(files[i].Data) + " " + k.K.Name
	})
	if err != nil {
		t.Fatal(err)
	}
	fams, err := upstream.Families()
	if err != nil {
		t.Fatal(err)
	}
	if made != len(files) || len(files) != len(fams)+1 {
		t.Fatalf("%d kernels made for %d files of %d families", made, len(files), len(fams))
	}
	gather, err := ops.SharedGather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, f := range fams {
		k, err := f.Kernel("cuda")
		if err != nil {
			t.Fatal(err)
		}
		want[f.Shared.Plain] = f.Shared.Name + ".x " + k.Name + " " + k.Name
		want[f.Shared.Ids] = want[f.Shared.Plain]
		want[f.Gather.Name] = ops.SharedGatherName + ".x " + gather.Name + " " + gather.Name
	}
	if len(byOp) != len(want) {
		t.Errorf("%d ops, want %d: %v", len(byOp), len(want), byOp)
	}
	for op, w := range want {
		if byOp[op] != w {
			t.Errorf("%s runs %q, want %q", op, byOp[op], w)
		}
	}
}

// Params set a family's flag as the op needs it, leave the gather's
// params as they are, and never write the launch's own map.
func TestParams(t *testing.T) {
	fams, err := upstream.Families()
	if err != nil {
		t.Fatal(err)
	}
	s := fams[0].Shared
	in := map[string]int64{"S_v": 64}
	for op, flag := range map[string]int64{s.Plain: 0, s.Ids: 1} {
		got, err := upstream.Params(s, op, in)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got["S_v"] != 64 || got[s.Flag] != flag {
			t.Errorf("%s: %v, want S_v 64 and %s %d", op, got, s.Flag, flag)
		}
	}
	if got, err := upstream.Params(nil, fams[0].Gather.Name, in); err != nil || len(got) != 1 || got["S_v"] != 64 {
		t.Errorf("gather: %v, %v", got, err)
	}
	if len(in) != 1 {
		t.Errorf("the launch's params were written: %v", in)
	}
	if _, err := upstream.Params(s, "add", in); err == nil {
		t.Errorf("%s took op add", s.Name)
	}
}

// Bound finds each upstream buffer's case buffer by node slot: the ids op
// binds every one, the plain op all but its missing slot's and the
// gather's scratch; Args
// follow the kernel's order, rs_head 0 where the plain op has none, and a
// missing arg is refused by name.
func TestBoundAndArgs(t *testing.T) {
	ks, err := upstream.Kernels("cuda")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks[1:] {
		for _, op := range []string{k.Shared.Plain, k.Shared.Ids} {
			v := ops.TargetOf("cuda").Variants(op)[0]
			c, err := cases.Random(op, ir.Native("cuda"), rand.New(rand.NewPCG(1, 2)), cases.Small, &v)
			if err != nil {
				t.Fatal(err)
			}
			l := c.Launches[len(c.Launches)-1] // the compute launch, after an ids op's gather
			have := map[string]bool{}
			for _, b := range c.Buffers {
				have[b.Name] = true
			}
			var unbound []string
			for _, kb := range k.K.Buffers {
				name := upstream.Bound(l, kb)
				want := ""
				for j, ob := range l.Kernel.Buffers {
					if ob.Role == kb.Role {
						want = l.Bind[j]
					}
				}
				switch {
				case name != want:
					t.Errorf("%s: %s (%s) binds %q, the op's buffer of that slot is %q", op, kb.Name, kb.Role, name, want)
				case name == "":
					unbound = append(unbound, kb.Role)
				case !have[name]:
					t.Errorf("%s: %s binds %s, not a buffer of the case", op, kb.Name, name)
				}
			}
			if op == k.Shared.Ids {
				// the gather's buffers name no slot: they bind by name
				g := c.Launches[0]
				for _, kb := range ks[0].K.Buffers {
					want := ""
					for j, ob := range g.Kernel.Buffers {
						if ob.Name == kb.Name {
							want = g.Bind[j]
						}
					}
					if name := upstream.Bound(g, kb); name != want || name == "" {
						t.Errorf("%s: the gather's %s binds %q, want %q", op, kb.Name, name, want)
					}
				}
			}
			// the plain op lacks the ids slot and the gather's scratch
			want := map[bool]int{true: 2, false: 0}[op == k.Shared.Plain]
			if len(unbound) != want || want > 0 && !slices.Contains(unbound, "scratch") {
				t.Errorf("%s: %s's buffers of roles %v unbound, want %d (scratch among them)", op, k.K.Name, unbound, want)
			}
			args, err := upstream.Args(l, k.K)
			if err != nil {
				t.Fatal(err)
			}
			for i, a := range k.K.Args {
				want, ok := l.Args[a.Name]
				if !ok && a.Name != "rs_head" {
					t.Fatalf("%s: no value for %s", op, a.Name)
				}
				if args[i] != want {
					t.Errorf("%s: arg %s is %d, want %d", op, a.Name, args[i], want)
				}
			}
			a := k.K.Args[0].Name
			l.Args = map[string]uint32{}
			if _, err := upstream.Args(l, k.K); err == nil || !strings.Contains(err.Error(), "arg "+a+" has no value") {
				t.Errorf("%s: without its args: %v", op, err)
			}
		}
	}
}
