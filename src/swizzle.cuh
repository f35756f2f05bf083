/*
 * swizzle.cuh: addresses in shared-memory tiles written with the 128-byte
 * swizzle (src/hw.h has the pattern's numbers and where they come from).
 */
#ifndef HGEMM_SWIZZLE_CUH
#define HGEMM_SWIZZLE_CUH

#include <stdint.h>

#include "hw.h"

/* Byte offset of the 16-byte chunk `chunk` (0..7) of row `row` in a tile of
 * 128-byte rows written by TMA with the 128B swizzle: chunk ^ (row % 8). */
static __device__ __forceinline__ uint32_t sw128_offset(uint32_t row, uint32_t chunk) {
    return row * SW128_ROW_BYTES + (chunk ^ (row % SW128_ROWS)) * SW128_CHUNK_BYTES;
}

/* Round a dynamic shared-memory pointer up to the swizzle alignment; the
 * launcher allocates SW128_ALIGN extra bytes for this. */
static __device__ __forceinline__ void *smem_aligned(void *raw) {
    return (void *)(((uintptr_t)raw + SW128_ALIGN - 1) & ~(uintptr_t)(SW128_ALIGN - 1));
}

#endif
