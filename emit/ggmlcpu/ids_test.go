package ggmlcpu

import (
	"encoding/binary"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/verify/cases"
)

// An id outside the cache's rows would be read at (uint64_t) src * row: the
// ids ops upstream gets (one entry per family) must stop there, as ggml-cpu's
// GET_ROWS does, with the condition that failed. A row of the cache outside
// the destination window is a valid source (TestLoweredOpsMatchTheGoReference
// reads such rows); -1 and the row count are not.
func TestOutOfRangeIdsStop(t *testing.T) {
	u := familyUnit(t, ir.Native("cpu"))
	bin := build(t, u, "ids_range")
	rnd := rand.New(rand.NewPCG(40, 1))
	size := cases.Size{MaxHeads: 2, MaxTokens: 1, MaxSeqs: 3, MaxChannels: 40}
	tried := 0
	for op, e := range u.ops {
		if !strings.HasSuffix(e.Op, "_ids") {
			continue
		}
		c, err := cases.Random(e.Op, ir.Native("cpu"), rnd, size, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []struct {
			id   func(rows int32) int32
			want string
		}{
			{func(int32) int32 { return -1 }, "GGML_ASSERT(src >= 0) failed"},
			{func(rows int32) int32 { return rows }, "GGML_ASSERT(src < (int32_t) n_rows) failed"},
		} {
			p, block := layout(c, op, false)
			p.threads = 2
			var rows int64
			switch e.Fusion {
			case "B":
				rows = p.slots[5].ne[3] // the state cache
			case "D":
				rows = p.slots[0].ne[2] // the conv cache
			}
			ids := p.blocks[block["ids"]]
			binary.LittleEndian.PutUint32(ids[len(ids)-4:], uint32(bad.id(int32(rows))))
			var in strings.Builder
			if err := p.write(&in); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin)
			cmd.Stdin = strings.NewReader(in.String())
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			if err == nil || !strings.Contains(stderr.String(), bad.want) {
				t.Errorf("op %s, the last id %d of a cache of %d rows: exit %v, stderr %q; want the kernel to stop with %q",
					e.Fusion, bad.id(int32(rows)), rows, err, stderr.String(), bad.want)
			}
			tried++
		}
	}
	if tried != 4 {
		t.Errorf("tried %d bad ids, want 2 for each of ops B and D", tried)
	}
}
