/* flag.cuh: 32-bit flags in global memory that one block raises and another
 * waits for (PTX ISA "Memory Consistency Model": release and acquire
 * operations at GPU scope; "ld", "st"). */
#ifndef HGEMM_PTX_FLAG_CUH
#define HGEMM_PTX_FLAG_CUH

#include "common.cuh"

/* ld.acquire.gpu.global.u32: read a flag; what the raising thread wrote before
 * its release is visible to this thread after it. */
static __device__ __forceinline__ uint32_t ld_acquire_gpu_u32(const uint32_t *p) {
    uint32_t v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

/* st.release.gpu.global.u32: raise a flag after everything this thread (and,
 * through a barrier before it, its block) wrote. */
static __device__ __forceinline__ void st_release_gpu_u32(uint32_t *p, uint32_t v) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/* st_release_gpu_u32 by the threads where `p` holds, without a branch:
 * fence.acq_rel.gpu in every thread that calls it, then the store, relaxed,
 * under the predicate (a fence followed by a strong store is a release
 * pattern, PTX ISA "Memory Consistency Model"). For a kernel that keeps its
 * loop counters in uniform registers: a release store under a branch that
 * ptxas cannot prove warp-uniform makes it give them up (V8, run 158). */
static __device__ __forceinline__ void st_release_gpu_u32_if(bool p, uint32_t *ptr, uint32_t v) {
    asm volatile("fence.acq_rel.gpu;\n\t" PTX_IF(0, "st.relaxed.gpu.global.u32 [%1], %2")
                 ::"r"((uint32_t)p), "l"(ptr), "r"(v) : "memory");
}

/* st.relaxed.gpu.global.u32: a store with no ordering (lowering a flag). */
static __device__ __forceinline__ void st_relaxed_gpu_u32(uint32_t *p, uint32_t v) {
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/* Wait until the flag is nonzero; traps after HGEMM_HANG_NS like mbarrier_wait. */
static __device__ __forceinline__ void flag_wait_gpu(const uint32_t *p) {
    spin_until([&] { return ld_acquire_gpu_u32(p) != 0; }, [&] { hang_report("flag wait", 0, 0); });
}

/* atom.add.release.gpu.global.u32: count this thread in on a counter after
 * everything it (and, through a barrier before it, its block) wrote. */
static __device__ __forceinline__ uint32_t atom_add_release_gpu_u32(uint32_t *p, uint32_t v) {
    uint32_t old;
    asm volatile("atom.add.release.gpu.global.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
    return old;
}

/* atom.add.relaxed.gpu.global.u32: a count with no ordering. */
static __device__ __forceinline__ uint32_t atom_add_relaxed_gpu_u32(uint32_t *p, uint32_t v) {
    uint32_t old;
    asm volatile("atom.add.relaxed.gpu.global.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
    return old;
}

/* Wait until the counter reaches n (acquire); traps after HGEMM_HANG_NS. */
static __device__ __forceinline__ void count_wait_gpu(const uint32_t *p, uint32_t n) {
    spin_until([&] { return ld_acquire_gpu_u32(p) >= n; }, [&] { hang_report("count wait", n, 0); });
}
#endif
