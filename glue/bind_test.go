package glue

import (
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ir"
)

// A buffer is bound by its IR role alone; a role that names no tensor is an
// error that says which roles there are.
func TestBindingOfRole(t *testing.T) {
	for role, want := range map[string]string{"src0": "src[0]", "src5": "src[5]", "src9": "src[9]", "dst": "op", "scratch": "scratch", "plan": "plan"} {
		b, err := bindingOf(&ir.Buffer{Name: "x", Role: role})
		if err != nil || b.Tensor != want {
			t.Errorf("role %s: %+v, %v; want %s", role, b, err, want)
		}
	}
	for _, role := range []string{"ids", "src10", "src-1", "", "srcx"} {
		if _, err := bindingOf(&ir.Buffer{Name: "x", Role: role}); err == nil || !strings.Contains(err.Error(), "src0..src9, dst, scratch or plan") {
			t.Errorf("role %q: %v", role, err)
		}
	}
}

// Within one fused op, a buffer name means one tensor: the gather reads the
// cache and ids the compute kernel reads (the GDN gather's roles once said
// src0 while its op binds the cache at src[5]).
func TestDispatchesOfAnOpBindNamesAlike(t *testing.T) {
	for _, a := range []ir.Arith{ir.Portable, ir.Native("vulkan")} {
		model, err := Model(a)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range model {
			bound := map[string]string{}
			for _, d := range o.AllDispatches() {
				for _, b := range d.Bind {
					if prev, ok := bound[b.Buffer]; ok && prev != b.Tensor {
						t.Errorf("%s %s: %s is bound to %s in %s and to %s before", a, o.Name, b.Buffer, b.Tensor, d.Op.Name, prev)
					}
					bound[b.Buffer] = b.Tensor
				}
			}
		}
	}
}
