/*
 * test_gpu_library_ws: the library's workspace (include/hgemm.h), lent to
 * calls that bring none:
 *   - hgemm_nt without a workspace gives, bitwise, the C of hgemm_nt_ws with
 *     a zero-filled workspace of HGEMM_WORKSPACE_BYTES (the same split), and
 *     that C matches the fp64 reference; guard rows around C keep their
 *     sentinel; shapes where AUTO splits k (few long tiles, batched decode
 *     rows, a ragged V8 product);
 *   - two streams at once, each its own workspace: many calls on each
 *     without a synchronization between them, every C bitwise the one above;
 *   - a graph captured (global mode), on a stream that has its workspace
 *     and on one that never ran hgemm: the capture stays valid, the call
 *     borrows none (unsplit) and is right on each of three replays;
 *   - hgemm_set_library_workspace(0): the call runs unsplit, still right;
 *   - hgemm_free_library_workspaces, then a call: allocated again, same C;
 *   - past HGEMM_LIBRARY_WORKSPACE_STREAMS streams: no error, C right;
 *   - no CUDA error left set by any of it.
 * Exit 77 (skipped) without an sm_90 GPU.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "check.h"
#include "hgemm.h"

enum { EXIT_SKIP = 77, GUARD_ROWS = 2, SEED_A = 31, SEED_B = 32, CALLS_PER_STREAM = 6 };

typedef struct shape {
    const char *what;
    hgemm_kernel kernel;
    int64_t m, n, k, ldc;
} shape;

static const shape shapes[] = {
    {"few long tiles", HGEMM_KERNEL_AUTO, 256, 256, 65536, 256},
    {"batched decode", HGEMM_KERNEL_AUTO, 128, 4096, 4096, 4096},
    {"ragged, padded", HGEMM_KERNEL_V8, 300, 520, 3000, 528},
};

static int failures;

static void expect(int ok, const char *what, const char *shape_name) {
    printf("%s %-16s %s\n", ok ? "PASS" : "FAIL", shape_name, what);
    if (!ok) failures++;
}

typedef struct operands {
    int64_t m, n, k, lda, ldc;
    void *A, *B;
    double *ref;
    size_t c_bytes;
} operands;

static void operands_make(operands *o, const shape *s) {
    o->m = s->m;
    o->n = s->n;
    o->k = s->k;
    o->lda = (s->k + 7) / 8 * 8;
    o->ldc = s->ldc;
    o->c_bytes = (size_t)(s->m * s->ldc) * 2;
    HGEMM_CHECK_CUDA(cudaMalloc(&o->A, (size_t)(s->m * o->lda) * 2));
    HGEMM_CHECK_CUDA(cudaMalloc(&o->B, (size_t)(s->n * o->lda) * 2));
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&o->ref, (size_t)(s->m * s->n) * sizeof(double)));
    const float scale = hgemm_check_unit_scale(s->k);
    hgemm_check_fill_random(o->A, s->m, s->k, o->lda, SEED_A, scale, 0);
    hgemm_check_fill_random(o->B, s->n, s->k, o->lda, SEED_B, scale, 0);
    hgemm_check_reference(s->m, s->n, s->k, 1.0, o->A, o->lda, o->B, o->lda, 0.0, NULL, 0, o->ref, s->n, 0);
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
}

static void operands_free(operands *o) {
    HGEMM_CHECK_CUDA(cudaFree(o->A));
    HGEMM_CHECK_CUDA(cudaFree(o->B));
    HGEMM_CHECK_CUDA(cudaFree(o->ref));
}

/* C into g (NaN first: every element must be written), on `stream`. */
static hgemm_status call(const shape *s, const operands *o, hgemm_check_guarded *g, void *ws, size_t ws_bytes,
                         cudaStream_t stream) {
    return hgemm_nt_ws(s->kernel, o->m, o->n, o->k, 1.0f, o->A, o->lda, o->B, o->lda, 0.0f, g->C, o->ldc, ws,
                       ws_bytes, stream);
}

/* C right against the reference and the guards intact. */
static int right(const operands *o, hgemm_check_guarded *g) {
    hgemm_check_stats st;
    const int ok = hgemm_check_compare(g->C, o->ldc, o->ref, o->n, o->m, o->n, HGEMM_CHECK_ATOL_ACC_F32,
                                       HGEMM_CHECK_RTOL, &st, 0);
    if (!ok) hgemm_check_print_mismatches(stdout, &st, "     ");
    hgemm_check_guard_report guard;
    return ok && hgemm_check_guard_intact(g, &guard, 0);
}

static int same_bits(const hgemm_check_guarded *g, const uint16_t *want, size_t bytes) {
    uint16_t *got = malloc(bytes);
    if (got == NULL) return 0;
    HGEMM_CHECK_CUDA(cudaMemcpy(got, g->C, bytes, cudaMemcpyDeviceToHost));
    const int same = memcmp(got, want, bytes) == 0;
    free(got);
    return same;
}

static void run_shape(const shape *s) {
    operands o;
    operands_make(&o, s);
    hgemm_check_guarded g, g2;
    hgemm_check_guarded_alloc(&g, o.m, o.n, o.ldc, GUARD_ROWS);
    hgemm_check_guarded_alloc(&g2, o.m, o.n, o.ldc, GUARD_ROWS);
    uint16_t *want = malloc(o.c_bytes);
    if (want == NULL) exit(1);

    /* the caller's workspace: the C every other call must give */
    void *ws = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc(&ws, HGEMM_WORKSPACE_BYTES));
    HGEMM_CHECK_CUDA(cudaMemset(ws, 0, HGEMM_WORKSPACE_BYTES));
    hgemm_check_fill_nan_dt(HGEMM_DTYPE_F16, g.C, o.m, o.n, o.ldc, 0);
    hgemm_status st = call(s, &o, &g, ws, HGEMM_WORKSPACE_BYTES, 0);
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    expect(st == HGEMM_SUCCESS && right(&o, &g), "hgemm_nt_ws, the caller's workspace: right", s->what);
    HGEMM_CHECK_CUDA(cudaMemcpy(want, g.C, o.c_bytes, cudaMemcpyDeviceToHost));

    /* none given: the library's, the same bits */
    hgemm_check_fill_nan_dt(HGEMM_DTYPE_F16, g.C, o.m, o.n, o.ldc, 0);
    st = call(s, &o, &g, NULL, 0, 0);
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    expect(st == HGEMM_SUCCESS && right(&o, &g) && same_bits(&g, want, o.c_bytes),
           "no workspace: right, bitwise the caller's-workspace C", s->what);

    /* two streams at once */
    cudaStream_t s1, s2;
    HGEMM_CHECK_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    HGEMM_CHECK_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    int all_ok = 1;
    hgemm_check_fill_nan_dt(HGEMM_DTYPE_F16, g.C, o.m, o.n, o.ldc, 0);
    hgemm_check_fill_nan_dt(HGEMM_DTYPE_F16, g2.C, o.m, o.n, o.ldc, 0);
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    for (int i = 0; i < CALLS_PER_STREAM; i++) {
        all_ok &= call(s, &o, &g, NULL, 0, s1) == HGEMM_SUCCESS;
        all_ok &= call(s, &o, &g2, NULL, 0, s2) == HGEMM_SUCCESS;
    }
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    expect(all_ok && same_bits(&g, want, o.c_bytes) && same_bits(&g2, want, o.c_bytes),
           "two streams at once, 6 calls each: bitwise the same C", s->what);

    /* graphs (global mode), on a stream with its workspace and on one new
     * to hgemm: a captured call borrows none (looking one up would
     * invalidate the capture): unsplit, right */
    cudaStream_t s3;
    HGEMM_CHECK_CUDA(cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking));
    for (int which = 0; which < 2; which++) {
        cudaStream_t cs = which ? s3 : s1;
        cudaGraph_t graph = NULL;
        cudaGraphExec_t exec = NULL;
        HGEMM_CHECK_CUDA(cudaStreamBeginCapture(cs, cudaStreamCaptureModeGlobal));
        st = call(s, &o, &g, NULL, 0, cs);
        const cudaError_t end = cudaStreamEndCapture(cs, &graph);
        int graph_ok = st == HGEMM_SUCCESS && end == cudaSuccess;
        if (end != cudaSuccess) printf("     cudaStreamEndCapture: %s\n", cudaGetErrorString(end));
        (void)cudaGetLastError();
        if (graph_ok) {
            HGEMM_CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
            for (int r = 0; r < 3 && graph_ok; r++) {
                hgemm_check_fill_nan_dt(HGEMM_DTYPE_F16, g.C, o.m, o.n, o.ldc, cs);
                HGEMM_CHECK_CUDA(cudaGraphLaunch(exec, cs));
                HGEMM_CHECK_CUDA(cudaStreamSynchronize(cs));
                graph_ok = right(&o, &g);
            }
            HGEMM_CHECK_CUDA(cudaGraphExecDestroy(exec));
        }
        if (graph) HGEMM_CHECK_CUDA(cudaGraphDestroy(graph));
        expect(graph_ok, which ? "captured on a stream new to hgemm, replayed 3 times: unsplit, right"
                               : "captured on a stream with its workspace, replayed 3 times: unsplit, right",
               s->what);
    }

    /* turned off: unsplit, still right */
    hgemm_set_library_workspace(0);
    hgemm_check_fill_nan_dt(HGEMM_DTYPE_F16, g.C, o.m, o.n, o.ldc, 0);
    st = call(s, &o, &g, NULL, 0, 0);
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    expect(st == HGEMM_SUCCESS && right(&o, &g), "hgemm_set_library_workspace(0): right", s->what);
    hgemm_set_library_workspace(1);

    /* freed, then allocated again */
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    st = hgemm_free_library_workspaces();
    hgemm_check_fill_nan_dt(HGEMM_DTYPE_F16, g.C, o.m, o.n, o.ldc, 0);
    const hgemm_status st2 = call(s, &o, &g, NULL, 0, 0);
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    expect(st == HGEMM_SUCCESS && st2 == HGEMM_SUCCESS && same_bits(&g, want, o.c_bytes),
           "freed, then a call: bitwise the same C", s->what);

    HGEMM_CHECK_CUDA(cudaStreamDestroy(s1));
    HGEMM_CHECK_CUDA(cudaStreamDestroy(s2));
    HGEMM_CHECK_CUDA(cudaStreamDestroy(s3));
    HGEMM_CHECK_CUDA(cudaFree(ws));
    hgemm_check_guarded_free(&g);
    hgemm_check_guarded_free(&g2);
    free(want);
    operands_free(&o);
}

/* More streams than the library lends to: the calls past the limit run
 * unsplit, without an error. */
static void past_the_limit(void) {
    const shape *s = &shapes[1];
    operands o;
    operands_make(&o, s);
    enum { STREAMS = HGEMM_LIBRARY_WORKSPACE_STREAMS + 3 };
    cudaStream_t streams[STREAMS];
    hgemm_check_guarded g;
    hgemm_check_guarded_alloc(&g, o.m, o.n, o.ldc, GUARD_ROWS);
    int all_ok = 1;
    for (int i = 0; i < STREAMS; i++) {
        HGEMM_CHECK_CUDA(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
        hgemm_check_fill_nan_dt(HGEMM_DTYPE_F16, g.C, o.m, o.n, o.ldc, streams[i]);
        all_ok &= call(s, &o, &g, NULL, 0, streams[i]) == HGEMM_SUCCESS;
        HGEMM_CHECK_CUDA(cudaStreamSynchronize(streams[i]));
        all_ok &= right(&o, &g);
    }
    expect(all_ok, "35 streams, each its first call: right, no error", s->what);
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    for (int i = 0; i < STREAMS; i++) HGEMM_CHECK_CUDA(cudaStreamDestroy(streams[i]));
    expect(hgemm_free_library_workspaces() == HGEMM_SUCCESS, "all freed", s->what);
    hgemm_check_guarded_free(&g);
    operands_free(&o);
}

int main(void) {
    char why[256] = "";
    if (!hgemm_check_sm90_available(why, sizeof why)) {
        printf("test_gpu_library_ws: skipped: %s\n", why);
        return EXIT_SKIP;
    }
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) run_shape(&shapes[i]);
    past_the_limit();
    expect(cudaGetLastError() == cudaSuccess, "no CUDA error left set", "");
    printf("%s: %d failure%s\n", failures ? "FAIL" : "PASS", failures, failures == 1 ? "" : "s");
    return failures != 0;
}
