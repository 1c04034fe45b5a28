// A stand-in for ggml-sycl's common.hpp as the generated glue uses it (its
// context, pool and queue), over the host emulation's SYCL. Its queue makes
// the nodes' ggml_tensor structs unreadable while work is submitted: a
// kernel of a discrete GPU cannot read host memory, so one that reads the
// node faults here (hostemu reports the memory fault and the kernel).
#pragma once
#include "ggml.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

#define WARP_SIZE 16

// The host memory the nodes live in (harness.cpp builds them there).
struct kg_host_arena {
    static constexpr size_t bytes = 1 << 20;
    char * base = nullptr;
    size_t used = 0;
    static kg_host_arena & get() {
        static kg_host_arena a;
        if (!a.base) {
            void * m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED) {
                GGML_ABORT("mmap: %s", strerror(errno));
            }
            a.base = (char *) m;
        }
        return a;
    }
    ggml_tensor * tensor() {
        if (used + sizeof(ggml_tensor) > bytes) {
            GGML_ABORT("the node arena is full");
        }
        ggml_tensor * t = new (base + used) ggml_tensor;
        used += (sizeof(ggml_tensor) + 63) / 64 * 64;
        return t;
    }
    void readable(bool yes) {
        if (mprotect(base, bytes, yes ? PROT_READ | PROT_WRITE : PROT_NONE) != 0) {
            GGML_ABORT("mprotect: %s", strerror(errno));
        }
    }
};

// Hides the nodes for as long as it lives.
struct kg_device_scope {
    kg_device_scope() { kg_host_arena::get().readable(false); }
    ~kg_device_scope() { kg_host_arena::get().readable(true); }
};

struct kg_queue : sycl::queue {
    template <class F> sycl::event submit(F f) {
        kg_device_scope scope;
        return sycl::queue::submit(f);
    }
    template <class... A> sycl::event parallel_for(A &&... a) {
        kg_device_scope scope;
        return sycl::queue::parallel_for(std::forward<A>(a)...);
    }
};

namespace dpct { typedef kg_queue * queue_ptr; }

struct ggml_sycl_pool {};
template <typename T> struct ggml_sycl_pool_alloc {
    std::vector<T> v;
    explicit ggml_sycl_pool_alloc(ggml_sycl_pool &) {}
    ggml_sycl_pool_alloc(ggml_sycl_pool &, size_t n) : v(n) {}
    T * alloc(size_t n) { v.resize(n); return v.data(); }
    T * get() { return v.data(); }
};

struct ggml_backend_sycl_context {
    kg_queue q;
    ggml_sycl_pool p;
    dpct::queue_ptr stream() { return &q; }
    ggml_sycl_pool & pool() { return p; }
};
