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
 * launch after launch on an idle GPU (runs 131, 138: 6 of 6 launches, every
 * pair on the same SMs).
 *
 * Asynchronous, as every call is: the host never waits for the GPU here.
 * The first call on a device queues the probes on a stream of the library's
 * own, after an event recorded on the caller's stream (so they follow the
 * work queued there), and their SMs are copied into pinned host memory,
 * followed by a marker. The caller's stream then waits for the probes (an
 * event), so the product that call launches does not share the GPU with
 * them; that call, and every call until the host sees the marker, plays
 * the identity. A later call that sees it builds the map on the host.
 * Work on other streams may overlap the probes: a pair probe that put two
 * blocks on one SM (its grid not resident at once) is no map, and a later
 * call probes again, DEAL_TRIES times at most. Whatever the map, a deal is
 * a permutation and deals every unit once, so C is the same, bit for bit.
 *
 * The calls run in the relaxed capture mode, so that another thread's
 * stream capture, global mode included, neither fails them nor is ended by
 * them. While the caller's own stream is being captured nothing is queued
 * (an event recorded there would join the graph), but probes that have
 * already landed are read: a graph captured after the first calls has the
 * map. A busy probe read there is probed again by the next call outside a
 * capture. The state kept, once per device: the map, the
 * stream, two events and 8 KB of pinned memory, never freed. A failure of
 * any call leaves the device without a map (every later deal the identity),
 * and no error pending (each failed call's own is cleared, as the library's
 * statuses clear theirs: the caller's call still succeeds); a failure while
 * the stream, events and pinned memory are being made gives back those
 * already made.
 */
#include <atomic>
#include <stdint.h>
#include <string.h>

#include <cuda_runtime.h>

#include "deal.h"
#include "internal.h"
#include "ptx/common.cuh" /* globaltimer_ns */

enum {
    DEAL_DEVICES = 64,          /* device ordinals with a map slot */
    DEAL_STAY_NS = 100 * 1000,  /* each probe block's stay */
    DEAL_PROBES = 4,            /* pairs, then clusters of 16, 8 and 4 */
    DEAL_TRIES = 4,             /* probes before a device goes without */
};

enum {
    DEAL_UNKNOWN = 0, /* nothing queued */
    DEAL_QUEUED,      /* probes queued; the marker not seen yet */
    DEAL_BUSY,        /* one thread is queueing or reading (others: the identity) */
    DEAL_KNOWN,
    DEAL_NONE,
};

/* What the probes leave in pinned host memory: each probe's SMs, then the
 * marker, copied last (the copies of one stream land in order). */
typedef struct deal_host {
    uint16_t sm[DEAL_PROBES][HGEMM_DEAL_MAX_SMS];
    volatile uint32_t marker; /* the try whose copies have landed */
} deal_host;

typedef struct deal_device {
    std::atomic<int> state;        /* DEAL_* */
    uint32_t tries;                /* probes queued so far (under DEAL_BUSY) */
    cudaStream_t stream;           /* the probes' stream */
    cudaEvent_t queued, done;      /* the caller's work before them; the probes' end */
    deal_host *host;               /* pinned */
    uint32_t blocks[DEAL_PROBES];  /* each probe's grid; 0: not run */
    uint32_t clusters;             /* pairs the map covers */
    uint8_t order[HGEMM_DEAL_MAX]; /* hgemm_deal_order's */
} deal_device;

static deal_device deals[DEAL_DEVICES];

/* Each probe's cluster size: pairs (V8's), then 16, 8 and 4 for the GPCs. */
static const unsigned probe_size[DEAL_PROBES] = {2, 16, 8, 4};

__device__ uint16_t v8_where_sm[DEAL_PROBES][HGEMM_DEAL_MAX_SMS];
__device__ uint32_t v8_where_marker;

/* Block b writes its SM to v8_where_sm[probe][b], then stays `stay_ns` of
 * the global timer (bounded: it leaves once that much time has passed). */
__global__ void v8_where(uint32_t probe, uint32_t blocks, unsigned long long stay_ns) {
    extern __shared__ uint32_t where_smem[];
    if (threadIdx.x != 0) return;
    const unsigned long long t0 = globaltimer_ns();
    uint32_t id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    where_smem[0] = id; /* the shared memory is the block's size; touch it */
    if (blockIdx.x < blocks) v8_where_sm[probe][blockIdx.x] = (uint16_t)where_smem[0];
    while (globaltimer_ns() - t0 < stay_ns) {
    }
}

/* The marker for try `t`, after the probes (one thread). */
__global__ void v8_where_mark(uint32_t t) { v8_where_marker = t; }

/* Whether a runtime call of the deal's succeeded; its own error, when not,
 * cleared (it is then the pending one). */
static bool ok(cudaError_t err) {
    if (err == cudaSuccess) return true;
    (void)cudaGetLastError();
    return false;
}

/* Queues probe `probe` in clusters of `size`, as many as the GPU holds at
 * once, and the copy of their SMs. Returns the grid, 0 on any failure. */
static uint32_t where_queue(deal_device *d, uint32_t probe, unsigned threads, size_t smem, unsigned size) {
    unsigned grid = 0;
    if (hgemm__persistent_grid((const void *)v8_where, threads, smem, size, UINT32_MAX, &grid) != HGEMM_SUCCESS ||
        grid == 0 || grid > HGEMM_DEAL_MAX_SMS)
        return 0;
    uint32_t p = probe, n = grid;
    unsigned long long stay = DEAL_STAY_NS;
    void *params[] = {&p, &n, &stay};
    if (hgemm__launch_ready((const void *)v8_where, dim3(grid), threads, smem, size, d->stream, params) !=
            HGEMM_SUCCESS ||
        !ok(cudaMemcpyFromSymbolAsync(d->host->sm[probe], v8_where_sm, grid * sizeof(uint16_t),
                                      probe * sizeof d->host->sm[0], cudaMemcpyDeviceToHost, d->stream)))
        return 0;
    return grid;
}

/* The device's stream, events and pinned memory, all or none: what a
 * failure leaves made is destroyed (nothing has used it yet). */
static int deal_make(deal_device *d) {
    cudaStream_t stream = NULL;
    cudaEvent_t queued = NULL, done = NULL;
    void *host = NULL;
    if (ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) &&
        ok(cudaEventCreateWithFlags(&queued, cudaEventDisableTiming)) &&
        ok(cudaEventCreateWithFlags(&done, cudaEventDisableTiming)) &&
        ok(cudaHostAlloc(&host, sizeof(deal_host), cudaHostAllocDefault))) {
        d->stream = stream;
        d->queued = queued;
        d->done = done;
        d->host = (deal_host *)host;
        d->host->marker = 0;
        return 1;
    }
    if (done) ok(cudaEventDestroy(done));
    if (queued) ok(cudaEventDestroy(queued));
    if (stream) ok(cudaStreamDestroy(stream));
    return 0;
}

/* The first try on a device makes its stream, events and pinned memory.
 * Every try queues the probes after the caller's queued work, then the
 * marker's copy, and makes the caller's stream wait for them. */
static int deal_queue(deal_device *d, cudaStream_t caller, unsigned threads, size_t smem) {
    if (!d->host && !deal_make(d)) return 0;
    const uint32_t t = ++d->tries;
    if (!ok(cudaEventRecord(d->queued, caller)) || !ok(cudaStreamWaitEvent(d->stream, d->queued, 0)))
        return 0;
    /* clusters of 16 need the non-portable size; a GPU without it groups by
     * 8 and 4 alone */
    const int large = hgemm__allow_large_clusters((const void *)v8_where) == HGEMM_SUCCESS;
    for (uint32_t i = 0; i < DEAL_PROBES; i++) {
        d->blocks[i] = 0;
        if (probe_size[i] > 8 && !large) continue;
        if ((d->blocks[i] = where_queue(d, i, threads, smem, probe_size[i])) == 0) return 0;
    }
    uint32_t mark = t;
    void *params[] = {&mark};
    return hgemm__launch((const void *)v8_where_mark, dim3(1), 1, 0, 1, d->stream, params) == HGEMM_SUCCESS &&
           ok(cudaMemcpyFromSymbolAsync((void *)&d->host->marker, v8_where_marker, sizeof(uint32_t), 0,
                                        cudaMemcpyDeviceToHost, d->stream)) &&
           ok(cudaEventRecord(d->done, d->stream)) && ok(cudaStreamWaitEvent(caller, d->done, 0));
}

enum { READ_FAILED = 0, READ_OK, READ_BUSY };

/* The map from the landed probes into d (d->clusters, d->order). READ_BUSY
 * where the pair probe's grid was not resident at once. */
static int deal_read(deal_device *d, uint32_t sms) {
    uint16_t root[HGEMM_DEAL_MAX_SMS];
    const uint16_t *pairs = d->host->sm[0];
    const uint32_t pair_blocks = d->blocks[0];
    if (pair_blocks / 2 > HGEMM_DEAL_MAX) return READ_FAILED;
    if (!hgemm_deal_distinct(pairs, pair_blocks)) return READ_BUSY;
    hgemm_deal_groups_init(root, sms);
    for (uint32_t i = 0; i < DEAL_PROBES; i++) /* a cluster's SMs share a GPC, however busy the GPU */
        if (d->blocks[i] && !hgemm_deal_join(root, sms, d->host->sm[i], d->blocks[i], probe_size[i]))
            return READ_FAILED;
    d->clusters = pair_blocks / 2;
    return hgemm_deal_order(root, sms, pairs, d->clusters, d->order) ? READ_OK : READ_FAILED;
}

/* One step of the device's measurement, by the one thread that holds
 * DEAL_BUSY: queue the probes, or read them once they have landed. Returns
 * the state to leave. */
static int deal_step(deal_device *d, int state, int dev, cudaStream_t caller, unsigned threads, size_t smem,
                     int capturing) {
    if (state == DEAL_QUEUED && d->host->marker != d->tries) return DEAL_QUEUED; /* not landed yet */
    if (capturing && state == DEAL_UNKNOWN) return DEAL_UNKNOWN;                 /* nothing to read, nothing queued */
    int sms = 0;
    if (!ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) || sms < 2 ||
        sms > HGEMM_DEAL_MAX_SMS)
        return DEAL_NONE;
    if (state == DEAL_QUEUED) {
        std::atomic_thread_fence(std::memory_order_acquire); /* the SMs' copies landed before the marker */
        const int got = deal_read(d, (uint32_t)sms);
        if (got == READ_OK) return DEAL_KNOWN;
        if (got == READ_FAILED || d->tries >= DEAL_TRIES) return DEAL_NONE;
        if (capturing) return DEAL_UNKNOWN; /* busy: the next call outside a capture probes again */
        /* busy: probe again, now */
    }
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    if (!ok(cudaThreadExchangeStreamCaptureMode(&mode))) return DEAL_NONE;
    const int queued = deal_queue(d, caller, threads, smem);
    ok(cudaThreadExchangeStreamCaptureMode(&mode)); /* the caller's mode back */
    return queued ? DEAL_QUEUED : DEAL_NONE;
}

/* worker[c] = c for the launch's clusters (at most HGEMM_DEAL_MAX): the
 * identity, where there is no map. Returns 0. */
static int identity(uint8_t *worker, uint32_t clusters) {
    for (uint32_t c = 0; c < clusters && c < HGEMM_DEAL_MAX; c++) worker[c] = (uint8_t)c;
    return 0;
}

extern "C" int hgemm__v8_deal(cudaStream_t stream, uint32_t clusters, unsigned threads, size_t smem,
                              uint8_t *worker) {
    int dev = -1;
    if (clusters > HGEMM_DEAL_MAX || !ok(cudaGetDevice(&dev)) || dev < 0 || dev >= DEAL_DEVICES)
        return identity(worker, clusters);
    deal_device *d = &deals[dev];
    int state = d->state.load(std::memory_order_acquire);
    if (state == DEAL_UNKNOWN || state == DEAL_QUEUED) {
        /* while the caller's stream is being captured nothing is queued
         * (the event recorded on it would join the graph); landed probes
         * are still read */
        cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
        if (!ok(cudaStreamIsCapturing(stream, &cs))) return identity(worker, clusters);
        const int capturing = cs != cudaStreamCaptureStatusNone;
        if (capturing && state == DEAL_UNKNOWN) return identity(worker, clusters);
        int expected = state;
        if (!d->state.compare_exchange_strong(expected, DEAL_BUSY, std::memory_order_acq_rel))
            return identity(worker, clusters); /* another thread is at it: the identity meanwhile */
        state = deal_step(d, state, dev, stream, threads, smem, capturing);
        d->state.store(state, std::memory_order_release);
    }
    /* the map's deal, or (a launch larger than the map) the identity */
    if (state != DEAL_KNOWN) return identity(worker, clusters);
    return hgemm_deal_workers(d->order, d->clusters, clusters, worker);
}
