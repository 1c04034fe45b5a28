package ir

import "fmt"

// Type is the type of an IR value or of a buffer element.
type Type uint8

const (
	Invalid Type = iota
	F32
	I32
	U32
	Bool
	// BF16 is a storage type only: buffers may hold it, values never do.
	// A load widens exactly to F32, a store rounds to nearest even.
	BF16
	// U64 is a value type for element offsets into a buffer that may hold
	// 2^32 elements or more (a whole state cache): arithmetic wraps at 2^64.
	// Params, args, buffers, arrays and loop variables stay 32-bit.
	U64
)

func (t Type) String() string {
	switch t {
	case F32:
		return "f32"
	case I32:
		return "i32"
	case U32:
		return "u32"
	case Bool:
		return "bool"
	case BF16:
		return "bf16"
	case U64:
		return "u64"
	}
	return "invalid"
}

// IsInt reports whether t is an integer type: I32, U32 or U64.
func (t Type) IsInt() bool { return t == I32 || t == U32 || t == U64 }

// IsValue reports whether t can be the type of a value (not a storage-only type).
func (t Type) IsValue() bool { return t == F32 || t == I32 || t == U32 || t == U64 || t == Bool }

// ValueType is the type a load of an element of type t produces.
func (t Type) ValueType() Type {
	if t == BF16 {
		return F32
	}
	return t
}

// Access says how a kernel may touch a buffer.
type Access uint8

const (
	Read Access = iota + 1
	Write
	ReadWrite
)

func (a Access) String() string {
	switch a {
	case Read:
		return "read"
	case Write:
		return "write"
	case ReadWrite:
		return "read_write"
	}
	return "invalid"
}

// CanRead and CanWrite report what the access mode allows.
func (a Access) CanRead() bool  { return a == Read || a == ReadWrite }
func (a Access) CanWrite() bool { return a == Write || a == ReadWrite }

// Space is where an array lives.
type Space uint8

const (
	// Private arrays are per-thread registers.
	Private Space = iota + 1
	// Shared arrays are per-workgroup memory, visible to all its threads after a Barrier.
	Shared
)

func (s Space) String() string {
	if s == Shared {
		return "shared"
	}
	return "private"
}

// Arith names the arithmetic contract a kernel was built under.
//
// Portable kernels use only exactly specified operations (explicit fma, IEEE
// add/mul, butterfly reductions of a stated width, IR-defined exp) and give
// the same bits on every backend. Native kernels reproduce the arithmetic of
// one backend's upstream non-fused path (Backend: cuda, metal, vulkan, sycl)
// and may use operations whose rounding is backend-defined.
type Arith struct {
	Native  bool
	Backend string
}

// Portable is the portable contract.
var Portable = Arith{}

// Native returns the native contract of a backend.
func Native(backend string) Arith { return Arith{Native: true, Backend: backend} }

func (a Arith) String() string {
	if !a.Native {
		return "portable"
	}
	return "native-" + a.Backend
}

// ParseArith is the inverse of Arith.String.
func ParseArith(s string) (Arith, error) {
	if s == "portable" {
		return Portable, nil
	}
	if len(s) > len("native-") && s[:len("native-")] == "native-" {
		return Native(s[len("native-"):]), nil
	}
	return Arith{}, fmt.Errorf("unknown arithmetic contract %q: want portable or native-<backend>", s)
}

// Pos is a position in the DSL program that built a node: the op
// definition's file (as dir/file.go) and line.
type Pos struct {
	File string
	Line int
}

func (p Pos) String() string {
	if p.File == "" {
		return "?"
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}

// IsValid reports whether p was recorded.
func (p Pos) IsValid() bool { return p.File != "" }
