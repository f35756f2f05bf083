/*
 * V9: skinny products (m or n <= 64: the GEMMs of LLM decode).
 *
 * When one side of C is a few rows (m = 1..64 tokens against a 4096-wide
 * weight), a 128x256 tile is mostly padding, there are few tiles, and the
 * product is bound by reading the weight matrix from HBM, not by the tensor
 * cores. V9 changes what a block computes:
 *   - operand swap: the long operand (the weight) goes on WGMMA's M side in
 *     64-row tiles and the short one on its N side, 16, 32 or 64 wide (the
 *     smallest that holds it; WGMMA's N steps by 8), so a block computes
 *     (C^T) tile = W tile * x^T and stores it transposed. With n <= 64 the
 *     same kernel runs unswapped (A on M, B on N);
 *   - split-K over a thread-block cluster: the S blocks of a cluster (S <= 8)
 *     take S slices of the k-loop of the same output tile, so a 4096-wide
 *     weight (64 tiles) keeps every SM pulling from HBM. The partial sums meet
 *     in distributed shared memory: each block leaves its accumulator in its
 *     own shared memory, and after a cluster barrier block r adds, for its
 *     share of the tile's elements, the S partials in rank order 0..S-1 and
 *     stores the result. The order never depends on timing, so C is bitwise
 *     the same on every run; there is no workspace, no atomic and no second
 *     kernel, and CUDA graph capture works;
 *   - small blocks: one consumer warpgroup and one loader warp, 4 stages of
 *     (8 KB + N x 128 B), so 3 to 5 blocks share an SM and keep enough loads
 *     in flight to cover HBM latency (the partial sums reuse the stages);
 *   - the deep ring (since run 29): where the tiles are at most one per SM,
 *     one block per SM instead, with 6 stages of two k-tiles (120..192 KB),
 *     so the split falls to about 132 / tiles and each block streams one long
 *     k slice. The small blocks stay where the tiles outnumber the SMs;
 *   - a swapped tile leaves shared memory in rows of C of 16 bytes, not
 *     element by element (since run 68: 64 x 6144 x 4096 0.0193 -> 0.0185
 *     ms), and where nothing splits each tile's loader starts its k-loop
 *     at its own step (run 67: 1..3%);
 *   - programmatic dependent launch (since run 80): every V9 launch carries
 *     the attribute; each block waits for the previous kernel once its
 *     barriers are set up and lets the next one be scheduled once its loader
 *     has issued its last load, so a call's launch and ramp overlap the end
 *     of the one before (1 x 4096 x 4096: 13.0 -> 11.5 us a call). A
 *     trigger right after the wait (v9-pdl-start) let the next call's blocks
 *     take the SMs early and unevenly: 1 x 28672 x 4096 73.3 us against 59.8
 *     without the attribute (v9-nopdl).
 * A short side longer than 64 is tiled too (64-wide tiles), so V9 serves any
 * shape; it is fast only where one side is short. AUTO picks it from the
 * measured table in auto.c.
 *
 * Forms (hgemm_gemm): fp16 and bf16 (the element type T is a template
 * parameter), and the long operand stored either way: K-major, or MN-major
 * (the weight of `x @ W` stored k x n), loaded as one 64 x BK box that
 * WGMMA reads through its transpose bit, as V8 does. The short operand must
 * be K-major (its MN-major boxes would be 16 or 32 elements wide, another
 * swizzle): those forms are V8's. A batch runs one launch per entry.
 *
 * Measured on an H200 (2026-12-02), as AUTO runs it at every m <= 64 of
 * the suite, operands rotated so that the weight comes from HBM, median
 * [range] of 3 runs (bench/results/2026-12-02-h200-run84-suite.csv):
 *   1 x 28672 x 4096: 4070.1 GB/s [4036.5..4095.7], 1.005x cuBLAS COMPUTE_32F [0.996..1.011];
 *   1 x 4096 x 4096:  1.540x cuBLAS COMPUTE_32F [1.458..1.544];
 *   64 x 4096 x 4096: 1.014x [1.012..1.049]; the lowest of the 23 decode
 *                     shapes, 64 x 6144 x 4096, 0.959x [0.955..0.970].
 * The first build, median [range] of 2 runs (2026-11-30,
 * bench/results/2026-11-30-h200-run23-suite.csv; all runs: docs/notes/v9-log.md):
 *   1 x 28672 x 4096: 3895 GB/s [3894..3896], 81% of the 4.8 TB/s peak,
 *                     1.052x cuBLAS COMPUTE_32F [1.050..1.054];
 *   1 x 4096 x 4096:  1.555x cuBLAS COMPUTE_32F [1.243..1.866] (32 MiB: the launch weighs);
 *   64 x 4096 x 4096: 0.536x [0.521..0.552], the weakest decode shape.
 * That run built commit 734129c, whose WGMMAs ptxas serialized (C7520); the
 * current code, in one run (run 25): 0.900x over the 23 decode shapes,
 * 0.762x at m = 64.
 */
#include <cuda_bf16.h>

#include "kernel_common.cuh"
#include "elem.cuh"
#include "mma_tile.cuh"
#include "pipeline.cuh"
#include "ptx/cluster.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

enum {
    V9_BM = 64,                                      /* long-side rows per block: WGMMA's M */
    V9_STAGES = 4,
    V9_THREADS = WARPGROUP_THREADS + WARP_SIZE,      /* consumer warpgroup + the loader warp */
    V9_PRODUCER_WARP = WARPGROUP_THREADS / WARP_SIZE,
    V9_MAX_SPLIT = 8,                                /* blocks of a portable cluster */
    V9_MIN_SPLIT_KTILES = 2,                         /* k-tiles each slice gets at least */
    V9_MAX_BN = 64,                                  /* the short tile up to 64 rows of C */
    V9_DEEP_STAGES = 6,                              /* the deep ring: 6 stages of two k-tiles */
    V9_WIDE_BN = 128,                                /* the short tile of 65..384 rows (two or three
                                                        tiles past 128) against a wide weight */
    V9_WIDE_LONG = 4096,                             /* the long side from which it is taken */
    V9_WIDE_MAX_SHORT = 384,
    V9_WIDE_MIN_K = 2049,                            /* and k from which (below it, AUTO's small
                                                        products keep their 64-wide tiles) */
    V9_WIDE_DEEP_STAGES = 3,                         /* its deep ring: 3 stages of two k-tiles */
};

/* Shared memory of a block with a short side of BN (16, 32, 64 or 128), STAGES
 * stages of KB k-tiles each (the table's V9: KB = 1, 4 stages). */
template <int BN, int KB, int STAGES>
struct __align__(1024) v9_smem {
    __half x[STAGES][KB][V9_BM * BK]; /* long operand: 64 x BK per k-tile, 128B-swizzled */
    __half y[STAGES][KB][BN * BK];    /* short operand: BN x BK per k-tile, 128B-swizzled */
    uint64_t full[STAGES];
    uint64_t empty[STAGES];
};

/* After the k-loop, a split block leaves its accumulator in the x stages,
 * which nothing reads or writes any more (every load was waited for, every
 * WGMMA has completed): pair p of thread t at partial[p][t]. */
typedef float2 v9_partial_row[WARPGROUP_THREADS];
static_assert(sizeof(((v9_smem<64, 1, 2> *)0)->x) >= 64 / 4 * sizeof(v9_partial_row),
              "the partial sums fit in the x stages");

/* The scalars of one launch: C's sizes (as gemm_args), which operand is long,
 * and how the grid is cut. */
typedef struct v9_args {
    gemm_args g;
    int32_t swap;        /* 1: long operand is B, C is stored transposed (m short) */
    int32_t short_tiles; /* tiles of BN along the short side */
    int32_t split;       /* blocks per cluster = k slices of a tile */
    int32_t rotate;      /* 1: each tile starts its slice's k-loop at its own step (run 67) */
    int32_t staged;      /* 1: a swapped tile leaves through shared memory in 16-byte rows (run 68) */
    int32_t trigger;     /* programmatic dependent launch: HGEMM_TRIGGER_* */
} v9_args;

/* One element of C: alpha * v + beta * C[row][col] (C read only when beta != 0). */
template <typename T>
static __device__ __forceinline__ void v9_store_one(const gemm_args &a, int32_t row, int32_t col,
                                                    float v) {
    if (row >= a.m || col >= a.n) return;
    T *c = (T *)a.C + (int64_t)row * a.ldc + col;
    v *= a.alpha;
    if (a.beta != 0.0f) v += a.beta * elem<T>::to_float(*c);
    *c = elem<T>::from_float(v);
}

/* Store the pair of accumulator elements (long index r, short indices s and s+1). */
template <typename T>
static __device__ __forceinline__ void v9_store(const v9_args &a, int32_t r, int32_t s, float2 v) {
    if (a.swap) {
        v9_store_one<T>(a.g, s, r, v.x);
        v9_store_one<T>(a.g, s + 1, r, v.y);
    } else {
        store_pair<T>(a.g, r, s, v.x, v.y);
    }
}

/* The staged epilogue of a swapped tile (run 68). Pair p of a warp's
 * accumulator fragment is an 8 x 8 block of C^T: long rows 16 w + 8 (p % 2)
 * + 0..7 (w the warp), short columns 8 (p / 2) + 0..7. Stored straight, it
 * is 64 two-byte stores a thread at m = 64, each writing four pieces of 16
 * bytes into four rows of C. Instead each thread leaves its pairs in a
 * float tile in the y stages (short index major, V9_STG_LD floats a row:
 * the four padding floats put a warp's 32 writes on 32 banks), and the warp
 * then stores every block as 8 rows of C of 16 bytes each, one lane a row:
 * 4 stores a thread at m = 64. The arithmetic is v9_store_one's, so C is
 * bitwise the same. Only the warp's own blocks go through the tile, so a
 * __syncwarp orders the writes before the reads. */
enum { V9_STG_LD = V9_BM + 4 };

static __device__ __forceinline__ void v9_stage(float *stg, int p, int tid, float2 v) {
    const int lane = tid % WARP_SIZE;
    const int r = 16 * (tid / WARP_SIZE) + 8 * (p % 2) + lane / 4, s = 8 * (p / 2) + 2 * (lane % 4);
    stg[s * V9_STG_LD + r] = v.x;
    stg[(s + 1) * V9_STG_LD + r] = v.y;
}

/* Row i (0..7) of block p of warp w: C[short0 + 8 (p / 2) + i][long0 + 16 w + 8 (p % 2) + 0..7]. */
template <typename T>
static __device__ __forceinline__ void v9_store_row8(const gemm_args &a, const float *stg, int p, int w, int i,
                                                     int32_t long0, int32_t short0) {
    const int r = 16 * w + 8 * (p % 2), s = 8 * (p / 2) + i;
    const int32_t row = short0 + s, col = long0 + r;
    if (row >= a.m) return;
    const float4 lo = *(const float4 *)&stg[s * V9_STG_LD + r], hi = *(const float4 *)&stg[s * V9_STG_LD + r + 4];
    float v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    if (col + 8 > a.n) {
        for (int j = 0; j < 8; j++) v9_store_one<T>(a, row, col + j, v[j]);
        return;
    }
    uint4 *c = (uint4 *)((T *)a.C + (int64_t)row * a.ldc + col);
#pragma unroll
    for (int j = 0; j < 8; j++) v[j] *= a.alpha;
    if (a.beta != 0.0f) {
        const uint4 old = *c;
        const uint32_t o[4] = {old.x, old.y, old.z, old.w};
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const float2 f = elem<T>::unpack(o[j]);
            v[2 * j] += a.beta * f.x;
            v[2 * j + 1] += a.beta * f.y;
        }
    }
    *c = make_uint4(elem<T>::pack(v[0], v[1]), elem<T>::pack(v[2], v[3]), elem<T>::pack(v[4], v[5]),
                    elem<T>::pack(v[6], v[7]));
}

/* The warp's blocks first, first + step, ... (below BN / 4), four at a
 * time: lane l stores row l % 8 of block number l / 8 of the four. */
template <int BN, typename T>
static __device__ __forceinline__ void v9_store_staged(const gemm_args &a, const float *stg, int first, int step,
                                                       int tid, int32_t long0, int32_t short0) {
    const int w = tid / WARP_SIZE, lane = tid % WARP_SIZE;
    const int count = first < BN / 4 ? (BN / 4 - 1 - first) / step + 1 : 0;
    for (int q = lane / 8; q < count; q += 4)
        v9_store_row8<T>(a, stg, first + q * step, w, lane % 8, long0, short0);
}

/* One WGMMA of the (64, BN) accumulator, the long operand's tile K-major or
 * MN-major (X_MN), the short one's K-major. */
template <int BN, typename T, int X_MN>
static __device__ __forceinline__ void v9_wgmma(float d[BN / 2], uint64_t desc_x, uint64_t desc_y) {
    constexpr bool bf16 = __is_same(T, __nv_bfloat16);
    if constexpr (BN == 128) {
        if constexpr (bf16) wgmma_m64n128k16_f32_bf16<X_MN, 0>(d, desc_x, desc_y, 1);
        else wgmma_m64n128k16_f32_f16<X_MN, 0>(d, desc_x, desc_y, 1);
    }
    if constexpr (BN == 64) {
        if constexpr (bf16) wgmma_m64n64k16_f32_bf16<X_MN, 0>(d, desc_x, desc_y, 1);
        else wgmma_m64n64k16_f32_f16<X_MN, 0>(d, desc_x, desc_y, 1);
    }
    if constexpr (BN == 32) {
        if constexpr (bf16) wgmma_m64n32k16_f32_bf16<X_MN, 0>(d, desc_x, desc_y, 1);
        else wgmma_m64n32k16_f32_f16<X_MN, 0>(d, desc_x, desc_y, 1);
    }
    if constexpr (BN == 16) {
        if constexpr (bf16) wgmma_m64n16k16_f32_bf16<X_MN, 0>(d, desc_x, desc_y, 1);
        else wgmma_m64n16k16_f32_f16<X_MN, 0>(d, desc_x, desc_y, 1);
    }
}

/* Zero `halves` fp16 of shared memory (a multiple of 8) from one thread. */
static __device__ __forceinline__ void v9_zero(__half *dst, int halves) {
    uint4 *d = (uint4 *)dst;
    for (int i = 0; i < halves / 8; i++) d[i] = make_uint4(0, 0, 0, 0);
}

template <int BN, int KB, int STAGES, typename T, int X_MN>
__global__ void __launch_bounds__(V9_THREADS)
v9_kernel(const __grid_constant__ CUtensorMap tmap_x, const __grid_constant__ CUtensorMap tmap_y,
          v9_args args) {
    typedef v9_smem<BN, KB, STAGES> smem_t;
    extern __shared__ uint8_t smem_raw[];
    smem_t *sm = (smem_t *)smem_aligned(smem_raw);
    const int tid = threadIdx.x, warp = tid / WARP_SIZE;
    const uint32_t split = (uint32_t)args.split;
    const uint32_t rank = split > 1 ? cluster_ctarank() : 0;
    const uint32_t tile = blockIdx.x / split;
    const int32_t short0 = (int32_t)(tile % (uint32_t)args.short_tiles) * BN;
    const int32_t long0 = (int32_t)(tile / (uint32_t)args.short_tiles) * V9_BM;
    /* The k-loop walks steps of KB k-tiles; this block's slice of the steps is
     * [st0, st1), as even as integers allow. The step that reaches past k's
     * last tile loads only the tiles that exist and zeroes the others
     * (nothing relies on a box wholly outside the tensor). */
    const int64_t k_tiles = args.g.k_tiles, steps = (k_tiles + KB - 1) / KB;
    v9_partial_row *partial = (v9_partial_row *)sm->x;
    const int32_t st0 = (int32_t)(steps * rank / split);
    const int32_t st1 = (int32_t)(steps * (rank + 1) / split);
    /* The loader walks the slice's steps from step st0 + rot, wrapping round
     * (run 67): tiles next to each other start apart, so the blocks do not
     * all ask L2 for the same k-tile of the short operand at once. The
     * 128-wide short tile staggers by the long tile instead: the short tiles
     * of one weight tile start together, so that L2 serves the second its
     * weight. The sum's order depends only on the tile, so C is still bitwise
     * the same on every run. The consumer never needs the step's index. */
    const int32_t n_steps = st1 - st0;
    const uint32_t stagger = BN == V9_WIDE_BN ? tile / (uint32_t)args.short_tiles : tile;
    const int32_t rot = args.rotate && n_steps > 0 ? (int32_t)(stagger % (uint32_t)n_steps) : 0;

    if (tid == 0) pipe_init(sm->full, sm->empty, STAGES, 1);
    __syncthreads();
    /* Programmatic dependent launch (v9_launch asks for it): this grid may
     * have started while the stream's previous kernel still runs; global
     * memory is touched only from here on, once that kernel's writes are
     * visible. With HGEMM_TRIGGER_START the next kernel may be scheduled from
     * here (the first thread of a block to trigger triggers it). */
    griddep_wait();
    if (args.trigger == HGEMM_TRIGGER_START) griddep_launch_dependents();

    if (warp == V9_PRODUCER_WARP) {
        if (tid % WARP_SIZE == 0) {
            pipe_state st = {0, 0};
            for (int32_t i = 0; i < n_steps; i++, pipe_advance(&st, STAGES)) {
                const int32_t kt = (st0 + (i + rot < n_steps ? i + rot : i + rot - n_steps)) * KB;
                const int nb = k_tiles - kt < KB ? (int)(k_tiles - kt) : KB;
                uint64_t *full;
                if (nb == KB) {
                    full = pipe_producer_acquire(sm->full, sm->empty, st, KB * (V9_BM + BN) * BK * 2);
                } else {
                    /* The last step of k has fewer k-tiles than a stage holds: the
                     * consumer multiplies all KB anyway (see there), so the rest are
                     * zeroed here, made visible to the WGMMAs' async proxy, and only
                     * then is the stage announced. (With the rotation the step may
                     * come mid-slice: the fence also orders these writes before this
                     * thread's later TMA loads into the same stage.) */
                    mbarrier_wait(&sm->empty[st.stage], st.phase ^ 1);
                    for (int b = nb; b < KB; b++) {
                        v9_zero(sm->x[st.stage][b], V9_BM * BK);
                        v9_zero(sm->y[st.stage][b], BN * BK);
                    }
                    fence_proxy_async_shared();
                    full = &sm->full[st.stage];
                    mbarrier_arrive_expect_tx(full, nb * (V9_BM + BN) * BK * 2);
                }
                for (int b = 0; b < nb; b++) {
                    if (X_MN) /* one 64 (long) x BK (k) box: the 64 long elements are contiguous */
                        tma_load_2d(sm->x[st.stage][b], &tmap_x, long0, (kt + b) * BK, full);
                    else
                        tma_load_2d(sm->x[st.stage][b], &tmap_x, (kt + b) * BK, long0, full);
                    tma_load_2d(sm->y[st.stage][b], &tmap_y, (kt + b) * BK, short0, full);
                }
            }
            if (args.trigger == HGEMM_TRIGGER_LATE) griddep_launch_dependents(); /* the block's last load is issued */
        }
    } else {
        const bool leader = tid == 0;
        float d[BN / 2] = {}; /* (64, BN) fp32 accumulator; zero for an empty slice */
        pipe_state st = {0, 0}, prev = {0, 0};
        for (int32_t step = st0; step < st1; step++, pipe_advance(&st, STAGES)) {
            pipe_consumer_wait(sm->full, st);
            wgmma_fence();
            /* Every k-tile of the stage, always: a data-dependent branch
             * around a WGMMA makes ptxas serialize all of them (C7520).
             * The tiles past k's end were zero-filled by the loader. */
#pragma unroll
            for (int b = 0; b < KB; b++) {
                /* an MN-major x tile is one box: its leading offset is never used */
                const uint64_t desc_x = X_MN ? wgmma_desc_sw128_mn(sm->x[st.stage][b], V9_BM * BK * 2)
                                             : wgmma_desc_sw128(sm->x[st.stage][b]);
                const uint64_t desc_y = wgmma_desc_sw128(sm->y[st.stage][b]);
                constexpr uint64_t step_x = X_MN ? WGMMA_DESC_K_STEP_MN : WGMMA_DESC_K_STEP;
#pragma unroll
                for (int kk = 0; kk < BK / WGMMA_K; kk++)
                    v9_wgmma<BN, T, X_MN>(d, desc_x + step_x * kk, desc_y + WGMMA_DESC_K_STEP * kk);
            }
            wgmma_commit_group();
            wgmma_wait_group_1(); /* step-1 is done: release its stage (V5's late release) */
            if (leader && step > st0) pipe_consumer_release(sm->empty, prev);
            prev = st;
        }
        wgmma_wait_group_0();
        if (leader && st1 > st0) pipe_consumer_release(sm->empty, prev);

        /* Fragment layout (PTX ISA, "wgmma register fragments"): registers
         * 4j + 2h and 4j + 2h + 1 of thread t (pair p = 2j + h) hold long row
         * 16 (t / 32) + (t % 32) / 4 + 8h, short columns 8j + 2 (t % 4) + {0, 1}. */
        const int32_t r_base = long0 + 16 * (tid / 32) + (tid % 32) / 4;
        const int32_t s_base = short0 + 2 * (tid % 4);
        if (split == 1 && args.staged) {
            float *stg = (float *)sm->y;
#pragma unroll
            for (int p = 0; p < BN / 4; p++) v9_stage(stg, p, tid, make_float2(d[2 * p], d[2 * p + 1]));
            __syncwarp();
            v9_store_staged<BN, T>(args.g, stg, 0, 1, tid, long0, short0);
        } else if (split == 1) {
#pragma unroll
            for (int p = 0; p < BN / 4; p++)
                v9_store<T>(args, r_base + 8 * (p % 2), s_base + 8 * (p / 2), make_float2(d[2 * p], d[2 * p + 1]));
        } else {
#pragma unroll
            for (int p = 0; p < BN / 4; p++) partial[p][tid] = make_float2(d[2 * p], d[2 * p + 1]);
        }
    }
    if (split == 1) return;
    __syncwarp(); /* the loader warp's lane 0 rejoins its warp: barrier.cluster is .aligned */

    /* Every block's partial sums are in its shared memory once all threads of
     * the cluster have passed this barrier (release/acquire at cluster scope).
     * Block `rank` then finishes pairs p = rank, rank + split, ...: the sum
     * over ranks 0..split-1 in that order, the same whoever computes it. The
     * loads go in rounds, one per rank, each round's loads all in flight at
     * once, and the stores come after the last round: one wait for the
     * distributed shared memory per rank, not one per pair (run 62). */
    cluster_sync();
    if (warp != V9_PRODUCER_WARP) {
        enum { PAIRS = BN / 4, MINE = PAIRS / 2 }; /* split >= 2: at most half the pairs are this block's */
        const int32_t r_base = long0 + 16 * (tid / 32) + (tid % 32) / 4;
        const int32_t s_base = short0 + 2 * (tid % 4);
        float2 sum[MINE];
#pragma unroll
        for (int i = 0; i < MINE; i++) {
            const int p = (int)rank + i * (int)split;
            if (p < PAIRS) sum[i] = ld_shared_cluster_f32x2(mapa_shared(&partial[p][tid], 0));
        }
        for (uint32_t q = 1; q < split; q++) {
            float2 v[MINE];
#pragma unroll
            for (int i = 0; i < MINE; i++) {
                const int p = (int)rank + i * (int)split;
                if (p < PAIRS) v[i] = ld_shared_cluster_f32x2(mapa_shared(&partial[p][tid], q));
            }
#pragma unroll
            for (int i = 0; i < MINE; i++) {
                sum[i].x += v[i].x;
                sum[i].y += v[i].y;
            }
        }
        if (args.staged) {
            /* the y stages: the other blocks read this one's partial sums from the x stages */
            float *stg = (float *)sm->y;
#pragma unroll
            for (int i = 0; i < MINE; i++) {
                const int p = (int)rank + i * (int)split;
                if (p < PAIRS) v9_stage(stg, p, tid, sum[i]);
            }
            __syncwarp();
            v9_store_staged<BN, T>(args.g, stg, (int)rank, (int)split, tid, long0, short0);
        } else {
#pragma unroll
            for (int i = 0; i < MINE; i++) {
                const int p = (int)rank + i * (int)split;
                if (p < PAIRS) v9_store<T>(args, r_base + 8 * (p % 2), s_base + 8 * (p / 2), sum[i]);
            }
        }
    }
    /* No block leaves while another may still read its partial sums: a
     * block arrives once every value it loaded has come back (its stores use
     * them), so the arrival needs no release, and none waits for the global
     * stores above to complete (a release arrival is a GPU-wide memory
     * barrier in SASS). */
    cluster_sync_relaxed_arrive();
}

/* ---- host ------------------------------------------------------------------ */

/* One build of the kernel: its template arguments, function and shared
 * memory. `form`: 0 fp16, 1 bf16, +2 for an MN-major long operand. */
typedef struct v9_build {
    int bn, kb, stages, form;
    const void *kernel;
    size_t smem;
} v9_build;

#define V9_BUILD1(BN, KB, STAGES, T, FORM)                                                      \
    {BN, KB, STAGES, FORM, (const void *)v9_kernel<BN, KB, STAGES, T, (FORM) / 2>,              \
     sizeof(v9_smem<BN, KB, STAGES>) + SW128_ALIGN}
#define V9_BUILD(BN, KB, STAGES)                                                                \
    V9_BUILD1(BN, KB, STAGES, __half, 0), V9_BUILD1(BN, KB, STAGES, __nv_bfloat16, 1),         \
    V9_BUILD1(BN, KB, STAGES, __half, 2), V9_BUILD1(BN, KB, STAGES, __nv_bfloat16, 3)

static const v9_build v9_builds[] = {
    /* one k-tile per stage, 4 stages: V9 for short sides up to 32 */
    V9_BUILD(16, 1, V9_STAGES), V9_BUILD(32, 1, V9_STAGES), V9_BUILD(64, 1, V9_STAGES),
    /* two k-tiles per stage, 3 stages: V9 for short sides of 33..64 (and at
     * every width in the lab's v9-k128) */
    V9_BUILD(64, 2, 3),
#ifdef HGEMM_LAB
    V9_BUILD(16, 2, 3), V9_BUILD(32, 2, 3),
#endif
    /* one block per SM, a 6-stage ring of two k-tiles: V9 where its tiles are
     * at most one per SM (the deep ring, run 29) */
    V9_BUILD(16, 2, V9_DEEP_STAGES), V9_BUILD(32, 2, V9_DEEP_STAGES), V9_BUILD(64, 2, V9_DEEP_STAGES),
    /* the 128-wide short tile (65..384 rows against a wide weight): two
     * blocks per SM, or the deep ring of 3 stages, one block per SM */
    V9_BUILD(V9_WIDE_BN, 1, V9_STAGES), V9_BUILD(V9_WIDE_BN, 2, V9_WIDE_DEEP_STAGES),
};

static_assert(sizeof(v9_smem<V9_WIDE_BN, 2, V9_WIDE_DEEP_STAGES>) + SW128_ALIGN <= MAX_SMEM_PER_BLOCK,
              "shared memory budget of the wide tile's deep ring");
static_assert(sizeof(((v9_smem<V9_WIDE_BN, 1, V9_STAGES> *)0)->x) >= V9_WIDE_BN / 4 * sizeof(v9_partial_row) &&
                  sizeof(((v9_smem<V9_WIDE_BN, 1, V9_STAGES> *)0)->y) >= V9_WIDE_BN * V9_STG_LD * sizeof(float),
              "the wide tile's partial sums fit in its x stages, its staged epilogue in its y stages");

static_assert(sizeof(v9_smem<64, 2, V9_DEEP_STAGES>) + SW128_ALIGN <= MAX_SMEM_PER_BLOCK, "shared memory budget of one block");
static_assert(sizeof(((v9_smem<16, 1, V9_STAGES> *)0)->y) >= 16 * V9_STG_LD * sizeof(float) &&
                  sizeof(((v9_smem<16, 2, 3> *)0)->y) >= 16 * V9_STG_LD * sizeof(float),
              "the staged epilogue's tile fits in the y stages of the smallest builds");
static_assert((V9_BM * BK * 2) % SW128_ALIGN == 0 && (16 * BK * 2) % SW128_ALIGN == 0,
              "every k-tile of a stage stays 1024-byte aligned");

/* The table's V9: no knob turned (hgemm_v9_variant, internal.h). */
static const hgemm_v9_variant V9_TABLE = {0, 0, 0, 0, 0, 0, 0};

static const v9_build *v9_find_build(int bn, int kb, int form, int stages) {
    for (size_t i = 0; i < sizeof v9_builds / sizeof v9_builds[0]; i++)
        if (v9_builds[i].bn == bn && v9_builds[i].kb == kb && v9_builds[i].form == form &&
            (stages == 0 || v9_builds[i].stages == stages))
            return &v9_builds[i];
    return NULL;
}

/* The short side's tile: the smallest of 16, 32, 64 that holds it; 128 for
 * 65..384 rows against a long side of at least 4096 with k over 2048
 * (batched decode), else 64-wide tiles. */
static int v9_bn(int64_t short_side, int64_t long_side, int64_t k) {
    if (short_side > V9_MAX_BN)
        return short_side <= V9_WIDE_MAX_SHORT && long_side >= V9_WIDE_LONG && k >= V9_WIDE_MIN_K ? V9_WIDE_BN
                                                                                                 : V9_MAX_BN;
    return short_side <= 16 ? 16 : short_side <= 32 ? 32 : 64;
}

/* How many blocks of this build an SM holds (shared memory and threads; V9's
 * few registers never bound it). Only the split choice uses it. */
static uint32_t v9_blocks_per_sm(const v9_build *b) {
    const size_t per_block = b->smem + SMEM_RESERVED_PER_BLOCK;
    uint32_t by_smem = (uint32_t)(SMEM_PER_SM / per_block);
    uint32_t by_threads = MAX_THREADS_PER_SM / V9_THREADS;
    return by_smem < by_threads ? by_smem : by_threads;
}

/* The cut of a problem: which side is long, the tile counts, and the split.
 * Split: as many k slices as fill the GPU's resident blocks in one round
 * (at most 8, each at least V9_MIN_SPLIT_KTILES k-tiles long). */
typedef struct v9_plan {
    int swap;
    const v9_build *build;
    uint64_t long_tiles, short_tiles;
    uint32_t split;
} v9_plan;

static v9_plan v9_make_plan(const hgemm_problem *p, uint32_t sms, hgemm_v9_variant v) {
    v9_plan pl;
    pl.swap = !v.no_swap && p->m <= p->n; /* the shorter side of C goes on WGMMA's N */
    const int64_t long_side = pl.swap ? p->n : p->m, short_side = pl.swap ? p->m : p->n;
    const int bn = v9_bn(short_side, long_side, p->k);
    /* Stages of two k-tiles where the short tile is 64 wide (m = 33..64):
     * there a stage's fixed costs (barrier wait, fence, commit, wait_group)
     * weigh against four m64n64 WGMMAs, and halving their count per byte ran
     * 0.65 -> 0.70x cuBLAS (geomean of the 4 decode shapes at m = 64, run
     * 22); at 16 and 32 wide the bigger stages cost blocks per SM (5 -> 3)
     * and lost (docs/notes/v9-log.md). */
    pl.long_tiles = hgemm_ceil_div((uint64_t)long_side, V9_BM);
    pl.short_tiles = hgemm_ceil_div((uint64_t)short_side, (uint32_t)bn);
    const uint64_t tiles = pl.long_tiles * pl.short_tiles;
    /* The deep ring where the tiles are at most one per SM: one block per SM
     * streams a long k slice through 6 stages instead of 3..5 small blocks
     * streaming short slices through 3..4. Run 29, decode shapes, rotated
     * operands: +12% at 1 x 4096 x 4096, +35..44% at m = 32..64 on
     * 4096-wide weights; where the tiles outnumber the SMs (28672-wide,
     * 448 tiles) the small blocks won by 12..16% (docs/notes/v9-log.md).
     * Only down to a third of an SM's worth of tiles (a split of at most 2,
     * where it was measured): with few tiles the split grows to 8, and
     * clusters of 8 blocks of 192 KB, one per SM, do not all fit the GPCs
     * at once (256 x 256 x 65536, 16 tiles: 0.606x cuBLAS with the small
     * blocks in run 27, 0.357x with the deep ring in run 30). */
    const int deep = v.deep > 0 || (v.deep == 0 && tiles <= sms && 3 * tiles > sms);
    const int kb = deep ? 2 : v.kb ? v.kb : bn == V9_MAX_BN ? 2 : 1;
    const int deep_stages = bn == V9_WIDE_BN ? V9_WIDE_DEEP_STAGES : V9_DEEP_STAGES;
    /* the long operand is MN-major when it is B stored k x n, or A stored k x m */
    const int x_mn = pl.swap ? p->b_mn : p->a_mn;
    pl.build = v9_find_build(bn, kb, (p->dtype == HGEMM_DTYPE_BF16) + 2 * x_mn, deep ? deep_stages : 0);
    const uint64_t resident = (uint64_t)sms * v9_blocks_per_sm(pl.build);
    const uint64_t k_tiles = ((uint64_t)p->k + BK - 1) / BK;
    uint64_t split = v.no_split ? 1 : resident / tiles;
    if (split > V9_MAX_SPLIT) split = V9_MAX_SPLIT;
    if (split > k_tiles / V9_MIN_SPLIT_KTILES) split = k_tiles / V9_MIN_SPLIT_KTILES;
    pl.split = split < 1 ? 1 : (uint32_t)split;
    return pl;
}

/* What V9 serves: one entry (api.c runs a batch entry by entry) whose short
 * operand is K-major, the TMA limits of A and B, and its 1-D grid at the
 * largest split, whichever operand is long. */
extern "C" hgemm_status hgemm__supports_v9(const hgemm_problem *p) {
    if (p->batch > 1) return HGEMM_ERROR_NOT_SUPPORTED;
    hgemm_status st = hgemm__tmap_supports(p, 0);
    if (st != HGEMM_SUCCESS) return st;
    const v9_plan pl = v9_make_plan(p, 1, V9_TABLE); /* the tiles; the split is bounded by 8 */
    if (pl.swap ? p->a_mn : p->b_mn) return HGEMM_ERROR_NOT_SUPPORTED; /* the short operand is MN-major */
    return pl.long_tiles * pl.short_tiles * V9_MAX_SPLIT > MAX_GRID_X ? HGEMM_ERROR_NOT_SUPPORTED
                                                                      : HGEMM_SUCCESS;
}

static hgemm_status v9_launch(const hgemm_problem *p, cudaStream_t stream, hgemm_v9_variant v) {
    hgemm_status st = hgemm__supports_v9(p);
    if (st != HGEMM_SUCCESS) return st;
    int dev = 0, sms = 0;
    cudaError_t err = cudaGetDevice(&dev);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (err != cudaSuccess) return hgemm__status_from_cuda(err);
    const v9_plan pl = v9_make_plan(p, (uint32_t)sms, v);
    /* unswapped with n > m the grid can be longer than supports() counted */
    if (pl.long_tiles * pl.short_tiles * pl.split > MAX_GRID_X) return HGEMM_ERROR_NOT_SUPPORTED;
    const void *x_ptr = pl.swap ? p->B : p->A, *y_ptr = pl.swap ? p->A : p->B;
    const int64_t x_rows = pl.swap ? p->n : p->m, y_rows = pl.swap ? p->m : p->n;
    const int64_t ldx = pl.swap ? p->ldb : p->lda, ldy = pl.swap ? p->lda : p->ldb;
    CUtensorMap tx, ty;
    const uint64_t k = (uint64_t)p->k;
    st = pl.build->form / 2 ? hgemm__tmap_encode_dt(&tx, p->dtype, x_ptr, k, (uint64_t)x_rows, (uint64_t)ldx,
                                                     BK, V9_BM, TMAP_SWIZZLE_128B)
                            : hgemm__tmap_encode_dt(&tx, p->dtype, x_ptr, (uint64_t)x_rows, k, (uint64_t)ldx,
                                                     V9_BM, BK, TMAP_SWIZZLE_128B);
    if (st == HGEMM_SUCCESS)
        st = hgemm__tmap_encode_dt(&ty, p->dtype, y_ptr, (uint64_t)y_rows, k, (uint64_t)ldy,
                                   (uint32_t)pl.build->bn, BK, TMAP_SWIZZLE_128B);
    if (st != HGEMM_SUCCESS) return st;
    /* The staggered starts only where nothing splits: run 67 measured them
     * 1..3% faster there (1 and 32 x 6144 x 4096, 64 x 28672 x 4096) and
     * 1..2% slower, within the runs' spread, on the 2-slice shapes. The
     * staged epilogue on every swapped tile: its 16-byte stores need only
     * what every call is checked for (C 16-byte aligned, ldc and the batch
     * stride multiples of 8). */
    const int staged = !v.no_stage && pl.swap;
    /* The trigger once the loader has issued its last load (run 80,
     * bench/shapes/pdl-decode.txt): on all 8 decode shapes at or below
     * both others, 1 x 4096 x 4096 11.5 us against 13.0 without the
     * attribute; a trigger right after the wait let the next call's blocks
     * fill the SMs early, unevenly: 1 x 28672 x 4096 73.3 against 59.8. */
    const int pdl = v.pdl != HGEMM_PDL_DEFAULT ? v.pdl : HGEMM_PDL_LATE;
    const int32_t trigger = hgemm__pdl_trigger(pdl);
    v9_args args = {make_args(p), pl.swap, (int32_t)pl.short_tiles, (int32_t)pl.split,
                    !v.no_rotate && pl.split == 1, staged, trigger};
    void *params[] = {&tx, &ty, &args};
    const dim3 grid((unsigned)(pl.long_tiles * pl.short_tiles * pl.split));
    return hgemm__launch_ex(pl.build->kernel, grid, V9_THREADS, pl.build->smem, pl.split, pdl != HGEMM_PDL_OFF,
                            stream, params);
}

/* What hgemm__launch_v9 would run for `p` on a GPU of `sms` SMs (0: the
 * current device's), by the same plan (v9_make_plan); no CUDA call when
 * sms > 0. */
extern "C" hgemm_status hgemm__v9_explain(const hgemm_problem *p, uint32_t sms, hgemm_v9_plan *out) {
    const hgemm_status st = hgemm__supports_v9(p);
    if (st != HGEMM_SUCCESS) return st;
    if (sms == 0) { /* the current device's, as v9_launch takes them */
        int dev = 0, n = 0;
        cudaError_t err = cudaGetDevice(&dev);
        if (err == cudaSuccess) err = cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev);
        if (err != cudaSuccess) return hgemm__status_from_cuda(err);
        sms = (uint32_t)n;
    }
    const v9_plan pl = v9_make_plan(p, sms, V9_TABLE);
    out->swap = pl.swap;
    out->bn = pl.build->bn;
    out->kb = pl.build->kb;
    out->stages = pl.build->stages;
    out->long_tiles = pl.long_tiles;
    out->short_tiles = pl.short_tiles;
    out->split = pl.split;
    return pl.long_tiles * pl.short_tiles * pl.split > MAX_GRID_X ? HGEMM_ERROR_NOT_SUPPORTED : HGEMM_SUCCESS;
}

extern "C" hgemm_status hgemm__launch_v9(const hgemm_problem *p, cudaStream_t stream) {
    return v9_launch(p, stream, V9_TABLE);
}

/* V9 under a variant (the lab's ablations, lab/v9_lab.c). */
extern "C" hgemm_status hgemm__v9_run(const hgemm_problem *p, const hgemm_v9_variant *v, cudaStream_t stream) {
    return v9_launch(p, stream, *v);
}
