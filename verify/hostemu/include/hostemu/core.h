// hostemu core: a deterministic SIMT emulator for running generated GPU
// kernels on the CPU. Written from the CUDA / MSL / SYCL specifications; the
// language skins (cuda.h, msl.h, sycl.h) are thin layers over this file.
//
// Model. A launch is a 3-D grid of workgroups, each a 3-D block of threads
// (linear id: x fastest). Workgroups run one after another, in linear order,
// so function-scope `static` storage serves as per-workgroup shared memory.
// The threads of one workgroup are cooperative fibers on one OS thread: a
// fiber runs until it reaches a barrier or a subgroup collective (or exits),
// and the scheduler resumes fibers round-robin in linear-id order. The result
// is deterministic and needs no locking.
//
// Subgroups have a runtime width SG (a power of two, 1..64). Subgroup k is
// linear ids [k*SG, (k+1)*SG); the last one is partial when the workgroup size
// is not a multiple of SG. A collective completes when every lane of the
// subgroup has arrived at the same collective (same kind, same source line);
// a workgroup barrier completes when every thread has arrived at the same
// barrier. Anything else (a thread exited, threads at different barriers or
// collectives) is reported as an error naming the kernel, never a hang.
//
// Every std header any skin or main.h needs is included here, before a skin
// defines keyword macros (MSL's `thread`, `device`, ...).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <new>
#include <source_location>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

// x86-64 ELF uses a small hand-written context switch: glibc's swapcontext
// makes a sigprocmask system call on every switch, which makes shuffle-heavy
// kernels about 9x slower. Everything else (or -DHOSTEMU_UCONTEXT) uses
// ucontext.
#if defined(__x86_64__) && defined(__ELF__) && !defined(HOSTEMU_UCONTEXT)
#define HOSTEMU_ASM_SWITCH 1
#else
#define HOSTEMU_ASM_SWITCH 0
#if defined(__APPLE__) && !defined(_XOPEN_SOURCE)
#define _XOPEN_SOURCE 600
#endif
#include <ucontext.h>
#endif

#ifndef MAP_NORESERVE
#define MAP_NORESERVE 0
#endif
#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS MAP_ANON
#endif

#if HOSTEMU_ASM_SWITCH
// hostemu_ctx_switch(save, load): saves the callee-saved registers, MXCSR and
// the x87 control word on the current stack, stores the stack pointer in
// *save, then loads `load` and restores the same set from it (SysV ABI).
// Weak so that a second translation unit including this header still links.
extern "C" void hostemu_ctx_switch(void** save, void* load);
__asm__(R"(
	.pushsection .text
	.weak hostemu_ctx_switch
	.type hostemu_ctx_switch,@function
hostemu_ctx_switch:
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	subq $8, %rsp
	stmxcsr (%rsp)
	fnstcw 4(%rsp)
	movq %rsp, (%rdi)
	movq %rsi, %rsp
	ldmxcsr (%rsp)
	fldcw 4(%rsp)
	addq $8, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
	.size hostemu_ctx_switch, .-hostemu_ctx_switch
	.popsection
)");
#endif

namespace hostemu {

struct u3 {
  unsigned x, y, z;
};

// The position of one emulated thread; skins expose it under their names.
struct ThreadPos {
  u3 tid;             // thread position in the workgroup
  u3 gid;             // workgroup position in the grid
  u3 bdim;            // workgroup size
  u3 gdim;            // grid size, in workgroups
  unsigned linear;    // tid.x + bdim.x*(tid.y + bdim.y*tid.z)
  unsigned nthreads;  // threads per workgroup
  unsigned lane;      // linear % SG
  unsigned sg_index;  // linear / SG
  unsigned sg_width;  // SG, the configured subgroup width
  unsigned sg_size;   // lanes present in this subgroup (< SG only in a partial last one)
  unsigned num_sg;    // subgroups per workgroup
};

namespace detail {

struct Loc {
  const char* file;
  unsigned line;
};
inline Loc loc_of(const std::source_location& s) { return {s.file_name(), unsigned(s.line())}; }
inline bool same_loc(Loc a, Loc b) {
  return a.line == b.line && (a.file == b.file || std::strcmp(a.file, b.file) == 0);
}

enum class FState : unsigned char { Runnable, Waiting, Done };
enum class Wait : unsigned char { None, Barrier, SgSync, SgShuffle, SgBallot };

inline const char* wait_kind(Wait w) {
  switch (w) {
    case Wait::Barrier: return "barrier";
    case Wait::SgSync: return "subgroup barrier";
    case Wait::SgShuffle: return "subgroup shuffle";
    case Wait::SgBallot: return "subgroup vote";
    default: return "nothing";
  }
}

struct Fiber {
  void* sp = nullptr;  // saved stack pointer while switched out (asm switch)
#if !HOSTEMU_ASM_SWITCH
  ucontext_t uc;
#endif
  char* map = nullptr;  // mapping: guard page, then the stack
  size_t map_len = 0;
  ThreadPos pos{};
  FState state = FState::Done;
  Wait wait = Wait::None;
  unsigned src = 0;  // shuffle: the lane this one reads
  alignas(16) unsigned char in[16];
  alignas(16) unsigned char out[16];
};

struct SgState {
  unsigned arrived = 0;
  Wait kind = Wait::None;
  Loc loc{};
  const char* what = "";
};

// Guarded job buffers, registered so a fault can be attributed to one.
struct Guarded {
  std::string name;
  char* map;
  size_t map_len;
  char* data;
  size_t bytes;
  size_t elem;  // element size from the job
};

struct Runtime {
  std::string kernel_name;
  bool in_launch = false;
  std::string last_traced;
  unsigned sg_width = 32;
  size_t stack_bytes = 256 * 1024;
  std::vector<std::unique_ptr<Fiber>> fibers;
  Fiber* running = nullptr;
  void* sched_sp = nullptr;
#if !HOSTEMU_ASM_SWITCH
  ucontext_t sched_uc;
#endif
  unsigned nthreads = 0;
  u3 group{};
  unsigned barrier_arrived = 0;
  Loc barrier_loc{};
  std::vector<SgState> sgs;
  void (*fn)(void*) = nullptr;
  void* fn_ctx = nullptr;
  std::vector<Guarded> buffers;
};

inline Runtime rt;
inline ThreadPos* g_pos = nullptr;  // the running fiber's position; null outside a launch

[[noreturn]] __attribute__((format(printf, 1, 2))) inline void fail(const char* fmt, ...) {
  char msg[4096];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  std::fflush(stdout);
  if (rt.in_launch)
    std::fprintf(stderr, "hostemu: error: kernel %s: %s\n", rt.kernel_name.c_str(), msg);
  else
    std::fprintf(stderr, "hostemu: error: %s\n", msg);
  std::fflush(stderr);
  std::_Exit(3);
}

inline size_t page_size() {
  static const size_t p = size_t(sysconf(_SC_PAGESIZE));
  return p;
}

[[noreturn]] inline void fiber_entry() noexcept;

#if !HOSTEMU_ASM_SWITCH
inline void fiber_entry_uc() { fiber_entry(); }
#endif

inline void switch_to(Fiber* f) {
#if HOSTEMU_ASM_SWITCH
  hostemu_ctx_switch(&rt.sched_sp, f->sp);
#else
  if (swapcontext(&rt.sched_uc, &f->uc) != 0) fail("swapcontext failed");
#endif
}

// Called by a fiber to give control back to the scheduler.
inline void yield(Fiber* f) {
#if HOSTEMU_ASM_SWITCH
  hostemu_ctx_switch(&f->sp, rt.sched_sp);
#else
  if (swapcontext(&f->uc, &rt.sched_uc) != 0) fail("swapcontext failed");
#endif
}

[[noreturn]] inline void fiber_entry() noexcept {
  Fiber* f = rt.running;
  try {
    rt.fn(rt.fn_ctx);
  } catch (const std::exception& e) {
    fail("uncaught exception in thread %u of workgroup (%u,%u,%u): %s", f->pos.linear, rt.group.x,
         rt.group.y, rt.group.z, e.what());
  } catch (...) {
    fail("uncaught exception in thread %u of workgroup (%u,%u,%u)", f->pos.linear, rt.group.x,
         rt.group.y, rt.group.z);
  }
  f->state = FState::Done;
  yield(f);
  __builtin_unreachable();
}

inline void alloc_stack(Fiber* f) {
  const size_t pg = page_size();
  size_t len = (rt.stack_bytes + pg - 1) / pg * pg + pg;
  void* m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) fail("cannot map a %zu-byte fiber stack: %s", len, std::strerror(errno));
  // The lowest page is a guard, so an overflow faults instead of corrupting.
  if (mprotect(m, pg, PROT_NONE) != 0) fail("mprotect: %s", std::strerror(errno));
  f->map = static_cast<char*>(m);
  f->map_len = len;
}

// Prepares f to start the per-thread function from the top of its stack.
inline void reset_fiber(Fiber* f) {
  char* lo = f->map + page_size();
  char* hi = f->map + f->map_len;
#if HOSTEMU_ASM_SWITCH
  void** top = reinterpret_cast<void**>(hi);  // page aligned, so 16-byte aligned
  top[-1] = nullptr;                         // fake return address: ends backtraces
  top[-2] = reinterpret_cast<void*>(&fiber_entry);
  for (int i = 3; i <= 8; i++) top[-i] = nullptr;  // rbp rbx r12 r13 r14 r15
  uint32_t* csr = reinterpret_cast<uint32_t*>(top - 9);
  csr[0] = __builtin_ia32_stmxcsr();  // same rounding / FTZ state as the host
  csr[1] = 0x037F;                    // x87 default control word
  f->sp = top - 9;
#else
  if (getcontext(&f->uc) != 0) fail("getcontext failed");
  f->uc.uc_stack.ss_sp = lo;
  f->uc.uc_stack.ss_size = size_t(hi - lo);
  f->uc.uc_link = nullptr;
  makecontext(&f->uc, &fiber_entry_uc, 0);
#endif
  (void)lo;
}

inline Fiber* self(const char* what) {
  if (!rt.running) fail("%s called outside a kernel launch", what);
  return rt.running;
}

inline void sg_complete(SgState& s, const ThreadPos& p) {
  const unsigned base = p.sg_index * p.sg_width;
  uint64_t vote = 0;
  if (s.kind == Wait::SgBallot)
    for (unsigned i = 0; i < p.sg_size; i++)
      if (rt.fibers[base + i]->in[0]) vote |= uint64_t(1) << i;
  for (unsigned i = 0; i < p.sg_size; i++) {
    Fiber* g = rt.fibers[base + i].get();
    if (s.kind == Wait::SgShuffle) std::memcpy(g->out, rt.fibers[base + g->src]->in, sizeof g->out);
    if (s.kind == Wait::SgBallot) std::memcpy(g->out, &vote, sizeof vote);
    g->state = FState::Runnable;
    g->wait = Wait::None;
  }
  s.arrived = 0;
}

// Blocks the calling fiber until every lane of its subgroup reaches the same
// collective; the last lane to arrive computes everyone's result.
inline void sg_arrive(Fiber* f, Wait kind, const char* what, Loc loc) {
  SgState& s = rt.sgs[f->pos.sg_index];
  if (s.arrived == 0) {
    s.kind = kind;
    s.loc = loc;
    s.what = what;
  } else if (s.kind != kind || !same_loc(s.loc, loc)) {
    fail("lanes of subgroup %u in workgroup (%u,%u,%u) wait at different collectives: %s at %s:%u and %s at %s:%u",
         f->pos.sg_index, rt.group.x, rt.group.y, rt.group.z, s.what, s.loc.file, s.loc.line, what, loc.file,
         loc.line);
  }
  f->state = FState::Waiting;
  f->wait = kind;
  if (++s.arrived == f->pos.sg_size) sg_complete(s, f->pos);
  yield(f);
}

inline void diagnose_stall() {
  unsigned done = 0, at_barrier = 0, at_sg = 0;
  const SgState* sg = nullptr;
  unsigned sg_i = 0;
  for (unsigned i = 0; i < rt.nthreads; i++) {
    Fiber* f = rt.fibers[i].get();
    if (f->state == FState::Done) done++;
    else if (f->wait == Wait::Barrier) at_barrier++;
    else {
      at_sg++;
      if (!sg) {
        sg_i = f->pos.sg_index;
        sg = &rt.sgs[sg_i];
      }
    }
  }
  const u3 g = rt.group;
  if (at_barrier > 0) {
    char extra[512];
    int n = std::snprintf(extra, sizeof extra, "barrier at %s:%u; %u exited", rt.barrier_loc.file,
                          rt.barrier_loc.line, done);
    if (sg && n > 0 && size_t(n) < sizeof extra)
      std::snprintf(extra + n, sizeof extra - size_t(n), "; %u waiting at %s at %s:%u", at_sg, sg->what,
                    sg->loc.file, sg->loc.line);
    fail("barrier not reached by every thread of workgroup (%u,%u,%u): %u of %u arrived (%s)", g.x, g.y, g.z,
         at_barrier, rt.nthreads, extra);
  }
  const unsigned base = sg_i * rt.sg_width;
  const unsigned size = rt.fibers[base]->pos.sg_size;
  unsigned exited = 0;
  for (unsigned i = 0; i < size; i++)
    if (rt.fibers[base + i]->state == FState::Done) exited++;
  fail("%s at %s:%u not reached by every lane of subgroup %u of workgroup (%u,%u,%u): %u of %u arrived (%u exited)",
       sg->what, sg->loc.file, sg->loc.line, sg_i, g.x, g.y, g.z, sg->arrived, size, exited);
}

inline void run_workgroup() {
  for (;;) {
    bool ran = false;
    for (unsigned i = 0; i < rt.nthreads; i++) {
      Fiber* f = rt.fibers[i].get();
      if (f->state != FState::Runnable) continue;
      ran = true;
      rt.running = f;
      g_pos = &f->pos;
      switch_to(f);
    }
    if (!ran) break;
  }
  rt.running = nullptr;
  g_pos = nullptr;
  for (unsigned i = 0; i < rt.nthreads; i++)
    if (rt.fibers[i]->state != FState::Done) diagnose_stall();
}

inline void run_launch(std::string_view name, u3 groups, u3 threads, void (*fn)(void*), void* ctx) {
  if (rt.in_launch) fail("kernel %.*s launched from inside a kernel", int(name.size()), name.data());
  rt.kernel_name.assign(name);
  rt.in_launch = true;
  // One line per change of kernel, so the driver can name the kernel a
  // watchdog timeout interrupted without flooding stderr.
  if (rt.kernel_name != rt.last_traced) {
    std::fprintf(stderr, "hostemu: launch %s\n", rt.kernel_name.c_str());
    std::fflush(stderr);
    rt.last_traced = rt.kernel_name;
  }
  const uint64_t n = uint64_t(threads.x) * threads.y * threads.z;
  if (n == 0 || uint64_t(groups.x) * groups.y * groups.z == 0)
    fail("empty launch: grid (%u,%u,%u) of workgroups (%u,%u,%u)", groups.x, groups.y, groups.z, threads.x,
         threads.y, threads.z);
  if (n > 1024)
    fail("workgroup of %llu threads (%u,%u,%u) is out of range: at most 1024", (unsigned long long)n, threads.x,
         threads.y, threads.z);
  const unsigned sg = rt.sg_width;
  rt.nthreads = unsigned(n);
  while (rt.fibers.size() < n) {
    rt.fibers.push_back(std::make_unique<Fiber>());
    alloc_stack(rt.fibers.back().get());
  }
  const unsigned nsg = (rt.nthreads + sg - 1) / sg;
  rt.sgs.assign(nsg, SgState{});
  rt.fn = fn;
  rt.fn_ctx = ctx;
  for (unsigned gz = 0; gz < groups.z; gz++)
    for (unsigned gy = 0; gy < groups.y; gy++)
      for (unsigned gx = 0; gx < groups.x; gx++) {
        rt.group = {gx, gy, gz};
        rt.barrier_arrived = 0;
        for (auto& s : rt.sgs) s = SgState{};
        for (unsigned i = 0; i < rt.nthreads; i++) {
          Fiber* f = rt.fibers[i].get();
          ThreadPos& p = f->pos;
          p.tid = {i % threads.x, (i / threads.x) % threads.y, i / (threads.x * threads.y)};
          p.gid = rt.group;
          p.bdim = threads;
          p.gdim = groups;
          p.linear = i;
          p.nthreads = rt.nthreads;
          p.lane = i % sg;
          p.sg_index = i / sg;
          p.sg_width = sg;
          p.sg_size = std::min(sg, rt.nthreads - p.sg_index * sg);
          p.num_sg = nsg;
          f->state = FState::Runnable;
          f->wait = Wait::None;
          reset_fiber(f);
        }
        run_workgroup();
      }
  rt.in_launch = false;
}

template <class T>
inline void check_exchangeable() {
  static_assert(std::is_trivially_copyable_v<T>, "subgroup collectives need a trivially copyable type");
  static_assert(sizeof(T) <= 16, "subgroup collectives carry at most 16 bytes");
}

}  // namespace detail

using loc = std::source_location;

// The calling thread's position. Fails outside a launch.
inline const ThreadPos& pos(const char* what = "thread position") {
  if (!detail::g_pos) detail::fail("%s used outside a kernel launch", what);
  return *detail::g_pos;
}

// Subgroup width for the next launches (set from the job by main; a harness may
// change it between launches).
inline unsigned subgroup_width() { return detail::rt.sg_width; }
inline void set_subgroup_width(unsigned w) {
  if (w == 0 || w > 64 || (w & (w - 1)) != 0) detail::fail("subgroup width %u: want a power of two in 1..64", w);
  if (detail::rt.in_launch) detail::fail("subgroup width changed inside a launch");
  detail::rt.sg_width = w;
}

// Workgroup barrier: every thread of the workgroup must reach this same call.
inline void barrier(const char* what, loc l = loc::current()) {
  using namespace detail;
  Fiber* f = self(what);
  Loc here = loc_of(l);
  if (rt.barrier_arrived == 0) rt.barrier_loc = here;
  else if (!same_loc(rt.barrier_loc, here))
    fail("threads of workgroup (%u,%u,%u) wait at different barriers: %s:%u and %s:%u", rt.group.x, rt.group.y,
         rt.group.z, rt.barrier_loc.file, rt.barrier_loc.line, here.file, here.line);
  f->state = FState::Waiting;
  f->wait = Wait::Barrier;
  if (++rt.barrier_arrived == rt.nthreads) {
    for (unsigned i = 0; i < rt.nthreads; i++) {
      rt.fibers[i]->state = FState::Runnable;
      rt.fibers[i]->wait = Wait::None;
    }
    rt.barrier_arrived = 0;
  }
  yield(f);
}

// Subgroup barrier: every lane of the caller's subgroup must reach this call.
inline void subgroup_barrier(const char* what, loc l = loc::current()) {
  using namespace detail;
  sg_arrive(self(what), Wait::SgSync, what, loc_of(l));
}

// Every lane passes a value and the index of the lane it reads (src < the
// subgroup's lane count); each gets that lane's value.
template <class T>
inline T shuffle(T v, unsigned src, const char* what, loc l = loc::current()) {
  using namespace detail;
  check_exchangeable<T>();
  Fiber* f = self(what);
  if (src >= f->pos.sg_size)
    fail("%s at %s:%u: lane %u of subgroup %u in workgroup (%u,%u,%u) reads lane %u, but the subgroup has %u lanes",
         what, l.file_name(), unsigned(l.line()), f->pos.lane, f->pos.sg_index, rt.group.x, rt.group.y, rt.group.z,
         src, f->pos.sg_size);
  std::memcpy(f->in, &v, sizeof(T));
  f->src = src;
  sg_arrive(f, Wait::SgShuffle, what, loc_of(l));
  T r;
  std::memcpy(&r, f->out, sizeof(T));
  return r;
}

// Lane l gets lane l^mask's value.
template <class T>
inline T shuffle_xor(T v, unsigned mask, const char* what, loc l = loc::current()) {
  return shuffle(v, pos(what).lane ^ mask, what, l);
}

// CUDA's segmented xor shuffle: lanes exchange within aligned segments of
// `width` lanes; a source in a later segment yields the caller's own value.
template <class T>
inline T shuffle_xor_width(T v, unsigned mask, unsigned width, const char* what, loc l = loc::current()) {
  const ThreadPos& p = pos(what);
  if (width == 0 || width > p.sg_width || (width & (width - 1)) != 0)
    detail::fail("%s at %s:%u: width %u is not a power of two in 1..%u", what, l.file_name(), unsigned(l.line()),
                 width, p.sg_width);
  unsigned src = p.lane ^ mask;
  if (src >= (p.lane & ~(width - 1)) + width) src = p.lane;
  return shuffle(v, src, what, l);
}

template <class T>
inline T broadcast(T v, unsigned lane, const char* what, loc l = loc::current()) {
  return shuffle(v, lane, what, l);
}

// Reduction over the subgroup in a fixed order, the xor butterfly:
//   for m = SG/2, SG/4, ..., 1:  x = op(x, shuffle_xor(x, m))
// Every lane ends with the same value when op is commutative (IEEE + is).
template <class T, class Op>
inline T butterfly(T v, Op op, const char* what, loc l = loc::current()) {
  const unsigned w = pos(what).sg_width;
  for (unsigned m = w / 2; m >= 1; m /= 2) v = op(v, shuffle_xor(v, m, what, l));
  return v;
}

template <class T>
inline T sum(T v, const char* what, loc l = loc::current()) {
  return butterfly(v, [](T a, T b) { return a + b; }, what, l);
}

// Bit i of the result is lane i's predicate.
inline uint64_t ballot(bool p, const char* what, loc l = loc::current()) {
  using namespace detail;
  Fiber* f = self(what);
  f->in[0] = p ? 1 : 0;
  sg_arrive(f, Wait::SgBallot, what, loc_of(l));
  uint64_t r;
  std::memcpy(&r, f->out, sizeof r);
  return r;
}

// Runs fn() once per thread of every workgroup. `name` names the kernel in
// every error message.
template <class F>
inline void launch(std::string_view name, u3 groups, u3 threads, F&& fn) {
  using Fn = std::remove_reference_t<F>;
  detail::run_launch(
      name, groups, threads, [](void* c) { (*static_cast<Fn*>(c))(); },
      const_cast<void*>(static_cast<const void*>(&fn)));
}

// Vectors shared by the MSL and SYCL skins: element-wise operators for any
// type deriving from vec_tag that has value_type, size and operator[].
struct vec_tag {};
template <class V>
concept hvec = std::is_base_of_v<vec_tag, V>;

#define HOSTEMU_VEC_BINOP(op)                                                                   \
  template <hvec V>                                                                             \
  inline V operator op(const V& a, const V& b) {                                                \
    V r;                                                                                        \
    for (int i = 0; i < V::size; i++) r[i] = a[i] op b[i];                                      \
    return r;                                                                                   \
  }                                                                                             \
  template <hvec V>                                                                             \
  inline V operator op(const V& a, typename V::value_type s) {                                  \
    V r;                                                                                        \
    for (int i = 0; i < V::size; i++) r[i] = a[i] op s;                                         \
    return r;                                                                                   \
  }                                                                                             \
  template <hvec V>                                                                             \
  inline V operator op(typename V::value_type s, const V& a) {                                  \
    V r;                                                                                        \
    for (int i = 0; i < V::size; i++) r[i] = s op a[i];                                         \
    return r;                                                                                   \
  }                                                                                             \
  template <hvec V>                                                                             \
  inline V& operator op##=(V & a, const V & b) {                                                \
    for (int i = 0; i < V::size; i++) a[i] = a[i] op b[i];                                      \
    return a;                                                                                   \
  }                                                                                             \
  template <hvec V>                                                                             \
  inline V& operator op##=(V & a, typename V::value_type s) {                                   \
    for (int i = 0; i < V::size; i++) a[i] = a[i] op s;                                         \
    return a;                                                                                   \
  }
HOSTEMU_VEC_BINOP(+)
HOSTEMU_VEC_BINOP(-)
HOSTEMU_VEC_BINOP(*)
HOSTEMU_VEC_BINOP(/)
#undef HOSTEMU_VEC_BINOP

template <hvec V>
inline V operator-(const V& a) {
  V r;
  for (int i = 0; i < V::size; i++) r[i] = -a[i];
  return r;
}
template <hvec V>
inline bool operator==(const V& a, const V& b) {
  for (int i = 0; i < V::size; i++)
    if (!(a[i] == b[i])) return false;
  return true;
}

// dot product, left to right without fusion: ((a0*b0 + a1*b1) + a2*b2) + a3*b3.
template <hvec V>
inline typename V::value_type vdot(const V& a, const V& b) {
  typename V::value_type s = a[0] * b[0];
  for (int i = 1; i < V::size; i++) s = s + a[i] * b[i];
  return s;
}

template <class V, class F>
inline V vmap(const V& a, F f) {
  V r;
  for (int i = 0; i < V::size; i++) r[i] = f(a[i]);
  return r;
}
template <class V, class F>
inline V vmap2(const V& a, const V& b, F f) {
  V r;
  for (int i = 0; i < V::size; i++) r[i] = f(a[i], b[i]);
  return r;
}

// ---- Jobs: the harness's inputs and outputs ----------------------------------

class Job {
 public:
  struct Arg {
    std::string name;
    uint32_t bits;
  };

  unsigned subgroup_width() const { return sg_width_; }

  bool has_arg(std::string_view name) const { return find_arg(name) != nullptr; }
  uint32_t arg_u32(std::string_view name) const { return need_arg(name)->bits; }
  int32_t arg_i32(std::string_view name) const { return int32_t(need_arg(name)->bits); }
  float arg_f32(std::string_view name) const { return std::bit_cast<float>(need_arg(name)->bits); }

  bool has_buffer(std::string_view name) const { return find_buf(name) != nullptr; }
  // The buffer's storage viewed as T; its byte size must be a multiple of sizeof(T).
  template <class T>
  T* buffer(std::string_view name) {
    detail::Guarded* b = need_buf(name);
    if (b->bytes % sizeof(T) != 0)
      detail::fail("job: buffer \"%s\" has %zu bytes, not a multiple of the %zu-byte element it is viewed as",
                   b->name.c_str(), b->bytes, sizeof(T));
    return reinterpret_cast<T*>(b->data);
  }
  // Element count (in the job's element size).
  size_t count(std::string_view name) const {
    const detail::Guarded* b = need_buf(name);
    return b->bytes / b->elem;
  }
  size_t bytes(std::string_view name) const { return need_buf(name)->bytes; }
  size_t elem_size(std::string_view name) const { return need_buf(name)->elem; }

  // Parses a job file (format in verify/hostemu/doc.go); buffers get guard pages.
  void load(const std::vector<unsigned char>& f);
  void write_results(const char* path) const;

 private:
  unsigned sg_width_ = 32;
  std::vector<Arg> args_;

  static std::vector<detail::Guarded>& bufs() { return detail::rt.buffers; }
  const Arg* find_arg(std::string_view n) const {
    for (auto& a : args_)
      if (a.name == n) return &a;
    return nullptr;
  }
  const Arg* need_arg(std::string_view n) const {
    if (auto a = find_arg(n)) return a;
    detail::fail("job: no scalar argument named \"%.*s\"", int(n.size()), n.data());
  }
  detail::Guarded* find_buf(std::string_view n) const {
    for (auto& b : bufs())
      if (b.name == n) return &b;
    return nullptr;
  }
  detail::Guarded* need_buf(std::string_view n) const {
    if (auto b = find_buf(n)) return b;
    detail::fail("job: no buffer named \"%.*s\"", int(n.size()), n.data());
  }
};

namespace detail {

// Maps `bytes` between two inaccessible pages, right-aligned to 16 bytes, so an
// access just past the end (or before the start) faults.
inline Guarded guarded_alloc(std::string name, size_t bytes, size_t elem) {
  const size_t pg = page_size();
  const size_t body = (bytes + 15) / 16 * 16;
  const size_t inner = (body + pg - 1) / pg * pg;
  const size_t len = inner + 2 * pg;
  void* m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) fail("job: cannot map %zu bytes for buffer \"%s\"", len, name.c_str());
  char* c = static_cast<char*>(m);
  if (mprotect(c, pg, PROT_NONE) != 0 || mprotect(c + pg + inner, pg, PROT_NONE) != 0)
    fail("mprotect: %s", std::strerror(errno));
  return Guarded{std::move(name), c, len, c + pg + inner - body, bytes, elem};
}

inline void fault_handler(int sig, siginfo_t* si, void*) {
  const char* addr = static_cast<const char*>(si->si_addr);
  char msg[1024];
  int n = 0;
  for (auto& b : rt.buffers) {
    const char* end = b.data + b.bytes;
    if (addr >= b.map && addr < b.data) {
      n = std::snprintf(msg, sizeof msg, "out-of-bounds access %td bytes before buffer \"%s\" (%zu bytes)",
                        b.data - addr, b.name.c_str(), b.bytes);
    } else if (addr >= end && addr < b.map + b.map_len) {
      n = std::snprintf(msg, sizeof msg, "out-of-bounds access %td bytes past the end of buffer \"%s\" (%zu bytes)",
                        addr - end, b.name.c_str(), b.bytes);
    }
    if (n) break;
  }
  if (!n)
    for (auto& f : rt.fibers)
      if (addr >= f->map && addr < f->map + page_size()) {
        n = std::snprintf(msg, sizeof msg,
                          "stack overflow in a kernel thread (fiber stacks are %zu KiB; set HOSTEMU_STACK_KB)",
                          rt.stack_bytes / 1024);
        break;
      }
  if (!n) {
    const char* what = sig == SIGFPE ? "arithmetic exception (integer division by zero?)" : "memory fault";
    std::snprintf(msg, sizeof msg, "%s at address %p", what, si->si_addr);
  }
  if (rt.running) {
    const ThreadPos& p = rt.running->pos;
    size_t len = std::strlen(msg);
    std::snprintf(msg + len, sizeof msg - len, " in thread (%u,%u,%u) of workgroup (%u,%u,%u)", p.tid.x, p.tid.y,
                  p.tid.z, p.gid.x, p.gid.y, p.gid.z);
  }
  fail("%s", msg);
}

inline void install_fault_handlers() {
  // The handler runs on its own stack: a fiber stack overflow leaves none.
  static std::vector<char> alt(1 << 16);
  stack_t ss{};
  ss.ss_sp = alt.data();
  ss.ss_size = alt.size();
  sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_sigaction = fault_handler;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, nullptr);
  sigaction(SIGBUS, &sa, nullptr);
  sigaction(SIGFPE, &sa, nullptr);
}

struct Reader {
  const std::vector<unsigned char>& f;
  size_t at = 0;
  void need(size_t n) {
    if (f.size() - at < n) fail("job: file truncated at byte %zu", at);
  }
  uint32_t u32() {
    need(4);
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= uint32_t(f[at + i]) << (8 * i);
    at += 4;
    return v;
  }
  uint64_t u64() {
    uint64_t lo = u32();
    return lo | uint64_t(u32()) << 32;
  }
  std::string str() {
    uint32_t n = u32();
    need(n);
    std::string s(reinterpret_cast<const char*>(f.data() + at), n);
    at += n;
    return s;
  }
};

inline void put_u32(std::string& o, uint32_t v) {
  for (int i = 0; i < 4; i++) o.push_back(char((v >> (8 * i)) & 0xff));
}

}  // namespace detail

inline void Job::load(const std::vector<unsigned char>& f) {
  detail::Reader r{f};
  r.need(4);
  if (std::memcmp(f.data(), "HEJB", 4) != 0) detail::fail("job: bad magic (want \"HEJB\")");
  r.at = 4;
  if (uint32_t v = r.u32(); v != 1) detail::fail("job: unsupported version %u", v);
  sg_width_ = r.u32();
  set_subgroup_width(sg_width_);
  for (uint32_t n = r.u32(), i = 0; i < n; i++) {
    std::string name = r.str();
    if (find_arg(name)) detail::fail("job: duplicate argument \"%s\"", name.c_str());
    args_.push_back({std::move(name), r.u32()});
  }
  for (uint32_t n = r.u32(), i = 0; i < n; i++) {
    std::string name = r.str();
    uint32_t es = r.u32();
    uint64_t count = r.u64();
    if (es != 1 && es != 2 && es != 4 && es != 8) detail::fail("job: buffer \"%s\": element size %u", name.c_str(), es);
    if (count > (uint64_t(1) << 40) / es) detail::fail("job: buffer \"%s\" is too large", name.c_str());
    if (find_buf(name)) detail::fail("job: duplicate buffer \"%s\"", name.c_str());
    size_t bytes = size_t(count * es);
    r.need(bytes);
    bufs().push_back(detail::guarded_alloc(name, bytes, es));
    std::memcpy(bufs().back().data, f.data() + r.at, bytes);
    r.at += bytes;
  }
  if (r.at != f.size()) detail::fail("job: %zu trailing bytes", f.size() - r.at);
}

inline void Job::write_results(const char* path) const {
  std::string o = "HERS";
  detail::put_u32(o, 1);
  detail::put_u32(o, uint32_t(bufs().size()));
  for (const auto& b : bufs()) {
    detail::put_u32(o, uint32_t(b.name.size()));
    o += b.name;
    detail::put_u32(o, uint32_t(b.elem));
    uint64_t count = b.bytes / b.elem;
    detail::put_u32(o, uint32_t(count));
    detail::put_u32(o, uint32_t(count >> 32));
    o.append(b.data, b.bytes);
  }
  FILE* fp = std::fopen(path, "wb");
  if (!fp || std::fwrite(o.data(), 1, o.size(), fp) != o.size() || std::fclose(fp) != 0)
    detail::fail("cannot write results to %s: %s", path, std::strerror(errno));
}

}  // namespace hostemu

// Defined by the generated harness: sets function constants, launches the
// kernels on the job's buffers.
void hostemu_run(hostemu::Job& job);

namespace hostemu {

// The generic main: hostemu <job file> <result file>. Exit 0 on success, 3 on
// any error detected by the runtime (message on stderr).
inline int run_main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s JOB RESULT\n", argc > 0 ? argv[0] : "hostemu");
    return 2;
  }
  if (const char* kb = std::getenv("HOSTEMU_STACK_KB")) {
    long v = std::strtol(kb, nullptr, 10);
    if (v < 16) detail::fail("HOSTEMU_STACK_KB=%s: want at least 16", kb);
    detail::rt.stack_bytes = size_t(v) * 1024;
  }
  detail::install_fault_handlers();
  std::vector<unsigned char> data;
  FILE* fp = std::fopen(argv[1], "rb");
  if (!fp) detail::fail("job: cannot open %s: %s", argv[1], std::strerror(errno));
  unsigned char chunk[1 << 16];
  for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, fp)) > 0;) data.insert(data.end(), chunk, chunk + n);
  std::fclose(fp);
  Job job;
  job.load(data);
  hostemu_run(job);
  job.write_results(argv[2]);
  return 0;
}

}  // namespace hostemu
