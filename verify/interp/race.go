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
// operation is no memory barrier.

// access is one thread's access to an element in a barrier interval.
type access struct {
	wg, tid, interval int
	write             bool
}

// raceLog records the accesses of one Run.
type raceLog struct {
	bufs     []map[int][]access // per kernel buffer, the whole dispatch
	shared   []map[int][]access // per array (shared ones), one workgroup
	wg       int
	interval int
	err      error
}

func newRaceLog(nBufs, nArrays int) *raceLog {
	r := &raceLog{bufs: make([]map[int][]access, nBufs), shared: make([]map[int][]access, nArrays)}
	for i := range r.bufs {
		r.bufs[i] = map[int][]access{}
	}
	return r
}

// workgroup starts the next workgroup: shared memory is its own.
func (r *raceLog) workgroup() {
	r.wg++
	r.interval = 0
	for i := range r.shared {
		r.shared[i] = map[int][]access{}
	}
}

// note records thread t's access of element i of log m (named what, for
// the error) and keeps the first race it finds.
func (r *raceLog) note(m map[int][]access, what string, i int, t *thread, write bool) {
	a := access{wg: r.wg, tid: t.tid, interval: r.interval, write: write}
	seen := m[i]
	for _, p := range seen {
		if p == a {
			return
		}
	}
	if r.err == nil {
		for _, p := range seen {
			if (p.wg == a.wg && p.tid == a.tid) || !(p.write || a.write) {
				continue
			}
			if p.wg != a.wg || p.interval == a.interval {
				r.err = fmt.Errorf("a data race on %s[%d]: %s, then %s, with no barrier between", what, i, p.describe(), a.describe())
				break
			}
		}
	}
	m[i] = append(seen, a)
}

func (a access) describe() string {
	verb := "read"
	if a.write {
		verb = "written"
	}
	return fmt.Sprintf("%s by thread %d of workgroup %d (barrier interval %d)", verb, a.tid, a.wg-1, a.interval)
}

// loaded and stored note a buffer access; sharedAt a shared array's.
func (t *thread) loaded(bi int, name string, i int) {
	if r := t.m.race; r != nil {
		r.note(r.bufs[bi], name, i, t, false)
	}
}

func (t *thread) stored(bi int, name string, i int) {
	if r := t.m.race; r != nil {
		r.note(r.bufs[bi], name, i, t, true)
	}
}

func (t *thread) sharedAt(ai int, name string, i int, write bool) {
	if r := t.m.race; r != nil {
		r.note(r.shared[ai], name, i, t, write)
	}
}
