/*
 * test_nccl_add: the sum of (b)'s copy-engine path (src/nccl/add.cu) on one
 * GPU, against a CPU reference, bit for bit: C (rows x cols inside a wider
 * ldc) = round_fp16(C + the blocks of R other than `skip`, summed in fp32).
 * The two kernels are both reached: one block to add with cols a multiple
 * of 8 (add_one_kernel: several groups per thread, tails of the last step)
 * and everything else (ragged cols, three blocks). The columns past cols
 * and the rows past rows carry a guard value that must come back unchanged.
 * Exit 77 (skipped) without an sm_90 GPU.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "add.h"
#include "check.h"

enum { EXIT_SKIP = 77, GUARD = 0x7bff /* fp16 65504: no sum here reaches it */ };

typedef struct add_case {
    int64_t rows, cols, ldc, ldr;
    int blocks, skip;
} add_case;

static uint16_t value(uint64_t *state) {
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    const float f = (float)((int)(*state >> 40) % 4096 - 2048) / 512.0f; /* -4 .. 4 */
    return hgemm_check_f32_to_f16(f);
}

static int run_case(const add_case *t, uint64_t seed) {
    const int64_t c_rows = t->rows + 3; /* rows past `rows`: guard */
    const int64_t block = (t->rows + 1) * t->ldr;
    const size_t c_n = (size_t)(c_rows * t->ldc), r_n = (size_t)(block * t->blocks);
    uint16_t *c = malloc(c_n * 2), *r = malloc(r_n * 2), *want = malloc(c_n * 2), *got = malloc(c_n * 2);
    if (!c || !r || !want || !got) return 1;
    for (size_t i = 0; i < r_n; i++) r[i] = value(&seed);
    for (int64_t i = 0; i < c_rows; i++)
        for (int64_t j = 0; j < t->ldc; j++)
            c[i * t->ldc + j] = i < t->rows && j < t->cols ? value(&seed) : (uint16_t)GUARD;
    memcpy(want, c, c_n * 2);
    for (int64_t i = 0; i < t->rows; i++)
        for (int64_t j = 0; j < t->cols; j++) {
            float acc = hgemm_check_f16_to_f32(c[i * t->ldc + j]);
            for (int p = 0; p < t->blocks; p++)
                if (p != t->skip) acc += hgemm_check_f16_to_f32(r[p * block + i * t->ldr + j]);
            want[i * t->ldc + j] = hgemm_check_f32_to_f16(acc);
        }
    void *dc = NULL, *dr = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc(&dc, c_n * 2));
    HGEMM_CHECK_CUDA(cudaMalloc(&dr, r_n * 2));
    HGEMM_CHECK_CUDA(cudaMemcpy(dc, c, c_n * 2, cudaMemcpyHostToDevice));
    HGEMM_CHECK_CUDA(cudaMemcpy(dr, r, r_n * 2, cudaMemcpyHostToDevice));
    HGEMM_CHECK_CUDA(hgemm_nccl_add_blocks(dc, t->ldc, dr, block, t->ldr, t->blocks, t->skip, t->rows, t->cols, 0));
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    HGEMM_CHECK_CUDA(cudaMemcpy(got, dc, c_n * 2, cudaMemcpyDeviceToHost));
    int64_t bad = 0, first = -1;
    for (size_t i = 0; i < c_n; i++)
        if (got[i] != want[i]) {
            if (first < 0) first = (int64_t)i;
            bad++;
        }
    printf("%s rows %lld cols %lld ldc %lld ldr %lld blocks %d skip %d: %lld elements differ",
           bad ? "FAIL" : "ok  ", (long long)t->rows, (long long)t->cols, (long long)t->ldc, (long long)t->ldr,
           t->blocks, t->skip, (long long)bad);
    if (bad)
        printf(" (first at row %lld col %lld: 0x%04x, want 0x%04x)", (long long)(first / t->ldc),
               (long long)(first % t->ldc), got[first], want[first]);
    printf("\n");
    HGEMM_CHECK_CUDA(cudaFree(dc));
    HGEMM_CHECK_CUDA(cudaFree(dr));
    free(c);
    free(r);
    free(want);
    free(got);
    return bad != 0;
}

int main(void) {
    char why[256] = "";
    if (!hgemm_check_sm90_available(why, sizeof why)) {
        printf("test_nccl_add: skipped: %s\n", why);
        return EXIT_SKIP;
    }
    const add_case cases[] = {
        {64, 8192, 8192, 8192, 2, 0},   /* the (b) path's shape class: one block, whole groups */
        {64, 8192, 8200, 8208, 2, 1},   /* padded leading dimensions, the other block */
        {1, 8, 16, 8, 2, 0},            /* one group */
        {777, 1032, 1040, 1032, 2, 1},  /* groups not a multiple of a step */
        {2500, 4096, 4096, 4096, 2, 0}, /* more groups than one grid covers in a step */
        {33, 1001, 1008, 1008, 2, 0},   /* ragged columns: the general kernel */
        {33, 1000, 1008, 1000, 3, 1},   /* three blocks */
        {5, 24, 24, 24, 1, 1},          /* one block, none skipped */
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) failed += run_case(&cases[i], 1234 + i);
    printf("test_nccl_add: %d case(s) failed\n", failed);
    return failed ? 1 : 0;
}
