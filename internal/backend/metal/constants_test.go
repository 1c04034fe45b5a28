package metal

import (
	"testing"

	"github.com/kernelgen/kernelgen/internal/integration"
)

// The bases follow the tree's highest FC_ define, whatever its place or
// spacing, not the fused kernels' own (a tree this series patched), and
// start at the next hundred; a tree without the file or a define leaves
// the manifest's.
func TestTreeBase(t *testing.T) {
	for _, c := range []struct {
		impl  string
		found bool
		want  lastBase
		gdn   int // the GDN kernel's base after it
	}{
		{"#define FC_SSM_CONV                    900\n#define FC_GATED_DELTA_NET             1600\n", true, lastBase{"#define FC_GATED_DELTA_NET ", 1600}, 1700},
		{"#define FC_NEW\t1750\n#define FC_GATED_DELTA_NET 1600\n", true, lastBase{"#define FC_NEW\t", 1750}, 1800},
		{"#define FC_GATED_DELTA_NET 1600\n#define FC_GATED_DELTA_NET_INPLACE 1700\n#define FC_SSM_CONV_UPDATE_INPLACE 1800\n", true, lastBase{"#define FC_GATED_DELTA_NET ", 1600}, 1700},
		{"#define OP_FLASH_ATTN_EXT_NQPSG 8\n", false, lastBase{}, 0},
		{"", false, lastBase{}, 0},
	} {
		read := integration.ReadFile(func(file string) (string, bool, error) {
			if file != impl {
				t.Fatalf("read %s, want %s", file, impl)
			}
			return c.impl, c.impl != "", nil
		})
		got, found, err := treeBase(read)
		if err != nil || found != c.found || got != c.want {
			t.Errorf("%q: %+v, %v, %v; want %+v, %v", c.impl, got, found, err, c.want, c.found)
			continue
		}
		if base, _ := got.base("gated_delta_net_inplace"); found && base != c.gdn {
			t.Errorf("%q: GDN base %d, want %d", c.impl, base, c.gdn)
		}
	}
}
