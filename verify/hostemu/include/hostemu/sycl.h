// hostemu SYCL skin: the part of SYCL 2020 that generated nd_range kernels use
// (queues, nd_item, sub-groups, group algorithms, local_accessor), compiled as
// host C++ over the hostemu core.
//
// Dimension order is SYCL's: in an nd_range<D>, dimension D-1 varies fastest,
// so for D = 3 the local linear id is i2 + r2*(i1 + r1*i0). The core's x axis is
// SYCL dimension D-1.
//
// The sub-group width is the job's subgroup width. Attributes such as
// [[sycl::reqd_sub_group_size(16)]] are ignored by the host compiler, so the
// driver must be told the width the kernel requires (Job.SubgroupWidth).
#pragma once

#include "core.h"

namespace sycl {

template <int D = 1>
struct range {
  size_t v[D];
  range(size_t a)
    requires(D == 1)
      : v{a} {}
  range(size_t a, size_t b)
    requires(D == 2)
      : v{a, b} {}
  range(size_t a, size_t b, size_t c)
    requires(D == 3)
      : v{a, b, c} {}
  size_t operator[](int d) const { return v[d]; }
  size_t& operator[](int d) { return v[d]; }
  size_t get(int d) const { return v[d]; }
  size_t size() const {
    size_t n = 1;
    for (int d = 0; d < D; d++) n *= v[d];
    return n;
  }
  operator size_t() const
    requires(D == 1)
  {
    return v[0];
  }
};

template <int D = 1>
struct id {
  size_t v[D] = {};
  id() = default;
  id(size_t a)
    requires(D == 1)
      : v{a} {}
  id(size_t a, size_t b)
    requires(D == 2)
      : v{a, b} {}
  id(size_t a, size_t b, size_t c)
    requires(D == 3)
      : v{a, b, c} {}
  size_t operator[](int d) const { return v[d]; }
  size_t& operator[](int d) { return v[d]; }
  size_t get(int d) const { return v[d]; }
  operator size_t() const
    requires(D == 1)
  {
    return v[0];
  }
};

template <int D = 1>
struct nd_range {
  range<D> global, local;
  nd_range(range<D> g, range<D> l) : global(g), local(l) {}
  range<D> get_global_range() const { return global; }
  range<D> get_local_range() const { return local; }
  range<D> get_group_range() const {
    range<D> r = global;
    for (int d = 0; d < D; d++) r[d] = global[d] / local[d];
    return r;
  }
};

namespace detail {
// SYCL dimension d of an nd_range<D> is core axis D-1-d (axis 0 = x, fastest).
template <int D>
inline unsigned axis(const hostemu::u3& v, int d) {
  const int a = D - 1 - d;
  return a == 0 ? v.x : (a == 1 ? v.y : v.z);
}
inline size_t linear(const hostemu::u3& i, const hostemu::u3& r) { return i.x + size_t(r.x) * (i.y + size_t(r.y) * i.z); }
}  // namespace detail

namespace access {
enum class fence_space { local_space, global_space, global_and_local };
enum class decorated { no, yes, legacy };
enum class address_space { global_space, local_space, constant_space, private_space, generic_space };
}  // namespace access
namespace memory_scope {}

template <int D = 1>
struct group {
  const hostemu::ThreadPos* p;
  size_t get_group_id(int d) const { return detail::axis<D>(p->gid, d); }
  id<D> get_group_id() const { return make([&](int d) { return get_group_id(d); }); }
  size_t get_local_id(int d) const { return detail::axis<D>(p->tid, d); }
  id<D> get_local_id() const { return make([&](int d) { return get_local_id(d); }); }
  size_t get_local_range(int d) const { return detail::axis<D>(p->bdim, d); }
  size_t get_group_range(int d) const { return detail::axis<D>(p->gdim, d); }
  size_t get_group_linear_id() const { return detail::linear(p->gid, p->gdim); }
  size_t get_local_linear_id() const { return p->linear; }
  size_t get_local_linear_range() const { return p->nthreads; }
  size_t get_group_linear_range() const { return size_t(p->gdim.x) * p->gdim.y * p->gdim.z; }
  size_t operator[](int d) const { return get_group_id(d); }

 private:
  template <class F>
  static id<D> make(F f) {
    id<D> r;
    for (int d = 0; d < D; d++) r[d] = f(d);
    return r;
  }
};

struct sub_group {
  const hostemu::ThreadPos* p;
  id<1> get_local_id() const { return id<1>(p->lane); }
  size_t get_local_linear_id() const { return p->lane; }
  range<1> get_local_range() const { return range<1>(p->sg_size); }
  size_t get_local_linear_range() const { return p->sg_size; }
  range<1> get_max_local_range() const { return range<1>(p->sg_width); }
  id<1> get_group_id() const { return id<1>(p->sg_index); }
  size_t get_group_linear_id() const { return p->sg_index; }
  range<1> get_group_range() const { return range<1>(p->num_sg); }
  size_t get_group_linear_range() const { return p->num_sg; }
};

template <int D = 1>
struct nd_item {
  const hostemu::ThreadPos* p;
  size_t get_global_id(int d) const {
    return size_t(detail::axis<D>(p->gid, d)) * detail::axis<D>(p->bdim, d) + detail::axis<D>(p->tid, d);
  }
  id<D> get_global_id() const { return make([&](int d) { return get_global_id(d); }); }
  size_t get_local_id(int d) const { return detail::axis<D>(p->tid, d); }
  id<D> get_local_id() const { return make([&](int d) { return get_local_id(d); }); }
  size_t get_group(int d) const { return detail::axis<D>(p->gid, d); }
  group<D> get_group() const { return group<D>{p}; }
  size_t get_local_range(int d) const { return detail::axis<D>(p->bdim, d); }
  size_t get_group_range(int d) const { return detail::axis<D>(p->gdim, d); }
  size_t get_global_range(int d) const { return size_t(detail::axis<D>(p->gdim, d)) * detail::axis<D>(p->bdim, d); }
  size_t get_local_linear_id() const { return p->linear; }
  size_t get_group_linear_id() const { return detail::linear(p->gid, p->gdim); }
  size_t get_global_linear_id() const {
    const hostemu::u3 g{p->gid.x * p->bdim.x + p->tid.x, p->gid.y * p->bdim.y + p->tid.y,
                        p->gid.z * p->bdim.z + p->tid.z};
    const hostemu::u3 r{p->gdim.x * p->bdim.x, p->gdim.y * p->bdim.y, p->gdim.z * p->bdim.z};
    return detail::linear(g, r);
  }
  sub_group get_sub_group() const { return sub_group{p}; }
  // SYCL 1.2.1 style barrier.
  void barrier(access::fence_space = access::fence_space::global_and_local,
               hostemu::loc l = hostemu::loc::current()) const {
    hostemu::barrier("nd_item::barrier", l);
  }

 private:
  template <class F>
  static id<D> make(F f) {
    id<D> r;
    for (int d = 0; d < D; d++) r[d] = f(d);
    return r;
  }
};

// For basic (range) parallel_for.
template <int D = 1>
struct item {
  id<D> i;
  range<D> r;
  size_t get_id(int d) const { return i[d]; }
  id<D> get_id() const { return i; }
  size_t get_range(int d) const { return r[d]; }
  range<D> get_range() const { return r; }
  size_t get_linear_id() const {
    size_t n = 0;
    for (int d = 0; d < D; d++) n = n * r[d] + i[d];
    return n;
  }
  size_t operator[](int d) const { return i[d]; }
  operator id<D>() const { return i; }
  operator size_t() const
    requires(D == 1)
  {
    return i[0];
  }
};

// ---- group functions ----------------------------------------------------------

template <int D>
inline void group_barrier(group<D>, hostemu::loc l = hostemu::loc::current()) {
  hostemu::barrier("group_barrier", l);
}
inline void group_barrier(sub_group, hostemu::loc l = hostemu::loc::current()) {
  hostemu::subgroup_barrier("group_barrier(sub_group)", l);
}

// Lane l gets lane l^mask's value; l^mask must be a lane of the sub-group.
template <class T>
inline T permute_group_by_xor(sub_group, T x, size_t mask, hostemu::loc l = hostemu::loc::current()) {
  return hostemu::shuffle(x, hostemu::pos().lane ^ unsigned(mask), "permute_group_by_xor", l);
}
template <class T>
inline T select_from_group(sub_group, T x, size_t lane, hostemu::loc l = hostemu::loc::current()) {
  return hostemu::shuffle(x, unsigned(lane), "select_from_group", l);
}
template <class T>
inline T group_broadcast(sub_group, T x, size_t lane = 0, hostemu::loc l = hostemu::loc::current()) {
  return hostemu::broadcast(x, unsigned(lane), "group_broadcast", l);
}
// Lanes past the end get their own value (SYCL leaves them unspecified).
template <class T>
inline T shift_group_left(sub_group, T x, size_t delta = 1, hostemu::loc l = hostemu::loc::current()) {
  const hostemu::ThreadPos& p = hostemu::pos();
  return hostemu::shuffle(x, p.lane + delta < p.sg_size ? p.lane + unsigned(delta) : p.lane, "shift_group_left", l);
}
template <class T>
inline T shift_group_right(sub_group, T x, size_t delta = 1, hostemu::loc l = hostemu::loc::current()) {
  const hostemu::ThreadPos& p = hostemu::pos();
  return hostemu::shuffle(x, p.lane >= delta ? p.lane - unsigned(delta) : p.lane, "shift_group_right", l);
}

template <class T = void>
struct plus {
  T operator()(const T& a, const T& b) const { return a + b; }
};
template <>
struct plus<void> {
  template <class T>
  T operator()(const T& a, const T& b) const {
    return a + b;
  }
};
template <class T = void>
struct multiplies {
  template <class U>
  U operator()(const U& a, const U& b) const {
    return a * b;
  }
};
template <class T = void>
struct maximum {
  template <class U>
  U operator()(const U& a, const U& b) const {
    if constexpr (std::is_floating_point_v<U>) return std::fmax(a, b);
    else return a < b ? b : a;
  }
};
template <class T = void>
struct minimum {
  template <class U>
  U operator()(const U& a, const U& b) const {
    if constexpr (std::is_floating_point_v<U>) return std::fmin(a, b);
    else return b < a ? b : a;
  }
};
template <class T = void>
struct bit_or {
  template <class U>
  U operator()(const U& a, const U& b) const {
    return a | b;
  }
};
template <class T = void>
struct bit_and {
  template <class U>
  U operator()(const U& a, const U& b) const {
    return a & b;
  }
};
template <class T = void>
struct bit_xor {
  template <class U>
  U operator()(const U& a, const U& b) const {
    return a ^ b;
  }
};

// Sub-group reduction in the core's butterfly order: for m = SG/2 .. 1,
// x = op(x, permute_group_by_xor(x, m)).
template <class T, class Op>
inline T reduce_over_group(sub_group, T x, Op op, hostemu::loc l = hostemu::loc::current()) {
  return hostemu::butterfly(x, [&op](T a, T b) { return T(op(a, b)); }, "reduce_over_group", l);
}
inline bool any_of_group(sub_group, bool p, hostemu::loc l = hostemu::loc::current()) {
  return hostemu::ballot(p, "any_of_group", l) != 0;
}
inline bool all_of_group(sub_group, bool p, hostemu::loc l = hostemu::loc::current()) {
  const hostemu::ThreadPos& q = hostemu::pos();
  const uint64_t all = q.sg_size == 64 ? ~uint64_t(0) : (uint64_t(1) << q.sg_size) - 1;
  return hostemu::ballot(p, "all_of_group", l) == all;
}
inline bool none_of_group(sub_group sg, bool p, hostemu::loc l = hostemu::loc::current()) {
  return !any_of_group(sg, p, l);
}

// ---- vectors and math ------------------------------------------------------------

template <class T, int N>
struct vec : hostemu::vec_tag {
  using value_type = T;
  using element_type = T;
  static constexpr int size = N;
  alignas((N == 3 ? 4 : N) * sizeof(T)) T e[N == 3 ? 4 : N];

  vec() = default;
  vec(T s) {
    for (int i = 0; i < N; i++) e[i] = s;
  }
  template <class... A>
    requires(sizeof...(A) == N && N >= 2 && (std::is_arithmetic_v<A> && ...))
  vec(A... a) : e{T(a)...} {}

  T& operator[](int i) { return e[i]; }
  const T& operator[](int i) const { return e[i]; }
  T& x() { return e[0]; }
  T& y() { return e[1]; }
  T& z() { return e[2]; }
  T& w() { return e[3]; }
  const T& x() const { return e[0]; }
  const T& y() const { return e[1]; }
  const T& z() const { return e[2]; }
  const T& w() const { return e[3]; }
  T& s0() { return e[0]; }
  T& s1() { return e[1]; }
  T& s2() { return e[2]; }
  T& s3() { return e[3]; }
  static constexpr size_t get_count() { return N; }
  static constexpr size_t get_size() { return sizeof(vec); }
  template <class U>
  vec<U, N> convert() const {
    vec<U, N> r;
    for (int i = 0; i < N; i++) r[i] = U(e[i]);
    return r;
  }
};

#define HOSTEMU_SYCL_VEC(T, n) \
  using n##2 = vec<T, 2>;      \
  using n##3 = vec<T, 3>;      \
  using n##4 = vec<T, 4>;
HOSTEMU_SYCL_VEC(float, float)
HOSTEMU_SYCL_VEC(double, double)
HOSTEMU_SYCL_VEC(int, int)
HOSTEMU_SYCL_VEC(unsigned, uint)
HOSTEMU_SYCL_VEC(short, short)
HOSTEMU_SYCL_VEC(unsigned short, ushort)
#undef HOSTEMU_SYCL_VEC

template <hostemu::hvec V>
inline typename V::value_type dot(const V& a, const V& b) {
  return hostemu::vdot(a, b);
}
inline float dot(float a, float b) { return a * b; }

template <class T>
concept real = std::is_floating_point_v<T>;

#define HOSTEMU_SYCL_F1(name, expr)                                           \
  template <real T>                                                           \
  inline T name(T x) {                                                        \
    return expr;                                                              \
  }                                                                           \
  template <hostemu::hvec V>                                                  \
    requires real<typename V::value_type>                                     \
  inline V name(const V& v) {                                                 \
    return hostemu::vmap(v, [](typename V::value_type x) { return name(x); }); \
  }
HOSTEMU_SYCL_F1(exp, std::exp(x))
HOSTEMU_SYCL_F1(exp2, std::exp2(x))
HOSTEMU_SYCL_F1(exp10, std::pow(T(10), x))
HOSTEMU_SYCL_F1(log, std::log(x))
HOSTEMU_SYCL_F1(log2, std::log2(x))
HOSTEMU_SYCL_F1(sqrt, std::sqrt(x))
HOSTEMU_SYCL_F1(rsqrt, T(1) / std::sqrt(x))
HOSTEMU_SYCL_F1(fabs, std::fabs(x))
HOSTEMU_SYCL_F1(floor, std::floor(x))
HOSTEMU_SYCL_F1(ceil, std::ceil(x))
HOSTEMU_SYCL_F1(round, std::round(x))
HOSTEMU_SYCL_F1(trunc, std::trunc(x))
HOSTEMU_SYCL_F1(tanh, std::tanh(x))
HOSTEMU_SYCL_F1(sin, std::sin(x))
HOSTEMU_SYCL_F1(cos, std::cos(x))
#undef HOSTEMU_SYCL_F1

template <real T>
inline T fma(T a, T b, T c) {
  return std::fma(a, b, c);
}
template <real T>
inline T fmin(T a, T b) {
  return std::fmin(a, b);
}
template <real T>
inline T fmax(T a, T b) {
  return std::fmax(a, b);
}
template <real T>
inline T pow(T a, T b) {
  return std::pow(a, b);
}
template <class T>
  requires std::is_arithmetic_v<T>
inline T min(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return std::fmin(a, b);
  else return b < a ? b : a;
}
template <class T>
  requires std::is_arithmetic_v<T>
inline T max(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return std::fmax(a, b);
  else return a < b ? b : a;
}
template <class T>
  requires std::is_arithmetic_v<T>
inline T clamp(T x, T lo, T hi) {
  return min(max(x, lo), hi);
}
template <class T>
  requires std::is_integral_v<T>
inline T abs(T x) {
  return x < 0 ? T(-x) : x;
}
template <class To, class From>
inline To bit_cast(const From& f) {
  return std::bit_cast<To>(f);
}

// native:: functions are device approximations; the host uses the precise ones.
namespace native {
using sycl::exp, sycl::exp2, sycl::log, sycl::log2, sycl::sqrt, sycl::rsqrt, sycl::sin, sycl::cos;
template <real T>
inline T divide(T a, T b) {
  return a / b;
}
template <real T>
inline T recip(T a) {
  return T(1) / a;
}
}  // namespace native

// ---- queues and handlers -----------------------------------------------------------

struct event {
  void wait() {}
  void wait_and_throw() {}
  static void wait(const std::vector<event>&) {}
};

namespace detail {
inline std::string& scope_name() {
  static std::string s;
  return s;
}
template <class T>
constexpr std::string_view type_name() {
  std::string_view p = __PRETTY_FUNCTION__;
  size_t b = p.find("T = ");
  if (b == std::string_view::npos) return "sycl_kernel";
  b += 4;
  size_t e = p.find_first_of(";]", b);
  // Drop the enclosing scopes (a kernel name class declared in a function is
  // local to it): keep what follows the last top-level "::".
  int depth = 0;
  for (size_t i = b; i + 1 < e; i++) {
    const char c = p[i];
    if (c == '<' || c == '(') depth++;
    else if (c == '>' || c == ')') depth--;
    else if (depth == 0 && c == ':' && p[i + 1] == ':') b = i + 2;
  }
  return p.substr(b, e - b);
}
struct unnamed_kernel;

template <class Name>
inline std::string kernel_name() {
  if constexpr (!std::is_same_v<Name, unnamed_kernel>) return std::string(type_name<Name>());
  else if (!scope_name().empty()) return scope_name();
  else return "sycl_kernel";
}

template <class Name, int D, class F>
inline void run_nd(const nd_range<D>& r, const F& f) {
  hostemu::u3 g{1, 1, 1}, l{1, 1, 1};
  unsigned* ga[3] = {&g.x, &g.y, &g.z};
  unsigned* la[3] = {&l.x, &l.y, &l.z};
  const std::string name = kernel_name<Name>();
  for (int d = 0; d < D; d++) {
    if (r.local[d] == 0 || r.global[d] % r.local[d] != 0 || r.global[d] / r.local[d] > 0xffffffffu)
      hostemu::detail::fail("kernel %s: nd_range global size %zu in dimension %d is not a multiple of local size %zu",
                            name.c_str(), r.global[d], d, r.local[d]);
    *ga[D - 1 - d] = unsigned(r.global[d] / r.local[d]);
    *la[D - 1 - d] = unsigned(r.local[d]);
  }
  hostemu::launch(name, g, l, [&f] { f(nd_item<D>{&hostemu::pos()}); });
}

// Basic parallel_for: one work-item per workgroup, since such kernels may not
// use barriers or sub-group functions anyway.
template <class Name, int D, class F>
inline void run_range(const range<D>& r, const F& f) {
  hostemu::u3 g{1, 1, 1};
  unsigned* ga[3] = {&g.x, &g.y, &g.z};
  for (int d = 0; d < D; d++) *ga[D - 1 - d] = unsigned(r[d]);
  hostemu::launch(kernel_name<Name>(), g, hostemu::u3{1, 1, 1}, [&f, &r] {
    const hostemu::ThreadPos& p = hostemu::pos();
    item<D> it{id<D>{}, r};
    for (int d = 0; d < D; d++) it.i[d] = detail::axis<D>(p.gid, d);
    f(it);
  });
}
}  // namespace detail

class handler {
 public:
  template <class Name = detail::unnamed_kernel, int D, class F>
  void parallel_for(nd_range<D> r, const F& f) {
    detail::run_nd<Name>(r, f);
  }
  template <class Name = detail::unnamed_kernel, int D, class F>
  void parallel_for(range<D> r, const F& f) {
    detail::run_range<Name>(r, f);
  }
  template <class Name = detail::unnamed_kernel, class F>
  void single_task(const F& f) {
    detail::run_range<Name>(range<1>(1), [&f](item<1>) { f(); });
  }
  void depends_on(const event&) {}
  void depends_on(const std::vector<event>&) {}
};

class queue {
 public:
  queue() = default;
  template <class... A>
  explicit queue(A&&...) {}
  template <class F>
  event submit(F f) {
    handler h;
    f(h);
    return {};
  }
  template <class Name = detail::unnamed_kernel, int D, class F>
  event parallel_for(nd_range<D> r, const F& f) {
    detail::run_nd<Name>(r, f);
    return {};
  }
  template <class Name = detail::unnamed_kernel, int D, class F>
  event parallel_for(range<D> r, const F& f) {
    detail::run_range<Name>(r, f);
    return {};
  }
  template <class Name = detail::unnamed_kernel, class F>
  event single_task(const F& f) {
    detail::run_range<Name>(range<1>(1), [&f](item<1>) { f(); });
    return {};
  }
  event memcpy(void* dst, const void* src, size_t n) {
    std::memcpy(dst, src, n);
    return {};
  }
  event memset(void* dst, int v, size_t n) {
    std::memset(dst, v, n);
    return {};
  }
  template <class T>
  event fill(T* dst, const T& v, size_t n) {
    std::fill(dst, dst + n, v);
    return {};
  }
  void wait() {}
  void wait_and_throw() {}
};

// Work-group local memory. Workgroups run one at a time, so one allocation made
// when the accessor is constructed serves every workgroup of the launch.
template <class T, int D = 1>
class local_accessor {
 public:
  local_accessor(range<D> r, handler&) : r_(r), mem_(new T[r.size()]()) {}
  T& operator[](size_t i) const
    requires(D == 1)
  {
    return mem_[i];
  }
  T& operator[](id<D> i) const {
    size_t n = 0;
    for (int d = 0; d < D; d++) n = n * r_[d] + i[d];
    return mem_[n];
  }
  // No get_pointer / get_multi_ptr: AdaptiveCpp's local_accessor (24.06)
  // has no get_multi_ptr and DPC++ deprecates get_pointer, so kernelgen's
  // own SYCL takes local memory as &acc[0], which both have.
  range<D> get_range() const { return r_; }
  size_t size() const { return r_.size(); }

 private:
  range<D> r_;
  std::shared_ptr<T[]> mem_;
};

}  // namespace sycl

namespace hostemu::sycl {
// Names the kernels that `body` launches without an explicit SYCL kernel name,
// for error messages: hostemu::sycl::launch("gdn", [&]{ gdn_launch(q, ...); }).
template <class F>
inline void launch(std::string_view name, F&& body) {
  std::string saved = ::sycl::detail::scope_name();
  ::sycl::detail::scope_name().assign(name);
  body();
  ::sycl::detail::scope_name() = saved;
}
}  // namespace hostemu::sycl
