package interp

import "fmt"

// Races: with Program.CheckRaces set, Run also fails on a data race, what
// no schedule of the interpreter's shows by itself (it runs each stretch for
// thread 0, 1, ... in turn, so a read another thread should have made
// before a write still sees the old value when the reading thread comes
// first). Two accesses of one element race when they come from different
// threads, one of them writes, and no barrier of the workgroup lies
// between them (the same barrier interval), or they come from different
// workgroups, which nothing orders. Reductions order nothing: a subgroup
// operation is no memory barrier. Two writes of the same bits are not
// reported: every thread that finds something setting a shared flag to 1
// (ops/chain.go's anyAliases) leaves what any order of them leaves.

// cell is what the log keeps of one element: who accessed it in the
// current barrier interval of the workgroup that last did, and which
// workgroups read and wrote it over the dispatch (buffers only).
type cell struct {
	wg, interval int
	reader       int // a thread that read it in the interval; -1 none
	readers      bool
	writer       int // a thread that wrote it in the interval; -1 none
	writers      bool
	bits         uint32 // what the writer wrote

	readWG, writeWG int // a workgroup that read / wrote it; -1 none
	readWGs         bool
	writeBits       uint32 // what writeWG wrote last
}

// raceLog records the accesses of one Run.
type raceLog struct {
	bufs     []map[int]*cell // per kernel buffer, the whole dispatch
	shared   []map[int]*cell // per array (shared ones), one workgroup
	wg       int
	interval int
	err      error
}

func newRaceLog(nBufs, nArrays int) *raceLog {
	r := &raceLog{bufs: make([]map[int]*cell, nBufs), shared: make([]map[int]*cell, nArrays)}
	for i := range r.bufs {
		r.bufs[i] = map[int]*cell{}
	}
	return r
}

// workgroup starts the next workgroup: shared memory is its own.
func (r *raceLog) workgroup() {
	r.wg++
	r.interval = 0
	for i := range r.shared {
		r.shared[i] = map[int]*cell{}
	}
}

// note records thread t's access of element i of log m (named what, for
// the error) and keeps the first race it finds.
func (r *raceLog) note(m map[int]*cell, what string, i int, t *thread, write bool, bits uint32) {
	c := m[i]
	if c == nil {
		c = &cell{wg: r.wg, interval: r.interval, reader: -1, writer: -1, readWG: -1, writeWG: -1}
		m[i] = c
	}
	if c.wg != r.wg || c.interval != r.interval {
		c.wg, c.interval, c.reader, c.readers, c.writer, c.writers = r.wg, r.interval, -1, false, -1, false
	}
	race := func(other string) {
		if r.err == nil {
			verb := "read"
			if write {
				verb = "written"
			}
			r.err = fmt.Errorf("a data race on %s[%d]: %s %s by thread %d of workgroup %d, with no barrier between", what, i, other, verb, t.tid, r.wg-1)
		}
	}
	if write {
		switch {
		case c.reader >= 0 && (c.reader != t.tid || c.readers):
			race("read by another thread in the same barrier interval, then")
		case c.writer >= 0 && c.writer != t.tid && c.bits != bits:
			race("written by another thread in the same barrier interval, then")
		case c.readWG >= 0 && (c.readWG != r.wg || c.readWGs):
			race("read by another workgroup, then")
		case c.writeWG >= 0 && c.writeWG != r.wg && c.writeBits != bits:
			race("written by another workgroup, then")
		}
		if c.writer >= 0 && c.writer != t.tid {
			c.writers = true
		}
		c.writer, c.bits, c.writeWG, c.writeBits = t.tid, bits, r.wg, bits
		return
	}
	switch {
	case c.writer >= 0 && (c.writer != t.tid || c.writers):
		race("written by another thread in the same barrier interval, then")
	case c.writeWG >= 0 && c.writeWG != r.wg:
		race("written by another workgroup, then")
	}
	if c.reader >= 0 && c.reader != t.tid {
		c.readers = true
	}
	c.reader = t.tid
	if c.readWG >= 0 && c.readWG != r.wg {
		c.readWGs = true
	}
	c.readWG = r.wg
}

// loaded and stored note a buffer access; sharedAt a shared array's.
func (t *thread) loaded(bi int, name string, i int) {
	if r := t.m.race; r != nil {
		r.note(r.bufs[bi], name, i, t, false, 0)
	}
}

func (t *thread) stored(bi int, name string, i int, bits uint32) {
	if r := t.m.race; r != nil {
		r.note(r.bufs[bi], name, i, t, true, bits)
	}
}

func (t *thread) sharedAt(ai int, name string, i int, write bool, bits uint32) {
	if r := t.m.race; r != nil {
		r.note(r.shared[ai], name, i, t, write, bits)
	}
}
