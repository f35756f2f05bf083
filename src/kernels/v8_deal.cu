/*
 * v8_deal.cu: where a persistent launch of V8's pairs lands, measured once
 * per device, for the GPC-aware deal (src/deal.h; V8's wide and 320 tiles).
 *
 * The map: one launch of as many pairs as the GPU holds at once, in V8's
 * block shape (its threads and shared memory: one block per SM), each block
 * writing the SM it runs on and staying 100 us so that every cluster is
 * resident at once, as V8's persistent grid is; then one launch each of
 * clusters of 16, 8 and 4 blocks, whose SMs, joined, give the groups (a
 * cluster's SMs share a GPC). The placement is the hardware's, the same
 * launch after launch on an idle GPU (run 131: 6 of 6 launches, every pair
 * on the same SMs).
 *
 * A library call may not stop the device: no device synchronization. The
 * probes run on a stream of their own, after the work the caller's stream
 * had queued (an event), so on a GPU that runs one stream they find it
 * idle. Work on other streams may overlap them: a pair probe that put two
 * blocks on one SM (its grid not resident at once) is no map, and a later
 * call measures again, DEAL_TRIES times at most. A map taken beside other
 * work can still be a worse one, never a wrong deal (a permutation deals
 * every unit once). The calls run in the relaxed capture mode, so that
 * another thread's stream capture, global mode included, neither fails
 * them nor is ended by them; a capture on the caller's own stream skips the
 * measurement (the identity meanwhile).
 *
 * The calls here are the runtime's and the driver's own; a failure of any
 * of them leaves the device without a map (every later deal the identity).
 */
#include <atomic>
#include <stdint.h>
#include <string.h>

#include <cuda_runtime.h>

#include "deal.h"
#include "internal.h"
#include "ptx/common.cuh" /* globaltimer_ns */

enum {
    DEAL_DEVICES = 64,               /* device ordinals with a map slot */
    DEAL_STAY_NS = 100 * 1000,       /* each probe block's stay */
    DEAL_GROUP_SIZES = 3,            /* clusters of 16, 8 and 4 */
    DEAL_TRIES = 4,                  /* measurements before a device goes without */
};

enum { DEAL_UNKNOWN = 0, DEAL_MEASURING, DEAL_KNOWN, DEAL_NONE };

typedef struct deal_device {
    std::atomic<int> state;       /* DEAL_* */
    int tries;                    /* measurements so far (under DEAL_MEASURING) */
    uint32_t clusters;            /* pairs the map covers */
    uint8_t order[HGEMM_DEAL_MAX]; /* hgemm_deal_order's */
} deal_device;

static deal_device deals[DEAL_DEVICES];

__device__ uint16_t v8_where_sm[HGEMM_DEAL_MAX_SMS];

/* Block b writes its SM to v8_where_sm[b], then stays `stay_ns` of the
 * global timer (bounded: it leaves once that much time has passed). */
__global__ void v8_where(uint32_t blocks, unsigned long long stay_ns) {
    extern __shared__ uint32_t where_smem[];
    if (threadIdx.x != 0) return;
    const unsigned long long t0 = globaltimer_ns();
    uint32_t id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    where_smem[0] = id; /* the shared memory is the block's size; touch it */
    if (blockIdx.x < blocks) v8_where_sm[blockIdx.x] = (uint16_t)where_smem[0];
    while (globaltimer_ns() - t0 < stay_ns) {
    }
}

/* One launch of the probe in clusters of `size`, as many as the GPU holds
 * at once; their SMs land in sm[0 .. *blocks). Returns 0 on any failure. */
static int where_launch(cudaStream_t s, unsigned threads, size_t smem, unsigned size, uint16_t *sm,
                        uint32_t *blocks) {
    unsigned grid = 0;
    if (hgemm__persistent_grid((const void *)v8_where, threads, smem, size, UINT32_MAX, &grid) != HGEMM_SUCCESS ||
        grid == 0 || grid > HGEMM_DEAL_MAX_SMS)
        return 0;
    uint32_t n = grid;
    unsigned long long stay = DEAL_STAY_NS;
    void *params[] = {&n, &stay};
    if (hgemm__launch_ready((const void *)v8_where, dim3(grid), threads, smem, size, s, params) != HGEMM_SUCCESS)
        return 0;
    if (cudaMemcpyFromSymbolAsync(sm, v8_where_sm, grid * sizeof(uint16_t), 0, cudaMemcpyDeviceToHost, s) !=
            cudaSuccess ||
        cudaStreamSynchronize(s) != cudaSuccess)
        return 0;
    *blocks = grid;
    return 1;
}

enum { MEASURE_FAILED = 0, MEASURE_OK, MEASURE_BUSY };

/* The probes, on `s`: the device's map into d (d->clusters, d->order).
 * MEASURE_BUSY where the pair probe's grid was not resident at once. */
static int deal_probe(deal_device *d, cudaStream_t s, uint32_t sms, unsigned threads, size_t smem) {
    uint16_t pairs[HGEMM_DEAL_MAX_SMS], sm[HGEMM_DEAL_MAX_SMS], root[HGEMM_DEAL_MAX_SMS];
    uint32_t pair_blocks = 0, blocks = 0;
    if (!where_launch(s, threads, smem, 2, pairs, &pair_blocks) || pair_blocks / 2 > HGEMM_DEAL_MAX)
        return MEASURE_FAILED;
    if (!hgemm_deal_distinct(pairs, pair_blocks)) return MEASURE_BUSY;
    hgemm_deal_groups_init(root, sms);
    if (!hgemm_deal_join(root, sms, pairs, pair_blocks, 2)) return MEASURE_FAILED;
    const unsigned sizes[DEAL_GROUP_SIZES] = {16, 8, 4};
    /* clusters of 16 need the non-portable size; a GPU without it groups by
     * 8 and 4 alone. A cluster's SMs share a GPC however busy the GPU is. */
    const int large = hgemm__allow_large_clusters((const void *)v8_where) == HGEMM_SUCCESS;
    for (int i = 0; i < DEAL_GROUP_SIZES; i++) {
        if (sizes[i] > 8 && !large) continue;
        if (!where_launch(s, threads, smem, sizes[i], sm, &blocks) || !hgemm_deal_join(root, sms, sm, blocks, sizes[i]))
            return MEASURE_FAILED;
    }
    d->clusters = pair_blocks / 2;
    return hgemm_deal_order(root, sms, pairs, d->clusters, d->order) ? MEASURE_OK : MEASURE_FAILED;
}

/* The map, after the work queued on the caller's `stream`. */
static int deal_measure(deal_device *d, int dev, cudaStream_t stream, unsigned threads, size_t smem) {
    int sms = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms < 2 ||
        sms > HGEMM_DEAL_MAX_SMS)
        return MEASURE_FAILED;
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    if (cudaThreadExchangeStreamCaptureMode(&mode) != cudaSuccess) return MEASURE_FAILED;
    cudaStream_t s = NULL;
    cudaEvent_t queued = NULL;
    int got = MEASURE_FAILED;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess &&
        cudaEventCreateWithFlags(&queued, cudaEventDisableTiming) == cudaSuccess &&
        cudaEventRecord(queued, stream) == cudaSuccess && cudaStreamWaitEvent(s, queued, 0) == cudaSuccess)
        got = deal_probe(d, s, (uint32_t)sms, threads, smem);
    if (queued) cudaEventDestroy(queued);
    if (s) cudaStreamDestroy(s);
    cudaThreadExchangeStreamCaptureMode(&mode); /* the caller's mode back */
    return got;
}

extern "C" int hgemm__v8_deal(cudaStream_t stream, uint32_t clusters, unsigned threads, size_t smem,
                              uint8_t *worker) {
    const uint32_t n = clusters < (uint32_t)HGEMM_DEAL_MAX ? clusters : (uint32_t)HGEMM_DEAL_MAX;
    for (uint32_t c = 0; c < n; c++) worker[c] = (uint8_t)c;
    int dev = -1;
    if (clusters > HGEMM_DEAL_MAX || cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= DEAL_DEVICES) return 0;
    deal_device *d = &deals[dev];
    int state = d->state.load(std::memory_order_acquire);
    if (state == DEAL_UNKNOWN) {
        /* never inside a capture of the caller's stream: the event recorded
         * on it would join the graph (the identity until a call outside) */
        cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
        if (cudaStreamIsCapturing(stream, &cs) != cudaSuccess || cs != cudaStreamCaptureStatusNone) return 0;
        int expected = DEAL_UNKNOWN;
        if (d->state.compare_exchange_strong(expected, DEAL_MEASURING, std::memory_order_acq_rel)) {
            const int got = deal_measure(d, dev, stream, threads, smem);
            d->tries++;
            state = got == MEASURE_OK ? DEAL_KNOWN
                    : got == MEASURE_BUSY && d->tries < DEAL_TRIES ? DEAL_UNKNOWN
                                                                   : DEAL_NONE;
            d->state.store(state, std::memory_order_release);
        } else {
            state = expected; /* another thread measures: the identity meanwhile */
        }
    }
    if (state != DEAL_KNOWN) return 0;
    return hgemm_deal_workers(d->order, d->clusters, clusters, worker);
}
