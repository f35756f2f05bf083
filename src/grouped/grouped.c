/*
 * grouped/grouped.c: hgemm_grouped's checks and dispatch (include/hgemm.h).
 * Every check runs before the first CUDA call; the kernel is
 * src/grouped/kernel.cu.
 */
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "internal.h"

/* What the host can decide: the status, before any CUDA call. */
static hgemm_status grouped_validate(hgemm_kernel kernel, hgemm_dtype dtype, hgemm_op op_b, int64_t rows,
                                     int64_t n, int64_t k, int64_t groups, const int32_t *offs, const void *A,
                                     int64_t lda, const void *B, int64_t ldb, int64_t stride_b, void *C, int64_t ldc,
                                     const hgemm_nt_options *o, const hgemm_epi *epi) {
    if (kernel != HGEMM_KERNEL_AUTO && kernel != HGEMM_KERNEL_AUTO_F16ACC && hgemm__kernel_find(kernel) == NULL)
        return HGEMM_ERROR_INVALID_VALUE;
    if ((dtype != HGEMM_DTYPE_F16 && dtype != HGEMM_DTYPE_BF16) || (op_b != HGEMM_OP_N && op_b != HGEMM_OP_T))
        return HGEMM_ERROR_INVALID_VALUE;
    if (rows < 0 || n < 0 || k < 0 || groups < 0 || stride_b < 0 || o->sm_count_target < 0)
        return HGEMM_ERROR_INVALID_VALUE;
    if ((unsigned)epi->act > HGEMM_ACTIVATION_SILU) return HGEMM_ERROR_INVALID_VALUE;
    const int64_t b_rows = op_b == HGEMM_OP_N ? k : n, b_cols = op_b == HGEMM_OP_N ? n : k;
    if (lda < (k > 1 ? k : 1) || ldb < (b_cols > 1 ? b_cols : 1) || ldc < (n > 1 ? n : 1))
        return HGEMM_ERROR_INVALID_VALUE;
    const int64_t a_all = hgemm__span_bytes(rows, k, lda), c_all = hgemm__span_bytes(rows, n, ldc);
    const int64_t b_one = hgemm__span_bytes(b_rows, b_cols, ldb);
    const int64_t b_all = b_one < 0 ? -1 : hgemm__batch_span(b_one, stride_b, groups);
    if (a_all < 0 || b_all < 0 || c_all < 0 || groups > INT64_MAX / 4) return HGEMM_ERROR_INVALID_VALUE;
    if ((a_all && A == NULL) || (b_all && B == NULL) || (c_all && C == NULL) || (groups > 0 && offs == NULL))
        return HGEMM_ERROR_INVALID_VALUE;
    if (lda % 8 || ldb % 8 || ldc % 8 || stride_b % 8) return HGEMM_ERROR_MISALIGNED;
    if ((a_all && hgemm__misaligned(A)) || (b_all && hgemm__misaligned(B)) || (c_all && hgemm__misaligned(C)) ||
        ((uintptr_t)offs & 3u))
        return HGEMM_ERROR_MISALIGNED;
    /* C is written: no element shared with A, no byte with B or the offsets */
    if (hgemm__shares_element(C, rows, n, ldc, A, rows, k, lda) || hgemm__overlaps(C, c_all, B, b_all) ||
        hgemm__overlaps(C, c_all, offs, groups * 4))
        return HGEMM_ERROR_INVALID_VALUE;
    if (o->workspace_bytes && o->workspace == NULL) return HGEMM_ERROR_INVALID_VALUE;
    /* what the grouped kernel does not serve */
    if (kernel != HGEMM_KERNEL_AUTO) return HGEMM_ERROR_NOT_SUPPORTED;
    if (epi->bias != NULL || epi->act != HGEMM_ACTIVATION_NONE || epi->c_f32 ||
        (o->c_in != NULL && !(o->c_in == (const void *)C && o->ldc_in == ldc)))
        return HGEMM_ERROR_NOT_SUPPORTED;
    if (groups > HGEMM_GROUPED_MAX_GROUPS || rows > HGEMM_MAX_DIM || n > HGEMM_MAX_DIM || k > HGEMM_MAX_DIM)
        return HGEMM_ERROR_NOT_SUPPORTED;
    /* the kernel counts tiles (128 x 128 at the narrowest, each group
     * rounding up one) in 32 bits */
    if (((rows + 127) / 128 + groups) * ((n + 127) / 128) > INT32_MAX) return HGEMM_ERROR_NOT_SUPPORTED;
    /* the tensor maps' limits: A's, and B's over its entries (C is stored from registers) */
    hgemm_problem maps = {0};
    maps.m = rows;
    maps.n = n;
    maps.k = k;
    maps.lda = lda;
    maps.ldb = ldb;
    maps.ldc = ldc;
    maps.b_mn = op_b == HGEMM_OP_N;
    maps.batch = groups;
    maps.stride_b = stride_b;
    return hgemm__tmap_supports(&maps, 0);
}

hgemm_status hgemm_grouped(hgemm_kernel kernel, hgemm_dtype dtype, hgemm_op op_b, int64_t total_rows, int64_t n,
                           int64_t k, int64_t groups, const int32_t *offs, float alpha, const void *A, int64_t lda,
                           const void *B, int64_t ldb, int64_t stride_b, float beta, void *C, int64_t ldc,
                           const hgemm_options *options, cudaStream_t stream) {
    hgemm_nt_options o;
    hgemm_epi epi;
    hgemm_status st = hgemm__read_options(options, dtype, &o, &epi);
    if (st != HGEMM_SUCCESS) return st;
    st = grouped_validate(kernel, dtype, op_b, total_rows, n, k, groups, offs, A, lda, B, ldb, stride_b, C, ldc, &o,
                          &epi);
    if (st != HGEMM_SUCCESS || total_rows == 0 || n == 0 || groups == 0) return st;
    const int k_zero = k == 0 || alpha == 0.0f; /* C = beta * C in every group: A and B never read */
    int dev = 0;
    st = hgemm__check_device(&dev);
    if (st == HGEMM_SUCCESS) st = hgemm__check_ends(C, hgemm__span_bytes(total_rows, n, ldc), dev);
    if (st == HGEMM_SUCCESS) st = hgemm__check_ends(offs, groups * 4, dev);
    if (st == HGEMM_SUCCESS && !k_zero) {
        const int64_t b_rows = op_b == HGEMM_OP_N ? k : n, b_cols = op_b == HGEMM_OP_N ? n : k;
        st = hgemm__check_ends(A, hgemm__span_bytes(total_rows, k, lda), dev);
        if (st == HGEMM_SUCCESS)
            st = hgemm__check_ends(B, hgemm__batch_span(hgemm__span_bytes(b_rows, b_cols, ldb), stride_b, groups), dev);
    }
    if (st != HGEMM_SUCCESS) return st;
    const hgemm_grouped_problem p = {dtype, op_b == HGEMM_OP_N, total_rows, n, k, groups, offs, alpha, beta,
                                     A,     lda,                B,          ldb, stride_b, C,  ldc, o.sm_count_target,
                                     k_zero};
    return hgemm__launch_grouped(&p, stream);
}

/* hgemm_grouped_k's checks: the status, before any CUDA call. */
static hgemm_status grouped_k_validate(hgemm_kernel kernel, hgemm_dtype dtype, int64_t m, int64_t n, int64_t total_k,
                                       int64_t groups, const int32_t *offs, const void *A, int64_t lda,
                                       const void *B, int64_t ldb, void *C, int64_t ldc, int64_t stride_c,
                                       const hgemm_nt_options *o, const hgemm_epi *epi) {
    if (kernel != HGEMM_KERNEL_AUTO && kernel != HGEMM_KERNEL_AUTO_F16ACC && hgemm__kernel_find(kernel) == NULL)
        return HGEMM_ERROR_INVALID_VALUE;
    if (dtype != HGEMM_DTYPE_F16 && dtype != HGEMM_DTYPE_BF16) return HGEMM_ERROR_INVALID_VALUE;
    if (m < 0 || n < 0 || total_k < 0 || groups < 0 || stride_c < 0 || o->sm_count_target < 0)
        return HGEMM_ERROR_INVALID_VALUE;
    if ((unsigned)epi->act > HGEMM_ACTIVATION_SILU) return HGEMM_ERROR_INVALID_VALUE;
    if (lda < (m > 1 ? m : 1) || ldb < (n > 1 ? n : 1) || ldc < (n > 1 ? n : 1)) return HGEMM_ERROR_INVALID_VALUE;
    const int64_t a_all = hgemm__span_bytes(total_k, m, lda), b_all = hgemm__span_bytes(total_k, n, ldb);
    const int64_t c_one = hgemm__span_bytes(m, n, ldc); /* as if 2 bytes an element: doubled below for fp32 */
    int64_t c_all = c_one < 0 ? -1 : hgemm__batch_span(c_one, stride_c, groups);
    if (c_all >= 0 && epi->c_f32) c_all = c_all > INT64_MAX / 2 ? -1 : c_all * 2;
    if (a_all < 0 || b_all < 0 || c_all < 0 || groups > INT64_MAX / 4) return HGEMM_ERROR_INVALID_VALUE;
    /* the groups' results may not overlap one another */
    if (groups > 1 && c_one > 0 && stride_c < c_one / 2) return HGEMM_ERROR_INVALID_VALUE;
    if ((a_all && A == NULL) || (b_all && B == NULL) || (c_all && C == NULL) || (groups > 0 && offs == NULL))
        return HGEMM_ERROR_INVALID_VALUE;
    if (lda % 8 || ldb % 8 || ldc % 8 || stride_c % 8) return HGEMM_ERROR_MISALIGNED;
    if ((a_all && hgemm__misaligned(A)) || (b_all && hgemm__misaligned(B)) || (c_all && hgemm__misaligned(C)) ||
        ((uintptr_t)offs & 3u))
        return HGEMM_ERROR_MISALIGNED;
    /* C is written: no byte shared with A, B or the offsets */
    if (hgemm__overlaps(C, c_all, A, a_all) || hgemm__overlaps(C, c_all, B, b_all) ||
        hgemm__overlaps(C, c_all, offs, groups * 4))
        return HGEMM_ERROR_INVALID_VALUE;
    if (o->workspace_bytes && o->workspace == NULL) return HGEMM_ERROR_INVALID_VALUE;
    /* what the kernel does not serve */
    if (kernel != HGEMM_KERNEL_AUTO) return HGEMM_ERROR_NOT_SUPPORTED;
    if (epi->bias != NULL || epi->act != HGEMM_ACTIVATION_NONE ||
        (o->c_in != NULL && !(o->c_in == (const void *)C && o->ldc_in == ldc)))
        return HGEMM_ERROR_NOT_SUPPORTED;
    if (groups > HGEMM_GROUPED_MAX_GROUPS || m > HGEMM_MAX_DIM || n > HGEMM_MAX_DIM || total_k > HGEMM_MAX_DIM)
        return HGEMM_ERROR_NOT_SUPPORTED;
    if (((m + 127) / 128) * ((n + 127) / 128) * groups > INT32_MAX) return HGEMM_ERROR_NOT_SUPPORTED;
    /* the tensor maps (A and B MN-major: 64-column boxes of 64 rows) */
    if (total_k > 0 && m > 0 && n > 0) {
        hgemm_status st = hgemm__tmap_check(A, (uint64_t)total_k, (uint64_t)m, (uint64_t)lda, 64, 64, 1);
        if (st == HGEMM_SUCCESS) st = hgemm__tmap_check(B, (uint64_t)total_k, (uint64_t)n, (uint64_t)ldb, 64, 64, 1);
        if (st != HGEMM_SUCCESS) return st == HGEMM_ERROR_MISALIGNED ? st : HGEMM_ERROR_NOT_SUPPORTED;
    }
    return HGEMM_SUCCESS;
}

hgemm_status hgemm_grouped_k(hgemm_kernel kernel, hgemm_dtype dtype, int64_t m, int64_t n, int64_t total_k,
                             int64_t groups, const int32_t *offs, float alpha, const void *A, int64_t lda,
                             const void *B, int64_t ldb, float beta, void *C, int64_t ldc, int64_t stride_c,
                             const hgemm_options *options, cudaStream_t stream) {
    hgemm_nt_options o;
    hgemm_epi epi;
    hgemm_status st = hgemm__read_options(options, dtype, &o, &epi);
    if (st != HGEMM_SUCCESS) return st;
    st = grouped_k_validate(kernel, dtype, m, n, total_k, groups, offs, A, lda, B, ldb, C, ldc, stride_c, &o, &epi);
    if (st != HGEMM_SUCCESS || m == 0 || n == 0 || groups == 0) return st;
    const int k_zero = total_k == 0 || alpha == 0.0f; /* C_g = beta * C_g: A and B never read */
    int dev = 0;
    st = hgemm__check_device(&dev);
    if (st == HGEMM_SUCCESS) {
        int64_t c_all = hgemm__batch_span(hgemm__span_bytes(m, n, ldc), stride_c, groups);
        st = hgemm__check_ends(C, epi.c_f32 ? c_all * 2 : c_all, dev);
    }
    if (st == HGEMM_SUCCESS) st = hgemm__check_ends(offs, groups * 4, dev);
    if (st == HGEMM_SUCCESS && !k_zero) {
        st = hgemm__check_ends(A, hgemm__span_bytes(total_k, m, lda), dev);
        if (st == HGEMM_SUCCESS) st = hgemm__check_ends(B, hgemm__span_bytes(total_k, n, ldb), dev);
    }
    if (st != HGEMM_SUCCESS) return st;
    const hgemm_grouped_k_problem p = {dtype, epi.c_f32, m,   n,   total_k, groups, offs,     alpha,
                                       beta,  A,         lda, B,   ldb,     C,      ldc,      stride_c,
                                       o.sm_count_target, k_zero};
    return hgemm__launch_grouped_k(&p, stream);
}
