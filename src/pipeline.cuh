/*
 * pipeline.cuh: the stage/phase bookkeeping of a producer/consumer ring.
 *
 * A ring of `stages` shared-memory stages has two mbarriers per stage:
 * full[s] (one producer arrival plus the TMA bytes) and empty[s] (one arrival
 * per consumer warpgroup). Both sides walk the ring with a pipe_state: the
 * stage index and the parity of the current round. A consumer waits for
 * full[s] with that parity; the producer waits for empty[s] with the opposite
 * parity, which a fresh barrier satisfies at once, so the first round needs no
 * special case.
 *
 * Two layers. The pipe_* functions take the barrier arrays and the stage
 * count one by one. A pipe_ring holds them (and, in V8, the cluster that
 * shares the ring), so a kernel names them once; the ring_* functions on it
 * are the interface from V4 on, with the late release of V5 on. V9 still
 * calls the pipe_* functions directly.
 */
#ifndef HGEMM_PIPELINE_CUH
#define HGEMM_PIPELINE_CUH

#include "ptx/cluster.cuh"
#include "ptx/mbarrier.cuh"

typedef struct pipe_state {
    uint32_t stage; /* 0 .. stages-1 */
    uint32_t phase; /* parity of the round this stage is in */
} pipe_state;

static __device__ __forceinline__ void pipe_init(uint64_t *full, uint64_t *empty, uint32_t stages,
                                                 uint32_t consumers) {
    for (uint32_t s = 0; s < stages; s++) {
        mbarrier_init(&full[s], 1);
        mbarrier_init(&empty[s], consumers);
    }
    fence_mbarrier_init();
}

/* Next stage; the phase flips each time the ring wraps. */
static __device__ __forceinline__ void pipe_advance(pipe_state *st, uint32_t stages) {
    if (++st->stage == stages) {
        st->stage = 0;
        st->phase ^= 1;
    }
}

/* Producer: wait until every consumer has released the stage's last use
 * (a stage never used passes at once). */
static __device__ __forceinline__ void pipe_producer_wait_free(uint64_t *empty, pipe_state st) {
    mbarrier_wait(&empty[st.stage], st.phase ^ 1);
}

/* Producer: wait until the stage is free, announce `tx_bytes` of TMA traffic
 * on its full barrier and return that barrier for the loads. */
static __device__ __forceinline__ uint64_t *pipe_producer_acquire(uint64_t *full, uint64_t *empty,
                                                                  pipe_state st, uint32_t tx_bytes) {
    pipe_producer_wait_free(empty, st);
    mbarrier_arrive_expect_tx(&full[st.stage], tx_bytes);
    return &full[st.stage];
}

/* Consumer: wait until the stage's loads have landed. */
static __device__ __forceinline__ void pipe_consumer_wait(uint64_t *full, pipe_state st) {
    mbarrier_wait(&full[st.stage], st.phase);
}

/* Consumer: this warpgroup is done reading the stage (call from one thread). */
static __device__ __forceinline__ void pipe_consumer_release(uint64_t *empty, pipe_state st) {
    mbarrier_arrive(&empty[st.stage]);
}

/* Consumer: release the stage in every block of a cluster that shares the
 * ring (ring_make_cluster). */
static __device__ __forceinline__ void pipe_consumer_release_cluster(uint64_t *empty, pipe_state st,
                                                                     uint32_t cluster) {
    for (uint32_t r = 0; r < cluster; r++) mbarrier_arrive_cluster(&empty[st.stage], r);
}

/* ---- the ring ----------------------------------------------------------- */

typedef struct pipe_ring {
    uint64_t *full;   /* [stages], in shared memory */
    uint64_t *empty;  /* [stages] */
    uint32_t stages;
    uint32_t cluster; /* blocks whose consumers release every stage: 1 but in V8 */
} pipe_ring;

/* The ring over full[stages] and empty[stages] of this block. */
static __device__ __forceinline__ pipe_ring ring_make(uint64_t *full, uint64_t *empty, uint32_t stages) {
    pipe_ring r = {full, empty, stages, 1};
    return r;
}

/* A ring shared by the `cluster` blocks of a cluster (V8): every stage of
 * every block is written by the TMA loads of all of them (multicast), so a
 * stage is free only when the consumers of every block have released it.
 * empty[s] then counts consumers x cluster arrivals, and each consumer
 * releases the stage in every block; the producer acquires as before. */
static __device__ __forceinline__ pipe_ring ring_make_cluster(uint64_t *full, uint64_t *empty,
                                                              uint32_t stages, uint32_t cluster) {
    pipe_ring r = {full, empty, stages, cluster};
    return r;
}

/* One thread initialises the barriers; `consumers` warpgroups per block
 * release each stage. */
static __device__ __forceinline__ void ring_init(pipe_ring r, uint32_t consumers) {
    pipe_init(r.full, r.empty, r.stages, consumers * r.cluster);
}

/* pipe_advance, pipe_producer_acquire and pipe_consumer_wait on the ring. */
static __device__ __forceinline__ void ring_advance(pipe_ring r, pipe_state *st) {
    pipe_advance(st, r.stages);
}

static __device__ __forceinline__ uint64_t *ring_producer_acquire(pipe_ring r, pipe_state st,
                                                                  uint32_t tx_bytes) {
    return pipe_producer_acquire(r.full, r.empty, st, tx_bytes);
}

/* Producer, after its last load: wait until every stage has gone back for
 * the last time, i.e. every consumer of every block of the cluster has made
 * its last release here. A block whose stages are released from other blocks
 * (ring_make_cluster) may exit only after that: a release that arrives
 * after the block is gone would land in freed shared memory. The waits an
 * acquire would make for the next `stages` loads. */
static __device__ __forceinline__ void ring_producer_tail(pipe_ring r, pipe_state st) {
    for (uint32_t i = 0; i < r.stages; i++) {
        pipe_producer_wait_free(r.empty, st);
        pipe_advance(&st, r.stages);
    }
}

static __device__ __forceinline__ void ring_consumer_wait(pipe_ring r, pipe_state st) {
    pipe_consumer_wait(r.full, st);
}

/* Consumer: this warpgroup is done reading the stage (call from one thread),
 * in this block or in every block of the cluster. */
static __device__ __forceinline__ void ring_consumer_release(pipe_ring r, pipe_state st) {
    if (r.cluster > 1)
        pipe_consumer_release_cluster(r.empty, st, r.cluster);
    else
        pipe_consumer_release(r.empty, st);
}

/* Late release (V5 on). A consumer that leaves the WGMMA group of a k-tile
 * in flight (wgmma_wait_group_1) may not release its stage when it has
 * issued the group, only once the group has completed: it holds the stage
 * one k-tile longer. Call right after the wait of the k-tile at `st`: the
 * group before it has completed, so the stage held so far goes back (when
 * `release`: from one thread, and not at the first k-tile, which holds
 * nothing yet) and `st` is held in its place. */
static __device__ __forceinline__ void ring_release_held(pipe_ring r, pipe_state *held, pipe_state st,
                                                         bool release) {
    if (release) ring_consumer_release(r, *held);
    *held = st;
}

/* Late release, after the last k-tile's wgmma_wait_group_0: every group has
 * completed, and the stage still held goes back (when `release`: from one
 * thread, and only if there was a k-tile). */
static __device__ __forceinline__ void ring_release_last(pipe_ring r, pipe_state held, bool release) {
    if (release) ring_consumer_release(r, held);
}

#endif
