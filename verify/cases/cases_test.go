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
