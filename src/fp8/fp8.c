/*
 * fp8/fp8.c: hgemm_gemm_fp8's checks and dispatch (include/hgemm.h). Every
 * check runs before the first CUDA call; the kernel is src/fp8/kernel.cu.
 */
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "internal.h"
#include "fp8/plan.h"

enum { FP8_SCALE_BLOCK = 128 };

static int is_fp8(hgemm_dtype t) {
    return t == HGEMM_DTYPE_E4M3 || t == HGEMM_DTYPE_E5M2;
}

/* Bytes from a matrix's first element to one past its last, elements of
 * `eb` bytes; -1 past int64. */
static int64_t span(int64_t rows, int64_t cols, int64_t ld, int64_t eb) {
    const int64_t two = hgemm__span_bytes(rows, cols, ld); /* 2 bytes an element */
    if (two < 0) return -1;
    const int64_t elems = two / 2;
    return elems > INT64_MAX / eb ? -1 : elems * eb;
}

static int64_t ceil_block(int64_t x) { /* ceil(x / 128) without x + 127: x may be near INT64_MAX */
    return x / FP8_SCALE_BLOCK + (x % FP8_SCALE_BLOCK != 0);
}

/* The scale arrays' lengths in floats, A's and B's, for a valid mode and
 * sizes whose spans fit int64: rows * ceil(k / 128) then does too (rows > 0
 * bounds k by A's or B's span). */
static void scale_counts(hgemm_scale_mode mode, int64_t m, int64_t n, int64_t k, int64_t *sa_n, int64_t *sb_n) {
    *sa_n = mode == HGEMM_SCALE_TENSOR ? 1 : mode == HGEMM_SCALE_ROW ? m : m * ceil_block(k);
    *sb_n = mode == HGEMM_SCALE_TENSOR ? 1 : mode == HGEMM_SCALE_ROW ? n : ceil_block(n) * ceil_block(k);
}

/* log2 of the blocks (a cluster) that share each 128 x 128 tile, one slice
 * of k each: where the tiles fill at most half the SMs, as many as fill
 * them, up to 8, each slice at least 4 stages of 128. */
int hgemm__fp8_split_log(uint64_t tiles, int64_t k_tiles, int sms) {
    int lg = 0;
    if (tiles == 0 || k_tiles < 8 || tiles * 2 > (uint64_t)sms) return 0;
    while (lg < 3 && (tiles << (lg + 1)) <= (uint64_t)sms && ((int64_t)4 << (lg + 1)) <= k_tiles) lg++;
    return lg;
}

/* The wide build (128 x 256 tiles) where n is wider than one narrow tile
 * and its tiles still fill every SM at least once. */
int hgemm__fp8_wide(uint64_t m, uint64_t n, int sms) {
    return n > 128 && ((m + 127) / 128) * ((n + 255) / 256) >= (uint64_t)sms;
}

/* The wide build in pairs wherever it has two tile rows (and two SMs). */
int hgemm__fp8_pair(uint64_t m, int wide, int sms) {
    return wide && (m + 127) / 128 >= 2 && sms >= 2;
}

static hgemm_status fp8_validate(hgemm_kernel kernel, hgemm_dtype at, hgemm_dtype bt, hgemm_dtype ct, int64_t m,
                                 int64_t n, int64_t k, const void *A, int64_t lda, const void *B, int64_t ldb,
                                 hgemm_scale_mode mode, const float *sa, const float *sb, void *C, int64_t ldc,
                                 const hgemm_nt_options *o, const hgemm_epi *epi) {
    if (kernel != HGEMM_KERNEL_AUTO && kernel != HGEMM_KERNEL_AUTO_F16ACC && hgemm__kernel_find(kernel) == NULL)
        return HGEMM_ERROR_INVALID_VALUE;
    if (!is_fp8(at) || !is_fp8(bt) ||
        (ct != HGEMM_DTYPE_F16 && ct != HGEMM_DTYPE_BF16 && ct != HGEMM_DTYPE_F32) || (unsigned)mode > HGEMM_SCALE_BLOCK)
        return HGEMM_ERROR_INVALID_VALUE;
    if (m < 0 || n < 0 || k < 0 || o->sm_count_target < 0) return HGEMM_ERROR_INVALID_VALUE;
    if ((unsigned)epi->act > HGEMM_ACTIVATION_SILU) return HGEMM_ERROR_INVALID_VALUE;
    if (lda < (k > 1 ? k : 1) || ldb < (k > 1 ? k : 1) || ldc < (n > 1 ? n : 1)) return HGEMM_ERROR_INVALID_VALUE;
    const int64_t cb = ct == HGEMM_DTYPE_F32 ? 4 : 2;
    const int64_t a_all = span(m, k, lda, 1), b_all = span(n, k, ldb, 1), c_all = span(m, n, ldc, cb);
    if (a_all < 0 || b_all < 0 || c_all < 0) return HGEMM_ERROR_INVALID_VALUE;
    int64_t sa_n, sb_n;
    scale_counts(mode, m, n, k, &sa_n, &sb_n);
    if ((a_all && A == NULL) || (b_all && B == NULL) || (c_all && C == NULL) || sa == NULL || sb == NULL)
        return HGEMM_ERROR_INVALID_VALUE;
    if (k % 16 || lda % 16 || ldb % 16 || ldc % 8) return HGEMM_ERROR_MISALIGNED;
    if ((a_all && hgemm__misaligned(A)) || (b_all && hgemm__misaligned(B)) || (c_all && hgemm__misaligned(C)) ||
        ((uintptr_t)sa & 3u) || ((uintptr_t)sb & 3u))
        return HGEMM_ERROR_MISALIGNED;
    /* C is written: no byte shared with an input, by address ranges. A
     * scale array's bytes saturate: past int64 only where C is empty (no
     * rows or no columns leave m or n unbounded), and then nothing meets. */
    const int64_t sa_bytes = sa_n > INT64_MAX / 4 ? INT64_MAX : sa_n * 4;
    const int64_t sb_bytes = sb_n > INT64_MAX / 4 ? INT64_MAX : sb_n * 4;
    if (hgemm__overlaps(C, c_all, A, a_all) || hgemm__overlaps(C, c_all, B, b_all) ||
        hgemm__overlaps(C, c_all, sa, sa_bytes) || hgemm__overlaps(C, c_all, sb, sb_bytes))
        return HGEMM_ERROR_INVALID_VALUE;
    if (o->workspace_bytes && o->workspace == NULL) return HGEMM_ERROR_INVALID_VALUE;
    /* what the FP8 family does not serve */
    if (kernel != HGEMM_KERNEL_AUTO) return HGEMM_ERROR_NOT_SUPPORTED;
    if (at == HGEMM_DTYPE_E5M2 && bt == HGEMM_DTYPE_E5M2) return HGEMM_ERROR_NOT_SUPPORTED;
    /* e5m2 with tensor scales only, as torch._scaled_mm takes it */
    if ((at == HGEMM_DTYPE_E5M2 || bt == HGEMM_DTYPE_E5M2) && mode != HGEMM_SCALE_TENSOR)
        return HGEMM_ERROR_NOT_SUPPORTED;
    if (epi->bias != NULL || epi->act != HGEMM_ACTIVATION_NONE || epi->c_f32 || o->c_in != NULL ||
        o->workspace != NULL || o->workspace_bytes)
        return HGEMM_ERROR_NOT_SUPPORTED;
    if (m > HGEMM_MAX_DIM || n > HGEMM_MAX_DIM || k > HGEMM_MAX_DIM) return HGEMM_ERROR_NOT_SUPPORTED;
    /* tiles are counted in 32 bits (128 x 128 at the narrowest) */
    if (((m + 127) / 128) * ((n + 127) / 128) > INT32_MAX) return HGEMM_ERROR_NOT_SUPPORTED;
    /* TMA: rows below 2^40 bytes apart */
    if ((uint64_t)lda >= ((uint64_t)1 << 40) || (uint64_t)ldb >= ((uint64_t)1 << 40))
        return HGEMM_ERROR_NOT_SUPPORTED;
    return HGEMM_SUCCESS;
}

hgemm_status hgemm_gemm_fp8(hgemm_kernel kernel, hgemm_dtype a_dtype, hgemm_dtype b_dtype, hgemm_dtype c_dtype,
                            int64_t m, int64_t n, int64_t k, float alpha, const void *A, int64_t lda, const void *B,
                            int64_t ldb, hgemm_scale_mode scale_mode, const float *scale_a, const float *scale_b,
                            float beta, void *C, int64_t ldc, const hgemm_options *options, cudaStream_t stream) {
    hgemm_nt_options o;
    hgemm_epi epi;
    hgemm_status st = hgemm__read_options(options, c_dtype, &o, &epi);
    if (st != HGEMM_SUCCESS) return st;
    st = fp8_validate(kernel, a_dtype, b_dtype, c_dtype, m, n, k, A, lda, B, ldb, scale_mode, scale_a, scale_b, C,
                      ldc, &o, &epi);
    if (st != HGEMM_SUCCESS || m == 0 || n == 0) return st;
    const int k_zero = k == 0 || alpha == 0.0f; /* C = beta * C: A, B and the scales never read */
    int dev = 0;
    st = hgemm__check_device(&dev);
    if (st == HGEMM_SUCCESS)
        st = hgemm__check_ends(C, span(m, n, ldc, c_dtype == HGEMM_DTYPE_F32 ? 4 : 2), dev);
    if (st == HGEMM_SUCCESS && !k_zero) {
        st = hgemm__check_ends(A, span(m, k, lda, 1), dev);
        if (st == HGEMM_SUCCESS) st = hgemm__check_ends(B, span(n, k, ldb, 1), dev);
        int64_t sa_n, sb_n;
        scale_counts(scale_mode, m, n, k, &sa_n, &sb_n);
        if (st == HGEMM_SUCCESS) st = hgemm__check_ends(scale_a, sa_n * 4, dev);
        if (st == HGEMM_SUCCESS) st = hgemm__check_ends(scale_b, sb_n * 4, dev);
    }
    if (st != HGEMM_SUCCESS) return st;
    const hgemm_fp8_problem p = {a_dtype, b_dtype, c_dtype, scale_mode, m,       n,   k,   alpha, beta,
                                 A,       lda,     B,       ldb,        scale_a, scale_b, C, ldc,  o.sm_count_target,
                                 k_zero};
    return hgemm__launch_fp8(&p, stream);
}

/* The grouped call's scale arrays' lengths in floats: A's over every row,
 * B's over the experts it reads (one where stride_b is 0). */
static void grouped_scale_counts(hgemm_scale_mode mode, int64_t rows, int64_t n, int64_t k, int64_t experts,
                                 int64_t *sa_n, int64_t *sb_n) {
    int64_t one_b;
    scale_counts(mode, rows, n, k, sa_n, &one_b);
    *sb_n = one_b > INT64_MAX / (experts > 0 ? experts : 1) ? INT64_MAX : one_b * experts;
}

/* What the host can decide about a grouped call: the status, before any CUDA call. */
static hgemm_status grouped_fp8_validate(hgemm_kernel kernel, hgemm_dtype at, hgemm_dtype bt, hgemm_dtype ct,
                                         int64_t rows, int64_t n, int64_t k, int64_t groups, const int32_t *offs,
                                         const void *A, int64_t lda, const void *B, int64_t ldb, int64_t stride_b,
                                         hgemm_scale_mode mode, const float *sa, const float *sb, void *C,
                                         int64_t ldc, const hgemm_nt_options *o, const hgemm_epi *epi) {
    if (kernel != HGEMM_KERNEL_AUTO && kernel != HGEMM_KERNEL_AUTO_F16ACC && hgemm__kernel_find(kernel) == NULL)
        return HGEMM_ERROR_INVALID_VALUE;
    if (!is_fp8(at) || !is_fp8(bt) ||
        (ct != HGEMM_DTYPE_F16 && ct != HGEMM_DTYPE_BF16 && ct != HGEMM_DTYPE_F32) || (unsigned)mode > HGEMM_SCALE_BLOCK)
        return HGEMM_ERROR_INVALID_VALUE;
    if (rows < 0 || n < 0 || k < 0 || groups < 0 || stride_b < 0 || o->sm_count_target < 0)
        return HGEMM_ERROR_INVALID_VALUE;
    if ((unsigned)epi->act > HGEMM_ACTIVATION_SILU) return HGEMM_ERROR_INVALID_VALUE;
    if (lda < (k > 1 ? k : 1) || ldb < (k > 1 ? k : 1) || ldc < (n > 1 ? n : 1)) return HGEMM_ERROR_INVALID_VALUE;
    const int64_t cb = ct == HGEMM_DTYPE_F32 ? 4 : 2;
    const int64_t a_all = span(rows, k, lda, 1), c_all = span(rows, n, ldc, cb);
    /* B over the groups, counted as if 2 bytes an element (hgemm__batch_span's unit), then halved */
    const int64_t b_one = hgemm__span_bytes(n, k, ldb);
    const int64_t b_two = b_one < 0 ? -1 : hgemm__batch_span(b_one, stride_b, groups);
    const int64_t b_all = b_two < 0 ? -1 : b_two / 2;
    if (a_all < 0 || b_all < 0 || c_all < 0 || groups > INT64_MAX / 4) return HGEMM_ERROR_INVALID_VALUE;
    const int64_t experts = stride_b == 0 ? (groups > 0 ? 1 : 0) : groups;
    int64_t sa_n, sb_n;
    grouped_scale_counts(mode, rows, n, k, experts, &sa_n, &sb_n);
    if ((a_all && A == NULL) || (b_all && B == NULL) || (c_all && C == NULL) || (groups > 0 && offs == NULL) ||
        sa == NULL || sb == NULL)
        return HGEMM_ERROR_INVALID_VALUE;
    if (k % 16 || lda % 16 || ldb % 16 || stride_b % 16 || ldc % 8) return HGEMM_ERROR_MISALIGNED;
    if ((a_all && hgemm__misaligned(A)) || (b_all && hgemm__misaligned(B)) || (c_all && hgemm__misaligned(C)) ||
        ((uintptr_t)offs & 3u) || ((uintptr_t)sa & 3u) || ((uintptr_t)sb & 3u))
        return HGEMM_ERROR_MISALIGNED;
    /* C is written: no byte shared with an input */
    const int64_t sa_bytes = sa_n > INT64_MAX / 4 ? INT64_MAX : sa_n * 4;
    const int64_t sb_bytes = sb_n > INT64_MAX / 4 ? INT64_MAX : sb_n * 4;
    if (hgemm__overlaps(C, c_all, A, a_all) || hgemm__overlaps(C, c_all, B, b_all) ||
        hgemm__overlaps(C, c_all, offs, groups * 4) || hgemm__overlaps(C, c_all, sa, sa_bytes) ||
        hgemm__overlaps(C, c_all, sb, sb_bytes))
        return HGEMM_ERROR_INVALID_VALUE;
    if (o->workspace_bytes && o->workspace == NULL) return HGEMM_ERROR_INVALID_VALUE;
    /* what the grouped FP8 kernel does not serve */
    if (kernel != HGEMM_KERNEL_AUTO) return HGEMM_ERROR_NOT_SUPPORTED;
    if (at != HGEMM_DTYPE_E4M3 || bt != HGEMM_DTYPE_E4M3) return HGEMM_ERROR_NOT_SUPPORTED;
    if (epi->bias != NULL || epi->act != HGEMM_ACTIVATION_NONE || epi->c_f32 || o->c_in != NULL ||
        o->workspace != NULL || o->workspace_bytes)
        return HGEMM_ERROR_NOT_SUPPORTED;
    if (groups > HGEMM_GROUPED_MAX_GROUPS || rows > HGEMM_MAX_DIM || n > HGEMM_MAX_DIM || k > HGEMM_MAX_DIM)
        return HGEMM_ERROR_NOT_SUPPORTED;
    /* tiles (128 x 128, each group rounding up one) counted in 32 bits */
    if (((rows + 127) / 128 + groups) * ((n + 127) / 128) > INT32_MAX) return HGEMM_ERROR_NOT_SUPPORTED;
    /* TMA: rows and experts below 2^40 bytes apart */
    if ((uint64_t)lda >= ((uint64_t)1 << 40) || (uint64_t)ldb >= ((uint64_t)1 << 40) ||
        (uint64_t)stride_b >= ((uint64_t)1 << 40))
        return HGEMM_ERROR_NOT_SUPPORTED;
    return HGEMM_SUCCESS;
}

hgemm_status hgemm_grouped_fp8(hgemm_kernel kernel, hgemm_dtype a_dtype, hgemm_dtype b_dtype, hgemm_dtype c_dtype,
                               int64_t total_rows, int64_t n, int64_t k, int64_t groups, const int32_t *offs,
                               float alpha, const void *A, int64_t lda, const void *B, int64_t ldb, int64_t stride_b,
                               hgemm_scale_mode scale_mode, const float *scale_a, const float *scale_b, float beta,
                               void *C, int64_t ldc, const hgemm_options *options, cudaStream_t stream) {
    hgemm_nt_options o;
    hgemm_epi epi;
    hgemm_status st = hgemm__read_options(options, c_dtype, &o, &epi);
    if (st != HGEMM_SUCCESS) return st;
    st = grouped_fp8_validate(kernel, a_dtype, b_dtype, c_dtype, total_rows, n, k, groups, offs, A, lda, B, ldb,
                              stride_b, scale_mode, scale_a, scale_b, C, ldc, &o, &epi);
    if (st != HGEMM_SUCCESS || total_rows == 0 || n == 0 || groups == 0) return st;
    const int k_zero = k == 0 || alpha == 0.0f; /* C = beta * C in every group: A, B and the scales never read */
    int dev = 0;
    st = hgemm__check_device(&dev);
    if (st == HGEMM_SUCCESS)
        st = hgemm__check_ends(C, span(total_rows, n, ldc, c_dtype == HGEMM_DTYPE_F32 ? 4 : 2), dev);
    if (st == HGEMM_SUCCESS) st = hgemm__check_ends(offs, groups * 4, dev);
    if (st == HGEMM_SUCCESS && !k_zero) {
        const int64_t experts = stride_b == 0 ? 1 : groups;
        int64_t sa_n, sb_n;
        grouped_scale_counts(scale_mode, total_rows, n, k, experts, &sa_n, &sb_n);
        st = hgemm__check_ends(A, span(total_rows, k, lda, 1), dev);
        if (st == HGEMM_SUCCESS)
            st = hgemm__check_ends(B, hgemm__batch_span(hgemm__span_bytes(n, k, ldb), stride_b, experts) / 2, dev);
        if (st == HGEMM_SUCCESS) st = hgemm__check_ends(scale_a, sa_n * 4, dev);
        if (st == HGEMM_SUCCESS) st = hgemm__check_ends(scale_b, sb_n * 4, dev);
    }
    if (st != HGEMM_SUCCESS) return st;
    const hgemm_grouped_fp8_problem p = {c_dtype, scale_mode, total_rows, n,       k,       groups, offs,
                                         alpha,   beta,       A,          lda,     B,       ldb,    stride_b,
                                         scale_a, scale_b,    C,          ldc,     o.sm_count_target, k_zero};
    return hgemm__launch_grouped_fp8(&p, stream);
}
