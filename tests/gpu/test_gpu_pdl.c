/*
 * test_gpu_pdl: calls queued back to back in one stream, where V8's
 * programmatic dependent launch lets a call start before the one before it
 * has finished (src/kernels/v8_fp32_cluster.cu). Each call must still see
 * every write of the call before it and must not overwrite what that call
 * still reads:
 *   - chain: X is multiplied by the identity 2 * ROUNDS times, P -> Q -> P
 *     ..., each call reading the buffer the call before it wrote (read after
 *     write) and writing the one it read (write after read). A product with
 *     the identity is exact in fp32 and rounds back to the same fp16, so the
 *     last output must equal X bit for bit;
 *   - repeat: one split-K product (256 x 256 x 65536: every SM a slice, the
 *     partial sums and counters in the workspace) queued REPEATS times into
 *     REPEATS outputs with one workspace, each output checked against the
 *     fp64 reference: a call that started on the workspace before the one
 *     before it was done with it would corrupt the sums, or hang (the hang
 *     guard then fails the launch).
 * For AUTO, V8 and V9 (V8 with no trigger, V9 triggering after its last
 * load), and each launched the other ways (v8-nopdl and v9-nopdl without
 * the launch attribute, v8-pdl-start, v8-pdl-late, v9-pdl-start); V9 and
 * AUTO also on decode chains (1 and 64 rows against 4096, and 2048 x 64),
 * with a whole workspace. One line per (kernel, case); exits 77 without an sm_90
 * GPU and 1 on any failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "check.h"
#include "hgemm.h"
#include "internal.h"

enum {
    EXIT_SKIP = 77,
    ROUNDS = 8,  /* P -> Q -> P pairs */
    REPEATS = 8, /* queued split-K calls */
    SEED_X = 41, SEED_A = 42, SEED_B = 43,
    WHY_LEN = 256,
    F16_ONE = 0x3c00,
};

static int passed = 0, failed = 0;

typedef struct kernel_row {
    const char *name;
    const hgemm_kernel_info *info; /* NULL: AUTO */
    int skip;                      /* an ablation this build lacks (no lab) */
} kernel_row;

/* One call C = A * B^T with a whole workspace: AUTO through hgemm_nt_ws,
 * a table row or an ablation through hgemm__run_ws (the same validation). */
static hgemm_status call(const kernel_row *kr, int64_t m, int64_t n, int64_t k, const void *A, const void *B,
                         void *C, void *ws, cudaStream_t stream) {
    if (kr->info == NULL)
        return hgemm_nt_ws(HGEMM_KERNEL_AUTO, m, n, k, 1.0f, A, k, B, k, 0.0f, C, n, ws, HGEMM_WORKSPACE_BYTES,
                           stream);
    return hgemm__run_ws(kr->info, m, n, k, 1.0f, A, k, B, k, 0.0f, C, n, ws, HGEMM_WORKSPACE_BYTES, stream);
}

static void report(const kernel_row *kr, const char *what, int ok, const char *why) {
    printf("%-5s %-9s %-28s %s%s%s\n", ok ? "ok" : "FAIL", kr->name, what, ok ? "" : "(", ok ? "" : why,
           ok ? "" : ")");
    if (ok) passed++;
    else failed++;
}

static void chain(const kernel_row *kr, int64_t m, int64_t n, void *ws, cudaStream_t stream) {
    char what[64], why[WHY_LEN] = "";
    snprintf(what, sizeof what, "chain %lld x %lld x %lld", (long long)m, (long long)n, (long long)n);
    const size_t bytes = (size_t)(m * n) * 2;
    void *P = NULL, *Q = NULL, *I = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc(&P, bytes));
    HGEMM_CHECK_CUDA(cudaMalloc(&Q, bytes));
    HGEMM_CHECK_CUDA(cudaMalloc(&I, (size_t)(n * n) * 2));
    uint16_t *eye = calloc((size_t)(n * n), 2), *x = malloc(bytes), *out = malloc(bytes);
    if (!eye || !x || !out) {
        fprintf(stderr, "test_gpu_pdl: out of host memory\n");
        exit(1);
    }
    for (int64_t i = 0; i < n; i++) eye[i * n + i] = F16_ONE;
    HGEMM_CHECK_CUDA(cudaMemcpy(I, eye, (size_t)(n * n) * 2, cudaMemcpyHostToDevice));
    hgemm_check_fill_random(P, m, n, n, SEED_X, 1.0f, stream);
    hgemm_check_fill_pattern(Q, m, n, n, HGEMM_CHECK_NAN, stream);
    HGEMM_CHECK_CUDA(cudaStreamSynchronize(stream));
    HGEMM_CHECK_CUDA(cudaMemcpy(x, P, bytes, cudaMemcpyDeviceToHost));
    hgemm_status st = HGEMM_SUCCESS;
    for (int r = 0; r < ROUNDS && st == HGEMM_SUCCESS; r++) {
        st = call(kr, m, n, n, P, I, Q, ws, stream);
        if (st == HGEMM_SUCCESS) st = call(kr, m, n, n, Q, I, P, ws, stream);
    }
    cudaError_t err = cudaStreamSynchronize(stream);
    int ok = st == HGEMM_SUCCESS && err == cudaSuccess;
    if (!ok) {
        snprintf(why, sizeof why, "%s / %s", hgemm_status_string(st), cudaGetErrorString(err));
    } else {
        HGEMM_CHECK_CUDA(cudaMemcpy(out, P, bytes, cudaMemcpyDeviceToHost));
        int64_t bad = 0, first = -1;
        for (int64_t i = 0; i < m * n; i++)
            if (out[i] != x[i] && bad++ == 0) first = i;
        ok = bad == 0;
        if (!ok)
            snprintf(why, sizeof why, "%lld of %lld elements differ, first at (%lld, %lld): 0x%04x, not 0x%04x",
                     (long long)bad, (long long)(m * n), (long long)(first / n), (long long)(first % n),
                     out[first], x[first]);
    }
    report(kr, what, ok, why);
    free(eye);
    free(x);
    free(out);
    HGEMM_CHECK_CUDA(cudaFree(P));
    HGEMM_CHECK_CUDA(cudaFree(Q));
    HGEMM_CHECK_CUDA(cudaFree(I));
}

static void repeat(const kernel_row *kr, int64_t m, int64_t n, int64_t k, void *ws, cudaStream_t stream) {
    char what[64], why[WHY_LEN] = "";
    snprintf(what, sizeof what, "repeat %lld x %lld x %lld", (long long)m, (long long)n, (long long)k);
    void *A = NULL, *B = NULL, *C[REPEATS];
    double *ref = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc(&A, (size_t)(m * k) * 2));
    HGEMM_CHECK_CUDA(cudaMalloc(&B, (size_t)(n * k) * 2));
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&ref, (size_t)(m * n) * sizeof(double)));
    const float s = hgemm_check_unit_scale(k);
    hgemm_check_fill_random(A, m, k, k, SEED_A, s, stream);
    hgemm_check_fill_random(B, n, k, k, SEED_B, s, stream);
    hgemm_check_reference(m, n, k, 1.0, A, k, B, k, 0.0, NULL, 0, ref, n, stream);
    for (int r = 0; r < REPEATS; r++) {
        HGEMM_CHECK_CUDA(cudaMalloc(&C[r], (size_t)(m * n) * 2));
        hgemm_check_fill_pattern(C[r], m, n, n, HGEMM_CHECK_NAN, stream);
    }
    HGEMM_CHECK_CUDA(cudaStreamSynchronize(stream));
    hgemm_status st = HGEMM_SUCCESS;
    for (int r = 0; r < REPEATS && st == HGEMM_SUCCESS; r++) st = call(kr, m, n, k, A, B, C[r], ws, stream);
    cudaError_t err = cudaStreamSynchronize(stream);
    int ok = st == HGEMM_SUCCESS && err == cudaSuccess;
    if (!ok) snprintf(why, sizeof why, "%s / %s", hgemm_status_string(st), cudaGetErrorString(err));
    for (int r = 0; r < REPEATS && ok; r++) {
        hgemm_check_stats stats;
        if (!hgemm_check_compare(C[r], n, ref, n, m, n, HGEMM_CHECK_ATOL_ACC_F32, HGEMM_CHECK_RTOL, &stats,
                                 stream)) {
            ok = 0;
            snprintf(why, sizeof why, "call %d of %d: %lld of %lld elements outside the tolerance", r + 1,
                     REPEATS, (long long)stats.failed, (long long)stats.count);
        }
    }
    report(kr, what, ok, why);
    for (int r = 0; r < REPEATS; r++) HGEMM_CHECK_CUDA(cudaFree(C[r]));
    HGEMM_CHECK_CUDA(cudaFree(A));
    HGEMM_CHECK_CUDA(cudaFree(B));
    HGEMM_CHECK_CUDA(cudaFree(ref));
}

int main(void) {
    char why[WHY_LEN];
    if (!hgemm_check_sm90_available(why, sizeof why)) {
        printf("test_gpu_pdl: skipped: %s\n", why);
        return EXIT_SKIP;
    }
    printf("test_gpu_pdl: %s\n", why);
    /* AUTO, the table's V8 and V9, and each launched each way (HGEMM_PDL_*) */
    static const char *const names[] = {"auto",     "v8", "v8-nopdl", "v8-pdl-start", "v8-pdl-late",
                                        "v9",       "v9-nopdl", "v9-pdl-start"};
    enum { ROWS = sizeof names / sizeof names[0] };
    kernel_row rows[ROWS];
    for (int r = 0; r < ROWS; r++) {
        rows[r].name = names[r];
        rows[r].info = NULL;
        rows[r].skip = 0;
        if (r == 0) continue;
        if (!strcmp(names[r], "v8")) rows[r].info = hgemm__kernel_find(HGEMM_KERNEL_V8);
        else if (!strcmp(names[r], "v9")) rows[r].info = hgemm__kernel_find(HGEMM_KERNEL_V9);
        for (int i = 0; i < hgemm__experiment_count() && rows[r].info == NULL; i++) {
            const hgemm_kernel_info *e = hgemm__experiment_at(i);
            if (e && !strcmp(e->name, names[r])) rows[r].info = e;
        }
        if (rows[r].info == NULL && hgemm__experiment_count() == 0) {
            rows[r].skip = 1; /* an ablation: in a lab build only (-DHGEMM_LAB=ON) */
            printf("SKIP %s: not in this build (the lab's rows need -DHGEMM_LAB=ON)\n", names[r]);
        } else if (rows[r].info == NULL) {
            printf("FAIL: %s missing from the kernel tables\n", names[r]);
            return 1;
        }
    }
    void *ws = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc(&ws, HGEMM_WORKSPACE_BYTES));
    HGEMM_CHECK_CUDA(cudaMemset(ws, 0, HGEMM_WORKSPACE_BYTES));
    cudaStream_t stream;
    HGEMM_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    for (int i = 0; i < ROWS; i++) {
        if (rows[i].skip) continue;
        if (rows[i].info == NULL || rows[i].info->id != HGEMM_KERNEL_V9) {
            chain(&rows[i], 1024, 1024, ws, stream); /* one quarter tile per block */
            chain(&rows[i], 300, 520, ws, stream);   /* ragged, a few tiles */
            chain(&rows[i], 2048, 4096, ws, stream); /* wide tiles, stream-K's last round */
            repeat(&rows[i], 256, 256, 65536, ws, stream);
        }
        if (rows[i].info == NULL || rows[i].info->id == HGEMM_KERNEL_V9) {
            chain(&rows[i], 1, 4096, ws, stream);  /* decode: swapped, k split over a cluster */
            chain(&rows[i], 64, 4096, ws, stream); /* the widest short side */
            chain(&rows[i], 2048, 64, ws, stream); /* n short: unswapped, one k-tile */
        }
    }
    HGEMM_CHECK_CUDA(cudaStreamDestroy(stream));
    HGEMM_CHECK_CUDA(cudaFree(ws));
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
