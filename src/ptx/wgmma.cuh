/* wgmma.cuh: warpgroup-level asynchronous MMA (PTX ISA "Asynchronous Warpgroup
 * Level Matrix Multiply-Accumulate Instructions"). The instructions themselves
 * are generated into wgmma_ops.cuh; this file holds their fences and operands. */
#ifndef HGEMM_PTX_WGMMA_CUH
#define HGEMM_PTX_WGMMA_CUH

#include "common.cuh"
#include "hw.h"
#include "wgmma_ops.cuh"

/* Shared-memory matrix descriptor ("Matrix Descriptor Format") for a K-major
 * operand stored as 128-byte swizzled rows of 64 fp16, 1024-byte aligned:
 *   bits  0-13  start address >> 4
 *   bits 16-29  leading-dimension byte offset >> 4 (unused for swizzled K-major; 1)
 *   bits 32-45  stride byte offset >> 4: 8 rows x 128 B = 1024 B between core-matrix groups
 *   bits 62-63  swizzle mode, WGMMA_DESC_SWIZZLE_128B (hw.h).
 * Stepping k by 16 elements inside the 128-byte row is +32 bytes on the start
 * address; the hardware applies the swizzle to the final address. */
static __device__ __forceinline__ uint64_t wgmma_desc_sw128(const void *tile) {
    uint64_t addr = smem_u32(tile);
    return ((addr & 0x3FFFFull) >> 4) | (1ull << 16) | ((uint64_t)(SW128_ALIGN >> 4) << 32) |
           ((uint64_t)WGMMA_DESC_SWIZZLE_128B << 62);
}

/* The descriptor of an MN-major operand (the transposed forms: A stored
 * k x m, B stored k x n), as TMA leaves it with the 128-byte swizzle: boxes
 * of 64 MN-contiguous elements by BK k-rows (128 bytes per k-row), one box
 * after another along MN, `chunk_bytes` apart. In the descriptor's terms
 * (the canonical MN-major 128B layout, PTX ISA "Shared Memory Matrix
 * Layout"): the leading-dimension offset is the step between 64-element MN
 * chunks (chunk_bytes), the stride offset the step between groups of 8
 * k-rows (8 x 128 B = 1024 B). One WGMMA's 16 k-rows are two such groups; the
 * next 16 k-rows start 2048 bytes further. */
static __device__ __forceinline__ uint64_t wgmma_desc_sw128_mn(const void *tile, uint32_t chunk_bytes) {
    uint64_t addr = smem_u32(tile);
    return ((addr & 0x3FFFFull) >> 4) | ((uint64_t)((chunk_bytes >> 4) & 0x3FFF) << 16) |
           ((uint64_t)(SW128_ALIGN >> 4) << 32) | ((uint64_t)WGMMA_DESC_SWIZZLE_128B << 62);
}

/* A descriptor `units` 16-byte units further on. The start address is the
 * low word's bits 0..13 and a step inside shared memory never carries past
 * bit 31, so the add is a 32-bit one on the low word, with the high word
 * (the layout bits, a constant) joined back as it was: the same bits as a
 * 64-bit add, without the carry into the high word that made ptxas step
 * both words in ordinary registers and move both to uniform ones before
 * every WGMMA (docs/notes/v8-log.md, run 156). */
static __device__ __forceinline__ uint64_t wgmma_desc_add(uint64_t desc, uint32_t units) {
    uint64_t out;
    asm("mov.b64 %0, {%1, %2};" : "=l"(out) : "r"((uint32_t)desc + units), "r"((uint32_t)(desc >> 32)));
    return out;
}

/* wgmma.fence.sync.aligned: order register and shared-memory accesses before the next wgmma. */
static __device__ __forceinline__ void wgmma_fence(void) {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

/* wgmma.commit_group.sync.aligned: close the group of wgmma issued so far. */
static __device__ __forceinline__ void wgmma_commit_group(void) {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

/* wgmma.wait_group.sync.aligned 0: every committed group has completed. */
static __device__ __forceinline__ void wgmma_wait_group_0(void) {
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
}

/* wgmma.wait_group.sync.aligned 1: all but the newest committed group have completed. */
static __device__ __forceinline__ void wgmma_wait_group_1(void) {
    asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
}

/* wgmma.wait_group.sync.aligned 2: all but the two newest committed groups have completed. */
static __device__ __forceinline__ void wgmma_wait_group_2(void) {
    asm volatile("wgmma.wait_group.sync.aligned 2;" ::: "memory");
}

#endif
