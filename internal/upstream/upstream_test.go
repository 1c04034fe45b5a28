package upstream_test

import (
	"testing"

	"github.com/kernelgen/kernelgen/internal/upstream"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
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
