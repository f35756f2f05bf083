/*
 * V2: a ring of shared-memory stages.
 *
 * Changes from V1: the single buffer becomes a ring of V2_STAGES stages with
 * one "full" mbarrier each. Thread 0 starts the TMA loads of the first
 * stages before the loop, and right after a stage has been consumed it
 * reloads it with the k-tile V2_STAGES steps ahead, so TMA works on later
 * k-tiles while the warpgroup runs WGMMA on the current one. The warpgroup
 * still waits for its own WGMMA (wait 0) and a block barrier frees the stage.
 *
 * Measured on an H200, 8192^3, median [range] of 3 runs (2026-11-29,
 * bench/results/2026-11-29-h200-run10-bench.csv; all runs: docs/notes/measurements.md):
 *           383 TFLOP/s [379..394], 0.523x cuBLAS COMPUTE_32F [0.522..0.527],
 *           0.501x COMPUTE_16F [0.488..0.524].
 */
#include "kernel_common.cuh"
#include "mma_tile.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

enum {
    V2_BM = 64, V2_BN = 256,
    V2_STAGES = 4,
    V2_THREADS = WARPGROUP_THREADS,
    V2_TX_BYTES = (V2_BM + V2_BN) * BK * 2,
};

typedef struct __align__(SW128_ALIGN) v2_smem {
    __half a[V2_STAGES][V2_BM * BK]; /* (STAGES, BM, BK), 128B-swizzled */
    __half b[V2_STAGES][V2_BN * BK]; /* (STAGES, BN, BK), 128B-swizzled */
    uint64_t full[V2_STAGES];        /* stage s holds its k-tile */
} v2_smem;

static_assert(sizeof(((v2_smem *)0)->a[0]) % SW128_ALIGN == 0, "stages must stay 1024-byte aligned");
static_assert(sizeof(v2_smem) + SW128_ALIGN <= MAX_SMEM_PER_BLOCK, "shared memory budget of one block");

static __device__ __forceinline__ void v2_load(v2_smem *sm, const CUtensorMap *ta,
                                               const CUtensorMap *tb, int s, int kt,
                                               int32_t row0, int32_t col0) {
    mbarrier_arrive_expect_tx(&sm->full[s], V2_TX_BYTES);
    tma_load_2d(sm->a[s], ta, kt * BK, row0, &sm->full[s]);
    tma_load_2d(sm->b[s], tb, kt * BK, col0, &sm->full[s]);
}

__global__ void __launch_bounds__(V2_THREADS)
v2_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
          gemm_args args) {
    extern __shared__ uint8_t smem_raw[];
    v2_smem *sm = (v2_smem *)smem_aligned(smem_raw);
    const int tid = threadIdx.x;
    const int32_t row0 = blockIdx.y * V2_BM, col0 = blockIdx.x * V2_BN;
    const int k_tiles = args.k_tiles;

    if (tid == 0) {
        for (int s = 0; s < V2_STAGES; s++) mbarrier_init(&sm->full[s], 1);
        fence_mbarrier_init();
        for (int s = 0; s < V2_STAGES && s < k_tiles; s++)
            v2_load(sm, &tmap_a, &tmap_b, s, s, row0, col0);
    }
    __syncthreads();

    float d[128] = {}; /* (64, 256) fp32 accumulator */
    for (int kt = 0; kt < k_tiles; kt++) {
        const int s = kt % V2_STAGES;
        mbarrier_wait(&sm->full[s], (kt / V2_STAGES) & 1);
        const uint64_t desc_a = wgmma_desc_sw128(sm->a[s]), desc_b = wgmma_desc_sw128(sm->b[s]);
        wgmma_fence();
        wgmma_ktile_m64n256_f32(d, desc_a, desc_b, 1);
        wgmma_commit_group();
        wgmma_wait_group_0();
        __syncthreads(); /* stage s is consumed by all four warps */
        if (tid == 0 && kt + V2_STAGES < k_tiles)
            v2_load(sm, &tmap_a, &tmap_b, s, kt + V2_STAGES, row0, col0);
    }
    epilogue_m64n256_f32(args, d, row0, col0);
}

/* What this kernel can serve, decided on the CPU (api.c asks before any CUDA
 * call): the TMA limits of A and B, and one grid row per V2_BM rows of C. */
extern "C" hgemm_status hgemm__supports_v2(const hgemm_problem *p) {
    hgemm_status st = hgemm__tmap_supports(p, 0);
    if (st != HGEMM_SUCCESS) return st;
    return hgemm_ceil_div(p->m, V2_BM) > MAX_GRID_Y ? HGEMM_ERROR_NOT_SUPPORTED : HGEMM_SUCCESS;
}

extern "C" hgemm_status hgemm__launch_v2(const hgemm_problem *p, cudaStream_t stream) {
    hgemm_status st = hgemm__supports_v2(p);
    if (st != HGEMM_SUCCESS) return st;
    CUtensorMap ta, tb;
    st = tmap_ab(p, &ta, V2_BM, &tb, V2_BN);
    if (st != HGEMM_SUCCESS) return st;
    dim3 grid(hgemm_ceil_div(p->n, V2_BN), hgemm_ceil_div(p->m, V2_BM));
    gemm_args args = make_args(p);
    void *params[] = {&ta, &tb, &args};
    return hgemm__launch((const void *)v2_kernel, grid, V2_THREADS,
                         sizeof(v2_smem) + SW128_ALIGN, 1, stream, params);
}
