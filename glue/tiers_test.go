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
// every n_seqs the schedule takes the tier ops.GDNBatchAt names, a shape
// the variant table builds for the backend and that holds n_seqs.
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
		if len(ops.GDNBatch(backend, 128)) == 0 {
			continue
		}
		model, err := Model(ir.Native(backend))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range model {
			s := scheduleOf(o, "one_dispatch")
			if o.Fusion != "B" || s == nil {
				continue
			}
			d := s.Dispatches[0]
			prog := `#include <cstdio>
#include <initializer_list>
struct tensor { long ne[4]; };
struct node { tensor * src[8]; };
int main() {
    tensor t2 = {};
    node n = {};
    node * op = &n;
    op->src[2] = &t2;
    for (long sv : {16, 32, 64, 128}) {
        for (long seqs = 1; seqs <= 300; seqs++) {
            t2.ne[0] = sv;
            t2.ne[3] = seqs;
            printf("%ld %ld %ld %ld %ld %ld\n", sv, seqs, (long) (` + o.Choice(d, "NW") + `), (long) (` + o.Choice(d, "CPW") + `), (long) (` + o.Choice(d, "NS") + `), (long) (` + o.Choice(d, "SPT") + `));
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
			for _, v := range ops.VariantsFor("gated_delta_net_inplace_ids_batched", backend) {
				bt := ops.Batch{NW: int(v.Values["NW"]), CPW: int(v.Values["CPW"]), NS: int(v.Values["NS"]), SPT: int(v.Values["SPT"])}
				if built[bt] == nil {
					built[bt] = map[int64]bool{}
				}
				built[bt][v.Values["S_v"]] = true
			}
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				var sv, n int
				var got ops.Batch
				if _, err := fmt.Sscan(line, &sv, &n, &got.NW, &got.CPW, &got.NS, &got.SPT); err != nil {
					t.Fatalf("%s: %q: %v", backend, line, err)
				}
				want, takes := ops.GDNBatchAt(backend, sv, n)
				if !takes {
					continue
				}
				checked++
				if got != want || !built[got][int64(sv)] || got.Seqs() < n {
					t.Errorf("%s S_v %d, %d sequences: the glue picks %+v (built %v), want the tier %+v", backend, sv, n, got, built[got][int64(sv)], want)
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no backend's batched op B was checked")
	}
}
