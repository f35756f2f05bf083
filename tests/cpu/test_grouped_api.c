/*
 * test_grouped_api.c: what hgemm_grouped decides before any CUDA call, on
 * the CPU, at fake aligned addresses that are never dereferenced:
 *   - unknown kernel, type or op, negative sizes, strides or SM target,
 *     leading dimensions short of their rows: INVALID_VALUE; NULL matrices
 *     or offsets where they are read: INVALID_VALUE;
 *   - leading dimensions or stride_b not multiples of 8, a matrix not 16-byte
 *     aligned, offsets not 4-byte aligned: MISALIGNED;
 *   - C sharing an element with A, a byte with B's entries or the offsets:
 *     INVALID_VALUE;
 *   - a kernel other than AUTO, a bias, an activation, an fp32 C, a separate
 *     c_in, more than HGEMM_GROUPED_MAX_GROUPS groups, a size past what the
 *     kernels address: NOT_SUPPORTED; the options' size rules as hgemm_gemm_ex's;
 *   - nothing to do (no rows, no columns, no groups): SUCCESS;
 *   - hgemm_grouped_k's own (the groups along k): overlapping groups of C,
 *     an fp32 C's doubled span, stride_c's alignment, an activation.
 * Requests that would go on to the device return NO_DEVICE where there is
 * none and are skipped (counted) where there is a GPU.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "test_check.h"
#include "internal.h"

enum { ROWS = 300, N = 264, K = 136, G = 4 };

static const uintptr_t ADDR_A = (uintptr_t)1 << 40, ADDR_B = (uintptr_t)2 << 40, ADDR_C = (uintptr_t)3 << 40,
                       ADDR_OFFS = (uintptr_t)4 << 40;

static int gpu_present, skipped;

typedef struct greq {
    hgemm_kernel kernel;
    hgemm_dtype dtype;
    hgemm_op op_b;
    int64_t rows, n, k, groups;
    uintptr_t offs;
    uintptr_t A; int64_t lda;
    uintptr_t B; int64_t ldb, stride_b;
    uintptr_t C; int64_t ldc;
} greq;

/* fp16, B stored n x k per group, packed */
static greq base(void) {
    greq r = {HGEMM_KERNEL_AUTO, HGEMM_DTYPE_F16, HGEMM_OP_T, ROWS, N, K, G, ADDR_OFFS,
              ADDR_A, K, ADDR_B, K, (int64_t)N * K, ADDR_C, N};
    return r;
}

static void expect(const char *file, int line, const char *what, const greq *r, const hgemm_options *o,
                   hgemm_status want) {
    if (want == HGEMM_SUCCESS && r->rows > 0 && r->n > 0 && r->groups > 0) {
        if (gpu_present) {
            skipped++;
            return;
        }
        want = HGEMM_ERROR_NO_DEVICE;
    }
    const hgemm_status got = hgemm_grouped(r->kernel, r->dtype, r->op_b, r->rows, r->n, r->k, r->groups,
                                           (const int32_t *)r->offs, 1.0f, (const void *)r->A, r->lda,
                                           (const void *)r->B, r->ldb, r->stride_b, 0.5f, (void *)r->C, r->ldc, o, 0);
    check_status(got, want, what, file, line);
}
#define EXPECT(what, r, o, want) expect(__FILE__, __LINE__, (what), (r), (o), (want))

static void test_values(void) {
    greq r = base();
    EXPECT("a valid call", &r, NULL, HGEMM_SUCCESS);
    r = base(), r.op_b = HGEMM_OP_N, r.ldb = N, r.stride_b = (int64_t)K * N;
    EXPECT("B stored k x n", &r, NULL, HGEMM_SUCCESS);
    r = base(), r.kernel = (hgemm_kernel)999;
    EXPECT("unknown kernel", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.dtype = (hgemm_dtype)7;
    EXPECT("unknown type", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.op_b = (hgemm_op)5;
    EXPECT("unknown op", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.rows = -1;
    EXPECT("negative rows", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.groups = -1;
    EXPECT("negative groups", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.stride_b = -8;
    EXPECT("negative stride_b", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.lda = K - 8;
    EXPECT("lda < k", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.ldb = K - 8;
    EXPECT("ldb < k (B n x k)", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.op_b = HGEMM_OP_N, r.ldb = K;
    EXPECT("ldb < n (B k x n)", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.ldc = N - 8;
    EXPECT("ldc < n", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.offs = 0;
    EXPECT("NULL offsets", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.A = 0;
    EXPECT("NULL A", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.C = 0;
    EXPECT("NULL C", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    hgemm_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.sm_count_target = -1;
    r = base();
    EXPECT("negative SM target", &r, &o, HGEMM_ERROR_INVALID_VALUE);
    o.sm_count_target = 0;
    o.size = 8;
    EXPECT("options' size short of the first version", &r, &o, HGEMM_ERROR_INVALID_VALUE);
    o.size = sizeof o;
    o.sm_count_target = 16;
    EXPECT("an SM target", &r, &o, HGEMM_SUCCESS);
}

static void test_alignment(void) {
    greq r = base();
    r.lda = K + 4;
    EXPECT("lda % 8", &r, NULL, HGEMM_ERROR_MISALIGNED);
    r = base(), r.stride_b = (int64_t)N * K + 4;
    EXPECT("stride_b % 8", &r, NULL, HGEMM_ERROR_MISALIGNED);
    r = base(), r.B = ADDR_B + 8;
    EXPECT("B at 8 bytes", &r, NULL, HGEMM_ERROR_MISALIGNED);
    r = base(), r.offs = ADDR_OFFS + 2;
    EXPECT("offsets at 2 bytes", &r, NULL, HGEMM_ERROR_MISALIGNED);
    r = base(), r.offs = ADDR_OFFS + 4;
    EXPECT("offsets at 4 bytes", &r, NULL, HGEMM_SUCCESS);
}

static void test_overlaps(void) {
    greq r = base();
    r.C = ADDR_A;
    EXPECT("C is A", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.C = ADDR_B + (uintptr_t)(3 * N * K * 2); /* inside B's last entry */
    EXPECT("C inside B's last entry", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.offs = ADDR_C + 64;
    EXPECT("offsets inside C", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.offs = ADDR_A + 64;
    EXPECT("offsets inside A (only read)", &r, NULL, HGEMM_SUCCESS);
}

static void test_not_supported(void) {
    greq r = base();
    r.kernel = HGEMM_KERNEL_V8;
    EXPECT("V8 named", &r, NULL, HGEMM_ERROR_NOT_SUPPORTED);
    r = base(), r.groups = HGEMM_GROUPED_MAX_GROUPS + 1, r.stride_b = 0;
    EXPECT("too many groups", &r, NULL, HGEMM_ERROR_NOT_SUPPORTED);
    r = base(), r.groups = HGEMM_GROUPED_MAX_GROUPS, r.stride_b = 0;
    EXPECT("the most groups, one B", &r, NULL, HGEMM_SUCCESS);
    r = base(), r.rows = (int64_t)1 << 31, r.C = (uintptr_t)1 << 46, r.A = (uintptr_t)1 << 45;
    EXPECT("rows past int32", &r, NULL, HGEMM_ERROR_NOT_SUPPORTED);
    hgemm_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.activation = HGEMM_ACTIVATION_RELU;
    r = base();
    EXPECT("an activation", &r, &o, HGEMM_ERROR_NOT_SUPPORTED);
    o.activation = HGEMM_ACTIVATION_NONE;
    o.c_fp32 = 1;
    EXPECT("an fp32 C", &r, &o, HGEMM_ERROR_NOT_SUPPORTED);
    o.c_fp32 = 0;
    o.bias = (const void *)((uintptr_t)5 << 40);
    o.bias_dtype = HGEMM_DTYPE_F16;
    EXPECT("a bias", &r, &o, HGEMM_ERROR_NOT_SUPPORTED);
    o.bias = NULL;
    o.c_in = (const void *)((uintptr_t)6 << 40);
    o.ldc_in = N;
    EXPECT("a separate c_in", &r, &o, HGEMM_ERROR_NOT_SUPPORTED);
    o.c_in = (const void *)ADDR_C;
    EXPECT("c_in that is C", &r, &o, HGEMM_SUCCESS);
}

static void test_nothing_to_do(void) {
    greq r = base();
    r.rows = 0;
    EXPECT("no rows", &r, NULL, HGEMM_SUCCESS);
    r = base(), r.n = 0;
    EXPECT("no columns", &r, NULL, HGEMM_SUCCESS);
    r = base(), r.groups = 0, r.offs = 0;
    EXPECT("no groups, no offsets", &r, NULL, HGEMM_SUCCESS);
    r = base(), r.k = 0, r.lda = 8, r.ldb = 8, r.stride_b = (int64_t)N * 8;
    EXPECT("k 0: C = beta C in the groups", &r, NULL, HGEMM_SUCCESS);
}

/* hgemm_grouped_k: dW_g = dY_g^T X_g over G groups of ROWS tokens in all:
 * A (ROWS x N) and B (ROWS x K) row-major, C_g (N x K) packed one after another. */
typedef struct kreq {
    hgemm_dtype dtype;
    int64_t m, n, total_k, groups;
    uintptr_t offs, A; int64_t lda;
    uintptr_t B; int64_t ldb;
    uintptr_t C; int64_t ldc, stride_c;
} kreq;

static kreq kbase(void) {
    kreq r = {HGEMM_DTYPE_BF16, N, K, ROWS, G, ADDR_OFFS, ADDR_A, N, ADDR_B, K, ADDR_C, K, (int64_t)N * K};
    return r;
}

static void kexpect(const char *file, int line, const char *what, const kreq *r, hgemm_kernel kernel,
                    const hgemm_options *o, hgemm_status want) {
    if (want == HGEMM_SUCCESS && r->m > 0 && r->n > 0 && r->groups > 0) {
        if (gpu_present) {
            skipped++;
            return;
        }
        want = HGEMM_ERROR_NO_DEVICE;
    }
    const hgemm_status got = hgemm_grouped_k(kernel, r->dtype, r->m, r->n, r->total_k, r->groups,
                                             (const int32_t *)r->offs, 1.0f, (const void *)r->A, r->lda,
                                             (const void *)r->B, r->ldb, 1.0f, (void *)r->C, r->ldc, r->stride_c, o, 0);
    check_status(got, want, what, file, line);
}
#define KEXPECT(what, r, o, want) kexpect(__FILE__, __LINE__, (what), (r), HGEMM_KERNEL_AUTO, (o), (want))

static void test_grouped_k(void) {
    kreq r = kbase();
    KEXPECT("k-grouped: a valid call", &r, NULL, HGEMM_SUCCESS);
    hgemm_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.c_fp32 = 1;
    KEXPECT("k-grouped: fp32 C", &r, &o, HGEMM_SUCCESS);
    r = kbase(), r.total_k = 0;
    KEXPECT("k-grouped: no rows (C = beta C)", &r, NULL, HGEMM_SUCCESS);
    r = kbase(), r.groups = 0;
    KEXPECT("k-grouped: no groups", &r, NULL, HGEMM_SUCCESS);
    r = kbase(), r.m = 0;
    KEXPECT("k-grouped: no rows of C", &r, NULL, HGEMM_SUCCESS);
    /* invalid values */
    kexpect(__FILE__, __LINE__, "k-grouped: unknown kernel", &r, (hgemm_kernel)999, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = kbase(), r.dtype = HGEMM_DTYPE_E4M3;
    KEXPECT("k-grouped: an fp8 type", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = kbase(), r.total_k = -1;
    KEXPECT("k-grouped: negative total_k", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = kbase(), r.stride_c = -8;
    KEXPECT("k-grouped: negative stride_c", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = kbase(), r.lda = N - 8;
    KEXPECT("k-grouped: lda short of m", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = kbase(), r.ldb = K - 8;
    KEXPECT("k-grouped: ldb short of n", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = kbase(), r.stride_c = (int64_t)N * K - 8;
    KEXPECT("k-grouped: groups of C overlapping", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = kbase(), r.offs = 0;
    KEXPECT("k-grouped: NULL offsets", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    /* alignment */
    r = kbase(), r.lda = N + 4;
    KEXPECT("k-grouped: lda not a multiple of 8", &r, NULL, HGEMM_ERROR_MISALIGNED);
    r = kbase(), r.stride_c = (int64_t)N * K + 4;
    KEXPECT("k-grouped: stride_c not a multiple of 8", &r, NULL, HGEMM_ERROR_MISALIGNED);
    r = kbase(), r.B = ADDR_B + 8;
    KEXPECT("k-grouped: B not 16-byte aligned", &r, NULL, HGEMM_ERROR_MISALIGNED);
    /* overlaps: the last group's C on A, C on the offsets */
    r = kbase(), r.C = ADDR_A - (uintptr_t)(G - 1) * N * K * 2 - 16;
    KEXPECT("k-grouped: the last group's C on A", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = kbase(), r.C = ADDR_OFFS - 16;
    KEXPECT("k-grouped: C on the offsets", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.c_fp32 = 1;
    r = kbase(), r.C = ADDR_A - (uintptr_t)(G - 1) * N * K * 4 - (uintptr_t)N * K * 2;
    KEXPECT("k-grouped: an fp32 C reaching A (twice the bytes)", &r, &o, HGEMM_ERROR_INVALID_VALUE);
    /* not supported */
    r = kbase();
    kexpect(__FILE__, __LINE__, "k-grouped: a named kernel", &r, HGEMM_KERNEL_V8, NULL, HGEMM_ERROR_NOT_SUPPORTED);
    r = kbase(), r.groups = HGEMM_GROUPED_MAX_GROUPS + 1;
    KEXPECT("k-grouped: past the most groups", &r, NULL, HGEMM_ERROR_NOT_SUPPORTED);
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.activation = HGEMM_ACTIVATION_RELU;
    r = kbase();
    KEXPECT("k-grouped: an activation", &r, &o, HGEMM_ERROR_NOT_SUPPORTED);
}

int main(void) {
    gpu_present = check_gpu_present();
    test_grouped_k();
    test_values();
    test_alignment();
    test_overlaps();
    test_not_supported();
    test_nothing_to_do();
    if (skipped) printf("%d valid calls skipped: a GPU is present\n", skipped);
    return check_finish();
}
