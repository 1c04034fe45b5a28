// Package interp runs an IR kernel directly, with the Go reference's
// semantics (emit/goref): the same schedule (each barrier-free stretch runs
// for thread 0, 1, ... in turn, collectives at workgroup level, loop bounds
// of collective loops and branch conditions around collectives read from
// thread 0), the same runtime for fma, exp, min/max, dot4, reductions and
// the vector operations (emit/goref/rt), Go's integer and conversion
// semantics, and storage that lives for the whole dispatch. So a kernel
// read back from its IR text runs bit for bit as its generated Go
// reference does, without compiling it: kernelgen diff runs two revisions'
// kernels this way.
package interp

import (
	"fmt"
	"math"

	"github.com/kernelgen/kernelgen/emit/goref/rt"
	"github.com/kernelgen/kernelgen/ir"
)

// DefaultIterationLimit bounds the loop iterations of one Run, over all
// threads, so that a kernel whose loop never ends fails instead of hanging.
const DefaultIterationLimit = 1 << 30

// Program is a kernel compiled to closures. A Program runs one dispatch at a
// time; compile one per goroutine.
type Program struct {
	// IterationLimit is DefaultIterationLimit unless set.
	IterationLimit int64
	// CheckRaces makes Run fail on a data race (race.go).
	CheckRaces bool

	k       *ir.Kernel
	m       *machine
	nregs   int
	params  []func(*thread) uint32 // derived params; nil for set ones
	wg      [3]func(*thread) uint32
	grid    [3]func(*thread) uint32
	checks  []func(*thread) error
	body    []step
	arrays  []*ir.Array
	arrayLn []func(*thread) uint32
}

// machine is the state of one dispatch that closures read.
type machine struct {
	params  []uint32
	args    []uint32
	f32     [][]float32
	i32     [][]int32
	u32     [][]uint32
	bf16    [][]uint16
	arrays  [][]uint32
	alen    []int
	gid     [3]uint32
	threads []*thread
	iters   int64
	limit   int64
	race    *raceLog // nil unless Program.CheckRaces
}

type thread struct {
	regs []uint32
	lid  [3]uint32
	tid  int
	m    *machine
}

type compiler struct {
	p      *Program
	slots  map[*ir.Var]int
	params map[*ir.Param]int
	args   map[*ir.Arg]int
	bufs   map[*ir.Buffer]int
	arrays map[*ir.Array]int
	nregs  int
	err    error
}

// Compile prepares k to run. k must be valid (ir.Validate).
func Compile(k *ir.Kernel) (*Program, error) {
	p := &Program{k: k, m: &machine{}}
	c := &compiler{p: p, slots: map[*ir.Var]int{}, params: map[*ir.Param]int{}, args: map[*ir.Arg]int{}, bufs: map[*ir.Buffer]int{}, arrays: map[*ir.Array]int{}}
	for i, x := range k.Params {
		c.params[x] = i
	}
	for i, x := range k.Args {
		c.args[x] = i
	}
	for i, x := range k.Buffers {
		c.bufs[x] = i
	}
	for _, x := range k.Params {
		if x.Derived == nil {
			p.params = append(p.params, nil)
			continue
		}
		p.params = append(p.params, c.asBits(c.expr(x.Derived)))
	}
	for d := 0; d < 3; d++ {
		p.wg[d] = c.asBits(c.expr(k.Workgroup[d]))
		p.grid[d] = c.asBits(c.expr(k.Grid[d]))
	}
	c.checks()
	ir.WalkStmts(k.Body, func(s ir.Stmt) {
		switch s := s.(type) {
		case *ir.Let:
			c.slot(s.Var)
		case *ir.Reduce:
			c.slot(s.Var)
		case *ir.For:
			c.slot(s.Var)
		case *ir.DeclArray:
			c.arrays[s.Array] = len(p.arrays)
			p.arrays = append(p.arrays, s.Array)
			p.arrayLn = append(p.arrayLn, c.asBits(c.expr(s.Array.Len)))
		}
	})
	p.body = c.block(k.Body)
	if c.err != nil {
		return nil, fmt.Errorf("interp: %s: %v", k.ID(), c.err)
	}
	p.nregs = c.nregs
	return p, nil
}

func (c *compiler) slot(v *ir.Var) int {
	if i, ok := c.slots[v]; ok {
		return i
	}
	// A u64 takes two registers: low half, then high half.
	c.slots[v] = c.nregs
	c.nregs++
	if v.Type == ir.U64 {
		c.nregs++
	}
	return c.slots[v]
}

func (c *compiler) fail(p ir.Pos, format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("%s: %s", p, fmt.Sprintf(format, args...))
	}
}

// checks mirrors the Go reference's: params in their domains, requirements
// met, reduction widths dividing the workgroup's x size.
func (c *compiler) checks() {
	k := c.p.k
	for i, x := range k.Params {
		if x.Domain == nil || x.Derived != nil {
			continue
		}
		i, x := i, x
		c.p.checks = append(c.p.checks, func(t *thread) error {
			v := int64(int32(t.m.params[i]))
			if x.Type == ir.U32 {
				v = int64(t.m.params[i])
			}
			for _, d := range x.Domain {
				if d == v {
					return nil
				}
			}
			return fmt.Errorf("%s: %s %d is not in %v", k.ID(), x.Name, v, x.Domain)
		})
	}
	for _, r := range k.Requires {
		cond, msg := c.expr(r.Cond).b, r.Msg
		c.p.checks = append(c.p.checks, func(t *thread) error {
			if !cond(t) {
				return fmt.Errorf("%s: %s", k.ID(), msg)
			}
			return nil
		})
	}
	seen := map[string]bool{}
	ir.WalkStmts(k.Body, func(s ir.Stmt) {
		r, ok := s.(*ir.Reduce)
		if !ok || seen[ir.ExprString(r.Width)] {
			return
		}
		seen[ir.ExprString(r.Width)] = true
		w, wx := c.asBits(c.expr(r.Width)), c.asBits(c.expr(k.Workgroup[0]))
		text := ir.ExprString(r.Width)
		c.p.checks = append(c.p.checks, func(t *thread) error {
			if w(t) == 0 || wx(t)%w(t) != 0 {
				return fmt.Errorf("%s: reduction width %s must divide the workgroup x size", k.ID(), text)
			}
			return nil
		})
	})
}

// Run executes one dispatch: params and args by IR name (args as 32-bit
// patterns, f32 as its bits), buffers by IR name ([]float32, []int32,
// []uint32, or []uint16 for bf16), modified in place, as the Go reference's
// Run table takes them. A fault the Go reference would panic on (an index
// out of range, an integer division by zero) is an error here.
func (p *Program) Run(params map[string]int64, args map[string]uint32, bufs map[string]any) (err error) {
	k, m := p.k, p.m
	*m = machine{limit: p.IterationLimit}
	if p.CheckRaces {
		m.race = newRaceLog(len(k.Buffers), len(p.arrays))
	}
	if m.limit == 0 {
		m.limit = DefaultIterationLimit
	}
	m.params = make([]uint32, len(k.Params))
	m.args = make([]uint32, len(k.Args))
	boot := &thread{m: m, regs: make([]uint32, p.nregs)}
	for i, x := range k.Params {
		if x.Derived != nil {
			continue
		}
		v, ok := params[x.Name]
		if !ok {
			return fmt.Errorf("%s: param %s not set", k.ID(), x.Name)
		}
		if x.Type == ir.Bool {
			m.params[i] = b2u(v != 0)
		} else {
			m.params[i] = uint32(v)
		}
	}
	for i, x := range k.Params {
		if x.Derived != nil {
			m.params[i] = p.params[i](boot)
		}
	}
	for i, x := range k.Args {
		v, ok := args[x.Name]
		if !ok {
			return fmt.Errorf("%s: arg %s not set", k.ID(), x.Name)
		}
		m.args[i] = v
	}
	m.f32 = make([][]float32, len(k.Buffers))
	m.i32 = make([][]int32, len(k.Buffers))
	m.u32 = make([][]uint32, len(k.Buffers))
	m.bf16 = make([][]uint16, len(k.Buffers))
	for i, x := range k.Buffers {
		v := bufs[x.Name]
		ok := false
		switch x.Elem {
		case ir.F32:
			m.f32[i], ok = v.([]float32)
		case ir.I32:
			m.i32[i], ok = v.([]int32)
		case ir.U32:
			m.u32[i], ok = v.([]uint32)
		case ir.BF16:
			m.bf16[i], ok = v.([]uint16)
		}
		if !ok {
			return fmt.Errorf("%s: buffer %s must be a %s slice, got %T", k.ID(), x.Name, x.Elem, v)
		}
	}
	for _, check := range p.checks {
		if err := check(boot); err != nil {
			return err
		}
	}
	defer func() {
		if r := recover(); r == errEndless {
			err = p.endless()
		} else if r != nil {
			err = fmt.Errorf("%s: %v (workgroup %v)", k.ID(), r, m.gid)
		}
	}()
	var wg, grid [3]int
	for d := 0; d < 3; d++ {
		wg[d], grid[d] = int(p.wg[d](boot)), int(p.grid[d](boot))
	}
	n := wg[0] * wg[1] * wg[2]
	m.threads = make([]*thread, n)
	for tid := range m.threads {
		m.threads[tid] = &thread{m: m, tid: tid, regs: make([]uint32, p.nregs),
			lid: [3]uint32{uint32(tid % wg[0]), uint32(tid / wg[0] % wg[1]), uint32(tid / (wg[0] * wg[1]))}}
	}
	m.arrays = make([][]uint32, len(p.arrays))
	m.alen = make([]int, len(p.arrays))
	for i, a := range p.arrays {
		m.alen[i] = int(p.arrayLn[i](boot))
		size := m.alen[i]
		if a.Space == ir.Private {
			size *= n
		}
		m.arrays[i] = make([]uint32, size)
	}
	for gz := 0; gz < grid[2]; gz++ {
		for gy := 0; gy < grid[1]; gy++ {
			for gx := 0; gx < grid[0]; gx++ {
				m.gid = [3]uint32{uint32(gx), uint32(gy), uint32(gz)}
				if m.race != nil {
					m.race.workgroup()
				}
				if err := p.exec(p.body); err != nil {
					return err
				}
				if m.race != nil && m.race.err != nil {
					return fmt.Errorf("%s: %v", k.ID(), m.race.err)
				}
			}
		}
	}
	return nil
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// step is one stretch of a block: a barrier-free run of statements every
// thread executes in turn, or one collective.
type step struct {
	run     []func(*thread)
	reduce  *reduceStep
	loop    *loopStep
	branch  *branchStep
	barrier bool
}

type reduceStep struct {
	slot  int
	x     func(*thread) float32
	width func(*thread) uint32
}

type loopStep struct {
	slot             int
	typ              ir.Type
	start, end, step func(*thread) uint32
	body             []step
}

type branchStep struct {
	cond            func(*thread) bool
	then, otherwise []step
}

func (p *Program) exec(steps []step) error {
	m := p.m
	t0 := m.threads[0]
	for _, s := range steps {
		switch {
		case s.run != nil:
			for _, t := range m.threads {
				for _, f := range s.run {
					f(t)
				}
			}
		case s.reduce != nil:
			vals := make([]float32, len(m.threads))
			for i, t := range m.threads {
				vals[i] = s.reduce.x(t)
			}
			rt.Butterfly(vals, int(s.reduce.width(t0)))
			for i, t := range m.threads {
				t.regs[s.reduce.slot] = math.Float32bits(vals[i])
			}
		case s.loop != nil:
			l := s.loop
			for v := l.start(t0); less(l.typ, v, l.end(t0)); v += l.step(t0) {
				if m.iters++; m.iters > m.limit {
					return p.endless()
				}
				for _, t := range m.threads {
					t.regs[l.slot] = v
				}
				if err := p.exec(l.body); err != nil {
					return err
				}
			}
		case s.barrier:
			if m.race != nil {
				m.race.interval++
			}
		case s.branch != nil:
			body := s.branch.otherwise
			if s.branch.cond(t0) {
				body = s.branch.then
			}
			if err := p.exec(body); err != nil {
				return err
			}
		}
		if m.iters > m.limit {
			return p.endless()
		}
	}
	return nil
}

var errEndless = fmt.Errorf("the loop iteration limit")

func (p *Program) endless() error {
	return fmt.Errorf("%s: more than %d loop iterations: a loop that does not end?", p.k.ID(), p.m.limit)
}

// less is v < end in the loop variable's type.
func less(t ir.Type, v, end uint32) bool {
	if t == ir.I32 {
		return int32(v) < int32(end)
	}
	return v < end
}

// block splits a block into steps as the Go reference does (goref.splitRuns).
func (c *compiler) block(body []ir.Stmt) []step {
	var out []step
	for _, s := range body {
		if !ir.IsCollective(s) {
			if len(out) == 0 || out[len(out)-1].run == nil {
				out = append(out, step{run: []func(*thread){}})
			}
			if f := c.stmt(s); f != nil {
				out[len(out)-1].run = append(out[len(out)-1].run, f)
			}
			continue
		}
		switch s := s.(type) {
		case *ir.Barrier:
			out = append(out, step{barrier: true})
		case *ir.Reduce:
			out = append(out, step{reduce: &reduceStep{slot: c.slot(s.Var), x: c.expr(s.X).f, width: c.asBits(c.expr(s.Width))}})
		case *ir.For:
			out = append(out, step{loop: &loopStep{slot: c.slot(s.Var), typ: s.Var.Type,
				start: c.asBits(c.expr(s.Start)), end: c.asBits(c.expr(s.End)), step: c.asBits(c.expr(s.Step)), body: c.block(s.Body)}})
		case *ir.If:
			out = append(out, step{branch: &branchStep{cond: c.expr(s.Cond).b, then: c.block(s.Then), otherwise: c.block(s.Else)}})
		}
	}
	return out
}

// stmt compiles a statement that runs inside a thread's stretch.
func (c *compiler) stmt(s ir.Stmt) func(*thread) {
	switch s := s.(type) {
	case *ir.Let:
		return c.set(c.slot(s.Var), c.expr(s.Value))
	case *ir.Assign:
		return c.set(c.slot(s.Var), c.expr(s.Value))
	case *ir.ArrayStore:
		ai := c.arrays[s.Array]
		idx, val := c.index(s.Index), c.asBits(c.expr(s.Value))
		if s.Array.Space == ir.Shared {
			name := s.Array.Name
			return func(t *thread) {
				i, v := idx(t), val(t)
				t.sharedAt(ai, name, i, true, v)
				t.m.arrays[ai][i] = v
			}
		}
		return func(t *thread) { t.m.arrays[ai][t.tid*t.m.alen[ai]+idx(t)] = val(t) }
	case *ir.Store:
		bi, name := c.bufs[s.Buf], s.Buf.Name
		idx, val := c.index(s.Index), c.expr(s.Value)
		switch s.Buf.Elem {
		case ir.F32:
			return func(t *thread) {
				i, v := idx(t), val.f(t)
				t.stored(bi, name, i, math.Float32bits(v))
				t.m.f32[bi][i] = v
			}
		case ir.BF16:
			return func(t *thread) {
				i, v := idx(t), rt.F32ToBF16(val.f(t))
				t.stored(bi, name, i, uint32(v))
				t.m.bf16[bi][i] = v
			}
		case ir.I32:
			return func(t *thread) {
				i, v := idx(t), val.i(t)
				t.stored(bi, name, i, uint32(v))
				t.m.i32[bi][i] = v
			}
		case ir.U32:
			return func(t *thread) {
				i, v := idx(t), val.u(t)
				t.stored(bi, name, i, v)
				t.m.u32[bi][i] = v
			}
		}
	case *ir.For:
		slot, typ := c.slot(s.Var), s.Var.Type
		start, end, stp := c.asBits(c.expr(s.Start)), c.asBits(c.expr(s.End)), c.asBits(c.expr(s.Step))
		var body []func(*thread)
		for _, x := range s.Body {
			if f := c.stmt(x); f != nil {
				body = append(body, f)
			}
		}
		return func(t *thread) {
			for v := start(t); less(typ, v, end(t)); v += stp(t) {
				if t.m.iters++; t.m.iters > t.m.limit {
					panic(errEndless)
				}
				t.regs[slot] = v
				for _, f := range body {
					f(t)
				}
			}
		}
	case *ir.If:
		cond := c.expr(s.Cond).b
		var then, els []func(*thread)
		for _, x := range s.Then {
			if f := c.stmt(x); f != nil {
				then = append(then, f)
			}
		}
		for _, x := range s.Else {
			if f := c.stmt(x); f != nil {
				els = append(els, f)
			}
		}
		return func(t *thread) {
			body := els
			if cond(t) {
				body = then
			}
			for _, f := range body {
				f(t)
			}
		}
	case *ir.VecSilu:
		dst, src, n := c.span(s.Dst), c.span(s.Src), c.index(s.N)
		return func(t *thread) {
			k := n(t)
			d, x := dst(t, k), src(t, k)
			if d.bits == nil && x.bits == nil {
				rt.VecSilu(d.f, x.f)
				return
			}
			// Element by element, in the Go reference's order: where the
			// spans overlap, a later element reads what an earlier wrote.
			var in, out [1]float32
			for i := 0; i < k; i++ {
				in[0] = x.at(i)
				rt.VecSilu(out[:], in[:])
				d.set(i, out[0])
			}
		}
	case *ir.Assert:
		cond, what := c.expr(s.Cond).b, fmt.Sprintf("%s: assert %s failed", s.At, ir.ExprString(s.Cond))
		return func(t *thread) {
			if !cond(t) {
				panic(what)
			}
		}
	case *ir.DeclArray, *ir.Comment, *ir.DepSync:
		return nil
	default:
		c.fail(s.Pos(), "%T inside a thread's stretch", s)
	}
	return nil
}

func (c *compiler) set(slot int, v val) func(*thread) {
	switch v.t {
	case ir.F32:
		f := v.f
		return func(t *thread) { t.regs[slot] = math.Float32bits(f(t)) }
	case ir.U32:
		f := v.u
		return func(t *thread) { t.regs[slot] = f(t) }
	case ir.U64:
		f := v.w
		return func(t *thread) { x := f(t); t.regs[slot], t.regs[slot+1] = uint32(x), uint32(x>>32) }
	}
	bits := c.asBits(v)
	return func(t *thread) { t.regs[slot] = bits(t) }
}

// index compiles a buffer or array index to a Go int, as Go converts an
// index of either integer type (a negative one then faults on use).
func (c *compiler) index(e ir.Expr) func(*thread) int {
	v := c.expr(e)
	switch e.Type() {
	case ir.I32:
		return func(t *thread) int { return int(v.i(t)) }
	case ir.U64:
		return func(t *thread) int { return int(v.w(t)) }
	}
	return func(t *thread) int { return int(v.u(t)) }
}
