/*
 * test_tensor_map.c: hgemm__tmap_check's statuses for every limit of
 * cuTensorMapEncodeTiled that hgemm relies on, and hgemm__tmap_encode's
 * behaviour without a driver (a status, never a crash). Pointers are fake
 * and never dereferenced.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "test_check.h"
#include "internal.h"

enum {
    ROWS = 128, COLS = 64, LD = COLS + 8,
    BOX_ROWS = 64, BOX_COLS = 64,  /* 64 fp16 = 128 bytes: the widest 128B-swizzled box */
    MAX_BOX = 256,
    ELEM_BYTES = 2,
    STRIDE_ALIGN = 16,             /* bytes */
    SWIZZLE = 1, NO_SWIZZLE = 0,
};
static const uintptr_t ADDR = 0x100000;
static const uint64_t MAX_GLOBAL_DIM = UINT64_C(1) << 32; /* elements */
static const uint64_t MAX_STRIDE = UINT64_C(1) << 40;     /* bytes, exclusive */

#define OK HGEMM_SUCCESS
#define INVALID HGEMM_ERROR_INVALID_VALUE
#define MISALIGNED HGEMM_ERROR_MISALIGNED
#define NOT_SUPPORTED HGEMM_ERROR_NOT_SUPPORTED

#define EXPECT_CHECK(want, ...) CHECK_STATUS(hgemm__tmap_check(__VA_ARGS__), (want))

static const void *addr(uintptr_t a) { return (const void *)a; }

static void test_valid(void) {
    const void *p = addr(ADDR);
    EXPECT_CHECK(OK, p, ROWS, COLS, LD, BOX_ROWS, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(OK, p, ROWS, COLS, COLS, BOX_ROWS, BOX_COLS, NO_SWIZZLE);
    EXPECT_CHECK(OK, p, 1, 1, 8, 1, 8, SWIZZLE);                 /* smallest */
    EXPECT_CHECK(OK, p, ROWS, COLS, LD, MAX_BOX, MAX_BOX, NO_SWIZZLE);
    EXPECT_CHECK(OK, p, ROWS, COLS, LD, MAX_BOX, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(OK, p, ROWS, COLS, LD, 1, 8, NO_SWIZZLE);
    /* The box may be larger than the tensor: TMA fills the rest with zeros. */
    EXPECT_CHECK(OK, p, 3, 5, 8, BOX_ROWS, BOX_COLS, SWIZZLE);
    /* A 16-byte box row that is not 128 wide without swizzle. */
    EXPECT_CHECK(OK, p, ROWS, COLS, LD, BOX_ROWS, 72, NO_SWIZZLE);
    /* Odd sizes are fine; only ld and the pointer must be aligned. */
    EXPECT_CHECK(OK, p, 1001, 333, 336, BOX_ROWS, BOX_COLS, SWIZZLE);
}

static void test_invalid(void) {
    const void *p = addr(ADDR);
    EXPECT_CHECK(INVALID, NULL, ROWS, COLS, LD, BOX_ROWS, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(INVALID, p, 0, COLS, LD, BOX_ROWS, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(INVALID, p, ROWS, 0, LD, BOX_ROWS, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(INVALID, p, ROWS, COLS, COLS - 8, BOX_ROWS, BOX_COLS, SWIZZLE); /* ld < cols */
    EXPECT_CHECK(INVALID, p, ROWS, COLS, 0, BOX_ROWS, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(INVALID, p, ROWS, COLS, LD, 0, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(INVALID, p, ROWS, COLS, LD, BOX_ROWS, 0, SWIZZLE);
    EXPECT_CHECK(INVALID, p, ROWS, COLS, LD, MAX_BOX + 1, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(INVALID, p, ROWS, COLS, LD, BOX_ROWS, MAX_BOX + 8, NO_SWIZZLE);
    EXPECT_CHECK(INVALID, p, ROWS, COLS, LD, BOX_ROWS, MAX_BOX + 1, NO_SWIZZLE);
    EXPECT_CHECK(INVALID, p, ROWS, COLS, LD, UINT32_MAX, BOX_COLS, SWIZZLE);
    /* box_cols * 2 not a multiple of 16 bytes. */
    EXPECT_CHECK(INVALID, p, ROWS, COLS, LD, BOX_ROWS, 4, NO_SWIZZLE);
    EXPECT_CHECK(INVALID, p, ROWS, COLS, LD, BOX_ROWS, 12, NO_SWIZZLE);
    EXPECT_CHECK(INVALID, p, ROWS, COLS, LD, BOX_ROWS, 1, SWIZZLE);
    EXPECT_CHECK(INVALID, p, ROWS, COLS, LD, BOX_ROWS, BOX_COLS - 1, SWIZZLE);
    /* A 128B-swizzled box row may not be wider than 128 bytes. */
    EXPECT_CHECK(INVALID, p, ROWS, COLS, LD, BOX_ROWS, BOX_COLS + 8, SWIZZLE);
    EXPECT_CHECK(INVALID, p, ROWS, COLS, LD, BOX_ROWS, MAX_BOX, SWIZZLE);
}

static void test_misaligned(void) {
    const void *p = addr(ADDR);
    EXPECT_CHECK(MISALIGNED, addr(ADDR + 8), ROWS, COLS, LD, BOX_ROWS, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(MISALIGNED, addr(ADDR + 2), ROWS, COLS, LD, BOX_ROWS, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(MISALIGNED, addr(ADDR + 1), ROWS, COLS, LD, BOX_ROWS, BOX_COLS, SWIZZLE);
    /* ld * 2 bytes not a multiple of 16. */
    EXPECT_CHECK(MISALIGNED, p, ROWS, COLS, COLS + 4, BOX_ROWS, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(MISALIGNED, p, ROWS, COLS, COLS + 1, BOX_ROWS, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(MISALIGNED, p, 1, 1, 1, 1, 8, NO_SWIZZLE);
    /* The stride rule holds for one row too (the code does not special-case it). */
    EXPECT_CHECK(MISALIGNED, p, 1, COLS, COLS + 2, BOX_ROWS, BOX_COLS, SWIZZLE);
}

static void test_limits(void) {
    const void *p = addr(ADDR);
    const uint64_t max_ld = MAX_STRIDE / ELEM_BYTES; /* 2^39 elements: first ld too large */
    EXPECT_CHECK(OK, p, MAX_GLOBAL_DIM, COLS, LD, BOX_ROWS, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(NOT_SUPPORTED, p, MAX_GLOBAL_DIM + 1, COLS, LD, BOX_ROWS, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(NOT_SUPPORTED, p, UINT64_MAX, COLS, LD, BOX_ROWS, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(OK, p, ROWS, MAX_GLOBAL_DIM, MAX_GLOBAL_DIM, BOX_ROWS, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(NOT_SUPPORTED, p, ROWS, MAX_GLOBAL_DIM + 8, MAX_GLOBAL_DIM + 8, BOX_ROWS,
                 BOX_COLS, SWIZZLE);
    EXPECT_CHECK(NOT_SUPPORTED, p, ROWS, MAX_GLOBAL_DIM + 1, MAX_GLOBAL_DIM + 8, BOX_ROWS,
                 BOX_COLS, SWIZZLE);
    /* The stride: below 2^40 bytes. */
    EXPECT_CHECK(OK, p, ROWS, COLS, max_ld - 8, BOX_ROWS, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(NOT_SUPPORTED, p, ROWS, COLS, max_ld, BOX_ROWS, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(NOT_SUPPORTED, p, ROWS, COLS, max_ld + 8, BOX_ROWS, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(NOT_SUPPORTED, p, ROWS, COLS, UINT64_C(1) << 62, BOX_ROWS, BOX_COLS, SWIZZLE);
    /* ld * 2 must not wrap around 2^64 into a small, aligned stride. */
    EXPECT_CHECK(NOT_SUPPORTED, p, ROWS, COLS, UINT64_C(1) << 63, BOX_ROWS, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(NOT_SUPPORTED, p, ROWS, COLS, (UINT64_C(1) << 63) + LD, BOX_ROWS, BOX_COLS,
                 SWIZZLE);
}

/* Two things wrong at once, in the order hgemm__tmap_check defines:
 * NULL/size/ld, box bounds, alignment, box width, swizzle width, limits. */
static void test_precedence(void) {
    const void *p = addr(ADDR), *mis = addr(ADDR + 8);
    EXPECT_CHECK(INVALID, mis, 0, COLS, LD, BOX_ROWS, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(INVALID, mis, ROWS, COLS, LD, 0, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(INVALID, p, ROWS, COLS, COLS - 1, BOX_ROWS, BOX_COLS, SWIZZLE); /* ld < cols, odd */
    EXPECT_CHECK(MISALIGNED, mis, ROWS, COLS, LD, BOX_ROWS, 4, SWIZZLE);
    EXPECT_CHECK(MISALIGNED, p, ROWS, COLS, COLS + 1, BOX_ROWS, MAX_BOX, SWIZZLE);
    EXPECT_CHECK(MISALIGNED, mis, MAX_GLOBAL_DIM + 1, COLS, LD, BOX_ROWS, BOX_COLS, SWIZZLE);
    EXPECT_CHECK(INVALID, p, MAX_GLOBAL_DIM + 1, COLS, LD, BOX_ROWS, MAX_BOX, SWIZZLE);
    EXPECT_CHECK(INVALID, p, MAX_GLOBAL_DIM + 1, COLS, LD, BOX_ROWS, 4, NO_SWIZZLE);
}

static void test_encode(int gpu_present) {
    const void *p = addr(ADDR);
    CUtensorMap map;
    CHECK_STATUS(hgemm__tmap_encode(NULL, p, ROWS, COLS, LD, BOX_ROWS, BOX_COLS, SWIZZLE), INVALID);
    CHECK_STATUS(hgemm__tmap_encode(NULL, NULL, 0, 0, 0, 0, 0, SWIZZLE), INVALID);
    /* Bad arguments come back from the check, before the driver is looked up. */
    CHECK_STATUS(hgemm__tmap_encode(&map, NULL, ROWS, COLS, LD, BOX_ROWS, BOX_COLS, SWIZZLE), INVALID);
    CHECK_STATUS(hgemm__tmap_encode(&map, addr(ADDR + 8), ROWS, COLS, LD, BOX_ROWS, BOX_COLS,
                                    SWIZZLE),
                 MISALIGNED);
    CHECK_STATUS(hgemm__tmap_encode(&map, p, MAX_GLOBAL_DIM + 1, COLS, LD, BOX_ROWS, BOX_COLS,
                                    SWIZZLE),
                 NOT_SUPPORTED);

    /* Valid arguments: the driver decides. Without one: NO_DEVICE or CUDA. */
    hgemm_status first = hgemm__tmap_encode(&map, p, ROWS, COLS, LD, BOX_ROWS, BOX_COLS, SWIZZLE);
    hgemm_status again = hgemm__tmap_encode(&map, p, ROWS, COLS, LD, BOX_ROWS, BOX_COLS, NO_SWIZZLE);
    printf("test_tensor_map: hgemm__tmap_encode with valid arguments returned %s%s\n",
           check_status_name(first), gpu_present ? " (a CUDA device is present)" : "");
    if (gpu_present) {
        printf("test_tensor_map: a GPU is present: not asserting the no-driver status\n");
        CHECK(first == OK || first == HGEMM_ERROR_CUDA);
    } else {
        check_record(first == HGEMM_ERROR_NO_DEVICE || first == HGEMM_ERROR_CUDA, __FILE__,
                     __LINE__, "hgemm__tmap_encode(valid) without a driver",
                     "got %s (%d), want HGEMM_ERROR_NO_DEVICE or HGEMM_ERROR_CUDA",
                     check_status_name(first), (int)first);
    }
    CHECK_STATUS(again, first);
    /* A found encoder is kept; a failed lookup is tried again by the next
     * call (a driver may appear later), so without a driver every encode
     * looks up once more. */
    const long before = hgemm__tmap_lookup_attempts();
    enum { RETRIES = 3 };
    for (int i = 0; i < RETRIES; i++)
        CHECK_STATUS(hgemm__tmap_encode(&map, p, ROWS, COLS, LD, BOX_ROWS, BOX_COLS, SWIZZLE), first);
    const long after = hgemm__tmap_lookup_attempts();
    if (first == OK)
        CHECK_I64(after - before, 0);
    else if (!gpu_present)
        CHECK_I64(after - before, RETRIES);
    /* After a driver failure, bad arguments still give their own status. */
    CHECK_STATUS(hgemm__tmap_encode(&map, p, ROWS, COLS, LD, BOX_ROWS, 0, SWIZZLE), INVALID);
}

/* hgemm__tmap_supports: the tensor limits of a valid problem's maps. */
static void test_supports(void) {
    const int64_t max_ld = (int64_t)(MAX_STRIDE / ELEM_BYTES); /* 2^39 */
    const int64_t M = 64, N = 48, K = 32, L = 64;
    hgemm_problem p = {M, N, K, 1.0f, 0.0f, addr(ADDR), L, addr(ADDR), L, (void *)ADDR, L, NULL, 0, 0, HGEMM_DTYPE_F16, 0, 0, 1, 0, 0, 0, NULL, 0, {NULL, 0, 0, 0, 0}};
    CHECK_STATUS(hgemm__tmap_supports(&p, 0), OK);
    CHECK_STATUS(hgemm__tmap_supports(&p, 1), OK);
    p.lda = max_ld - 8;
    CHECK_STATUS(hgemm__tmap_supports(&p, 1), OK);
    p.lda = max_ld;
    CHECK_STATUS(hgemm__tmap_supports(&p, 0), NOT_SUPPORTED);
    p.lda = L;
    p.ldb = max_ld;
    CHECK_STATUS(hgemm__tmap_supports(&p, 0), NOT_SUPPORTED);
    p.ldb = L;
    /* C's stride matters only where C goes through TMA. */
    p.ldc = max_ld;
    CHECK_STATUS(hgemm__tmap_supports(&p, 0), OK);
    CHECK_STATUS(hgemm__tmap_supports(&p, 1), NOT_SUPPORTED);
    p.ldc = max_ld - 8;
    CHECK_STATUS(hgemm__tmap_supports(&p, 1), OK);
}

int main(void) {
    test_valid();
    test_supports();
    test_invalid();
    test_misaligned();
    test_limits();
    test_precedence();
    test_encode(check_gpu_present());
    return check_finish();
}
