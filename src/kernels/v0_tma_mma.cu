/*
 * V0: the smallest kernel fed by TMA.
 *
 * One thread loads the 128x64 A tile and the 128x64 B tile of each k-step
 * with two TMA copies onto one mbarrier; the whole block waits, moves the
 * operands from shared memory into registers with ldmatrix, and multiplies
 * with mma.sync m16n8k16 (fp32 accumulation). One stage: loading and
 * multiplying take turns, nothing overlaps.
 *
 * Measured on an H200, 8192^3, median [range] of 3 runs (2026-11-29,
 * bench/results/2026-11-29-h200-run10-bench.csv; all runs: docs/notes/measurements.md):
 *           362 TFLOP/s [360..366], 0.494x cuBLAS COMPUTE_32F [0.491..0.496],
 *           0.476x COMPUTE_16F [0.462..0.488].
 */
#include "kernel_common.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/mma.cuh"
#include "ptx/tma.cuh"

enum {
    V0_BM = 128, V0_BN = 128,          /* output tile */
    V0_WARPS_M = 2, V0_WARPS_N = 4,    /* 8 warps, each a 64x32 piece of the tile */
    V0_THREADS = V0_WARPS_M * V0_WARPS_N * WARP_SIZE,
    V0_WM = V0_BM / V0_WARPS_M,        /* 64 rows per warp */
    V0_WN = V0_BN / V0_WARPS_N,        /* 32 columns per warp */
    V0_MT = V0_WM / 16,                /* m16 tiles per warp: 4 */
    V0_NT = V0_WN / 8,                 /* n8 tiles per warp: 4 */
    V0_TX_BYTES = (V0_BM + V0_BN) * BK * 2,
};

typedef struct __align__(SW128_ALIGN) v0_smem {
    __half a[V0_BM * BK]; /* (BM, BK), rows of 128 B, 128B-swizzled by TMA */
    __half b[V0_BN * BK]; /* (BN, BK), same */
    uint64_t full;        /* the tiles of this k-step have landed */
} v0_smem;

static_assert(sizeof(((v0_smem *)0)->a) % SW128_ALIGN == 0, "b must stay 1024-byte aligned");
static_assert(V0_WN % 16 == 0, "B fragments are loaded 16 columns at a time");

__global__ void __launch_bounds__(V0_THREADS)
v0_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
          gemm_args args) {
    extern __shared__ uint8_t smem_raw[];
    v0_smem *sm = (v0_smem *)smem_aligned(smem_raw);
    const int tid = threadIdx.x, lane = tid % WARP_SIZE, warp = tid / WARP_SIZE;
    const int wm = warp / V0_WARPS_N, wn = warp % V0_WARPS_N;
    const int32_t row0 = blockIdx.y * V0_BM, col0 = blockIdx.x * V0_BN;

    if (tid == 0) {
        mbarrier_init(&sm->full, 1);
        fence_mbarrier_init();
    }
    __syncthreads();

    float acc[V0_MT][V0_NT][4] = {}; /* (MT, NT) mma tiles of 16x8, fp32 */
    const uint32_t a_base = smem_u32(sm->a), b_base = smem_u32(sm->b);
    const int k_tiles = args.k_tiles;

    for (int kt = 0; kt < k_tiles; kt++) {
        if (tid == 0) {
            mbarrier_arrive_expect_tx(&sm->full, V0_TX_BYTES);
            tma_load_2d(sm->a, &tmap_a, kt * BK, row0, &sm->full);
            tma_load_2d(sm->b, &tmap_b, kt * BK, col0, &sm->full);
        }
        mbarrier_wait(&sm->full, kt & 1);

#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) {
            uint32_t af[V0_MT][4], bf[V0_NT][2];
            /* ldmatrix.x4 for A: matrices (rows 0-7 | 8-15) x (k 0-7 | 8-15). */
#pragma unroll
            for (int mi = 0; mi < V0_MT; mi++) {
                int q = lane / 8;
                uint32_t row = wm * V0_WM + mi * 16 + lane % 8 + 8 * (q % 2);
                ldmatrix_x4(af[mi], a_base + sw128_offset(row, 2 * kk + q / 2));
            }
            /* ldmatrix.x4 for B: (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15). */
#pragma unroll
            for (int np = 0; np < V0_NT / 2; np++) {
                int q = lane / 8;
                uint32_t row = wn * V0_WN + np * 16 + lane % 8 + 8 * (q / 2);
                uint32_t r[4];
                ldmatrix_x4(r, b_base + sw128_offset(row, 2 * kk + q % 2));
                bf[2 * np][0] = r[0];
                bf[2 * np][1] = r[1];
                bf[2 * np + 1][0] = r[2];
                bf[2 * np + 1][1] = r[3];
            }
#pragma unroll
            for (int mi = 0; mi < V0_MT; mi++)
#pragma unroll
                for (int ni = 0; ni < V0_NT; ni++) mma_m16n8k16_f32(acc[mi][ni], af[mi], bf[ni]);
        }
        __syncthreads(); /* every warp is done with the tiles before TMA overwrites them */
    }

    /* mma.sync C fragment: c0,c1 at (lane/4, 2*(lane%4) + 0,1), c2,c3 eight rows below. */
#pragma unroll
    for (int mi = 0; mi < V0_MT; mi++)
#pragma unroll
        for (int ni = 0; ni < V0_NT; ni++) {
            int32_t row = row0 + wm * V0_WM + mi * 16 + lane / 4;
            int32_t col = col0 + wn * V0_WN + ni * 8 + 2 * (lane % 4);
            store_pair(args, row, col, acc[mi][ni][0], acc[mi][ni][1]);
            store_pair(args, row + 8, col, acc[mi][ni][2], acc[mi][ni][3]);
        }
}

/* What this kernel can serve, decided on the CPU (api.c asks before any CUDA
 * call): the TMA limits of A and B, and one grid row per V0_BM rows of C. */
extern "C" hgemm_status hgemm__supports_v0(const hgemm_problem *p) {
    hgemm_status st = hgemm__tmap_supports(p, 0);
    if (st != HGEMM_SUCCESS) return st;
    return hgemm_ceil_div(p->m, V0_BM) > MAX_GRID_Y ? HGEMM_ERROR_NOT_SUPPORTED : HGEMM_SUCCESS;
}

extern "C" hgemm_status hgemm__launch_v0(const hgemm_problem *p, cudaStream_t stream) {
    hgemm_status st = hgemm__supports_v0(p);
    if (st != HGEMM_SUCCESS) return st;
    CUtensorMap ta, tb;
    st = tmap_ab(p, &ta, V0_BM, &tb, V0_BN);
    if (st != HGEMM_SUCCESS) return st;
    dim3 grid(hgemm_ceil_div(p->n, V0_BN), hgemm_ceil_div(p->m, V0_BM));
    gemm_args args = make_args(p);
    void *params[] = {&ta, &tb, &args};
    return hgemm__launch((const void *)v0_kernel, grid, V0_THREADS,
                         sizeof(v0_smem) + SW128_ALIGN, 1, stream, params);
}
