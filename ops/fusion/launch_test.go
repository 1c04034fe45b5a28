package fusion

import (
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
)

// Every buffer of the shared kernel and the gather that run each pattern is
// bound by the plan, on every backend with upstream kernels; a plan that
// leaves one unbound is refused.
func TestLaunchBindsEveryBuffer(t *testing.T) {
	for _, backend := range []string{"cuda", "vulkan"} {
		for _, pt := range Patterns {
			l, err := pt.Launch(backend)
			if err != nil {
				t.Fatalf("%s %s: %v", backend, pt.Name, err)
			}
			if len(l.KernelBinds) != len(l.Kernel.Buffers) || len(l.GatherBinds) != len(l.Gather.Buffers) || len(l.KernelBinds) == 0 {
				t.Errorf("%s %s: %d of %d kernel buffers, %d of %d gather buffers bound", backend, pt.Name,
					len(l.KernelBinds), len(l.Kernel.Buffers), len(l.GatherBinds), len(l.Gather.Buffers))
			}
			for b, bind := range l.KernelBinds {
				if bind.Role == "" {
					t.Errorf("%s %s: buffer %s binds no role", backend, pt.Name, b)
				}
			}
		}
	}
	broken := *StatePattern
	broken.Buffers = broken.Buffers[1:]
	if _, err := broken.Launch("vulkan"); err == nil {
		t.Errorf("a plan without %s's bind launches", StatePattern.Buffers[0].Buffer)
	}
	// the state runs the family kernel that writes the snapshot slots
	l, err := StatePattern.Launch("vulkan")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := l.KernelBinds["state_dst"]; !ok || !hasArg(l.Kernel, "K") || !hasArg(l.Kernel, "ss") || l.Shared.Slots != ops.SlotsOp {
		t.Errorf("the state's kernel %s takes no snapshot slots", l.Kernel.Name)
	}
}

func hasArg(k *ir.Kernel, name string) bool {
	for _, a := range k.Args {
		if a.Name == name {
			return true
		}
	}
	return false
}

// A call passes each buffer as its tensor's data, typed, const where only
// read, past the bind's offset in bytes; the scratch as the caller's local;
// then the args as ArgsC spells them.
func TestCallSpellsEachBufferAndArg(t *testing.T) {
	field := func(r string) string { return "m." + r }
	ids := &ir.Buffer{Name: "ids", Elem: ir.I32, Access: ir.Read}
	if got, want := DataC(ids, Bind{Role: "ids", Offset: Const(0)}, field), "(const int32_t *) m.ids->data"; got != want {
		t.Errorf("whole: %s, want %s", got, want)
	}
	dst := &ir.Buffer{Name: "dst", Elem: ir.F32, Access: ir.Write}
	if got, want := DataC(dst, Bind{Role: "cache", Offset: Offs("window")}, field), "(float *) ((char *) m.cache->data + "+Offs("window").C(field)+")"; got != want {
		t.Errorf("at an offset: %s, want %s", got, want)
	}
	l, err := StatePattern.Launch("cuda")
	if err != nil {
		t.Fatal(err)
	}
	call := CallC(l.Gather, l.GatherBinds, StatePattern.ArgsC(field), field)
	if len(call) != len(l.Gather.Buffers)+len(l.Gather.Args) {
		t.Fatalf("%d arguments for %d buffers and %d args", len(call), len(l.Gather.Buffers), len(l.Gather.Args))
	}
	for i, b := range l.Gather.Buffers {
		if b.Name == "scratch" && call[i] != "scratch" {
			t.Errorf("the scratch is passed as %s", call[i])
		}
	}
	for i, a := range l.Gather.Args {
		if got := call[len(l.Gather.Buffers)+i]; got != "m."+a.Name {
			t.Errorf("arg %s is passed as %s", a.Name, got)
		}
	}
}

// A backend that binds whole tensors passes the scratch as its local and
// every other buffer as its role's tensor; a buffer bound at an offset
// other than the scratch is refused.
func TestWholeRefusesAnOffsetButTheScratchs(t *testing.T) {
	l, err := ConvPattern.Launch("vulkan")
	if err != nil {
		t.Fatal(err)
	}
	tensor := func(role string) string { return "t(" + role + ")" }
	bufs, err := WholeC(l.Gather, l.GatherBinds, tensor)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range l.Gather.Buffers {
		want := "t(" + l.GatherBinds[b.Name].Role + ")"
		if b.Name == "scratch" {
			want = "scratch"
		}
		if bufs[i] != want {
			t.Errorf("buffer %s is passed as %s, want %s", b.Name, bufs[i], want)
		}
	}
	binds := map[string]Bind{}
	for name, b := range l.GatherBinds {
		if name != "scratch" {
			b.Offset = Const(4)
		}
		binds[name] = b
	}
	if _, err := WholeC(l.Gather, binds, tensor); err == nil {
		t.Errorf("buffers bound at an offset are passed whole")
	}
}

// A fused step sets the flag and takes every other bool from the match; a
// pick that sets the flag itself leaves it out.
func TestBoolsSetTheFlag(t *testing.T) {
	bools := []string{"KDA", "IDS", "SILU"}
	if got, want := strings.Join(BoolsC(bools, "IDS", "true"), ", "), "m.KDA != 0, true, m.SILU != 0"; got != want {
		t.Errorf("%s, want %s", got, want)
	}
	if got, want := strings.Join(BoolsC(bools, "IDS", ""), ", "), "m.KDA != 0, m.SILU != 0"; got != want {
		t.Errorf("without the flag: %s, want %s", got, want)
	}
	if got, want := GatherGuardC(InMatch), "    if (m.n_seqs >= 2) {\n"; !strings.HasSuffix(got, want) {
		t.Errorf("the gather's guard %q does not end in %q", got, want)
	}
}
