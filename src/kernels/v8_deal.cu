/*
 * v8_deal.cu: where a persistent launch of V8's pairs lands, measured once
 * per device, for the GPC-aware deal (src/deal.h; the v8-gpc row).
 *
 * The map: with the GPU idle (a device synchronization first), one launch
 * of as many pairs as the GPU holds at once, in V8's block shape (its
 * threads and shared memory: one block per SM), each block writing the SM
 * it runs on and staying 100 us so that every cluster is resident at once,
 * as V8's persistent grid is; then one launch each of clusters of 16, 8 and
 * 4 blocks, whose SMs, joined, give the groups (a cluster's SMs share a
 * GPC). The placement is the hardware's, the same launch after launch on an
 * idle GPU (run 131: 6 of 6 launches, every pair on the same SMs). A launch
 * that lands elsewhere (another kernel running beside it) keeps a correct
 * deal and loses only the merging it was for.
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
};

enum { DEAL_UNKNOWN = 0, DEAL_MEASURING, DEAL_KNOWN, DEAL_NONE };

typedef struct deal_device {
    std::atomic<int> state;       /* DEAL_* */
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

/* The device's map into d (d->clusters, d->order). Returns 0 on failure. */
static int deal_measure(deal_device *d, int dev, unsigned threads, size_t smem) {
    int sms = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms < 2 ||
        sms > HGEMM_DEAL_MAX_SMS)
        return 0;
    /* the GPU idle, so that the pairs land where a lone launch's do */
    if (cudaDeviceSynchronize() != cudaSuccess) return 0;
    cudaStream_t s = NULL;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return 0;
    uint16_t pairs[HGEMM_DEAL_MAX_SMS], sm[HGEMM_DEAL_MAX_SMS], root[HGEMM_DEAL_MAX_SMS];
    uint32_t pair_blocks = 0, blocks = 0;
    int ok = where_launch(s, threads, smem, 2, pairs, &pair_blocks) && pair_blocks / 2 <= HGEMM_DEAL_MAX;
    if (ok) {
        hgemm_deal_groups_init(root, (uint32_t)sms);
        ok = hgemm_deal_join(root, (uint32_t)sms, pairs, pair_blocks, 2);
        const unsigned sizes[DEAL_GROUP_SIZES] = {16, 8, 4};
        /* clusters of 16 need the non-portable size; a GPU without it
         * groups by 8 and 4 alone */
        const int large = hgemm__allow_large_clusters((const void *)v8_where) == HGEMM_SUCCESS;
        for (int i = 0; ok && i < DEAL_GROUP_SIZES; i++) {
            if (sizes[i] > 8 && !large) continue;
            ok = where_launch(s, threads, smem, sizes[i], sm, &blocks) &&
                 hgemm_deal_join(root, (uint32_t)sms, sm, blocks, sizes[i]);
        }
    }
    if (ok) {
        d->clusters = pair_blocks / 2;
        ok = hgemm_deal_order(root, (uint32_t)sms, pairs, d->clusters, d->order);
    }
    cudaStreamDestroy(s);
    return ok;
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
        /* never inside a capture: the map's synchronization and launches
         * would end it (the deal is then the identity until a call outside) */
        cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
        if (cudaStreamIsCapturing(stream, &cs) != cudaSuccess || cs != cudaStreamCaptureStatusNone) return 0;
        int expected = DEAL_UNKNOWN;
        if (d->state.compare_exchange_strong(expected, DEAL_MEASURING, std::memory_order_acq_rel)) {
            state = deal_measure(d, dev, threads, smem) ? DEAL_KNOWN : DEAL_NONE;
            d->state.store(state, std::memory_order_release);
        } else {
            state = expected; /* another thread measures: the identity meanwhile */
        }
    }
    if (state != DEAL_KNOWN) return 0;
    return hgemm_deal_workers(d->order, d->clusters, clusters, worker);
}
