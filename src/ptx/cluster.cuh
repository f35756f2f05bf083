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

/* barrier.cluster.arrive.relaxed + barrier.cluster.wait (PTX ISA
 * "barrier.cluster"): every thread of every block of the cluster meets here,
 * with no memory ordering: for a block that must not exit while others still
 * read its shared memory, where each reader arrives after its loads returned. */
static __device__ __forceinline__ void cluster_sync_relaxed_arrive(void) {
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\n\t"
                 "barrier.cluster.wait.aligned;" ::: "memory");
}

/* mapa.shared::cluster (PTX ISA "mapa"): the address of this block's shared
 * variable `p` in the shared memory of block `rank` of the cluster. */
static __device__ __forceinline__ uint32_t mapa_shared(const void *p, uint32_t rank) {
    uint32_t remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_u32(p)), "r"(rank));
    return remote;
}

/* ld.shared::cluster.v2.f32 (PTX ISA "ld"): two floats at a shared::cluster
 * address (from mapa_shared), in this block's or another block's shared memory. */
static __device__ __forceinline__ float2 ld_shared_cluster_f32x2(uint32_t addr) {
    float2 v;
    asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "r"(addr) : "memory");
    return v;
}

/* ld.shared::cluster.v4.f32: four floats, as ld_shared_cluster_f32x2. */
static __device__ __forceinline__ float4 ld_shared_cluster_f32x4(uint32_t addr) {
    float4 v;
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(addr)
                 : "memory");
    return v;
}

/* mbarrier.arrive.release.cta.shared::cluster (PTX ISA "mbarrier.arrive"): one arrival on the
 * barrier at the same offset as `bar` in block `rank` of the cluster (this block
 * included). Release at CTA scope, the instruction's default: what the arrival
 * publishes is that this warpgroup's WGMMAs have finished reading a stage, and
 * the waiter's next step is a TMA write, ordered by the barrier itself. A
 * .release.cluster arrival also waits for every earlier global store of the
 * thread to be visible cluster-wide, which can stall the WGMMA stream behind
 * it (docs/notes/log.md, run 13). */
static __device__ __forceinline__ void mbarrier_arrive_cluster(uint64_t *bar, uint32_t rank) {
    asm volatile("mbarrier.arrive.release.cta.shared::cluster.b64 _, [%0];"
                 ::"r"(mapa_shared(bar, rank)) : "memory");
}

#endif
