/*
 * check.h: the verification kit the benchmark and the tests share (library
 * hgemm_check): deterministic random fp16 data, poison and guard patterns,
 * fp64 reference GEMMs on the GPU and on the CPU, error statistics against a
 * reference, and guard-band checks. C API, usable from C and CUDA C.
 *
 * Matrices follow hgemm's one layout (include/hgemm.h): row-major fp16 with a
 * leading dimension in elements, C = alpha * A * B^T + beta * C.
 *
 * These are tools: every function that talks to the GPU checks each CUDA call
 * and exits the process with file:line on failure. Only
 * hgemm_check_sm90_available never exits (it is how a caller learns there is
 * no GPU).
 */
#ifndef HGEMM_CHECK_H
#define HGEMM_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __CUDACC__
#define HGEMM_CHECK_HD __host__ __device__
#else
#define HGEMM_CHECK_HD
#endif

/* ---- failing loudly ---------------------------------------------------- */

static inline void hgemm_check_cuda_(cudaError_t err, const char *what, const char *file, int line) {
    if (err != cudaSuccess) {
        fprintf(stderr, "%s:%d: CUDA error %d (%s): %s\n  in %s\n", file, line, (int)err,
                cudaGetErrorName(err), cudaGetErrorString(err), what);
        exit(1);
    }
}
/* Wrap every CUDA runtime call: prints file:line and exits 1 on error. */
#define HGEMM_CHECK_CUDA(call) hgemm_check_cuda_((call), #call, __FILE__, __LINE__)
/* After every kernel launch. */
#define HGEMM_CHECK_LAUNCH() hgemm_check_cuda_(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

/* ---- constants --------------------------------------------------------- */

enum {
    HGEMM_CHECK_NAN = 0x7e00,          /* fp16 quiet NaN: poison for C before a run */
    HGEMM_CHECK_SENTINEL = 0x7d5a,     /* fp16 signalling NaN with a payload no kernel
                                          computes: fills guard bands and padding */
    HGEMM_CHECK_MAX_MISMATCHES = 8,    /* mismatches recorded (and printed) per compare */
    HGEMM_CHECK_P99_PERMILLE = 990,    /* the reported percentile, in thousandths */
};

/* Tolerances of DESIGN.md: pass when |C - ref| <= atol + rtol * |ref|. */
#define HGEMM_CHECK_ATOL_ACC_F32 1e-2  /* kernels accumulating in fp32 (and cuBLAS 32F) */
#define HGEMM_CHECK_ATOL_ACC_F16 5e-2  /* kernels accumulating in fp16 (and cuBLAS 16F) */
#define HGEMM_CHECK_RTOL 1e-2

/* ---- fp16 <-> fp32, bit-exact on host and device ------------------------- */

static inline HGEMM_CHECK_HD uint32_t hgemm_check_f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline HGEMM_CHECK_HD float hgemm_check_bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* fp32 -> fp16 bits, round to nearest even, overflow to infinity, NaN -> quiet NaN. */
static inline HGEMM_CHECK_HD uint16_t hgemm_check_f32_to_f16(float f) {
    uint32_t x = hgemm_check_f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u, mag = x & 0x7fffffffu;
    if (mag >= 0x7f800000u) return (uint16_t)(sign | (mag > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (mag >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 rounds to inf */
    if (mag < 0x38800000u) {                                  /* below 2^-14: subnormal fp16 */
        if (mag <= 0x33000000u) return (uint16_t)sign;        /* <= 2^-25 rounds to zero */
        uint32_t shift = 126u - (mag >> 23);                  /* 14..24: to units of 2^-24 */
        uint32_t sig = (mag & 0x7fffffu) | 0x800000u;
        uint32_t h = sig >> shift, rem = sig & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (h & 1u))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t r = mag - 0x38000000u; /* rebias the exponent from 127 to 15 */
    uint32_t h = r >> 13, rem = r & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
    return (uint16_t)(sign | h);
}

/* fp16 bits -> fp32 (exact). */
static inline HGEMM_CHECK_HD float hgemm_check_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0x1fu) return hgemm_check_bits_f32(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
        float v = (float)mant * 5.9604644775390625e-8f; /* mant * 2^-24, exact */
        return sign ? -v : v;
    }
    return hgemm_check_bits_f32(sign | ((exp + 112u) << 23) | (mant << 13));
}

/* ---- deterministic random data ----------------------------------------- */

/* The splitmix64 finalizer: a bijective 64-bit mix. */
static inline HGEMM_CHECK_HD uint64_t hgemm_check_mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* Counter-based hash of (seed, row, col): the same on host and device, and
 * independent of the leading dimension. */
static inline HGEMM_CHECK_HD uint64_t hgemm_check_hash(uint64_t seed, uint64_t row, uint64_t col) {
    uint64_t h = hgemm_check_mix64(seed ^ (row * 0x9e3779b97f4a7c15ull));
    return hgemm_check_mix64(h ^ (col * 0xd6e8feb86659fd93ull));
}

/* Element (row, col) of the random matrix `seed`: uniform on (-scale, scale),
 * as fp16 bits. The uniform draw is an odd multiple of 2^-24 (exact in fp32),
 * times scale (one fp32 rounding), rounded to fp16: bit-identical everywhere. */
static inline HGEMM_CHECK_HD uint16_t hgemm_check_random_f16(uint64_t seed, uint64_t row,
                                                            uint64_t col, float scale) {
    int32_t odd = (int32_t)(2u * (uint32_t)(hgemm_check_hash(seed, row, col) >> 40) + 1u) - (1 << 24);
    float u = (float)odd * 5.9604644775390625e-8f; /* odd * 2^-24, in (-1, 1) */
    return hgemm_check_f32_to_f16(u * scale);
}

/* The scale that gives A and B elements the standard deviation k^-1/4, so
 * each output of A * B^T (a sum of k products) has unit variance. A uniform
 * variable on (-s, s) has standard deviation s / sqrt(3). k <= 0 counts as 1:
 * hgemm_check_unit_scale(1) gives unit-variance elements (for C). */
float hgemm_check_unit_scale(int64_t k);

/* ---- filling device memory (asynchronous on stream) ---------------------- */

/* The rows x cols region at dst (leading dimension ld, in elements) gets
 * the random matrix `seed` at `scale`; elements between cols and ld are left alone. */
void hgemm_check_fill_random(void *dst, int64_t rows, int64_t cols, int64_t ld, uint64_t seed,
                             float scale, cudaStream_t stream);

/* The rows x cols region at dst gets the 16-bit pattern (HGEMM_CHECK_NAN,
 * HGEMM_CHECK_SENTINEL, ...). A whole buffer: rows = its rows, cols = ld. */
void hgemm_check_fill_pattern(void *dst, int64_t rows, int64_t cols, int64_t ld, uint16_t pattern,
                              cudaStream_t stream);

/* The same random matrix on the host, into host memory. */
void hgemm_check_random_host(uint16_t *dst, int64_t rows, int64_t cols, int64_t ld, uint64_t seed,
                             float scale);

/* ---- fp64 reference GEMMs --------------------------------------------------
 * ref[r, c] = alpha * sum_k A[r, k] * B[c, k] + beta * C0[r, c] in double, with
 * BLAS conventions: A and B are not read when alpha == 0 or k == 0, C0 is not
 * read when beta == 0 (either may then be NULL). ref is row-major, ld ldref. */

/* On the GPU: A, B, C0 and ref in device memory; asynchronous on stream. */
void hgemm_check_reference(int64_t m, int64_t n, int64_t k, double alpha, const void *A,
                           int64_t lda, const void *B, int64_t ldb, double beta, const void *C0,
                           int64_t ldc0, double *ref, int64_t ldref, cudaStream_t stream);

/* On the CPU, in host memory: for small sizes and for testing the GPU version. */
void hgemm_check_reference_cpu(int64_t m, int64_t n, int64_t k, double alpha, const uint16_t *A,
                               int64_t lda, const uint16_t *B, int64_t ldb, double beta,
                               const uint16_t *C0, int64_t ldc0, double *ref, int64_t ldref);

/* ---- comparing with the reference ---------------------------------------- */

typedef struct hgemm_check_mismatch {
    int64_t row, col;
    double got, want; /* got: the fp16 element of C as a double */
} hgemm_check_mismatch;

/* Absolute errors |C - ref| over the m x n region. A non-finite element of C
 * counts as an infinite error in the statistics and always fails. */
typedef struct hgemm_check_stats {
    int64_t count;          /* elements compared: m * n */
    double mean_abs_err;
    double p99_abs_err;     /* exact: the ceil(0.99 * count)-th smallest error */
    double max_abs_err;
    int64_t failed;         /* elements with !(|C - ref| <= atol + rtol * |ref|) */
    int64_t nonfinite;      /* elements of C that are NaN or infinite */
    int mismatches_shown;   /* entries of `mismatches` filled, <= HGEMM_CHECK_MAX_MISMATCHES */
    hgemm_check_mismatch mismatches[HGEMM_CHECK_MAX_MISMATCHES]; /* the first failures,
                                                                    in row-major order */
} hgemm_check_stats;

/* C (fp16, ldc) in device memory against ref (double, ldref) in device or
 * host memory. Synchronizes stream; returns out->failed == 0. */
int hgemm_check_compare(const void *C, int64_t ldc, const double *ref, int64_t ldref, int64_t m,
                        int64_t n, double atol, double rtol, hgemm_check_stats *out,
                        cudaStream_t stream);

/* The same on the host (a CPU implementation: for small sizes and tests). */
int hgemm_check_compare_host(const uint16_t *C, int64_t ldc, const double *ref, int64_t ldref,
                             int64_t m, int64_t n, double atol, double rtol,
                             hgemm_check_stats *out);

/* The rank-th smallest (0-based) of v[0..count), by quickselect; v is reordered. */
double hgemm_check_select(double *v, int64_t count, int64_t rank);

/* The rank the p99 statistic reports for count elements (0-based). */
static inline int64_t hgemm_check_p99_rank(int64_t count) {
    if (count <= 0) return 0;
    return (count * HGEMM_CHECK_P99_PERMILLE + 999) / 1000 - 1;
}

/* Prints the recorded mismatches, one per line, each starting with indent. */
void hgemm_check_print_mismatches(FILE *f, const hgemm_check_stats *s, const char *indent);

/* ---- guard bands --------------------------------------------------------
 * A C matrix of m x n inside a larger allocation: guard_rows rows above and
 * below it, and ld > n leaves columns to its right. Everything outside the
 * m x n region must still hold HGEMM_CHECK_SENTINEL after a call. */
typedef struct hgemm_check_guarded {
    void *base;          /* the whole allocation: (guard_rows + m + guard_rows) x ld */
    void *C;             /* the first element of the m x n region */
    int64_t m, n, ld, guard_rows;
} hgemm_check_guarded;

typedef struct hgemm_check_guard_report {
    int64_t bad;         /* elements outside the region that changed */
    int64_t first_row;   /* the first of them, row relative to C (negative: above it) */
    int64_t first_col;
    uint16_t first_value;
} hgemm_check_guard_report;

/* Allocates, and fills everything (region included) with the sentinel. */
void hgemm_check_guarded_alloc(hgemm_check_guarded *g, int64_t m, int64_t n, int64_t ld,
                               int64_t guard_rows);
void hgemm_check_guarded_free(hgemm_check_guarded *g);
/* Fills the whole allocation with the sentinel again (asynchronous). */
void hgemm_check_guarded_reset(const hgemm_check_guarded *g, cudaStream_t stream);
/* Synchronizes stream; returns 1 when every element outside the region holds
 * the sentinel. */
int hgemm_check_guard_intact(const hgemm_check_guarded *g, hgemm_check_guard_report *out,
                             cudaStream_t stream);

/* ---- the device ------------------------------------------------------------- */

/* 1 when the current CUDA device exists and is compute capability 9.0;
 * otherwise 0 and a one-line reason in why. Never exits, leaves no CUDA error. */
int hgemm_check_sm90_available(char *why, size_t why_len);

#ifdef __cplusplus
}
#endif

#endif /* HGEMM_CHECK_H */
