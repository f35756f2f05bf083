/*
 * grouped/schedule.cuh: how a grouped kernel's blocks find their tiles
 * (hgemm_grouped's kernel, grouped/kernel.cu, and the grouped FP8 kernel,
 * fp8/grouped.cu). Each block reads the offsets once into shared memory
 * (SM: start[], end[], tile0[]) and maps a tile index to (group, m-tile,
 * n-tile). ARGS: groups, offs, total_rows and n_tiles.
 */
#ifndef HGEMM_GROUPED_SCHEDULE_CUH
#define HGEMM_GROUPED_SCHEDULE_CUH

#include "kernel_common.cuh"
#include "raster.h"

enum {
    GR_BM = 128, /* rows of a tile */
    GR_RASTER = 8,
};

typedef struct gr_unit {
    uint32_t g, mt, nt;
} gr_unit;

/* Tile t's group (the last with tile0[g] <= t: empty groups share their
 * successor's tile0 and are passed over), and its m- and n-tile. */
template <typename SM, typename ARGS>
static __device__ __forceinline__ gr_unit gr_decode(const SM *sm, uint32_t t, const ARGS &a) {
    uint32_t lo = 0, hi = (uint32_t)a.groups - 1;
    while (lo < hi) {
        const uint32_t mid = (lo + hi + 1) / 2;
        if (sm->tile0[mid] <= t) lo = mid;
        else hi = mid - 1;
    }
    const uint32_t m_tiles = (uint32_t)(sm->end[lo] - sm->start[lo] + GR_BM - 1) / GR_BM;
    const hgemm_tile tile = hgemm_raster(t - sm->tile0[lo], m_tiles, a.n_tiles, GR_RASTER);
    gr_unit u = {lo, tile.m, tile.n};
    return u;
}

/* The groups' rows and the prefix of their tile counts (warp 0; the
 * offsets are read here once). end_g is the largest of offs[0..g], clamped
 * to [0, total_rows], and start_g the end before: in-range increasing
 * offsets are torch's groups, and any others give empty or shorter groups
 * that never overlap. */
template <typename SM, typename ARGS>
static __device__ __forceinline__ void gr_read_groups(SM *sm, const ARGS &a) {
    if (threadIdx.x < WARP_SIZE) {
        const uint32_t lane = threadIdx.x;
        int32_t high = 0;   /* the largest offset so far, at least 0 */
        uint32_t carry = 0; /* tiles so far */
        for (int base = 0; base < a.groups; base += WARP_SIZE) {
            const int g = base + (int)lane;
            int32_t end = g < a.groups ? max(a.offs[g], high) : high; /* inclusive max-scan */
#pragma unroll
            for (int o = 1; o < WARP_SIZE; o <<= 1) {
                const int32_t y = __shfl_up_sync(0xffffffffu, end, o);
                if (lane >= (uint32_t)o) end = max(end, y);
            }
            int32_t start = __shfl_up_sync(0xffffffffu, end, 1);
            if (lane == 0) start = high;
            high = __shfl_sync(0xffffffffu, end, WARP_SIZE - 1);
            const int32_t lo = min(start, a.total_rows), hi = min(end, a.total_rows);
            const uint32_t count = g < a.groups ? (uint32_t)(hi - lo + GR_BM - 1) / GR_BM * a.n_tiles : 0;
            uint32_t x = count; /* inclusive sum-scan */
#pragma unroll
            for (int o = 1; o < WARP_SIZE; o <<= 1) {
                const uint32_t y = __shfl_up_sync(0xffffffffu, x, o);
                if (lane >= (uint32_t)o) x += y;
            }
            if (g < a.groups) {
                sm->start[g] = lo;
                sm->end[g] = hi;
                sm->tile0[g] = carry + x - count;
            }
            carry += __shfl_sync(0xffffffffu, x, WARP_SIZE - 1);
        }
        if (lane == 0) sm->tile0[a.groups] = carry;
    }
    __syncthreads();
}

#endif
