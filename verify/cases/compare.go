package cases

import (
	"fmt"
	"math"

	"github.com/kernelgen/kernelgen/ir"
)

// NMSETolerance is test-backend-ops' bound for these ops (docs/arithmetic.md#tolerance).
const NMSETolerance = 1e-7

// Compare checks got (the buffers after a backend ran the case) against the
// Go reference: bit for bit under the portable contract; under a native
// contract, integer buffers and untouched memory exactly and every f32
// buffer within NMSE 1e-7 with no NaN where the reference has none.
func (c *Case) Compare(got map[string][]byte) error {
	for _, want := range c.Expected {
		g, ok := got[want.Name]
		if !ok {
			return fmt.Errorf("%s: the backend returned no buffer %s", c.Name, want.Name)
		}
		wb := want.Bytes()
		if len(g) != len(wb) {
			return fmt.Errorf("%s: buffer %s has %d bytes, want %d", c.Name, want.Name, len(g), len(wb))
		}
		if !c.Arith.Native || want.Elem == ir.I32 {
			for i := 0; i < len(wb); i += 4 {
				if string(g[i:i+4]) != string(wb[i:i+4]) {
					return fmt.Errorf("%s: %s[%d] = %s, want %s (bit for bit)", c.Name, want.Name, i/4, word(g[i:i+4]), word(wb[i:i+4]))
				}
			}
			continue
		}
		var num, den float64
		for i := 0; i < len(wb); i += 4 {
			w := math.Float32frombits(le(wb[i:]))
			x := math.Float32frombits(le(g[i:]))
			if le(wb[i:]) == math.Float32bits(sentinel) {
				if le(g[i:]) != le(wb[i:]) {
					return fmt.Errorf("%s: %s[%d] was written (%v); it must stay untouched", c.Name, want.Name, i/4, x)
				}
				continue
			}
			if math.IsNaN(float64(x)) != math.IsNaN(float64(w)) || math.IsInf(float64(x), 0) != math.IsInf(float64(w), 0) {
				return fmt.Errorf("%s: %s[%d] = %v, want %v", c.Name, want.Name, i/4, x, w)
			}
			d := float64(x) - float64(w)
			num += d * d
			den += float64(w) * float64(w)
		}
		if den > 0 && num/den > NMSETolerance {
			return fmt.Errorf("%s: %s has NMSE %.3g > %g", c.Name, want.Name, num/den, NMSETolerance)
		}
	}
	return nil
}

func le(b []byte) uint32 { return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24 }

func word(b []byte) string {
	u := le(b)
	return fmt.Sprintf("%v (0x%08x)", math.Float32frombits(u), u)
}
