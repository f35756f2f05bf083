/* common.cuh: addresses and the hang guard that every PTX wrapper shares. */
#ifndef HGEMM_PTX_COMMON_CUH
#define HGEMM_PTX_COMMON_CUH

#include <stdint.h>
#include <stdio.h>

/* A spin-wait that has not finished after this many nanoseconds traps (see
 * hang_report), so a broken pipeline fails the launch instead of
 * hanging the GPU. Generous, because compute-sanitizer slows kernels a lot. */
#ifndef HGEMM_HANG_NS
#define HGEMM_HANG_NS 20000000000ull
#endif

/* cvta.to.shared: generic pointer -> 32-bit shared address. */
static __device__ __forceinline__ uint32_t smem_u32(const void *p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* v, read from lane 0 of the warp (shfl.sync.idx, PTX ISA "shfl.sync"):
 * for a value every lane already holds, the same value, but one that ptxas
 * knows to be warp-uniform. A branch on it is uniform, and the loops inside
 * such a branch keep their counters and the addresses built from them in
 * uniform registers, where a WGMMA reads its descriptors
 * (docs/notes/v8-log.md, run 158). */
static __device__ __forceinline__ uint32_t warp_uniform(uint32_t v) {
    return __shfl_sync(0xffffffffu, v, 0);
}

/* An inline-asm body that runs `insn` only where operand %N (a uint32_t,
 * nonzero: yes) holds, under a guard predicate (PTX ISA "Predicated
 * execution") instead of a branch: for code that must stay free of
 * thread-dependent branches (warp_uniform says why). */
#define PTX_IF(N, insn) "{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %" #N ", 0;\n\t@q " insn ";\n\t}"

/* A global load or store of 64, 32 or 16 bits that happens only where `p`
 * holds (PTX ISA "ld", "st", under PTX_IF): a masked access without a
 * branch. A load that does not happen leaves 0. */
static __device__ __forceinline__ uint32_t ld_global_b32_if(bool p, const void *ptr) {
    uint32_t v = 0;
    asm volatile(PTX_IF(2, "ld.global.b32 %0, [%1]")
                 : "+r"(v) : "l"(ptr), "r"((uint32_t)p) : "memory");
    return v;
}
static __device__ __forceinline__ uint64_t ld_global_b64_if(bool p, const void *ptr) {
    uint64_t v = 0;
    asm volatile(PTX_IF(2, "ld.global.b64 %0, [%1]")
                 : "+l"(v) : "l"(ptr), "r"((uint32_t)p) : "memory");
    return v;
}
static __device__ __forceinline__ uint16_t ld_global_b16_if(bool p, const void *ptr) {
    uint16_t v = 0;
    asm volatile(PTX_IF(2, "ld.global.b16 %0, [%1]")
                 : "+h"(v) : "l"(ptr), "r"((uint32_t)p) : "memory");
    return v;
}
static __device__ __forceinline__ void st_global_b32_if(bool p, void *ptr, uint32_t v) {
    asm volatile(PTX_IF(0, "st.global.b32 [%1], %2")
                 :: "r"((uint32_t)p), "l"(ptr), "r"(v) : "memory");
}
static __device__ __forceinline__ void st_global_b64_if(bool p, void *ptr, uint64_t v) {
    asm volatile(PTX_IF(0, "st.global.b64 [%1], %2")
                 :: "r"((uint32_t)p), "l"(ptr), "l"(v) : "memory");
}
static __device__ __forceinline__ void st_global_b16_if(bool p, void *ptr, uint16_t v) {
    asm volatile(PTX_IF(0, "st.global.b16 [%1], %2")
                 :: "r"((uint32_t)p), "l"(ptr), "h"(v) : "memory");
}

/* st.shared.b32 (PTX ISA "st"): one 32-bit store to a shared-memory address. */
static __device__ __forceinline__ void st_shared_u32(uint32_t addr, uint32_t value) {
    asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(value) : "memory");
}

/* st.shared.v4.b32 of zeros where p holds (PTX ISA "st", under PTX_IF): 16
 * bytes cleared at a shared-memory address without a branch. */
static __device__ __forceinline__ void st_shared_v4_zero_if(bool p, uint32_t addr) {
    asm volatile(PTX_IF(0, "st.shared.v4.b32 [%1], {%2, %2, %2, %2}")
                 :: "r"((uint32_t)p), "r"(addr), "r"(0u) : "memory");
}

/* ld.shared.b32 (PTX ISA "ld"): one 32-bit load from a shared-memory address. */
static __device__ __forceinline__ uint32_t ld_shared_u32(uint32_t addr) {
    uint32_t value;
    asm volatile("ld.shared.b32 %0, [%1];" : "=r"(value) : "r"(addr) : "memory");
    return value;
}

/* ld.shared.v4.f32: 16 bytes from a 16-byte aligned shared-memory address. */
static __device__ __forceinline__ float4 ld_shared_f32x4(uint32_t addr) {
    float4 v;
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(addr));
    return v;
}

/* bar.sync id, count (PTX ISA "bar, barrier"): wait until `count` threads
 * (a multiple of 32) have arrived at named barrier `id` (1..15; 0 is
 * __syncthreads'). Lets one warpgroup synchronize without the others. */
static __device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t count) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

/* griddepcontrol (PTX ISA, "Parallel Synchronization and Communication
 * Instructions: griddepcontrol"; sm_90): programmatic dependent launch.
 * wait: this thread waits until every grid this one depends on has
 * completed and its memory operations are visible to this grid. Without the
 * launch attribute there is nothing to wait for and it returns at once.
 * launch_dependents: the grids that depend on this one may be scheduled
 * once every block of it has executed this or exited; a hint, no ordering. */
static __device__ __forceinline__ void griddep_wait(void) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
}
static __device__ __forceinline__ void griddep_launch_dependents(void) {
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

/* mov %globaltimer (PTX ISA "Special Registers: %globaltimer"): nanoseconds, coarse but monotonic. */
static __device__ __forceinline__ uint64_t globaltimer_ns(void) {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* mov %smid (PTX ISA "Special Registers: %smid"): the SM this thread runs on
 * (a probe's record; it may change under preemption, never within a block here). */
static __device__ __forceinline__ uint32_t sm_id(void) {
    uint32_t id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}

/* Called by a spin-wait that ran past HGEMM_HANG_NS: trap, so the launch
 * fails (cudaErrorLaunchFailure) instead of hanging; compute-sanitizer and
 * cuda-gdb then name the kernel, block, thread and PC. The trap is inline on
 * purpose: any function call (printf included) inside a kernel makes ptxas
 * serialize every wgmma.mma_async in it (info C7510), which costs far more
 * than the report is worth. Build with -DHGEMM_HANG_PRINTF to also print the
 * barrier and parity, accepting that serialization while debugging.
 * A spin-wait calls it after its loop, not inside it: a trap inside the
 * loop capped the registers ptxas gives a consumer warpgroup after
 * setmaxnreg.inc (V8's 128x320 tile, 160 accumulators a thread, spilled
 * 612 bytes and serialized its WGMMAs (C7512); with the trap after the loop,
 * none). */
static __device__ __forceinline__ void hang_report(const char *what, uint32_t addr, uint32_t parity) {
#ifdef HGEMM_HANG_PRINTF
    printf("hgemm: %s stuck for %llu ns: block %u thread %u smem 0x%x parity %u\n", what,
           (unsigned long long)HGEMM_HANG_NS, blockIdx.x + blockIdx.y * gridDim.x,
           threadIdx.x, addr, parity);
#else
    (void)what;
    (void)addr;
    (void)parity;
#endif
    __trap();
}

/* Spin until ready() holds; past HGEMM_HANG_NS, report() (a hang_report)
 * once the loop is left, never from inside it (see hang_report). One test
 * before the clock is read, so a wait already satisfied costs only that.
 * Every spin-wait of the library goes through here (mbarrier_wait,
 * flag_wait_gpu, count_wait_gpu). */
template <typename Ready, typename Report>
static __device__ __forceinline__ void spin_until(Ready ready, Report report) {
    if (ready()) return;
    const uint64_t start = globaltimer_ns();
    bool stuck = false;
    while (!ready()) {
        if (globaltimer_ns() - start > HGEMM_HANG_NS) {
            stuck = true;
            break;
        }
    }
    if (stuck) report();
}

#endif
