/*
 * epilogue_act.cuh: the fused epilogue's element function (hgemm_options'
 * bias and activation), x = act(alpha * acc + bias[col]) before beta * C_in,
 * in fp32, and the activations themselves. Each activation is a template
 * argument (epi_act<ACT>): the epilogues switch on the launch's value once
 * around a whole part of the tile, so that no element pays for a switch.
 */
#ifndef HGEMM_EPILOGUE_ACT_CUH
#define HGEMM_EPILOGUE_ACT_CUH

#include <stdint.h>

#include "elem.cuh"
#include "internal.h"

/* GELU's 0.5 (1 + tanh u) as sigmoid(2u): no cancellation where tanh u is
 * near -1. The divisions are the approximate one (__fdividef, 2 ulp): a
 * divisor past 2^126, large negative x, gives -0, as x / inf would. The
 * erf form is torch's own, 1 + erf, whose tail below about x = -5.5 is 0. */
template <int ACT>
static __device__ __forceinline__ float epi_act(float x) {
    if constexpr (ACT == HGEMM_ACTIVATION_RELU) {
        return x < 0.0f ? 0.0f : x; /* NaN compares false: it stays */
    } else if constexpr (ACT == HGEMM_ACTIVATION_GELU_TANH) {
        const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
        return __fdividef(x, 1.0f + __expf(-2.0f * u));
    } else if constexpr (ACT == HGEMM_ACTIVATION_GELU_ERF) {
        return 0.5f * x * (1.0f + erff(0.7071067811865476f * x)); /* torch's form */
    } else if constexpr (ACT == HGEMM_ACTIVATION_SILU) {
        return __fdividef(x, 1.0f + __expf(-x));
    } else {
        return x;
    }
}

/* The bias of C's columns col and col + 1 (col even), 0 past n or without
 * a bias. A 16-byte aligned bias and an even col make each pair one
 * aligned load. */
template <typename T>
static __device__ __forceinline__ float2 epi_bias2(const hgemm_epi &e, int32_t n, int32_t col) {
    float2 b = make_float2(0.0f, 0.0f);
    if (e.bias == nullptr || col >= n) return b;
    if (e.bias_f32) {
        const float *f = (const float *)e.bias + col;
        if (col + 1 < n) return __ldg((const float2 *)f);
        b.x = __ldg(f);
    } else {
        const T *h = (const T *)e.bias + col;
        if (col + 1 < n) return elem<T>::unpack(__ldg((const unsigned int *)h));
        b.x = elem<T>::from_bits(__ldg((const unsigned short *)h));
    }
    return b;
}

template <typename T, int N, int ACT>
static __device__ __forceinline__ void epi_apply_act(float d[N / 2], float alpha, const hgemm_epi &e, int32_t n,
                                                     int32_t col0) {
    const int32_t col = col0 + 2 * (int32_t)(threadIdx.x % 4);
#pragma unroll
    for (int j = 0; j < N / 8; j++) {
        const float2 b = epi_bias2<T>(e, n, col + 8 * j);
#pragma unroll
        for (int x = 0; x < 4; x += 2) {
            d[4 * j + x] = epi_act<ACT>(d[4 * j + x] * alpha + b.x);
            d[4 * j + x + 1] = epi_act<ACT>(d[4 * j + x + 1] * alpha + b.y);
        }
    }
}

/* A warpgroup's (64, N) fp32 accumulator (wgmma's fragment layout: register
 * 4j+x of thread t holds column 8j + 2(t%4) + x%2), C's columns col0 on,
 * replaced in place by act(alpha * acc + bias[col]): the epilogue that
 * follows runs with alpha 1 and adds beta * C as for a plain product. */
template <typename T, int N>
static __device__ __forceinline__ void epi_apply(float d[N / 2], float alpha, const hgemm_epi &e, int32_t n,
                                                 int32_t col0) {
    switch (e.act) {
    case HGEMM_ACTIVATION_RELU: epi_apply_act<T, N, HGEMM_ACTIVATION_RELU>(d, alpha, e, n, col0); break;
    case HGEMM_ACTIVATION_GELU_TANH: epi_apply_act<T, N, HGEMM_ACTIVATION_GELU_TANH>(d, alpha, e, n, col0); break;
    case HGEMM_ACTIVATION_GELU_ERF: epi_apply_act<T, N, HGEMM_ACTIVATION_GELU_ERF>(d, alpha, e, n, col0); break;
    case HGEMM_ACTIVATION_SILU: epi_apply_act<T, N, HGEMM_ACTIVATION_SILU>(d, alpha, e, n, col0); break;
    default: epi_apply_act<T, N, HGEMM_ACTIVATION_NONE>(d, alpha, e, n, col0); break;
    }
}

#endif
