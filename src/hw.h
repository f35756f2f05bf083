/*
 * hw.h: the hardware numbers the kernels and launchers are built around,
 * each named once, with where it is written down. Compute capability 9.0
 * (sm_90a: H100, H200). Plain C, enum constants and two macros: included by
 * the C files (tensor_map.c, launch.c) and the CUDA C kernels alike.
 *
 * Sources, by section:
 *   [CPG] CUDA C++ Programming Guide, "Features and Technical Specifications"
 *         (table "Technical Specifications per Compute Capability") and
 *         "Compute Capability 9.0", "Shared Memory";
 *   [PTX] PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate
 *         Instructions": "Matrix Shape", "Shared Memory Matrix Layout",
 *         "Matrix Descriptor Format";
 *   [DRV] CUDA Driver API, "Tensor Map Object Management",
 *         cuTensorMapEncodeTiled (the same text is in cuda.h above it).
 */
#ifndef HGEMM_HW_H
#define HGEMM_HW_H

#include <stdint.h>

/* Threads and registers [CPG]. A warpgroup is four consecutive warps: the
 * unit wgmma.mma_async and setmaxnreg work on [PTX]. */
enum {
    WARP_SIZE = 32,
    WARPGROUP_THREADS = 4 * WARP_SIZE,
    MAX_THREADS_PER_SM = 2048,
    REGISTERS_PER_SM = 65536, /* 32-bit registers in one SM's register file */
};

/* Grid [CPG]: at most 2^31 - 1 blocks along x and 65535 along y. */
enum {
    MAX_GRID_X = INT32_MAX,
    MAX_GRID_Y = 65535,
};

/* Shared memory [CPG]: an SM holds 228 KB, one block may use up to 227 KB of
 * it, and the runtime reserves 1 KB per resident block. A kernel whose block
 * uses more than 48 KB of dynamic shared memory must opt in
 * (cudaFuncAttributeMaxDynamicSharedMemorySize). */
enum {
    SMEM_PER_SM = 228 * 1024,
    MAX_SMEM_PER_BLOCK = 227 * 1024,
    SMEM_RESERVED_PER_BLOCK = 1024,
    SMEM_DEFAULT_PER_BLOCK = 48 * 1024,
};

/* WGMMA [PTX, "Matrix Shape"]: one wgmma.mma_async with 16-bit inputs
 * (.f16, .bf16) multiplies along k = 16. */
enum { WGMMA_K = 16 };

/* The 128-byte swizzle, in which TMA writes the operand tiles and WGMMA reads
 * them [DRV: CU_TENSOR_MAP_SWIZZLE_128B, "16B chunks within 128B span";
 * PTX, "Shared Memory Matrix Layout"]: in each row of 128 bytes, 16-byte
 * chunk c of row r is stored at chunk c ^ (r % 8). The pattern repeats every
 * 8 rows x 128 B = 1024 B, so a swizzled tile starts 1024-byte aligned, and
 * a box row may not be wider than the 128-byte span.
 * The tensor map and the WGMMA descriptor name the same mode with different
 * codes: hgemm__tmap_encode's swizzle128 flag (src/tensor_map.c turns it
 * into CU_TENSOR_MAP_SWIZZLE_128B), and bits 62-63 of the descriptor
 * [PTX, "Matrix Descriptor Format": 0 none, 1 128-byte, 2 64-byte, 3 32-byte]. */
enum {
    SW128_ROW_BYTES = 128,
    SW128_CHUNK_BYTES = 16,
    SW128_ROWS = 8,                            /* rows before the pattern repeats */
    SW128_ALIGN = SW128_ROWS * SW128_ROW_BYTES, /* 1024 */
    TMAP_SWIZZLE_NONE = 0,                     /* hgemm__tmap_encode's swizzle128 */
    TMAP_SWIZZLE_128B = 1,
    WGMMA_DESC_SWIZZLE_128B = 1,               /* descriptor bits 62-63 */
};

/* TMA tensor maps [DRV]: the global address, the row stride and a box row
 * are multiples of 16 bytes; a box is at most 256 elements along each
 * dimension; a tensor at most 2^32 elements along each, with row strides
 * below 2^40 bytes. */
enum {
    TMA_ALIGN = 16,
    TMA_MAX_BOX_DIM = 256,
};
#define TMA_MAX_GLOBAL_DIM (1ull << 32) /* elements */
#define TMA_MAX_STRIDE (1ull << 40)     /* bytes; strides are below it */

#endif /* HGEMM_HW_H */
