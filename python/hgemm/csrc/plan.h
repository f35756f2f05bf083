/*
 * plan.h: how a strided tensor product maps onto one hgemm_gemm call, as
 * plain C over shapes and strides (elements): the torch extension's copy of
 * python/hgemm/_layout.py's plan(), which the ctypes path uses. A CPU test
 * (tests/cpu/test_torch_plan.c, driven by python/tests/test_cpu.py) checks
 * that both give the same call for the same views.
 *
 * out = a @ b with numpy.matmul's shapes: a (..., m, k), b (..., k, n),
 * out (..., m, n). Each matrix is read as stored (op N, rows contiguous) or
 * transposed (op T, columns contiguous); batch dimensions step by one stride
 * per operand (0 where broadcast); an out whose columns are contiguous runs
 * the product transposed (out^T = b^T a^T, swap); a b shared by the batch
 * with a and out laid row after row is one product of batch * m rows.
 */
#ifndef HGEMM_TORCH_PLAN_H
#define HGEMM_TORCH_PLAN_H

#include <stdint.h>

enum {
    HGEMM_PLAN_ALIGN = 8,                      /* ld and batch strides: multiples of 8 elements */
    HGEMM_PLAN_MAX_DIMS = 16                   /* dimensions of one operand */
};
#define HGEMM_PLAN_MAX_DIM (((int64_t)1 << 31) - 257) /* include/hgemm.h's largest m, n, k */

/* What plan() says: HGEMM_PLAN_OK, or which operand cannot be read as it is. */
typedef enum hgemm_plan_error {
    HGEMM_PLAN_OK = 0,
    HGEMM_PLAN_RANK,        /* `which` has fewer than 2 dimensions (or too many) */
    HGEMM_PLAN_INNER,       /* a.shape[-1] != b.shape[-2] */
    HGEMM_PLAN_BROADCAST,   /* the batch dimensions do not broadcast */
    HGEMM_PLAN_OUT_SHAPE,   /* out's shape is not the product's */
    HGEMM_PLAN_LAYOUT,      /* `which`: neither rows nor columns contiguous */
    HGEMM_PLAN_BATCH        /* `which`: batch dimensions that do not compose into one stride */
} hgemm_plan_error;

typedef struct hgemm_view {
    int dims;
    const int64_t *shape, *strides;  /* elements */
} hgemm_view;

/* One hgemm_gemm call (its arguments of the same names) and swap: a and b
 * trade places (the product runs as out^T = b^T a^T). */
typedef struct hgemm_plan {
    int swap;
    int64_t m, n, k, batch;
    int op_a, op_b;                  /* hgemm_op values: 0 N, 1 T */
    int64_t lda, stride_a, ldb, stride_b, ldc, stride_c;
} hgemm_plan;

static inline int64_t hgemm_plan_min_ld(int64_t cols)
{
    int64_t c = cols > 1 ? cols : 1;
    return (c + HGEMM_PLAN_ALIGN - 1) / HGEMM_PLAN_ALIGN * HGEMM_PLAN_ALIGN;
}

/* (op, ld) of a rows x cols matrix with strides rs, cs, `prefer` first where
 * both fit; 0 when neither its rows nor its columns are contiguous. */
static inline int hgemm_plan_matrix(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int prefer,
                                    int *op, int64_t *ld)
{
    if (rows == 0 || cols == 0) {
        *op = prefer;
        *ld = hgemm_plan_min_ld(prefer == 0 ? cols : rows);
        return 1;
    }
    int found = 0, first_op = 0;
    int64_t first_ld = 0;
    for (int i = 0; i < 2; i++) {
        int o = i == 0 ? prefer : 1 - prefer;
        int64_t srows = o == 0 ? rows : cols, scols = o == 0 ? cols : rows;
        int64_t l = o == 0 ? rs : cs, step = o == 0 ? cs : rs;
        if (scols > 1 && step != 1) continue;
        if (srows <= 1) l = hgemm_plan_min_ld(scols);
        else if (l < scols) continue;
        if (l % HGEMM_PLAN_ALIGN == 0) {
            *op = o;
            *ld = l;
            return 1;
        }
        if (!found) {
            found = 1;
            first_op = o;
            first_ld = l;
        }
    }
    if (found) {
        *op = first_op;
        *ld = first_ld;
    }
    return found;
}

/* The stride stepping view v through a batch of batch_shape (C order), 0 where
 * broadcast; 0 returned when its batch dimensions do not compose. */
static inline int hgemm_plan_batch_stride(const int64_t *batch_shape, int batch_dims, hgemm_view v,
                                          int64_t *stride)
{
    int own = v.dims - 2, lead = batch_dims - own;
    int64_t sizes[HGEMM_PLAN_MAX_DIMS], strides[HGEMM_PLAN_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < batch_dims; i++) {
        if (batch_shape[i] == 1) continue;
        int j = i - lead;
        sizes[n] = batch_shape[i];
        strides[n] = j >= 0 && v.shape[j] != 1 ? v.strides[j] : 0;
        n++;
    }
    if (n == 0) {
        *stride = 0;
        return 1;
    }
    int64_t inner_size = sizes[n - 1], inner_stride = strides[n - 1];
    if (inner_stride < 0) return 0;
    for (int i = n - 2; i >= 0; i--) {
        if (strides[i] != inner_stride * inner_size) return 0;
        inner_size = sizes[i];
        inner_stride = strides[i];
    }
    *stride = strides[n - 1];
    return 1;
}

/* The product's batch shape (into batch_shape, *batch_dims), m, n and k. */
static inline hgemm_plan_error hgemm_plan_shapes(hgemm_view a, hgemm_view b, int64_t *batch_shape,
                                                 int *batch_dims, int64_t *m, int64_t *n, int64_t *k,
                                                 int *which)
{
    if (a.dims < 2 || a.dims > HGEMM_PLAN_MAX_DIMS) {
        *which = 0;
        return HGEMM_PLAN_RANK;
    }
    if (b.dims < 2 || b.dims > HGEMM_PLAN_MAX_DIMS) {
        *which = 1;
        return HGEMM_PLAN_RANK;
    }
    *m = a.shape[a.dims - 2];
    *k = a.shape[a.dims - 1];
    *n = b.shape[b.dims - 1];
    if (b.shape[b.dims - 2] != *k) return HGEMM_PLAN_INNER;
    int ab = a.dims - 2, bb = b.dims - 2, width = ab > bb ? ab : bb;
    for (int i = 0; i < width; i++) {
        int64_t x = i - (width - ab) >= 0 ? a.shape[i - (width - ab)] : 1;
        int64_t y = i - (width - bb) >= 0 ? b.shape[i - (width - bb)] : 1;
        if (x != y && x != 1 && y != 1) return HGEMM_PLAN_BROADCAST;
        batch_shape[i] = x == 1 ? y : x;
    }
    *batch_dims = width;
    return HGEMM_PLAN_OK;
}

/* The hgemm_gemm call for out = a @ b; *which names the operand an error is
 * about (0 a, 1 b, 2 out). */
static inline hgemm_plan_error hgemm_plan_make(hgemm_view a, hgemm_view b, hgemm_view out,
                                               hgemm_plan *p, int *which)
{
    int64_t batch_shape[HGEMM_PLAN_MAX_DIMS];
    int bd = 0;
    int64_t m, n, k;
    *which = 2;
    hgemm_plan_error e = hgemm_plan_shapes(a, b, batch_shape, &bd, &m, &n, &k, which);
    if (e != HGEMM_PLAN_OK) return e;
    *which = 2;
    if (out.dims != bd + 2) return HGEMM_PLAN_OUT_SHAPE;
    for (int i = 0; i < bd; i++)
        if (out.shape[i] != batch_shape[i]) return HGEMM_PLAN_OUT_SHAPE;
    if (out.shape[bd] != m || out.shape[bd + 1] != n) return HGEMM_PLAN_OUT_SHAPE;
    int64_t batch = 1;
    for (int i = 0; i < bd; i++) batch *= batch_shape[i];

    hgemm_plan r = {0, m, n, k, batch, 0, 1, hgemm_plan_min_ld(k), 0, hgemm_plan_min_ld(k), 0,
                    hgemm_plan_min_ld(n), 0};
    if (batch == 0 || m == 0 || n == 0) {
        *p = r;
        return HGEMM_PLAN_OK;
    }
    int op_c;
    if (!hgemm_plan_matrix(m, n, out.strides[bd], out.strides[bd + 1], 0, &op_c, &r.ldc))
        return HGEMM_PLAN_LAYOUT;
    if (k > 0) {
        *which = 0;
        if (!hgemm_plan_matrix(m, k, a.strides[a.dims - 2], a.strides[a.dims - 1], 0, &r.op_a, &r.lda))
            return HGEMM_PLAN_LAYOUT;
        *which = 1;
        if (!hgemm_plan_matrix(k, n, b.strides[b.dims - 2], b.strides[b.dims - 1], 1, &r.op_b, &r.ldb))
            return HGEMM_PLAN_LAYOUT;
        *which = 0;
        if (!hgemm_plan_batch_stride(batch_shape, bd, a, &r.stride_a)) return HGEMM_PLAN_BATCH;
        *which = 1;
        if (!hgemm_plan_batch_stride(batch_shape, bd, b, &r.stride_b)) return HGEMM_PLAN_BATCH;
    }
    *which = 2;
    if (!hgemm_plan_batch_stride(batch_shape, bd, out, &r.stride_c)) return HGEMM_PLAN_BATCH;
    if (op_c == 1) { /* out^T = b^T a^T */
        hgemm_plan s = r;
        r.swap = 1;
        r.m = n;
        r.n = m;
        r.op_a = 1 - s.op_b;
        r.lda = s.ldb;
        r.stride_a = s.stride_b;
        r.op_b = 1 - s.op_a;
        r.ldb = s.lda;
        r.stride_b = s.stride_a;
    }
    /* One B for the batch, A and C entries row after row: batch * m rows. */
    if (r.batch > 1 && k > 0 && r.stride_b == 0 && r.op_a == 0 && r.batch * r.m <= HGEMM_PLAN_MAX_DIM) {
        int64_t rows_a = r.m == 1 ? r.stride_a : r.lda, rows_c = r.m == 1 ? r.stride_c : r.ldc;
        if (r.stride_a == r.m * rows_a && r.stride_c == r.m * rows_c && rows_a >= k && rows_c >= r.n &&
            rows_a % HGEMM_PLAN_ALIGN == 0 && rows_c % HGEMM_PLAN_ALIGN == 0) {
            r.m *= r.batch;
            r.batch = 1;
            r.lda = rows_a;
            r.ldc = rows_c;
            r.stride_a = r.stride_b = r.stride_c = 0;
        }
    }
    *p = r;
    return HGEMM_PLAN_OK;
}

#endif /* HGEMM_TORCH_PLAN_H */
