// hostemu MSL skin: enough of the Metal Shading Language for generated compute
// kernels to compile unmodified as host C++ over the hostemu core.
//
// What is only tolerated, not checked: address spaces are empty macros except
// `threadgroup`, attributes ([[buffer(n)]], [[thread_position_in_threadgroup]],
// [[host_name]], [[function_constant(n)]], ...) are ignored (-Wno-attributes).
// Vector types are plain structs; vector-to-vector conversions are explicit as
// in MSL, a scalar converts to a vector implicitly.
#pragma once

#include "core.h"

namespace metal {

typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned char uchar;
typedef unsigned long ulong;

template <class T, int N>
struct vec_base;
template <class T>
struct alignas(2 * sizeof(T)) vec_base<T, 2> : hostemu::vec_tag {
  T x, y;
};
// 3-vectors have the size and alignment of 4-vectors, as in MSL.
template <class T>
struct alignas(4 * sizeof(T)) vec_base<T, 3> : hostemu::vec_tag {
  T x, y, z;
};
template <class T>
struct alignas(4 * sizeof(T)) vec_base<T, 4> : hostemu::vec_tag {
  T x, y, z, w;
};

template <class T, int N>
struct vec : vec_base<T, N> {
  using value_type = T;
  static constexpr int size = N;

  vec() = default;
  vec(T s) {
    for (int i = 0; i < N; i++) (*this)[i] = s;
  }
  template <class... A>
    requires(sizeof...(A) == N && N >= 2 && (std::is_arithmetic_v<A> && ...))
  vec(A... a) {
    const T t[N] = {T(a)...};
    for (int i = 0; i < N; i++) (*this)[i] = t[i];
  }
  vec(const vec<T, 2>& a, T b)
    requires(N == 3)
  {
    set(a.x, a.y, b);
  }
  vec(T a, const vec<T, 2>& b)
    requires(N == 3)
  {
    set(a, b.x, b.y);
  }
  vec(const vec<T, 2>& a, const vec<T, 2>& b)
    requires(N == 4)
  {
    set(a.x, a.y, b.x, b.y);
  }
  vec(const vec<T, 3>& a, T b)
    requires(N == 4)
  {
    set(a.x, a.y, a.z, b);
  }
  vec(const vec<T, 2>& a, T b, T c)
    requires(N == 4)
  {
    set(a.x, a.y, b, c);
  }
  template <class U>
    requires(!std::is_same_v<U, T>)
  explicit vec(const vec<U, N>& o) {
    for (int i = 0; i < N; i++) (*this)[i] = T(o[i]);
  }

  T& operator[](int i) {
    switch (i) {
      case 0: return this->x;
      case 1: return this->y;
      case 2: if constexpr (N > 2) return this->z; [[fallthrough]];
      default: if constexpr (N > 3) return this->w; else return this->x;
    }
  }
  const T& operator[](int i) const { return const_cast<vec&>(*this)[i]; }

 private:
  template <class... A>
  void set(A... a) {
    const T t[N] = {a...};
    for (int i = 0; i < N; i++) (*this)[i] = t[i];
  }
};

#define HOSTEMU_MSL_VEC(T, n) \
  typedef vec<T, 2> n##2;     \
  typedef vec<T, 3> n##3;     \
  typedef vec<T, 4> n##4;
HOSTEMU_MSL_VEC(float, float)
HOSTEMU_MSL_VEC(int, int)
HOSTEMU_MSL_VEC(unsigned, uint)
HOSTEMU_MSL_VEC(short, short)
HOSTEMU_MSL_VEC(unsigned short, ushort)
HOSTEMU_MSL_VEC(signed char, char)
HOSTEMU_MSL_VEC(unsigned char, uchar)
HOSTEMU_MSL_VEC(long, long)
HOSTEMU_MSL_VEC(unsigned long, ulong)
HOSTEMU_MSL_VEC(bool, bool)
#undef HOSTEMU_MSL_VEC

template <hostemu::hvec V>
  requires std::is_floating_point_v<typename V::value_type>
inline typename V::value_type dot(const V& a, const V& b) {
  return hostemu::vdot(a, b);
}

template <class T>
concept fvec = hostemu::hvec<T> && std::is_same_v<typename T::value_type, float>;

// Float math: scalar float overloads (the global C functions keep the double
// ones) plus element-wise float vectors.
#define HOSTEMU_MSL_F1(name, expr)                                             \
  inline float name(float x) { return expr; }                                  \
  template <fvec V>                                                            \
  inline V name(const V& v) {                                                  \
    return hostemu::vmap(v, [](float x) { return name(x); });                  \
  }
HOSTEMU_MSL_F1(exp, std::exp(x))
HOSTEMU_MSL_F1(exp2, std::exp2(x))
HOSTEMU_MSL_F1(exp10, std::pow(10.0f, x))
HOSTEMU_MSL_F1(log, std::log(x))
HOSTEMU_MSL_F1(log2, std::log2(x))
HOSTEMU_MSL_F1(sqrt, std::sqrt(x))
HOSTEMU_MSL_F1(rsqrt, 1.0f / std::sqrt(x))
HOSTEMU_MSL_F1(fabs, std::fabs(x))
HOSTEMU_MSL_F1(abs, std::fabs(x))
HOSTEMU_MSL_F1(floor, std::floor(x))
HOSTEMU_MSL_F1(ceil, std::ceil(x))
HOSTEMU_MSL_F1(round, std::round(x))
HOSTEMU_MSL_F1(rint, std::rint(x))
HOSTEMU_MSL_F1(trunc, std::trunc(x))
HOSTEMU_MSL_F1(tanh, std::tanh(x))
HOSTEMU_MSL_F1(sin, std::sin(x))
HOSTEMU_MSL_F1(cos, std::cos(x))
HOSTEMU_MSL_F1(saturate, x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x))
HOSTEMU_MSL_F1(sign, x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x))
#undef HOSTEMU_MSL_F1

#define HOSTEMU_MSL_F2(name, expr)                                             \
  inline float name(float x, float y) { return expr; }                         \
  template <fvec V>                                                            \
  inline V name(const V& a, const V& b) {                                      \
    return hostemu::vmap2(a, b, [](float x, float y) { return name(x, y); });  \
  }
HOSTEMU_MSL_F2(fmin, std::fmin(x, y))
HOSTEMU_MSL_F2(fmax, std::fmax(x, y))
HOSTEMU_MSL_F2(pow, std::pow(x, y))
HOSTEMU_MSL_F2(powr, std::pow(x, y))
HOSTEMU_MSL_F2(fmod, std::fmod(x, y))
HOSTEMU_MSL_F2(step, y < x ? 0.0f : 1.0f)
#undef HOSTEMU_MSL_F2

inline float fma(float a, float b, float c) { return std::fma(a, b, c); }
template <fvec V>
inline V fma(const V& a, const V& b, const V& c) {
  V r;
  for (int i = 0; i < V::size; i++) r[i] = std::fma(a[i], b[i], c[i]);
  return r;
}
inline float mix(float a, float b, float t) { return a + (b - a) * t; }

namespace precise {
using metal::exp, metal::exp2, metal::log, metal::log2, metal::sqrt, metal::rsqrt, metal::tanh, metal::pow,
    metal::powr, metal::fma, metal::fmin, metal::fmax;
}
// Metal's fast variants are approximations; the host uses the precise ones.
namespace fast {
using metal::exp, metal::exp2, metal::log, metal::log2, metal::sqrt, metal::rsqrt, metal::tanh, metal::pow,
    metal::powr, metal::fmin, metal::fmax;
}

// min/max: fmin/fmax semantics for floats, plain comparison for integers.
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
template <class A, class B>
  requires(std::is_arithmetic_v<A> && std::is_arithmetic_v<B> && !std::is_same_v<A, B>)
inline std::common_type_t<A, B> min(A a, B b) {
  return min<std::common_type_t<A, B>>(a, b);
}
template <class A, class B>
  requires(std::is_arithmetic_v<A> && std::is_arithmetic_v<B> && !std::is_same_v<A, B>)
inline std::common_type_t<A, B> max(A a, B b) {
  return max<std::common_type_t<A, B>>(a, b);
}
template <hostemu::hvec V>
inline V min(const V& a, const V& b) {
  return hostemu::vmap2(a, b, [](auto x, auto y) { return min(x, y); });
}
template <hostemu::hvec V>
inline V max(const V& a, const V& b) {
  return hostemu::vmap2(a, b, [](auto x, auto y) { return max(x, y); });
}
template <class T>
  requires std::is_arithmetic_v<T>
inline T clamp(T x, T lo, T hi) {
  return min(max(x, lo), hi);
}

// select(a, b, c) is c ? b : a.
template <class T>
inline T select(T a, T b, bool c) {
  return c ? b : a;
}

template <class To, class From>
inline To as_type(const From& f) {
  static_assert(sizeof(To) == sizeof(From), "as_type needs types of the same size");
  return std::bit_cast<To>(f);
}

inline bool isnan(float x) { return std::isnan(x); }
inline bool isinf(float x) { return std::isinf(x); }
inline bool isfinite(float x) { return std::isfinite(x); }

enum class mem_flags : unsigned { mem_none = 0, mem_device = 1, mem_threadgroup = 2, mem_texture = 4 };
inline mem_flags operator|(mem_flags a, mem_flags b) { return mem_flags(unsigned(a) | unsigned(b)); }

inline void threadgroup_barrier(mem_flags, hostemu::loc l = hostemu::loc::current()) {
  hostemu::barrier("threadgroup_barrier", l);
}
inline void simdgroup_barrier(mem_flags, hostemu::loc l = hostemu::loc::current()) {
  hostemu::subgroup_barrier("simdgroup_barrier", l);
}

template <class T>
inline T simd_shuffle_xor(T v, ushort mask, hostemu::loc l = hostemu::loc::current()) {
  return hostemu::shuffle_xor(v, mask, "simd_shuffle_xor", l);
}
template <class T>
inline T simd_shuffle(T v, ushort lane, hostemu::loc l = hostemu::loc::current()) {
  return hostemu::shuffle(v, lane, "simd_shuffle", l);
}
// The top `delta` lanes keep their own value (no wrap-around).
template <class T>
inline T simd_shuffle_down(T v, ushort delta, hostemu::loc l = hostemu::loc::current()) {
  const hostemu::ThreadPos& p = hostemu::pos("simd_shuffle_down");
  return hostemu::shuffle(v, p.lane + delta < p.sg_width ? p.lane + delta : p.lane, "simd_shuffle_down", l);
}
template <class T>
inline T simd_shuffle_up(T v, ushort delta, hostemu::loc l = hostemu::loc::current()) {
  const hostemu::ThreadPos& p = hostemu::pos("simd_shuffle_up");
  return hostemu::shuffle(v, p.lane >= delta ? p.lane - delta : p.lane, "simd_shuffle_up", l);
}
template <class T>
inline T simd_broadcast(T v, ushort lane, hostemu::loc l = hostemu::loc::current()) {
  return hostemu::broadcast(v, lane, "simd_broadcast", l);
}
template <class T>
inline T simd_broadcast_first(T v, hostemu::loc l = hostemu::loc::current()) {
  return hostemu::broadcast(v, 0, "simd_broadcast_first", l);
}
// Reductions use the core's butterfly order (SG/2 down to 1).
template <class T>
inline T simd_sum(T v, hostemu::loc l = hostemu::loc::current()) {
  return hostemu::sum(v, "simd_sum", l);
}
template <class T>
inline T simd_product(T v, hostemu::loc l = hostemu::loc::current()) {
  return hostemu::butterfly(v, [](T a, T b) { return a * b; }, "simd_product", l);
}
template <class T>
inline T simd_max(T v, hostemu::loc l = hostemu::loc::current()) {
  return hostemu::butterfly(v, [](T a, T b) { return max(a, b); }, "simd_max", l);
}
template <class T>
inline T simd_min(T v, hostemu::loc l = hostemu::loc::current()) {
  return hostemu::butterfly(v, [](T a, T b) { return min(a, b); }, "simd_min", l);
}
inline bool simd_any(bool p, hostemu::loc l = hostemu::loc::current()) {
  return hostemu::ballot(p, "simd_any", l) != 0;
}
inline bool simd_all(bool p, hostemu::loc l = hostemu::loc::current()) {
  const hostemu::ThreadPos& q = hostemu::pos("simd_all");
  const uint64_t all = q.sg_size == 64 ? ~uint64_t(0) : (uint64_t(1) << q.sg_size) - 1;
  return hostemu::ballot(p, "simd_all", l) == all;
}

}  // namespace metal

namespace hostemu::msl {

// A 3-vector position that converts to any MSL 3-vector (uint3, ushort3, ...)
// so a harness can pass it to whatever type the kernel declares.
struct pos3 {
  unsigned x, y, z;
  template <class T>
  operator metal::vec<T, 3>() const {
    return metal::vec<T, 3>(T(x), T(y), T(z));
  }
};

// The kernel attributes of one thread, named as in ggml's kernels.
struct pos {
  pos3 tgpig;      // [[threadgroup_position_in_grid]]
  pos3 tpitg;      // [[thread_position_in_threadgroup]]
  pos3 tpig;       // [[thread_position_in_grid]]
  pos3 ntg;        // [[threads_per_threadgroup]]
  pos3 tgpg;       // [[threadgroups_per_grid]]
  unsigned tiitg;  // [[thread_index_in_threadgroup]]
  unsigned sgitg;  // [[simdgroup_index_in_threadgroup]]
  unsigned tiisg;  // [[thread_index_in_simdgroup]]
  unsigned tpsg;   // [[threads_per_simdgroup]]
  unsigned nsg;    // [[simdgroups_per_threadgroup]]
};

// Dispatches `grid` threadgroups of `threadgroup` threads (Metal's
// dispatchThreadgroups); body(pos) runs once per thread.
template <class F>
inline void launch(std::string_view name, metal::uint3 grid, metal::uint3 threadgroup_size, F&& body) {
  hostemu::launch(name, u3{grid.x, grid.y, grid.z}, u3{threadgroup_size.x, threadgroup_size.y, threadgroup_size.z},
                  [&body] {
                    const ThreadPos& t = hostemu::pos();
                    pos p;
                    p.tgpig = {t.gid.x, t.gid.y, t.gid.z};
                    p.tpitg = {t.tid.x, t.tid.y, t.tid.z};
                    p.tpig = {t.gid.x * t.bdim.x + t.tid.x, t.gid.y * t.bdim.y + t.tid.y, t.gid.z * t.bdim.z + t.tid.z};
                    p.ntg = {t.bdim.x, t.bdim.y, t.bdim.z};
                    p.tgpg = {t.gdim.x, t.gdim.y, t.gdim.z};
                    p.tiitg = t.linear;
                    p.sgitg = t.sg_index;
                    p.tiisg = t.lane;
                    p.tpsg = t.sg_width;
                    p.nsg = t.num_sg;
                    body(static_cast<const pos&>(p));
                  });
}

}  // namespace hostemu::msl

#define kernel
#define device
#define constant
#define thread
// Threadgroup memory must be shared by the workgroup; workgroups run one at a
// time, so `static` gives exactly that for variables declared in a kernel. The
// price: `threadgroup` cannot appear in a pointer type, parameter or cast
// (the Go driver rejects those with a clear message before compiling).
#define threadgroup static
#define is_function_constant_defined(name) true
