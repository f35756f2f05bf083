/* mma.cuh: the register-path tensor-core MMA of V0 and its shared-memory loads. */
#ifndef HGEMM_PTX_MMA_CUH
#define HGEMM_PTX_MMA_CUH

#include "common.cuh"

/* ldmatrix.sync.aligned.m8n8.x4.shared.b16 (PTX ISA "ldmatrix"): four 8x8
 * b16 matrices; lane i supplies the address of row i%8 of matrix i/8. */
static __device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

/* stmatrix.sync.aligned.m8n8.x4.shared.b16 (PTX ISA "stmatrix"): the inverse
 * of ldmatrix_x4: four 8x8 b16 matrices, register j of each thread holding
 * two adjacent elements of matrix j (row lane/4, columns 2*(lane%4) + {0,1},
 * the layout of an MMA/WGMMA accumulator fragment); lane i supplies the
 * address of row i%8 of matrix i/8 (16 contiguous bytes). */
static __device__ __forceinline__ void stmatrix_x4(uint32_t addr, const uint32_t r[4]) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
                 ::"r"(addr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
}

/* stmatrix_x4 with .trans: each 8x8 matrix lands transposed (fragment
 * element (r, c) at row c, column r); lane i supplies the address of row
 * i%8 of matrix i/8 as stored, that is of the fragment's column i%8. */
static __device__ __forceinline__ void stmatrix_x4_trans(uint32_t addr, const uint32_t r[4]) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};"
                 ::"r"(addr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
}

/* mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 (PTX ISA "mma"):
 * d (16x8, fp32) += a (16x16, row) * b (16x8, col). */
static __device__ __forceinline__ void mma_m16n8k16_f32(float d[4], const uint32_t a[4],
                                                        const uint32_t b[2]) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

#endif
