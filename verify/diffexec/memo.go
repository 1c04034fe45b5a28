package diffexec

import (
	"crypto/sha256"
	"sync"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/verify/cases"
)

// Memo keeps what runs leave on the problems, by problem and the IR text of
// the kernels that ran: a launch whose kernel and starting memory were seen
// before is not run again. Within one Run, a gather both revisions share
// runs once; across Runs that share a revision (a test judging many edits
// against one base), that revision's runs are done once. The memory a whole
// run leaves is kept as a digest, what launches before the last leave
// whole. Safe for concurrent use; it grows with every problem it sees, so
// keep one for a set of comparisons, not for a process.
type Memo struct {
	mu       sync.Mutex
	kernels  map[*ir.Kernel]string
	states   map[stateKey]memoState
	outcomes map[stateKey]outcome
}

// NewMemo returns an empty memo.
func NewMemo() *Memo {
	return &Memo{kernels: map[*ir.Kernel]string{},
		states: map[stateKey]memoState{}, outcomes: map[stateKey]outcome{}}
}

// stateKey names the memory after some launches of a problem: the
// problem's name (its op, contract, variant and index, which its inputs
// are drawn from) and the digests of the kernels that ran, in order.
type stateKey struct {
	problem string
	kernels string
}

type memoState struct {
	bufs map[string]*cases.Buffer
	err  error
}

// outcome is what a whole run of a problem left: a digest of its buffers,
// or the error it failed with.
type outcome struct {
	digest [sha256.Size]byte
	err    string
}

// kernelDigest identifies k by its IR text (Print and irtext.Parse
// round-trip, so equal texts are equal kernels).
func (m *Memo) kernelDigest(k *ir.Kernel) string {
	m.mu.Lock()
	d, ok := m.kernels[k]
	m.mu.Unlock()
	if ok {
		return d
	}
	sum := sha256.Sum256([]byte(ir.Print(k)))
	d = string(sum[:])
	m.mu.Lock()
	m.kernels[k] = d
	m.mu.Unlock()
	return d
}

// state returns a copy of the memory kept under key.
func (m *Memo) state(key stateKey) (map[string]*cases.Buffer, error, bool) {
	m.mu.Lock()
	s, ok := m.states[key]
	m.mu.Unlock()
	if !ok || s.err != nil {
		return nil, s.err, ok
	}
	out := make(map[string]*cases.Buffer, len(s.bufs))
	for n, b := range s.bufs {
		out[n] = b.Clone()
	}
	return out, nil, true
}

// putState keeps a copy of bufs (or only err) under key.
func (m *Memo) putState(key stateKey, bufs map[string]*cases.Buffer, err error) {
	s := memoState{err: err}
	if err == nil {
		s.bufs = make(map[string]*cases.Buffer, len(bufs))
		for n, b := range bufs {
			s.bufs[n] = b.Clone()
		}
	}
	m.mu.Lock()
	m.states[key] = s
	m.mu.Unlock()
}

func (m *Memo) outcome(key stateKey) (outcome, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.outcomes[key]
	return o, ok
}

func (m *Memo) putOutcome(key stateKey, o outcome) {
	m.mu.Lock()
	m.outcomes[key] = o
	m.mu.Unlock()
}
