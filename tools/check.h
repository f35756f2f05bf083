/*
 * check.h: the verification kit the benchmark and the tests share (library
 * hgemm_check): deterministic random fp16 and bf16 data, poison and guard
 * patterns, fp64 reference GEMMs on the GPU and on the CPU, error statistics
 * against a reference, and guard-band checks. C API, usable from C and CUDA C.
 *
 * Matrices are row-major with a leading dimension in elements. The original
 * functions (no suffix) are fp16 in hgemm_nt's layout, C = alpha * A * B^T +
 * beta * C; the _dt and _ex variants take the element type (hgemm_dtype) and,
 * for the references, each operand's form (hgemm_op), as hgemm_gemm does.
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

#include "hgemm.h" /* hgemm_dtype, hgemm_op */

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
/* A cuBLAS or cuBLASLt call in a bench: its status printed with the call and
 * exit(1) unless CUBLAS_STATUS_SUCCESS (0). */
#define HGEMM_CHECK_CUBLAS(call) hgemm_check_cublas_((int)(call), #call, __FILE__, __LINE__)
void hgemm_check_cublas_(int status, const char *what, const char *file, int line);
/* After every kernel launch. */
#define HGEMM_CHECK_LAUNCH() hgemm_check_cuda_(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

/* ---- constants --------------------------------------------------------- */

enum {
    HGEMM_CHECK_NAN = 0x7e00,          /* fp16 quiet NaN: poison for C before a run */
    HGEMM_CHECK_SENTINEL = 0x7d5a,     /* fp16 signalling NaN with a payload no kernel
                                          computes: fills guard bands and padding */
    /* The same two roles in bf16 (sign, 8 exponent bits, 7 mantissa bits; a
     * NaN has the exponent all ones and a nonzero mantissa, quiet when the
     * mantissa's top bit 0x40 is set). The fp16 patterns do not carry over:
     * 0x7e00 and 0x7d5a are finite bf16 numbers (about 4e37 and 1.8e37). */
    HGEMM_CHECK_NAN_BF16 = 0x7fc0,     /* bf16 quiet NaN (the canonical one) */
    HGEMM_CHECK_SENTINEL_BF16 = 0x7fad, /* bf16 signalling NaN, payload 0x2d: arithmetic
                                           only makes quiet NaNs, so no kernel writes it */
    HGEMM_CHECK_MAX_MISMATCHES = 8,    /* mismatches recorded (and printed) per compare */
    HGEMM_CHECK_P99_PERMILLE = 990,    /* the reported percentile, in thousandths */
};

/* Tolerances of DESIGN.md: pass when |C - ref| <= atol + rtol * |ref|. */
#define HGEMM_CHECK_ATOL_ACC_F32 1e-2  /* kernels accumulating in fp32 (and cuBLAS 32F) */
#define HGEMM_CHECK_ATOL_ACC_F16 5e-2  /* kernels accumulating in fp16 (and cuBLAS 16F) */
#define HGEMM_CHECK_RTOL 1e-2
/* Rounding a bf16 output (8 significant bits, round to nearest) changes it by
 * at most 2^-8 of its value (0.0039), against 2^-11 for fp16: HGEMM_CHECK_RTOL
 * (0.01) covers it with room for the accumulation's own error, so bf16 uses the
 * same tolerances (test_reference_cpu checks RTOL >= 2 * this). */
#define HGEMM_CHECK_BF16_ROUNDING 0x1p-8

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

/* ---- bf16 <-> fp32, bit-exact on host and device ------------------------- */

/* fp32 -> bf16 bits, round to nearest even (subnormals included), overflow to
 * infinity, NaN -> quiet NaN (0x7fc0 with the sign). bf16 is fp32's upper half,
 * so rounding is on the 16 bits dropped. */
static inline HGEMM_CHECK_HD uint16_t hgemm_check_f32_to_bf16(float f) {
    uint32_t x = hgemm_check_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)(((x >> 16) & 0x8000u) | 0x7fc0u);
    x += 0x7fffu + ((x >> 16) & 1u); /* ties to even; a carry into the exponent is right */
    return (uint16_t)(x >> 16);
}

/* bf16 bits -> fp32 (exact; a NaN keeps its payload). */
static inline HGEMM_CHECK_HD float hgemm_check_bf16_to_f32(uint16_t b) {
    return hgemm_check_bits_f32((uint32_t)b << 16);
}

/* The conversions for an element type (fp16 unless dtype is HGEMM_DTYPE_BF16). */
static inline HGEMM_CHECK_HD uint16_t hgemm_check_f32_to_dt(hgemm_dtype dtype, float f) {
    return dtype == HGEMM_DTYPE_BF16 ? hgemm_check_f32_to_bf16(f) : hgemm_check_f32_to_f16(f);
}

static inline HGEMM_CHECK_HD float hgemm_check_dt_to_f32(hgemm_dtype dtype, uint16_t bits) {
    return dtype == HGEMM_DTYPE_BF16 ? hgemm_check_bf16_to_f32(bits) : hgemm_check_f16_to_f32(bits);
}

/* The poison (quiet NaN) and guard (signalling NaN) patterns of an element type. */
static inline HGEMM_CHECK_HD uint16_t hgemm_check_nan_dt(hgemm_dtype dtype) {
    return dtype == HGEMM_DTYPE_BF16 ? (uint16_t)HGEMM_CHECK_NAN_BF16 : (uint16_t)HGEMM_CHECK_NAN;
}

static inline HGEMM_CHECK_HD uint16_t hgemm_check_sentinel_dt(hgemm_dtype dtype) {
    return dtype == HGEMM_DTYPE_BF16 ? (uint16_t)HGEMM_CHECK_SENTINEL_BF16
                                     : (uint16_t)HGEMM_CHECK_SENTINEL;
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

/* Element (row, col) of the random matrix `seed` before its rounding to the
 * element type: uniform on (-scale, scale). The uniform draw is an odd
 * multiple of 2^-24 (exact in fp32), times scale (one fp32 rounding). */
static inline HGEMM_CHECK_HD float hgemm_check_random_f32(uint64_t seed, uint64_t row,
                                                         uint64_t col, float scale) {
    int32_t odd = (int32_t)(2u * (uint32_t)(hgemm_check_hash(seed, row, col) >> 40) + 1u) - (1 << 24);
    float u = (float)odd * 5.9604644775390625e-8f; /* odd * 2^-24, in (-1, 1) */
    return u * scale;
}

/* The element as fp16 bits (rounded once): bit-identical everywhere. */
static inline HGEMM_CHECK_HD uint16_t hgemm_check_random_f16(uint64_t seed, uint64_t row,
                                                            uint64_t col, float scale) {
    return hgemm_check_f32_to_f16(hgemm_check_random_f32(seed, row, col, scale));
}

/* The element in an element type: the same fp32 draw rounded to fp16 or bf16
 * (so an fp16 and a bf16 matrix of one seed hold nearly the same values). */
static inline HGEMM_CHECK_HD uint16_t hgemm_check_random_dt(hgemm_dtype dtype, uint64_t seed,
                                                           uint64_t row, uint64_t col, float scale) {
    return hgemm_check_f32_to_dt(dtype, hgemm_check_random_f32(seed, row, col, scale));
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

/* hgemm_check_fill_random in an element type (HGEMM_DTYPE_F16: the same bits). */
void hgemm_check_fill_random_dt(hgemm_dtype dtype, void *dst, int64_t rows, int64_t cols,
                                int64_t ld, uint64_t seed, float scale, cudaStream_t stream);

/* The rows x cols region at dst gets the 16-bit pattern (HGEMM_CHECK_NAN,
 * HGEMM_CHECK_SENTINEL, ...). A whole buffer: rows = its rows, cols = ld. */
void hgemm_check_fill_pattern(void *dst, int64_t rows, int64_t cols, int64_t ld, uint16_t pattern,
                              cudaStream_t stream);

/* The region gets the element type's quiet NaN (hgemm_check_nan_dt): poison. */
void hgemm_check_fill_nan_dt(hgemm_dtype dtype, void *dst, int64_t rows, int64_t cols, int64_t ld,
                             cudaStream_t stream);

/* The region gets the element type's sentinel (hgemm_check_sentinel_dt). */
void hgemm_check_fill_sentinel_dt(hgemm_dtype dtype, void *dst, int64_t rows, int64_t cols,
                                  int64_t ld, cudaStream_t stream);

/* The same random matrix on the host, into host memory. */
void hgemm_check_random_host(uint16_t *dst, int64_t rows, int64_t cols, int64_t ld, uint64_t seed,
                             float scale);

/* hgemm_check_random_host in an element type. */
void hgemm_check_random_host_dt(hgemm_dtype dtype, uint16_t *dst, int64_t rows, int64_t cols,
                                int64_t ld, uint64_t seed, float scale);

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

/* hgemm_gemm's operation for one entry, with the conventions above:
 *     ref = alpha * op_a(A) * op_b(B) + beta * C0
 * A, B and C0 hold `dtype` elements; A is stored m x k (op_a N) or k x m (T),
 * B k x n (op_b N) or n x k (T), C0 m x n. (F16, N, T) is hgemm_check_reference.
 * Products of fp16 or bf16 values are exact in fp64 and both versions sum in
 * k order: GPU and CPU give the same bits. */
void hgemm_check_reference_ex(hgemm_dtype dtype, hgemm_op op_a, hgemm_op op_b, int64_t m,
                              int64_t n, int64_t k, double alpha, const void *A, int64_t lda,
                              const void *B, int64_t ldb, double beta, const void *C0,
                              int64_t ldc0, double *ref, int64_t ldref, cudaStream_t stream);
void hgemm_check_reference_cpu_ex(hgemm_dtype dtype, hgemm_op op_a, hgemm_op op_b, int64_t m,
                                  int64_t n, int64_t k, double alpha, const uint16_t *A,
                                  int64_t lda, const uint16_t *B, int64_t ldb, double beta,
                                  const uint16_t *C0, int64_t ldc0, double *ref, int64_t ldref);

/* ---- comparing with the reference ---------------------------------------- */

typedef struct hgemm_check_mismatch {
    int64_t row, col;
    double got, want; /* got: the element of C (fp16 or bf16) as a double */
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

/* The two comparisons for a C of `dtype` elements (HGEMM_DTYPE_F16: as above). */
int hgemm_check_compare_dt(hgemm_dtype dtype, const void *C, int64_t ldc, const double *ref,
                           int64_t ldref, int64_t m, int64_t n, double atol, double rtol,
                           hgemm_check_stats *out, cudaStream_t stream);
int hgemm_check_compare_host_dt(hgemm_dtype dtype, const uint16_t *C, int64_t ldc,
                                const double *ref, int64_t ldref, int64_t m, int64_t n,
                                double atol, double rtol, hgemm_check_stats *out);

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
 * m x n region must still hold the sentinel after a call: HGEMM_CHECK_SENTINEL
 * (hgemm_check_guarded_alloc), or the element type's
 * (hgemm_check_guarded_alloc_dt). */
typedef struct hgemm_check_guarded {
    void *base;          /* the whole allocation: (guard_rows + m + guard_rows) x ld */
    void *C;             /* the first element of the m x n region */
    int64_t m, n, ld, guard_rows;
    uint16_t sentinel;   /* the guard pattern, set by the alloc functions */
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
/* The same for a C of `dtype` elements: guarded by hgemm_check_sentinel_dt(dtype). */
void hgemm_check_guarded_alloc_dt(hgemm_dtype dtype, hgemm_check_guarded *g, int64_t m, int64_t n,
                                  int64_t ld, int64_t guard_rows);
void hgemm_check_guarded_free(hgemm_check_guarded *g);
/* Fills the whole allocation with its sentinel again (asynchronous). */
void hgemm_check_guarded_reset(const hgemm_check_guarded *g, cudaStream_t stream);
/* Synchronizes stream; returns 1 when every element outside the region holds
 * its sentinel (g->sentinel). */
int hgemm_check_guard_intact(const hgemm_check_guarded *g, hgemm_check_guard_report *out,
                             cudaStream_t stream);

/* ---- the tools' own comparisons and summaries ----------------------------------- */

/* Two outputs of `dtype` in device memory, m x n at leading dimension ld
 * (one another's reference, not fp64's): 1 when every element has
 * |got - ref| <= atol + rtol |ref| (NaN fails); the largest |got - ref| in
 * *worst. Synchronous (two copies to the host). */
int hgemm_check_outputs_agree_dt(hgemm_dtype dtype, const void *got, const void *ref, int64_t m, int64_t n,
                                 int64_t ld, double atol, double rtol, double *worst);

/* qsort's ascending order of doubles. */
int hgemm_check_cmp_double(const void *a, const void *b);

/* ---- the tools' CSV headers ---------------------------------------------------- */

/* argv as one shell line (arguments with spaces or shell characters quoted),
 * cut at len - 1 characters: a CSV's `# command:` line. */
void hgemm_check_command_line(int argc, char **argv, char *out, size_t len);

/* A small bench's CSV, created at `path` with its metadata: `# tool:`,
 * `# git_commit:`, `# command:` (argv, hgemm_check_command_line), `# gpu:`
 * (device 0's name), then `# ` + `note` when not NULL. NULL (and perror)
 * where it cannot be created. */
FILE *hgemm_check_csv_create(const char *path, const char *tool, const char *git_commit, int argc, char **argv,
                             const char *note);

/* ---- the device ------------------------------------------------------------- */

/* 1 when the current CUDA device exists and is compute capability 9.0;
 * otherwise 0 and a one-line reason in why. Never exits, leaves no CUDA error. */
int hgemm_check_sm90_available(char *why, size_t why_len);

#ifdef __cplusplus
}
#endif

#endif /* HGEMM_CHECK_H */
