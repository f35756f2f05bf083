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

/* Producer: wait until the stage is free, announce `tx_bytes` of TMA traffic
 * on its full barrier and return that barrier for the loads. */
static __device__ __forceinline__ uint64_t *pipe_producer_acquire(uint64_t *full, uint64_t *empty,
                                                                  pipe_state st, uint32_t tx_bytes) {
    mbarrier_wait(&empty[st.stage], st.phase ^ 1);
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

/* A ring shared by the blocks of a cluster (from V8 on): every stage of every
 * block is written by the TMA loads of all of them (multicast), so a stage is
 * free only when the consumers of every block have released it. empty[s] then
 * counts consumers x cluster arrivals, and each consumer releases the stage in
 * every block; the producer acquires as before. */
static __device__ __forceinline__ void pipe_consumer_release_cluster(uint64_t *empty, pipe_state st,
                                                                     uint32_t cluster) {
    for (uint32_t r = 0; r < cluster; r++) mbarrier_arrive_cluster(&empty[st.stage], r);
}

#endif
