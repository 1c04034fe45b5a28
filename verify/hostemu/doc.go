// Package hostemu builds and runs generated CUDA, Metal Shading Language and
// SYCL kernels on the CPU, so kernel logic can be tested where there is no GPU
// (CI). The sources compile unmodified with a host C++20 compiler (g++ by
// default; $CXX or Options.CXX, a command such as clang++-22 or "ccache g++":
// see Compiler) against a small SIMT runtime
// in include/: hostemu/core.h plus one "skin" per language (cuda.h, msl.h,
// sycl.h), force-included with -include; include/metal_stdlib and
// include/sycl/sycl.hpp make the usual #include lines resolve.
//
// # What a run means
//
// A launch is a 3-D grid of workgroups, each a 3-D block of threads (linear id
// x fastest; for SYCL, dimension D-1 is the fastest, as in SYCL). Workgroups
// run one at a time in linear order; the threads of a workgroup are
// cooperative fibers on one OS thread, switched only at barriers and subgroup
// collectives. Runs are deterministic.
//
// Subgroups (warps, SIMD-groups, sub-groups) have the job's width SG, a power
// of two in 1..64 (8, 16, 32 and 64 are tested): subgroup k is linear ids
// [k*SG, (k+1)*SG). In CUDA warpSize is SG. A collective completes when every
// lane of the subgroup has reached the same call (the same source line); a
// barrier when every thread of the workgroup has. Subgroup reductions
// (simd_sum, reduce_over_group, ...) use one defined order, the xor
// butterfly: for m = SG/2, SG/4, ..., 1: x = op(x, shuffle_xor(x, m)).
// CUDA's width argument restricts shuffles to aligned segments of that width
// (a source in a later segment returns the caller's own value, as in CUDA).
// When the workgroup size is not a multiple of SG the last subgroup is
// partial; barriers and subgroup barriers work there, but a shuffle (and so a
// reduction) that reads a lane it lacks is an error rather than the "active
// lanes only" result MSL and SYCL define.
//
// Errors are never hangs: a barrier or collective some threads cannot reach
// (they exited, or wait elsewhere), threads at different barriers, a shuffle
// reading a lane that does not exist, an access just outside a job buffer
// (buffers sit between guard pages), a fiber stack overflow, a bad job — each
// ends the program with exit code 3 and a message naming the kernel, e.g.
//
//	kernel gdn: barrier not reached by every thread of workgroup (0,0,0): 3 of 64 arrived (barrier at gdn.cu:88; 61 exited)
//
// which Run returns as a *RunError. A program still running after Run's
// timeout is killed: "kernel <name>: timed out after 5s (deadlock?)".
//
// # What this cannot catch
//
// This is a C++ subset standing in for three other compilers, not those
// compilers. It checks kernel logic (indexing, synchronization structure,
// subgroup data flow, arithmetic order) on the host, and it misses:
//
//   - Language errors the real compilers reject. MSL address spaces (device,
//     constant, thread) are empty macros, so mixing them up compiles;
//     attributes ([[buffer(n)]], [[thread_position_in_grid]], [[host_name]],
//     [[function_constant(n)]], [[sycl::reqd_sub_group_size(n)]],
//     __launch_bounds__) are ignored; MSL-only keywords are tolerated through
//     macros; anything valid C++ but invalid CUDA/MSL/SYCL passes.
//   - Numerics of the real targets: no fast-math or flush-to-zero, no
//     hardware approximations. exp, __expf, native::exp, metal fast math
//     and the like use the host's libm and differ in the last bits; the
//     build uses -ffp-contract=off, so only explicit fma calls fuse.
//   - Concurrency: workgroups never overlap, so inter-workgroup races and
//     ordering assumptions, and missing memory fences, go unseen; data races
//     between threads of a workgroup are only visible where a barrier is
//     missing entirely. Atomics are trivially atomic.
//   - Hardware limits: shared / threadgroup memory size, registers,
//     occupancy, and the real subgroup width (run every width the kernel
//     claims to support). Member masks of CUDA *_sync intrinsics are not
//     checked: every lane of the subgroup must take part.
//   - Unsupported constructs, which fail loudly instead: MSL threadgroup
//     pointers, references, parameters, casts and [[threadgroup(n)]] kernel
//     arguments (threadgroup maps to static); CUDA extern __shared__; MSL
//     half and swizzles (.xy); SYCL buffers/accessors other than
//     local_accessor, work-group (not sub-group) reductions. With clang++
//     (by name, or by --version, as macOS's g++), MSL explicit
//     instantiations lose their [[host_name(...)]] before compiling: clang
//     rejects attributes there, g++ ignores them.
//
// The fibers switch with a few lines of assembly on x86-64 ELF (Linux) and
// with ucontext elsewhere (-DHOSTEMU_UCONTEXT forces it); both are tested on
// Linux x86-64 only.
//
// Where a real compiler is available — xcrun metal for MSL, icpx or acpp for
// SYCL, nvcc for CUDA — it should be used instead of, or in addition to, this
// package: at least to compile the sources, and on a device to run them.
// For SYCL, Options.Real does that with the same Program and job files:
// the compiler's own <sycl/sycl.hpp> replaces the skin, hostemu/sycl_real.h
// keeps Job, the guarded buffers and main, and the kernels run on the
// implementation's default device, which must share host memory (acpp's
// OpenMP host device). The skin's SYCL is kept to what that path compiles
// (no local_accessor::get_multi_ptr, which AdaptiveCpp 24.06 lacks).
//
// # Build
//
// Build writes the Program's sources into a build directory under their own
// names, #includes them (sorted by name) and the harness into one translation
// unit ending with hostemu/main.h, and compiles it with Flags(lang, compiler)
// plus Options.Flags; for g++ and CUDA:
//
//	-std=c++20 -O1 -fno-fast-math -ffp-contract=off -fwrapv -fno-strict-aliasing
//	-fdiagnostics-color=never -Wno-unknown-pragmas -Wno-attributes
//	-Wno-maybe-uninitialized -isystem hostemu_include -include hostemu/cuda.h
//
// (clang gets -Wno-unknown-attributes -Wno-ignored-attributes instead of
// the two gcc-only ones). verify/emulate adds -Wall -Werror. Compiler messages name the Program's files
// (gated_delta_net.cu:123); sources that use a construct the emulation
// rejects fail before compiling, also with file and line. The
// result is cached under CacheDir() ($KERNELGEN_CACHE/hostemu, else the user
// cache dir's kernelgen/hostemu), keyed by a hash of sources, harness,
// runtime headers, flags and the compiler's resolved path, size and mtime; a
// warm Build runs no compiler. Entries appear by renaming a finished
// temporary directory, never half-written.
//
// # Harness and job protocol
//
// The harness defines void hostemu_run(hostemu::Job& job). Job gives
// subgroup_width(), arg_u32/arg_i32/arg_f32(name), buffer<T>(name) (a T* to the
// buffer's bytes), count(name) (elements), bytes(name), has_arg, has_buffer; a
// missing name is an error. It launches kernels with
//
//	hostemu::cuda::launch("name", dim3 grid, dim3 block, [&]{ kernel<...>(args...); });
//	hostemu::msl::launch("name", uint3 threadgroups, uint3 threads,
//	    [&](const hostemu::msl::pos& p){ kernel<...>(args..., p.tgpig, p.tpitg, p.sgitg, p.tiisg); });
//	hostemu::sycl::launch("name", [&]{ generated_host_function(q, args...); });
//
// (the SYCL form only names kernels launched without a SYCL kernel name).
// MSL function constants are globals the harness assigns before launching.
// The CUDA skin also defines ggml-cuda's ggml_cuda_pdl_sync/ggml_cuda_pdl_lc
// launch hooks, which generated kernels call, as no-ops (launches are
// sequential here); -DHOSTEMU_NO_GGML_CUDA leaves them to the sources.
//
// The program is run as `prog JOB RESULT`. Both files are little-endian, with
// no padding; strings are a u32 byte length then UTF-8 bytes:
//
//	job:    "HEJB" u32 version=1  u32 subgroup_width
//	        u32 nargs,    nargs times:    string name, u32 bits
//	        u32 nbuffers, nbuffers times: string name, u32 elem_size (1,2,4,8),
//	                                      u64 count, count*elem_size bytes
//	result: "HERS" u32 version=1  u32 nbuffers,
//	        nbuffers times (job order):   string name, u32 elem_size, u64 count, bytes
//
// Exit status: 0 ok (result written), 3 runtime-detected error (message on
// stderr as "hostemu: error: kernel <name>: ..."), 2 usage. The runtime also
// writes "hostemu: launch <name>" to stderr whenever the running kernel
// changes, which is how a timeout names the kernel.
package hostemu
