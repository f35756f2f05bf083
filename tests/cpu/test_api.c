/*
 * test_api.c: every argument check of hgemm_nt and hgemm__validate, with the
 * exact status each returns, on the CPU. Matrices live at fake, 16-byte
 * aligned addresses that are never dereferenced: the library must decide
 * everything before its first CUDA call. A fully valid request must then
 * report HGEMM_ERROR_NO_DEVICE where there is no GPU or driver (or
 * HGEMM_ERROR_NOT_SUPPORTED when a size exceeds TMA's 32-bit coordinates);
 * where a GPU is present the NO_DEVICE calls are skipped (they would launch
 * on fake addresses) and the program says how many. hgemm__preflight (what
 * hgemm_nt decides before its first CUDA call) is checked beside each.
 */
#include <stdint.h>
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "test_check.h"
#include "internal.h"

enum {
    M = 64, N = 48, K = 32,  /* a small valid problem */
    LD_PAD = 8,              /* elements of padding after each row */
    LDA = K + LD_PAD, LDB = K + LD_PAD, LDC = N + LD_PAD,
    ELEM_BYTES = 2,          /* fp16 */
    ALIGN_BYTES = 16,        /* required pointer alignment */
    LD_MULTIPLE = 8,         /* required leading-dimension multiple, elements */
    UNKNOWN_KERNEL = 99,
};

/* Fake device addresses, far apart so that only chosen cases overlap. */
static const uintptr_t ADDR_A = 0x100000, ADDR_B = 0x200000, ADDR_C = 0x300000;
/* Far above A and B: room for C beside an A of 2^31 rows (< 2^38 bytes). */
static const uintptr_t ADDR_FAR = (uintptr_t)1 << 40;
/* Low addresses that are 8-, 4- and 2-byte but not 16-byte aligned. */
static const uintptr_t ADDR_LOW_8 = 0x1008, ADDR_LOW_4 = 0x2004, ADDR_LOW_2 = 0x3002;
/* TMA coordinates are 32-bit signed: hgemm_nt serves m, n, k up to INT32_MAX
 * less the largest tile side (256), so that no tile coordinate overflows. */
static const int64_t MAX_DIM = INT32_MAX - 256;
/* cuTensorMapEncodeTiled: row strides below 2^40 bytes, 2^39 fp16 elements. */
static const int64_t TMA_LD_LIMIT = INT64_C(1) << 39;
/* CUDA grids: at most 65535 blocks along y (V0..V3 put tile rows there). */
static const int64_t MAX_GRID_Y = 65535;
/* Tile rows of V0 and of V1..V3 (one grid row each). */
static const int64_t V0_TILE_M = 128, V1_TILE_M = 64;
/* Far above everything that spans up to 2^40 + 2^33 bytes from below. */
static const uintptr_t ADDR_FARTHER = (uintptr_t)1 << 44;
static const float ALPHA = 1.0f, BETA = 0.0f;

/* Largest row count whose span still fits in int64 for cols == ld == 8:
 * ((rows - 1) * 8 + 8) * 2 <= INT64_MAX  <=>  rows <= 2^59 - 1. */
static const int64_t SPAN_ROWS_MAX = (INT64_C(1) << 59) - 1;

/* Bytes a row-major (rows x cols) fp16 matrix spans with leading dimension ld. */
static uintptr_t span(int64_t rows, int64_t cols, int64_t ld) {
    return (uintptr_t)(((rows - 1) * ld + cols) * ELEM_BYTES);
}

static const void *addr(uintptr_t a) { return (const void *)a; }

static int gpu_present;
static int skipped;

/* Check hgemm__validate returns `want`, then hgemm_nt returns what follows
 * from it: the same error; SUCCESS for an empty C (no CUDA call);
 * NOT_SUPPORTED for a size beyond TMA's coordinates; else NO_DEVICE on a
 * machine without a GPU. */
static void expect(const char *file, int line, const char *args, hgemm_status want,
                   hgemm_kernel kernel, int64_t m, int64_t n, int64_t k, const void *A,
                   int64_t lda, const void *B, int64_t ldb, const void *C, int64_t ldc) {
    char expr[512];
    snprintf(expr, sizeof expr, "hgemm__validate(%s)", args);
    check_status(hgemm__validate(kernel, m, n, k, A, lda, B, ldb, C, ldc), want, expr, file, line);

    hgemm_status nt_want = want;
    if (want == HGEMM_SUCCESS && m > 0 && n > 0 && (m > MAX_DIM || n > MAX_DIM || k > MAX_DIM))
        nt_want = HGEMM_ERROR_NOT_SUPPORTED; /* decided before any CUDA call */
    snprintf(expr, sizeof expr, "hgemm__preflight(%s)", args);
    check_status(hgemm__preflight(kernel, m, n, k, ALPHA, A, lda, B, ldb, C, ldc), nt_want, expr,
                 file, line);
    if (nt_want == HGEMM_SUCCESS) {
        if (m == 0 || n == 0) {
            nt_want = HGEMM_SUCCESS;
        } else if (gpu_present) {
            skipped++;
            return;
        } else {
            nt_want = HGEMM_ERROR_NO_DEVICE;
        }
    }
    snprintf(expr, sizeof expr, "hgemm_nt(%s)", args);
    check_status(hgemm_nt(kernel, m, n, k, ALPHA, A, lda, B, ldb, BETA, (void *)(uintptr_t)C, ldc,
                          NULL),
                 nt_want, expr, file, line);
}

#define EXPECT(want, ...) expect(__FILE__, __LINE__, #__VA_ARGS__, (want), __VA_ARGS__)

/* A valid request (hgemm__validate: SUCCESS) whose pre-device decision is
 * `pre`: hgemm__preflight returns it, and hgemm_nt returns it too, or, when
 * it is SUCCESS, NO_DEVICE without a GPU (SUCCESS for an empty C). */
static void expect_pre(const char *file, int line, const char *args, hgemm_status pre,
                       hgemm_kernel kernel, int64_t m, int64_t n, int64_t k, float alpha,
                       const void *A, int64_t lda, const void *B, int64_t ldb, const void *C,
                       int64_t ldc) {
    char expr[512];
    snprintf(expr, sizeof expr, "hgemm__validate(%s)", args);
    check_status(hgemm__validate(kernel, m, n, k, A, lda, B, ldb, C, ldc), HGEMM_SUCCESS, expr,
                 file, line);
    snprintf(expr, sizeof expr, "hgemm__preflight(%s)", args);
    check_status(hgemm__preflight(kernel, m, n, k, alpha, A, lda, B, ldb, C, ldc), pre, expr, file,
                 line);
    hgemm_status nt_want = pre;
    if (pre == HGEMM_SUCCESS && m > 0 && n > 0) {
        if (gpu_present) {
            skipped++;
            return;
        }
        nt_want = HGEMM_ERROR_NO_DEVICE;
    }
    snprintf(expr, sizeof expr, "hgemm_nt(%s)", args);
    check_status(hgemm_nt(kernel, m, n, k, alpha, A, lda, B, ldb, BETA, (void *)(uintptr_t)C, ldc,
                          NULL),
                 nt_want, expr, file, line);
}

#define EXPECT_PRE(pre, ...) expect_pre(__FILE__, __LINE__, #__VA_ARGS__, (pre), __VA_ARGS__)
#define NOT_SUPPORTED HGEMM_ERROR_NOT_SUPPORTED

#define OK HGEMM_SUCCESS
#define INVALID HGEMM_ERROR_INVALID_VALUE
#define MISALIGNED HGEMM_ERROR_MISALIGNED

static const hgemm_kernel AUTO = HGEMM_KERNEL_AUTO;

static void test_valid(void) {
    const void *A = addr(ADDR_A), *B = addr(ADDR_B), *C = addr(ADDR_C);
    EXPECT(OK, AUTO, M, N, K, A, LDA, B, LDB, C, LDC);
    EXPECT(OK, AUTO, M, N, K, A, K, B, K, C, N); /* tight leading dimensions */
    EXPECT(OK, AUTO, 1, 1, 1, A, LD_MULTIPLE, B, LD_MULTIPLE, C, LD_MULTIPLE);
    for (int i = 0; i < hgemm__kernel_count(); i++) {
        hgemm_kernel id = hgemm__kernel_at(i)->id;
        EXPECT(OK, id, M, N, K, A, LDA, B, LDB, C, LDC);
    }
    /* A and B are only read: they may overlap, fully or partly. */
    EXPECT(OK, AUTO, M, N, K, A, LDA, A, LDB, C, LDC);
    EXPECT(OK, AUTO, M, N, K, A, LDA, addr(ADDR_A + ALIGN_BYTES), LDB, C, LDC);
}

static void test_kernel_ids(void) {
    const void *A = addr(ADDR_A), *B = addr(ADDR_B), *C = addr(ADDR_C);
    /* The table's ids end with V9; AUTO_F16ACC follows; the next one is unknown. */
    hgemm_kernel past_end = (hgemm_kernel)(HGEMM_KERNEL_AUTO_F16ACC + 1);
    CHECK_I64(HGEMM_KERNEL_AUTO_F16ACC, HGEMM_KERNEL_V0 + hgemm__kernel_count());
    EXPECT(INVALID, (hgemm_kernel)UNKNOWN_KERNEL, M, N, K, A, LDA, B, LDB, C, LDC);
    EXPECT(INVALID, (hgemm_kernel)-1, M, N, K, A, LDA, B, LDB, C, LDC);
    EXPECT(INVALID, past_end, M, N, K, A, LDA, B, LDB, C, LDC);
    /* Checked even when there is nothing to do. */
    EXPECT(INVALID, (hgemm_kernel)UNKNOWN_KERNEL, 0, 0, 0, NULL, LD_MULTIPLE, NULL, LD_MULTIPLE,
           NULL, LD_MULTIPLE);
}

static void test_negative_sizes(void) {
    const void *A = addr(ADDR_A), *B = addr(ADDR_B), *C = addr(ADDR_C);
    EXPECT(INVALID, AUTO, -1, N, K, A, LDA, B, LDB, C, LDC);
    EXPECT(INVALID, AUTO, M, -1, K, A, LDA, B, LDB, C, LDC);
    EXPECT(INVALID, AUTO, M, N, -1, A, LDA, B, LDB, C, LDC);
    EXPECT(INVALID, AUTO, INT64_MIN, N, K, A, LDA, B, LDB, C, LDC);
    EXPECT(INVALID, AUTO, M, INT64_MIN, K, A, LDA, B, LDB, C, LDC);
    EXPECT(INVALID, AUTO, M, N, INT64_MIN, A, LDA, B, LDB, C, LDC);
    /* A negative size is an error even when another size is zero. */
    EXPECT(INVALID, AUTO, 0, N, -1, A, LDA, B, LDB, C, LDC);
    EXPECT(INVALID, AUTO, -1, 0, K, A, LDA, B, LDB, C, LDC);
}

static void test_leading_dimensions(void) {
    const void *A = addr(ADDR_A), *B = addr(ADDR_B), *C = addr(ADDR_C);
    /* Smaller than the row (still multiples of 8, so only the size is wrong). */
    EXPECT(INVALID, AUTO, M, N, K, A, K - LD_MULTIPLE, B, LDB, C, LDC);
    EXPECT(INVALID, AUTO, M, N, K, A, LDA, B, K - LD_MULTIPLE, C, LDC);
    EXPECT(INVALID, AUTO, M, N, K, A, LDA, B, LDB, C, N - LD_MULTIPLE);
    /* Zero and negative. */
    EXPECT(INVALID, AUTO, M, N, K, A, 0, B, LDB, C, LDC);
    EXPECT(INVALID, AUTO, M, N, K, A, LDA, B, 0, C, LDC);
    EXPECT(INVALID, AUTO, M, N, K, A, LDA, B, LDB, C, 0);
    EXPECT(INVALID, AUTO, M, N, K, A, -LDA, B, LDB, C, LDC);
    EXPECT(INVALID, AUTO, M, N, K, A, LDA, B, -LDB, C, LDC);
    EXPECT(INVALID, AUTO, M, N, K, A, LDA, B, LDB, C, -LDC);
    /* A leading dimension is at least 1 even for an empty matrix. */
    EXPECT(INVALID, AUTO, M, N, 0, NULL, 0, NULL, LD_MULTIPLE, C, LDC);
    EXPECT(INVALID, AUTO, M, N, 0, NULL, LD_MULTIPLE, NULL, 0, C, LDC);
    EXPECT(INVALID, AUTO, M, 0, K, A, LDA, NULL, LDB, NULL, 0);
    EXPECT(INVALID, AUTO, 0, N, 0, NULL, 0, NULL, LD_MULTIPLE, NULL, LDC);
    EXPECT(INVALID, AUTO, 0, 0, 0, NULL, 0, NULL, 0, NULL, 0);
    /* Large enough but not a multiple of 8. */
    EXPECT(MISALIGNED, AUTO, M, N, K, A, K + 1, B, LDB, C, LDC);
    EXPECT(MISALIGNED, AUTO, M, N, K, A, LDA, B, K + 1, C, LDC);
    EXPECT(MISALIGNED, AUTO, M, N, K, A, LDA, B, LDB, C, N + 1);
    EXPECT(MISALIGNED, AUTO, M, N, K, A, K + LD_MULTIPLE / 2, B, LDB, C, LDC);
    /* ... also where the matrix is empty: the rule is on the number. */
    EXPECT(MISALIGNED, AUTO, M, N, 0, NULL, 1, NULL, LD_MULTIPLE, C, LDC);
    EXPECT(MISALIGNED, AUTO, 0, N, K, NULL, LDA, B, LDB, NULL, N + 1);
    /* A row that is not a multiple of 8 is fine with a padded ld. */
    EXPECT(OK, AUTO, M + 1, N + 1, K + 1, A, LDA, B, LDB, C, LDC);
}

static void test_null_pointers(void) {
    const void *A = addr(ADDR_A), *B = addr(ADDR_B), *C = addr(ADDR_C);
    EXPECT(INVALID, AUTO, M, N, K, NULL, LDA, B, LDB, C, LDC);
    EXPECT(INVALID, AUTO, M, N, K, A, LDA, NULL, LDB, C, LDC);
    EXPECT(INVALID, AUTO, M, N, K, A, LDA, B, LDB, NULL, LDC);
    EXPECT(INVALID, AUTO, 1, 1, 1, NULL, LD_MULTIPLE, NULL, LD_MULTIPLE, NULL, LD_MULTIPLE);
    /* k == 0: A and B hold nothing and may be NULL; C = beta * C still needs C. */
    EXPECT(OK, AUTO, M, N, 0, NULL, LD_MULTIPLE, NULL, LD_MULTIPLE, C, LDC);
    EXPECT(OK, AUTO, M, N, 0, A, LD_MULTIPLE, NULL, LD_MULTIPLE, C, LDC);
    EXPECT(INVALID, AUTO, M, N, 0, NULL, LD_MULTIPLE, NULL, LD_MULTIPLE, NULL, LDC);
    /* m == 0: A and C are empty; B (n x k) is not. */
    EXPECT(OK, AUTO, 0, N, K, NULL, LDA, B, LDB, NULL, LDC);
    EXPECT(INVALID, AUTO, 0, N, K, NULL, LDA, NULL, LDB, NULL, LDC);
    /* n == 0: B and C are empty; A (m x k) is not. */
    EXPECT(OK, AUTO, M, 0, K, A, LDA, NULL, LDB, NULL, LD_MULTIPLE);
    EXPECT(INVALID, AUTO, M, 0, K, NULL, LDA, NULL, LDB, NULL, LD_MULTIPLE);
    /* Everything empty. */
    EXPECT(OK, AUTO, 0, 0, 0, NULL, LD_MULTIPLE, NULL, LD_MULTIPLE, NULL, LD_MULTIPLE);
    EXPECT(OK, AUTO, 0, 0, K, NULL, LDA, NULL, LDB, NULL, LD_MULTIPLE);
}

static void test_empty_is_noop(void) {
    const void *A = addr(ADDR_A), *B = addr(ADDR_B), *C = addr(ADDR_C);
    /* m == 0 or n == 0 succeeds without a device (no CUDA call is made). */
    EXPECT(OK, AUTO, 0, N, K, A, LDA, B, LDB, C, LDC);
    EXPECT(OK, AUTO, M, 0, K, A, LDA, B, LDB, C, LDC);
    EXPECT(OK, AUTO, 0, 0, K, A, LDA, B, LDB, C, LDC);
    EXPECT(OK, AUTO, 0, N, 0, A, LD_MULTIPLE, B, LD_MULTIPLE, C, LDC);
    for (int i = 0; i < hgemm__kernel_count(); i++) {
        hgemm_kernel id = hgemm__kernel_at(i)->id;
        EXPECT(OK, id, 0, N, K, A, LDA, B, LDB, C, LDC);
        EXPECT(OK, id, M, 0, K, A, LDA, B, LDB, C, LDC);
    }
    /* With n == k == 0 nothing has a byte, however large m is. */
    EXPECT(OK, AUTO, INT64_MAX, 0, 0, NULL, LD_MULTIPLE, NULL, LD_MULTIPLE, NULL, LD_MULTIPLE);
}

static void test_alignment(void) {
    const void *A = addr(ADDR_A), *B = addr(ADDR_B), *C = addr(ADDR_C);
    const uintptr_t HALF = ALIGN_BYTES / 2, ONE_ELEMENT = ELEM_BYTES;
    EXPECT(MISALIGNED, AUTO, M, N, K, addr(ADDR_A + HALF), LDA, B, LDB, C, LDC);
    EXPECT(MISALIGNED, AUTO, M, N, K, A, LDA, addr(ADDR_B + HALF), LDB, C, LDC);
    EXPECT(MISALIGNED, AUTO, M, N, K, A, LDA, B, LDB, addr(ADDR_C + HALF), LDC);
    EXPECT(MISALIGNED, AUTO, M, N, K, addr(ADDR_A + ONE_ELEMENT), LDA, B, LDB, C, LDC);
    EXPECT(MISALIGNED, AUTO, M, N, K, A, LDA, addr(ADDR_B + ONE_ELEMENT), LDB, C, LDC);
    EXPECT(MISALIGNED, AUTO, M, N, K, A, LDA, B, LDB, addr(ADDR_C + ONE_ELEMENT), LDC);
    EXPECT(MISALIGNED, AUTO, M, N, K, addr(ADDR_LOW_8), LDA, B, LDB, C, LDC);
    EXPECT(MISALIGNED, AUTO, M, N, K, addr(ADDR_A + 1), LDA, B, LDB, C, LDC); /* odd byte */
    /* Alignment of an empty matrix is not checked. */
    EXPECT(OK, AUTO, M, N, 0, addr(ADDR_LOW_8), LD_MULTIPLE, addr(ADDR_LOW_4), LD_MULTIPLE, C, LDC);
    EXPECT(OK, AUTO, 0, N, K, addr(ADDR_LOW_8), LDA, B, LDB, addr(ADDR_LOW_2), LDC);
}

static void test_overlap(void) {
    const uintptr_t a_span = span(M, K, LDA), b_span = span(N, K, LDB), c_span = span(M, N, LDC);
    const void *A = addr(ADDR_A), *B = addr(ADDR_B);
    /* The spans must stay 16-byte multiples for adjacent placements to be aligned. */
    CHECK(a_span % ALIGN_BYTES == 0 && b_span % ALIGN_BYTES == 0 && c_span % ALIGN_BYTES == 0);
    CHECK(c_span > a_span && c_span > b_span); /* so C can cover A or B fully */

    /* C against A. */
    EXPECT(INVALID, AUTO, M, N, K, A, LDA, B, LDB, addr(ADDR_A), LDC);                  /* same start */
    EXPECT(INVALID, AUTO, M, N, K, A, LDA, B, LDB, addr(ADDR_A + ALIGN_BYTES), LDC);    /* inside */
    EXPECT(INVALID, AUTO, M, N, K, A, LDA, B, LDB, addr(ADDR_A - ALIGN_BYTES), LDC);    /* covers A */
    EXPECT(INVALID, AUTO, M, N, K, A, LDA, B, LDB, addr(ADDR_A + a_span - ALIGN_BYTES), LDC);
    EXPECT(INVALID, AUTO, M, N, K, A, LDA, B, LDB, addr(ADDR_A - c_span + ALIGN_BYTES), LDC);
    EXPECT(OK, AUTO, M, N, K, A, LDA, B, LDB, addr(ADDR_A + a_span), LDC);  /* right after A */
    EXPECT(OK, AUTO, M, N, K, A, LDA, B, LDB, addr(ADDR_A - c_span), LDC);  /* right before A */

    /* C against B. */
    EXPECT(INVALID, AUTO, M, N, K, A, LDA, B, LDB, addr(ADDR_B), LDC);
    EXPECT(INVALID, AUTO, M, N, K, A, LDA, B, LDB, addr(ADDR_B + ALIGN_BYTES), LDC);
    EXPECT(INVALID, AUTO, M, N, K, A, LDA, B, LDB, addr(ADDR_B - ALIGN_BYTES), LDC);
    EXPECT(INVALID, AUTO, M, N, K, A, LDA, B, LDB, addr(ADDR_B + b_span - ALIGN_BYTES), LDC);
    EXPECT(INVALID, AUTO, M, N, K, A, LDA, B, LDB, addr(ADDR_B - c_span + ALIGN_BYTES), LDC);
    EXPECT(OK, AUTO, M, N, K, A, LDA, B, LDB, addr(ADDR_B + b_span), LDC);
    EXPECT(OK, AUTO, M, N, K, A, LDA, B, LDB, addr(ADDR_B - c_span), LDC);

    /* C in place of both. */
    EXPECT(INVALID, AUTO, M, N, K, A, LDA, A, LDB, addr(ADDR_A), LDC);
    /* An empty matrix overlaps nothing. */
    EXPECT(OK, AUTO, M, N, 0, A, LD_MULTIPLE, B, LD_MULTIPLE, addr(ADDR_A), LDC);
    EXPECT(OK, AUTO, M, N, 0, A, LD_MULTIPLE, B, LD_MULTIPLE, addr(ADDR_B), LDC);
    EXPECT(OK, AUTO, 0, N, K, A, LDA, B, LDB, addr(ADDR_B), LDC);
    EXPECT(OK, AUTO, M, 0, K, A, LDA, B, LDB, addr(ADDR_A), LDC);
}

/* Two things wrong at once: the first check in hgemm__validate's order wins:
 * kernel, negative size, ld too small, span overflow, NULL, ld % 8,
 * pointer alignment, overlap. */
static void test_precedence(void) {
    const void *A = addr(ADDR_A), *B = addr(ADDR_B), *C = addr(ADDR_C);
    const void *A_MIS = addr(ADDR_A + ALIGN_BYTES / 2), *C_MIS = addr(ADDR_C + ALIGN_BYTES / 2);
    hgemm_kernel bad = (hgemm_kernel)UNKNOWN_KERNEL;
    /* Unknown kernel beats MISALIGNED. */
    EXPECT(INVALID, bad, M, N, K, A, K + 1, B, LDB, C, LDC);
    EXPECT(INVALID, bad, M, N, K, A_MIS, LDA, B, LDB, C, LDC);
    /* Negative size beats MISALIGNED. */
    EXPECT(INVALID, AUTO, M, N, -1, A, K + 1, B, LDB, C, LDC);
    EXPECT(INVALID, AUTO, -1, N, K, A_MIS, LDA, B, LDB, C, LDC);
    /* ld too small beats ld % 8 (the same number is wrong both ways). */
    EXPECT(INVALID, AUTO, M, N, K, A, K - 1, B, LDB, C, LDC);
    EXPECT(INVALID, AUTO, M, N, K, A, LDA, B, LDB, C, N - 1);
    /* ld too small beats a misaligned pointer. */
    EXPECT(INVALID, AUTO, M, N, K, A_MIS, K - LD_MULTIPLE, B, LDB, C, LDC);
    /* Span overflow beats ld % 8. */
    EXPECT(INVALID, AUTO, INT64_MAX, N, K, A, K + 1, B, LDB, C, LDC);
    /* NULL beats ld % 8 and a misaligned pointer elsewhere. */
    EXPECT(INVALID, AUTO, M, N, K, NULL, LDA, B, K + 1, C, LDC);
    EXPECT(INVALID, AUTO, M, N, K, A_MIS, LDA, B, LDB, NULL, LDC);
    /* ld % 8 beats a misaligned pointer and an overlap. */
    EXPECT(MISALIGNED, AUTO, M, N, K, A_MIS, K + 1, B, LDB, C, LDC);
    EXPECT(MISALIGNED, AUTO, M, N, K, A, LDA, B, LDB, addr(ADDR_A), N + 1);
    /* A misaligned pointer beats an overlap. */
    EXPECT(MISALIGNED, AUTO, M, N, K, A, LDA, B, LDB, addr(ADDR_A + ALIGN_BYTES / 2), LDC);
    EXPECT(MISALIGNED, AUTO, M, N, K, A_MIS, LDA, B, LDB, addr(ADDR_A + ALIGN_BYTES), LDC);
    EXPECT(MISALIGNED, AUTO, M, N, K, A, LDA, B, LDB, C_MIS, LDC);
}

/* Sizes whose byte span cannot exist in memory. */
static void test_overflow(void) {
    const void *A = addr(ADDR_A), *B = addr(ADDR_B), *C = addr(ADDR_C);
    const int64_t L = LD_MULTIPLE;
    const int64_t BIG_LD = INT64_C(1) << 61, HUGE_LD = INT64_C(1) << 62;
    EXPECT(INVALID, AUTO, INT64_MAX, N, K, A, LDA, B, LDB, C, LDC);
    EXPECT(INVALID, AUTO, M, INT64_MAX, K, A, LDA, B, LDB, C, INT64_MAX);
    EXPECT(INVALID, AUTO, M, N, INT64_MAX, A, INT64_MAX, B, INT64_MAX, C, LDC);
    EXPECT(INVALID, AUTO, INT64_MAX, INT64_MAX, INT64_MAX, A, INT64_MAX, B, INT64_MAX, C, INT64_MAX);
    /* The exact boundary, one matrix at a time (the others empty). A: n == 0. */
    EXPECT(INVALID, AUTO, SPAN_ROWS_MAX + 1, 0, L, A, L, NULL, L, NULL, L);
    EXPECT(OK, AUTO, SPAN_ROWS_MAX, 0, L, A, L, NULL, L, NULL, L);
    /* B: m == 0. */
    EXPECT(INVALID, AUTO, 0, SPAN_ROWS_MAX + 1, L, NULL, L, B, L, NULL, SPAN_ROWS_MAX + 1);
    EXPECT(OK, AUTO, 0, SPAN_ROWS_MAX, L, NULL, L, B, L, NULL, SPAN_ROWS_MAX + 1);
    /* C: k == 0. */
    EXPECT(INVALID, AUTO, SPAN_ROWS_MAX + 1, L, 0, NULL, L, NULL, L, C, L);
    EXPECT(OK, AUTO, SPAN_ROWS_MAX, L, 0, NULL, L, NULL, L, C, L);
    /* Overflow through the leading dimension: two rows 2^62 elements apart. */
    EXPECT(INVALID, AUTO, 2, N, K, A, HUGE_LD, B, LDB, C, LDC);
    EXPECT(INVALID, AUTO, 2, N, K, A, LDA, B, LDB, C, HUGE_LD);
    EXPECT(INVALID, AUTO, M, 2, K, A, LDA, B, HUGE_LD, C, LDC);
    EXPECT(OK, AUTO, 2, 0, K, A, BIG_LD, B, LDB, NULL, LDC); /* 2^62 + 64 bytes: fits */
    /* Overflow through one long row, 2 * cols > INT64_MAX, in a one-row
     * matrix while the other two are empty. */
    const int64_t LONGEST_LD = INT64_MAX - (LD_MULTIPLE - 1); /* 2^63 - 8 */
    EXPECT(INVALID, AUTO, 1, 0, HUGE_LD, A, HUGE_LD, NULL, HUGE_LD, NULL, L);      /* A */
    EXPECT(INVALID, AUTO, 0, 1, HUGE_LD, NULL, HUGE_LD, B, HUGE_LD, NULL, L);      /* B */
    EXPECT(INVALID, AUTO, 1, HUGE_LD, 0, NULL, L, NULL, L, C, HUGE_LD);            /* C */
    EXPECT(INVALID, AUTO, 1, LONGEST_LD, 0, NULL, L, NULL, L, C, LONGEST_LD);      /* C */
    EXPECT(INVALID, AUTO, 1, 0, LONGEST_LD, A, LONGEST_LD, NULL, LONGEST_LD, NULL, L);
}

/* A valid request larger than TMA's 32-bit coordinates is NOT_SUPPORTED
 * (EXPECT asserts that for hgemm_nt). The design checks every argument before
 * the first CUDA call, so this status is due without a device too; no launch
 * can happen, so these run where a GPU is present as well. */
static void test_not_supported(void) {
    const void *A = addr(ADDR_A), *B = addr(ADDR_B), *C = addr(ADDR_FAR);
    const int64_t TOO_BIG = MAX_DIM + 1;
    EXPECT(OK, AUTO, TOO_BIG, N, K, A, LDA, B, LDB, C, LDC);
    EXPECT(OK, AUTO, M, TOO_BIG, K, A, LDA, B, LDB, C, TOO_BIG);
    EXPECT(OK, AUTO, M, N, TOO_BIG, A, TOO_BIG, B, TOO_BIG, C, LDC);
    EXPECT(OK, AUTO, TOO_BIG, N, 0, NULL, LD_MULTIPLE, NULL, LD_MULTIPLE, C, LDC); /* C = beta*C */
    /* An empty C is still a no-op, however large the other sizes. */
    EXPECT(OK, AUTO, TOO_BIG, 0, K, A, LDA, B, LDB, C, LDC);
    EXPECT(OK, AUTO, 0, TOO_BIG, K, A, LDA, B, LDB, C, TOO_BIG);
    /* The limit itself is served (where there is no GPU: NO_DEVICE). */
    EXPECT(OK, AUTO, MAX_DIM, N, K, A, LDA, B, LDB, C, LDC);
    EXPECT(OK, AUTO, M, MAX_DIM, K, A, LDA, B, LDB, C, MAX_DIM + 1);
}

/* Each kernel's own limits, decided on the CPU too (issue: lda = 2^39 used to
 * return NO_DEVICE without a GPU and NOT_SUPPORTED with one). */
static void test_kernel_limits(void) {
    const void *A = addr(ADDR_A), *B = addr(ADDR_B), *C = addr(ADDR_FARTHER);
    const float ONE = 1.0f, ZERO = 0.0f;
    const hgemm_kernel ids[] = {HGEMM_KERNEL_AUTO, HGEMM_KERNEL_V0, HGEMM_KERNEL_V1,
                                HGEMM_KERNEL_V2, HGEMM_KERNEL_V3, HGEMM_KERNEL_V4,
                                HGEMM_KERNEL_V5, HGEMM_KERNEL_V6, HGEMM_KERNEL_V7,
                                HGEMM_KERNEL_V9};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        const hgemm_kernel id = ids[i];
        /* The TMA stride of A and B: every kernel loads both through TMA. */
        EXPECT_PRE(NOT_SUPPORTED, id, 2, N, K, ONE, A, TMA_LD_LIMIT, B, LDB, C, LDC);
        EXPECT_PRE(NOT_SUPPORTED, id, M, 2, K, ONE, A, LDA, B, TMA_LD_LIMIT, C, LDC);
        EXPECT_PRE(OK, id, 2, N, K, ONE, A, TMA_LD_LIMIT - LD_MULTIPLE, B, LDB, C, LDC);
        EXPECT_PRE(OK, id, M, 2, K, ONE, A, LDA, B, TMA_LD_LIMIT - LD_MULTIPLE, C, LDC);
        /* Nothing to multiply (k == 0 or alpha == 0): A and B need no tensor map. */
        EXPECT_PRE(OK, id, 2, N, K, ZERO, A, TMA_LD_LIMIT, B, LDB, C, LDC);
        EXPECT_PRE(OK, id, 2, N, 0, ONE, A, TMA_LD_LIMIT, B, LDB, C, LDC);
        /* k = 2^31 - 1 with tight lda = ldb = 2^31 (issue 11): past MAX_DIM. */
        const int64_t K_TOP = INT32_MAX, LD_TOP = (int64_t)INT32_MAX + 1;
        EXPECT_PRE(NOT_SUPPORTED, id, 2, 2, K_TOP, ONE, A, LD_TOP, B, LD_TOP, C, LD_MULTIPLE);
        EXPECT_PRE(NOT_SUPPORTED, id, 2, 2, MAX_DIM + 1, ONE, A, LD_TOP, B, LD_TOP, C, LD_MULTIPLE);
        EXPECT_PRE(OK, id, 2, 2, MAX_DIM, ONE, A, LD_TOP, B, LD_TOP, C, LD_MULTIPLE);
    }
    /* C's stride: only V6 and V7 store C through TMA. */
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        const hgemm_kernel id = ids[i];
        if (id == HGEMM_KERNEL_AUTO) continue;
        const int tma_store = id == HGEMM_KERNEL_V6 || id == HGEMM_KERNEL_V7;
        EXPECT_PRE(tma_store ? NOT_SUPPORTED : OK, id, 2, N, K, ONE, A, LDA, B, LDB, C, TMA_LD_LIMIT);
        EXPECT_PRE(OK, id, 2, N, K, ONE, A, LDA, B, LDB, C, TMA_LD_LIMIT - LD_MULTIPLE);
        /* C = beta * C needs no tensor map either. */
        EXPECT_PRE(OK, id, 2, N, 0, ONE, NULL, LD_MULTIPLE, NULL, LD_MULTIPLE, C, TMA_LD_LIMIT);
    }
    /* V0..V3: one grid row per tile row, at most 65535. */
    const int64_t v0_rows = MAX_GRID_Y * V0_TILE_M, v1_rows = MAX_GRID_Y * V1_TILE_M;
    EXPECT_PRE(OK, HGEMM_KERNEL_V0, v0_rows, N, K, ONE, A, LDA, B, LDB, C, LDC);
    EXPECT_PRE(NOT_SUPPORTED, HGEMM_KERNEL_V0, v0_rows + 1, N, K, ONE, A, LDA, B, LDB, C, LDC);
    const hgemm_kernel wgmma_1d[] = {HGEMM_KERNEL_V1, HGEMM_KERNEL_V2, HGEMM_KERNEL_V3};
    for (size_t i = 0; i < sizeof wgmma_1d / sizeof wgmma_1d[0]; i++) {
        EXPECT_PRE(OK, wgmma_1d[i], v1_rows, N, K, ONE, A, LDA, B, LDB, C, LDC);
        EXPECT_PRE(NOT_SUPPORTED, wgmma_1d[i], v1_rows + 1, N, K, ONE, A, LDA, B, LDB, C, LDC);
        /* ... which binds only where there is something to multiply. */
        EXPECT_PRE(OK, wgmma_1d[i], v1_rows + 1, N, 0, ONE, NULL, LD_MULTIPLE, NULL, LD_MULTIPLE,
                   C, LDC);
    }
    /* V4..V7 walk a 1-D grid of tiles: the largest m is served. */
    const hgemm_kernel tiles_1d[] = {HGEMM_KERNEL_V4, HGEMM_KERNEL_V5, HGEMM_KERNEL_V6,
                                     HGEMM_KERNEL_V7};
    for (size_t i = 0; i < sizeof tiles_1d / sizeof tiles_1d[0]; i++)
        EXPECT_PRE(OK, tiles_1d[i], MAX_DIM, N, K, ONE, A, LDA, B, LDB, C, LDC);
    /* V9: 64-row tiles of the long side x 16..64 of the short one, 8 blocks
     * each at most, on grid x: 2^31 - 257 rows against 1 fit, and 2^25 x 2^25
     * tiles do not. The two auto kernels take what their choice takes. */
    EXPECT_PRE(OK, HGEMM_KERNEL_V9, MAX_DIM, 1, K, ONE, A, LDA, B, LDB, C, LD_MULTIPLE);
    EXPECT_PRE(OK, HGEMM_KERNEL_V9, 1, MAX_DIM, K, ONE, A, LDA, B, LDB, C,
               (MAX_DIM + LD_MULTIPLE - 1) / LD_MULTIPLE * LD_MULTIPLE);
    EXPECT_PRE(NOT_SUPPORTED, HGEMM_KERNEL_V9, (int64_t)1 << 25, (int64_t)1 << 25, K, ONE, A, LDA,
               B, LDB, C, (int64_t)1 << 25);
    EXPECT_PRE(OK, HGEMM_KERNEL_AUTO_F16ACC, M, N, K, ONE, A, LDA, B, LDB, C, LDC);
    EXPECT_PRE(OK, HGEMM_KERNEL_AUTO_F16ACC, 1, N, K, ONE, A, LDA, B, LDB, C, LDC);
}

/* The overlap rule: no element of C may be an element of A or B; decided
 * exactly for views with the same leading dimension (or a single row), and
 * by address ranges otherwise. X is a 64 x 128 matrix (ld 128) at ADDR_C. */
static void test_overlap_exact(void) {
    enum { XR = 64, XLD = 128, HALF = 64, QUARTER = 32 };
    const uintptr_t X = ADDR_C;
    const uintptr_t E = ELEM_BYTES;
    const void *B = addr(ADDR_B);
    const void *left = addr(X), *right = addr(X + HALF * E);
    /* A = X[:, :64], C = X[:, 64:128] and the other way round: no element shared. */
    EXPECT(OK, AUTO, XR, HALF, HALF, left, XLD, B, HALF, right, XLD);
    EXPECT(OK, AUTO, XR, HALF, HALF, right, XLD, B, HALF, left, XLD);
    /* The same with B. */
    EXPECT(OK, AUTO, M, XR, HALF, addr(ADDR_A), HALF, left, XLD, right, XLD);
    EXPECT(OK, AUTO, M, XR, HALF, addr(ADDR_A), HALF, right, XLD, left, XLD);
    /* C = X[:, 56:120] shares columns 56..63 of every row with A = X[:, :64]. */
    EXPECT(INVALID, AUTO, XR, HALF, HALF, left, XLD, B, HALF, addr(X + (HALF - LD_MULTIPLE) * E), XLD);
    /* A 72 wide: its columns 64..71 are C's 0..7. */
    EXPECT(INVALID, AUTO, XR, HALF, HALF + LD_MULTIPLE, left, XLD, B, HALF, right, XLD);
    /* C one row down, beside A: disjoint; one row down and overlapping columns: not. */
    EXPECT(OK, AUTO, XR - 1, HALF, HALF, right, XLD, B, HALF, addr(X + XLD * E), XLD);
    EXPECT(INVALID, AUTO, XR - 1, HALF, HALF, left, XLD, B, HALF, addr(X + XLD * E), XLD);
    /* A row of A that runs past the end of X's row: A = X[i, 96:128] + X[i+1, 0:32]
     * (k = 64, ld 128). C = X[:, 32:96] misses it; C = X[:, 24:88] does not. */
    const void *wrap = addr(X + (HALF + QUARTER) * E);
    EXPECT(OK, AUTO, XR - 1, HALF, HALF, wrap, XLD, B, HALF, addr(X + QUARTER * E), XLD);
    EXPECT(INVALID, AUTO, XR - 1, HALF, HALF, wrap, XLD, B, HALF,
           addr(X + (QUARTER - LD_MULTIPLE) * E), XLD);
    /* The rows decide too: C = X[32:64, 24:88] meets A = X[0:16, 96:128] + next-row
     * columns only at row 16 (A's row 15 wraps into it) ... */
    EXPECT(OK, AUTO, XR / 4 - 1, HALF, HALF, wrap, XLD, B, HALF,
           addr(X + (XR / 4 * XLD + QUARTER - LD_MULTIPLE) * E), XLD);
    EXPECT(INVALID, AUTO, XR / 4, HALF, HALF, wrap, XLD, B, HALF,
           addr(X + (XR / 4 * XLD + QUARTER - LD_MULTIPLE) * E), XLD);
    /* One-row views step by no leading dimension: decided exactly whatever ld says. */
    EXPECT(OK, AUTO, 1, HALF, HALF, left, HALF, B, HALF, right, XLD * 8);
    EXPECT(INVALID, AUTO, 1, HALF, HALF, left, HALF, B, HALF, addr(X + QUARTER * E), XLD * 8);
    /* A one-row B longer than C's leading dimension (n = 1, k = 128), and a
     * 4 x 1 column C with ld 64 whose elements fall around it, or on its first. */
    const int64_t LONG_ROW = XLD, COL_ROWS = 4;
    EXPECT(OK, AUTO, COL_ROWS, 1, LONG_ROW, addr(ADDR_A), LONG_ROW, left, LONG_ROW,
           addr(X - COL_ROWS * HALF * E), HALF);
    EXPECT(INVALID, AUTO, COL_ROWS, 1, LONG_ROW, addr(ADDR_A), LONG_ROW, left, LONG_ROW,
           addr(X - (COL_ROWS - 1) * HALF * E), HALF);
    EXPECT(OK, AUTO, COL_ROWS, 1, LONG_ROW, addr(ADDR_A), LONG_ROW, left, LONG_ROW,
           addr(X + LONG_ROW * E), HALF);
    /* A one-row B of 56 between two elements of the column C (ld 64): the
     * ranges meet, no element is shared. */
    const int64_t SHORT_ROW = HALF - LD_MULTIPLE;
    EXPECT(OK, AUTO, COL_ROWS, 1, SHORT_ROW, addr(ADDR_A), SHORT_ROW, left, SHORT_ROW,
           addr(X - (HALF + LD_MULTIPLE) * E), HALF);
    EXPECT(INVALID, AUTO, COL_ROWS, 1, SHORT_ROW, addr(ADDR_A), SHORT_ROW, left, SHORT_ROW,
           addr(X - HALF * E), HALF);
    /* Different leading dimensions whose ranges meet: refused, shared or not. */
    EXPECT(INVALID, AUTO, XR, HALF, HALF, left, XLD, B, HALF, right, XLD + LD_MULTIPLE);
}

/* hgemm_nt_ws: the workspace's own checks, after the matrices' ones. */
static void test_workspace(void) {
    const void *A = addr(ADDR_A), *B = addr(ADDR_B);
    void *C = (void *)addr(ADDR_C);
    void *WS = (void *)addr(ADDR_FAR);
    const size_t BYTES = HGEMM_WORKSPACE_BYTES;
    const hgemm_status valid = gpu_present ? HGEMM_SUCCESS : HGEMM_ERROR_NO_DEVICE;
    /* NULL with bytes, bytes beyond int64 */
    CHECK_STATUS(hgemm_nt_ws(HGEMM_KERNEL_AUTO, M, N, K, ALPHA, A, LDA, B, LDB, BETA, C, LDC, NULL,
                             BYTES, 0), HGEMM_ERROR_INVALID_VALUE);
    CHECK_STATUS(hgemm_nt_ws(HGEMM_KERNEL_AUTO, M, N, K, ALPHA, A, LDA, B, LDB, BETA, C, LDC, WS,
                             (size_t)INT64_MAX + 1, 0), HGEMM_ERROR_INVALID_VALUE);
    /* misaligned */
    CHECK_STATUS(hgemm_nt_ws(HGEMM_KERNEL_AUTO, M, N, K, ALPHA, A, LDA, B, LDB, BETA, C, LDC,
                             (void *)addr(ADDR_FAR + ALIGN_BYTES / 2), BYTES, 0),
                 HGEMM_ERROR_MISALIGNED);
    /* sharing a byte with A, B or C: the workspace's first byte is the operand's
     * last, or the operand's first byte is the workspace's last */
    CHECK_STATUS(hgemm_nt_ws(HGEMM_KERNEL_V8, M, N, K, ALPHA, A, LDA, B, LDB, BETA, C, LDC,
                             (void *)addr(ADDR_C + span(M, N, LDC) - ALIGN_BYTES), BYTES, 0),
                 HGEMM_ERROR_INVALID_VALUE);
    CHECK_STATUS(hgemm_nt_ws(HGEMM_KERNEL_V8, M, N, K, ALPHA, A, LDA, B, LDB, BETA, C, LDC,
                             (void *)addr(ADDR_A - ALIGN_BYTES), ALIGN_BYTES + 1, 0),
                 HGEMM_ERROR_INVALID_VALUE);
    CHECK_STATUS(hgemm_nt_ws(HGEMM_KERNEL_V8, M, N, K, ALPHA, A, LDA, B, LDB, BETA, C, LDC,
                             (void *)addr(ADDR_B), ALIGN_BYTES, 0),
                 HGEMM_ERROR_INVALID_VALUE);
    /* just below A: no shared byte */
    if (!gpu_present)
        CHECK_STATUS(hgemm_nt_ws(HGEMM_KERNEL_V8, M, N, K, ALPHA, A, LDA, B, LDB, BETA, C, LDC,
                                 (void *)addr(ADDR_A - ALIGN_BYTES), ALIGN_BYTES, 0), valid);
    /* the matrices are checked first: a bad leading dimension wins */
    CHECK_STATUS(hgemm_nt_ws(HGEMM_KERNEL_AUTO, M, N, K, ALPHA, A, K - 1, B, LDB, BETA, C, LDC, NULL,
                             BYTES, 0), HGEMM_ERROR_INVALID_VALUE);
    CHECK_STATUS(hgemm_nt_ws(HGEMM_KERNEL_AUTO, M, N, K, ALPHA, addr(ADDR_A + ALIGN_BYTES / 2), LDA,
                             B, LDB, BETA, C, LDC, NULL, BYTES, 0), HGEMM_ERROR_MISALIGNED);
    /* no bytes: the pointer is ignored, as hgemm_nt */
    if (!gpu_present) {
        CHECK_STATUS(hgemm_nt_ws(HGEMM_KERNEL_AUTO, M, N, K, ALPHA, A, LDA, B, LDB, BETA, C, LDC,
                                 (void *)addr(ADDR_C + 2), 0, 0), valid);
        CHECK_STATUS(hgemm_nt_ws(HGEMM_KERNEL_V8, M, N, K, ALPHA, A, LDA, B, LDB, BETA, C, LDC, WS,
                                 BYTES, 0), valid);
    }
    /* an empty problem succeeds without a device, workspace or not */
    CHECK_STATUS(hgemm_nt_ws(HGEMM_KERNEL_V8, 0, N, K, ALPHA, A, LDA, B, LDB, BETA, C, LDC, WS, BYTES,
                             0), HGEMM_SUCCESS);
}

/* hgemm_nt_ex: its options' own checks, after the matrices' ones. */
static void test_options(void) {
    const void *A = addr(ADDR_A), *B = addr(ADDR_B);
    void *C = (void *)addr(ADDR_C);
    const hgemm_status valid = gpu_present ? HGEMM_SUCCESS : HGEMM_ERROR_NO_DEVICE;
    const hgemm_nt_options negative = {NULL, 0, -1, NULL, 0};
    CHECK_STATUS(hgemm_nt_ex(HGEMM_KERNEL_V8, M, N, K, ALPHA, A, LDA, B, LDB, BETA, C, LDC, &negative, 0),
                 HGEMM_ERROR_INVALID_VALUE);
    /* the matrices first: a misaligned A wins over the bad option */
    CHECK_STATUS(hgemm_nt_ex(HGEMM_KERNEL_V8, M, N, K, ALPHA, addr(ADDR_A + ALIGN_BYTES / 2), LDA, B,
                             LDB, BETA, C, LDC, &negative, 0), HGEMM_ERROR_MISALIGNED);
    /* the workspace follows hgemm_nt_ws's rules */
    const hgemm_nt_options misaligned = {(void *)addr(ADDR_FAR + ALIGN_BYTES / 2), HGEMM_WORKSPACE_BYTES, 0, NULL, 0};
    CHECK_STATUS(hgemm_nt_ex(HGEMM_KERNEL_AUTO, M, N, K, ALPHA, A, LDA, B, LDB, BETA, C, LDC, &misaligned, 0),
                 HGEMM_ERROR_MISALIGNED);
    const hgemm_nt_options on_c = {C, ALIGN_BYTES, 0, NULL, 0};
    CHECK_STATUS(hgemm_nt_ex(HGEMM_KERNEL_AUTO, M, N, K, ALPHA, A, LDA, B, LDB, BETA, C, LDC, &on_c, 0),
                 HGEMM_ERROR_INVALID_VALUE);
    /* unknown kernels are refused as by hgemm_nt */
    CHECK_STATUS(hgemm_nt_ex((hgemm_kernel)UNKNOWN_KERNEL, M, N, K, ALPHA, A, LDA, B, LDB, BETA, C, LDC,
                             NULL, 0), HGEMM_ERROR_INVALID_VALUE);
    if (!gpu_present) {
        const hgemm_nt_options sms = {NULL, 0, 16, NULL, 0};
        CHECK_STATUS(hgemm_nt_ex(HGEMM_KERNEL_V8, M, N, K, ALPHA, A, LDA, B, LDB, BETA, C, LDC, NULL, 0), valid);
        CHECK_STATUS(hgemm_nt_ex(HGEMM_KERNEL_AUTO_F16ACC, M, N, K, ALPHA, A, LDA, B, LDB, BETA, C, LDC,
                                 &sms, 0), valid);
    }
}

/* hgemm_nt_options.c_in: C's rules for the input, no byte shared with C,
 * V8 alone serves it; all decided before any CUDA call. */
static void test_c_in(void) {
    const void *A = addr(ADDR_A), *B = addr(ADDR_B), *IN = addr(ADDR_FAR);
    void *C = (void *)addr(ADDR_C);
    const hgemm_status valid = gpu_present ? HGEMM_SUCCESS : HGEMM_ERROR_NO_DEVICE;
#define WITH_C_IN(kern, in, ld_in, n, expect)                                                                   \
    do {                                                                                                         \
        const hgemm_nt_options o = {NULL, 0, 0, (in), (ld_in)};                                                  \
        CHECK_STATUS(hgemm_nt_ex((kern), M, (n), K, ALPHA, A, LDA, B, LDB, BETA, C, LDC, &o, 0), (expect));       \
    } while (0)
    WITH_C_IN(HGEMM_KERNEL_V8, IN, N - 8, N, HGEMM_ERROR_INVALID_VALUE);           /* ldc_in < n */
    WITH_C_IN(HGEMM_KERNEL_V8, IN, LDC + 4, N, HGEMM_ERROR_MISALIGNED);            /* ldc_in % 8 */
    WITH_C_IN(HGEMM_KERNEL_V8, addr(ADDR_FAR + ALIGN_BYTES / 2), LDC, N, HGEMM_ERROR_MISALIGNED);
    WITH_C_IN(HGEMM_KERNEL_V8, addr(ADDR_C + ALIGN_BYTES), LDC, N, HGEMM_ERROR_INVALID_VALUE); /* inside C */
    WITH_C_IN(HGEMM_KERNEL_V8, addr(ADDR_C - ALIGN_BYTES), LDC, N, HGEMM_ERROR_INVALID_VALUE); /* shares C's rows */
    WITH_C_IN(HGEMM_KERNEL_V5, IN, LDC, N, HGEMM_ERROR_NOT_SUPPORTED);             /* only V8 reads it */
    WITH_C_IN(HGEMM_KERNEL_V9, IN, LDC, N, HGEMM_ERROR_NOT_SUPPORTED);
    WITH_C_IN(HGEMM_KERNEL_V8, IN, LDC, N - 4, HGEMM_ERROR_NOT_SUPPORTED);         /* n % 8 */
    WITH_C_IN(HGEMM_KERNEL_AUTO, IN, LDC, N - 4, HGEMM_ERROR_NOT_SUPPORTED);
    if (!gpu_present) { /* past the checks: no device here (the fake addresses are no memory) */
        WITH_C_IN(HGEMM_KERNEL_V5, C, LDC, N, valid); /* c_in == C: none */
        WITH_C_IN(HGEMM_KERNEL_V8, IN, LDC + 8, N, valid);
        WITH_C_IN(HGEMM_KERNEL_AUTO, IN, LDC, N, valid);
        WITH_C_IN(HGEMM_KERNEL_AUTO_F16ACC, addr(ADDR_A), LDC, N, valid); /* may meet A */
    }
    /* the matrices' own checks come first */
    const hgemm_nt_options bad = {NULL, 0, 0, IN, LDC + 4};
    CHECK_STATUS(hgemm_nt_ex(HGEMM_KERNEL_V8, M, N, K, ALPHA, A, K - 8, B, LDB, BETA, C, LDC, &bad, 0),
                 HGEMM_ERROR_INVALID_VALUE);
#undef WITH_C_IN
}

/* hgemm_gemm: every combination checked before any CUDA call. */
#define GEMM(kern, dt, oa, ob, m, n, k, A, lda, sa, B, ldb, sb, C, ldc, sc, batch, opt)                  \
    hgemm_gemm((kern), (dt), (oa), (ob), (m), (n), (k), ALPHA, (A), (lda), (sa), (B), (ldb), (sb), BETA, \
               (C), (ldc), (sc), (batch), (opt), 0)
static void test_gemm(void) {
    const void *A = addr(ADDR_A), *B = addr(ADDR_B);
    void *C = (void *)addr(ADDR_FARTHER);
    const hgemm_status valid = gpu_present ? HGEMM_SUCCESS : HGEMM_ERROR_NO_DEVICE;
    const hgemm_kernel K_AUTO = HGEMM_KERNEL_AUTO;
    const hgemm_dtype F16 = HGEMM_DTYPE_F16, BF16 = HGEMM_DTYPE_BF16;
    const hgemm_op N_ = HGEMM_OP_N, T_ = HGEMM_OP_T;
    const int64_t SC = M * LDC; /* a C entry's span, rounded to whole rows */
    /* unknown values */
    CHECK_STATUS(GEMM(K_AUTO, (hgemm_dtype)2, N_, T_, M, N, K, A, LDA, 0, B, LDB, 0, C, LDC, 0, 1, NULL),
                 HGEMM_ERROR_INVALID_VALUE);
    CHECK_STATUS(GEMM(K_AUTO, F16, (hgemm_op)2, T_, M, N, K, A, LDA, 0, B, LDB, 0, C, LDC, 0, 1, NULL),
                 HGEMM_ERROR_INVALID_VALUE);
    CHECK_STATUS(GEMM(K_AUTO, F16, N_, (hgemm_op)-1, M, N, K, A, LDA, 0, B, LDB, 0, C, LDC, 0, 1, NULL),
                 HGEMM_ERROR_INVALID_VALUE);
    CHECK_STATUS(GEMM((hgemm_kernel)UNKNOWN_KERNEL, F16, N_, T_, M, N, K, A, LDA, 0, B, LDB, 0, C, LDC,
                      0, 1, NULL), HGEMM_ERROR_INVALID_VALUE);
    /* negative batch and strides */
    CHECK_STATUS(GEMM(K_AUTO, F16, N_, T_, M, N, K, A, LDA, 0, B, LDB, 0, C, LDC, 0, -1, NULL),
                 HGEMM_ERROR_INVALID_VALUE);
    CHECK_STATUS(GEMM(K_AUTO, F16, N_, T_, M, N, K, A, LDA, -8, B, LDB, 0, C, LDC, SC, 2, NULL),
                 HGEMM_ERROR_INVALID_VALUE);
    /* strides that break 16-byte alignment */
    CHECK_STATUS(GEMM(K_AUTO, F16, N_, T_, M, N, K, A, LDA, 4, B, LDB, 0, C, LDC, SC, 2, NULL),
                 HGEMM_ERROR_MISALIGNED);
    CHECK_STATUS(GEMM(K_AUTO, F16, N_, T_, M, N, K, A, LDA, 0, B, LDB, 0, C, LDC, SC + 4, 2, NULL),
                 HGEMM_ERROR_MISALIGNED);
    /* leading dimensions follow the stored shapes: A^T is k x m, B as stored k x n */
    CHECK_STATUS(GEMM(K_AUTO, F16, T_, T_, M, N, K, A, M - LD_MULTIPLE, 0, B, LDB, 0, C, LDC, 0, 1, NULL),
                 HGEMM_ERROR_INVALID_VALUE);
    CHECK_STATUS(GEMM(K_AUTO, F16, N_, N_, M, N, K, A, LDA, 0, B, N - LD_MULTIPLE, 0, C, LDC, 0, 1, NULL),
                 HGEMM_ERROR_INVALID_VALUE);
    /* C's entries may not overlap one another; A's and B's may */
    CHECK_STATUS(GEMM(K_AUTO, F16, N_, T_, M, N, K, A, LDA, 0, B, LDB, 0, C, LDC, SC - 2 * LD_MULTIPLE, 2, NULL),
                 HGEMM_ERROR_INVALID_VALUE);
    if (!gpu_present) /* the last row's padding is not C's: an entry may start there */
        CHECK_STATUS(GEMM(K_AUTO, F16, N_, T_, M, N, K, A, LDA, 0, B, LDB, 0, C, LDC, SC - LD_MULTIPLE, 2, NULL),
                     valid);
    /* C meets A's second entry (A's entries stride past C's start) */
    CHECK_STATUS(GEMM(K_AUTO, F16, N_, T_, M, N, K, A, LDA, (int64_t)((ADDR_FARTHER - ADDR_A) / ELEM_BYTES), B,
                      LDB, 0, C, LDC, SC, 2, NULL), HGEMM_ERROR_INVALID_VALUE);
    /* a negative SM target */
    const hgemm_nt_options negative = {NULL, 0, -1, NULL, 0};
    CHECK_STATUS(GEMM(K_AUTO, F16, N_, T_, M, N, K, A, LDA, 0, B, LDB, 0, C, LDC, 0, 1, &negative),
                 HGEMM_ERROR_INVALID_VALUE);
    /* nothing to do: a successful no-op without a device */
    CHECK_STATUS(GEMM(K_AUTO, F16, N_, T_, M, N, K, A, LDA, 0, B, LDB, 0, C, LDC, SC, 0, NULL), HGEMM_SUCCESS);
    CHECK_STATUS(GEMM(K_AUTO, BF16, T_, N_, 0, N, K, A, LDA, 0, B, N + LD_PAD, 0, C, LDC, 0, 3, NULL),
                 HGEMM_SUCCESS);
    /* bf16 and the NN, TN and TT forms: the series' kernels (V0..V7) serve
     * fp16 NT only, NOT_SUPPORTED without a device too; AUTO and V8 serve
     * every form (valid: they go on to the device); V9 serves both types
     * where its short operand (here B: m > n) is K-major */
    for (int v = HGEMM_KERNEL_V0; v <= HGEMM_KERNEL_V7; v++) {
        const hgemm_kernel kv = (hgemm_kernel)v;
        CHECK_STATUS(GEMM(kv, BF16, N_, T_, M, N, K, A, LDA, 0, B, LDB, 0, C, LDC, 0, 1, NULL),
                     HGEMM_ERROR_NOT_SUPPORTED);
        CHECK_STATUS(GEMM(kv, F16, N_, N_, M, N, K, A, LDA, 0, B, N + LD_PAD, 0, C, LDC, 0, 1, NULL),
                     HGEMM_ERROR_NOT_SUPPORTED);
        CHECK_STATUS(GEMM(kv, F16, T_, N_, M, N, K, A, M + LD_PAD, 0, B, N + LD_PAD, 0, C, LDC, 0, 1, NULL),
                     HGEMM_ERROR_NOT_SUPPORTED);
        CHECK_STATUS(GEMM(kv, BF16, T_, T_, M, N, K, A, M + LD_PAD, 0, B, LDB, 0, C, LDC, 0, 1, NULL),
                     HGEMM_ERROR_NOT_SUPPORTED);
    }
    CHECK_STATUS(GEMM(HGEMM_KERNEL_V9, F16, N_, N_, M, N, K, A, LDA, 0, B, N + LD_PAD, 0, C, LDC, 0, 1, NULL),
                 HGEMM_ERROR_NOT_SUPPORTED);
    CHECK_STATUS(GEMM(HGEMM_KERNEL_V9, BF16, T_, N_, M, N, K, A, M + LD_PAD, 0, B, N + LD_PAD, 0, C, LDC, 0, 1,
                      NULL), HGEMM_ERROR_NOT_SUPPORTED);
    if (!gpu_present) {
        CHECK_STATUS(GEMM(HGEMM_KERNEL_V9, BF16, N_, T_, M, N, K, A, LDA, 0, B, LDB, 0, C, LDC, 0, 1, NULL), valid);
        CHECK_STATUS(GEMM(HGEMM_KERNEL_V9, F16, T_, T_, M, N, K, A, M + LD_PAD, 0, B, LDB, 0, C, LDC, 0, 1, NULL),
                     valid);
        CHECK_STATUS(GEMM(K_AUTO, BF16, N_, T_, M, N, K, A, LDA, 0, B, LDB, 0, C, LDC, 0, 1, NULL), valid);
        CHECK_STATUS(GEMM(K_AUTO, F16, N_, N_, M, N, K, A, LDA, 0, B, N + LD_PAD, 0, C, LDC, 0, 1, NULL), valid);
        CHECK_STATUS(GEMM(HGEMM_KERNEL_V8, F16, T_, N_, M, N, K, A, M + LD_PAD, 0, B, N + LD_PAD, 0, C, LDC, 0, 1,
                          NULL), valid);
        CHECK_STATUS(GEMM(HGEMM_KERNEL_AUTO_F16ACC, BF16, T_, T_, M, N, K, A, M + LD_PAD, 0, B, LDB, 0, C, LDC, 0,
                          1, NULL), valid);
    }
    /* fp16 NT, batched, B shared (stride 0): valid */
    if (!gpu_present) {
        CHECK_STATUS(GEMM(K_AUTO, F16, N_, T_, M, N, K, A, LDA, M * LDA, B, LDB, 0, C, LDC, SC, 3, NULL), valid);
        CHECK_STATUS(GEMM(HGEMM_KERNEL_V9, F16, N_, T_, M, N, K, A, LDA, 0, B, LDB, 0, C, LDC, 0, 1, NULL), valid);
    }
}
#undef GEMM

/* hgemm__run_gemm (hgemm-bench's path for an ablation in another form):
 * hgemm_gemm's checks, then the row's own forms, before any CUDA call. */
#define GEMM_ROW(row, dt, oa, ob, m, n, k, A, lda, B, ldb, C, ldc, batch)                                    \
    hgemm__run_gemm((row), (dt), (oa), (ob), (m), (n), (k), ALPHA, (A), (lda), 0, (B), (ldb), 0, BETA, (C), \
                    (ldc), 0, (batch), NULL, 0)
static void test_gemm_by_row(void) {
    const void *A = addr(ADDR_A), *B = addr(ADDR_B);
    void *C = (void *)addr(ADDR_FARTHER);
    const hgemm_status valid = gpu_present ? HGEMM_SUCCESS : HGEMM_ERROR_NO_DEVICE;
    const hgemm_dtype F16 = HGEMM_DTYPE_F16, BF16 = HGEMM_DTYPE_BF16;
    const hgemm_op N_ = HGEMM_OP_N, T_ = HGEMM_OP_T;
    const hgemm_kernel_info *noseam = hgemm__experiment_by_name("v8-noseam");
    const hgemm_kernel_info *dp = hgemm__experiment_by_name("v8-dp");
    CHECK(hgemm__experiment_by_name("v8") == NULL); /* a table row is no ablation */
    CHECK(hgemm__experiment_by_name(NULL) == NULL);
#ifndef HGEMM_LAB
    /* the library alone: no ablation row at all (they are the lab's) */
    CHECK(hgemm__experiment_count() == 0 && hgemm__experiment_at(0) == NULL);
    CHECK(noseam == NULL && dp == NULL);
    return;
#endif
    CHECK(noseam != NULL && noseam->forms); /* an ablation whose row serves every form */
    CHECK(dp != NULL && !dp->forms);        /* one that serves fp16 NT only */
    if (!noseam || !dp) return;
    /* hgemm_gemm's own checks come first, whatever the row */
    CHECK_STATUS(GEMM_ROW(noseam, BF16, N_, N_, -1, N, K, A, LDA, B, N + LD_PAD, C, LDC, 1),
                 HGEMM_ERROR_INVALID_VALUE);
    CHECK_STATUS(GEMM_ROW(dp, (hgemm_dtype)2, N_, T_, M, N, K, A, LDA, B, LDB, C, LDC, 1),
                 HGEMM_ERROR_INVALID_VALUE);
    CHECK_STATUS(GEMM_ROW(noseam, BF16, N_, N_, M, N, K, A, LDA, B, N + LD_PAD, C, LDC, 0), HGEMM_SUCCESS);
    /* a row without forms: NOT_SUPPORTED outside fp16 NT, without a device too */
    CHECK_STATUS(GEMM_ROW(dp, BF16, N_, T_, M, N, K, A, LDA, B, LDB, C, LDC, 1), HGEMM_ERROR_NOT_SUPPORTED);
    CHECK_STATUS(GEMM_ROW(dp, F16, T_, N_, M, N, K, A, M + LD_PAD, B, N + LD_PAD, C, LDC, 1),
                 HGEMM_ERROR_NOT_SUPPORTED);
    if (!gpu_present) { /* valid: on to the device */
        CHECK_STATUS(GEMM_ROW(dp, F16, N_, T_, M, N, K, A, LDA, B, LDB, C, LDC, 1), valid);
        CHECK_STATUS(GEMM_ROW(noseam, BF16, N_, N_, M, N, K, A, LDA, B, N + LD_PAD, C, LDC, 1), valid);
        CHECK_STATUS(GEMM_ROW(noseam, F16, T_, T_, M, N, K, A, M + LD_PAD, B, LDB, C, LDC, 1), valid);
        CHECK_STATUS(GEMM_ROW(NULL, BF16, T_, N_, M, N, K, A, M + LD_PAD, B, N + LD_PAD, C, LDC, 1), valid);
    }
}
#undef GEMM_ROW

int main(void) {
    gpu_present = check_gpu_present();
    printf("test_api: %s\n", gpu_present ? "a CUDA device is present"
                                         : "no CUDA device or driver: valid requests must "
                                           "return HGEMM_ERROR_NO_DEVICE");
    test_valid();
    test_kernel_ids();
    test_negative_sizes();
    test_leading_dimensions();
    test_null_pointers();
    test_empty_is_noop();
    test_alignment();
    test_overlap();
    test_precedence();
    test_overflow();
    test_not_supported();
    test_kernel_limits();
    test_overlap_exact();
    test_workspace();
    test_options();
    test_c_in();
    test_gemm();
    test_gemm_by_row();
    if (skipped)
        printf("test_api: skipped %d hgemm_nt calls on valid requests (a GPU is present; they "
               "would launch on fake addresses)\n", skipped);
    return check_finish();
}
