/*
 * elem.cuh: the two 16-bit element types of the library's fast kernels,
 * fp16 (__half) and bf16 (__nv_bfloat16), as the epilogues see them: a pair
 * of fp32 values rounded once to a packed pair (to nearest even, as
 * include/hgemm.h says), and back. The series' kernels use fp16 alone and
 * call the fp16 intrinsics directly; the fast kernels take the type as a
 * template parameter and reach it through elem<T>.
 */
#ifndef HGEMM_ELEM_CUH
#define HGEMM_ELEM_CUH

#include <stdint.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

template <typename T> struct elem;

template <> struct elem<__half> {
    static __device__ __forceinline__ uint32_t pack(float x, float y) {
        const __half2 h = __floats2half2_rn(x, y);
        return *(const uint32_t *)&h;
    }
    static __device__ __forceinline__ float2 unpack(uint32_t u) { return __half22float2(*(const __half2 *)&u); }
    static __device__ __forceinline__ __half from_float(float x) { return __float2half_rn(x); }
    static __device__ __forceinline__ float to_float(__half h) { return __half2float(h); }
    static __device__ __forceinline__ uint16_t bits(float x) { return __half_as_ushort(__float2half_rn(x)); }
    static __device__ __forceinline__ float from_bits(uint16_t u) { return __half2float(__ushort_as_half(u)); }
};

template <> struct elem<__nv_bfloat16> {
    static __device__ __forceinline__ uint32_t pack(float x, float y) {
        const __nv_bfloat162 h = __floats2bfloat162_rn(x, y);
        return *(const uint32_t *)&h;
    }
    static __device__ __forceinline__ float2 unpack(uint32_t u) {
        return __bfloat1622float2(*(const __nv_bfloat162 *)&u);
    }
    static __device__ __forceinline__ __nv_bfloat16 from_float(float x) { return __float2bfloat16_rn(x); }
    static __device__ __forceinline__ float to_float(__nv_bfloat16 h) { return __bfloat162float(h); }
    static __device__ __forceinline__ uint16_t bits(float x) { return __bfloat16_as_ushort(__float2bfloat16_rn(x)); }
    static __device__ __forceinline__ float from_bits(uint16_t u) { return __bfloat162float(__ushort_as_bfloat16(u)); }
};

#endif
