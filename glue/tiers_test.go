package glue

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// The one-dispatch schedule of op B picks its shape by tier: its NW, CPW,
// NS and SPT choices, compiled as C and evaluated over S_v and n_seqs, give at
// every n_seqs the schedule takes the tier ops.Target.GDNBatchAt names, a shape
// the variant table builds for the backend and that holds n_seqs. Its
// condition holds exactly there (where the destination is the window),
// the batched dispatch's aliased_batched arg and the chained compute's
// launch after it where the tier is Aliased (split by aliasing), and the
// chained schedule's condition exactly from ops.Target.ChainFrom where it does not.
func TestBatchedTiersPickTheirShape(t *testing.T) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
			t.Fatal("g++ not found: apt-get install g++")
		}
		t.Skip("g++ not found")
	}
	checked := 0
	for _, backend := range ops.NativeBackends() {
		if len(ops.TargetOf(backend).GDNBatch(128)) == 0 {
			continue
		}
		model, err := Model(ir.Native(backend))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range model {
			if o.Fusion != "B" {
				continue
			}
			s := scheduleOf(o, "one_dispatch")
			if s == nil {
				continue
			}
			d := s.Dispatches[0]
			chained := "false"
			if c := scheduleOf(o, "chained"); c != nil {
				chained = c.Cond
			}
			// split by aliasing: the batched dispatch's SPLIT, and the
			// chained compute's launch after it
			split, after := o.Choice(d, "SPLIT"), "false"
			if len(s.Dispatches) > 1 {
				after = s.Dispatches[1].When
			}
			// a node whose state_dst (src[6]) is the cache's (src[5]) window at rs_head 0
			prog := `#include <cstdio>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
struct tensor { long ne[4]; size_t nb[4]; void * buffer; void * data; };
struct node { tensor * src[8]; int32_t op_params[4]; };
static int32_t ggml_get_op_params_i32(const node * op, int i) { return op->op_params[i]; }
int main() {
    static float cache[4];
    tensor t2 = {}, t5 = {}, t6 = {};
    node n = {};
    node * op = &n;
    op->src[2] = &t2;
    op->src[5] = &t5;
    op->src[6] = &t6;
    t5.buffer = t6.buffer = cache;
    t5.data = t6.data = cache;
    t5.nb[3] = t6.nb[1] = 64;
    for (long sv : {16, 32, 64, 128}) {
        for (long seqs = 1; seqs <= 300; seqs++) {
            t2.ne[0] = sv;
            t2.ne[3] = seqs;
            const bool one_dispatch = ` + s.Cond + `;
            const bool split = ` + split + `;
            const bool after = ` + after + `;
            const bool chained = ` + chained + `;
            printf("%ld %ld %ld %ld %ld %ld %d %d %d %d\n", sv, seqs, (long) (` + o.Choice(d, "NW") + `), (long) (` + o.Choice(d, "CPW") + `), (long) (` + o.Choice(d, "NS") + `), (long) (` + o.Choice(d, "SPT") + `), one_dispatch, split, after, chained);
        }
    }
}
`
			dir := t.TempDir()
			src, bin := filepath.Join(dir, "tiers.cpp"), filepath.Join(dir, "tiers")
			if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(cxx, "-std=c++17", "-Wall", "-Werror", src, "-o", bin).CombinedOutput(); err != nil {
				t.Fatalf("%s: compiling the tier choices: %v\n%s", backend, err, out)
			}
			out, err := exec.Command(bin).Output()
			if err != nil {
				t.Fatal(err)
			}
			built := map[ops.Batch]map[int64]bool{}
			for _, v := range ops.TargetOf(backend).Variants("gated_delta_net_inplace_ids_batched") {
				bt := ops.Batch{NW: int(v.Values["NW"]), CPW: int(v.Values["CPW"]), NS: int(v.Values["NS"]), SPT: int(v.Values["SPT"]), Aliased: v.Values["SPLIT"] == 1}
				if built[bt] == nil {
					built[bt] = map[int64]bool{}
				}
				built[bt][v.Values["S_v"]] = true
			}
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				var sv, n, one, split, after, chained int
				var got ops.Batch
				if _, err := fmt.Sscan(line, &sv, &n, &got.NW, &got.CPW, &got.NS, &got.SPT, &one, &split, &after, &chained); err != nil {
					t.Fatalf("%s: %q: %v", backend, line, err)
				}
				want, takes := ops.TargetOf(backend).GDNBatchAt(sv, n)
				from, chains := ops.TargetOf(backend).ChainFrom()
				wantSplit := takes && want.Aliased
				if wantChained := chains && n >= from && !takes; (one == 1) != takes || (chained == 1) != wantChained {
					t.Errorf("%s S_v %d, %d sequences: one dispatch %d, chained %d; want %v, %v", backend, sv, n, one, chained, takes, wantChained)
				}
				got.Aliased = split == 1
				if takes && ((split == 1) != wantSplit || (after == 1) != wantSplit) {
					t.Errorf("%s S_v %d, %d sequences: split by aliasing %d, the chained compute after it %d; want both %v", backend, sv, n, split, after, wantSplit)
				}
				if !takes {
					continue
				}
				checked++
				if got != want.Shape() || !built[got][int64(sv)] || got.Seqs() < n {
					t.Errorf("%s S_v %d, %d sequences: the glue picks %+v (built %v), want the tier %+v", backend, sv, n, got, built[got][int64(sv)], want)
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no backend's batched op B was checked")
	}
}
