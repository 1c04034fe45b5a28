package ir

// Stmt is a statement. Statements run in program order for each thread.
type Stmt interface {
	Pos() Pos
	isStmt()
}

// Let defines Var (immutable unless Var.Mutable) with the value of Value.
type Let struct {
	Var   *Var
	Value Expr
	At    Pos
}

// Assign stores Value into a mutable Var.
type Assign struct {
	Var   *Var
	Value Expr
	At    Pos
}

// DeclArray brings an array into scope. Its elements start undefined.
type DeclArray struct {
	Array *Array
	At    Pos
}

type ArrayStore struct {
	Array        *Array
	Index, Value Expr
	At           Pos
}

// Store writes Value to element Index of a buffer (F32 to BF16 rounds to nearest even).
type Store struct {
	Buf          *Buffer
	Index, Value Expr
	At           Pos
}

// For runs Body for Var = Start, Start+Step, ... while Var < End. Unroll asks
// the emitter to unroll fully; it never changes the semantics.
type For struct {
	Var              *Var
	Start, End, Step Expr
	Unroll           bool
	Body             []Stmt
	At               Pos
}

type If struct {
	Cond       Expr
	Then, Else []Stmt
	At         Pos
}

// Barrier is a workgroup execution and shared-memory barrier. It must be
// reached by every thread of the workgroup (uniform control flow only).
// Device also orders the threads' buffer accesses: every buffer access a
// thread made before it happens before every one another thread of the
// workgroup makes after it.
type Barrier struct {
	Device bool
	At     Pos
}

// Reduce defines Var as the sum of X over each aligned cluster of Width
// consecutive threads (linear local index), in the stated Order. Every thread
// of a cluster receives the sum. Width is a compile-time power of two that
// divides the workgroup's x size. Uniform control flow only.
type Reduce struct {
	Var   *Var
	X     Expr
	Width Expr
	Order Order
	At    Pos
}

// DepKind says which side of a dispatch dependency a DepSync is.
type DepKind uint8

const (
	// DepWait: memory accesses after it see everything the previous
	// dispatch on the queue did (for a compute kernel of an ids op, that is
	// its gather). A no-op where dispatches are ordered
	// anyway; on CUDA with programmatic dependent launch it is where the
	// overlapped kernel waits (griddepcontrol.wait).
	DepWait DepKind = iota + 1
	// DepRelease: the next dispatch may start now; it still stops at its
	// DepWait (griddepcontrol.launch_dependents on CUDA).
	DepRelease
)

func (k DepKind) String() string {
	if k == DepRelease {
		return "dep_release"
	}
	return "dep_wait"
}

// DepSync marks a dispatch dependency point (see DepKind). It lets a backend
// overlap two dispatches of one op without changing what any read sees.
type DepSync struct {
	Kind DepKind
	At   Pos
}

// Assert states that Cond holds for the kernel's inputs, a precondition
// the caller owes that no type or shape check can see (an ids value names
// a row of the cache). A backend that can stop the program checks it where
// it stands (ggml-cpu: GGML_ASSERT, as its GET_ROWS checks each row id);
// native-cpu kernels only, as a GPU kernel cannot stop: there the op's
// documentation states what the caller must hold.
type Assert struct {
	Cond Expr
	At   Pos
}

// Comment is carried to the emitted source to label a section.
type Comment struct {
	Text string
	At   Pos
}

func (s *Let) Pos() Pos        { return s.At }
func (s *Assign) Pos() Pos     { return s.At }
func (s *DeclArray) Pos() Pos  { return s.At }
func (s *ArrayStore) Pos() Pos { return s.At }
func (s *Store) Pos() Pos      { return s.At }
func (s *For) Pos() Pos        { return s.At }
func (s *If) Pos() Pos         { return s.At }
func (s *Barrier) Pos() Pos    { return s.At }
func (s *Reduce) Pos() Pos     { return s.At }
func (s *Comment) Pos() Pos    { return s.At }
func (s *DepSync) Pos() Pos    { return s.At }
func (s *Assert) Pos() Pos     { return s.At }

func (*Let) isStmt()        {}
func (*Assign) isStmt()     {}
func (*DeclArray) isStmt()  {}
func (*ArrayStore) isStmt() {}
func (*Store) isStmt()      {}
func (*For) isStmt()        {}
func (*If) isStmt()         {}
func (*Barrier) isStmt()    {}
func (*Reduce) isStmt()     {}
func (*Comment) isStmt()    {}
func (*DepSync) isStmt()    {}
func (*Assert) isStmt()     {}

// IsCollective reports whether s is, or contains, a statement that all
// threads of a workgroup (Barrier) or cluster (Reduce) execute together.
func IsCollective(s Stmt) bool {
	switch s := s.(type) {
	case *Barrier, *Reduce:
		return true
	case *For:
		return anyCollective(s.Body)
	case *If:
		return anyCollective(s.Then) || anyCollective(s.Else)
	}
	return false
}

func anyCollective(body []Stmt) bool {
	for _, s := range body {
		if IsCollective(s) {
			return true
		}
	}
	return false
}
