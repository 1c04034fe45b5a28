package goref_test

import (
	"math"
	"math/rand/v2"
	"testing"

	gen "github.com/kernelgen/kernelgen/generated/goref"
)

// gdnCase is one random GDN problem with its ggml-style strided inputs.
type gdnCase struct {
	c                   contract
	sv, H, Hk, T, n, nq int
	kda, keep           bool
	K, nw, cpw          int
	sq1, sq2, sq3       int
	sv1, sv2, sv3       int
	sg1, sg2, sg3       int
	sb1, sb2, sb3       int
	q, k, v, g, beta    *guarded
	scale               float32
}

func (tc *gdnCase) D() int { return tc.sv * tc.sv * tc.H }

func randGDN(r *rand.Rand, i int, op string) *gdnCase {
	v := pick(r, op)
	tc := &gdnCase{c: pickContract(r, i), sv: int(v.Values["S_v"]), kda: v.Values["KDA"] == 1,
		keep: v.Values["KEEP_RS"] == 1, nw: int(v.Values["NW"]), cpw: int(v.Values["CPW"]), K: 1}
	if r.IntN(3) == 0 {
		// Any tiling must give the same bits: column folding is not arithmetic.
		for {
			nw, cpw := 1<<r.IntN(5), 1<<r.IntN(4)
			if tc.sv%(nw*cpw) == 0 {
				tc.nw, tc.cpw = nw, cpw
				break
			}
		}
	}
	maxH := 4
	if tc.sv == 128 {
		maxH = 2
	}
	tc.H = 1 + r.IntN(maxH)
	hk := divisors(tc.H)
	tc.Hk = hk[r.IntN(len(hk))]
	tc.T = 1 + r.IntN(4)
	if r.IntN(8) == 0 {
		tc.T = 5 + r.IntN(5)
	}
	tc.n = 1 + r.IntN(4)
	nq := divisors(tc.n)
	tc.nq = nq[r.IntN(len(nq))]
	if tc.keep {
		tc.K = 1 + r.IntN(4)
	}
	pad := func() int {
		if r.IntN(2) == 0 {
			return 0
		}
		return r.IntN(4)
	}
	tc.sq1 = tc.sv + pad()
	tc.sq2 = tc.Hk*tc.sq1 + pad()
	tc.sq3 = tc.T*tc.sq2 + pad()
	tc.sv1 = tc.sv + pad()
	tc.sv2 = tc.H*tc.sv1 + pad()
	tc.sv3 = tc.T*tc.sv2 + pad()
	gd := 1
	if tc.kda {
		gd = tc.sv
	}
	tc.sg1 = gd + pad()
	tc.sg2 = tc.H*tc.sg1 + pad()
	tc.sg3 = tc.T*tc.sg2 + pad()
	tc.sb1 = 1 + pad()
	tc.sb2 = tc.H*tc.sb1 + pad()
	tc.sb3 = tc.T*tc.sb2 + pad()
	// test-backend-ops' initialisation (docs/arithmetic.md#tolerance), with -0.0 and denormals sprinkled in.
	tc.q = newGuarded(tc.nq * tc.sq3)
	tc.q.fill(r, -1, 1, true)
	tc.k = newGuarded(tc.nq * tc.sq3)
	tc.k.fill(r, -1, 1, true)
	tc.v = newGuarded(tc.n * tc.sv3)
	tc.v.fill(r, -0.3, 5, true)
	tc.g = newGuarded(tc.n * tc.sg3)
	tc.g.fill(r, -20, -1e-4, false)
	tc.beta = newGuarded(tc.n * tc.sb3)
	tc.beta.fill(r, 0, 1, false)
	tc.scale = float32(1 / math.Sqrt(float64(tc.sv)))
	return tc
}

func (tc *gdnCase) problem() gdnProblem {
	return gdnProblem{
		sv: tc.sv, heads: tc.H, headsQK: tc.Hk, tokens: tc.T, seqs: tc.n, seqsQK: tc.nq, kda: tc.kda,
		q:     func(i, hq, t, sq int) float32 { return tc.q.data[sq*tc.sq3+t*tc.sq2+hq*tc.sq1+i] },
		k:     func(i, hq, t, sq int) float32 { return tc.k.data[sq*tc.sq3+t*tc.sq2+hq*tc.sq1+i] },
		v:     func(j, h, t, s int) float32 { return tc.v.data[s*tc.sv3+t*tc.sv2+h*tc.sv1+j] },
		g:     func(i, h, t, s int) float32 { return tc.g.data[s*tc.sg3+t*tc.sg2+h*tc.sg1+i] },
		beta:  func(h, t, s int) float32 { return tc.beta.data[s*tc.sb3+t*tc.sb2+h*tc.sb1] },
		scale: tc.scale,
	}
}

func (tc *gdnCase) String() string {
	return describe("%s S_v=%d KDA=%v KEEP_RS=%v K=%d NW=%d CPW=%d H=%d H_k=%d T=%d n_seqs=%d n_seqs_q=%d",
		tc.c.name, tc.sv, tc.kda, tc.keep, tc.K, tc.nw, tc.cpw, tc.H, tc.Hk, tc.T, tc.n, tc.nq)
}

// common args, in the order the three GDN kernels share them.
func (tc *gdnCase) strides() (H, T, n, neq1, rq3, sq1, sq2, sq3, sv1, sv2, sv3, sg1, sg2, sg3, sb1, sb2, sb3 uint32) {
	u := func(x int) uint32 { return uint32(x) }
	return u(tc.H), u(tc.T), u(tc.n), u(tc.Hk), u(tc.n / tc.nq), u(tc.sq1), u(tc.sq2), u(tc.sq3),
		u(tc.sv1), u(tc.sv2), u(tc.sv3), u(tc.sg1), u(tc.sg2), u(tc.sg3), u(tc.sb1), u(tc.sb2), u(tc.sb3)
}

func (tc *gdnCase) attnLen() int { return tc.sv * tc.H * tc.T * tc.n }

// block returns the (s, h) block of a buffer of sequence rows with row stride rowStride.
func block(buf []float32, rowStride, s, h, sv int) []float32 {
	off := s*rowStride + h*sv*sv
	return buf[off : off+sv*sv]
}

// checkAttn compares the attention region of dst with the oracle.
func checkAttn(t *testing.T, tc *gdnCase, want []float32, dst *guarded, dstWant []float32) {
	copy(dstWant[guard:], want)
	checkBits(t, "dst", dstWant, dst.all, func(i int) string {
		i -= guard
		if i < 0 || i >= tc.attnLen() {
			return "outside the attention region"
		}
		j, rest := i%tc.sv, i/tc.sv
		return describe("attn j=%d h=%d t=%d s=%d", j, rest%tc.H, rest/tc.H%tc.T, rest/tc.H/tc.T)
	})
}

func TestGDNBaseMatchesOracle(t *testing.T) {
	t.Parallel()
	r := newRand("gated_delta_net")
	for i := 0; i < numCases(); i++ {
		tc := randGDN(r, i, "gated_delta_net")
		D := tc.D()
		state := newGuarded(tc.n * D)
		state.fill(r, -1, 1, true)
		slots := tc.K
		dst := newGuarded(tc.attnLen() + slots*D*tc.n)
		stateBefore, dstBefore := state.snapshot(), dst.snapshot()
		H, T, n, neq1, rq3, sq1, sq2, sq3, sv1, sv2, sv3, sg1, sg2, sg3, sb1, sb2, sb3 := tc.strides()
		err := gen.GatedDeltaNet(tc.c.name,
			gen.GatedDeltaNetParams{SV: uint32(tc.sv), KDA: tc.kda, KEEPRS: tc.keep, NW: uint32(tc.nw), CPW: uint32(tc.cpw)},
			gen.GatedDeltaNetArgs{H: H, NTokens: T, NSeqs: n, Neq1: neq1, Rq3: rq3, Sq1: sq1, Sq2: sq2, Sq3: sq3,
				Sv1: sv1, Sv2: sv2, Sv3: sv3, Sg1: sg1, Sg2: sg2, Sg3: sg3, Sb1: sb1, Sb2: sb2, Sb3: sb3,
				Scale: tc.scale, K: uint32(tc.K), SOff: uint32(tc.attnLen())},
			gen.GatedDeltaNetBuffers{Q: tc.q.data, K: tc.k.data, V: tc.v.data, G: tc.g.data, Beta: tc.beta.data, State: state.data, Dst: dst.data})
		if err != nil {
			t.Fatalf("case %d (%s): %v", i, tc, err)
		}
		want := oracleGDN(tc.c, tc.problem(), func(s, h int) []float32 { return block(state.data, D, s, h, tc.sv) })
		dstWant := dstBefore
		// State region: the final state (K == 1 mode) or snapshot slot k = state
		// after token T-1-k; slots with T-1-k < 0 are not written (caller-owned).
		for s := 0; s < tc.n; s++ {
			for h := 0; h < tc.H; h++ {
				for slot := 0; slot < slots; slot++ {
					tok := tc.T - 1 - slot
					if !tc.keep && slot > 0 || tok < 0 {
						continue
					}
					copy(block(dstWant[guard+tc.attnLen()+slot*D*tc.n:], D, s, h, tc.sv), want.states[s][h][tok])
				}
			}
		}
		checkAttn(t, tc, want.attn, dst, dstWant)
		checkBits(t, "state (read-only)", stateBefore, state.all, func(int) string { return "prior state" })
		if t.Failed() {
			t.Fatalf("case %d: %s", i, tc)
		}
	}
}

func TestGDNInplaceMatchesOracle(t *testing.T) {
	t.Parallel()
	r := newRand("gated_delta_net_inplace")
	for i := 0; i < numCases(); i++ {
		tc := randGDN(r, i, "gated_delta_net_inplace")
		D := tc.D()
		state := newGuarded(tc.n * D)
		state.fill(r, -1, 1, true)
		sd1 := D + r.IntN(3)*r.IntN(17) // a padded row stride must leave the padding alone
		rows := tc.n + r.IntN(3)
		stateDst := newGuarded(rows * sd1)
		stateDst.fill(r, -1, 1, false)
		dst := newGuarded(tc.attnLen() + D*tc.n)
		stateBefore, sdBefore, dstBefore := state.snapshot(), stateDst.snapshot(), dst.snapshot()
		H, T, n, neq1, rq3, sq1, sq2, sq3, sv1, sv2, sv3, sg1, sg2, sg3, sb1, sb2, sb3 := tc.strides()
		err := gen.GatedDeltaNetInplace(tc.c.name,
			gen.GatedDeltaNetInplaceParams{SV: uint32(tc.sv), KDA: tc.kda, NW: uint32(tc.nw), CPW: uint32(tc.cpw)},
			gen.GatedDeltaNetInplaceArgs{H: H, NTokens: T, NSeqs: n, Neq1: neq1, Rq3: rq3, Sq1: sq1, Sq2: sq2, Sq3: sq3,
				Sv1: sv1, Sv2: sv2, Sv3: sv3, Sg1: sg1, Sg2: sg2, Sg3: sg3, Sb1: sb1, Sb2: sb2, Sb3: sb3,
				Scale: tc.scale, Sd1: uint32(sd1)},
			gen.GatedDeltaNetInplaceBuffers{Q: tc.q.data, K: tc.k.data, V: tc.v.data, G: tc.g.data, Beta: tc.beta.data,
				State: state.data, Dst: dst.data, StateDst: stateDst.data})
		if err != nil {
			t.Fatalf("case %d (%s): %v", i, tc, err)
		}
		want := oracleGDN(tc.c, tc.problem(), func(s, h int) []float32 { return block(state.data, D, s, h, tc.sv) })
		sdWant := sdBefore
		for s := 0; s < tc.n; s++ {
			for h := 0; h < tc.H; h++ {
				copy(block(sdWant[guard:], sd1, s, h, tc.sv), want.states[s][h][tc.T-1])
			}
		}
		// The op output's state region is left untouched (docs/ops.md#fused-ops).
		checkAttn(t, tc, want.attn, dst, dstBefore)
		checkBits(t, "state_dst", sdWant, stateDst.all, func(i int) string { return describe("row %d offset %d", (i-guard)/sd1, (i-guard)%sd1) })
		checkBits(t, "state (read-only)", stateBefore, state.all, func(int) string { return "prior state" })
		if t.Failed() {
			t.Fatalf("case %d: %s sd1=%d rows=%d", i, tc, sd1, rows)
		}
	}
}

// aliases restates the gather rule: sequence s's source is another
// sequence's destination (non-identity, inside [rs_head, rs_head+n)).
func aliases(ids []int32, s, rsHead, n int) bool {
	id := int(ids[s])
	return id != rsHead+s && id >= rsHead && id < rsHead+n
}

// randIds draws source slots: identity, arbitrary slots, and slots that are
// another sequence's destination (the aliasing case of docs/ops.md#aliasing).
func randIds(r *rand.Rand, n, nSlots, rsHead int) []int32 {
	ids := make([]int32, n)
	for s := range ids {
		switch x := r.IntN(4); {
		case x == 0 || n == 1 && x == 3:
			ids[s] = int32(rsHead + s)
		case x == 1 || x == 2:
			ids[s] = int32(r.IntN(nSlots))
		default:
			other := r.IntN(n - 1)
			if other >= s {
				other++
			}
			ids[s] = int32(rsHead + other)
		}
	}
	return ids
}

func TestGDNInplaceIdsMatchesOracle(t *testing.T) {
	t.Parallel()
	r := newRand("gated_delta_net_inplace_ids")
	aliased, separate, nonIdent, aliasing, batched, batchedAliasing, severalPerRow := 0, 0, 0, 0, 0, 0, 0
	for i := 0; i < numCases(); i++ {
		tc := randGDN(r, i, "gated_delta_net_inplace_ids")
		D := tc.D()
		nSlots := tc.n + r.IntN(5)
		rsHead := r.IntN(nSlots - tc.n + 1)
		cache := newGuarded(nSlots * D)
		cache.fill(r, -1, 1, true)
		ids := randIds(r, tc.n, nSlots, rsHead)
		// In the model state_dst is the cache itself at rows rs_head.. (so
		// sources alias destinations); test-backend-ops style uses a separate
		// buffer, possibly with a padded row stride.
		alias := r.IntN(2) == 0
		var stateDst *guarded
		var sdData []float32
		sd1 := D
		if alias {
			aliased++
			sdData = cache.data[rsHead*D:]
		} else {
			separate++
			sd1 = D + r.IntN(2)*r.IntN(9)
			stateDst = newGuarded((tc.n + r.IntN(2)) * sd1)
			stateDst.fill(r, -1, 1, true)
			sdData = stateDst.data
		}
		scratch := newGuarded(tc.n * D)
		dst := newGuarded(tc.attnLen() + D*tc.n)
		cacheBefore, dstBefore, scratchBefore := cache.snapshot(), dst.snapshot(), scratch.snapshot()
		var sdBefore []float32
		if !alias {
			sdBefore = stateDst.snapshot()
		}
		// Phase 1 by the oracle's own rule: every prior state is read before any write.
		prior := make([][][]float32, tc.n)
		for s := 0; s < tc.n; s++ {
			prior[s] = make([][]float32, tc.H)
			for h := 0; h < tc.H; h++ {
				if int(ids[s]) == rsHead+s {
					prior[s][h] = append([]float32(nil), block(sdData, sd1, s, h, tc.sv)...)
				} else {
					nonIdent++
					if int(ids[s]) >= rsHead && int(ids[s]) < rsHead+tc.n {
						aliasing++
					}
					prior[s][h] = append([]float32(nil), block(cache.data, D, int(ids[s]), h, tc.sv)...)
				}
			}
		}
		H, T, n, neq1, rq3, sq1, sq2, sq3, sv1, sv2, sv3, sg1, sg2, sg3, sb1, sb2, sb3 := tc.strides()
		// The batched schedule (one dispatch, no gather) is defined where
		// state_dst is the cache's window: half the aliased cases run it.
		var err error
		scratchWritten := true
		var fits [][2]uint32 // NS and SPT taking the case's sequences at its tiling
		for _, ns := range []uint32{2, 4, 8, 16, 32} {
			for _, spt := range []uint32{1, 2, 3, 4, 8} {
				// the kernel's own limits: 1024 threads, 48 KiB of shared memory
				shared := int(spt-1)*int(ns)*tc.nw*tc.cpw*tc.sv + min(tc.sv, 32)*tc.nw*int(ns)
				if int(ns*spt) >= tc.n && tc.nw*int(ns) <= 32 && shared <= 12288 {
					fits = append(fits, [2]uint32{ns, spt})
				}
			}
		}
		if alias && len(fits) > 0 && r.IntN(2) == 0 {
			batched, scratchWritten = batched+1, false
			fit := fits[r.IntN(len(fits))]
			if fit[1] > 1 && tc.n > int(fit[0]) {
				severalPerRow++ // a row of threads runs more than one real sequence
			}
			err = gen.GatedDeltaNetInplaceIdsBatched(tc.c.name,
				gen.GatedDeltaNetInplaceIdsBatchedParams{SV: uint32(tc.sv), KDA: tc.kda, NW: uint32(tc.nw), CPW: uint32(tc.cpw), NS: fit[0], SPT: fit[1]},
				gen.GatedDeltaNetInplaceIdsBatchedArgs{H: H, NTokens: T, NSeqs: n, Neq1: neq1, Rq3: rq3, Sq1: sq1, Sq2: sq2, Sq3: sq3,
					Sv1: sv1, Sv2: sv2, Sv3: sv3, Sg1: sg1, Sg2: sg2, Sg3: sg3, Sb1: sb1, Sb2: sb2, Sb3: sb3,
					Scale: tc.scale, Sd1: uint32(sd1), RsHead: uint32(rsHead)},
				gen.GatedDeltaNetInplaceIdsBatchedBuffers{Q: tc.q.data, K: tc.k.data, V: tc.v.data, G: tc.g.data, Beta: tc.beta.data,
					Cache: cache.data, Dst: dst.data, StateDst: sdData, Ids: ids})
			for s := 0; s < tc.n; s++ {
				if aliases(ids, s, rsHead, tc.n) {
					batchedAliasing++
				}
			}
		} else {
			if err := gen.Gather(tc.c.name, gen.GatherParams{},
				gen.GatherArgs{RowLen: uint32(D), NSeqs: uint32(tc.n), RsHead: uint32(rsHead)},
				gen.GatherBuffers{Cache: cache.data, Ids: ids, Scratch: scratch.data}); err != nil {
				t.Fatal(err)
			}
			err = gen.GatedDeltaNetInplaceIds(tc.c.name,
				gen.GatedDeltaNetInplaceIdsParams{SV: uint32(tc.sv), KDA: tc.kda, NW: uint32(tc.nw), CPW: uint32(tc.cpw)},
				gen.GatedDeltaNetInplaceIdsArgs{H: H, NTokens: T, NSeqs: n, Neq1: neq1, Rq3: rq3, Sq1: sq1, Sq2: sq2, Sq3: sq3,
					Sv1: sv1, Sv2: sv2, Sv3: sv3, Sg1: sg1, Sg2: sg2, Sg3: sg3, Sb1: sb1, Sb2: sb2, Sb3: sb3,
					Scale: tc.scale, Sd1: uint32(sd1), RsHead: uint32(rsHead)},
				gen.GatedDeltaNetInplaceIdsBuffers{Q: tc.q.data, K: tc.k.data, V: tc.v.data, G: tc.g.data, Beta: tc.beta.data,
					Cache: cache.data, Dst: dst.data, StateDst: sdData, Ids: ids, Scratch: scratch.data})
		}
		if err != nil {
			t.Fatalf("case %d (%s): %v", i, tc, err)
		}
		want := oracleGDN(tc.c, tc.problem(), func(s, h int) []float32 { return prior[s][h] })
		checkAttn(t, tc, want.attn, dst, dstBefore)
		// The destination rows hold the final states; nothing else changes.
		cacheWant := append([]float32(nil), cacheBefore...)
		var sdWant []float32
		if alias {
			sdWant = cacheWant[guard+rsHead*D:]
		} else {
			sdWant = sdBefore[guard:]
		}
		for s := 0; s < tc.n; s++ {
			for h := 0; h < tc.H; h++ {
				copy(block(sdWant, sd1, s, h, tc.sv), want.states[s][h][tc.T-1])
			}
		}
		checkBits(t, "cache", cacheWant, cache.all, func(i int) string { return describe("slot %d offset %d", (i-guard)/D, (i-guard)%D) })
		if !alias {
			checkBits(t, "state_dst", sdBefore, stateDst.all, func(i int) string { return describe("row %d offset %d", (i-guard)/sd1, (i-guard)%sd1) })
		}
		// Scratch: only sources that are another sequence's destination are
		// gathered (their pre-op rows); every other row is never written.
		// The batched schedule writes none.
		scratchWant := scratchBefore
		for s := 0; s < tc.n && scratchWritten; s++ {
			if aliases(ids, s, rsHead, tc.n) {
				copy(scratchWant[guard+s*D:guard+(s+1)*D], cacheBefore[guard+int(ids[s])*D:guard+(int(ids[s])+1)*D])
			}
		}
		checkBits(t, "scratch", scratchWant, scratch.all, func(i int) string { return describe("row %d", (i-guard)/D) })
		if t.Failed() {
			t.Fatalf("case %d: %s alias=%v ids=%v rs_head=%d slots=%d", i, tc, alias, ids, rsHead, nSlots)
		}
	}
	if aliased == 0 || separate == 0 || nonIdent == 0 || aliasing == 0 || batched == 0 || batchedAliasing == 0 || severalPerRow == 0 {
		t.Errorf("coverage: aliased=%d separate=%d non-identity=%d aliasing reads=%d batched=%d (aliasing reads %d, several sequences per row %d); every kind must occur",
			aliased, separate, nonIdent, aliasing, batched, batchedAliasing, severalPerRow)
	}
}
