package templates

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ops"
)

// chainCases finds a section's loop of ids cases over patterns and n_seqs.
var chainCases = regexp.MustCompile(`for \(const char \* ids : \{([^}]*)\}\) \{\s*for \(int64_t n_seqs : \{([^}]*)\}\) \{`)

// test-backend-ops runs ops B and D in the chained schedule of every
// backend that has one (ops.Target.ChainFrom): ids cases at that many sequences
// or more that no one-dispatch tier takes, with the patterns the plan treats apart (a cycle through the
// window, a random permutation, forks), each cut into several segments;
// perf mode times permuted sources there too.
func TestCasesReachChainedSchedule(t *testing.T) {
	for _, c := range []struct {
		section  string
		patterns []string
	}{
		{"tbo-cases", []string{"rotate", "shuffle", "fork"}},
		{"tbo-perf", []string{"mix", "shuffle"}},
	} {
		text, err := CommonSection(c.section)
		if err != nil {
			t.Fatal(err)
		}
		m := chainCases.FindStringSubmatch(text)
		if m == nil {
			t.Errorf("%s: no loop of ids cases over patterns and n_seqs", c.section)
			continue
		}
		for _, p := range c.patterns {
			if !strings.Contains(m[1], strconv.Quote(p)) {
				t.Errorf("%s: no %q ids among %s", c.section, p, m[1])
			}
		}
		for _, backend := range []string{"cpu", "metal", "vulkan", "sycl", "cuda", "opencl"} {
			from, ok := ops.TargetOf(backend).ChainFrom()
			if !ok {
				continue
			}
			reached := false
			for _, f := range strings.Split(m[2], ",") {
				n, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil {
					t.Fatalf("%s: n_seqs %q", c.section, f)
				}
				_, batched := ops.TargetOf(backend).GDNBatchAt(128, n)
				reached = reached || n >= from && !batched && ops.TargetOf(backend).ChainSeg(n) < n
			}
			if !reached {
				t.Errorf("%s: no n_seqs in {%s} reaches %s's chained schedule (from %d sequences, where no tier takes them) with more than one segment", c.section, m[2], backend, from)
			}
		}
	}
}

// test-backend-ops runs op B's one-dispatch schedule at every tier of
// every backend that has one (ops.Target.GDNBatch): an ids case whose n_seqs the
// tier takes, with sources cycling through the window and permuted.
func TestCasesReachEveryBatchedTier(t *testing.T) {
	text, err := CommonSection("tbo-cases")
	if err != nil {
		t.Fatal(err)
	}
	m := chainCases.FindStringSubmatch(text)
	if m == nil {
		t.Fatal("tbo-cases: no loop of ids cases over patterns and n_seqs")
	}
	for _, p := range []string{"rotate", "shuffle"} {
		if !strings.Contains(m[1], strconv.Quote(p)) {
			t.Errorf("tbo-cases: no %q ids among %s", p, m[1])
		}
	}
	checked := 0
	for _, backend := range []string{"cpu", "metal", "vulkan", "sycl", "cuda", "opencl"} {
		for _, tier := range ops.TargetOf(backend).GDNBatch(128) {
			checked++
			reached := false
			for _, f := range strings.Split(m[2], ",") {
				n, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil {
					t.Fatalf("tbo-cases: n_seqs %q", f)
				}
				at, ok := ops.TargetOf(backend).GDNBatchAt(128, n)
				reached = reached || ok && at == tier
			}
			if !reached {
				t.Errorf("tbo-cases: no n_seqs in {%s} reaches %s's batched tier %+v", m[2], backend, tier)
			}
		}
	}
	if checked == 0 {
		t.Error("no backend has a batched op B: the test checks nothing")
	}
}
