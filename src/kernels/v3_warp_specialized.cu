/*
 * V3: warp specialization.
 *
 * Changes from V2: loading and computing move to different warps. Warp 4 is
 * the producer: one of its lanes issues every TMA load. Warps 0-3 form the
 * consumer warpgroup and only run WGMMA. Each stage has a pair of mbarriers:
 * "full" (the producer's TMA bytes have landed) and "empty" (the consumer has
 * finished reading it), so no block-wide barrier remains in the k-loop and
 * the producer runs up to V3_STAGES k-tiles ahead on its own.
 * The stage/phase arithmetic is still written out by hand here; V4 moves it
 * behind src/pipeline.cuh.
 *
 * Measured on an H200, 8192^3, median [range] of 3 runs (2026-11-29,
 * bench/results/2026-11-29-h200-run10-bench.csv; all runs: docs/notes/measurements.md):
 *           323 TFLOP/s [316..323], 0.433x cuBLAS COMPUTE_32F [0.432..0.446],
 *           0.427x COMPUTE_16F [0.404..0.430].
 * Slower than V2 (383 in the same run): with this tile and grid both are
 * DRAM-bound, and V3 reads more (profiles of runs 7, 8, 10: 14.1..15.1 GB per
 * product against V2's 10.9..13.7); see docs/tutorial/v3.md.
 */
#include "kernel_common.cuh"
#include "mma_tile.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

enum {
    V3_BM = 64, V3_BN = 256,
    V3_STAGES = 4,
    V3_CONSUMER_THREADS = WARPGROUP_THREADS,        /* warps 0-3 */
    V3_THREADS = V3_CONSUMER_THREADS + WARP_SIZE,   /* + warp 4, the producer */
    V3_PRODUCER_WARP = V3_CONSUMER_THREADS / WARP_SIZE,
    V3_TX_BYTES = (V3_BM + V3_BN) * BK * 2,
    V3_EMPTY_ARRIVALS = 1,                          /* one per consumer warpgroup */
};

typedef struct __align__(SW128_ALIGN) v3_smem {
    __half a[V3_STAGES][V3_BM * BK]; /* (STAGES, BM, BK), 128B-swizzled */
    __half b[V3_STAGES][V3_BN * BK]; /* (STAGES, BN, BK), 128B-swizzled */
    uint64_t full[V3_STAGES];        /* producer -> consumer: the stage is loaded */
    uint64_t empty[V3_STAGES];       /* consumer -> producer: the stage may be reloaded */
} v3_smem;

static_assert(sizeof(((v3_smem *)0)->a[0]) % SW128_ALIGN == 0, "stages must stay 1024-byte aligned");
static_assert(sizeof(v3_smem) + SW128_ALIGN <= MAX_SMEM_PER_BLOCK, "shared memory budget of one block");

__global__ void __launch_bounds__(V3_THREADS)
v3_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
          gemm_args args) {
    extern __shared__ uint8_t smem_raw[];
    v3_smem *sm = (v3_smem *)smem_aligned(smem_raw);
    const int tid = threadIdx.x, warp = tid / WARP_SIZE;
    const int32_t row0 = blockIdx.y * V3_BM, col0 = blockIdx.x * V3_BN;
    const int k_tiles = args.k_tiles;

    if (tid == 0) {
        for (int s = 0; s < V3_STAGES; s++) {
            mbarrier_init(&sm->full[s], 1);
            mbarrier_init(&sm->empty[s], V3_EMPTY_ARRIVALS);
        }
        fence_mbarrier_init();
    }
    __syncthreads();

    if (warp == V3_PRODUCER_WARP) {
        if (tid % WARP_SIZE == 0) {
            for (int kt = 0; kt < k_tiles; kt++) {
                const int s = kt % V3_STAGES;
                /* Round r of stage s waits for the consumer's release of round r-1;
                 * round 0 waits on parity 1 of a fresh barrier and passes at once. */
                mbarrier_wait(&sm->empty[s], ((kt / V3_STAGES) & 1) ^ 1);
                mbarrier_arrive_expect_tx(&sm->full[s], V3_TX_BYTES);
                tma_load_2d(sm->a[s], &tmap_a, kt * BK, row0, &sm->full[s]);
                tma_load_2d(sm->b[s], &tmap_b, kt * BK, col0, &sm->full[s]);
            }
        }
        return;
    }

    float d[128] = {}; /* (64, 256) fp32 accumulator */
    for (int kt = 0; kt < k_tiles; kt++) {
        const int s = kt % V3_STAGES;
        mbarrier_wait(&sm->full[s], (kt / V3_STAGES) & 1);
        const uint64_t desc_a = wgmma_desc_sw128(sm->a[s]), desc_b = wgmma_desc_sw128(sm->b[s]);
        wgmma_fence();
        wgmma_ktile_m64n256_f32(d, desc_a, desc_b, 1);
        wgmma_commit_group();
        wgmma_wait_group_0();
        if (tid == 0) mbarrier_arrive(&sm->empty[s]); /* the warpgroup's WGMMA are done */
    }
    epilogue_m64n256_f32(args, d, row0, col0);
}

/* What this kernel can serve, decided on the CPU (api.c asks before any CUDA
 * call): the TMA limits of A and B, and one grid row per V3_BM rows of C. */
extern "C" hgemm_status hgemm__supports_v3(const hgemm_problem *p) {
    hgemm_status st = hgemm__tmap_supports(p, 0);
    if (st != HGEMM_SUCCESS) return st;
    return hgemm_ceil_div(p->m, V3_BM) > MAX_GRID_Y ? HGEMM_ERROR_NOT_SUPPORTED : HGEMM_SUCCESS;
}

extern "C" hgemm_status hgemm__launch_v3(const hgemm_problem *p, cudaStream_t stream) {
    hgemm_status st = hgemm__supports_v3(p);
    if (st != HGEMM_SUCCESS) return st;
    CUtensorMap ta, tb;
    st = tmap_ab(p, &ta, V3_BM, &tb, V3_BN);
    if (st != HGEMM_SUCCESS) return st;
    dim3 grid(hgemm_ceil_div(p->n, V3_BN), hgemm_ceil_div(p->m, V3_BM));
    gemm_args args = make_args(p);
    void *params[] = {&ta, &tb, &args};
    return hgemm__launch((const void *)v3_kernel, grid, V3_THREADS,
                         sizeof(v3_smem) + SW128_ALIGN, 1, stream, params);
}
