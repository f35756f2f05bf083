/*
 * sanitize_driver: runs every kernel (or the ones named on the command line)
 * once on a few small ragged shapes, with and without beta, so that
 * compute-sanitizer (memcheck, racecheck, synccheck) sees every code path of
 * every kernel in a few seconds. Correctness is the GPU tests' job; this
 * program only checks statuses and CUDA errors. Exit 77 without a GPU.
 */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "check.h"
#include "hgemm.h"
#include "internal.h"

enum { SKIP = 77, ELEM = 2, LD_PAD = 8 };

typedef struct shape { int m, n, k; } shape;

/* Small, ragged in every dimension, one of them a full V6 tile with k > stages;
 * the last has 170 tiles of 256x256, more than an H200's 132 SMs, so V7's
 * persistent blocks take a second tile (and n % 8 != 0 mixes directly stored
 * right-edge tiles with TMA-stored ones in one block). */
static const shape shapes[] = {{1, 1, 1}, {129, 264, 72}, {300, 520, 100}, {256, 256, 512},
                               {2312, 4350, 64},
                               /* with a workspace, V8 shares each of its 2 tiles among 8 workers */
                               {200, 300, 4096},
                               /* decode: V9 splits k over clusters of 6 and 8 blocks */
                               {1, 4096, 1024}, {16, 520, 1000}};

static int run_kernel(const hgemm_kernel_info *info, void *A, void *B, void *C, void *workspace) {
    int failures = 0;
    /* V8's rows once more with the workspace (stream-K's partial sums and flags) */
    const int passes = info->id == HGEMM_KERNEL_V8 ? 2 : 1;
    for (int pass = 0; pass < passes; pass++) {
        void *ws = pass ? workspace : NULL;
        const size_t ws_bytes = pass ? HGEMM_WORKSPACE_BYTES : 0;
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            const shape s = shapes[i];
            const int64_t lda = s.k + LD_PAD - s.k % LD_PAD, ldb = lda;
            const int64_t ldc = s.n + LD_PAD - s.n % LD_PAD;
            const float betas[2] = {0.0f, 0.5f};
            for (int b = 0; b < 2; b++) {
                hgemm_status st = hgemm__run_ws(info, s.m, s.n, s.k, 1.0f, A, lda, B, ldb, betas[b],
                                                C, ldc, ws, ws_bytes, 0); /* hgemm_nt_ws's path */
                cudaError_t err = cudaDeviceSynchronize();
                printf("%-4s%s %5d x %5d x %5d beta %.1f: %s%s%s\n", info->name, pass ? "+ws" : "",
                       s.m, s.n, s.k, betas[b], hgemm_status_string(st),
                       err == cudaSuccess ? "" : ", CUDA: ",
                       err == cudaSuccess ? "" : cudaGetErrorString(err));
                if (st != HGEMM_SUCCESS || err != cudaSuccess) failures++;
            }
        }
    }
    return failures;
}

int main(int argc, char **argv) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("sanitize_driver: no CUDA device, skipped\n");
        return SKIP;
    }
    size_t bytes = 0; /* enough for A, B and C of every shape above */
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const size_t ld_k = (size_t)shapes[i].k + LD_PAD, ld_n = (size_t)shapes[i].n + LD_PAD;
        const size_t need[3] = {shapes[i].m * ld_k, shapes[i].n * ld_k, shapes[i].m * ld_n};
        for (int j = 0; j < 3; j++)
            if (need[j] * ELEM > bytes) bytes = need[j] * ELEM;
    }
    void *A, *B, *C, *workspace;
    HGEMM_CHECK_CUDA(cudaMalloc(&workspace, HGEMM_WORKSPACE_BYTES));
    HGEMM_CHECK_CUDA(cudaMemset(workspace, 0, HGEMM_WORKSPACE_BYTES));
    HGEMM_CHECK_CUDA(cudaMalloc(&A, bytes));
    HGEMM_CHECK_CUDA(cudaMalloc(&B, bytes));
    HGEMM_CHECK_CUDA(cudaMalloc(&C, bytes));
    HGEMM_CHECK_CUDA(cudaMemset(A, 0x3c, bytes)); /* 0x3c3c: a small positive fp16 */
    HGEMM_CHECK_CUDA(cudaMemset(B, 0x3c, bytes));
    HGEMM_CHECK_CUDA(cudaMemset(C, 0x00, bytes));

    int failures = 0, ran = 0;
    const int table = hgemm__kernel_count(), rows = table + hgemm__experiment_count();
    for (int i = 0; i < rows; i++) {
        const hgemm_kernel_info *info = i < table ? hgemm__kernel_at(i) : hgemm__experiment_at(i - table);
        int wanted = argc < 2;
        for (int a = 1; a < argc; a++) wanted |= strcmp(argv[a], info->name) == 0;
        if (!wanted) continue;
        failures += run_kernel(info, A, B, C, workspace);
        ran++;
    }
    HGEMM_CHECK_CUDA(cudaFree(A));
    HGEMM_CHECK_CUDA(cudaFree(B));
    HGEMM_CHECK_CUDA(cudaFree(C));
    HGEMM_CHECK_CUDA(cudaFree(workspace));
    printf("%d kernels, %d failures\n", ran, failures);
    return failures || ran == 0 ? 1 : 0;
}
