/* mbarrier.cuh: shared-memory barriers with arrival and transaction counts
 * (PTX ISA "Parallel Synchronization and Communication: mbarrier"). */
#ifndef HGEMM_PTX_MBARRIER_CUH
#define HGEMM_PTX_MBARRIER_CUH

#include "common.cuh"

/* mbarrier.init (PTX ISA "mbarrier.init"): expect `count` arrivals per phase. */
static __device__ __forceinline__ void mbarrier_init(uint64_t *bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count)
                 : "memory");
}

/* fence.mbarrier_init (PTX ISA "membar / fence"): make initialised barriers visible to the async proxy (TMA). */
static __device__ __forceinline__ void fence_mbarrier_init(void) {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/* mbarrier.arrive (PTX ISA "mbarrier.arrive"): one arrival. */
static __device__ __forceinline__ void mbarrier_arrive(uint64_t *bar) {
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(smem_u32(bar))
                 : "memory");
}

/* mbarrier.arrive.expect_tx (PTX ISA "mbarrier.arrive.expect_tx"): one arrival, and `bytes` more
 * transaction bytes that asynchronous copies must deliver before the phase ends. */
static __device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t *bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;"
                 ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}

/* mbarrier.try_wait.parity (PTX ISA "mbarrier.try_wait.parity"): has the phase of this parity completed? */
static __device__ __forceinline__ uint32_t mbarrier_try_wait_parity(uint64_t *bar, uint32_t parity) {
    uint32_t done;
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done) : "r"(smem_u32(bar)), "r"(parity) : "memory");
    return done;
}

/* Wait until the phase with this parity completes. A fresh barrier is in
 * phase 0, so waiting for parity 1 returns at once: that is how a producer
 * passes its first round of "empty" waits. Traps after HGEMM_HANG_NS. */
static __device__ __forceinline__ void mbarrier_wait(uint64_t *bar, uint32_t parity) {
    spin_until([&] { return mbarrier_try_wait_parity(bar, parity) != 0; },
               [&] { hang_report("mbarrier wait", smem_u32(bar), parity); });
}

#endif
