// Package ir is kernelgen's intermediate representation: the single source of
// truth every backend lowers from. It is data only; the ops package builds
// kernels through the dsl package, Validate checks them, Print renders them.
//
// # Execution model
//
// A kernel runs as a grid of workgroups (Kernel.Grid, runtime expressions of
// params and args); each workgroup has Kernel.Workgroup threads (compile-time
// expressions). Threads are numbered linearly x fastest: lin = x + X*(y + Y*z).
// A Reduce of width W combines the aligned cluster of W consecutive linear
// indices; W divides the workgroup's x size, so a cluster is one row of lanes
// (one warp or simdgroup, or part of one). Backends map a logical width wider
// than their hardware subgroup through shared memory; the order stays the IR's.
//
// Control flow around Barrier and Reduce is uniform (Validate enforces it).
// Any schedule that respects program order per thread and the barriers is
// valid; the Go reference runs each barrier-free stretch for thread 0, 1, ...
// in turn, which is one such schedule.
//
// # Evaluation order and rounding
//
// Statements run in program order; within an expression, operands are
// evaluated left to right and an expression has no side effects. Every
// f32 operation rounds its exact result to binary32, round to nearest even,
// on its own: a*b + c is two roundings. Emitters must not contract, reassociate
// or reorder f32 arithmetic in portable kernels (GLSL `precise`, CUDA
// __fmul_rn/__fadd_rn or equivalent, no fast-math); FMA is the only fused
// operation and must be emitted as a true fused multiply-add. Denormals are
// kept (a backend that flushes them documents it next to its contract).
// Neg is exact; Bitcast reinterprets bits; Convert from f32 to an integer
// truncates toward zero and is only defined for values in range.
//
// Integer arithmetic wraps at its type's width: i32 and u32 at 2^32, u64 at
// 2^64. u64 is for element offsets into a whole cache (2^32 elements or
// more); params, args, buffers, arrays and loop variables are 32-bit.
// Convert between integer types keeps the value modulo the target's width
// (an i32 widens to u64 sign-extended, as C converts it). A target whose
// buffers cannot span 2^32 elements may print u64 as a 32-bit type
// (ir/ctype says which and why).
//
// # Contracts
//
// Kernel.Arith says which contract a kernel was built under:
//
//   - portable: only exactly specified operations appear: add, sub, mul,
//     FMA, Neg, Min/Max/Select, integer operations, Bitcast, and Reduce in
//     Butterfly order. exp, SiLU and division are routines the DSL expands
//     into those operations (dsl.ExpPortable, dsl.DivPortable), so every
//     backend and the Go reference produce the same bits. Validate rejects
//     native-only operations in portable kernels.
//   - native-<backend>: the kernel reproduces that backend's upstream
//     non-fused arithmetic and may use ExpNative, f32 Div, Dot4, NativeOrder
//     reductions and the vector operations VecDot and VecSilu, whose
//     rounding the backend defines. The Go reference evaluates them one
//     documented way (exp via float64, Dot4 as ((a0*b0 + a1*b1) + a2*b2) +
//     a3*b3 with every product and sum rounded, NativeOrder as Butterfly,
//     VecDot i ascending from +0.0, VecSilu per element), so native results
//     on a device are compared with it under a tolerance, not bit for bit.
//     A native kernel may also Assert a precondition on its inputs (an id
//     names a row of the cache), which a backend that can stop checks
//     (ggml-cpu's GGML_ASSERT; the Go reference panics) and a GPU kernel,
//     which cannot, never holds.
//
// Kernel.ArithFree marks a kernel that does no f32 arithmetic at all (a
// copy): built portable once, it is every contract's kernel, and Validate
// holds it to that.
//
// A Reduce in Butterfly order is: for off = W/2, W/4, ..., 1, every lane l
// replaces x[l] by x[l] + x[l xor off], all lanes reading the values of the
// previous step. All lanes of a cluster end with the same bits.
//
// # Memory model
//
// A Load sees every Store that the same thread made earlier, and every Store
// to shared memory that another thread of the same workgroup made before a
// Barrier both passed; a Device barrier orders buffer accesses the same way
// (a thread's buffer accesses before it happen before any other thread's
// after it). Nothing orders threads of different workgroups within one
// dispatch: a kernel must never read what another workgroup of the same
// dispatch writes. An op that needs "all reads before any write" across
// workgroups (the ids variants, where a source row may be another sequence's
// destination) is two dispatches, a gather into scratch and then the compute
// kernel, and the dispatch boundary is the ordering point (stream order on
// CUDA and SYCL, an explicit barrier on Vulkan and Metal). Within the compute
// kernel, the thread that writes a piece of state read it, into registers,
// before any write: reads of prior state happen before writes of new state
// for every element, which makes reading and writing the same slot safe.
//
// DepSync statements mark where a dispatch depends on the previous dispatch
// on the queue (DepWait) and where the next one may start (DepRelease).
// They change nothing where dispatches run in order; a backend that overlaps
// consecutive dispatches (CUDA's programmatic dependent launch) must keep
// every access after a DepWait behind the previous dispatch's completion.
//
// Buffers declare their Access; a Store to a Read buffer or a Load from a
// Write buffer is a validation error. BF16 buffers widen exactly on load and
// round to nearest even on store.
package ir
