/*
 * sanitize_driver: runs every kernel (or the ones named on the command line)
 * once on a few small ragged shapes, with and without beta, so that
 * compute-sanitizer (memcheck, racecheck, synccheck) sees every code path of
 * every kernel in a few seconds. Correctness is the GPU tests' job; this
 * program only checks statuses and CUDA errors. Exit 77 without a GPU.
 * Kernels that serve other forms (hgemm_gemm: bf16, NN/TN/TT, batches) run
 * each form too, on a few of the shapes, one entry and a batch of 3.
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
                               /* the same tiles with 4 k-tiles: V8's late parts of C go out in the
                                  next tile's k-loop (beta 0) */
                               {2312, 4350, 200},
                               /* with a workspace, V8 cuts each of its 2 tiles into 8 slices (split-K;
                                  v8-streamk: shared by stream-K) */
                               {200, 300, 4096},
                               /* a few slices: 22 narrow tiles in 3 (v8-wide: 12 in 4), slice 0's
                                  worker adding the others' partial sums (v8-split2k: the second kernel) */
                               {300, 1300, 2000},
                               /* the tail split: 68 wide or 320-wide cluster tiles of 32 k-tiles
                                  for 66 clusters, the last 2 in halves (a 17th cluster row whose
                                  lower block has no rows) */
                               {4224, 1000, 2048},
                               /* 100 wide cluster tiles of 64 k-tiles, the last 34 in thirds */
                               {2500, 2500, 4096},
                               /* decode: V9 splits k over clusters of 6 and 8 blocks; 79 tiles,
                                  one deep-ring block each; a swapped tile whose last 8 columns
                                  n cuts (V9's staged epilogue) */
                               {1, 4096, 1024}, {16, 520, 1000}, {33, 5000, 520}, {5, 1001, 520}};

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

/* The forms of a row that serves them (V8, V9), through hgemm_gemm: both
 * element types, the four layouts, one entry and a batch of 3 (entries
 * packed with padded leading dimensions). V9 answers NOT_SUPPORTED where its
 * short operand is MN-major; nothing else may. */
static const shape form_shapes[] = {{129, 264, 72}, {300, 520, 100}, {16, 520, 1000}, {200, 40, 300}};
enum { FORM_BUFFER_BYTES = 32 << 20 };

static int64_t pad8(int64_t x) { return (x + 7) / 8 * 8 + LD_PAD; }

static int run_forms(const hgemm_kernel_info *info, void *A, void *B, void *C) {
    int failures = 0;
    static const char *const layouts[4] = {"nn", "nt", "tn", "tt"};
    for (int dt = 0; dt < 2; dt++)
        for (int form = 0; form < 4; form++)
            for (size_t i = 0; i < sizeof form_shapes / sizeof form_shapes[0]; i++)
                for (int64_t batch = 1; batch <= 3; batch += 2) {
                    const shape s = form_shapes[i];
                    const hgemm_op op_a = form / 2 ? HGEMM_OP_T : HGEMM_OP_N;
                    const hgemm_op op_b = form % 2 ? HGEMM_OP_T : HGEMM_OP_N;
                    const int64_t lda = op_a == HGEMM_OP_N ? pad8(s.k) : pad8(s.m);
                    const int64_t ldb = op_b == HGEMM_OP_T ? pad8(s.k) : pad8(s.n), ldc = pad8(s.n);
                    const int64_t sa = (op_a == HGEMM_OP_N ? s.m : s.k) * lda;
                    const int64_t sb = (op_b == HGEMM_OP_T ? s.n : s.k) * ldb, sc = (int64_t)s.m * ldc;
                    hgemm_status st = hgemm_gemm(info->id, dt ? HGEMM_DTYPE_BF16 : HGEMM_DTYPE_F16, op_a, op_b,
                                                 s.m, s.n, s.k, 1.0f, A, lda, sa, B, ldb, sb, 0.5f, C, ldc, sc,
                                                 batch, NULL, 0);
                    cudaError_t err = cudaDeviceSynchronize();
                    const int refused = st == HGEMM_ERROR_NOT_SUPPORTED && info->id == HGEMM_KERNEL_V9;
                    printf("%-4s %s %s %5d x %5d x %5d batch %d: %s%s%s\n", info->name, dt ? "bf16" : "f16",
                           layouts[form], s.m, s.n, s.k, (int)batch, hgemm_status_string(st),
                           err == cudaSuccess ? "" : ", CUDA: ", err == cudaSuccess ? "" : cudaGetErrorString(err));
                    if ((st != HGEMM_SUCCESS && !refused) || err != cudaSuccess) failures++;
                }
    return failures;
}

/* A batch with the workspace, through hgemm_gemm (V8): 8 entries of 520 x
 * 700 x 2048 are 96 192-wide cluster tiles for 66 clusters, the last 30 in
 * halves (the tail split across entries; a 3rd cluster row whose lower
 * block has no rows). */
static const shape batch_ws_shape = {520, 700, 2048};
enum { BATCH_WS_ENTRIES = 8 };

static int run_batch_ws(const hgemm_kernel_info *info, void *A, void *B, void *C, void *workspace) {
    int failures = 0;
    const shape s = batch_ws_shape;
    const int64_t lda = pad8(s.k), ldb = lda, ldc = pad8(s.n);
    const hgemm_nt_options options = {workspace, HGEMM_WORKSPACE_BYTES, 0, NULL, 0};
    const float betas[2] = {0.0f, 0.5f};
    for (int b = 0; b < 2; b++) {
        hgemm_status st = hgemm_gemm(info->id, HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, s.m, s.n, s.k, 1.0f, A,
                                     lda, s.m * lda, B, ldb, s.n * ldb, betas[b], C, ldc, s.m * ldc,
                                     BATCH_WS_ENTRIES, &options, 0);
        cudaError_t err = cudaDeviceSynchronize();
        printf("%-4s+ws %5d x %5d x %5d batch %d beta %.1f: %s%s%s\n", info->name, s.m, s.n, s.k,
               BATCH_WS_ENTRIES, betas[b], hgemm_status_string(st), err == cudaSuccess ? "" : ", CUDA: ",
               err == cudaSuccess ? "" : cudaGetErrorString(err));
        if (st != HGEMM_SUCCESS || err != cudaSuccess) failures++;
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
    void *FA, *FB, *FC; /* the forms' batches: 3 entries of at most 1008 x 1032 */
    HGEMM_CHECK_CUDA(cudaMalloc(&FA, FORM_BUFFER_BYTES));
    HGEMM_CHECK_CUDA(cudaMalloc(&FB, FORM_BUFFER_BYTES));
    HGEMM_CHECK_CUDA(cudaMalloc(&FC, FORM_BUFFER_BYTES));
    HGEMM_CHECK_CUDA(cudaMemset(FA, 0x3c, FORM_BUFFER_BYTES)); /* small positive in fp16 and bf16 */
    HGEMM_CHECK_CUDA(cudaMemset(FB, 0x3c, FORM_BUFFER_BYTES));
    HGEMM_CHECK_CUDA(cudaMemset(FC, 0x00, FORM_BUFFER_BYTES));

    int failures = 0, ran = 0;
    const int table = hgemm__kernel_count(), rows = table + hgemm__experiment_count();
    for (int i = 0; i < rows; i++) {
        const hgemm_kernel_info *info = i < table ? hgemm__kernel_at(i) : hgemm__experiment_at(i - table);
        int wanted = argc < 2;
        for (int a = 1; a < argc; a++) wanted |= strcmp(argv[a], info->name) == 0;
        if (!wanted) continue;
        failures += run_kernel(info, A, B, C, workspace);
        if (i < table && info->forms) failures += run_forms(info, FA, FB, FC);
        if (i < table && info->id == HGEMM_KERNEL_V8) failures += run_batch_ws(info, FA, FB, FC, workspace);
        ran++;
    }
    HGEMM_CHECK_CUDA(cudaFree(FA));
    HGEMM_CHECK_CUDA(cudaFree(FB));
    HGEMM_CHECK_CUDA(cudaFree(FC));
    HGEMM_CHECK_CUDA(cudaFree(A));
    HGEMM_CHECK_CUDA(cudaFree(B));
    HGEMM_CHECK_CUDA(cudaFree(C));
    HGEMM_CHECK_CUDA(cudaFree(workspace));
    printf("%d kernels, %d failures\n", ran, failures);
    return failures || ran == 0 ? 1 : 0;
}
