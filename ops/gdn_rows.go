package ops

import (
	"github.com/kernelgen/kernelgen/dsl"
)

// rowsInPlace is the sequence (h, s) of the Shared kernel under a
// vectorRows contract (ggml-cpu), written as ggml-cpu's own loops are: the
// prior state is copied to state_dst, where the final state goes, and every
// token updates it there, one row of the transposed state (a
// value column, S_v keys) at a time. Nothing is held on the stack, so any
// S_v runs. Row j's gate, kv = S.k, delta, S += k*delta and attn = S.q
// read only row j, so a row at a time gives the bits of ggml-cpu's plain
// kernel, which takes each step over every row before the next.
func (g *gdn) rowsInPlace() {
	b, s, h, sv := g.b, g.s, g.h, g.sv
	g.hq = b.Let("hq", h.Rem(g.neq1))
	g.sq = b.Let("sq", s.Div(g.rq3))
	g.block = b.Let("block", sv.Mul(sv))
	into, at := g.stateDst, b.Let("row", s.Mul(g.dstRow).Add(h.Mul(g.block)))
	b.Comment("copy the prior state to where the final state goes, and update it there")
	g.copyPrior(into, at)
	b.For("t", 0, g.nTok, func(t dsl.Val) { g.tokenInPlace(t, into, at) })
}

// copyPrior copies the sequence's prior state to into at: from the state,
// or with IDS from where loadIds finds it (an identity row is already there).
func (g *gdn) copyPrior(into dsl.Buf, at dsl.Val) {
	b, s, h, block := g.b, g.s, g.h, g.block
	copyFrom := func(buf dsl.Buf, base dsl.Val) {
		b.For("i", 0, block, func(i dsl.Val) { into.Store(at.Add(i), buf.Load(base.Add(along(base, i)))) })
	}
	fromState := func() { copyFrom(g.state, s.Mul(g.nHeads).Add(h).Mul(block)) }
	fromIds := func() {
		b.DepWait() // the gather has read every row it copies
		src := b.Let("src", g.ids.Load(s))
		b.If(src.Ne(g.rsHead.Add(s).I32()), func() {
			b.IfElse(aliasesOtherThanSelf(g.st, b, src, s, g.rsHead, g.nSeqs),
				func() { copyFrom(g.scratch, s.Mul(g.nHeads).Add(h).Mul(block)) },
				func() {
					if g.st.checksIds {
						assertRow(b, src, g.nRows)
					}
					copyFrom(g.state, cacheRow(src, g.nHeads).Add(h.U64()).Mul(block.U64()))
				})
		})
	}
	b.IfElse(g.withIds, fromIds, fromState)
}

// tokenInPlace is token t on the state at into[at:]: the gate over the
// whole state, then per row kv, delta, the update and the attention.
func (g *gdn) tokenInPlace(t dsl.Val, into dsl.Buf, at dsl.Val) {
	b, s, h, st, sv := g.b, g.s, g.h, g.st, g.sv
	qOff := b.Let("q_off", g.sq.Mul(g.sq3).Add(t.Mul(g.sq2)).Add(g.hq.Mul(g.sq1)))
	kOff := b.Let("k_off", g.sq.Mul(g.sk3).Add(t.Mul(g.sk2)).Add(g.hq.Mul(g.sk1)))
	gOff := b.Let("g_off", s.Mul(g.sg3).Add(t.Mul(g.sg2)).Add(h.Mul(g.sg1)))
	betaT := b.Let("beta_t", g.beta.Load(s.Mul(g.sb3).Add(t.Mul(g.sb2)).Add(h.Mul(g.sb1))))
	vOff := b.Let("v_off", s.Mul(g.sv3).Add(t.Mul(g.sv2)).Add(h.Mul(g.sv1)))
	attnOff := b.Let("attn_off", s.Mul(g.nTok).Add(t).Mul(g.nHeads).Add(h).Mul(sv))
	decay := func(x, gate dsl.Val) { into.Store(at.Add(x), gate.Mul(into.Load(at.Add(x)))) }
	b.IfElse(g.kda, func() {
		b.Comment("KDA: key i's gate scales element i of every row")
		b.For("i", 0, sv, func(i dsl.Val) {
			e := st.letExp(b, "gate", g.gate.Load(gOff.Add(i)))
			b.For("j", 0, sv, func(j dsl.Val) { decay(j.Mul(sv).Add(i), e) })
		})
	}, func() {
		gate := st.letExp(b, "gate", g.gate.Load(gOff))
		b.For("i", 0, g.block, func(i dsl.Val) { decay(i, gate) })
	})
	b.For("j", 0, sv, func(j dsl.Val) {
		r := b.Let("r", at.Add(j.Mul(sv)))
		kv := b.Let("kv", b.VecDot(into.From(r), g.k.From(kOff), sv))
		delta := b.Let("delta", g.v.Load(vOff.Add(j)).Sub(kv).Mul(betaT))
		b.For("i", 0, sv, func(i dsl.Val) {
			into.Store(r.Add(i), st.madd(b, g.k.Load(kOff.Add(i)), delta, into.Load(r.Add(i))))
		})
		attn := b.Let("attn", b.VecDot(into.From(r), g.q.From(qOff), sv))
		g.dst.Store(attnOff.Add(j), attn.Mul(g.scale))
	})
}
