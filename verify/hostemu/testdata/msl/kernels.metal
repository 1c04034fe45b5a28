// Test kernels for the hostemu MSL skin, written as generated code would be.
#include <metal_stdlib>
using namespace metal;

constant uint FC_tag [[function_constant(3)]];
constant float k_scale = 1.0f;

template <int K>
kernel void kernel_reduce(
        device const float * x   [[buffer(0)]],
        device       float * out [[buffer(1)]],
        uint3  tgpig [[threadgroup_position_in_grid]],
        ushort tiisg [[thread_index_in_simdgroup]],
        ushort tpsg  [[threads_per_simdgroup]]) {
    const uint i = tgpig.x * tpsg + tiisg;
    out[i] = simd_sum(x[i]) * (K * k_scale);
}

typedef decltype(kernel_reduce<1>) kernel_reduce_t;
template [[host_name("kernel_reduce_f32")]] kernel kernel_reduce_t kernel_reduce<1>;
template [[host_name("kernel_reduce_f32_x2")]] kernel void kernel_reduce<2>(
        device const float *, device float *, uint3, ushort, ushort);

// Rows: simd_shuffle_xor for masks 1..SG-1, then simd_shuffle(3),
// simd_shuffle_down(1), simd_shuffle_up(2), simd_broadcast(SG-1), and the
// bits of simd_shuffle_xor(float, 1).
kernel void kernel_shuffle(
        device int * out [[buffer(0)]],
        ushort tiisg [[thread_index_in_simdgroup]],
        ushort tpsg  [[threads_per_simdgroup]]) {
    const int v = int(tiisg) * 10;
    int row = 0;
    for (ushort m = 1; m < tpsg; m++, row++) {
        out[row*tpsg + tiisg] = simd_shuffle_xor(v, m);
    }
    out[row++*tpsg + tiisg] = simd_shuffle(v, 3);
    out[row++*tpsg + tiisg] = simd_shuffle_down(v, 1);
    out[row++*tpsg + tiisg] = simd_shuffle_up(v, 2);
    out[row++*tpsg + tiisg] = simd_broadcast(v, tpsg - 1);
    out[row++*tpsg + tiisg] = as_type<int>(simd_shuffle_xor(float(v) + 0.5f, 1));
}

kernel void kernel_barrier(
        device int * out [[buffer(0)]],
        uint3 tgpig [[threadgroup_position_in_grid]],
        uint3 tpitg [[thread_position_in_threadgroup]],
        uint3 ntg   [[threads_per_threadgroup]]) {
    threadgroup int sh[1024];
    const uint t = tpitg.x, n = ntg.x;
    const int v = int(tgpig.x * 1000 + t);
    sh[t] = v;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const int a = sh[(t + 1) % n];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    sh[t] = v + 100000;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const int b = sh[(t + 2) % n];
    out[2*(tgpig.x*n + t)]     = a;
    out[2*(tgpig.x*n + t) + 1] = b;
}

// A (SG, 4) threadgroup: four SIMD-groups, per-group sum / first / last / index.
kernel void kernel_multi(
        device const float * x   [[buffer(0)]],
        device       float * out [[buffer(1)]],
        uint3  tgpig [[threadgroup_position_in_grid]],
        uint   tiitg [[thread_index_in_threadgroup]],
        ushort3 ntg  [[threads_per_threadgroup]],
        ushort sgitg [[simdgroup_index_in_threadgroup]],
        ushort tiisg [[thread_index_in_simdgroup]],
        ushort tpsg  [[threads_per_simdgroup]]) {
    const uint g = tgpig.x * (ntg.x * ntg.y * ntg.z) + tiitg;
    const float v = x[g];
    out[4*g + 0] = simd_sum(v);
    out[4*g + 1] = simd_broadcast_first(v);
    out[4*g + 2] = simd_broadcast(v, tpsg - 1);
    out[4*g + 3] = float(sgitg);
    (void)tiisg;
}

kernel void kernel_positions(
        device uint * out [[buffer(0)]],
        uint3 tgpig [[threadgroup_position_in_grid]],
        uint3 tpitg [[thread_position_in_threadgroup]],
        uint3 tpig  [[thread_position_in_grid]],
        uint3 ntg   [[threads_per_threadgroup]],
        uint3 tgpg  [[threadgroups_per_grid]],
        uint  tiitg [[thread_index_in_threadgroup]],
        ushort sgitg [[simdgroup_index_in_threadgroup]],
        ushort tiisg [[thread_index_in_simdgroup]],
        ushort tpsg  [[threads_per_simdgroup]]) {
    const uint b = tgpig.x + tgpg.x * (tgpig.y + tgpg.y * tgpig.z);
    device uint * o = out + 20 * (b * ntg.x * ntg.y * ntg.z + tiitg);
    o[0] = tpitg.x; o[1] = tpitg.y; o[2] = tpitg.z;
    o[3] = tgpig.x; o[4] = tgpig.y; o[5] = tgpig.z;
    o[6] = ntg.x;   o[7] = ntg.y;   o[8] = ntg.z;
    o[9] = tgpg.x;  o[10] = tgpg.y; o[11] = tgpg.z;
    o[12] = tpig.x; o[13] = tpig.y; o[14] = tpig.z;
    o[15] = tiitg;  o[16] = sgitg;  o[17] = tiisg; o[18] = tpsg;
    const float4 a = float4(1.0f, 2.0f, 3.0f, 4.0f);
    o[19] = as_type<uint>(dot(a, float4(float(tiisg), 1.0f, 1.0f, 1.0f))) ^ FC_tag;
}

kernel void kernel_barrier_deadlock(device float * out [[buffer(0)]], uint3 tpitg [[thread_position_in_threadgroup]]) {
    if (tpitg.x < 3) {
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    out[tpitg.x] = 1.0f;
}

kernel void kernel_shuffle_deadlock(device float * out [[buffer(0)]], uint tiitg [[thread_index_in_threadgroup]],
                                    ushort tiisg [[thread_index_in_simdgroup]]) {
    float v = float(tiitg);
    if (tiisg < 3) {
        v = simd_shuffle_xor(v, 1);
    }
    out[tiitg] = v;
}

kernel void kernel_split_barrier(device float * out [[buffer(0)]], uint tiitg [[thread_index_in_threadgroup]]) {
    if (tiitg < 32) {
        threadgroup_barrier(mem_flags::mem_threadgroup);
    } else {
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    out[tiitg] = 1.0f;
}

// Math, 13 results per thread (layout shared with the other skins).
kernel void kernel_math(device const float * in [[buffer(0)]], device float * out [[buffer(1)]],
                        uint tiitg [[thread_index_in_threadgroup]]) {
    const float a = in[3*tiitg], b = in[3*tiitg + 1], c = in[3*tiitg + 2];
    device float * o = out + 13*tiitg;
    thread float * r = o;
    r[0] = fma(a, b, c);
    r[1] = a * b + c;
    const float2 ab = float2(b, a) * float2(c, 1.0f);
    r[2] = ab.x;
    r[3] = a + b;
    r[4] = a - b;
    r[5] = a / b;
    r[6] = sqrt(abs(a));
    r[7] = exp(c);
    r[8] = precise::exp(c);
    r[9] = as_type<float>(as_type<uint>(a) ^ 0x80000000u);
    r[10] = select(max(a, b), min(a, b), true);
    r[11] = select(min(a, b), max(a, b), a == a);
    r[12] = dot(float4(a, b, c, 1.0f), float4(a, b, c, 2.0f));
    simdgroup_barrier(mem_flags::mem_none);
}
