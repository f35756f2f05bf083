/*
 * V1: WGMMA reads both operands from shared memory.
 *
 * Changes from V0: the ldmatrix + mma.sync inner loop is replaced by four
 * asynchronous m64n256k16 WGMMA per k-tile, issued by one warpgroup (128
 * threads) that owns a 64x256 output tile. The operands never pass through
 * registers: WGMMA reads the 128B-swizzled tiles TMA wrote, through shared
 * memory descriptors. Still one stage: fence, four WGMMA, commit, wait 0,
 * then the next TMA.
 *
 * Measured on an H200, 8192^3, median [range] of 3 runs (2026-11-29,
 * bench/results/2026-11-29-h200-run10-bench.csv; all runs: docs/notes/measurements.md):
 *           440 TFLOP/s [423..441], 0.591x cuBLAS COMPUTE_32F [0.584..0.600],
 *           0.561x COMPUTE_16F [0.559..0.588].
 */
#include "kernel_common.cuh"
#include "mma_tile.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

enum {
    V1_BM = 64, V1_BN = 256,           /* output tile: one m64n256 accumulator */
    V1_THREADS = WARPGROUP_THREADS,
    V1_TX_BYTES = (V1_BM + V1_BN) * BK * 2,
};

typedef struct __align__(SW128_ALIGN) v1_smem {
    __half a[V1_BM * BK]; /* (BM, BK), 128B-swizzled */
    __half b[V1_BN * BK]; /* (BN, BK), 128B-swizzled */
    uint64_t full;
} v1_smem;

static_assert(sizeof(((v1_smem *)0)->a) % SW128_ALIGN == 0, "b must stay 1024-byte aligned");

__global__ void __launch_bounds__(V1_THREADS)
v1_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
          gemm_args args) {
    extern __shared__ uint8_t smem_raw[];
    v1_smem *sm = (v1_smem *)smem_aligned(smem_raw);
    const int tid = threadIdx.x;
    const int32_t row0 = blockIdx.y * V1_BM, col0 = blockIdx.x * V1_BN;

    if (tid == 0) {
        mbarrier_init(&sm->full, 1);
        fence_mbarrier_init();
    }
    __syncthreads();

    float d[128] = {}; /* (64, 256) fp32 accumulator, WGMMA fragment layout */
    const int k_tiles = args.k_tiles;
    const uint64_t desc_a = wgmma_desc_sw128(sm->a), desc_b = wgmma_desc_sw128(sm->b);

    for (int kt = 0; kt < k_tiles; kt++) {
        if (tid == 0) {
            mbarrier_arrive_expect_tx(&sm->full, V1_TX_BYTES);
            tma_load_2d(sm->a, &tmap_a, kt * BK, row0, &sm->full);
            tma_load_2d(sm->b, &tmap_b, kt * BK, col0, &sm->full);
        }
        mbarrier_wait(&sm->full, kt & 1);
        wgmma_fence();
        wgmma_ktile_m64n256_f32(d, desc_a, desc_b, 1); /* 4 x m64n256k16, 32 bytes of k apart */
        wgmma_commit_group();
        wgmma_wait_group_0();
        __syncthreads(); /* the tiles are free for the next TMA */
    }
    epilogue_m64n256_f32(args, d, row0, col0);
}

/* What this kernel can serve, decided on the CPU (api.c asks before any CUDA
 * call): the TMA limits of A and B, and one grid row per V1_BM rows of C. */
extern "C" hgemm_status hgemm__supports_v1(const hgemm_problem *p) {
    hgemm_status st = hgemm__tmap_supports(p, 0);
    if (st != HGEMM_SUCCESS) return st;
    return hgemm_ceil_div(p->m, V1_BM) > MAX_GRID_Y ? HGEMM_ERROR_NOT_SUPPORTED : HGEMM_SUCCESS;
}

extern "C" hgemm_status hgemm__launch_v1(const hgemm_problem *p, cudaStream_t stream) {
    hgemm_status st = hgemm__supports_v1(p);
    if (st != HGEMM_SUCCESS) return st;
    CUtensorMap ta, tb;
    st = tmap_ab(p, &ta, V1_BM, &tb, V1_BN);
    if (st != HGEMM_SUCCESS) return st;
    dim3 grid(hgemm_ceil_div(p->n, V1_BN), hgemm_ceil_div(p->m, V1_BM));
    gemm_args args = make_args(p);
    void *params[] = {&ta, &tb, &args};
    return hgemm__launch((const void *)v1_kernel, grid, V1_THREADS,
                         sizeof(v1_smem) + SW128_ALIGN, 1, stream, params);
}
