package cases

import (
	"math/rand/v2"
	"testing"

	"github.com/kernelgen/kernelgen/ops"
)

// Every op builds cases under every contract, and the reference's own output
// passes Compare while a one-bit change does not.
func TestCasesBuildAndCompare(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, op := range ops.All() {
		for _, a := range ops.Ariths() {
			c, err := Random(op.Name, a, r, Small, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]byte{}
			for _, b := range c.Expected {
				got[b.Name] = b.Bytes()
			}
			if err := c.Compare(got); err != nil {
				t.Fatalf("reference vs itself: %v", err)
			}
			out := c.Expected[len(c.Expected)-1]
			bad := got[out.Name]
			bad[0] ^= 1
			if !a.Native {
				if err := c.Compare(got); err == nil {
					t.Errorf("%s: a flipped bit in %s passed", c.Name, out.Name)
				}
			}
		}
	}
}

// A guarded launch (ops.Guard: the gathers at one sequence) changes nothing:
// over random cases of every op that launches one, the Go reference leaves
// the same bits in every buffer with the launch left out. The same
// comparison does see a needed gather removed (the check has teeth).
func TestGuardedLaunchesChangeNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, op := range ops.All() {
		skipped, teeth := 0, 0
		for i := 0; i < 300; i++ {
			c, err := Random(op.Name, ops.Ariths()[0], r, Small, nil)
			if err != nil {
				t.Fatal(err)
			}
			for li, l := range c.Launches {
				if l.Op.Guard == nil {
					continue
				}
				args := map[string]int64{}
				for n, v := range l.Args {
					args[n] = int64(v)
				}
				without := &Case{Name: c.Name, Arith: c.Arith, Buffers: c.Buffers,
					Launches: append(append([]Launch{}, c.Launches[:li]...), c.Launches[li+1:]...)}
				if err := without.runReference(); err != nil {
					t.Fatal(err)
				}
				same := true
				for bi, b := range c.Expected {
					if string(b.Bytes()) != string(without.Expected[bi].Bytes()) {
						same = false
						if !l.Op.Needed(args) {
							t.Errorf("%s: without %s (%s = %d), buffer %s differs", c.Name, l.Op.Name, l.Op.Guard.Arg, args[l.Op.Guard.Arg], b.Name)
						}
					}
				}
				if !l.Op.Needed(args) {
					skipped++
				} else if !same {
					teeth++
				}
			}
		}
		if skipped+teeth > 0 {
			t.Logf("%s: %d cases where a guard left the gather out, unchanged; %d where leaving a needed gather out shows", op.Name, skipped, teeth)
			if skipped < 20 || teeth < 20 {
				t.Errorf("%s: %d guarded and %d needed gathers: too few to say anything", op.Name, skipped, teeth)
			}
		}
	}
}
