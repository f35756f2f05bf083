/*
 * test_gemm_api.c: the statuses hgemm_gemm decides before any CUDA call, on
 * the CPU, at fake 16-byte aligned addresses that are never dereferenced:
 *   - unknown element types and operand forms are INVALID_VALUE, before
 *     anything else (an empty or zero-batch request included);
 *   - C's batch stride: entries that would share an element, a negative or
 *     overflowing stride, C meeting another entry of A are INVALID_VALUE;
 *   - a batch stride that is not a multiple of 8 elements is MISALIGNED,
 *     whatever the batch;
 *   - the series' kernels (V0..V7) serve fp16 NT only: every other element
 *     type and form is NOT_SUPPORTED for them, k == 0, alpha == 0 and
 *     batches included, after every argument check and never for an empty
 *     request;
 *   - hgemm_nt and hgemm_gemm (fp16, N, T, one entry) agree.
 * Requests a kernel serves would go on to the device: they must return
 * NO_DEVICE where there is none, and are skipped (counted) where there is a
 * GPU. AUTO and V8 serve every form, V9 a growing part of them: only what is
 * decided before the device is asserted for them.
 */
#include <stdint.h>
#include <stdio.h>

#include "test_check.h"
#include "internal.h"

enum {
    M = 64, N = 48, K = 40,     /* a small valid problem; its C spans (M-1)*LDC + N = 3576 elements */
    LD_PAD = 8,
    LDC = N + LD_PAD,
    ELEM = 2,                   /* bytes of an fp16 or bf16 element */
    LD_MULT = 8,                /* leading dimensions and strides: multiples of 8 elements */
    BATCH = 3,
    UNKNOWN = 2,                /* one past the known dtype and op values */
};

/* Fake device addresses, far apart (1 TiB): no chosen case overlaps by accident. */
static const uintptr_t ADDR_A = (uintptr_t)1 << 40, ADDR_B = (uintptr_t)2 << 40, ADDR_C = (uintptr_t)3 << 40;

static const hgemm_dtype DTYPES[2] = {HGEMM_DTYPE_F16, HGEMM_DTYPE_BF16};
static const hgemm_op OPS[2] = {HGEMM_OP_N, HGEMM_OP_T};

static int gpu_present, skipped;

/* One request of hgemm_gemm; leading dimensions and strides are derived
 * from the form unless set (>= 0). */
typedef struct req {
    hgemm_kernel kernel;
    int dtype, op_a, op_b;
    int64_t m, n, k;
    float alpha;
    int64_t lda, ldb, ldc, stride_a, stride_b, stride_c, batch;
    uintptr_t A, B, C;
} req;

/* The tight leading dimension of a stored matrix with `cols` columns, padded. */
static int64_t ld_for(int64_t cols) { return (cols + LD_MULT - 1) / LD_MULT * LD_MULT + LD_PAD; }

/* A valid request in the given form: padded leading dimensions, entries of
 * every matrix back to back (one row of padding between them). */
static req valid_req(hgemm_kernel kernel, int dtype, int op_a, int op_b) {
    req r = {kernel, dtype, op_a, op_b, M, N, K, 1.0f, 0, 0, LDC, 0, 0, 0, BATCH, ADDR_A, ADDR_B, ADDR_C};
    const int64_t a_rows = op_a == HGEMM_OP_T ? K : M, a_cols = op_a == HGEMM_OP_T ? M : K;
    const int64_t b_rows = op_b == HGEMM_OP_T ? N : K, b_cols = op_b == HGEMM_OP_T ? K : N;
    r.lda = ld_for(a_cols);
    r.ldb = ld_for(b_cols);
    r.stride_a = (a_rows + 1) * r.lda;
    r.stride_b = (b_rows + 1) * r.ldb;
    r.stride_c = (M + 1) * LDC;
    return r;
}

static hgemm_status call(const req *r) {
    return hgemm_gemm(r->kernel, (hgemm_dtype)r->dtype, (hgemm_op)r->op_a, (hgemm_op)r->op_b, r->m, r->n, r->k,
                      r->alpha, (const void *)r->A, r->lda, r->stride_a, (const void *)r->B, r->ldb,
                      r->stride_b, 0.0f, (void *)r->C, r->ldc, r->stride_c, r->batch, NULL, 0);
}

static const char *dtype_name(int dtype) {
    return dtype == HGEMM_DTYPE_F16 ? "f16" : dtype == HGEMM_DTYPE_BF16 ? "bf16" : "unknown";
}

static char op_name(int op) { return op == HGEMM_OP_N ? 'N' : op == HGEMM_OP_T ? 'T' : '?'; }

/* Check one request's status. A request that must go on to the device
 * (want SUCCESS, nonempty) returns NO_DEVICE without a GPU; with one it is
 * not made (it would launch on fake addresses). */
static void expect(const char *file, int line, const char *what, const req *r, hgemm_status want) {
    char expr[256];
    snprintf(expr, sizeof expr, "%s: hgemm_gemm(%s, %s %c%c, %lld x %lld x %lld, batch %lld, strides %lld %lld %lld)",
             what, hgemm_kernel_name(r->kernel) ? hgemm_kernel_name(r->kernel) : "?", dtype_name(r->dtype),
             op_name(r->op_a), op_name(r->op_b), (long long)r->m, (long long)r->n, (long long)r->k,
             (long long)r->batch, (long long)r->stride_a, (long long)r->stride_b, (long long)r->stride_c);
    if (want == HGEMM_SUCCESS && r->m > 0 && r->n > 0 && r->batch > 0) {
        if (gpu_present) {
            skipped++;
            return;
        }
        want = HGEMM_ERROR_NO_DEVICE;
    }
    check_status(call(r), want, expr, file, line);
}

#define EXPECT(what, r, want) expect(__FILE__, __LINE__, (what), (r), (want))

/* Every kernel id the library knows, AUTO and AUTO_F16ACC included. */
static int kernel_ids(hgemm_kernel *ids, int cap) {
    int n = 0;
    ids[n++] = HGEMM_KERNEL_AUTO;
    ids[n++] = HGEMM_KERNEL_AUTO_F16ACC;
    for (int i = 0; i < hgemm__kernel_count() && n < cap; i++) ids[n++] = hgemm__kernel_at(i)->id;
    return n;
}

enum { MAX_IDS = 64 };

static void test_unknown_values(void) {
    hgemm_kernel ids[MAX_IDS];
    const int count = kernel_ids(ids, MAX_IDS);
    static const int bad[] = {UNKNOWN, -1, 0x7fffffff};
    for (int i = 0; i < count; i++) {
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            req r = valid_req(ids[i], HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T);
            r.dtype = bad[b];
            EXPECT("unknown dtype", &r, HGEMM_ERROR_INVALID_VALUE);
            r = valid_req(ids[i], HGEMM_DTYPE_BF16, HGEMM_OP_N, HGEMM_OP_T);
            r.op_a = bad[b];
            EXPECT("unknown op_a", &r, HGEMM_ERROR_INVALID_VALUE);
            r = valid_req(ids[i], HGEMM_DTYPE_F16, HGEMM_OP_T, HGEMM_OP_N);
            r.op_b = bad[b];
            EXPECT("unknown op_b", &r, HGEMM_ERROR_INVALID_VALUE);
        }
        /* decided before the no-op shortcuts: an empty C and batch 0 too */
        req r = valid_req(ids[i], UNKNOWN, HGEMM_OP_N, HGEMM_OP_T);
        r.m = 0;
        EXPECT("unknown dtype, m = 0", &r, HGEMM_ERROR_INVALID_VALUE);
        r = valid_req(ids[i], HGEMM_DTYPE_F16, UNKNOWN, HGEMM_OP_T);
        r.batch = 0;
        EXPECT("unknown op_a, batch 0", &r, HGEMM_ERROR_INVALID_VALUE);
    }
}

static void test_c_strides(void) {
    const int64_t span_c = (M - 1) * LDC + N; /* one entry of C, in elements (a multiple of 8) */
    for (int d = 0; d < 2; d++)
        for (int fa = 0; fa < 2; fa++)
            for (int fb = 0; fb < 2; fb++) {
                /* V0: every status below is decided before the form is (an
                 * invalid request is refused as such by every kernel). */
                req r = valid_req(HGEMM_KERNEL_V0, DTYPES[d], OPS[fa], OPS[fb]);
                r.stride_c = 0;
                EXPECT("entries of C on one another", &r, HGEMM_ERROR_INVALID_VALUE);
                r.stride_c = span_c - LD_MULT;
                EXPECT("entries of C overlapping by 8 elements", &r, HGEMM_ERROR_INVALID_VALUE);
                r.stride_c = (M - 1) * LDC; /* entry b+1 starts in entry b's last row */
                EXPECT("entries of C overlapping by a row", &r, HGEMM_ERROR_INVALID_VALUE);
                r.stride_c = -LDC;
                EXPECT("negative stride of C", &r, HGEMM_ERROR_INVALID_VALUE);
                r.stride_c = INT64_MAX / 2 / LD_MULT * LD_MULT;
                EXPECT("entries of C past INT64_MAX bytes", &r, HGEMM_ERROR_INVALID_VALUE);
                /* C's last entry reaches A: the batch's address ranges meet */
                r = valid_req(HGEMM_KERNEL_V0, DTYPES[d], OPS[fa], OPS[fb]);
                r.C = ADDR_A - 2 * (uintptr_t)(r.stride_c * ELEM);
                EXPECT("C's third entry on A", &r, HGEMM_ERROR_INVALID_VALUE);
                /* A's entries may overlap, and B's may be one matrix (stride 0):
                 * valid, so the series' kernel refuses the form unless fp16 NT */
                const int nt = d == 0 && fa == 0 && fb == 1;
                const hgemm_status form = nt ? HGEMM_SUCCESS : HGEMM_ERROR_NOT_SUPPORTED;
                r = valid_req(HGEMM_KERNEL_V0, DTYPES[d], OPS[fa], OPS[fb]);
                r.stride_a = LD_MULT;
                r.stride_b = 0;
                EXPECT("A's entries overlapping, B shared", &r, form);
                /* the tightest stride of C: the next entry starts in the
                 * padding after the last row's n elements */
                r.stride_c = span_c;
                EXPECT("entries of C back to back", &r, form);
                /* one entry: C's stride is never used */
                r.batch = 1;
                r.stride_c = 0;
                EXPECT("one entry, stride 0", &r, form);
            }
}

static void test_stride_alignment(void) {
    static const int64_t off[] = {1, 2, 4};
    static const int64_t batches[] = {0, 1, BATCH};
    for (size_t o = 0; o < sizeof off / sizeof off[0]; o++)
        for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++)
            for (int d = 0; d < 2; d++) {
                req r = valid_req(HGEMM_KERNEL_AUTO, DTYPES[d], HGEMM_OP_T, HGEMM_OP_N);
                r.batch = batches[b];
                r.stride_a += off[o];
                EXPECT("stride_a % 8", &r, HGEMM_ERROR_MISALIGNED);
                r = valid_req(HGEMM_KERNEL_V8, DTYPES[d], HGEMM_OP_N, HGEMM_OP_T);
                r.batch = batches[b];
                r.stride_b = off[o];
                EXPECT("stride_b % 8", &r, HGEMM_ERROR_MISALIGNED);
                r = valid_req(HGEMM_KERNEL_V3, DTYPES[d], HGEMM_OP_N, HGEMM_OP_N);
                r.batch = batches[b];
                r.stride_c += off[o];
                EXPECT("stride_c % 8", &r, HGEMM_ERROR_MISALIGNED);
            }
}

/* V0..V7 take fp16 NT only: every other type and form is NOT_SUPPORTED,
 * decided before any CUDA call (so asserted with a GPU present too). */
static void test_series_forms(void) {
    for (int v = HGEMM_KERNEL_V0; v <= HGEMM_KERNEL_V7; v++) {
        const hgemm_kernel kv = (hgemm_kernel)v;
        for (int d = 0; d < 2; d++)
            for (int fa = 0; fa < 2; fa++)
                for (int fb = 0; fb < 2; fb++) {
                    const int nt = d == 0 && fa == 0 && fb == 1;
                    const hgemm_status want = nt ? HGEMM_SUCCESS : HGEMM_ERROR_NOT_SUPPORTED;
                    req r = valid_req(kv, DTYPES[d], OPS[fa], OPS[fb]);
                    EXPECT("a batch", &r, want);
                    r.batch = 1;
                    EXPECT("one entry", &r, want);
                    r.k = 0; /* C = beta * C: still the kernel's form */
                    EXPECT("k = 0", &r, want);
                    r.k = K;
                    r.alpha = 0.0f;
                    EXPECT("alpha = 0", &r, want);
                    /* nothing to do: a successful no-op for every form */
                    r = valid_req(kv, DTYPES[d], OPS[fa], OPS[fb]);
                    r.m = 0;
                    EXPECT("m = 0", &r, HGEMM_SUCCESS);
                    r.m = M;
                    r.batch = 0;
                    EXPECT("batch 0", &r, HGEMM_SUCCESS);
                    if (nt) continue;
                    /* an invalid argument is reported as such, not as the form */
                    r = valid_req(kv, DTYPES[d], OPS[fa], OPS[fb]);
                    r.lda = (fa ? M : K) - LD_MULT;
                    EXPECT("lda below its row", &r, HGEMM_ERROR_INVALID_VALUE);
                    r = valid_req(kv, DTYPES[d], OPS[fa], OPS[fb]);
                    r.C |= LD_MULT; /* 8-byte aligned */
                    EXPECT("C misaligned", &r, HGEMM_ERROR_MISALIGNED);
                    r = valid_req(kv, DTYPES[d], OPS[fa], OPS[fb]);
                    r.C = r.A;
                    EXPECT("C on A", &r, HGEMM_ERROR_INVALID_VALUE);
                }
    }
}

/* hgemm_nt is hgemm_gemm's fp16 NT with one entry: the same status. */
static void test_nt_is_gemm(void) {
    hgemm_kernel ids[MAX_IDS];
    const int count = kernel_ids(ids, MAX_IDS);
    typedef struct { int64_t m, n, k, lda, ldb, ldc; uintptr_t A, B, C; } nt_case;
    const nt_case cases[] = {
        {M, N, K, K + LD_PAD, K + LD_PAD, LDC, ADDR_A, ADDR_B, ADDR_C},          /* valid */
        {-1, N, K, K + LD_PAD, K + LD_PAD, LDC, ADDR_A, ADDR_B, ADDR_C},         /* negative m */
        {M, N, K, K - LD_MULT, K + LD_PAD, LDC, ADDR_A, ADDR_B, ADDR_C},         /* lda short */
        {M, N, K, K + 4, K + LD_PAD, LDC, ADDR_A, ADDR_B, ADDR_C},               /* lda % 8 */
        {M, N, K, K + LD_PAD, K + LD_PAD, LDC, ADDR_A + 8, ADDR_B, ADDR_C},      /* A misaligned */
        {M, N, K, K + LD_PAD, K + LD_PAD, LDC, ADDR_A, ADDR_B, ADDR_A},          /* C on A */
        {M, N, K, K + LD_PAD, K + LD_PAD, LDC, 0, ADDR_B, ADDR_C},               /* NULL A */
        {0, N, K, K + LD_PAD, K + LD_PAD, LDC, ADDR_A, ADDR_B, ADDR_C},          /* empty */
        {(INT64_C(1) << 31), 8, 8, 8, 8, 8, ADDR_A, ADDR_B, ADDR_C},             /* m past 2^31 - 257 */
    };
    for (int i = 0; i < count; i++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            const nt_case *t = &cases[c];
            const hgemm_status nt = hgemm__preflight(ids[i], t->m, t->n, t->k, 1.0f, (const void *)t->A, t->lda,
                                                     (const void *)t->B, t->ldb, (const void *)t->C, t->ldc);
            if (nt == HGEMM_SUCCESS && t->m > 0 && t->n > 0 && gpu_present) {
                skipped++;
                continue;
            }
            const hgemm_status a = hgemm_nt(ids[i], t->m, t->n, t->k, 1.0f, (const void *)t->A, t->lda,
                                            (const void *)t->B, t->ldb, 0.0f, (void *)t->C, t->ldc, 0);
            const hgemm_status b = hgemm_gemm(ids[i], HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, t->m, t->n, t->k,
                                              1.0f, (const void *)t->A, t->lda, 0, (const void *)t->B, t->ldb, 0,
                                              0.0f, (void *)t->C, t->ldc, 0, 1, NULL, 0);
            CHECK_MSG(a == b, "kernel %s, case %zu: hgemm_nt %s, hgemm_gemm %s", hgemm_kernel_name(ids[i]), c,
                      check_status_name(a), check_status_name(b));
        }
}

int main(void) {
    gpu_present = check_gpu_present();
    printf("test_gemm_api: %s\n", gpu_present ? "a CUDA device is present"
                                              : "no CUDA device or driver: servable requests must "
                                                "return HGEMM_ERROR_NO_DEVICE");
    test_unknown_values();
    test_c_strides();
    test_stride_alignment();
    test_series_forms();
    test_nt_is_gemm();
    if (skipped)
        printf("test_gemm_api: skipped %d servable requests (a GPU is present; they would launch on "
               "fake addresses)\n", skipped);
    return check_finish();
}
