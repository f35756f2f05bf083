/*
 * model.c: the rules of include/hgemm.h, one by one, in the order the header
 * and hgemm_status_string list them. Sizes are products of int64 values, so
 * everything is computed in __int128 (GCC and Clang), where nothing overflows.
 */
#include "model.h"

typedef __int128 i128;

enum { ELEM = 2, ALIGN = 16, LD_MULT = 8 };

/* Elements from a matrix's first element to one past its last; 0 if empty. */
static i128 extent(int64_t rows, int64_t cols, int64_t ld) {
    if (rows == 0 || cols == 0) return 0;
    return (i128)(rows - 1) * ld + cols;
}

static int known_kernel(hgemm_kernel kernel) {
    return kernel == HGEMM_KERNEL_AUTO || kernel == HGEMM_KERNEL_AUTO_F16ACC ||
           ((int)kernel >= (int)HGEMM_KERNEL_V0 &&
            (int)kernel < (int)HGEMM_KERNEL_V0 + hgemm__kernel_count());
}

static i128 floor_div(i128 a, i128 b) { /* b > 0 */
    i128 q = a / b;
    return q * b > a ? q - 1 : q;
}

static i128 ceil_div(i128 a, i128 b) { /* b > 0 */
    i128 q = a / b;
    return q * b < a ? q + 1 : q;
}

/* C (cr x cc, ldc) and X (xr x xc, ldx) share an element, both nonempty.
 * Rows are the integer intervals [p + i*ld, p + i*ld + cols). For one
 * stride L the views meet iff some t in [1 - xr, cr - 1] puts t*L in the
 * closed range [dx - cc + 1, dx + xc - 1], dx = X's start - C's start. */
static int shared(const void *C, int64_t cr, int64_t cc, int64_t ldc, const void *X, int64_t xr,
                  int64_t xc, int64_t ldx) {
    const i128 c0 = (i128)(uintptr_t)C, x0 = (i128)(uintptr_t)X;
    const i128 c1 = c0 + extent(cr, cc, ldc) * ELEM, x1 = x0 + extent(xr, xc, ldx) * ELEM;
    if (c1 <= x0 || x1 <= c0) return 0;               /* byte ranges apart */
    i128 L;
    if (cr == 1 && xr == 1) return 1;                  /* two meeting intervals */
    if (cr == 1) L = ldx;
    else if (xr == 1) L = ldc;
    else if (ldc == ldx) L = ldc;
    else return 1;                                     /* not decided: refused */
    const i128 dx = (x0 - c0) / ELEM;                  /* both 16-byte aligned */
    const i128 lo = ceil_div(dx - cc + 1, L), hi = floor_div(dx + xc - 1, L);
    const i128 tmin = lo > 1 - xr ? lo : 1 - xr, tmax = hi < cr - 1 ? hi : cr - 1;
    return tmin <= tmax;
}

hgemm_status model_validate(hgemm_kernel kernel, int64_t m, int64_t n, int64_t k, const void *A,
                            int64_t lda, const void *B, int64_t ldb, const void *C, int64_t ldc) {
    if (!known_kernel(kernel)) return HGEMM_ERROR_INVALID_VALUE;
    if (m < 0 || n < 0 || k < 0) return HGEMM_ERROR_INVALID_VALUE;
    const int64_t k1 = k < 1 ? 1 : k, n1 = n < 1 ? 1 : n;
    if (lda < k1 || ldb < k1 || ldc < n1) return HGEMM_ERROR_INVALID_VALUE;
    const i128 ea = extent(m, k, lda), eb = extent(n, k, ldb), ec = extent(m, n, ldc);
    const i128 max_elems = (i128)INT64_MAX / ELEM; /* a span of at most INT64_MAX bytes */
    if (ea > max_elems || eb > max_elems || ec > max_elems) return HGEMM_ERROR_INVALID_VALUE;
    if ((ea && !A) || (eb && !B) || (ec && !C)) return HGEMM_ERROR_INVALID_VALUE;
    if (lda % LD_MULT || ldb % LD_MULT || ldc % LD_MULT) return HGEMM_ERROR_MISALIGNED;
    if ((ea && (uintptr_t)A % ALIGN) || (eb && (uintptr_t)B % ALIGN) || (ec && (uintptr_t)C % ALIGN))
        return HGEMM_ERROR_MISALIGNED;
    if (ec && ea && shared(C, m, n, ldc, A, m, k, lda)) return HGEMM_ERROR_INVALID_VALUE;
    if (ec && eb && shared(C, m, n, ldc, B, n, k, ldb)) return HGEMM_ERROR_INVALID_VALUE;
    return HGEMM_SUCCESS;
}

/* The limits, as include/hgemm.h and the kernels' headers state them. */
static const i128 MAX_SIZE = ((i128)1 << 31) - 257;  /* m, n, k */
static const i128 TMA_LD = (i128)1 << 39;            /* a leading dimension below this */
static const i128 GRID_Y = 65535, GRID_X = ((i128)1 << 31) - 1;

hgemm_status model_preflight(hgemm_kernel kernel, int64_t m, int64_t n, int64_t k, float alpha,
                             const void *A, int64_t lda, const void *B, int64_t ldb, const void *C,
                             int64_t ldc) {
    hgemm_status st = model_validate(kernel, m, n, k, A, lda, B, ldb, C, ldc);
    if (st != HGEMM_SUCCESS || m == 0 || n == 0) return st;
    if (m > MAX_SIZE || n > MAX_SIZE || k > MAX_SIZE) return HGEMM_ERROR_NOT_SUPPORTED;
    if (k == 0 || alpha == 0.0f) return HGEMM_SUCCESS; /* C = beta * C */
    if (kernel == HGEMM_KERNEL_AUTO) kernel = hgemm__auto_choice(m, n, k);
    if (kernel == HGEMM_KERNEL_AUTO_F16ACC) kernel = hgemm__auto_f16acc_choice(m, n, k);
    if (lda >= TMA_LD || ldb >= TMA_LD) return HGEMM_ERROR_NOT_SUPPORTED;
    switch (kernel) {
    case HGEMM_KERNEL_V0: /* 128 x 128 tiles, tile rows on grid y */
        return ceil_div(m, 128) > GRID_Y ? HGEMM_ERROR_NOT_SUPPORTED : HGEMM_SUCCESS;
    case HGEMM_KERNEL_V1: case HGEMM_KERNEL_V2: case HGEMM_KERNEL_V3: /* 64 x 256 */
        return ceil_div(m, 64) > GRID_Y ? HGEMM_ERROR_NOT_SUPPORTED : HGEMM_SUCCESS;
    case HGEMM_KERNEL_V4: case HGEMM_KERNEL_V5: /* 128 x 256, a 1-D grid of tiles */
        return ceil_div(m, 128) * ceil_div(n, 256) > GRID_X ? HGEMM_ERROR_NOT_SUPPORTED
                                                           : HGEMM_SUCCESS;
    case HGEMM_KERNEL_V6: case HGEMM_KERNEL_V7: /* 256 x 256, C stored by TMA */
        if (ldc >= TMA_LD) return HGEMM_ERROR_NOT_SUPPORTED;
        return ceil_div(m, 256) * ceil_div(n, 256) > GRID_X ? HGEMM_ERROR_NOT_SUPPORTED
                                                           : HGEMM_SUCCESS;
    case HGEMM_KERNEL_V9: { /* 64-row tiles of the longer side x 16/32/64 of the shorter,
                               up to 8 blocks (k slices) per tile; C stored directly */
        const i128 lng = m <= n ? n : m, shrt = m <= n ? m : n;
        const i128 bn = shrt <= 16 ? 16 : shrt <= 32 ? 32 : 64;
        return ceil_div(lng, 64) * ceil_div(shrt, bn) * 8 > GRID_X ? HGEMM_ERROR_NOT_SUPPORTED
                                                                   : HGEMM_SUCCESS;
    }
    default: /* later kernels: A, B and C through TMA */
        return ldc >= TMA_LD ? HGEMM_ERROR_NOT_SUPPORTED : HGEMM_SUCCESS;
    }
}

/* ---- hgemm_gemm (include/hgemm.h, the general entry point) -------------------- */

/* Bytes from entry 0's first element to the end of entry batch-1. */
static i128 batch_bytes(i128 one_elems, int64_t stride, int64_t batch) {
    if (one_elems == 0 || batch == 0) return 0;
    return ((i128)(batch - 1) * stride + one_elems) * ELEM;
}

static int ranges_meet(const void *x, i128 xb, const void *y, i128 yb) {
    if (xb == 0 || yb == 0) return 0;
    const i128 x0 = (i128)(uintptr_t)x, y0 = (i128)(uintptr_t)y;
    return x0 < y0 + yb && y0 < x0 + xb;
}

hgemm_status model_gemm(hgemm_kernel kernel, int dtype, int op_a, int op_b, int64_t m, int64_t n,
                        int64_t k, float alpha, const void *A, int64_t lda, int64_t stride_a,
                        const void *B, int64_t ldb, int64_t stride_b, const void *C, int64_t ldc,
                        int64_t stride_c, int64_t batch, int *to_device) {
    *to_device = 0;
    if (!known_kernel(kernel)) return HGEMM_ERROR_INVALID_VALUE;
    if ((dtype != 0 && dtype != 1) || (op_a != 0 && op_a != 1) || (op_b != 0 && op_b != 1))
        return HGEMM_ERROR_INVALID_VALUE;
    if (m < 0 || n < 0 || k < 0 || batch < 0 || stride_a < 0 || stride_b < 0 || stride_c < 0)
        return HGEMM_ERROR_INVALID_VALUE;
    const int64_t ar = op_a ? k : m, ac = op_a ? m : k, br = op_b ? n : k, bc = op_b ? k : n;
    if (lda < (ac < 1 ? 1 : ac) || ldb < (bc < 1 ? 1 : bc) || ldc < (n < 1 ? 1 : n))
        return HGEMM_ERROR_INVALID_VALUE;
    const i128 ea = extent(ar, ac, lda), eb = extent(br, bc, ldb), ec = extent(m, n, ldc);
    const i128 max_elems = (i128)INT64_MAX / ELEM;
    if (ea > max_elems || eb > max_elems || ec > max_elems) return HGEMM_ERROR_INVALID_VALUE;
    const i128 ta = batch_bytes(ea, stride_a, batch), tb = batch_bytes(eb, stride_b, batch);
    const i128 tc = batch_bytes(ec, stride_c, batch);
    if (ta > INT64_MAX || tb > INT64_MAX || tc > INT64_MAX) return HGEMM_ERROR_INVALID_VALUE;
    if ((ta && !A) || (tb && !B) || (tc && !C)) return HGEMM_ERROR_INVALID_VALUE;
    if (lda % LD_MULT || ldb % LD_MULT || ldc % LD_MULT || stride_a % LD_MULT ||
        stride_b % LD_MULT || stride_c % LD_MULT)
        return HGEMM_ERROR_MISALIGNED;
    if ((ta && (uintptr_t)A % ALIGN) || (tb && (uintptr_t)B % ALIGN) || (tc && (uintptr_t)C % ALIGN))
        return HGEMM_ERROR_MISALIGNED;
    if (batch > 1 && ec > 0 && (i128)stride_c < ec) return HGEMM_ERROR_INVALID_VALUE;
    if (batch == 1) {
        if (ec && ea && shared(C, m, n, ldc, A, ar, ac, lda)) return HGEMM_ERROR_INVALID_VALUE;
        if (ec && eb && shared(C, m, n, ldc, B, br, bc, ldb)) return HGEMM_ERROR_INVALID_VALUE;
    } else if (ranges_meet(C, tc, A, ta) || ranges_meet(C, tc, B, tb)) {
        return HGEMM_ERROR_INVALID_VALUE;
    }
    if (batch == 0 || m == 0 || n == 0) return HGEMM_SUCCESS;
    if (dtype != 0 || op_a != 0 || op_b != 1) return HGEMM_ERROR_NOT_SUPPORTED;
    /* fp16 NT: entry 0 is an hgemm_nt request that passes its checks (its
     * spans lie inside the batch's); the kernel's own limits decide. */
    const hgemm_status st = model_preflight(kernel, m, n, k, alpha, A, lda, B, ldb, C, ldc);
    if (st == HGEMM_SUCCESS) *to_device = 1;
    return st;
}
