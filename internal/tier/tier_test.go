package tier

import (
	"slices"
	"testing"
)

func TestFullReadsTheVariable(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "false": false, "1": true, "yes": true} {
		t.Setenv(Env, v)
		if Full() != want {
			t.Errorf("%s=%q: Full() = %v", Env, v, !want)
		}
		if got := Pick(1, 2); got != map[bool]int{false: 1, true: 2}[want] {
			t.Errorf("%s=%q: Pick(1, 2) = %d", Env, v, got)
		}
	}
}

// A sample is k distinct ascending indices below n, the same for the same
// seed and test, another for another seed; the full tier takes them all.
func TestSample(t *testing.T) {
	t.Setenv(Env, "")
	t.Setenv(SeedEnv, "")
	a := Sample(t, 50, 5)
	if len(a) != 5 || !slices.IsSorted(a) || slices.Compact(slices.Clone(a))[4] != a[4] || a[0] < 0 || a[4] >= 50 {
		t.Fatalf("Sample(50, 5) = %v", a)
	}
	if b := Sample(t, 50, 5); !slices.Equal(a, b) {
		t.Errorf("not deterministic: %v then %v", a, b)
	}
	t.Setenv(SeedEnv, "2")
	if b := Sample(t, 50, 5); slices.Equal(a, b) {
		t.Errorf("seed 2 draws the same sample as seed 1: %v", a)
	}
	if all := Sample(t, 3, 5); !slices.Equal(all, []int{0, 1, 2}) {
		t.Errorf("k >= n: %v", all)
	}
	t.Setenv(Env, "1")
	if all := Sample(t, 4, 1); !slices.Equal(all, []int{0, 1, 2, 3}) {
		t.Errorf("full tier: %v", all)
	}
}

func TestContextEndsWithTheDeadline(t *testing.T) {
	ctx := Context(t)
	d, ok := t.Deadline()
	got, gotOK := ctx.Deadline()
	if ok != gotOK || !d.Equal(got) {
		t.Errorf("context deadline %v %v, test deadline %v %v", got, gotOK, d, ok)
	}
}
