package goref_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	gen "github.com/kernelgen/kernelgen/generated/goref"
)

func TestSSMConvMatchesOracle(t *testing.T) {
	t.Parallel()
	r := newRand("ssm_conv")
	for i := 0; i < numCases(); i++ {
		c := pickContract(r, i)
		K := int(pick(r, "ssm_conv").Values["d_conv"])
		C, nT, nS := 1+r.IntN(300), 1+r.IntN(6), 1+r.IntN(3)
		sx1 := K - 1 + nT + r.IntN(3)
		sx2 := C*sx1 + r.IntN(5)
		w1 := K + r.IntN(3)
		d1 := C + r.IntN(4)
		d2 := nT*d1 + r.IntN(4)
		sx := newGuarded(nS * sx2)
		sx.fill(r, -1, 1, true)
		w := newGuarded(C * w1)
		w.fill(r, -1, 1, true)
		dst := newGuarded(nS * d2)
		dstWant := dst.snapshot()
		err := gen.SsmConv(c.name, gen.SsmConvParams{DConv: uint32(K)},
			gen.SsmConvArgs{NCh: uint32(C), NT: uint32(nT), NS: uint32(nS), Sx1: uint32(sx1), Sx2: uint32(sx2), W1: uint32(w1), D1: uint32(d1), D2: uint32(d2)},
			gen.SsmConvBuffers{Sx: sx.data, ConvKernel: w.data, Dst: dst.data})
		if err != nil {
			t.Fatal(err)
		}
		// out[c, t, s] = sum_j sx[t+j, c, s] * w[j, c] (docs/ops.md#conv).
		for s := 0; s < nS; s++ {
			for tt := 0; tt < nT; tt++ {
				for ch := 0; ch < C; ch++ {
					win, wk := make([]float32, K), make([]float32, K)
					for j := 0; j < K; j++ {
						win[j] = sx.data[s*sx2+ch*sx1+tt+j]
						wk[j] = w.data[ch*w1+j]
					}
					dstWant[guard+s*d2+tt*d1+ch] = oracleConvTaps(c, win, wk)
				}
			}
		}
		if !checkBits(t, "dst", dstWant, dst.all, func(i int) string { return describe("offset %d", i-guard) }) {
			t.Fatalf("case %d: %s d_conv=%d C=%d n_t=%d n_s=%d", i, c.name, K, C, nT, nS)
		}
	}
}

// convCase is one conv-update problem: taps from a source, the new token,
// the kernel, and where the new taps go.
type convCase struct {
	c                    contract
	K, C, n              int
	silu                 bool
	cs1, cs2, w1, x2, d2 int
	w, x                 *guarded
	edges                siluEdges
}

// siluEdges counts the conv outputs SiLU took in each edge range, so a test
// can show its inputs reached them.
type siluEdges map[string]int

func (e siluEdges) note(y float32) {
	switch {
	case math.IsInf(float64(y), 1):
		e["+Inf"]++
	case math.IsInf(float64(y), -1):
		e["-Inf"]++
	case y < -88.72283172607422:
		e["exp(-y) overflows"]++
	case y < -87.3365478515625:
		e["1 + exp(-y) > 2^126"]++
	}
}

// check fails t unless every edge range was reached.
func (e siluEdges) check(t *testing.T) {
	t.Helper()
	for _, k := range []string{"+Inf", "-Inf", "exp(-y) overflows", "1 + exp(-y) > 2^126"} {
		if e[k] == 0 {
			t.Errorf("coverage: no SiLU input in the range %s (got %v)", k, e)
		}
	}
}

func randConv(r *rand.Rand, i int, op string) *convCase {
	v := pick(r, op)
	tc := &convCase{c: pickContract(r, i), K: int(v.Values["d_conv"]), silu: v.Values["SILU"] == 1}
	tc.C = 1 + r.IntN(400)
	if r.IntN(4) == 0 {
		tc.C = 128 * (1 + r.IntN(3)) // whole workgroups, the shape ggml uses
	}
	tc.n = 1 + r.IntN(6)
	tc.w1 = tc.K + r.IntN(2)
	tc.x2 = tc.C + r.IntN(3)
	tc.d2 = tc.C + r.IntN(3)
	tc.w = newGuarded(tc.C * tc.w1)
	tc.w.fill(r, -1, 1, true)
	tc.x = newGuarded(tc.n * tc.x2)
	tc.x.fillEdges(r, -1, 1)
	return tc
}

func (tc *convCase) String() string {
	return describe("%s d_conv=%d SILU=%v C=%d n_seqs=%d cs1=%d cs2=%d", tc.c.name, tc.K, tc.silu, tc.C, tc.n, tc.cs1, tc.cs2)
}

// expect applies docs/ops.md#fused-ops' per-(c, s) body: taps(s, c, j) gives the prior
// taps; the output and the shifted ring go into dstWant and ringWant.
func (tc *convCase) expect(taps func(s, c, j int) float32, dstWant, ringWant []float32, sd1 int) {
	for s := 0; s < tc.n; s++ {
		for c := 0; c < tc.C; c++ {
			win, w := make([]float32, tc.K), make([]float32, tc.K)
			for j := 0; j < tc.K-1; j++ {
				win[j] = taps(s, c, j)
			}
			win[tc.K-1] = tc.x.data[s*tc.x2+c]
			for j := range w {
				w[j] = tc.w.data[c*tc.w1+j]
			}
			y := oracleConvTaps(tc.c, win, w)
			if tc.silu {
				tc.edges.note(y)
				y = tc.c.silu(y)
			}
			dstWant[guard+s*tc.d2+c] = y
			for j := 0; j < tc.K-1; j++ {
				ringWant[s*sd1+c*(tc.K-1)+j] = win[j+1]
			}
		}
	}
}

func TestConvUpdateInplaceMatchesOracle(t *testing.T) {
	t.Parallel()
	r := newRand("ssm_conv_update_inplace")
	edges := siluEdges{}
	for i := 0; i < numCases(); i++ {
		tc := randConv(r, i, "ssm_conv_update_inplace")
		tc.edges = edges
		tc.cs1 = tc.K - 1 + r.IntN(2) // the CPU reference allows a general channel stride
		tc.cs2 = tc.C*tc.cs1 + r.IntN(3)
		states := newGuarded(tc.n * tc.cs2)
		states.fillEdges(r, -1, 1)
		sd1 := (tc.K-1)*tc.C + r.IntN(2)*r.IntN(7)
		ring := newGuarded((tc.n + r.IntN(2)) * sd1)
		ring.fill(r, -1, 1, false)
		dst := newGuarded(tc.n * tc.d2)
		statesBefore, ringWant, dstWant := states.snapshot(), ring.snapshot(), dst.snapshot()
		err := gen.SsmConvUpdateInplace(tc.c.name, gen.SsmConvUpdateInplaceParams{DConv: uint32(tc.K), SILU: tc.silu},
			gen.SsmConvUpdateInplaceArgs{NCh: uint32(tc.C), NSeqs: uint32(tc.n), Cs1: uint32(tc.cs1), Cs2: uint32(tc.cs2),
				W1: uint32(tc.w1), X2: uint32(tc.x2), Sd1: uint32(sd1), D2: uint32(tc.d2)},
			gen.SsmConvUpdateInplaceBuffers{ConvStates: states.data, ConvKernel: tc.w.data, XCur: tc.x.data, ConvStateDst: ring.data, Dst: dst.data})
		if err != nil {
			t.Fatal(err)
		}
		tc.expect(func(s, c, j int) float32 { return states.data[s*tc.cs2+c*tc.cs1+j] }, dstWant, ringWant[guard:], sd1)
		checkBits(t, "dst", dstWant, dst.all, func(i int) string { return describe("offset %d", i-guard) })
		checkBits(t, "conv_state_dst", ringWant, ring.all, func(i int) string { return describe("row %d offset %d", (i-guard)/sd1, (i-guard)%sd1) })
		checkBits(t, "conv_states (read-only)", statesBefore, states.all, func(int) string { return "" })
		if t.Failed() {
			t.Fatalf("case %d: %s sd1=%d", i, tc, sd1)
		}
	}
	edges.check(t)
}

func TestConvUpdateInplaceIdsMatchesOracle(t *testing.T) {
	t.Parallel()
	r := newRand("ssm_conv_update_inplace_ids")
	aliased, nonIdent, aliasing := 0, 0, 0
	edges := siluEdges{}
	for i := 0; i < numCases(); i++ {
		tc := randConv(r, i, "ssm_conv_update_inplace_ids")
		tc.edges = edges
		alias := r.IntN(2) == 0
		row := (tc.K - 1) * tc.C
		tc.cs1, tc.cs2 = tc.K-1, row
		if !alias {
			tc.cs1 = tc.K - 1 + r.IntN(2)
			tc.cs2 = tc.C*tc.cs1 + r.IntN(3)
		}
		nCells := tc.n + r.IntN(5)
		rsHead := r.IntN(nCells - tc.n + 1)
		cache := newGuarded(nCells * tc.cs2)
		cache.fillEdges(r, -1, 1)
		ids := randIds(r, tc.n, nCells, rsHead)
		var ring *guarded
		var ringData []float32
		sd1 := row
		if alias {
			// The model: conv_state_dst is the cache's own rows from rs_head (dense taps).
			aliased++
			ringData = cache.data[rsHead*tc.cs2:]
		} else {
			sd1 = row + r.IntN(2)*r.IntN(5)
			ring = newGuarded((tc.n + r.IntN(2)) * sd1)
			ring.fill(r, -1, 1, true)
			ringData = ring.data
		}
		scratch := newGuarded(tc.n * tc.cs2)
		dst := newGuarded(tc.n * tc.d2)
		cacheBefore, dstWant, scratchBefore := cache.snapshot(), dst.snapshot(), scratch.snapshot()
		var ringBefore []float32
		if !alias {
			ringBefore = ring.snapshot()
		}
		// Phase 1 (docs/ops.md#aliasing): identity reads its own slot, others cache[ids[s]], all pre-op.
		prior := make([][]float32, tc.n)
		for s := range prior {
			prior[s] = make([]float32, tc.C*(tc.K-1))
			for c := 0; c < tc.C; c++ {
				for j := 0; j < tc.K-1; j++ {
					if int(ids[s]) == rsHead+s {
						prior[s][c*(tc.K-1)+j] = ringData[s*sd1+c*(tc.K-1)+j]
					} else {
						prior[s][c*(tc.K-1)+j] = cache.data[int(ids[s])*tc.cs2+c*tc.cs1+j]
					}
				}
			}
			if int(ids[s]) != rsHead+s {
				nonIdent++
				if int(ids[s]) >= rsHead && int(ids[s]) < rsHead+tc.n {
					aliasing++
				}
			}
		}
		if err := gen.Gather(tc.c.name, gen.GatherParams{},
			gen.GatherArgs{RowLen: uint32(tc.cs2), NSeqs: uint32(tc.n), RsHead: uint32(rsHead)},
			gen.GatherBuffers{Cache: cache.data, Ids: ids, Scratch: scratch.data}); err != nil {
			t.Fatal(err)
		}
		err := gen.SsmConvUpdateInplaceIds(tc.c.name, gen.SsmConvUpdateInplaceIdsParams{DConv: uint32(tc.K), SILU: tc.silu},
			gen.SsmConvUpdateInplaceIdsArgs{NCh: uint32(tc.C), NSeqs: uint32(tc.n), Cs1: uint32(tc.cs1), Cs2: uint32(tc.cs2),
				W1: uint32(tc.w1), X2: uint32(tc.x2), Sd1: uint32(sd1), D2: uint32(tc.d2), RsHead: uint32(rsHead)},
			gen.SsmConvUpdateInplaceIdsBuffers{Cache: cache.data, ConvKernel: tc.w.data, XCur: tc.x.data, ConvStateDst: ringData, Ids: ids, Scratch: scratch.data, Dst: dst.data})
		if err != nil {
			t.Fatal(err)
		}
		cacheWant := append([]float32(nil), cacheBefore...)
		var ringWant []float32
		if alias {
			ringWant = cacheWant[guard+rsHead*tc.cs2:]
		} else {
			ringWant = ringBefore[guard:]
		}
		tc.expect(func(s, c, j int) float32 { return prior[s][c*(tc.K-1)+j] }, dstWant, ringWant, sd1)
		checkBits(t, "dst", dstWant, dst.all, func(i int) string { return describe("offset %d", i-guard) })
		checkBits(t, "cache", cacheWant, cache.all, func(i int) string { return describe("cell %d offset %d", (i-guard)/tc.cs2, (i-guard)%tc.cs2) })
		if !alias {
			checkBits(t, "conv_state_dst", ringBefore, ring.all, func(i int) string { return describe("row %d offset %d", (i-guard)/sd1, (i-guard)%sd1) })
		}
		scratchWant := scratchBefore
		for s := 0; s < tc.n; s++ {
			if aliases(ids, s, rsHead, tc.n) {
				src := guard + int(ids[s])*tc.cs2
				copy(scratchWant[guard+s*tc.cs2:guard+(s+1)*tc.cs2], cacheBefore[src:src+tc.cs2])
			}
		}
		checkBits(t, "scratch", scratchWant, scratch.all, func(i int) string { return describe("row %d", (i-guard)/tc.cs2) })
		if t.Failed() {
			t.Fatalf("case %d: %s alias=%v ids=%v rs_head=%d cells=%d", i, tc, alias, ids, rsHead, nCells)
		}
	}
	if aliased == 0 || nonIdent == 0 || aliasing == 0 {
		t.Errorf("coverage: aliased=%d non-identity=%d aliasing reads=%d; every kind must occur", aliased, nonIdent, aliasing)
	}
	edges.check(t)
}

// The gathers on their own: exactly the rows whose source is another
// sequence's destination are copied, bit for bit; nothing else in scratch is
// touched.
func TestGathersMatchOracle(t *testing.T) {
	t.Parallel()
	t.Run("gather", func(t *testing.T) {
		r := newRand("gather")
		for i := 0; i < numCases(); i++ {
			n := 1 + r.IntN(8)
			rowLen := 1 + r.IntN(700)
			nSlots := n + r.IntN(6)
			rsHead := r.IntN(nSlots - n + 1)
			cache := newGuarded(nSlots * rowLen)
			cache.fill(r, -1, 1, true)
			ids := randIds(r, n, nSlots, rsHead)
			scratch := newGuarded(n * rowLen)
			want, cacheBefore := scratch.snapshot(), cache.snapshot()
			for s, id := range ids {
				if aliases(ids, s, rsHead, n) {
					copy(want[guard+s*rowLen:guard+(s+1)*rowLen], cache.data[int(id)*rowLen:(int(id)+1)*rowLen])
				}
			}
			contract := contracts[i%len(contracts)].name
			err := gen.Gather(contract, gen.GatherParams{}, gen.GatherArgs{RowLen: uint32(rowLen), NSeqs: uint32(n), RsHead: uint32(rsHead)},
				gen.GatherBuffers{Cache: cache.data, Ids: ids, Scratch: scratch.data})
			if err != nil {
				t.Fatal(err)
			}
			checkBits(t, "scratch", want, scratch.all, func(i int) string { return describe("row %d", (i-guard)/rowLen) })
			checkBits(t, "cache (read-only)", cacheBefore, cache.all, func(int) string { return "" })
			if t.Failed() {
				t.Fatalf("case %d: ids=%v rs_head=%d row=%d", i, ids, rsHead, rowLen)
			}
		}
	})
}

// Long rows: a row spread over several workgroups that each stride over
// several of the gather's chunks (ops/gather.go), with a partial last chunk,
// at few and at many sequences (the per-row workgroup count shrinks as
// n_seqs grows). Every aliasing row is copied whole, nothing else touched.
func TestGatherLongRows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ n, rowLen int }{
		{3, 1366*2048 + 2048 + 7}, // 1366 workgroups per row, the first two take 2 chunks
		{600, 7*2048 + 19},        // 7 workgroups per row, 8 chunks
		{4097, 2048 + 1},          // one workgroup per row, 2 chunks
	} {
		r := newRand(fmt.Sprintf("gather-long-%d", tc.n))
		rsHead := 2
		nSlots := rsHead + tc.n + 1
		cache := newGuarded(nSlots * tc.rowLen)
		cache.fill(r, -1, 1, true)
		// Sources: the window rotated by one (the row aliases), but every
		// third sequence reads its own slot and every fifth a row outside
		// the window (neither is copied).
		ids := make([]int32, tc.n)
		for s := range ids {
			switch {
			case s%3 == 1:
				ids[s] = int32(rsHead + s)
			case s%5 == 4:
				ids[s] = int32(r.IntN(rsHead))
			default:
				ids[s] = int32(rsHead + (s+1)%tc.n)
			}
		}
		scratch := newGuarded(tc.n * tc.rowLen)
		want, cacheBefore := scratch.snapshot(), cache.snapshot()
		copied := 0
		for s, id := range ids {
			if aliases(ids, s, rsHead, tc.n) {
				copy(want[guard+s*tc.rowLen:guard+(s+1)*tc.rowLen], cache.data[int(id)*tc.rowLen:(int(id)+1)*tc.rowLen])
				copied++
			}
		}
		if copied == 0 || copied == tc.n {
			t.Fatalf("n %d: %d of the rows alias; the case needs both kinds", tc.n, copied)
		}
		err := gen.Gather("portable", gen.GatherParams{},
			gen.GatherArgs{RowLen: uint32(tc.rowLen), NSeqs: uint32(tc.n), RsHead: uint32(rsHead)},
			gen.GatherBuffers{Cache: cache.data, Ids: ids, Scratch: scratch.data})
		if err != nil {
			t.Fatal(err)
		}
		checkBits(t, "scratch", want, scratch.all, func(i int) string { return describe("row %d", (i-guard)/tc.rowLen) })
		checkBits(t, "cache (read-only)", cacheBefore, cache.all, func(int) string { return "" })
		if t.Failed() {
			t.Fatalf("n %d, row %d", tc.n, tc.rowLen)
		}
	}
}
