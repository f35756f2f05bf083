/*
 * v8/reduce.cuh: V8's partial sums: a worker's partial left in its
 * workspace slot, added by the tile's owner (stream-K, the tail split,
 * split-K's few slices), or reduced share by share (split-K, in the kernel or
 * by the second kernel, v8_split_reduce).
 */
#ifndef HGEMM_V8_REDUCE_CUH
#define HGEMM_V8_REDUCE_CUH

#include "v8/config.cuh"

/* Stream-K: this worker ran a piece of a tile that another worker owns. Leave
 * the partial sum in its slot and raise the flag (each thread fences its own
 * stores; the barrier then puts them all before the leader's release). */
template <int ACC>
static __device__ __forceinline__ void v8_partial_store(const float d[ACC], float *slot) {
    const int t = threadIdx.x % WARPGROUP_THREADS;
    float4 *dst = (float4 *)slot;
#pragma unroll
    for (int i = 0; i < ACC / 4; i++)
        __stcg(&dst[i * WARPGROUP_THREADS + t], make_float4(d[4 * i], d[4 * i + 1], d[4 * i + 2], d[4 * i + 3]));
}

/* Is this thread in its warpgroup's first warp? A spin-wait that one
 * thread could do runs in that whole warp instead: a loop or a trap under a
 * branch that ptxas cannot prove warp-uniform (the leader's) leaves every
 * loop around it divergent in ptxas's eyes, and then the k-loop's stage and
 * the WGMMA descriptors built from it live in ordinary registers, moved to
 * uniform ones before each WGMMA (docs/notes/v8-log.md, run 158). */
static __device__ __forceinline__ bool v8_lead_warp(void) {
    return warp_uniform((threadIdx.x % WARPGROUP_THREADS) / WARP_SIZE) == 0;
}

template <int ACC>
static __device__ __forceinline__ void v8_partial_put(const float d[ACC], float *slot,
                                                      uint32_t *flag, int g, bool leader) {
    v8_partial_store<ACC>(d, slot);
    /* The barrier orders every thread's stores before the leader's release,
     * which is cumulative: one fence, not 128 (each thread's own fence waited
     * for its 16..32 stores to land; run 57) */
    named_barrier_sync(V8_EPI_BARRIER + g, WARPGROUP_THREADS);
    if (v8_lead_warp()) st_release_gpu_u32_if(leader, flag, 1); /* the fence in the leader's warp (v8_lead_warp) */
}

/* Four accumulator registers plus one loaded float4 of a partial sum (the
 * slot's layout: registers 4i..4i+3 of a thread are its float4 i). */
static __device__ __forceinline__ void v8_add4(float *d, float4 x) {
    d[0] += x.x;
    d[1] += x.y;
    d[2] += x.z;
    d[3] += x.w;
}

/* Stream-K: add the partial sum of one contributor once its flag is up, then
 * lower the flag for the next call (its partial is not read again here). */
template <int ACC>
static __device__ __forceinline__ void v8_partial_add(float d[ACC], const float *slot,
                                                      uint32_t *flag, int g, bool leader) {
    const int t = threadIdx.x % WARPGROUP_THREADS;
    if (v8_lead_warp()) flag_wait_gpu(flag); /* the leader's warp (v8_lead_warp) */
    named_barrier_sync(V8_EPI_BARRIER + g, WARPGROUP_THREADS);
    const float4 *src = (const float4 *)slot;
#pragma unroll
    for (int i = 0; i < ACC / 4; i++) v8_add4(&d[4 * i], __ldcg(&src[i * WARPGROUP_THREADS + t]));
    if (leader) st_relaxed_gpu_u32(flag, 0);
}

/* Split-K's owner (HGEMM_SK_REDUCE_OWNER): add one contributor's partial sum
 * through shared memory. The ring is idle after a split's only unit, so one
 * bulk copy brings the whole partial into `stage` (this consumer's own
 * part of the ring) and each thread reads its float4s there: one round trip
 * instead of 8 of 4 loads each (the wide tile's 168 registers leave no more
 * in flight; run 57). `bar` and `phase`: the consumer's part_full barrier
 * and its parity. */
template <int ACC>
static __device__ __forceinline__ void v8_partial_add_staged(float d[ACC], const float *slot, uint32_t *flag,
                                                             float *stage, uint64_t *bar, uint32_t &phase, int g,
                                                             bool leader) {
    enum { BYTES = ACC * WARPGROUP_THREADS * 4 };
    const int t = threadIdx.x % WARPGROUP_THREADS;
    if (v8_lead_warp()) flag_wait_gpu(flag); /* the leader's warp (v8_lead_warp) */
    if (leader) {
        fence_proxy_async_global(); /* the acquired partial, before the bulk copy reads it */
        mbarrier_arrive_expect_tx(bar, BYTES);
        bulk_load_1d(stage, slot, BYTES, bar);
    }
    mbarrier_wait(bar, phase);
    phase ^= 1;
    const uint32_t src = smem_u32(stage) + 16u * (uint32_t)t;
#pragma unroll
    for (int i = 0; i < ACC / 4; i++) v8_add4(&d[4 * i], ld_shared_f32x4(src + 16u * WARPGROUP_THREADS * i));
    /* everyone has read the stage before the next copy overwrites it */
    named_barrier_sync(V8_EPI_BARRIER + g, WARPGROUP_THREADS);
    if (leader) st_relaxed_gpu_u32(flag, 0);
}

/* Split-K (stream_k.h): one share of consumer g's part of one tile, after
 * every slice's worker has left its partial sum in its slot. The share of
 * slice `slice`: the part's float4 q (of ACC/4 * 128) in [QUADS * slice /
 * slices, QUADS * (slice + 1) / slices), each the sum of the slices' float4
 * q, slices 0, 1, ... in that order (deterministic, and the same sums
 * whoever adds them), stored straight to C as the fragment's rows r and
 * r + 8, columns c, c + 1. Slice s of the tile ran on worker s * tiles +
 * tile (hgemm_sk_slice_worker): its slot is `step` float4 further on per
 * slice. BATCH slices' loads are in flight at a time, then added in order:
 * one load after another made a chain of memory round trips (33 slices at
 * 256 x 256 x 65536: 7.7 us for the second kernel, run 53's profile). */
template <typename T, int BN, int CLUSTER, int BATCH>
static __device__ __forceinline__ void v8_reduce_share(const float *partials, const gemm_args &out,
                                                       const hgemm_sk &sk, uint32_t tile, uint32_t rank, int g,
                                                       uint32_t slice, int32_t qrow0, int32_t col0, int t) {
    enum { ACC = BN / 2, QUADS = ACC / 4 * WARPGROUP_THREADS };
    const uint32_t slices = sk.slices;
    const float4 *p0 = (const float4 *)(partials + (size_t)v8_slot<CLUSTER>(tile, rank, g) * V8_SLOT_FLOATS);
    const size_t step = (size_t)sk.tiles * CLUSTER * V8_CONSUMERS * (V8_SLOT_FLOATS / 4);
    /* 32-bit: a split plan has at most HGEMM_SK_MAX_WORKERS slices (a 64-bit
     * division is a subroutine call on the GPU) */
    static_assert((uint64_t)QUADS * HGEMM_SK_MAX_WORKERS <= UINT32_MAX, "QUADS * slices fits 32 bits");
    const uint32_t q0 = (uint32_t)QUADS * slice / slices;
    const uint32_t q1 = (uint32_t)QUADS * (slice + 1) / slices;
    for (uint32_t q = q0 + (uint32_t)t; q < q1; q += WARPGROUP_THREADS) {
        const float4 *p = p0 + q;
        float4 sum = __ldcg(p);
        uint32_t s = 1;
        for (; s + BATCH <= slices; s += BATCH) {
            float4 x[BATCH];
#pragma unroll
            for (int j = 0; j < BATCH; j++) x[j] = __ldcg(p + (size_t)(s + j) * step);
#pragma unroll
            for (int j = 0; j < BATCH; j++) {
                sum.x += x[j].x;
                sum.y += x[j].y;
                sum.z += x[j].z;
                sum.w += x[j].w;
            }
        }
        for (; s < slices; s++) {
            const float4 x = __ldcg(p + (size_t)s * step);
            sum.x += x.x;
            sum.y += x.y;
            sum.z += x.z;
            sum.w += x.w;
        }
        const uint32_t i = q / WARPGROUP_THREADS, tt = q % WARPGROUP_THREADS;
        const int32_t row = qrow0 + (int32_t)(16 * (tt / WARP_SIZE) + (tt % WARP_SIZE) / 4);
        const int32_t col = col0 + (int32_t)(8 * i + 2 * (tt % 4));
        store_pair<T>(out, row, col, sum.x, sum.y);
        store_pair<T>(out, row + 8, col, sum.z, sum.w);
    }
}

/* The cluster tile of tile index `id` of one entry: raster groups V8_RASTER
 * cluster tiles wide, the tile column changing fastest (src/raster.h), so
 * that neighbouring cluster indexes share A's rows; or, ROWS (v8-seam-rows,
 * run 132's probe), the same walk over the transposed grid: groups that many
 * tile rows tall, the tile row changing fastest, so that neighbouring
 * indexes share B's columns and indexes V8_RASTER apart share A's rows. */
template <bool ROWS>
static __device__ __forceinline__ hgemm_tile v8_tile_at(uint32_t id, uint32_t ctiles_m, uint32_t tiles_n,
                                                        uint32_t raster) {
    if constexpr (ROWS) {
        const hgemm_tile t = hgemm_raster(id, tiles_n, ctiles_m, raster);
        return hgemm_tile{t.n, t.m};
    } else {
        return hgemm_raster(id, ctiles_m, tiles_n, raster);
    }
}

/* Split-K's second kernel (HGEMM_SK_REDUCE_KERNEL, the v8-split2k ablation),
 * after v8_kernel has left every slice's partial sum in its worker's slot:
 * block b finishes one share (v8_reduce_share) of one consumer's part of one
 * tile, b = ((slice * tiles + tile) * CLUSTER + rank) * V8_CONSUMERS + g, the
 * slot index of the worker that ran that slice. Every partial is read once,
 * by one of 128 threads on any SM. Defined in v8/split_reduce.cuh, built
 * once per element type and tile (src/v8/reduce.cu), not in each form's
 * file: those find it with hgemm__v8_split_reduce. */
template <typename T, int BN, int CLUSTER, bool ROWS>
__global__ void __launch_bounds__(WARPGROUP_THREADS, 4) /* registers for every batch load in flight */
v8_split_reduce(const float *partials, gemm_args args, uint32_t ctiles_m, uint32_t tiles_n, hgemm_sk sk,
                v8_batch bt);
/* The library's build of v8_split_reduce<T, bn, cluster, false> for
 * dtype's T (src/v8/reduce.cu); NULL for a tile it does not build. */
extern "C" const void *hgemm__v8_split_reduce(hgemm_dtype dtype, int bn, int cluster);

#endif /* HGEMM_V8_REDUCE_CUH */
