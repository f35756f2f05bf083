/* cluster.cuh: thread-block clusters (PTX ISA "Parallel Synchronization and
 * Communication: barrier.cluster", "Data Movement: mapa", special register
 * %cluster_ctarank) and mbarrier operations that cross the blocks of a cluster. */
#ifndef HGEMM_PTX_CLUSTER_CUH
#define HGEMM_PTX_CLUSTER_CUH

#include "common.cuh"
#include "mbarrier.cuh"

/* mov %cluster_ctarank (PTX ISA "Special Registers: %cluster_ctarank"): this block's rank in its cluster. */
static __device__ __forceinline__ uint32_t cluster_ctarank(void) {
    uint32_t rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    return rank;
}

/* barrier.cluster.arrive.release + barrier.cluster.wait.acquire (PTX ISA "barrier.cluster"):
 * every thread of every block of the cluster meets here; shared-memory writes
 * (barrier initialisation included) before it are visible to the cluster after
 * it. Each warp must arrive converged (.aligned). */
static __device__ __forceinline__ void cluster_sync(void) {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

/* mapa.shared::cluster (PTX ISA "mapa"): the address of this block's shared
 * variable `p` in the shared memory of block `rank` of the cluster. */
static __device__ __forceinline__ uint32_t mapa_shared(const void *p, uint32_t rank) {
    uint32_t remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_u32(p)), "r"(rank));
    return remote;
}

/* mbarrier.arrive.release.cluster.shared::cluster (PTX ISA "mbarrier.arrive"): one arrival
 * on the barrier at the same offset as `bar` in block `rank` of the cluster (this
 * block included). */
static __device__ __forceinline__ void mbarrier_arrive_cluster(uint64_t *bar, uint32_t rank) {
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];"
                 ::"r"(mapa_shared(bar, rank)) : "memory");
}

/* mbarrier.try_wait.parity.acquire.cluster (PTX ISA "mbarrier.try_wait.parity"): as
 * mbarrier_try_wait_parity, acquiring what the arrivals of other blocks of the
 * cluster released. */
static __device__ __forceinline__ uint32_t mbarrier_try_wait_parity_cluster(uint64_t *bar, uint32_t parity) {
    uint32_t done;
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done) : "r"(smem_u32(bar)), "r"(parity) : "memory");
    return done;
}

/* Wait, cluster scope, for the phase with this parity; traps after HGEMM_HANG_NS. */
static __device__ __forceinline__ void mbarrier_wait_cluster(uint64_t *bar, uint32_t parity) {
    if (mbarrier_try_wait_parity_cluster(bar, parity)) return;
    uint64_t start = globaltimer_ns();
    while (!mbarrier_try_wait_parity_cluster(bar, parity)) {
        if (globaltimer_ns() - start > HGEMM_HANG_NS) hang_report("cluster mbarrier wait", smem_u32(bar), parity);
    }
}

#endif
