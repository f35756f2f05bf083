/*
 * test_gpu_deal: V8's GPC-aware deal on the GPU (src/deal.h,
 * src/kernels/v8_deal.cu; the v8-gpc row, whose products test_gpu_kernels
 * checks with every other row's):
 *   - inside a stream capture the deal measures nothing and is the identity
 *     (the capture goes on and ends cleanly);
 *   - outside, the first call queues the probes and plays the identity,
 *     after work queued on the caller's stream and while this thread
 *     captures another stream in the global mode (that capture goes on and
 *     ends cleanly, with what it captured); an error the caller left
 *     pending is still pending afterwards; once the caller's stream has
 *     finished (it waits for the probes), the next call has the map, even
 *     inside a capture of that stream (it reads the landed probes and
 *     queues nothing: the graph holds no node);
 *   - every launch size from 1 pair to the map's is a bijection;
 *   - past HGEMM_DEAL_MAX clusters, the identity.
 * Prints the deal for the whole GPU (the worker each pair plays), so a log
 * shows the map. Exits 77 without an sm_90 GPU and 1 on any failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "check.h"
#include "deal.h"
#include "internal.h"

enum {
    EXIT_SKIP = 77,
    WHY_LEN = 256,
    THREADS = 384,             /* V8's block */
    SMEM_BYTES = 225 * 1024,   /* more than half an SM: one block per SM, as V8's */
};

static int passed = 0, failed = 0;

static void expect(int ok, const char *what) {
    printf("%s: %s\n", ok ? "ok" : "FAIL", what);
    if (ok) passed++;
    else failed++;
}

static int is_identity(const uint8_t *w, uint32_t n) {
    for (uint32_t c = 0; c < n; c++)
        if (w[c] != c) return 0;
    return 1;
}

int main(void) {
    char why[WHY_LEN];
    if (!hgemm_check_sm90_available(why, sizeof why)) {
        printf("test_gpu_deal: skipped: %s\n", why);
        return EXIT_SKIP;
    }
    printf("test_gpu_deal: %s\n", why);
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
        printf("FAIL: no device attributes\n");
        return 1;
    }
    const uint32_t pairs = (uint32_t)sms / 2;
    uint8_t w[HGEMM_DEAL_MAX];

    /* 1. inside a capture: the identity, and the capture still ends well */
    cudaStream_t s = NULL;
    cudaGraph_t graph = NULL;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
        printf("FAIL: no stream\n");
        return 1;
    }
    int captured = cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess;
    memset(w, 0xff, sizeof w);
    const int in_capture = captured ? hgemm__v8_deal(s, pairs, THREADS, SMEM_BYTES, w) : -1;
    captured = captured && cudaStreamEndCapture(s, &graph) == cudaSuccess;
    expect(captured && in_capture == 0 && is_identity(w, pairs),
           "inside a stream capture: no map measured, the identity, the capture ends");
    if (graph) cudaGraphDestroy(graph);

    /* 2. the first call outside, with work queued on s and another stream
     * in a global-mode capture: the probes are queued, the capture
     * survives, a pending error stays; the map is known once s is done */
    cudaStream_t other = NULL;
    void *scratch = NULL;
    cudaGraph_t other_graph = NULL;
    if (cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking) != cudaSuccess ||
        cudaMalloc(&scratch, 1 << 20) != cudaSuccess) {
        printf("FAIL: no second stream or scratch memory\n");
        return 1;
    }
    int queued = 1;
    for (int i = 0; i < 64; i++) /* about 64 MB of stores queued ahead of the map */
        queued = queued && cudaMemsetAsync(scratch, i, 1 << 20, s) == cudaSuccess;
    (void)cudaGetLastError();
    const cudaError_t planted = cudaSetDevice(-1); /* leaves cudaErrorInvalidDevice pending */
    int other_captured = cudaStreamBeginCapture(other, cudaStreamCaptureModeGlobal) == cudaSuccess &&
                         cudaMemsetAsync(scratch, 0, 256, other) == cudaSuccess;
    memset(w, 0xff, sizeof w);
    const int first = hgemm__v8_deal(s, pairs, THREADS, SMEM_BYTES, w);
    const cudaError_t pending = cudaGetLastError();
    size_t nodes = 0;
    other_captured = other_captured && cudaStreamEndCapture(other, &other_graph) == cudaSuccess &&
                     cudaGraphGetNodes(other_graph, NULL, &nodes) == cudaSuccess && nodes == 1;
    expect(queued && other_captured,
           "another stream's global-mode capture goes on through the call and ends with its one node");
    if (other_graph) cudaGraphDestroy(other_graph);
    expect(planted != cudaSuccess && pending == planted, "the caller's pending error is still pending after the call");
    expect(first == 0 && is_identity(w, pairs), "the first call queues the probes and plays the identity");
    expect(cudaStreamSynchronize(s) == cudaSuccess && cudaStreamSynchronize(other) == cudaSuccess,
           "both streams finish cleanly");
    /* the landed probes read inside a capture of s: the map, no node */
    graph = NULL;
    nodes = 1;
    captured = cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess;
    memset(w, 0xff, sizeof w);
    const int known = captured ? hgemm__v8_deal(s, pairs, THREADS, SMEM_BYTES, w) : -1;
    captured = captured && cudaStreamEndCapture(s, &graph) == cudaSuccess &&
               cudaGraphGetNodes(graph, NULL, &nodes) == cudaSuccess;
    expect(captured && known == 1 && nodes == 0,
           "once the caller's stream is done (it waited for the probes), the map is known, read inside a "
           "capture of that stream with nothing queued (the graph has no node)");
    if (graph) cudaGraphDestroy(graph);
    uint8_t again[HGEMM_DEAL_MAX];
    memset(again, 0xff, sizeof again);
    expect(hgemm__v8_deal(s, pairs, THREADS, SMEM_BYTES, again) == 1 && memcmp(again, w, pairs) == 0,
           "outside the capture, the same map");
    cudaFree(scratch);
    cudaStreamDestroy(other);
    expect(hgemm_deal_is_permutation(w, pairs), "the deal for every pair is a permutation");
    printf("deal for %u pairs (pair: worker):", pairs);
    for (uint32_t c = 0; c < pairs && c < HGEMM_DEAL_MAX; c++) printf(" %u:%u", c, w[c]);
    printf("\n");

    /* 3. every launch size */
    int all = 1;
    for (uint32_t n = 1; n <= pairs && n <= HGEMM_DEAL_MAX; n++) {
        memset(w, 0xff, sizeof w);
        const int got = hgemm__v8_deal(s, n, THREADS, SMEM_BYTES, w);
        if (got != known || !hgemm_deal_is_permutation(w, n)) {
            printf("  %u pairs: returned %d, %s\n", n, got, hgemm_deal_is_permutation(w, n) ? "a permutation" : "NOT a permutation");
            all = 0;
        }
    }
    expect(all, "every launch of 1 pair up to the whole GPU: a permutation, from the map");

    /* 4. more clusters than a deal holds: the identity of the first HGEMM_DEAL_MAX */
    memset(w, 0xff, sizeof w);
    expect(hgemm__v8_deal(s, HGEMM_DEAL_MAX + 1, THREADS, SMEM_BYTES, w) == 0 && is_identity(w, HGEMM_DEAL_MAX),
           "past HGEMM_DEAL_MAX clusters: the identity");

    cudaStreamDestroy(s);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
