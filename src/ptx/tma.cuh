/* tma.cuh: the tensor memory accelerator's bulk tensor copies
 * (PTX ISA "Data Movement and Conversion Instructions: cp.async.bulk.tensor") and their fences. */
#ifndef HGEMM_PTX_TMA_CUH
#define HGEMM_PTX_TMA_CUH

#include <cuda.h>
#include "common.cuh"

/* cp.async.bulk.tensor.2d global -> shared (PTX ISA "cp.async.bulk.tensor"): copy the box at
 * (col, row) of `map` into `dst`; completion is counted in bytes on `bar`.
 * Out-of-bounds parts of the box are filled with zeros and still counted. */
static __device__ __forceinline__ void tma_load_2d(void *dst, const CUtensorMap *map,
                                                   int32_t col, int32_t row, uint64_t *bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(smem_u32(dst)), "l"((uint64_t)map), "r"(col), "r"(row), "r"(smem_u32(bar))
                 : "memory");
}

/* cp.async.bulk.tensor.2d global -> shared, .multicast::cluster (PTX ISA "cp.async.bulk.tensor"):
 * as tma_load_2d, but the box lands at the same offset as `dst` in the shared
 * memory of every block of the cluster whose bit is set in `cta_mask`, and each
 * of those blocks' barriers at `bar`'s offset counts the bytes. */
static __device__ __forceinline__ void tma_load_2d_multicast(void *dst, const CUtensorMap *map,
                                                             int32_t col, int32_t row, uint64_t *bar,
                                                             uint16_t cta_mask) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
                 ::"r"(smem_u32(dst)), "l"((uint64_t)map), "r"(col), "r"(row), "r"(smem_u32(bar)),
                   "h"(cta_mask)
                 : "memory");
}

/* cp.async.bulk.tensor.2d shared -> global (PTX ISA "cp.async.bulk.tensor"): store `src` as the
 * box at (col, row); the parts outside the tensor are clipped, not written. */
static __device__ __forceinline__ void tma_store_2d(const CUtensorMap *map, int32_t col,
                                                    int32_t row, const void *src) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                 ::"l"((uint64_t)map), "r"(col), "r"(row), "r"(smem_u32(src)) : "memory");
}

/* The .3d forms of the three above, for a batch of matrices as one tensor
 * (tensor_map.c): `entry` is the third coordinate; the box is one entry's. */
static __device__ __forceinline__ void tma_load_3d(void *dst, const CUtensorMap *map, int32_t col,
                                                   int32_t row, int32_t entry, uint64_t *bar) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4}], [%5];"
                 ::"r"(smem_u32(dst)), "l"((uint64_t)map), "r"(col), "r"(row), "r"(entry), "r"(smem_u32(bar))
                 : "memory");
}

static __device__ __forceinline__ void tma_load_3d_multicast(void *dst, const CUtensorMap *map,
                                                             int32_t col, int32_t row, int32_t entry,
                                                             uint64_t *bar, uint16_t cta_mask) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 ".multicast::cluster [%0], [%1, {%2, %3, %4}], [%5], %6;"
                 ::"r"(smem_u32(dst)), "l"((uint64_t)map), "r"(col), "r"(row), "r"(entry),
                   "r"(smem_u32(bar)), "h"(cta_mask)
                 : "memory");
}

static __device__ __forceinline__ void tma_store_3d(const CUtensorMap *map, int32_t col, int32_t row,
                                                    int32_t entry, const void *src) {
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];"
                 ::"l"((uint64_t)map), "r"(col), "r"(row), "r"(entry), "r"(smem_u32(src)) : "memory");
}

/* cp.async.bulk.commit_group (PTX ISA "cp.async.bulk.commit_group"): close the group of bulk stores issued so far. */
static __device__ __forceinline__ void bulk_commit_group(void) {
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

/* tma_store_3d and bulk_commit_group in the threads where p holds, under
 * PTX_IF instead of a branch: a branch on one thread of the warp inside
 * a loop made ptxas treat the loop as divergent and build V8's WGMMA
 * descriptors per lane (docs/tutorial/v8.md, "The k-loop in uniform
 * registers"). */
static __device__ __forceinline__ void tma_store_3d_if(bool p, const CUtensorMap *map, int32_t col, int32_t row,
                                                       int32_t entry, const void *src) {
    asm volatile(PTX_IF(0, "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%1, {%2, %3, %4}], [%5]")
                 ::"r"((uint32_t)p), "l"((uint64_t)map), "r"(col), "r"(row), "r"(entry), "r"(smem_u32(src))
                 : "memory");
}
static __device__ __forceinline__ void bulk_commit_group_if(bool p) {
    asm volatile(PTX_IF(0, "cp.async.bulk.commit_group")
                 ::"r"((uint32_t)p) : "memory");
}

/* cp.async.bulk.wait_group.read 0 (PTX ISA "cp.async.bulk.wait_group"): the TMA engine has finished
 * reading shared memory for every committed group; the buffer may be reused. */
static __device__ __forceinline__ void bulk_wait_group_read_0(void) {
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

/* cp.async.bulk.wait_group.read 1 (PTX ISA "cp.async.bulk.wait_group"): the TMA engine has finished
 * reading shared memory for every committed group but the newest. */
static __device__ __forceinline__ void bulk_wait_group_read_1(void) {
    asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
}

/* cp.async.bulk.wait_group 0 (PTX ISA "cp.async.bulk.wait_group"): every committed group is complete. */
static __device__ __forceinline__ void bulk_wait_group_0(void) {
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

/* fence.proxy.async.shared::cta (PTX ISA "membar / fence"): order this thread's ordinary
 * shared-memory writes before later async-proxy (TMA, WGMMA) accesses. */
static __device__ __forceinline__ void fence_proxy_async_shared(void) {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/* cp.async.bulk global -> shared (PTX ISA "cp.async.bulk"): copy `bytes` contiguous bytes
 * (a multiple of 16; both addresses 16-byte aligned) from `src` into `dst`; completion
 * is counted in bytes on `bar`. */
static __device__ __forceinline__ void bulk_load_1d(void *dst, const void *src, uint32_t bytes, uint64_t *bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(smem_u32(dst)), "l"((uint64_t)src), "r"(bytes), "r"(smem_u32(bar)) : "memory");
}

/* fence.proxy.async.global (PTX ISA "membar / fence"): order this thread's generic-proxy view of
 * global memory (what it acquired from another block) before its later async-proxy accesses
 * (a bulk copy reading that memory). */
static __device__ __forceinline__ void fence_proxy_async_global(void) {
    asm volatile("fence.proxy.async.global;" ::: "memory");
}

/* prefetch.tensormap (PTX ISA "prefetch, prefetchu"): warm the descriptor cache for `map`. */
static __device__ __forceinline__ void prefetch_tensormap(const CUtensorMap *map) {
    asm volatile("prefetch.tensormap [%0];" ::"l"((uint64_t)map) : "memory");
}

#endif
