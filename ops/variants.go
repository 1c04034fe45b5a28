package ops

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/kernelgen/kernelgen/dsl"
	"github.com/kernelgen/kernelgen/ir"
)

// Variant is one compiled instance of an op: a value for every
// non-derived param. Its position is the table line that declared it.
type Variant struct {
	Op     string
	Values map[string]int64
	At     ir.Pos
	// On lists the only backends that build the variant (nil: all but
	// NotOn). Tuning can differ per backend (GDNTiling); the Go reference,
	// the cases and the emulators take every variant.
	On, NotOn []string
}

// OnlyOn restricts v to the given backends.
func (v Variant) OnlyOn(backends ...string) Variant { v.On = backends; return v }

// NotOnBackends excludes the given backends.
func (v Variant) NotOnBackends(backends ...string) Variant { v.NotOn = backends; return v }

// BuiltOn reports whether backend builds v.
func (v Variant) BuiltOn(backend string) bool {
	if v.On != nil && !slices.Contains(v.On, backend) {
		return false
	}
	return !slices.Contains(v.NotOn, backend)
}

// Of is the variant as an instance of kernel k (one of its op's kernels).
func (v Variant) Of(k *ir.Kernel) ir.Instance { return ir.Instance{Kernel: k, Values: v.Values} }

// String renders the values in the kernel's param order, e.g. "S_v=128,KDA=0".
func (v Variant) String() string {
	keys := make([]string, 0, len(v.Values))
	for k := range v.Values {
		keys = append(keys, k)
	}
	op, err := Lookup(v.Op)
	if err == nil {
		if k, err := op.Kernel(ir.Portable); err == nil {
			keys = keys[:0]
			for _, p := range k.Params {
				if _, ok := v.Values[p.Name]; ok {
					keys = append(keys, p.Name)
				}
			}
		}
	} else {
		sort.Strings(keys)
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.FormatInt(v.Values[k], 10)
	}
	return strings.Join(parts, ",")
}

// V declares a variant: alternating param names and values. Use it in tables;
// errors point at the line that called it.
func V(op string, kv ...any) Variant {
	v := Variant{Op: op, Values: map[string]int64{}, At: dsl.Caller()}
	for i := 0; i+1 < len(kv); i += 2 {
		name, _ := kv[i].(string)
		switch x := kv[i+1].(type) {
		case int:
			v.Values[name] = int64(x)
		case bool:
			v.Values[name] = b2i(x)
		}
	}
	if len(kv)%2 != 0 {
		v.Values["<odd argument list>"] = 0
	}
	return v
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// GDNTiling is a backend's workgroup shape per S_v: NW column groups of CPW
// columns each. Column folding never changes a column's arithmetic (docs/ops.md#tiling), so backends may differ. S_v 128 uses (16, 4): on the H100 it moved
// 90-98% of the copy rate at n_seqs >= 32 where ggml-cuda's default (16, 8)
// moved 82-87%, and (8, 4) ran 4% slower there at n_seqs >= 128
// (bench/cuda); on Vulkan (8, 4) ran op B's compute 1-7% faster than
// (16, 4) at every n_seqs (bench/vulkan -tilings, bench/RESULTS.md).
func GDNTiling(backend string, sv int) (nw, cpw int) {
	switch {
	case sv == 128 && backend == "vulkan":
		return 8, 4
	case sv == 128:
		return 16, 4
	}
	return 4, 1
}

// GDNSmallTiling is a backend's tiling of the in-place ops (A and B) at S_v
// 128 for n_seqs <= maxSeqs, chosen by the glue at dispatch time; ok false:
// the backend has none and always runs GDNTiling's. With few sequences a
// tiling of fewer columns per workgroup spreads a head's state over more
// workgroups. On the H100 at one sequence (bench/RESULTS.md, issue #21):
// CUDA op B replayed from a CUDA graph took 3.13 / 3.86 us at (8, 2)
// against 4.11 / 4.99 at (16, 4) (H 32 / 48); at two sequences (16, 4) and
// (8, 2) were within 0.4 us of each other. Vulkan's compute dispatch took
// 5.20 / 5.97 us at (4, 1) against 6.22 / 6.87 at (8, 4); at two, (4, 1)
// was 0.4 us faster at H 32 and 0.4 us slower at H 48.
func GDNSmallTiling(backend string, sv int) (nw, cpw, maxSeqs int, ok bool) {
	if sv != 128 {
		return 0, 0, 0, false
	}
	switch backend {
	case "cuda":
		return 8, 2, 1, true
	case "vulkan":
		return 4, 1, 1, true
	}
	return 0, 0, 0, false
}

// smallTilingBackends are the backends with a GDNSmallTiling.
var smallTilingBackends = []string{"cuda", "vulkan"}

// GDNBatch is a backend's one-dispatch schedule of op B
// (gated_delta_net_inplace_ids_batched): its tiling and NS, the most
// sequences one dispatch takes. ns 0: the backend has none and always runs
// the gather and the compute dispatch.
//
// Vulkan: (1, 4, 8), one warp of four columns per sequence. On the H100
// (bench/vulkan -batched, S_v 128, H 32 / 48) it ran op B at n_seqs 2, 4, 8
// in 13.2/15.1, 15.1/18.0, 20.6/26.9 us where gather + compute took
// 15.6/17.4, 18.7/21.7, 25.5/32.3 (bench/RESULTS.md); of the shapes timed
// beside it (NWxCPW 1x2, 1x8, 2x2, 2x4) it had the lowest sum over those
// six, each within 4% of the best at n_seqs 8. At n_seqs 1 a batched
// workgroup idles all rows but one (12.2 vs 9.2 us for the compute
// dispatch alone), and at 32 a 32-row batch trailed gather + compute on
// the H200 (55.6 vs 51.6 us): the schedule is for 2..NS. At two sequences,
// since the gather's rewrite, it trails gather + compute by 0.15-0.5 us with
// identity ids and leads by 1.5-1.7 us when every source aliases (H100,
// bench/RESULTS.md): kept there.
func GDNBatch(backend string, sv int) (nw, cpw, ns int) {
	if backend == "vulkan" {
		return 1, 4, 8
	}
	return 0, 0, 0
}

// ConvBatch is a backend's NS for op D's one-dispatch schedule
// (ssm_conv_update_inplace_ids_batched, 32 channels x NS sequences per
// workgroup); ok false: none, the gather and the compute dispatch always.
// Vulkan: 8, as op B's; on the H100 op D at C 8192 / 10240 took 7.6 / 8.0 us
// at n_seqs 8 where gather + compute took 12.9 / 12.6 (bench/RESULTS.md).
func ConvBatch(backend string) (ns int, ok bool) {
	if backend == "vulkan" {
		return 8, true
	}
	return 0, false
}

// batchBackends are the backends with a batched schedule.
var batchBackends = []string{"vulkan"}

// tilingBackends are the backends with a GDN tiling of their own.
var tilingBackends = []string{"vulkan"}

// table is the one list of supported variants: S_v in {16, 32, 64, 128},
// KDA on/off, snapshots on/off for the base op, d_conv 2..8, SiLU on/off;
// state f32. Gathers have no params.
func table() []Variant {
	var out []Variant
	for _, sv := range []int{16, 32, 64, 128} {
		// The shared tiling, on every backend without one of its own; then
		// each backend whose tiling differs gets its own variants.
		nw, cpw := GDNTiling("", sv)
		gdn := func(nw, cpw int, on func(Variant) Variant) {
			for _, kda := range []bool{false, true} {
				for _, keep := range []bool{false, true} {
					out = append(out, on(V("gated_delta_net", "S_v", sv, "KDA", kda, "KEEP_RS", keep, "NW", nw, "CPW", cpw)))
				}
				out = append(out, on(V("gated_delta_net_inplace", "S_v", sv, "KDA", kda, "NW", nw, "CPW", cpw)))
				out = append(out, on(V("gated_delta_net_inplace_ids", "S_v", sv, "KDA", kda, "NW", nw, "CPW", cpw)))
			}
		}
		var own []string
		for _, be := range tilingBackends {
			if bnw, bcpw := GDNTiling(be, sv); bnw != nw || bcpw != cpw {
				own = append(own, be)
				gdn(bnw, bcpw, func(v Variant) Variant { return v.OnlyOn(be) })
			}
		}
		gdn(nw, cpw, func(v Variant) Variant { return v.NotOnBackends(own...) })
		for _, be := range smallTilingBackends {
			if snw, scpw, _, ok := GDNSmallTiling(be, sv); ok {
				for _, kda := range []bool{false, true} {
					out = append(out, V("gated_delta_net_inplace", "S_v", sv, "KDA", kda, "NW", snw, "CPW", scpw).OnlyOn(be))
					out = append(out, V("gated_delta_net_inplace_ids", "S_v", sv, "KDA", kda, "NW", snw, "CPW", scpw).OnlyOn(be))
				}
			}
		}
		for _, be := range batchBackends {
			nw, cpw, ns := GDNBatch(be, sv)
			for _, kda := range []bool{false, true} {
				out = append(out, V("gated_delta_net_inplace_ids_batched", "S_v", sv, "KDA", kda, "NW", nw, "CPW", cpw, "NS", ns).OnlyOn(be))
			}
		}
	}
	out = append(out, V("gated_delta_net_gather").NotOnBackends("cpu"), V("ssm_conv_gather").NotOnBackends("cpu"),
		V("gated_delta_net_gather"+GatherRowsSuffix).OnlyOn("cpu"), V("ssm_conv_gather"+GatherRowsSuffix).OnlyOn("cpu"))
	for dconv := 2; dconv <= 8; dconv++ {
		out = append(out, V("ssm_conv", "d_conv", dconv))
		for _, silu := range []bool{false, true} {
			out = append(out, V("ssm_conv_update_inplace", "d_conv", dconv, "SILU", silu))
			out = append(out, V("ssm_conv_update_inplace_ids", "d_conv", dconv, "SILU", silu))
			for _, be := range batchBackends {
				if ns, ok := ConvBatch(be); ok {
					out = append(out, V("ssm_conv_update_inplace_ids_batched", "d_conv", dconv, "SILU", silu, "NS", ns).OnlyOn(be))
				}
			}
		}
	}
	return out
}

var (
	variantsOnce sync.Once
	variants     []Variant
	variantsErr  error
)

// Variants returns the checked variant table.
func Variants() ([]Variant, error) {
	variantsOnce.Do(func() {
		variants = table()
		variantsErr = CheckVariants(variants)
	})
	return variants, variantsErr
}

// VariantsFor returns the variants of one op that a backend builds.
func VariantsFor(op, backend string) []Variant {
	var out []Variant
	for _, v := range VariantsOf(op) {
		if v.BuiltOn(backend) {
			out = append(out, v)
		}
	}
	return out
}

// VariantsOf returns the variants of one op, on every backend.
func VariantsOf(op string) []Variant {
	all, _ := Variants()
	var out []Variant
	for _, v := range all {
		if v.Op == op {
			out = append(out, v)
		}
	}
	return out
}

// CheckVariants checks every variant against its op's kernel: each param set
// exactly once, values in their domains, requirements met.
func CheckVariants(vs []Variant) error {
	var errs ir.ErrorList
	add := func(v Variant, format string, args ...any) {
		errs = append(errs, &ir.Error{Pos: v.At, Msg: v.Op + ": " + fmt.Sprintf(format, args...)})
	}
	seen := map[string]ir.Pos{}
	for _, v := range vs {
		op, err := Lookup(v.Op)
		if err != nil {
			add(v, "%v", err)
			continue
		}
		k, err := op.Kernel(ir.Portable)
		if err != nil {
			add(v, "kernel does not build: %v", err)
			continue
		}
		for name := range v.Values {
			p := k.Param(name)
			if p == nil || p.Derived != nil {
				add(v, "%s is not a param of this op; its params are %s", name, paramNames(k))
			}
		}
		ok := true
		for _, p := range k.Params {
			if p.Derived != nil {
				continue
			}
			val, set := v.Values[p.Name]
			switch {
			case !set:
				add(v, "%s is not set; every variant sets %s", p.Name, paramNames(k))
				ok = false
			case p.Type == ir.Bool && val != 0 && val != 1:
				add(v, "%s is a bool; use true or false", p.Name)
				ok = false
			case p.Domain != nil && !inDomain(val, p.Domain):
				add(v, "%s %d is not supported; valid values are %s", p.Name, val, domainString(p.Domain))
				ok = false
			}
		}
		if !ok {
			continue
		}
		for _, r := range k.Requires {
			if c, known := ir.EvalInt(r.Cond, v.Values); !known || c == 0 {
				add(v, "%s (%s)", r.Msg, v)
			}
		}
		key := v.Op + " " + v.String()
		if prev, dup := seen[key]; dup {
			add(v, "duplicate of the variant at %s", prev)
		}
		seen[key] = v.At
	}
	return errs.Err()
}

func inDomain(x int64, dom []int64) bool {
	for _, d := range dom {
		if d == x {
			return true
		}
	}
	return false
}

func domainString(dom []int64) string {
	s := make([]string, len(dom))
	for i, d := range dom {
		s[i] = strconv.FormatInt(d, 10)
	}
	return "{" + strings.Join(s, ", ") + "}"
}

func paramNames(k *ir.Kernel) string {
	var s []string
	for _, p := range k.Params {
		if p.Derived == nil {
			s = append(s, p.Name)
		}
	}
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}
