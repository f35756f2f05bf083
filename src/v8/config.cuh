/*
 * v8/config.cuh: V8's numbers (tile, warpgroups, registers, barriers, the
 * workspace's layout constants), its shared memory per tile width, the phase
 * clocks of the diagnostic build, and the small records a launch passes
 * (batch, deal). Device code; included by v8/reduce.cuh and v8/kernel.cuh.
 */
#ifndef HGEMM_V8_CONFIG_CUH
#define HGEMM_V8_CONFIG_CUH

#include <string.h>

#include <cuda_bf16.h>

#include "kernel_common.cuh"
#include "elem.cuh"
#include "epilogue_f32.cuh"
#include "mma_tile.cuh"
#include "pipeline.cuh"
#include "stream_k.h"
#include "deal.h"
#include "ptx/cluster.cuh"
#include "ptx/flag.cuh"
#include "ptx/regs.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"
#include "v8/plan.h"

enum {
    V8_STAGES = 3,
    V8_CONSUMER_THREADS = V8_CONSUMERS * WARPGROUP_THREADS,
    V8_PRODUCER_WG = V8_CONSUMERS,                           /* warpgroup 2 */
    V8_PRODUCER_THREAD = V8_CONSUMER_THREADS,                /* its first thread issues the loads */
    V8_THREADS = V8_CONSUMER_THREADS + WARPGROUP_THREADS,    /* 384 */
    V8_PRODUCER_REGS = 24,
    V8_LAUNCH_REGS = REGISTERS_PER_SM / V8_THREADS / 8 * 8,  /* 168: each thread's at launch (the
                                                                launch bounds' one block of 384 threads;
                                                                allocated in steps of 8) */
    V8_CONSUMER_REGS = 240,
    V8_EPI_BARRIER = 1,                                      /* named barriers 1, 2: one per consumer */
    V8_RING_DONE_BARRIER = 3,                                /* both consumers past their last WGMMA */
    V8_REDUCE_BATCH = 16,                                    /* split-K's second kernel: slices loaded at once */
    V8_REDUCE_BATCH_IN_KERNEL = 8,                           /* the same in v8_kernel (168 registers) */
    V8_MN_BOX = SW128_ROW_BYTES / 2,                         /* 64: MN-major boxes' width in elements */
    V8_MN_BOX_BYTES = V8_MN_BOX * BK * 2,                    /* 8 KB: one box, the descriptor's MN step */
};
/* The tile, the consumers and the workspace's layout constants are the
 * planner's (v8/plan.h): one definition for the host and the kernel. */
static_assert((int)V8_K_TILE == (int)BK, "the planner's k-tile is the kernels' BK");

/* Phase clocks, in a build configured with -DHGEMM_PHASE_TIMER=ON only (the
 * library's builds compile none of this): the leader of each consumer
 * warpgroup writes the global timer and its SM's cycle counter at six points
 * of its first unit (enum v8_phase, internal.h), so that one launch shows
 * where its time goes between the ring's first data, the k-loop, split-K's
 * wait for every slice and the reduction (tools/phase_timer.c). Slot
 * blockIdx.x * 2 + g; each slot holds V8_PHASES pairs (ns, cycles). The
 * tiles up to 128 wide mark every phase; the wider ones only the walk's
 * start and end, outside the k-loop (marks inside it made ptxas spill in
 * the 192- and 256-wide tiles, which would change what they measure). */
enum { V8_PHASE_MAX_BN = 128 };
#ifdef HGEMM_PHASE_TIMER
__device__ unsigned long long v8_phase_clock[V8_PHASE_SLOTS * V8_PHASES * 2];
__device__ unsigned long long v8_unit_clock[V8_PHASE_SLOTS * V8_UNIT_MARKS * 2];
/* Where `on` holds, the leader of consumer g marks `index` of its slot in
 * `clock` (`per_slot` marks a slot): the global timer and the SM's cycle
 * counter. Which thread leads is worked out here, not kept: a leader flag
 * live from the kernel's start to its end cost the wide tiles a spill.
 * The stores are under a predicate in the leader's warp, not under a branch
 * on the leader: such a branch in the tile loop takes the k-loop out of
 * uniform registers (warp_uniform), and this build would then time another
 * kernel than the library's. */
static __device__ __forceinline__ void v8_clock_mark(bool on, unsigned long long *clock, uint32_t per_slot,
                                                     uint32_t index, int g) {
    uint32_t cta; /* read again at each mark (volatile), so that nothing of it stays live between marks */
    asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(cta));
    const uint32_t slot = cta * V8_CONSUMERS + (uint32_t)g, t = threadIdx.x % WARPGROUP_THREADS;
    /* v8_lead_warp's test, written out: calling it (defined below) made the
     * wide tiles of this build spill 8 bytes */
    if (warp_uniform(t / WARP_SIZE) != 0) return;
    on = on && t == 0 && slot < V8_PHASE_SLOTS;
    unsigned long long *at = &clock[((on ? slot : 0) * per_slot + index) * 2];
    st_global_b64_if(on, &at[0], globaltimer_ns());
    st_global_b64_if(on, &at[1], clock64());
}
#endif
template <int BN>
static __device__ __forceinline__ void v8_phase_mark(bool first, int g, int phase) {
#ifdef HGEMM_PHASE_TIMER
    if constexpr (BN > V8_PHASE_MAX_BN) { /* the wide tiles would spill */
        if (phase != V8_PHASE_START && phase != V8_PHASE_END) return;
    }
    v8_clock_mark(first, v8_phase_clock, V8_PHASES, (uint32_t)phase, g);
#else
    (void)first, (void)g, (void)phase;
#endif
}

/* The unit clocks of the same build: unit `u` of consumer g begins. Two
 * stores by the leader, outside the k-loop, at every width. */
static __device__ __forceinline__ void v8_unit_mark(int g, uint32_t u) {
#ifdef HGEMM_PHASE_TIMER
    if (u < V8_UNIT_MARKS) v8_clock_mark(true, v8_unit_clock, V8_UNIT_MARKS, u, g);
#else
    (void)g, (void)u;
#endif
}

/* What a batch changes (all zero but `tiles` for one entry): the tiles of
 * one entry, which entries A and B have (mask ~0: entry e reads its own;
 * 0: the one matrix, stride 0), and C's entry stride in elements; and the
 * raster groups' width in cluster tiles (src/raster.h). */
typedef struct v8_batch {
    uint32_t tiles;
    uint32_t a_mask, b_mask;
    uint32_t raster;
    int64_t stride_c;
} v8_batch;

/* Which worker each cluster of the launch plays (V8_EXP_GPC; src/deal.h):
 * cluster c plays worker[c], a permutation of the launch's clusters. A
 * kernel parameter, so the first load waits on no memory read, and a
 * __grid_constant__ one, so that indexing it reads the parameter in place
 * (passed plainly, the array was copied to a 128-byte stack frame per
 * thread); unread in the other builds. */
typedef struct v8_deal {
    uint8_t worker[HGEMM_DEAL_MAX];
} v8_deal;

/* Where in a k-tile a late part goes out (v8_kernel's LATE_AT). BEFORE:
 * between the k-tile's commit and the wait for the k-tile before, so two
 * WGMMA groups are in flight while the part is staged, but the stage that
 * k-tile had read goes back to the loader only after the part's two
 * warpgroup barriers, stmatrix and TMA store. AFTER: once that stage is
 * released, with one group in flight. Run 93, medians of 3 in one process:
 * the 320 tile (3 stages) AFTER against every part first 0.7% faster at
 * 8192 x 8192 x 1024 and 1.3% at 8192 x 4096 x 14336, level at 4096^3,
 * 6144^3 and 8192 x 6144 x 4096 (run 91's BEFORE: 0.2..0.5% slower); the
 * wide tile (4 stages) AFTER against BEFORE 0.5% slower at 8192 x 8192 x
 * 1024 and 0.3% at 4096^3 and 6144^3. Each tile keeps the order that won
 * (v8_tile's late_at). */
enum v8_late_at {
    V8_LATE_NONE = 0,   /* every part stored at the tile's end (v8-wide-serial, v8-320-serial) */
    V8_LATE_BEFORE = 1, /* before the release of the stage before (the wide tile, since run 91) */
    V8_LATE_AFTER = 2,  /* after it (the 320 tile, since run 93; v8-wide-after) */
};

/* The tile width BN: 256 (the chapter's V8), 128 (the narrow tile, for
 * products whose 128x256 tiles leave SMs idle) or 192 (between the two, for
 * B stored K-major: an MN-major B loads 64-column boxes, and 96 per block is
 * not a whole number of them). A stage holds A's 128 x BK and B's BN x BK:
 * 48 KB in 3 stages, 40 KB in 4 or 32 KB in 5. */
/* DEEP (the deep ring: 1 since run 27, 2 since run 75; v8-3stage is
 * without it): a fourth stage, paid for by staging each consumer's C in
 * parts through 16 KB instead of one 32 KB buffer. DEEP = 1 (v8-halves):
 * two halves of 128 columns through one buffer, the second waiting until
 * the TMA has read the first. Run 27, 8192^3: 1.4678 ms against 1.5119
 * with 3 stages (medians of 3 in one process). DEEP = 2: four parts of 64
 * columns through two 8 KB buffers in turn, so a part waits only for the
 * store of the part two before it (run 75). */
/* BN = 320 (since run 82, cuBLAS's own tile at 8192^3): 3 stages of 56 KB,
 * C in five 64-column parts through two 8 KB buffers (DEEP = 2 only). */
template <int BN, int DEEP = 0> struct v8_tile {
    static_assert(!DEEP || BN == 256 || (BN == 320 && DEEP == 2), "the deep ring is a variant of the wide tiles");
    static_assert(BN != 320 || DEEP == 2, "the 320-wide tile stages C in parts");
    static constexpr int stages = BN == 320   ? V8_STAGES
                                  : BN == 256 ? V8_STAGES + (DEEP > 0)
                                  : BN == 192 ? 4
                                  : BN == 128 ? 5
                                              : 8;
    static constexpr uint32_t tx_bytes = (V8_BM + BN) * BK * 2; /* land in each block per stage */
    static constexpr int c_cols = DEEP == 2 ? F16Q_BOX : DEEP ? BN / 2 : BN; /* columns staged at a time */
    static constexpr int boxes = c_cols / F16Q_BOX;             /* 64x64 boxes of a staging */
    static constexpr int bufs = DEEP == 2 ? 2 : 1;              /* stagings in turn */
    static constexpr int late_at = BN == 320 ? V8_LATE_AFTER : V8_LATE_BEFORE; /* where late parts go */
};

/* How many of a tile's last 64-column parts of C a consumer keeps packed
 * (16 registers each) and stores while the next tile's first k-tiles run
 * (since run 91), instead of before them: the two consumers finish a tile
 * together, so while both stage C the tensor cores have nothing to do.
 * Three of the wide tile's four parts (48 registers beside the
 * accumulator's 128; with all four, 12 bytes spilled even at 240
 * registers), and two of the 320-wide tile's five (32 beside 160). Parts go
 * out one per k-tile (where in it: v8_late_at). Run 91, against
 * v8-wide-serial: 8192 x 8192 x 1024 1.9% faster, 6144^3 and 8192 x 6144 x
 * 4096 0.4..0.6%, 4096^3 and 8192 x 4096 x 14336 level; the 320 tile's two
 * late parts, sent before the stage release, ran 0.2..0.5% slower on four
 * of the six shapes (its ring has 3 stages). */
static constexpr __host__ __device__ int v8_late_parts(int bn, int deep) {
    return deep != 2 ? 0 : bn == 256 ? 3 : bn == 320 ? 2 : 0;
}

template <int BN, int DEEP = 0>
struct __align__(SW128_ALIGN) v8_smem {
    enum { STAGES = v8_tile<BN, DEEP>::stages, C_BOXES = v8_tile<BN, DEEP>::boxes * v8_tile<BN, DEEP>::bufs };
    __half a[STAGES][V8_BM * BK]; /* (STAGES, BM, BK), 128B-swizzled; rows 64g.. for consumer g */
    __half b[STAGES][BN * BK];    /* (STAGES, BN, BK), 128B-swizzled; in a cluster, rows
                                     (BN/CLUSTER)*r.. come from block r's multicast */
    __half c[V8_CONSUMERS][C_BOXES][F16Q_ROWS * F16Q_BOX]; /* consumer g's (64, BN) part of C (or
                                     half of it), as swizzled 64x64 boxes for the TMA store */
    uint64_t full[STAGES];        /* 1 arrival (own loader) + tx_bytes */
    uint64_t empty[STAGES];       /* V8_CONSUMERS x CLUSTER arrivals */
    uint64_t c_full[V8_CONSUMERS]; /* beta != 0: consumer g's part of C loaded into c[g] (1 arrival + bytes) */
    uint64_t part_full[V8_CONSUMERS]; /* split-K's owner: a partial sum copied into consumer g's stage */
};

static_assert(sizeof(((v8_smem<256> *)0)->a[0]) % SW128_ALIGN == 0, "stages must stay 1024-byte aligned");
static_assert(sizeof(((v8_smem<128> *)0)->b[0]) % SW128_ALIGN == 0, "stages must stay 1024-byte aligned");
static_assert((V8_WG_M * BK * 2) % SW128_ALIGN == 0, "each consumer's A slice is 1024-byte aligned");
static_assert((128 / V8_CLUSTER * BK * 2) % SW128_ALIGN == 0, "each block's B slice is 1024-byte aligned");
static_assert((int)V8_WG_M == (int)F16Q_ROWS && (int)V8_BN == (int)F16Q_COLS,
              "a consumer's quarter is the epilogue's shape");
static_assert(sizeof(v8_smem<256>) + SW128_ALIGN <= MAX_SMEM_PER_BLOCK,
              "3 stages of 48 KB and two 32 KB C buffers must fit one block's 227 KB");
static_assert(sizeof(v8_smem<128>) + SW128_ALIGN <= MAX_SMEM_PER_BLOCK,
              "5 stages of 32 KB and two 16 KB C buffers must fit one block's 227 KB");
static_assert(sizeof(v8_smem<256, 2>) == sizeof(v8_smem<256, 1>), "the two deep rings' C buffers take the same 32 KB");
static_assert(sizeof(v8_smem<256, 1>) + SW128_ALIGN <= MAX_SMEM_PER_BLOCK,
              "4 stages of 48 KB and two 16 KB C buffers must fit one block's 227 KB");
static_assert(sizeof(v8_smem<192>) + SW128_ALIGN <= MAX_SMEM_PER_BLOCK,
              "4 stages of 40 KB and two 24 KB C buffers must fit one block's 227 KB");
static_assert(sizeof(((v8_smem<192> *)0)->b[0]) % SW128_ALIGN == 0 && (192 / V8_CLUSTER * BK * 2) % SW128_ALIGN == 0,
              "the 192-wide B stage and each block's slice of it stay 1024-byte aligned");
static_assert(sizeof(v8_smem<64>) + SW128_ALIGN <= MAX_SMEM_PER_BLOCK,
              "8 stages of 24 KB and two 8 KB C buffers must fit one block's 227 KB");
static_assert(sizeof(((v8_smem<64> *)0)->b[0]) % SW128_ALIGN == 0 && (64 / V8_CLUSTER * BK * 2) % SW128_ALIGN == 0,
              "the 64-wide B stage and each block's slice of it stay 1024-byte aligned");
static_assert(sizeof(v8_smem<320, 2>) + SW128_ALIGN <= MAX_SMEM_PER_BLOCK,
              "3 stages of 56 KB and four 8 KB C buffers must fit one block's 227 KB");
static_assert(sizeof(((v8_smem<320, 2> *)0)->b[0]) % SW128_ALIGN == 0 && (320 / V8_CLUSTER * BK * 2) % SW128_ALIGN == 0,
              "the 320-wide B stage and each block's slice of it stay 1024-byte aligned");
/* setmaxnreg.inc takes its registers from those the loader warpgroup gave
 * back (the block's pool), not from the rest of the register file: from
 * the launch's 168, 144 per loader thread, 18432 in all, exactly the
 * consumers' 72 more each. Run 111 showed it: with 32 for the loader, 1024
 * short, every V8 launch hung, though the file had 1024 unallocated. */
static_assert(V8_CONSUMER_REGS * V8_CONSUMER_THREADS + V8_PRODUCER_REGS * WARPGROUP_THREADS <= REGISTERS_PER_SM &&
                  (V8_CONSUMER_REGS - V8_LAUNCH_REGS) * V8_CONSUMER_THREADS <=
                      (V8_LAUNCH_REGS - V8_PRODUCER_REGS) * WARPGROUP_THREADS,
              "the registers the consumers ask for must be those the loader gives back");

/* First row of C (and A) of this block's tile: cluster tile (tile.m, tile.n)
 * is CLUSTER tiles stacked along M, block `rank` takes the rank-th. */
template <int CLUSTER>
static __device__ __forceinline__ int32_t v8_row0(hgemm_tile tile, uint32_t rank) {
    return (int32_t)((tile.m * CLUSTER + rank) * V8_BM);
}

/* The tail split's slot (stream_k.h, hgemm_sk_tail): one consumer's 64 x BN
 * partial sum, fp32, laid out as v8_partial_store writes it. */
template <int BN> struct v8_tail { static constexpr size_t slot_floats = (size_t)V8_WG_M * BN; /* v8_tail_slot_floats */ };
/* v8_stages (v8/plan.c) names the same stages for the host */
static_assert(v8_tile<64>::stages == 8 && v8_tile<128>::stages == 5 && v8_tile<192>::stages == 4 &&
                  v8_tile<320, 2>::stages == 3 && v8_tile<256, 2>::stages == 4 && v8_tile<256, 0>::stages == 3,
              "v8_stages in v8/plan.c names these stages");

/* Workspace slot of consumer g of block `rank` of worker w: one partial sum
 * (64 x 256 fp32, as each thread's 32 float4 in turn: coalesced) and its flag.
 * Float4 q of a slot is registers 4i..4i+3 of thread q % 128, i = q / 128. */
template <int CLUSTER>
static __device__ __forceinline__ uint32_t v8_slot(uint32_t w, uint32_t rank, int g) {
    return (w * CLUSTER + rank) * V8_CONSUMERS + (uint32_t)g;
}


#endif /* HGEMM_V8_CONFIG_CUH */
