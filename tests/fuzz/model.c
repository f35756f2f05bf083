/*
 * model.c: the rules of include/hgemm.h, one by one, in the order the header
 * and hgemm_status_string list them, and which kernel serves which element
 * type, operand form and batch. Sizes are products of int64 values, so
 * everything is computed in __int128 (GCC and Clang), where nothing overflows.
 */
#include <stddef.h>

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
static const i128 TMA_DIM = (i128)1 << 32;           /* a tensor dimension, at most */
static const i128 TMA_LD = (i128)1 << 39;            /* a leading dimension or batch stride below this */
static const i128 GRID_Y = 65535, GRID_X = ((i128)1 << 31) - 1;
static const i128 V8_TILES = ((i128)1 << 32) - 1;    /* V8's tile counter is 32-bit */

/* ---- which kernel serves which form ------------------------------------------
 * include/hgemm.h: V8 serves every form (fp16 and bf16; NN, NT, TN, TT) and a
 * whole batch in one launch; V0..V7 serve fp16 NT only, a batch entry by
 * entry. V9 (the skinny kernel) is growing from fp16 NT towards every form;
 * V9_FORMS says how far it has come, and is the one line to change when it
 * moves on:
 *   V9_FORMS_NT_ONLY        fp16 NT only, like V0..V7;
 *   V9_FORMS_SHORT_K_MAJOR  fp16 and bf16, every form whose short operand
 *                           (A when m <= n, else B) is K-major (A as stored,
 *                           B transposed); the others NOT_SUPPORTED;
 *   V9_FORMS_EVERY          every form, like V8.
 * V9 runs a batch entry by entry in all three. */
typedef enum v9_forms { V9_FORMS_NT_ONLY, V9_FORMS_SHORT_K_MAJOR, V9_FORMS_EVERY } v9_forms;
static const v9_forms V9_FORMS = V9_FORMS_SHORT_K_MAJOR;

/* Whether a kernel takes forms other than fp16 NT at all (its limits may
 * still refuse some shapes of them). */
static int serves_forms(hgemm_kernel kernel) {
    return kernel == HGEMM_KERNEL_V8 || (kernel == HGEMM_KERNEL_V9 && V9_FORMS != V9_FORMS_NT_ONLY);
}

/* Whether a kernel runs a whole batch in one launch (the others: one per entry). */
static int serves_batch(hgemm_kernel kernel) { return kernel == HGEMM_KERNEL_V8; }

/* One request as a kernel receives it. */
typedef struct model_problem {
    int64_t m, n, k;
    int a_mn, b_mn;             /* A stored k x m (op_a T); B stored k x n (op_b N) */
    int64_t lda, ldb, ldc;
    int64_t batch;              /* entries in one launch */
    int64_t stride_a, stride_b, stride_c;
    int c_in;                   /* a separate C input (V8 loads it through a map of its own) */
    int64_t ldc_in;
} model_problem;

/* The tensor-map limits: each operand as stored, its leading dimension, and
 * for a batch the entry count and strides; C's too when `c` (stored by TMA). */
static int tma_fits(const model_problem *p, int c) {
    const i128 ar = p->a_mn ? p->k : p->m, ac = p->a_mn ? p->m : p->k;
    const i128 br = p->b_mn ? p->k : p->n, bc = p->b_mn ? p->n : p->k;
    int fits = ar <= TMA_DIM && ac <= TMA_DIM && p->lda < TMA_LD && br <= TMA_DIM && bc <= TMA_DIM &&
               p->ldb < TMA_LD;
    if (c) fits = fits && p->m <= TMA_DIM && p->n <= TMA_DIM && p->ldc < TMA_LD;
    if (p->c_in) fits = fits && p->m <= TMA_DIM && p->n <= TMA_DIM && p->ldc_in < TMA_LD;
    if (p->batch > 1) {
        fits = fits && p->batch <= TMA_DIM && p->stride_a < TMA_LD && p->stride_b < TMA_LD;
        if (c || p->c_in) fits = fits && p->stride_c < TMA_LD;
    }
    return fits;
}

#define NS_UNLESS(cond) ((cond) ? HGEMM_SUCCESS : HGEMM_ERROR_NOT_SUPPORTED)

/* What an explicit kernel can serve of a valid request with m, n > 0 (its
 * supports check): the tensor maps, then its grid. */
static hgemm_status limits(hgemm_kernel kernel, const model_problem *p) {
    const i128 m = p->m, n = p->n;
    switch (kernel) {
    case HGEMM_KERNEL_V0: /* 128 x 128 tiles, tile rows on grid y */
        return NS_UNLESS(tma_fits(p, 0) && ceil_div(m, 128) <= GRID_Y);
    case HGEMM_KERNEL_V1: case HGEMM_KERNEL_V2: case HGEMM_KERNEL_V3: /* 64 x 256 */
        return NS_UNLESS(tma_fits(p, 0) && ceil_div(m, 64) <= GRID_Y);
    case HGEMM_KERNEL_V4: case HGEMM_KERNEL_V5: /* 128 x 256, a 1-D grid of tiles */
        return NS_UNLESS(tma_fits(p, 0) && ceil_div(m, 128) * ceil_div(n, 256) <= GRID_X);
    case HGEMM_KERNEL_V6: case HGEMM_KERNEL_V7: /* 256 x 256, C stored by TMA */
        return NS_UNLESS(tma_fits(p, 1) && ceil_div(m, 256) * ceil_div(n, 256) <= GRID_X);
    case HGEMM_KERNEL_V8: { /* 128-row tiles in 2-block clusters, 128 or 256 wide by shape; every
                               entry's tiles at the narrower width counted in 32 bits */
        const i128 tiles = ceil_div(ceil_div(m, 128), 2) * ceil_div(n, 128);
        return NS_UNLESS(tma_fits(p, 1) && tiles * (p->batch > 1 ? p->batch : 1) <= V8_TILES);
    }
    case HGEMM_KERNEL_V9: { /* 64-row tiles of the longer side x 16/32/64 of the shorter,
                               up to 8 blocks (k slices) per tile; C stored directly */
        if (p->batch > 1 || !tma_fits(p, 0)) return HGEMM_ERROR_NOT_SUPPORTED;
        const int swap = m <= n; /* the shorter side of C on WGMMA's N: A when m <= n */
        if (V9_FORMS == V9_FORMS_SHORT_K_MAJOR && (swap ? p->a_mn : p->b_mn)) return HGEMM_ERROR_NOT_SUPPORTED;
        const i128 lng = swap ? n : m, shrt = swap ? m : n;
        const i128 bn = shrt <= 16 ? 16 : shrt <= 32 ? 32 : 64;
        return NS_UNLESS(ceil_div(lng, 64) * ceil_div(shrt, bn) * 8 <= GRID_X);
    }
    default: /* not reached: every kernel of the table is listed */
        return HGEMM_ERROR_INVALID_VALUE;
    }
}

/* The request as `kernel` receives it: one entry at a time unless it runs batches. */
static model_problem as_received(hgemm_kernel kernel, model_problem p) {
    if (!serves_batch(kernel)) p.batch = 1;
    return p;
}

/* What a valid request with m, n, batch > 0 becomes for `kernel` (explicit,
 * already chosen): too large a size, nothing to multiply (C = beta * C, served
 * by the scale kernel for every form), or the kernel's limits. */
static hgemm_status run_limits(hgemm_kernel kernel, const model_problem *p, float alpha) {
    if (p->m > MAX_SIZE || p->n > MAX_SIZE || p->k > MAX_SIZE) return HGEMM_ERROR_NOT_SUPPORTED;
    if (p->k == 0 || alpha == 0.0f) return HGEMM_SUCCESS;
    const model_problem q = as_received(kernel, *p);
    return limits(kernel, &q);
}

hgemm_status model_preflight(hgemm_kernel kernel, int64_t m, int64_t n, int64_t k, float alpha,
                             const void *A, int64_t lda, const void *B, int64_t ldb, const void *C,
                             int64_t ldc) {
    hgemm_status st = model_validate(kernel, m, n, k, A, lda, B, ldb, C, ldc);
    if (st != HGEMM_SUCCESS || m == 0 || n == 0) return st;
    if (m > MAX_SIZE || n > MAX_SIZE || k > MAX_SIZE) return HGEMM_ERROR_NOT_SUPPORTED;
    if (kernel == HGEMM_KERNEL_AUTO) kernel = hgemm__auto_choice(m, n, k);
    if (kernel == HGEMM_KERNEL_AUTO_F16ACC) kernel = hgemm__auto_f16acc_choice(m, n, k);
    const model_problem p = {m, n, k, 0, 0, lda, ldb, ldc, 1, 0, 0, 0, 0, 0};
    return run_limits(kernel, &p, alpha);
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

/* Which kernel runs a valid, nonempty hgemm_gemm request, planned with
 * `ws_bytes` of workspace, and that kernel's answer (model_gemm's last step). */
static hgemm_status model_route(hgemm_kernel kernel, int nt, const model_problem *pp, float alpha, int c_in,
                                size_t ws_bytes) {
    const model_problem p = *pp;
    const int64_t m = p.m, n = p.n, k = p.k, batch = p.batch;
    /* The kernel: AUTO's choice by shape, and AUTO_F16ACC's for fp16 NT only;
     * bf16 and the other forms take AUTO's choice (AUTO_F16ACC differs from
     * AUTO only where it picks V6 or V7, which serve fp16 NT alone). A choice
     * that does not serve the form, or not this shape of it, gives way to V8.
     * V9's few long tiles go to V8 with a whole workspace (split-K), and a
     * separate C input to V8 whatever the shape. */
    hgemm_kernel run = kernel;
    if (kernel == HGEMM_KERNEL_AUTO || kernel == HGEMM_KERNEL_AUTO_F16ACC) {
        run = nt && kernel == HGEMM_KERNEL_AUTO_F16ACC ? hgemm__auto_f16acc_choice(m, n, k)
                                                       : hgemm__auto_choice(m, n, k);
        if (run == HGEMM_KERNEL_V9 && hgemm__auto_prefers_split(m, n, k, ws_bytes)) run = HGEMM_KERNEL_V8;
        if (c_in) run = HGEMM_KERNEL_V8;
        if (!nt) {
            const model_problem one = as_received(run, p);
            if (!serves_forms(run) || limits(run, &one) != HGEMM_SUCCESS) run = HGEMM_KERNEL_V8;
        }
        /* A batch runs in one launch of V8 where V8 can take it whole;
         * otherwise entry by entry as chosen. */
        if (batch > 1 && !serves_batch(run) && limits(HGEMM_KERNEL_V8, &p) == HGEMM_SUCCESS)
            run = HGEMM_KERNEL_V8;
    }
    /* An explicit kernel that does not take the form refuses it, k == 0 included;
     * a C input is V8's alone, where n is a multiple of 8. */
    if (!nt && !serves_forms(run)) return HGEMM_ERROR_NOT_SUPPORTED;
    if (c_in && (run != HGEMM_KERNEL_V8 || n % LD_MULT)) return HGEMM_ERROR_NOT_SUPPORTED;
    return run_limits(run, &p, alpha);
}

hgemm_status model_gemm(hgemm_kernel kernel, int dtype, int op_a, int op_b, int64_t m, int64_t n,
                        int64_t k, float alpha, const void *A, int64_t lda, int64_t stride_a,
                        const void *B, int64_t ldb, int64_t stride_b, const void *C, int64_t ldc,
                        int64_t stride_c, int64_t batch, const hgemm_nt_options *o, int *to_device) {
    static const hgemm_nt_options none = {NULL, 0, 0, NULL, 0};
    if (o == NULL) o = &none;
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
    /* The options (hgemm_nt_ex): an SM target of 0 or more; a workspace of
     * workspace_bytes (0: none) 16-byte aligned, meeting no matrix's range;
     * a C input apart from C (not C itself at ldc) by C's rules at ldc_in
     * and stride_c, sharing no element with C (exactly for one entry, by
     * ranges for a batch) and no byte with the workspace. */
    if (o->sm_count_target < 0) return HGEMM_ERROR_INVALID_VALUE;
    const i128 tw = (i128)o->workspace_bytes;
    if (tw) {
        if (o->workspace == NULL || tw > INT64_MAX) return HGEMM_ERROR_INVALID_VALUE;
        if ((uintptr_t)o->workspace % ALIGN) return HGEMM_ERROR_MISALIGNED;
        if (ranges_meet(o->workspace, tw, A, ta) || ranges_meet(o->workspace, tw, B, tb) ||
            ranges_meet(o->workspace, tw, C, tc))
            return HGEMM_ERROR_INVALID_VALUE;
    }
    const int c_in = o->c_in != NULL && !(o->c_in == C && o->ldc_in == ldc);
    if (c_in) {
        if (o->ldc_in < (n < 1 ? 1 : n)) return HGEMM_ERROR_INVALID_VALUE;
        const i128 ei = extent(m, n, o->ldc_in);
        if (ei > max_elems) return HGEMM_ERROR_INVALID_VALUE;
        const i128 ti = batch_bytes(ei, stride_c, batch);
        if (ti > INT64_MAX) return HGEMM_ERROR_INVALID_VALUE;
        if (o->ldc_in % LD_MULT) return HGEMM_ERROR_MISALIGNED;
        if (ti && (uintptr_t)o->c_in % ALIGN) return HGEMM_ERROR_MISALIGNED;
        if (batch == 1 ? ec && ei && shared(C, m, n, ldc, o->c_in, m, n, o->ldc_in) : ranges_meet(C, tc, o->c_in, ti))
            return HGEMM_ERROR_INVALID_VALUE;
        if (tw && ranges_meet(o->workspace, tw, o->c_in, ti)) return HGEMM_ERROR_INVALID_VALUE;
    }
    if (batch == 0 || m == 0 || n == 0) return HGEMM_SUCCESS;
    /* Past the sizes any kernel takes: refused whatever the kernel and form. */
    if (m > MAX_SIZE || n > MAX_SIZE || k > MAX_SIZE) return HGEMM_ERROR_NOT_SUPPORTED;
    const int nt = dtype == 0 && op_a == 0 && op_b == 1;
    const model_problem p = {m, n, k, op_a == 1, op_b == 0, lda, ldb, ldc, batch, stride_a, stride_b, stride_c,
                             c_in, c_in ? o->ldc_in : 0};
    /* A call without a workspace is planned with the library's
     * (HGEMM_WORKSPACE_BYTES, which moves AUTO's few long tiles to V8), and
     * planned as given where that plan is refused: the library's workspace
     * never refuses a call. */
    const size_t given = o->workspace_bytes;
    const size_t planned = given == 0 && hgemm__library_workspace_on() ? HGEMM_WORKSPACE_BYTES : given;
    hgemm_status st = model_route(kernel, nt, &p, alpha, c_in, planned);
    if (st != HGEMM_SUCCESS && planned != given) st = model_route(kernel, nt, &p, alpha, c_in, given);
    if (st == HGEMM_SUCCESS) *to_device = 1;
    return st;
}

/* ---- hgemm_grouped (include/hgemm.h) ------------------------------------------
 * The checks in the order the header gives them: values, sizes and leading
 * dimensions, spans, NULLs, alignment, overlaps; then what the grouped
 * kernel does not serve (another kernel, an epilogue, too many groups, a
 * size or a tensor map past the limits, more tiles than 32 bits count). */
hgemm_status model_grouped(hgemm_kernel kernel, int dtype, int op_b, int64_t rows, int64_t n, int64_t k,
                           int64_t groups, const void *offs, const void *A, int64_t lda, const void *B,
                           int64_t ldb, int64_t stride_b, const void *C, int64_t ldc, const hgemm_options *o,
                           int *to_device) {
    *to_device = 0;
    if (o && (o->size < offsetof(hgemm_options, c_fp32) + sizeof(int))) return HGEMM_ERROR_INVALID_VALUE;
    if (o && o->bias && (int)o->bias_dtype != dtype && o->bias_dtype != HGEMM_DTYPE_F32) return HGEMM_ERROR_INVALID_VALUE;
    if (!known_kernel(kernel)) return HGEMM_ERROR_INVALID_VALUE;
    if ((dtype != 0 && dtype != 1) || (op_b != 0 && op_b != 1)) return HGEMM_ERROR_INVALID_VALUE;
    if (rows < 0 || n < 0 || k < 0 || groups < 0 || stride_b < 0 || (o && o->sm_count_target < 0))
        return HGEMM_ERROR_INVALID_VALUE;
    if (o && (unsigned)o->activation > HGEMM_ACTIVATION_SILU) return HGEMM_ERROR_INVALID_VALUE;
    const int64_t br = op_b == 0 ? k : n, bc = op_b == 0 ? n : k;
    if (lda < (k < 1 ? 1 : k) || ldb < (bc < 1 ? 1 : bc) || ldc < (n < 1 ? 1 : n)) return HGEMM_ERROR_INVALID_VALUE;
    const i128 max_elems = (i128)INT64_MAX / ELEM;
    const i128 ea = extent(rows, k, lda), eb = extent(br, bc, ldb), ec = extent(rows, n, ldc);
    if (ea > max_elems || eb > max_elems || ec > max_elems) return HGEMM_ERROR_INVALID_VALUE;
    const i128 tb = batch_bytes(eb, stride_b, groups);
    if (tb > INT64_MAX || (i128)groups * 4 > INT64_MAX) return HGEMM_ERROR_INVALID_VALUE; /* spans that cannot exist */
    if ((ea && !A) || (tb && !B) || (ec && !C) || (groups > 0 && !offs)) return HGEMM_ERROR_INVALID_VALUE;
    if (lda % LD_MULT || ldb % LD_MULT || ldc % LD_MULT || stride_b % LD_MULT) return HGEMM_ERROR_MISALIGNED;
    if ((ea && (uintptr_t)A % ALIGN) || (tb && (uintptr_t)B % ALIGN) || (ec && (uintptr_t)C % ALIGN) ||
        (uintptr_t)offs % 4)
        return HGEMM_ERROR_MISALIGNED;
    if (ec && ea && shared(C, rows, n, ldc, A, rows, k, lda)) return HGEMM_ERROR_INVALID_VALUE;
    if (ranges_meet(C, ec * ELEM, B, tb) || ranges_meet(C, ec * ELEM, offs, (i128)groups * 4))
        return HGEMM_ERROR_INVALID_VALUE;
    if (o && o->workspace_bytes && !o->workspace) return HGEMM_ERROR_INVALID_VALUE;
    if (kernel != HGEMM_KERNEL_AUTO) return HGEMM_ERROR_NOT_SUPPORTED;
    if (o && (o->bias || o->activation || o->c_fp32 || (o->c_in && !(o->c_in == C && o->ldc_in == ldc))))
        return HGEMM_ERROR_NOT_SUPPORTED;
    if (groups > HGEMM_GROUPED_MAX_GROUPS || rows > MAX_SIZE || n > MAX_SIZE || k > MAX_SIZE)
        return HGEMM_ERROR_NOT_SUPPORTED;
    if ((ceil_div(rows, 128) + groups) * ceil_div(n, 128) > INT32_MAX) return HGEMM_ERROR_NOT_SUPPORTED;
    const model_problem p = {rows, n, k, 0, op_b == 0, lda, ldb, ldc, groups, 0, stride_b, 0, 0, 0};
    if (!tma_fits(&p, 0)) return HGEMM_ERROR_NOT_SUPPORTED;
    if (rows > 0 && n > 0 && groups > 0) *to_device = 1;
    return HGEMM_SUCCESS;
}

/* ---- hgemm_gemm_fp8 (include/hgemm.h) ------------------------------------------
 * The options as hgemm_gemm_ex reads them (size, a bias's type: C's or
 * fp32); then the header's checks in its order: kernel, types and mode,
 * sizes, leading dimensions, spans (A and B one byte an element, C two or
 * four), NULLs, alignment, overlaps (by byte ranges, the scale arrays'
 * lengths by mode); then what the family does not serve. */
/* The FP8 calls' first checks: the options as hgemm_gemm_ex reads them (its
 * size, a bias's type: C's or fp32), the kernel, the types and the mode. */
static hgemm_status model_fp8_head(hgemm_kernel kernel, int at, int bt, int ct, int mode, const hgemm_options *o) {
    if (o && (o->size < offsetof(hgemm_options, c_fp32) + sizeof(int))) return HGEMM_ERROR_INVALID_VALUE;
    if (o && o->bias && (int)o->bias_dtype != ct && o->bias_dtype != HGEMM_DTYPE_F32) return HGEMM_ERROR_INVALID_VALUE;
    if (!known_kernel(kernel)) return HGEMM_ERROR_INVALID_VALUE;
    const int fp8_a = at == HGEMM_DTYPE_E4M3 || at == HGEMM_DTYPE_E5M2, fp8_b = bt == HGEMM_DTYPE_E4M3 || bt == HGEMM_DTYPE_E5M2;
    if (!fp8_a || !fp8_b || (ct != HGEMM_DTYPE_F16 && ct != HGEMM_DTYPE_BF16 && ct != HGEMM_DTYPE_F32) || mode < 0 ||
        mode > HGEMM_SCALE_BLOCK)
        return HGEMM_ERROR_INVALID_VALUE;
    return HGEMM_SUCCESS;
}

hgemm_status model_fp8(hgemm_kernel kernel, int at, int bt, int ct, int mode, int64_t m, int64_t n, int64_t k,
                       const void *A, int64_t lda, const void *B, int64_t ldb, const void *sa, const void *sb,
                       const void *C, int64_t ldc, const hgemm_options *o, int *to_device) {
    *to_device = 0;
    const hgemm_status head = model_fp8_head(kernel, at, bt, ct, mode, o);
    if (head != HGEMM_SUCCESS) return head;
    if (m < 0 || n < 0 || k < 0 || (o && o->sm_count_target < 0)) return HGEMM_ERROR_INVALID_VALUE;
    if (o && (unsigned)o->activation > HGEMM_ACTIVATION_SILU) return HGEMM_ERROR_INVALID_VALUE;
    if (lda < (k < 1 ? 1 : k) || ldb < (k < 1 ? 1 : k) || ldc < (n < 1 ? 1 : n)) return HGEMM_ERROR_INVALID_VALUE;
    const i128 cb = ct == HGEMM_DTYPE_F32 ? 4 : 2;
    const i128 ea = extent(m, k, lda), eb = extent(n, k, ldb), ec = extent(m, n, ldc);
    if (ea > (i128)INT64_MAX / 2 || eb > (i128)INT64_MAX / 2 || ec > (i128)INT64_MAX / cb)
        return HGEMM_ERROR_INVALID_VALUE;
    const i128 kb = ceil_div(k, 128);
    const i128 na = mode == HGEMM_SCALE_TENSOR ? 1 : mode == HGEMM_SCALE_ROW ? (i128)m : m * kb;
    const i128 nb = mode == HGEMM_SCALE_TENSOR ? 1 : mode == HGEMM_SCALE_ROW ? (i128)n : ceil_div(n, 128) * kb;
    if ((ea && !A) || (eb && !B) || (ec && !C) || !sa || !sb) return HGEMM_ERROR_INVALID_VALUE;
    if (k % 16 || lda % 16 || ldb % 16 || ldc % LD_MULT) return HGEMM_ERROR_MISALIGNED;
    if ((ea && (uintptr_t)A % ALIGN) || (eb && (uintptr_t)B % ALIGN) || (ec && (uintptr_t)C % ALIGN) ||
        (uintptr_t)sa % 4 || (uintptr_t)sb % 4)
        return HGEMM_ERROR_MISALIGNED;
    if (ranges_meet(C, ec * cb, A, ea) || ranges_meet(C, ec * cb, B, eb) || ranges_meet(C, ec * cb, sa, na * 4) ||
        ranges_meet(C, ec * cb, sb, nb * 4))
        return HGEMM_ERROR_INVALID_VALUE;
    if (o && o->workspace_bytes && !o->workspace) return HGEMM_ERROR_INVALID_VALUE;
    if (kernel != HGEMM_KERNEL_AUTO) return HGEMM_ERROR_NOT_SUPPORTED;
    if (at == HGEMM_DTYPE_E5M2 && bt == HGEMM_DTYPE_E5M2) return HGEMM_ERROR_NOT_SUPPORTED;
    if ((at == HGEMM_DTYPE_E5M2 || bt == HGEMM_DTYPE_E5M2) && mode != HGEMM_SCALE_TENSOR)
        return HGEMM_ERROR_NOT_SUPPORTED;
    if (o && (o->bias || o->activation || o->c_fp32 || o->c_in || o->workspace || o->workspace_bytes))
        return HGEMM_ERROR_NOT_SUPPORTED;
    if (m > MAX_SIZE || n > MAX_SIZE || k > MAX_SIZE) return HGEMM_ERROR_NOT_SUPPORTED;
    if (ceil_div(m, 128) * ceil_div(n, 128) > INT32_MAX) return HGEMM_ERROR_NOT_SUPPORTED;
    if (lda >= (INT64_C(1) << 40) || ldb >= (INT64_C(1) << 40)) return HGEMM_ERROR_NOT_SUPPORTED;
    if (m > 0 && n > 0) *to_device = 1;
    return HGEMM_SUCCESS;
}

/* ---- hgemm_grouped_fp8 (include/hgemm.h) ----------------------------------------
 * The options as hgemm_gemm_fp8's; then kernel, types and mode, sizes,
 * leading dimensions, spans (A and each expert one byte an element, the
 * experts stride_b bytes apart, counted within half of int64 as
 * hgemm_grouped's are in its unit), NULLs, alignment, overlaps (C with A, the
 * experts, the offsets and the scale arrays, B's over the experts it reads);
 * then what the grouped FP8 kernel does not serve. */
hgemm_status model_grouped_fp8(hgemm_kernel kernel, int at, int bt, int ct, int mode, int64_t rows, int64_t n,
                               int64_t k, int64_t groups, const void *offs, const void *A, int64_t lda, const void *B,
                               int64_t ldb, int64_t stride_b, const void *sa, const void *sb, const void *C,
                               int64_t ldc, const hgemm_options *o, int *to_device) {
    *to_device = 0;
    const hgemm_status head = model_fp8_head(kernel, at, bt, ct, mode, o);
    if (head != HGEMM_SUCCESS) return head;
    if (rows < 0 || n < 0 || k < 0 || groups < 0 || stride_b < 0 || (o && o->sm_count_target < 0))
        return HGEMM_ERROR_INVALID_VALUE;
    if (o && (unsigned)o->activation > HGEMM_ACTIVATION_SILU) return HGEMM_ERROR_INVALID_VALUE;
    if (lda < (k < 1 ? 1 : k) || ldb < (k < 1 ? 1 : k) || ldc < (n < 1 ? 1 : n)) return HGEMM_ERROR_INVALID_VALUE;
    const i128 cb = ct == HGEMM_DTYPE_F32 ? 4 : 2, half = (i128)INT64_MAX / 2;
    const i128 ea = extent(rows, k, lda), e1 = extent(n, k, ldb), ec = extent(rows, n, ldc);
    const i128 tb = e1 == 0 || groups == 0 ? 0 : (i128)(groups - 1) * stride_b + e1;
    if (ea > half || e1 > half || tb > half || ec > (i128)INT64_MAX / cb || groups > INT64_MAX / 4)
        return HGEMM_ERROR_INVALID_VALUE;
    const i128 experts = stride_b == 0 ? (groups > 0 ? 1 : 0) : groups, kb = ceil_div(k, 128);
    const i128 na = mode == HGEMM_SCALE_TENSOR ? 1 : mode == HGEMM_SCALE_ROW ? (i128)rows : rows * kb;
    const i128 nb = experts * (mode == HGEMM_SCALE_TENSOR ? 1 : mode == HGEMM_SCALE_ROW ? (i128)n : ceil_div(n, 128) * kb);
    if ((ea && !A) || (tb && !B) || (ec && !C) || (groups > 0 && !offs) || !sa || !sb) return HGEMM_ERROR_INVALID_VALUE;
    if (k % 16 || lda % 16 || ldb % 16 || stride_b % 16 || ldc % LD_MULT) return HGEMM_ERROR_MISALIGNED;
    if ((ea && (uintptr_t)A % ALIGN) || (tb && (uintptr_t)B % ALIGN) || (ec && (uintptr_t)C % ALIGN) ||
        (uintptr_t)offs % 4 || (uintptr_t)sa % 4 || (uintptr_t)sb % 4)
        return HGEMM_ERROR_MISALIGNED;
    if (ranges_meet(C, ec * cb, A, ea) || ranges_meet(C, ec * cb, B, tb) || ranges_meet(C, ec * cb, offs, (i128)groups * 4) ||
        ranges_meet(C, ec * cb, sa, na * 4) || ranges_meet(C, ec * cb, sb, nb * 4))
        return HGEMM_ERROR_INVALID_VALUE;
    if (o && o->workspace_bytes && !o->workspace) return HGEMM_ERROR_INVALID_VALUE;
    if (kernel != HGEMM_KERNEL_AUTO) return HGEMM_ERROR_NOT_SUPPORTED;
    if (at != HGEMM_DTYPE_E4M3 || bt != HGEMM_DTYPE_E4M3) return HGEMM_ERROR_NOT_SUPPORTED;
    if (o && (o->bias || o->activation || o->c_fp32 || o->c_in || o->workspace || o->workspace_bytes))
        return HGEMM_ERROR_NOT_SUPPORTED;
    if (groups > HGEMM_GROUPED_MAX_GROUPS || rows > MAX_SIZE || n > MAX_SIZE || k > MAX_SIZE)
        return HGEMM_ERROR_NOT_SUPPORTED;
    if ((ceil_div(rows, 128) + groups) * ceil_div(n, 128) > INT32_MAX) return HGEMM_ERROR_NOT_SUPPORTED;
    if (lda >= (INT64_C(1) << 40) || ldb >= (INT64_C(1) << 40) || stride_b >= (INT64_C(1) << 40))
        return HGEMM_ERROR_NOT_SUPPORTED;
    if (rows > 0 && n > 0 && groups > 0) *to_device = 1;
    return HGEMM_SUCCESS;
}
