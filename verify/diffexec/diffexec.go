// Package diffexec runs two revisions of a kernel on the same random
// problems and compares what they leave in memory, bit for bit: the ground
// truth under kernelgen diff's canonical verdict.
//
// The problems are verify/cases' for the op, contract and every variant of
// this kernelgen's variant table, with fixed seeds; a case's launches (the
// gather before an ids op's compute kernel) run with each revision's own
// kernels, read from its IR text and executed by verify/interp with the Go
// reference's semantics.
package diffexec

import (
	"context"
	"crypto/sha256"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/tools/testhook"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/interp"
)

// Kernels are one revision's kernels by ID (NAME@ARITH).
type Kernels map[string]*ir.Kernel

// Result is how two revisions compared on a kernel's problems.
type Result struct {
	// Problems is how many problems both ran; Differ how many of them left
	// different memory.
	Problems, Differ int
	// First is the first difference found (problems in a fixed order).
	First *Mismatch
	// NotRun, when set, says why the problems could not run.
	NotRun string
}

// Identical reports whether both revisions ran every problem alike.
func (r Result) Identical() bool { return r.NotRun == "" && r.Problems > 0 && r.Differ == 0 }

// Mismatch is where two runs first differ: an element of a buffer, or one
// side failing (an index out of range, a rejected variant).
type Mismatch struct {
	Problem string `json:"problem"`
	Buffer  string `json:"buffer,omitempty"`
	Index   int    `json:"index"`
	A       string `json:"a"`
	B       string `json:"b"`
}

func (m *Mismatch) String() string {
	if m.Buffer == "" {
		return fmt.Sprintf("%s: a: %s; b: %s", m.Problem, m.A, m.B)
	}
	return fmt.Sprintf("%s[%d]: %s vs %s (problem %s)", m.Buffer, m.Index, m.A, m.B, m.Problem)
}

// Options says how many problems to run.
type Options struct {
	// PerVariant is the number of problems per variant (at least 1); an op
	// with an ids buffer gets one more where some sequence reads another's
	// destination, when none of the others does.
	PerVariant int
	// Memo, when set, keeps what runs leave across calls of Run (see
	// Memo); without one, a Run keeps its own.
	Memo *Memo
}

// Interrupted is Result.NotRun when ctx ended before every problem ran.
const Interrupted = "interrupted"

// Run compares revisions a and b of kernel id (NAME@ARITH) on its op's
// problems. When ctx ends, no further problem starts (those running
// finish, a few milliseconds each) and the result is NotRun Interrupted.
func Run(ctx context.Context, id string, a, b Kernels, opt Options) Result {
	ka, kb := a[id], b[id]
	if ka == nil || kb == nil {
		return Result{NotRun: "the kernel is missing on one side"}
	}
	op, err := ops.Lookup(ka.Name)
	if err != nil {
		return Result{NotRun: fmt.Sprintf("this kernelgen has no op %s to make problems for", ka.Name)}
	}
	memo := opt.Memo
	if memo == nil {
		memo = NewMemo()
	}
	probs, err := problems(op, ka.Arith, max(1, opt.PerVariant))
	if err != nil {
		return Result{NotRun: err.Error()}
	}
	if len(probs) == 0 {
		return Result{NotRun: "this kernelgen has no variants of " + op.Name}
	}
	for _, p := range probs {
		for _, side := range []Kernels{a, b} {
			if why := fits(p, side); why != "" {
				return Result{NotRun: why}
			}
		}
	}
	differ := make([]bool, len(probs))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ra, rb := newRunner(a, memo), newRunner(b, memo)
			for i := range next {
				differ[i] = ra.outcome(probs[i]) != rb.outcome(probs[i])
			}
		}()
	}
	testhook.Pause(ctx, "diff-problems")
feed:
	for i := range probs {
		if ctx.Err() != nil {
			break
		}
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		return Result{NotRun: Interrupted}
	}
	r := Result{Problems: len(probs)}
	for i, d := range differ {
		if !d {
			continue
		}
		r.Differ++
		if r.First == nil {
			// Outcomes keep a digest of the memory a run leaves: run the
			// first problem that differs again, whole, to say where.
			ra, rb := newRunner(a, memo), newRunner(b, memo)
			ma, ea := ra.run(probs[i])
			mb, eb := rb.run(probs[i])
			if r.First = compare(probs[i], ma, mb, ea, eb); r.First == nil {
				r.First = &Mismatch{Problem: probs[i].Name, Index: -1, A: "left memory with another digest", B: "the same memory when run again"}
			}
		}
	}
	return r
}

// problems draws op's problems under contract a: perVariant per variant,
// seeded by the op, contract, variant and index, so that every run of
// kernelgen diff uses the same ones (and a Memo knows them by name).
func problems(op *ops.Op, a ir.Arith, perVariant int) ([]*cases.Case, error) {
	var out []*cases.Case
	for _, v := range ops.VariantsOf(op.Name) {
		aliased := false
		var mine []*cases.Case
		for i := 0; i < perVariant || hasIDs(mine) && !aliased && i < perVariant+64; i++ {
			rng := rand.New(rand.NewPCG(seed(op.Name, a.String(), v.String()), uint64(i)))
			c, err := cases.RandomInputs(op.Name, a, rng, cases.Small, &v)
			if err != nil {
				return nil, fmt.Errorf("making problems for %s@%s: %v", op.Name, a, err)
			}
			al := aliases(c)
			if i >= perVariant && !al {
				continue
			}
			c.Name = fmt.Sprintf("%s #%d", c.Name, i)
			aliased = aliased || al
			mine = append(mine, c)
		}
		out = append(out, mine...)
	}
	return out, nil
}

func seed(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

func hasIDs(cs []*cases.Case) bool { return len(cs) > 0 && cs[0].Buffer("ids") != nil }

// aliases reports whether some sequence of an ids problem reads its prior
// state from another sequence's destination slot: ids[s] in
// [rs_head, rs_head+n_seqs) and not rs_head+s.
func aliases(c *cases.Case) bool {
	ids := c.Buffer("ids")
	if ids == nil || len(c.Launches) == 0 {
		return false
	}
	args := c.Launches[len(c.Launches)-1].Args
	head, n := int32(args["rs_head"]), int32(args["n_seqs"])
	for s, src := range ids.I32 {
		if src >= head && src < head+n && src != head+int32(s) {
			return true
		}
	}
	return false
}

// kernelID is the kernel a launch runs in a revision.
func kernelID(c *cases.Case, l cases.Launch) string {
	if l.Op.ArithFree() {
		return l.Op.Name + "@" + ir.Portable.String()
	}
	return l.Op.Name + "@" + c.Arith.String()
}

// fits says why a revision's kernels cannot run a problem ("" when they can):
// a kernel missing, or a param, arg or buffer the problem does not provide.
func fits(c *cases.Case, ks Kernels) string {
	for _, l := range c.Launches {
		k := ks[kernelID(c, l)]
		if k == nil {
			return "the revision has no kernel " + kernelID(c, l)
		}
		for _, p := range k.Params {
			if _, ok := l.Params[p.Name]; !ok && p.Derived == nil {
				return fmt.Sprintf("%s has a param %s that this kernelgen's problems do not set", k.ID(), p.Name)
			}
		}
		for _, x := range k.Args {
			if _, ok := l.Args[x.Name]; !ok {
				return fmt.Sprintf("%s has an arg %s that this kernelgen's problems do not set", k.ID(), x.Name)
			}
		}
		for _, x := range k.Buffers {
			if bind(l, x.Name) == "" {
				return fmt.Sprintf("%s has a buffer %s that this kernelgen's problems do not bind", k.ID(), x.Name)
			}
		}
	}
	return ""
}

// bind is the case buffer bound to the kernel buffer called name.
func bind(l cases.Launch, name string) string {
	for i, kb := range l.Kernel.Buffers {
		if kb.Name == name {
			return l.Bind[i]
		}
	}
	return ""
}

// runner runs problems on one revision, compiling each kernel once.
type runner struct {
	ks    Kernels
	memo  *Memo
	progs map[string]*interp.Program
}

func newRunner(ks Kernels, memo *Memo) *runner {
	return &runner{ks: ks, memo: memo, progs: map[string]*interp.Program{}}
}

// outcome is what running c leaves, from the memo when a run of the same
// kernels on c is there.
func (r *runner) outcome(c *cases.Case) outcome {
	keys := r.keys(c)
	if o, ok := r.memo.outcome(keys[len(keys)-1]); ok {
		return o
	}
	state, err := r.replay(c, keys)
	o := outcome{}
	if err != nil {
		o.err = err.Error()
	} else {
		o.digest = digest(c, state)
	}
	r.memo.putOutcome(keys[len(keys)-1], o)
	return o
}

// run replays c's launches and returns the buffers they leave.
func (r *runner) run(c *cases.Case) (map[string]*cases.Buffer, error) {
	return r.replay(c, r.keys(c))
}

// keys are the memo keys of the memory c leaves after each launch.
func (r *runner) keys(c *cases.Case) []stateKey {
	keys := make([]stateKey, len(c.Launches))
	var ran strings.Builder
	for i, l := range c.Launches {
		ran.WriteString(r.memo.kernelDigest(r.ks[kernelID(c, l)]))
		keys[i] = stateKey{c.Name, ran.String()}
	}
	return keys
}

// replay runs c's launches from the latest memory the memo holds after
// some of them (the gather both revisions share), keeping what the
// launches before the last leave.
func (r *runner) replay(c *cases.Case, keys []stateKey) (map[string]*cases.Buffer, error) {
	state, start := map[string]*cases.Buffer(nil), 0
	for i := len(c.Launches) - 2; i >= 0; i-- {
		if s, err, ok := r.memo.state(keys[i]); ok {
			if err != nil {
				return nil, err
			}
			state, start = s, i+1
			break
		}
	}
	if state == nil {
		state = clone(c.Buffers)
	}
	for i := start; i < len(c.Launches); i++ {
		l := c.Launches[i]
		id := kernelID(c, l)
		p := r.progs[id]
		if p == nil {
			var err error
			if p, err = interp.Compile(r.ks[id]); err != nil {
				return nil, err
			}
			r.progs[id] = p
		}
		bufs := map[string]any{}
		for _, kb := range r.ks[id].Buffers {
			b := state[bind(l, kb.Name)]
			if b.Elem == ir.I32 {
				bufs[kb.Name] = b.I32
			} else {
				bufs[kb.Name] = b.F32
			}
		}
		launchesRun.Add(1)
		err := p.Run(l.Params, l.Args, bufs)
		if i < len(c.Launches)-1 {
			r.memo.putState(keys[i], state, err)
		}
		if err != nil {
			return nil, err
		}
	}
	return state, nil
}

// launchesRun counts the launches run (tests check what a Memo saves).
var launchesRun atomic.Int64

// digest is a SHA-256 of every buffer of c in state, bit for bit.
func digest(c *cases.Case, state map[string]*cases.Buffer) [sha256.Size]byte {
	h := sha256.New()
	for _, x := range c.Buffers {
		fmt.Fprintf(h, "%s\x00", x.Name)
		h.Write(state[x.Name].Bytes())
	}
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

func clone(bufs []*cases.Buffer) map[string]*cases.Buffer {
	out := make(map[string]*cases.Buffer, len(bufs))
	for _, b := range bufs {
		out[b.Name] = b.Clone()
	}
	return out
}

// compare returns the first difference of two runs of c, or nil.
func compare(c *cases.Case, a, b map[string]*cases.Buffer, ea, eb error) *Mismatch {
	switch {
	case ea != nil || eb != nil:
		sa, sb := "ran", "ran"
		if ea != nil {
			sa = "fails: " + ea.Error()
		}
		if eb != nil {
			sb = "fails: " + eb.Error()
		}
		if sa == sb {
			return nil
		}
		return &Mismatch{Problem: c.Name, Index: -1, A: sa, B: sb}
	}
	for _, x := range c.Buffers {
		ba, bb := a[x.Name], b[x.Name]
		for i := 0; i < x.Len(); i++ {
			var ua, ub uint32
			if x.Elem == ir.I32 {
				ua, ub = uint32(ba.I32[i]), uint32(bb.I32[i])
			} else {
				ua, ub = math.Float32bits(ba.F32[i]), math.Float32bits(bb.F32[i])
			}
			if ua != ub {
				return &Mismatch{Problem: c.Name, Buffer: x.Name, Index: i, A: word(x.Elem, ua), B: word(x.Elem, ub)}
			}
		}
	}
	return nil
}

func word(t ir.Type, u uint32) string {
	if t == ir.I32 {
		return fmt.Sprint(int32(u))
	}
	return fmt.Sprintf("%v (0x%08x)", math.Float32frombits(u), u)
}
