package ir

// Param is a compile-time specialization parameter (a template argument,
// function constant or specialization constant in the backends). Its value
// is fixed per compiled variant.
type Param struct {
	Name string
	Type Type // U32, I32 or Bool
	// Domain lists the allowed values; nil means any value of Type.
	Domain []int64
	// Derived, when set, computes the param from other params: variants do
	// not set it (backends emit it as a constexpr / spec-constant expression).
	Derived Expr
	Doc     string
	At      Pos
}

// Requirement is a compile-time condition every variant must satisfy.
type Requirement struct {
	Cond Expr
	Msg  string
	At   Pos
}

// Arg is a runtime scalar kernel argument, uniform over the dispatch (a Metal
// kargs field, a Vulkan push constant, a kernel parameter).
type Arg struct {
	Name string
	Type Type
	Doc  string
	At   Pos
}

// CallerRole is the role of a buffer of a kernel several ops dispatch (the
// chain gather, upstream's shared gather): it is bound as the buffer of the
// same name of the op whose schedule dispatches it.
const CallerRole = "caller"

// Buffer is a storage buffer bound to the kernel.
type Buffer struct {
	Name   string
	Elem   Type
	Access Access
	// Role ties the buffer to the ggml node: "src0".."src9", "dst",
	// "scratch" or "plan"; or CallerRole.
	Role string
	// Prior: the op's dispatch before this one writes the buffer, and
	// where dispatches overlap (CUDA's programmatic dependent launch) it
	// may still be running when this kernel starts. The kernel reads it
	// only after a DepWait, and an emitter must keep those loads after
	// the wait: a read-only (const restrict) pointer lets nvcc issue them
	// before it (bench/RESULTS.md, call 52).
	Prior bool
	Doc   string
	At    Pos
}

// Var is a scalar variable. Immutable variables are defined once by Let,
// For or Reduce; mutable ones by Let and later Assign.
type Var struct {
	Name    string
	Type    Type
	Mutable bool
	At      Pos
}

// Array is a fixed-size array whose length is a compile-time expression.
type Array struct {
	Name  string
	Elem  Type
	Len   Expr
	Space Space
	At    Pos
}

// Builtin names a thread position value.
type Builtin uint8

const (
	// GroupID is the workgroup's index in the grid (per dimension).
	GroupID Builtin = iota + 1
	// LocalID is the thread's index in its workgroup (per dimension).
	LocalID
)

func (b Builtin) String() string {
	if b == GroupID {
		return "group_id"
	}
	return "local_id"
}

// Order is how a subgroup reduction associates its additions.
type Order uint8

const (
	// Butterfly: for off = W/2, W/4, ..., 1 each lane adds its partner's
	// value (lane xor off). Fully specified; all lanes end with the same bits.
	Butterfly Order = iota + 1
	// NativeOrder: the backend's own subgroup sum (simd_sum, subgroupAdd,
	// ...); the association is implementation-defined. Native kernels only.
	NativeOrder
)

func (o Order) String() string {
	if o == NativeOrder {
		return "native"
	}
	return "butterfly"
}

// Kernel is one compute entry point.
type Kernel struct {
	Name  string
	Arith Arith
	Doc   string

	Params   []*Param
	Requires []*Requirement
	Args     []*Arg
	Buffers  []*Buffer

	// Workgroup is the workgroup size; compile-time expressions.
	Workgroup [3]Expr
	// Grid is the number of workgroups per dimension; runtime expressions
	// over params and args.
	Grid [3]Expr

	Body []Stmt
	At   Pos

	// MinWorkgroupsPerCore is an occupancy hint: the kernel should keep
	// registers low enough for this many workgroups per core (CUDA's
	// __launch_bounds__ second argument). 0 means no hint.
	MinWorkgroupsPerCore int

	// ArithFree marks a kernel that does no arithmetic a contract decides
	// (a pure copy: integer indexing, loads, stores): built once under the
	// portable contract, it serves every contract and every backend, and
	// backends name it without a contract suffix. Validate holds it to that.
	ArithFree bool
}

// Param returns the parameter called name, or nil.
func (k *Kernel) Param(name string) *Param {
	for _, p := range k.Params {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Buffer returns the buffer called name, or nil.
func (k *Kernel) Buffer(name string) *Buffer {
	for _, b := range k.Buffers {
		if b.Name == name {
			return b
		}
	}
	return nil
}

// ID is the kernel's unique name: NAME@ARITH.
func (k *Kernel) ID() string { return k.Name + "@" + k.Arith.String() }
