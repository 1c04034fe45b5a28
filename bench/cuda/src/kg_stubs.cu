// The ggml functions the reference kernels' host code reaches: the device
// query of ggml's launch helper (programmatic dependent launch is on for
// Hopper, as in ggml builds) and the two failure paths. The rest of ggml, referenced by op functions the harness never
// calls, stays unresolved (the harness links with unresolved symbols ignored).
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

int ggml_cuda_get_device() {
    int device = 0;
    cudaGetDevice(&device);
    return device;
}

void ggml_cuda_error(const char * stmt, const char * func, const char * file, int line, const char * msg) {
    fprintf(stderr, "CUDA error in the reference: %s: %s (%s at %s:%d)\n", stmt, msg, func, file, line);
    exit(3);
}

extern "C" void ggml_abort(const char * file, int line, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ggml_abort in the reference at %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(3);
}
