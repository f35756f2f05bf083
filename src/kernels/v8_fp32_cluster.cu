/*
 * V8: fp32 accumulation at cuBLAS speed: persistent blocks, moved registers,
 * pairs of blocks that share each B tile, and an epilogue through TMA.
 *
 * Changes from V5 (the last fp32-accumulating version; V6/V7 bought their
 * speed with fp16 accumulators that fp32 cannot use: four 64x256 fp32
 * quarters would need the whole register file):
 *   - persistent blocks, as V7: one block per SM walks the tiles, and the
 *     loader runs on into the next tile while the consumers store the last
 *     one, so no tile pays a ring fill;
 *   - setmaxnreg: the loader is a whole warpgroup (setmaxnreg needs one),
 *     which gives its registers back (24 per thread) so that the consumers
 *     may take 240. ptxas reports the launch bound's 168 registers per
 *     thread, but compiles the code after each setmaxnreg to its count. The
 *     late parts of C (below) live in that room;
 *   - 2-block clusters along M: the two blocks of a cluster compute two
 *     128x256 tiles one above the other, which need the same B tile. Each
 *     block loads one half of it and multicasts it to both, so a block reads
 *     16 KB of A and 16 KB of B from L2 per k-tile instead of 48 KB. A stage
 *     is free again only when the consumers of both blocks have released it
 *     (ring_make_cluster, src/pipeline.cuh);
 *   - the epilogue goes through shared memory: each consumer converts its
 *     64x256 quarter with stmatrix (epilogue_f32.cuh) in four parts of 64
 *     columns through two 8 KB buffers in turn, one thread stores each part
 *     by TMA, and the warpgroup goes on; a part waits only for the store of
 *     the part two before it. Staging C in parts is what pays for the ring's
 *     fourth stage of 48 KB. With beta 0 the wide tile's last three parts
 *     (the 320 tile's last two) are packed to 16-bit pairs at the tile's end
 *     and go out one per k-tile while the next tile's first WGMMAs run
 *     (v8_late_parts, v8_late_at). With beta != 0 one TMA load brings C's
 *     part into the buffer first, and each thread reads its old values
 *     there with ldmatrix (f32q_stage_loaded);
 *   - with a workspace (hgemm_nt_ws), the k-loop is split where whole
 *     tiles would leave SMs idle (src/stream_k.h): a few long tiles in
 *     aligned slices of k (split-K), added by slice 0's worker (up to 4
 *     slices) or by every slice's worker, a share each (more), in the same
 *     launch; too few tiles to fill the GPU but too short to slice, by
 *     stream-K (their k-iterations dealt evenly to every cluster); and where
 *     whole tiles fill the GPU but leave the last round partly empty, that
 *     round's tiles in 2..4 slices (the tail split, hgemm_sk_tail, weighed
 *     by the width rule, v8_rounds). Partial sums are added in a fixed
 *     order, so C is bitwise the same on every run;
 *   - whole tiles whose last round would leave clusters idle go to the
 *     fewest clusters that take as many rounds (hgemm_sk_balance): 4096^3's
 *     256 cluster tiles run 4 full rounds on 64 clusters, not 4 on 66 with
 *     8 idle in the last;
 *   - a block's start and end carry no GPU-wide memory barrier: the
 *     start's cluster barrier arrives relaxed after the barriers' init fence,
 *     and instead of a closing cluster barrier the loader waits for the last
 *     release of each of its stages (ring_producer_tail), the peer's
 *     included; the last TMA stores are waited for until read;
 *   - programmatic dependent launch: every launch carries the attribute, and
 *     each block waits (griddepcontrol.wait) only after its barriers are set
 *     up. It triggers nothing: the next call is scheduled as this one's
 *     blocks exit (a trigger at the block's start or after its last load
 *     placed the next call's blocks early and slowed a long split).
 * Tile and WGMMA group in flight are V5's. 12 warps: consumers in
 * warpgroups 0 and 1, the loader thread in warpgroup 2.
 *
 * One source, many builds: the table's V8 (CLUSTER = 2, the TMA epilogue,
 * the tile width by shape) and the ablations, each with one idea taken out
 * or one width forced, so the chapter can measure it (`hgemm-bench --list`
 * names them all: v8-nocluster, v8-direct, v8-dp, v8-3stage, v8-wide, ...).
 *
 * The table's V8 is also the library's general kernel (hgemm_gemm): the
 * element type T (fp16 or bf16) and the operands' layouts are template
 * parameters, and a batch is one launch.
 *   - A_MN / B_MN: the operand is stored contiguous along M (resp. N), the
 *     transposed forms. TMA loads its k-tile as boxes of 64 MN-elements by
 *     BK k-rows, side by side along MN, and WGMMA reads them through its
 *     transpose bit with an MN-major descriptor (ptx/wgmma.cuh); no
 *     transpose pass, no extra copy. Everything else is unchanged.
 *   - Batches: A, B and C are 3-D tensor maps (the entry is the third
 *     coordinate, so TMA's zero fill and clipping stay per entry), the
 *     walk's tile index runs over every entry's tiles, and the k-loop
 *     splits deal across entries as within one. An operand with
 *     stride 0 is one matrix that every entry reads.
 *   - The tile width: 128x256, or 128x128 or 128x192 where the wide tiles
 *     would leave clusters idle for a round that a narrower one fills (512 x
 *     4096 x 4096: 32 wide tiles for 66 clusters, or 64 narrow ones; 512 x
 *     6144 x 4096: 48 wide, 64 of 192), or 128x64 for small products that
 *     cannot split (1024^3: 64 quarter tiles, 32 narrow), or 128x320
 *     (cuBLAS's own tile at 8192^3: 10% fewer L2 requests per output;
 *     whole tiles or the tail split). The rule, v8_choose_bn, counts
 *     rounds. A wide tile's k-loop of at most two k-tiles (k <= 128) runs
 *     on 3 stages with C staged whole: its epilogue is most of its time
 *     (V8_SHORT_KTILES).
 *
 * Measured on an H200 (2026-12-03), interleaved with cuBLAS in one process
 * (each run's launches of both in alternating slices, so both meet the same
 * clock levels), median [range] of 3 runs, the built-in sweep
 * (bench/results/2026-12-03-h200-run117-sweep.csv):
 *           8192^3: 691 TFLOP/s [690..713], 1.041x cuBLAS COMPUTE_32F [1.018..1.050];
 *           16384^3 0.994x, 4096^3 1.002x, 4096 x 14336 x 4096 0.981x.
 * In fresh processes at 8192^3 (runs 116..122, five sets of five), each
 * process 1.024x..1.059x, each set's median 1.027x..1.038x. So: ahead of
 * cuBLAS at 8192^3, level with it at the other large shapes (a run lands
 * on either side of 1.00 by about 1%), and 1.04x in three fresh processes
 * of five not yet reached. Interleaved windows run at the GPU's sustained
 * clocks, hence fewer TFLOP/s than the first build's figures below, taken
 * after 3 s cooldowns.
 * The first build (2026-11-30, bench/results/2026-11-30-h200-run15-bench.csv;
 * runs 13-17: docs/notes/v8-log.md): 763 TFLOP/s [740..767], 1.001x cuBLAS
 * COMPUTE_32F [0.985..1.017], 1.012x COMPUTE_16F [0.993..1.021].
 * Level with cuBLAS, not ahead: runs 16 and 17 measured 0.975x and 0.996x
 * (medians), fresh processes 0.959x..1.037x. v8-direct 703 [697..725],
 * v8-nocluster 737 [732..761] in run 15.
 * What was tried since on the gap to cuBLAS, each in docs/notes/v8-log.md:
 * the first build's tensor pipe was 93% busy against cuBLAS's 97% (run 16
 * profile), held by the requests its loads made of L2 (runs 72, 73): an
 * L2 prefetch ahead of the ring made
 * every shape 25..35% slower, and clusters of 4 (v8-c4, a quarter of B per
 * block) ran each round of tiles 5..9% faster with 3 s cooldowns (level
 * per tile at sustained clocks, run 104) but fit only 30 clusters, 120
 * SMs, so they lose, beside pairs on the 12 SMs left too (run 106); pairs
 * are the widest clusters that keep all 132 busy.
 * cuBLAS's own tile, 128x320 (v8-320, run 82), moved 9% fewer L2 bytes and
 * ran at a 2.3% higher clock than the 128x256 one, but took 1.4% more
 * cycles: level at 8192^3 (run 83: 1.001x cuBLAS COMPUTE_32F, 1.007x in 3
 * fresh processes), 1.2..1.5% ahead where it needs fewer rounds.
 * Tiles go in raster groups V8_RASTER cluster tiles wide; v8-320-r1..r32
 * walk them in other widths (run 87): the SMs' requests to L2 stayed within
 * 3%, and the narrowest and widest bands read more DRAM and ran slower.
 * Each cluster runs its units in a fixed deal (stream_k.h). The SMs' clocks
 * sit up to 2% apart (run 110: every warpgroup counts the same cycles, the
 * slowest SMs end last); dealing each next unit from a counter instead
 * (v8-dyn, run 113) ran 1.5..3.5% slower, 1.8% even where no unit could
 * move: the hand-off after a unit's last load outlasted the ring. Giving
 * only the tail's second pass to the first clusters to reach it (taken a
 * tile ahead, once per cluster; run 118) was no faster: at 8192^3 faster
 * in two runs of five and slower in three, and 0.8..1.5% slower at two
 * other tail-split shapes.
 * The two consumers wait on the same stages and store their parts of C
 * at once; taking those epilogues in turn, so that one's WGMMAs run while
 * the other stores (v8-turns, runs 115, 116), ran up to 2.2% slower,
 * faster nowhere.
 * Tiles that move fewer bytes per output lost too: 192x256 with three
 * consumers in pairs sharing B (v8-tall, run 119: 0.81 L2 bytes an output
 * against 0.98, but two m64n128k16 a step, as the 512-thread block's 128
 * launch registers cannot hold one m64n256k16) ran 1.4..2.7% slower, and
 * the 320 tile with A in registers (v8-320-ra, run 122: one ldmatrix of A
 * a step for both WGMMAs) 2..5% slower than with A in shared memory.
 * The tall tile with one m64n256k16 a step, in a block without a loader
 * warpgroup (its first thread issuing the loads), came out level with
 * AUTO (run 127: 8192^3 1.037x cuBLAS COMPUTE_32F in pairs along N against
 * AUTO's 1.040x, in the same process), 0.6..1.6% ahead of the same code
 * with the wide tile where both run whole rounds, which itself lost about
 * 1% to V8's loader warpgroup; it was removed. So were three asks of L2 between one round of tiles and
 * the next (run 125: the odd rounds loading k backwards, B under an
 * evict_last policy, A under evict_first) and the maps' L2 promotion at
 * 128 bytes or none instead of 256: each level with the wide tile within
 * the runs' ranges, or slower.
 * The seam between tiles (V8_EXP_SEAM, since run 126): the wide tile runs
 * each k-tile as two m64n128k16 halves and waits at a plain tile's end for
 * the left half only, so the tensor pipe runs the right half while the
 * left half's part of C goes out, and the next tile's left half is issued
 * before the right half's parts are packed. Run 125, beside the plain
 * wide tile (v8-wide) in the same process: level at 128 k-tiles a tile
 * and more, 0.2..0.8% faster at 64 and 96, 1.9% at 16; the halves alone
 * (v8-n128x2) cost 0.5..2.2%, and the seam won 0.4..4.1% back. v8-noseam
 * is V8 without it.
 * What L2 merges (runs 132, 133, docs/notes/v8-log.md): L2's request
 * coalescer merges identical loads that blocks of different clusters make
 * alone, never the pairs' multicasts, so V8's shared B reaches L2 once a
 * pair while A's copies can merge; cuBLAS, with the same roles, merges a
 * third to a half of A's sectors, V8 6%. Walking each raster group down
 * tile rows (v8-seam-rows), which gives the clusters one GPC holds the
 * same A rows, merged a sixth of that difference and timed level. The
 * GPC-aware deal (v8-gpc, run 134, an H100; src/deal.h) measures where each
 * pair lands and gives each GPC's pairs one row of A: A's sectors at 4096 x
 * 4096 x 14336 fell from 54.7 M to 36.0 M (cuBLAS 39.8 M), 15 MHz more
 * clock, 4096^3 1.6% faster, 8192^3 level. V8 plays it since run 136 in
 * the wide tile's seam build and the 320 tile (V8_EXP_DEAL), the map
 * measured after the caller's stream's work, never with a device
 * synchronization (src/kernels/v8_deal.cu). On an H200 (runs 138, 139)
 * 4096^3 +0.8%, 2048 x 4096 x 14336 +2.5%, 8192^3 level (16384^3 +2.9%,
 * but run 144 found the bench's fourth place alone costing 2..3% there);
 * with it every sweep shape of 4096 and up ran at 1.00x cuBLAS or above.
 * At 66 pairs a GPC's 8 pairs straddle two rows of A in three rounds of
 * four; turning each round so that they hold whole rows (v8-turn, run
 * 141, an H100, medians of 5 interleaved runs) took 7% off A's sectors
 * at 8192^3 and ran 0.7% slower there, 1.5% at 8192 x 6144 x 4096: dropped
 * (its 2.3% at 16384^3 is the fourth place's cost, run 144).
 * Every ratio above was taken interleaved, at the clock all the entries'
 * power draws set together: a comparison of cycles. Timed alone, each
 * after a warm-up long enough for its clock to settle (runs 149..152, an
 * H100, 8192^3), V8 settles 30..45 MHz under cuBLAS's clock, and its
 * ratio falls from 1.036..1.038x at one clock to 1.015..1.020x: it needs
 * fewer cycles and draws more power a cycle. The 320 tile settles at
 * cuBLAS's clock; L2 eviction priorities on the loads (B evict_last, A
 * evict_first; run 152) moved the clock alone by 10 MHz at most.
 */
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

enum {
    V8_BM = 128, V8_BN = 256,
    V8_STAGES = 3,
    V8_CONSUMERS = 2,                                        /* warpgroups 0 and 1 */
    V8_CONSUMER_THREADS = V8_CONSUMERS * WARPGROUP_THREADS,
    V8_PRODUCER_WG = V8_CONSUMERS,                           /* warpgroup 2 */
    V8_PRODUCER_THREAD = V8_CONSUMER_THREADS,                /* its first thread issues the loads */
    V8_THREADS = V8_CONSUMER_THREADS + WARPGROUP_THREADS,    /* 384 */
    V8_WG_M = V8_BM / V8_CONSUMERS,                          /* 64 rows per consumer */
    V8_RASTER = 8,                                           /* raster groups, in cluster tiles */
    V8_PRODUCER_REGS = 24,
    V8_LAUNCH_REGS = REGISTERS_PER_SM / V8_THREADS / 8 * 8,  /* 168: each thread's at launch (the
                                                                launch bounds' one block of 384 threads;
                                                                allocated in steps of 8) */
    V8_CONSUMER_REGS = 240,
    V8_CLUSTER = 2,                                          /* blocks per cluster in the table's V8 */
    V8_EPI_BARRIER = 1,                                      /* named barriers 1, 2: one per consumer */
    V8_RING_DONE_BARRIER = 3,                                /* both consumers past their last WGMMA */
    V8_SLOT_FLOATS = V8_WG_M * V8_BN,                        /* one consumer's partial sum, fp32 (room
                                                                for the widest tile) */
    V8_FLAG_BYTES = 4096,                                    /* the workspace's flags: 1024, one per slot of
                                                                up to 512 blocks; the partials start after
                                                                them, at the same offset whatever the grid */
    V8_REDUCE_BATCH = 16,                                    /* split-K's second kernel: slices loaded at once */
    V8_REDUCE_BATCH_IN_KERNEL = 8,                           /* the same in v8_kernel (168 registers) */
    V8_COUNT_FLAGS = 512,                                    /* flags before the in-kernel reduction's
                                                                counters (two per tile part) */
    V8_MN_BOX = SW128_ROW_BYTES / 2,                         /* 64: MN-major boxes' width in elements */
    V8_MN_BOX_BYTES = V8_MN_BOX * BK * 2,                    /* 8 KB: one box, the descriptor's MN step */
};

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
static constexpr size_t v8_tail_slot_floats(int bn) { return (size_t)V8_WG_M * bn; }
template <int BN> struct v8_tail { static constexpr size_t slot_floats = v8_tail_slot_floats(BN); };

/* Workspace slot of consumer g of block `rank` of worker w: one partial sum
 * (64 x 256 fp32, as each thread's 32 float4 in turn: coalesced) and its flag.
 * Float4 q of a slot is registers 4i..4i+3 of thread q % 128, i = q / 128. */
template <int CLUSTER>
static __device__ __forceinline__ uint32_t v8_slot(uint32_t w, uint32_t rank, int g) {
    return (w * CLUSTER + rank) * V8_CONSUMERS + (uint32_t)g;
}

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
 * by one of 128 threads on any SM. */
template <typename T, int BN, int CLUSTER, bool ROWS>
__global__ void __launch_bounds__(WARPGROUP_THREADS, 4) /* registers for every batch load in flight */
v8_split_reduce(const float *partials, gemm_args args, uint32_t ctiles_m, uint32_t tiles_n, hgemm_sk sk,
                v8_batch bt) {
    const uint32_t tiles = sk.tiles;
    const int g = (int)(blockIdx.x % V8_CONSUMERS);
    const uint32_t rank = blockIdx.x / V8_CONSUMERS % CLUSTER;
    const uint32_t worker = blockIdx.x / (V8_CONSUMERS * CLUSTER);
    const uint32_t slice = worker / tiles, tile = worker - slice * tiles;
    const uint32_t entry = tile / bt.tiles;
    const hgemm_tile ct = v8_tile_at<ROWS>(tile - entry * bt.tiles, ctiles_m, tiles_n, bt.raster);
    const int32_t row0 = v8_row0<CLUSTER>(ct, rank), col0 = (int32_t)(ct.n * BN);
    if (row0 >= args.m) return; /* v8_kernel stored nothing for it either */
    gemm_args out = args;
    out.C = (__half *)((T *)args.C + (int64_t)entry * bt.stride_c);
    v8_reduce_share<T, BN, CLUSTER, V8_REDUCE_BATCH>(partials, out, sk, tile, rank, g, slice, row0 + g * V8_WG_M,
                                                     col0, (int)(threadIdx.x % WARPGROUP_THREADS));
}

/* The loads of one operand's k-tile into `dst`: `rows` rows of a K-major
 * operand in one box at (col, row0), or, MN-major, rows/64 boxes of 64
 * MN-elements by BK k-rows at (row0 + 64j, col), the j-th 8 KB further on.
 * `mask` != 0 multicasts to those blocks of the cluster. */
template <int MN, int ROWS>
static __device__ __forceinline__ void v8_load(__half *dst, const CUtensorMap *map, int32_t col, int32_t row0,
                                               int32_t entry, uint64_t *full, uint16_t mask) {
    if constexpr (!MN) {
        if (mask) tma_load_3d_multicast(dst, map, col, row0, entry, full, mask);
        else tma_load_3d(dst, map, col, row0, entry, full);
    } else {
#pragma unroll
        for (int j = 0; j < ROWS / V8_MN_BOX; j++) {
            __half *box = dst + j * V8_MN_BOX * BK;
            if (mask) tma_load_3d_multicast(box, map, row0 + j * V8_MN_BOX, col, entry, full, mask);
            else tma_load_3d(box, map, row0 + j * V8_MN_BOX, col, entry, full);
        }
    }
}

/* The WGMMA descriptor of a K-major or an MN-major tile (v8_load's boxes). */
template <int MN>
static __device__ __forceinline__ uint64_t v8_desc(const __half *tile) {
    return MN ? wgmma_desc_sw128_mn(tile, V8_MN_BOX_BYTES) : wgmma_desc_sw128(tile);
}

enum { V8_EXP_SEAM = 8, V8_EXP_N128X2 = 16, V8_EXP_ROWS = 32, V8_EXP_GPC = 64 };

/* The worker this block's cluster plays: its index, or under V8_EXP_GPC
 * (v8-gpc) the deal's permutation of it, which puts the clusters one GPC
 * holds on neighbouring workers (src/deal.h). */
template <int CLUSTER, int EXP>
static __device__ __forceinline__ uint32_t v8_worker(const v8_deal &deal) {
    const uint32_t c = blockIdx.x / CLUSTER;
    if constexpr ((EXP & V8_EXP_GPC) != 0) return deal.worker[c];
    else return c;
}

/* V8_EXP_SEAM (V8's wide tile since run 126; run 125's probe): the seam between one tile and
 * the next. Both consumers finish a tile together, so from its last
 * WGMMA's end until the next tile's first one is issued the tensor pipe has
 * nothing from either: the wait for the last group, C's first part out,
 * the packing of the late ones, the walk's next unit and the wait for its
 * stage (run 110's phase clocks: about 3 K cycles a tile change, against
 * 1 K a k-tile). Here every k-tile runs as two m64n128k16 halves
 * (v8_ktile_halves), the left columns' (d[0..63], C's parts 0 and 1)
 * before the right ones' (d[64..127], parts 2 and 3), and a unit's first
 * and last k-tiles commit each half as its own group. At a plain whole
 * tile's end (TMA stores, beta 0) only the left group is waited for: part
 * 0 goes out and part 1 is packed while the right group runs. The next
 * unit's first k-tile issues its left group at once, then waits for the
 * tile before's right group, packs its parts 2 and 3 and issues its own
 * right group. Each wait leaves a group of the other half in flight, so
 * across the seam the pipe has half a k-tile (256 cycles a consumer)
 * queued. Other units (the tail split's, split-K's, beta != 0, columns
 * TMA cannot store) wait for both groups at their end and go on as V8's.
 * The cost: every k16 step reads A twice (v8-n128x2 measures it alone,
 * the same halves without the seam). launch_v8 runs the build without
 * the seam where it does not pay (v8_seam_pays). The right half of B starts 128
 * rows (K-major) or two 64-column boxes (MN-major) on: 16 KB either way. */
enum { V8_SEAM_B_STEP = (V8_BN / 2 * SW128_ROW_BYTES) >> 4 };
static_assert(V8_BN / 2 * SW128_ROW_BYTES == V8_BN / 2 / V8_MN_BOX * V8_MN_BOX_BYTES,
              "the right half of B lies 16 KB on in both layouts");

/* Whether a plan runs V8_EXP_SEAM's build: every unit holds two k-tiles or
 * more, and whole tiles end plain. Not with stream-K or split-K (shared
 * workers: stream-K's ranges may be one k-tile long, and no split-K slice
 * ends plain), nor with beta != 0 (no tile ends plain): there the seam's
 * halves would cost and win nothing (run 126, 1024 x 1024 x 16384,
 * split-K: 1.4% slower than v8-noseam). The tail split's slices are
 * HGEMM_SK_TAIL_MIN_ITERS k-tiles at least. */
static inline bool v8_seam_pays(const hgemm_sk &sk, float beta) {
    return sk.k_tiles >= 2 && sk.sk_workers == 0 && beta == 0.0f;
}
static_assert(HGEMM_SK_TAIL_MIN_ITERS >= 2, "a slice holds both of a unit's halves");

/* One k-tile of the wide tile as two m64n128k16 groups' worth: the left
 * columns into d[0..63], then the right ones into d[64..127] (V8_EXP_SEAM,
 * V8_EXP_N128X2). ptxas keeps WGMMAs in flight only where every WGMMA on
 * an accumulator has one shape: an m64n256k16 on d after m64n128k16s on
 * its halves (or before) serialized every WGMMA of the kernel (C7511), so
 * these builds run every k-tile in halves. `commit`: each half its own
 * group (the seam's k-tiles), else one group for both. */
template <typename T, int A_MN, int B_MN>
static __device__ __forceinline__ void v8_ktile_halves(float d[V8_BN / 2], uint64_t desc_a, uint64_t desc_b,
                                                       uint32_t accumulate, bool commit) {
    wgmma_ktile_m64n_f32_ab<T, A_MN, B_MN, V8_BN / 2>(d, desc_a, desc_b, accumulate);
    if (commit) wgmma_commit_group();
    wgmma_ktile_m64n_f32_ab<T, A_MN, B_MN, V8_BN / 2>(d + V8_BN / 4, desc_a, wgmma_desc_add(desc_b, V8_SEAM_B_STEP),
                                                      accumulate);
    if (commit) wgmma_commit_group();
}

/* FENCED (the v8-64-fenced ablation): the block's start and end as V8 had
 * them through run 76 (docs/notes/v8-log.md): release arrivals at both
 * cluster barriers (each a GPU-wide memory barrier in SASS), a closing
 * cluster barrier, and the last stores waited for until their writes are
 * done. EXP: V8_EXP_* bits (0 in the table's builds, but V8_EXP_SEAM in V8's wide tile). */
template <int CLUSTER, bool TMA_EPILOGUE, typename T, int A_MN, int B_MN, int BN, int DEEP, bool FENCED = false,
          int LATE_AT = v8_tile<BN, DEEP>::late_at, int EXP = 0>
__global__ void __launch_bounds__(V8_THREADS, 1)
v8_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
          const __grid_constant__ CUtensorMap tmap_c, const __grid_constant__ CUtensorMap tmap_c_in,
          gemm_args args, uint32_t ctiles_m, uint32_t tiles_n, hgemm_sk sk, float *partials, uint32_t *flags,
          v8_batch bt, uint32_t trigger, const __grid_constant__ v8_deal deal) {
    typedef v8_tile<BN, DEEP> tile_t;
    enum { B_SLICE = BN / CLUSTER, CTA_MASK = (1 << CLUSTER) - 1, STAGES = tile_t::stages, ACC = BN / 2 };
    /* C's parts a tile, and how many of the last ones wait, packed, to be
     * stored during the next tile's first k-tiles (v8_late_parts) */
    enum { PARTS = BN / tile_t::c_cols, LATE = TMA_EPILOGUE && LATE_AT != V8_LATE_NONE ? v8_late_parts(BN, DEEP) : 0,
           PART_REGS = tile_t::c_cols / 4, LATE_REGS = LATE > 0 ? LATE * PART_REGS : 1 };
    static_assert(!B_MN || B_SLICE % V8_MN_BOX == 0, "an MN-major B slice is whole 64-column boxes");
    static_assert(BN != 320 || (!A_MN && !B_MN), "the 320-wide tile is built for K-major operands only");
    extern __shared__ uint8_t smem_raw[];
    v8_smem<BN, DEEP> *sm = (v8_smem<BN, DEEP> *)smem_aligned(smem_raw); /* the same offset in every block */
    const int tid = threadIdx.x, wg = (int)warp_uniform((uint32_t)tid / WARPGROUP_THREADS);
    const pipe_ring ring = ring_make_cluster(sm->full, sm->empty, STAGES, CLUSTER);

    if (tid == 0) {
        ring_init(ring, V8_CONSUMERS);
        for (int g = 0; g < V8_CONSUMERS; g++) {
            mbarrier_init(&sm->c_full[g], 1);
            mbarrier_init(&sm->part_full[g], 1);
        }
        fence_mbarrier_init();
    }
    /* The peer's loads and releases target these barriers: initialised
     * everywhere before anyone starts. fence_mbarrier_init is the release
     * that orders the inits before the arrival, so the arrival itself is
     * relaxed (a release arrival is a GPU-wide memory barrier in SASS). */
    if (CLUSTER > 1 && FENCED)
        cluster_sync();
    else if (CLUSTER > 1)
        cluster_sync_relaxed_arrive();
    else
        __syncthreads();
    /* Programmatic dependent launch (launch_v8 asks for it): this grid may
     * have started while the stream's previous kernel still runs. Up to here
     * only shared memory and the parameters were touched; from here on
     * global memory is, once that kernel's writes are visible. The next
     * kernel may be scheduled from now on (HGEMM_TRIGGER_START; the
     * first thread of a block to trigger triggers it): its blocks cannot
     * share an SM with these (the register file is full), so they start
     * only where one of these has exited, and wait for this grid in turn. */
    griddep_wait();
    if (trigger == HGEMM_TRIGGER_START) griddep_launch_dependents();

    if (wg == V8_PRODUCER_WG) {
        setmaxnreg_dec<V8_PRODUCER_REGS>();
        if (tid == V8_PRODUCER_THREAD) {
            /* a cluster walks its units (stream_k.h); this block is its rank-th */
            const uint32_t worker = v8_worker<CLUSTER, EXP>(deal), rank = CLUSTER > 1 ? cluster_ctarank() : 0;
            prefetch_tensormap(&tmap_a);
            prefetch_tensormap(&tmap_b);
            pipe_state st = {0, 0};
            hgemm_sk_walk walk = hgemm_sk_start(&sk, worker);
            hgemm_sk_unit u;
            while (hgemm_sk_next(&sk, &walk, &u)) {
                const uint32_t entry = u.tile / bt.tiles;
                const hgemm_tile tile =
                    v8_tile_at<(EXP & V8_EXP_ROWS) != 0>(u.tile - entry * bt.tiles, ctiles_m, tiles_n, bt.raster);
                const int32_t a_row = v8_row0<CLUSTER>(tile, rank);
                const int32_t b_row = (int32_t)(tile.n * BN + rank * B_SLICE);
                const int32_t a_entry = (int32_t)(entry & bt.a_mask), b_entry = (int32_t)(entry & bt.b_mask);
                for (uint32_t kt = u.k_begin; kt < u.k_end; kt++, ring_advance(ring, &st)) {
                    const int32_t col = (int32_t)(kt * BK);
                    uint64_t *full = ring_producer_acquire(ring, st, tile_t::tx_bytes);
                    v8_load<A_MN, V8_BM>(sm->a[st.stage], &tmap_a, col, a_row, a_entry, full, 0);
                    v8_load<B_MN, B_SLICE>(&sm->b[st.stage][rank * B_SLICE * BK], &tmap_b, col, b_row, b_entry,
                                           full, CLUSTER > 1 ? CTA_MASK : 0);
                }
            }
            if (trigger == HGEMM_TRIGGER_LATE) griddep_launch_dependents(); /* the block's last load is issued */
            /* The peer's consumers release this block's stages too: stay
             * until the last of those releases has arrived (the block's own
             * loads and the peer's multicasts have all landed by then, each
             * waited for by a consumer here). */
            if (CLUSTER > 1 && !FENCED) ring_producer_tail(ring, st);
        }
        if (FENCED) __syncwarp(); /* converged again for the closing cluster barrier */
    } else {
        setmaxnreg_inc<V8_CONSUMER_REGS>();
        /* read here, not before the roles part: live across the loader's
         * setmaxnreg, they were spilled (DEEP = 2, run 75) */
        const uint32_t worker = v8_worker<CLUSTER, EXP>(deal), rank = CLUSTER > 1 ? cluster_ctarank() : 0;
        const int g = wg; /* rows 64g .. 64g+63 of each tile */
        const bool leader = tid % WARPGROUP_THREADS == 0;
        if (TMA_EPILOGUE && leader) {
            prefetch_tensormap(&tmap_c);
            if (args.beta != 0.0f) prefetch_tensormap(&tmap_c_in);
        }
        float d[ACC] = {}; /* (64, BN) fp32 accumulator */
        uint32_t c_phase = 0;  /* parity of c_full[g]'s next load */
        /* C's parts staged so far: with an odd number of parts a tile (320
         * wide: five through two buffers) the buffer alternates across
         * tiles, not per tile (run 82: a tile's first part in the buffer of
         * the previous tile's last, still being read, failed at k = 64) */
        enum { PARTS_ODD = (BN / tile_t::c_cols) % tile_t::bufs != 0 };
        uint32_t c_part = 0;
        /* One part of C out: wait until the TMA has read the buffer it takes
         * (everyone waits for the leader to know that), stage it with
         * `fill`, and let the leader start its stores. Through one buffer a
         * part waits for the store of the one before (every group read),
         * through two, for the store of the one before that (all but the
         * newest group read). */
        auto part_out = [&](int32_t pcol0, int32_t prow0, int32_t pentry, uint32_t part, auto fill) {
            const int bi = (int)(part % tile_t::bufs) * tile_t::boxes; /* this part's first box */
            if (leader) {
                if constexpr (tile_t::bufs == 2) bulk_wait_group_read_1();
                else bulk_wait_group_read_0();
            }
            named_barrier_sync(V8_EPI_BARRIER + g, WARPGROUP_THREADS);
            fill(sm->c[g][bi], bi);
            fence_proxy_async_shared(); /* the stmatrix writes, before the TMA reads them */
            named_barrier_sync(V8_EPI_BARRIER + g, WARPGROUP_THREADS);
            /* With DEEP = 0 (no late parts) the leader's stores under a
             * branch made ptxas take the tile loop for divergent and build
             * the WGMMA descriptors per lane (the 128-wide tile: 49 R2URs,
             * 17 under predicates; scripts/sass_one.sh). With DEEP = 2 the
             * loop stays uniform with the branch, and loses it with the
             * predicated form: that spills (8 bytes in the 320 tile, 20 in
             * v8-wide-serial), and under the branch too (`DEEP == 0 ||
             * leader` around the predicated stores) the wide seam tile went
             * back to 199 R2URs. So two forms. */
            if constexpr (DEEP == 0) {
#pragma unroll
                for (int b = 0; b < tile_t::boxes; b++)
                    tma_store_3d_if(leader, &tmap_c, pcol0 + b * F16Q_BOX, prow0, pentry, sm->c[g][bi + b]);
                bulk_commit_group_if(leader);
            } else if (leader) {
#pragma unroll
                for (int b = 0; b < tile_t::boxes; b++)
                    tma_store_3d(&tmap_c, pcol0 + b * F16Q_BOX, prow0, pentry, sm->c[g][bi + b]);
                bulk_commit_group();
            }
        };
        /* The last tile's late parts (LATE of them, packed; late_n wait, of
         * which late_done are out), and where they go */
        uint32_t late[LATE_REGS];
        uint32_t late_n = 0, late_done = 0;
        int32_t late_col0 = 0, late_row0 = 0, late_entry = 0;
        auto late_out = [&](int j) { /* j: a constant, so `late` stays in registers */
            part_out(late_col0 + j * tile_t::c_cols, late_row0, late_entry,
                     PARTS_ODD ? c_part++ : (uint32_t)(PARTS - LATE + j),
                     [&](__half *buf, int) { f32q_store_packed<tile_t::c_cols>(buf, &late[j * PART_REGS]); });
        };
        /* while a k-tile's WGMMAs run: the next late part of the last tile out */
        auto late_next = [&]() {
            if constexpr (LATE > 0) {
                if (late_done < late_n) {
#pragma unroll
                    for (int j = 0; j < LATE; j++)
                        if ((uint32_t)j == late_done) late_out(j);
                    if (++late_done == late_n) late_n = late_done = 0;
                }
            }
        };
        /* The late parts are out: their registers hold nothing until the
         * next pack. Zeroed, ptxas need not keep them beside the
         * accumulator and a partial sum (the 320 tile spilled 4 bytes) */
        auto late_clear = [&]() {
            if constexpr (LATE > 0) {
#pragma unroll
                for (int j = 0; j < LATE_REGS; j++) late[j] = 0;
            }
        };
        /* the late parts not yet out, all at once */
        auto late_flush = [&]() {
            if constexpr (LATE > 0) {
#pragma unroll
                for (int j = 0; j < LATE; j++)
                    if ((uint32_t)j >= late_done && (uint32_t)j < late_n) late_out(j);
                late_n = late_done = 0;
            }
        };
        pipe_state st = {0, 0};
        hgemm_sk_walk walk = hgemm_sk_start(&sk, worker);
        hgemm_sk_unit u;
        uint32_t units = 0; /* the phase clocks mark the first unit */
        /* V8_EXP_SEAM: the unit before left its right group in flight
         * (carry), and the stage its last k-tile read (carry_st) to release */
        constexpr bool SEAM = (EXP & V8_EXP_SEAM) != 0;
        static_assert(!SEAM || (BN == 256 && LATE == 3 && LATE_AT == V8_LATE_BEFORE),
                      "the seam is built for the wide tile with three late parts");
        static_assert(!(EXP & V8_EXP_N128X2) || BN == 256, "the k-tile in halves is the wide tile's");
        bool carry = false;
        pipe_state carry_st = st;
        /* parts 2 and 3 of the tile before, once its right group is done */
        auto seam_pack_right = [&]() {
            if constexpr (SEAM) {
                f32q_pack<T, tile_t::c_cols>(&late[PART_REGS], d + 2 * tile_t::c_cols / 2, args.alpha);
                f32q_pack<T, tile_t::c_cols>(&late[2 * PART_REGS], d + 3 * tile_t::c_cols / 2, args.alpha);
                late_n = LATE;
            }
        };
        v8_phase_mark<BN>(true, g, V8_PHASE_START);
        while (hgemm_sk_next(&sk, &walk, &u)) {
            v8_unit_mark(g, units);
            const bool first = units++ == 0;
            const uint32_t entry = u.tile / bt.tiles;
            const hgemm_tile tile =
                v8_tile_at<(EXP & V8_EXP_ROWS) != 0>(u.tile - entry * bt.tiles, ctiles_m, tiles_n, bt.raster);
            const int32_t row0 = v8_row0<CLUSTER>(tile, rank), col0 = (int32_t)(tile.n * BN);
            pipe_state held = st;
            if constexpr (SEAM) {
                /* the next stage's data, consumer g's descriptors of it, and the fence */
                auto seam_stage = [&](uint64_t *desc_a, uint64_t *desc_b) {
                    ring_consumer_wait(ring, st);
                    *desc_a = v8_desc<A_MN>(&sm->a[st.stage][g * V8_WG_M * BK]);
                    *desc_b = v8_desc<B_MN>(sm->b[st.stage]);
                    wgmma_fence();
                };
                { /* the unit's first k-tile, in halves (v8_seam_pays: it has another) */
                    uint64_t desc_a, desc_b;
                    seam_stage(&desc_a, &desc_b);
                    wgmma_ktile_m64n_f32_ab<T, A_MN, B_MN, BN / 2>(d, desc_a, desc_b, 0);
                    wgmma_commit_group();
                    wgmma_wait_group_1(); /* the tile before's right group, if in flight, is done */
                    if (carry) {
                        ring_release_last(ring, carry_st, leader);
                        seam_pack_right();
                    }
                    carry = false;
                    wgmma_fence(); /* the packing read d[64..] before this group writes them */
                    wgmma_ktile_m64n_f32_ab<T, A_MN, B_MN, BN / 2>(d + BN / 4, desc_a,
                                                                   wgmma_desc_add(desc_b, V8_SEAM_B_STEP), 0);
                    wgmma_commit_group();
                    late_next();
                    held = st;
                    ring_advance(ring, &st);
                }
                for (uint32_t kt = u.k_begin + 1; kt + 1 < u.k_end; kt++, ring_advance(ring, &st)) {
                    uint64_t desc_a, desc_b;
                    seam_stage(&desc_a, &desc_b);
                    v8_ktile_halves<T, A_MN, B_MN>(d, desc_a, desc_b, 1, false);
                    wgmma_commit_group();
                    late_next();
                    wgmma_wait_group_1(); /* the k-tile before is done (both its groups, after the first) */
                    ring_release_held(ring, &held, st, leader);
                }
                { /* the last k-tile, in halves */
                    uint64_t desc_a, desc_b;
                    seam_stage(&desc_a, &desc_b);
                    v8_ktile_halves<T, A_MN, B_MN>(d, desc_a, desc_b, 1, true);
                    late_next();
                    wgmma_wait_group_2(); /* the k-tile before is done; both groups of this one in flight */
                    ring_release_held(ring, &held, st, leader);
                    ring_advance(ring, &st);
                }
                /* A plain whole tile waits for its left group only: part 0
                 * out and part 1 packed while the right group runs; the next
                 * unit's first k-tile (or the walk's end) takes the rest */
                const bool plain = args.beta == 0.0f && row0 < args.m && !sk.slices &&
                                   !(sk.tail_slices && u.tile >= sk.dp_tiles) && u.k_begin == 0 &&
                                   u.k_end == sk.k_tiles && !f16q_needs_direct(args, col0, BN);
                if (plain) {
                    wgmma_wait_group_1();
                    late_flush();
                    const int32_t qrow0 = row0 + g * V8_WG_M;
                    gemm_args out = args;
                    out.C = (__half *)((T *)args.C + (int64_t)entry * bt.stride_c);
                    part_out(col0, qrow0, (int32_t)entry, 0, [&](__half *buf, int) {
                        gemm_args no_c = out;
                        no_c.beta = 0.0f;
                        f32q_stage<T, tile_t::c_cols>(buf, d, no_c);
                    });
                    f32q_pack<T, tile_t::c_cols>(&late[0], d + tile_t::c_cols / 2, args.alpha);
                    late_col0 = col0 + tile_t::c_cols;
                    late_row0 = qrow0;
                    late_entry = (int32_t)entry;
                    carry = true;
                    carry_st = held;
                    continue;
                }
            } else {
                for (uint32_t kt = u.k_begin; kt < u.k_end; kt++, ring_advance(ring, &st)) {
                    ring_consumer_wait(ring, st);
                    v8_phase_mark<BN>(first && kt == u.k_begin, g, V8_PHASE_FIRST_DATA);
                    /* consumer g's 64 rows: the g-th 64-row slice (K-major) or the g-th box (MN-major) */
                    const uint64_t desc_a = v8_desc<A_MN>(&sm->a[st.stage][g * V8_WG_M * BK]);
                    const uint64_t desc_b = v8_desc<B_MN>(sm->b[st.stage]);
                    wgmma_fence();
                    /* the unit's first k-tile overwrites d (a 320-wide tile whose
                     * columns from 192 on lie past n still runs its m64n128s: a
                     * branch around them made ptxas serialize every WGMMA, C7520) */
                    if constexpr ((EXP & V8_EXP_N128X2) != 0)
                        v8_ktile_halves<T, A_MN, B_MN>(d, desc_a, desc_b, kt != u.k_begin, false);
                    else
                        wgmma_ktile_m64n_f32_ab<T, A_MN, B_MN, BN>(d, desc_a, desc_b, kt != u.k_begin);
                    wgmma_commit_group();
                    if constexpr (LATE_AT == V8_LATE_BEFORE) late_next();
                    wgmma_wait_group_1(); /* k-tile kt-1 is done; kt stays in flight */
                    ring_release_held(ring, &held, st, leader && kt > u.k_begin);
                    if constexpr (LATE_AT == V8_LATE_AFTER) late_next();
                }
            }
            wgmma_wait_group_0();
            ring_release_last(ring, held, leader); /* a unit has at least one k-tile */
            late_flush(); /* a unit shorter than the late parts: the rest now */
            v8_phase_mark<BN>(first, g, V8_PHASE_KLOOP);

            /* A cluster tile that sticks out below m can leave a block with no
             * rows at all (an odd number of tile rows): it loaded for its peer
             * and has nothing to store, nor to exchange (the same holds for
             * every worker's piece of that tile, so no flag is left up). */
            const int32_t qrow0 = row0 + g * V8_WG_M;
            if (row0 >= args.m) continue;
            /* The tail split (stream_k.h): a slice past the first leaves its
             * partial sum in its unit's slot; slice 0's worker, whose unit
             * comes after every other slice's, adds them in order and stores
             * the tile. Slots of v8_tail<BN> (the workspace's room is
             * checked by launch_v8). */
            const bool tail_unit = sk.tail_slices && u.tile >= sk.dp_tiles;
            if (tail_unit) {
                late_clear();
                const uint32_t slice = hgemm_sk_tail_slice(&sk, u.k_begin);
                if (slice > 0) {
                    const uint32_t slot = v8_slot<CLUSTER>(hgemm_sk_tail_slot(&sk, u.tile, slice), rank, g);
                    v8_partial_put<ACC>(d, partials + slot * v8_tail<BN>::slot_floats, &flags[slot], g, leader);
                    continue;
                }
                for (uint32_t s = 1; s < sk.tail_slices; s++) {
                    const uint32_t slot = v8_slot<CLUSTER>(hgemm_sk_tail_slot(&sk, u.tile, s), rank, g);
                    v8_partial_add<ACC>(d, partials + slot * v8_tail<BN>::slot_floats, &flags[slot], g, leader);
                }
            }
            /* The 320-wide tile runs whole tiles only (launch_v8): no split's
             * code, whose partial-sum slots hold at most 64 x 256 */
            if constexpr (BN <= 256) {
                if (sk.slices && sk.reduce == HGEMM_SK_REDUCE_KERNEL) { /* v8_split_reduce finishes the tile */
                    v8_partial_store<ACC>(d, partials + (size_t)v8_slot<CLUSTER>(worker, rank, g) * V8_SLOT_FLOATS);
                    continue;
                }
                if (sk.slices && sk.reduce == HGEMM_SK_REDUCE_SHARED) {
                    /* Leave this slice's partial sum, count it in on the tile's
                     * counter, wait for every slice's, then reduce this slice's
                     * share of the tile. The last worker past the wait lowers
                     * both counters for the next call (every other worker has
                     * passed the wait by then). */
                    v8_partial_store<ACC>(d, partials + (size_t)v8_slot<CLUSTER>(worker, rank, g) * V8_SLOT_FLOATS);
                    named_barrier_sync(V8_EPI_BARRIER + g, WARPGROUP_THREADS); /* then the leader's release */
                    uint32_t *count = flags + V8_COUNT_FLAGS + 2 * v8_slot<CLUSTER>(u.tile, rank, g);
                    if (leader) atom_add_release_gpu_u32(count, 1);
                    if (v8_lead_warp()) count_wait_gpu(count, sk.slices); /* the leader's warp (v8_lead_warp) */
                    v8_phase_mark<BN>(first, g, V8_PHASE_ALL_IN); /* in every thread: it has a shuffle */
                    if (leader) {
                        if (atom_add_relaxed_gpu_u32(count + 1, 1) == sk.slices - 1) {
                            st_relaxed_gpu_u32(count, 0);
                            st_relaxed_gpu_u32(count + 1, 0);
                        }
                    }
                    named_barrier_sync(V8_EPI_BARRIER + g, WARPGROUP_THREADS);
                    gemm_args out = args;
                    out.C = (__half *)((T *)args.C + (int64_t)entry * bt.stride_c);
                    v8_reduce_share<T, BN, CLUSTER, V8_REDUCE_BATCH_IN_KERNEL>(
                        partials, out, sk, u.tile, rank, g, hgemm_sk_worker_slice(&sk, worker), qrow0, col0,
                        tid % WARPGROUP_THREADS);
                    v8_phase_mark<BN>(first, g, V8_PHASE_REDUCED);
                    /* Split-K gives a worker one unit: leaving the walk here ends
                     * the accumulator's registers before the loads above (with
                     * `continue` the wide tile spilled 40 bytes). */
                    break;
                }
                if (sk.slices) { /* split-K, a few slices: slice 0's worker adds the others' */
                    if (u.k_begin > 0) {
                        const uint32_t slot = v8_slot<CLUSTER>(worker, rank, g);
                        v8_partial_put<ACC>(d, partials + (size_t)slot * V8_SLOT_FLOATS, &flags[slot], g, leader);
                        continue;
                    }
                    /* Consumer 0 stages partials in the ring's A stages, consumer 1
                     * in its B stages, once both have finished their WGMMAs on
                     * them (the peer's multicasts into them all landed before). */
                    constexpr bool staged = sizeof(sm->a) >= ACC * WARPGROUP_THREADS * 4 &&
                                            sizeof(sm->b) >= ACC * WARPGROUP_THREADS * 4;
                    if constexpr (staged) named_barrier_sync(V8_RING_DONE_BARRIER, V8_CONSUMER_THREADS);
                    float *stage = g == 0 ? (float *)sm->a : (float *)sm->b;
                    uint32_t part_phase = 0; /* a worker runs one split unit: this is part_full's first use */
                    for (uint32_t s = 1; s < sk.slices; s++) {
                        const uint32_t slot = v8_slot<CLUSTER>(hgemm_sk_slice_worker(&sk, u.tile, s), rank, g);
                        if constexpr (staged)
                            v8_partial_add_staged<ACC>(d, partials + (size_t)slot * V8_SLOT_FLOATS, &flags[slot],
                                                       stage, &sm->part_full[g], part_phase, g, leader);
                        else
                            v8_partial_add<ACC>(d, partials + (size_t)slot * V8_SLOT_FLOATS, &flags[slot], g, leader);
                    }
                } else if (u.k_begin > 0) { /* a piece of another worker's tile: first in this worker's range */
                    const uint32_t slot = v8_slot<CLUSTER>(worker, rank, g);
                    v8_partial_put<ACC>(d, partials + (size_t)slot * V8_SLOT_FLOATS, &flags[slot], g, leader);
                    continue;
                } else if (u.k_end < sk.k_tiles && !tail_unit) { /* this worker owns a shared tile: add the others', in order */
                    const uint32_t end = hgemm_sk_contributors_end(&sk, worker, &u);
                    for (uint32_t v = worker + 1; v < end; v++) {
                        const uint32_t slot = v8_slot<CLUSTER>(v, rank, g);
                        v8_partial_add<ACC>(d, partials + (size_t)slot * V8_SLOT_FLOATS, &flags[slot], g, leader);
                    }
                }
            }
            gemm_args out = args; /* this entry's C */
            out.C = (__half *)((T *)args.C + (int64_t)entry * bt.stride_c);
            if (!TMA_EPILOGUE || f16q_needs_direct(args, col0, BN)) {
                epilogue_m64n_f32<T, BN, true>(out, d, qrow0, col0);
            } else {
                /* One staging per consumer's part; with DEEP, parts in turn
                 * (registers 4j.. of the accumulator hold columns 8j..). With
                 * beta 0 the last LATE parts are only packed here: they go out
                 * during the next unit's first k-tiles (or after the walk). */
                const bool pack_late = LATE > 0 && args.beta == 0.0f;
#pragma unroll
                for (int h = 0; h < PARTS; h++) {
                    const int32_t hcol0 = col0 + h * tile_t::c_cols;
                    if constexpr (LATE > 0) {
                        if (pack_late && h >= PARTS - LATE) {
                            f32q_pack<T, tile_t::c_cols>(&late[(h - (PARTS - LATE)) * PART_REGS],
                                                         d + h * tile_t::c_cols / 2, args.alpha);
                            continue;
                        }
                    }
                    const uint32_t part = PARTS_ODD ? c_part++ : (uint32_t)h;
                    if (args.beta != 0.0f) {
                        part_out(hcol0, qrow0, (int32_t)entry, part, [&](__half *buf, int bi) {
                            /* C's part into the staging boxes by TMA, then read
                             * from shared memory where each result goes */
                            if (leader) {
                                mbarrier_arrive_expect_tx(&sm->c_full[g], tile_t::boxes * F16Q_BOX_BYTES);
#pragma unroll
                                for (int b = 0; b < tile_t::boxes; b++)
                                    tma_load_3d(sm->c[g][bi + b], &tmap_c_in, hcol0 + b * F16Q_BOX, qrow0,
                                                (int32_t)entry, &sm->c_full[g]);
                            }
                            mbarrier_wait(&sm->c_full[g], c_phase);
                            c_phase ^= 1;
                            f32q_stage_loaded<T, tile_t::c_cols>(buf, d + h * tile_t::c_cols / 2, out);
                        });
                    } else {
                        part_out(hcol0, qrow0, (int32_t)entry, part, [&](__half *buf, int) {
                            gemm_args no_c = out; /* beta 0 here, and ptxas fits 168 registers with this */
                            no_c.beta = 0.0f;     /* copy (given `out` itself it spills 48..76 bytes) */
                            f32q_stage<T, tile_t::c_cols>(buf, d + h * tile_t::c_cols / 2, no_c);
                        });
                    }
                }
                if (pack_late) {
                    late_n = LATE;
                    late_col0 = col0 + (PARTS - LATE) * tile_t::c_cols;
                    late_row0 = qrow0;
                    late_entry = (int32_t)entry;
                }
            }
        }
        if constexpr (SEAM) {
            wgmma_wait_group_0();
            if (carry) { /* the walk's last tile ended in halves */
                ring_release_last(ring, carry_st, leader);
                seam_pack_right();
            }
        }
        late_flush(); /* the walk's last tile */
        /* The last stores have read their staging before the block exits;
         * their writes to C complete on their own, as plain stores do */
        if (TMA_EPILOGUE && leader) {
            if (FENCED) bulk_wait_group_0();
            else bulk_wait_group_read_0();
        }
        v8_phase_mark<BN>(true, g, V8_PHASE_END);
    }
    /* No cluster barrier here: a block's shared memory is written from
     * outside it only by the peer's multicasts, all of which this block's
     * consumers waited for, and its barriers only by the peer's releases,
     * for which the loader waited (ring_producer_tail). */
    if (CLUSTER > 1 && FENCED) cluster_sync();
}
/* end of v8_kernel: scripts/sass_one.sh compiles the file up to here */

#ifdef HGEMM_PHASE_TIMER
/* The phase clocks and the unit clocks (tools/phase_timer.c): both zeroed,
 * or copied out (n values, at most V8_PHASE_SLOTS * V8_PHASES * 2, or
 * V8_PHASE_SLOTS * V8_UNIT_MARKS * 2). */
extern "C" int hgemm__v8_phase_clear(void) {
    static const unsigned long long zeros[V8_PHASE_SLOTS * V8_UNIT_MARKS * 2] = {0};
    static_assert((int)V8_UNIT_MARKS >= (int)V8_PHASES, "one zero buffer clears both clocks");
    if (cudaMemcpyToSymbol(v8_phase_clock, zeros, sizeof(unsigned long long) * V8_PHASE_SLOTS * V8_PHASES * 2) !=
        cudaSuccess)
        return -1;
    return cudaMemcpyToSymbol(v8_unit_clock, zeros, sizeof zeros) == cudaSuccess ? 0 : -1;
}
extern "C" int hgemm__v8_unit_read(unsigned long long *out, size_t n) {
    if (n > (size_t)V8_PHASE_SLOTS * V8_UNIT_MARKS * 2) return -1;
    return cudaMemcpyFromSymbol(out, v8_unit_clock, n * sizeof *out) == cudaSuccess ? 0 : -1;
}
extern "C" int hgemm__v8_phase_read(unsigned long long *out, size_t n) {
    if (n > (size_t)V8_PHASE_SLOTS * V8_PHASES * 2) return -1;
    return cudaMemcpyFromSymbol(out, v8_phase_clock, n * sizeof *out) == cudaSuccess ? 0 : -1;
}
#endif

/* A map over C's m x n entries at `ptr` (ld, C's batch stride), in the
 * epilogue's boxes: C itself, or a separate C input. */
static hgemm_status v8_c_map(const hgemm_problem *p, int64_t batch, const void *ptr, int64_t ld, CUtensorMap *t) {
    return hgemm__tmap_encode_batch(t, p->dtype, ptr, (uint64_t)p->m, (uint64_t)p->n, (uint64_t)ld, (uint64_t)batch,
                                    (uint64_t)p->stride_c, F16Q_ROWS, F16Q_BOX, TMAP_SWIZZLE_128B);
}

/* The three tensor maps, each over the whole batch: A and B as stored (MN-major
 * in boxes of 64 x BK, K-major in boxes of rows x BK), C in the epilogue's boxes. */
template <int CLUSTER, int BN>
static hgemm_status v8_maps(const hgemm_problem *p, int64_t batch, CUtensorMap *ta, CUtensorMap *tb,
                            CUtensorMap *tc) {
    const uint64_t m = (uint64_t)p->m, n = (uint64_t)p->n, k = (uint64_t)p->k;
    const uint64_t na = p->stride_a ? (uint64_t)batch : 1, nb = p->stride_b ? (uint64_t)batch : 1;
    hgemm_status st =
        p->a_mn ? hgemm__tmap_encode_batch(ta, p->dtype, p->A, k, m, (uint64_t)p->lda, na, (uint64_t)p->stride_a,
                                           BK, V8_MN_BOX, TMAP_SWIZZLE_128B)
                : hgemm__tmap_encode_batch(ta, p->dtype, p->A, m, k, (uint64_t)p->lda, na, (uint64_t)p->stride_a,
                                           V8_BM, BK, TMAP_SWIZZLE_128B);
    if (st != HGEMM_SUCCESS) return st;
    st = p->b_mn ? hgemm__tmap_encode_batch(tb, p->dtype, p->B, k, n, (uint64_t)p->ldb, nb, (uint64_t)p->stride_b,
                                            BK, V8_MN_BOX, TMAP_SWIZZLE_128B)
                 : hgemm__tmap_encode_batch(tb, p->dtype, p->B, n, k, (uint64_t)p->ldb, nb, (uint64_t)p->stride_b,
                                            BN / CLUSTER, BK, TMAP_SWIZZLE_128B);
    if (st != HGEMM_SUCCESS) return st;
    return v8_c_map(p, batch, p->C, p->ldc, tc);
}

/* The map the epilogue loads C from (beta != 0): C's own, or a separate C
 * input's (hgemm_nt_options.c_in). */
static hgemm_status v8_c_in_map(const hgemm_problem *p, int64_t batch, const CUtensorMap *tc, CUtensorMap *t) {
    if (p->C_in == NULL) {
        *t = *tc;
        return HGEMM_SUCCESS;
    }
    return v8_c_map(p, batch, p->C_in, p->ldc_in, t);
}

/* How a launch lets the stream's next kernel start (hgemm_problem.pdl):
 * an ablation's own mode, else EXIT. Run 80 (bench/shapes/pdl.txt, us a
 * call, medians of 3): EXIT 27.5 at 256 x 256 x 65536 and 103.2 at 512 x
 * 512 x 131072, where no attribute took 28.9 and 104.1 and a block's
 * trigger, right after its wait or after its last load, 29.8..30.5 and
 * 125.8: the next call's blocks, placed on each SM as this call's leave
 * it, then ran the split slower. On the one-round products EXIT gained as
 * the early triggers did (1000^3 10.5 -> 9.5, 2048^3 26.1 -> 24.9). */
static int v8_pdl_mode(const hgemm_problem *p) {
    return p->pdl != HGEMM_PDL_DEFAULT ? p->pdl : HGEMM_PDL_EXIT;
}

/* Whether the workspace holds a split over `grid` blocks: one flag and one
 * partial sum per consumer of every block. The flags and the partials keep
 * one layout for every grid: calls with different SM targets may share a
 * workspace, and one call's partials must never land on another's flags (a
 * flag left nonzero lets an owner add a partial sum before it is written). */
static int v8_workspace_fits(const hgemm_problem *p, uint32_t grid) {
    const size_t slots = (size_t)grid * V8_CONSUMERS;
    return p->workspace != NULL && slots * sizeof(uint32_t) <= V8_FLAG_BYTES &&
           p->workspace_bytes >= V8_FLAG_BYTES + slots * V8_SLOT_FLOATS * sizeof(float);
}

/* The tail split's units that leave a partial sum (64 x bn fp32 and a flag
 * per consumer of each block of a cluster of `cluster`), at most: as many as
 * the workspace's flags and bytes hold. The workspace must hold the flags
 * (v8_workspace_fits checks more). */
static uint32_t v8_tail_max_units(const hgemm_problem *p, int bn, uint32_t cluster) {
    const size_t unit_slots = (size_t)cluster * V8_CONSUMERS, slot_bytes = v8_tail_slot_floats(bn) * sizeof(float);
    const size_t by_flags = V8_FLAG_BYTES / sizeof(uint32_t) / unit_slots;
    const size_t by_bytes = (p->workspace_bytes - V8_FLAG_BYTES) / (unit_slots * slot_bytes);
    return (uint32_t)(by_flags < by_bytes ? by_flags : by_bytes);
}

/* The work plan launch_v8 runs for `tiles` cluster tiles `bn` wide on
 * `grid` blocks in clusters of `cluster`, under `*split` (HGEMM_SK_*),
 * which it lowers to HGEMM_SK_NONE where no split may run: with a separate
 * C input (the split's second kernel reads C itself), for the 320-wide tile
 * but in the tail split's mode (the other splits' slots hold 64 x 256), and
 * where the workspace does not fit the grid. Then the tail split where
 * whole tiles leave the last round partly empty: its units leave 64 x bn
 * partial sums, one flag each, in the same layout (v8_slot), as many as the
 * workspace holds. A batch's tiles are one sequence (entry by entry), so
 * its last round is cut the same way (8 x 4096^3: 2048 wide tiles, 31
 * rounds and 2 tiles). The width rule weighs this plan (v8_rounds). Last,
 * whole tiles whose last round leaves clusters idle go to the fewest
 * clusters that take as many rounds (hgemm_sk_balance, since run 100; not
 * in v8-allsms): sk.workers may be below grid / cluster. */
static hgemm_sk v8_plan(const hgemm_problem *p, uint32_t tiles, uint32_t grid, uint32_t cluster, int bn,
                        int *split) {
    if (p->C_in != NULL || (bn > 256 && *split != HGEMM_SK_TAIL) || !v8_workspace_fits(p, grid))
        *split = HGEMM_SK_NONE;
    hgemm_sk sk = hgemm_sk_plan(tiles, (uint32_t)hgemm_ceil_div(p->k, BK), grid / cluster, *split);
    if (*split == HGEMM_SK_AUTO || *split == HGEMM_SK_TAIL) hgemm_sk_tail(&sk, v8_tail_max_units(p, bn, cluster));
    if (!p->all_workers) hgemm_sk_balance(&sk);
    return sk;
}

/* What launch_v8 runs on `grid` blocks in clusters of `cluster` (the grid
 * it takes, after hgemm_nt_ex's SM target), for `tiles` cluster tiles `bn`
 * wide under `split` (HGEMM_SK_*): the plan (v8_plan, which may lower the
 * split mode), whether a build with the seam keeps it (v8_seam_pays), and
 * the clusters launched. hgemm__v8_explain reports the same. */
typedef struct v8_schedule {
    hgemm_sk sk;
    int split;     /* the mode v8_plan left */
    int seam;      /* a seam build runs with its seam (else the same build without) */
    uint32_t busy; /* clusters launched */
} v8_schedule;
static v8_schedule v8_schedule_for(const hgemm_problem *p, uint32_t tiles, uint32_t grid, uint32_t cluster, int bn,
                                   int split, bool seam_build) {
    v8_schedule out;
    out.split = split;
    out.sk = v8_plan(p, tiles, grid, cluster, bn, &out.split);
    hgemm_sk &sk = out.sk;
    out.seam = seam_build && v8_seam_pays(sk, p->beta);
    /* The in-kernel reduction's counters sit after the first V8_COUNT_FLAGS
     * flags: where the slots or the tiles' counters would not fit, the
     * second kernel reduces instead (never on an H200: 264 slots, 132). */
    const uint32_t slots = grid * V8_CONSUMERS;
    if (sk.slices && sk.reduce == HGEMM_SK_REDUCE_SHARED &&
        (slots > V8_COUNT_FLAGS ||
         V8_COUNT_FLAGS + 2 * (size_t)sk.tiles * cluster * V8_CONSUMERS > V8_FLAG_BYTES / sizeof(uint32_t)))
        sk.reduce = HGEMM_SK_REDUCE_KERNEL;
    /* Clusters with work: all of the plan's while whole tiles go round
     * (dp_tiles is 0 or a multiple of sk.workers, which hgemm_sk_balance may
     * have made fewer than `workers`), else the stream-K ones or one per tile. */
    out.busy = sk.sk_workers ? sk.sk_workers : (tiles < sk.workers ? tiles : sk.workers);
    if (sk.sk_workers && sk.dp_tiles) out.busy = sk.workers;
    return out;
}

/* Blocks for `blocks` SMs' worth in clusters of `cluster`: whole clusters,
 * rounded down, at least one (include/hgemm.h's sm_count_target). */
static uint32_t v8_whole_clusters(uint32_t blocks, uint32_t cluster) {
    return blocks < cluster ? cluster : blocks / cluster * cluster;
}

template <int CLUSTER, bool TMA_EPILOGUE, typename T, int A_MN, int B_MN, int BN, int DEEP = 0, bool FENCED = false,
          int LATE_AT = v8_tile<BN, DEEP>::late_at, int EXP = 0>
static hgemm_status launch_v8(const hgemm_problem *p, cudaStream_t stream, int split) {
    const int64_t batch = p->batch > 1 ? p->batch : 1;
    CUtensorMap ta, tb, tc, tc_in;
    hgemm_status st = v8_maps<CLUSTER, BN>(p, batch, &ta, &tb, &tc);
    if (st == HGEMM_SUCCESS) st = v8_c_in_map(p, batch, &tc, &tc_in);
    if (st != HGEMM_SUCCESS) return st;
    uint32_t tiles_m = hgemm_ceil_div(p->m, V8_BM), tiles_n = hgemm_ceil_div(p->n, BN);
    uint32_t ctiles_m = hgemm_ceil_div(tiles_m, CLUSTER);
    const void *kernel = (const void *)v8_kernel<CLUSTER, TMA_EPILOGUE, T, A_MN, B_MN, BN, DEEP, FENCED, LATE_AT, EXP>;
    const size_t smem = sizeof(v8_smem<BN, DEEP>) + SW128_ALIGN;
    unsigned grid = 0;
    /* hgemm__supports_v8 has checked that every entry's tiles fit 32 bits at
     * the narrow width or wider; the quarter width has twice as many */
    const uint64_t all_tiles = (uint64_t)ctiles_m * tiles_n * (uint64_t)batch;
    if (all_tiles > UINT32_MAX) return HGEMM_ERROR_NOT_SUPPORTED;
    v8_batch bt = {ctiles_m * tiles_n, p->stride_a ? ~0u : 0u, p->stride_b ? ~0u : 0u,
                   p->raster > 0 ? (uint32_t)p->raster : (uint32_t)V8_RASTER, batch > 1 ? p->stride_c : 0};
    const uint32_t tiles = (uint32_t)all_tiles;
    st = hgemm__persistent_grid(kernel, V8_THREADS, smem, CLUSTER, UINT32_MAX, &grid);
    if (st != HGEMM_SUCCESS) return st;
    /* hgemm_nt_ex's SM target: one block per SM, so at most that many blocks */
    if (p->sm_count > 0 && (unsigned)p->sm_count < grid) grid = v8_whole_clusters((uint32_t)p->sm_count, CLUSTER);
    const size_t flag_bytes = V8_FLAG_BYTES;
    const v8_schedule sched = v8_schedule_for(p, tiles, grid, CLUSTER, BN, split, (EXP & V8_EXP_SEAM) != 0);
    hgemm_sk sk = sched.sk;
    split = sched.split;
    const uint32_t busy = sched.busy;
    /* V8_EXP_SEAM where it does not pay (v8_seam_pays): the same build
     * without the seam, whose shared memory is the same (so is the grid)
     * and whose limit the launch below sets (hgemm__persistent_grid set the
     * seam kernel's only) */
    bool swapped = false;
    if constexpr ((EXP & V8_EXP_SEAM) != 0) {
        if (!sched.seam) {
            kernel = (const void *)v8_kernel<CLUSTER, TMA_EPILOGUE, T, A_MN, B_MN, BN, DEEP, FENCED, LATE_AT,
                                             EXP & ~V8_EXP_SEAM>;
            swapped = true;
        }
    }
    uint32_t *flags = split != HGEMM_SK_NONE ? (uint32_t *)p->workspace : NULL;
    float *partials = split != HGEMM_SK_NONE ? (float *)((char *)p->workspace + flag_bytes) : NULL;
    gemm_args args = make_args(p);
    const int pdl = v8_pdl_mode(p);
    uint32_t trigger = (uint32_t)hgemm__pdl_trigger(pdl);
    /* v8-gpc: the deal for the clusters launched (the identity where the
     * device has no map, or in the other builds, which do not read it) */
    v8_deal deal;
    memset(&deal, 0, sizeof deal);
    if constexpr ((EXP & V8_EXP_GPC) != 0)
        if (CLUSTER == 2) hgemm__v8_deal(stream, busy, V8_THREADS, smem, deal.worker);
    void *params[] = {&ta, &tb, &tc, &tc_in, &args, &ctiles_m, &tiles_n, &sk, &partials, &flags, &bt, &trigger, &deal};
    /* hgemm__persistent_grid has set the shared-memory limit, of every
     * kernel but a swapped one */
    st = swapped ? hgemm__launch_ex(kernel, dim3(busy * CLUSTER), V8_THREADS, smem, CLUSTER, pdl != HGEMM_PDL_OFF,
                                    stream, params)
                 : hgemm__launch_ready_ex(kernel, dim3(busy * CLUSTER), V8_THREADS, smem, CLUSTER,
                                          pdl != HGEMM_PDL_OFF, stream, params);
    if (st != HGEMM_SUCCESS || !sk.slices || sk.reduce != HGEMM_SK_REDUCE_KERNEL) return st;
    /* Split-K: one block per share of each consumer's part of each tile, one
     * share per slot written (sk_workers * CLUSTER * V8_CONSUMERS <= slots). */
    void *reduce_params[] = {&partials, &args, &ctiles_m, &tiles_n, &sk, &bt};
    return hgemm__launch((const void *)v8_split_reduce<T, BN, CLUSTER, (EXP & V8_EXP_ROWS) != 0>,
                         dim3(sk.sk_workers * CLUSTER * V8_CONSUMERS),
                         WARPGROUP_THREADS, 0, 1, stream, reduce_params);
}

/* The tile width for a problem, by the rounds of whole tiles the GPU's
 * `workers` clusters go through, each round costing its tile's share of a
 * 128x256 tile's work times that width's cost per element: 1 for 256,
 * V8_MID_COST for 192 and V8_NARROW_COST for 128 (less reuse of each loaded
 * byte, more barrier and epilogue work per FLOP: 128 measured 1.08..1.18 on
 * the large squares, run 26). The smallest total wins, the wider on a tie.
 * Rounds are counted whole, with a workspace too, but for the tail split's
 * last round (v8_rounds, since run 98): stream-K's shares of a few wide
 * tiles ran far slower than whole narrow tiles (512 x 4096 x 4096: 0.0441
 * ms against 0.0289, run 26). With the tail split the wide tile beat the
 * 320 tile at 512 x 28672 x 4096 (3 whole rounds and half of one, 3.75
 * with V8_TAIL_ROUND_COST, against 3 of 1.25, 3.79: 0.1692 ms against
 * 0.1804, run 98), which whole rounds gave to 320. 8192^3: 16 rounds of
 * wide tiles (16, with the tail split 15.92) against 21 of 192 (15.75 x 1.05) and 32 of narrow ones (18.4): wide.
 * 512 x 4096 x 4096: one round of 32 wide tiles, half the clusters idle
 * (1), against one round of 64 narrow ones (0.575): narrow. 512 x 6144 x
 * 4096: 48 wide tiles for 66 clusters (1), 64 of 192 (0.79), 96 narrow in
 * two rounds (1.15): 192. 320 (V8_W320_COST): 1.01 since run 98, from
 * runs that time both tiles at the same sustained clocks (--interleave):
 * the wide tile ran 1.8..3% faster at 8192^3, 16384^3 and 8192 x 28672 x
 * 4096 (run 97), where 0.98 (run 82, cooldowns) gave them to 320. 1.02
 * since run 137: with the GPC-aware deal in both tiles the wide one ran
 * level or faster at the two shapes 1.01 gave to 320, 4096 x 14336 x 4096
 * (11 rounds of 1.25, 13.89, against 13 whole wide rounds and the tail
 * split, 13.92) and 2048 x 28672 x 4096 (the same rounds): 1.002x cuBLAS
 * against 1.001x and 1.001x against 0.992x (run 137, an H100). Now 320
 * only where its fewer rounds cost less at that price: 8192^3 13 rounds of
 * 1.25 (16.6) against 16 wide ones, wide; 4096^3 4 rounds either way,
 * wide; on 132 SMs no shape of the sweep, the suite or bench/shapes.
 * B stored MN-major takes 256 or 128 only, and 320 needs both operands
 * K-major: at 8192^3 it ran NN at 0.922x cuBLAS and TN at 0.920x (run 82),
 * where the wide tile runs them level (run 77).
 * The quarter tile, 128x64 (since run 66), only where nothing splits (k
 * shorter than HGEMM_SK_MIN_KTILES k-tiles) and the rows of A and B start on
 * 128-byte lines (lda, ldb multiples of 64 elements): its cost
 * V8_QUARTER_COST is assumed, from the WGMMA m64n64's shared-memory bytes
 * per FLOP (1.6x m64n256's) and twice the narrow tile's barriers per FLOP.
 * 1024^3: one round of 32 narrow tiles (0.575) or of 64 quarter ones
 * (0.375): quarter, 0.0097 ms against 0.0105 (run 66; 512^3 0.0069 against
 * 0.0094). At 1000^3 (rows of 2000 bytes) the quarter tile ran slower,
 * 0.0125 against 0.0115: every 128-byte row of a TMA box there spans two
 * lines, and the quarter tile loads A's rows twice as often per FLOP. */
#define V8_NARROW_COST 1.15
#define V8_MID_COST 1.05
#define V8_QUARTER_COST 1.5
#define V8_W320_COST 1.02
#define V8_SPLIT_WIDE_KTILES 64
/* The rounds of `tiles` tiles `bn` wide on `workers` clusters as launch_v8
 * runs them: whole, except where the workspace lets the tail split cut the
 * last round (v8_plan, as launch_v8 makes it; the 320 tile in its own
 * mode). There the last round counts its share, ceil(tail * n /
 * workers) / n for n slices, plus V8_TAIL_ROUND_COST. The units' extra
 * pipeline fills and exchange alone cost about 0.1 of a round: run 97 took
 * 0.76 where the share was 2/3 (8192^3, wide: 1.6184 ms against 16 whole
 * rounds' 1.6426), and 0.79 for 2/3 with the 320 tile (1.6486 against 13
 * rounds' 1.6757). With 0.1 the rule also moved 192 and 128 tiles, and two
 * of those moves ran slower (run 99: 512 x 11008 x 4096 wide 0.0737 ms
 * against 192's 0.0721, 3072 x 6144 x 4096 0.2285 against 0.2235): the
 * other widths' costs per element are a few % off at such shapes. 0.25 is
 * the smallest cost at which no shape of run 99 took a slower width than
 * whole rounds gave it; it moves only 320 tiles to the wide one (512 x
 * 28672 x 4096 0.1841 against 0.1921, 8192 x 14336 x 4096 1.4576 against
 * 1.4748; 20 of 585 shapes of a grid of LLM sizes, none the other way). */
#define V8_TAIL_ROUND_COST 0.25
static double v8_rounds(const hgemm_problem *p, uint64_t tiles, uint32_t workers, int bn) {
    const double whole = (double)((tiles + workers - 1) / workers);
    if (tiles > UINT32_MAX) return whole;
    int split = bn > 256 ? HGEMM_SK_TAIL : HGEMM_SK_AUTO;
    const hgemm_sk sk = v8_plan(p, (uint32_t)tiles, workers * V8_CLUSTER, V8_CLUSTER, bn, &split);
    if (!sk.tail_slices) return whole;
    const uint32_t passes = hgemm_sk_tail_passes(sk.tiles - sk.dp_tiles, sk.tail_slices, workers);
    return (double)(sk.dp_tiles / workers) + (double)passes / sk.tail_slices + V8_TAIL_ROUND_COST;
}

static int v8_choose_bn(const hgemm_problem *p, uint32_t workers) {
    const uint64_t batch = p->batch > 1 ? (uint64_t)p->batch : 1;
    const uint64_t ctiles_m = hgemm_ceil_div(hgemm_ceil_div(p->m, V8_BM), V8_CLUSTER);
    const uint64_t wide = ctiles_m * hgemm_ceil_div(p->n, 256) * batch;
    /* With a workspace, wide tiles few enough for split-K (stream_k.h) keep
     * every cluster busy at the wide tile's cost per element, where each
     * slice is long enough to pay for its partial sum and the second kernel
     * (run 32: 512 x 512 x 131072 and 1024 x 1024 x 32768, 128 k-tiles a
     * slice, 8..9% faster wide; 256 x 256 x 65536 (16), 512 x 4096 x 4096
     * (32), 1000^3 (8): narrow faster). */
    if (p->workspace != NULL && wide <= workers) {
        const uint32_t k_tiles = (uint32_t)hgemm_ceil_div(p->k, BK);
        const uint32_t slices = hgemm_sk_slices((uint32_t)wide, k_tiles, workers);
        if (slices >= 2 && k_tiles / slices >= V8_SPLIT_WIDE_KTILES) return 256;
    }
    static const int widths[5] = {256, 320, 192, 128, 64};
    static const double costs[5] = {1.0, V8_W320_COST, V8_MID_COST, V8_NARROW_COST, V8_QUARTER_COST};
    int best = 256;
    double best_cost = 0.0;
    for (int i = 0; i < 5; i++) {
        if ((widths[i] == 192 || widths[i] == 64) && p->b_mn) continue;
        if (widths[i] == 320 && (p->a_mn || p->b_mn)) continue; /* K-major operands only (run 82) */
        if (widths[i] == 64 && (hgemm_ceil_div(p->k, BK) >= HGEMM_SK_MIN_KTILES || p->lda % 64 || p->ldb % 64))
            continue;
        const uint64_t tiles = ctiles_m * hgemm_ceil_div(p->n, widths[i]) * batch;
        if (tiles > UINT32_MAX) continue; /* the quarter width only: launch_v8 would refuse it */
        const double cost = v8_rounds(p, tiles, workers, widths[i]) * widths[i] / 256.0 * costs[i];
        if (i == 0 || cost < best_cost) {
            best = widths[i];
            best_cost = cost;
        }
    }
    return best;
}

/* Whether a tile `bn` wide runs without clusters: where its tiles, one per
 * block, split k in at least `min_slices` slices (runs 69 and 70). In a
 * cluster each block loads half of B and multicasts it, so a stage is
 * refilled only when both blocks have freed it, and a memory-bound k-loop
 * runs at the pace of the later block. Narrow, any split: 256 x 256 x 65536
 * (33 slices of 31 k-tiles either way) took 0.0291 ms against 0.0307,
 * though each block reads its whole B. Wide, from 8 slices: 512 x 512 x
 * 131072 (16 slices) 0.1035 against 0.1080; at 4 slices level (1024 x 1024 x
 * 32768), at 2 a little slower (512 x 4096 x 14336: 0.0872 against 0.0865).
 * Whole tiles keep the cluster (there B's reuse is the gain), and so does B
 * stored MN-major (its unicast boxes are not what the tests cover). */
#define V8_UNCOUPLED_WIDE_SLICES 8
static int v8_split_uncoupled(const hgemm_problem *p, uint32_t sms, int bn, uint32_t min_slices) {
    /* one block per SM: the grid launch_v8 will take */
    if (p->C_in != NULL || sms < 2 || !v8_workspace_fits(p, sms)) return 0;
    const uint64_t batch = p->batch > 1 ? (uint64_t)p->batch : 1;
    const uint64_t tiles = hgemm_ceil_div(p->m, V8_BM) * (uint64_t)hgemm_ceil_div(p->n, bn) * batch;
    if (tiles > UINT32_MAX) return 0;
    const hgemm_sk sk = hgemm_sk_plan((uint32_t)tiles, (uint32_t)hgemm_ceil_div(p->k, BK), sms, HGEMM_SK_AUTO);
    return sk.slices >= 2 && sk.slices >= min_slices;
}

/* A k-loop of at most this many k-tiles runs the wide tile with 3 stages
 * and each consumer's C staged whole (as v8-3stage) instead of the deep
 * ring's 4 stages and C staged in parts. There a tile is mostly its
 * epilogue, staging C whole waits for nothing between parts, and 3 stages
 * still hold the next tile's loads and one more. From 4 k-tiles on they do
 * not, and each tile starts on a load in flight. 8192 x 8192 x k, 3-stage
 * against the deep ring with C in two halves: k = 128 0.0490 ms against
 * 0.0505 (run 74; 0.0488 against 0.0506 in run 75); k = 256 0.0761 against
 * 0.0699; k = 512 0.1170 against 0.1153; level from k = 1024. The four-part
 * staging (DEEP = 2) was not timed at k = 128. */
#define V8_SHORT_KTILES 2

/* The GPC-aware deal (V8_EXP_GPC, src/deal.h; run 136) in the table's
 * seam build of the wide tile and in its 320 tile, but in the phase clocks'
 * build, where the deal's worker spilled 8 bytes. */
#ifdef HGEMM_PHASE_TIMER
#define V8_EXP_DEAL 0
#else
#define V8_EXP_DEAL V8_EXP_GPC
#endif

/* The table's V8 for a problem on `sms` SMs (after hgemm_nt_ex's SM
 * target): the tile width by shape (v8_choose_bn), whether its blocks go
 * in pairs (v8_split_uncoupled), the ring (DEEP), the seam, and the split
 * mode launch_v8 is given. launch_v8_tile runs it; hgemm__v8_explain
 * reports it. */
typedef struct v8_build {
    int bn, cluster, deep;
    int seam;  /* the seam's build (V8_EXP_SEAM); launch_v8 may still run it without */
    int deal;  /* the GPC-aware deal's build (V8_EXP_DEAL) */
    int split; /* HGEMM_SK_* for launch_v8 */
} v8_build;
static v8_build v8_choose_build(const hgemm_problem *p, uint32_t sms) {
    const uint32_t workers = sms < V8_CLUSTER ? 1 : sms / V8_CLUSTER;
    const int bn = v8_choose_bn(p, workers);
    v8_build b = {bn, V8_CLUSTER, 0, 0, 0, HGEMM_SK_AUTO};
    if (bn == 128) {
        if (!p->b_mn && v8_split_uncoupled(p, sms, 128, 2)) b.cluster = 1;
        return b;
    }
    if (bn == 320) { /* K-major operands only: v8_choose_bn takes it for nothing else */
        b.deep = 2;
        b.split = HGEMM_SK_TAIL;
        b.deal = V8_EXP_DEAL != 0;
        return b;
    }
    if (bn == 192 || bn == 64) return b; /* B K-major only (v8_choose_bn) */
    b.bn = 256;
    b.deep = 2;
    if (!p->b_mn && v8_split_uncoupled(p, sms, 256, V8_UNCOUPLED_WIDE_SLICES)) {
        b.cluster = 1;
        return b;
    }
    if (hgemm_ceil_div(p->k, BK) <= V8_SHORT_KTILES) {
        b.deep = 0;
        return b;
    }
    /* the seam between tiles (V8_EXP_SEAM, since run 126); launch_v8 runs
     * the plain build where the seam does not pay (v8_seam_pays) */
    b.seam = !p->no_seam;
    b.deal = b.seam && V8_EXP_DEAL != 0;
    return b;
}

/* The SMs launch_v8_tile plans for: the device's, or hgemm_nt_ex's target. */
static hgemm_status v8_sms(const hgemm_problem *p, uint32_t *sms) {
    int dev = 0, n = 0;
    cudaError_t err = cudaGetDevice(&dev);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev);
    if (err != cudaSuccess) return hgemm__status_from_cuda(err);
    if (p->sm_count > 0 && p->sm_count < n) n = p->sm_count;
    *sms = (uint32_t)n;
    return HGEMM_SUCCESS;
}

/* The table's V8: v8_choose_build's choice, one build per element type and
 * layout. */
template <typename T, int A_MN, int B_MN>
static hgemm_status launch_v8_tile(const hgemm_problem *p, cudaStream_t stream) {
    uint32_t sms = 0;
    const hgemm_status st = v8_sms(p, &sms);
    if (st != HGEMM_SUCCESS) return st;
    const v8_build b = v8_choose_build(p, sms);
    if (b.bn == 128) {
        if constexpr (!B_MN)
            if (b.cluster == 1) return launch_v8<1, true, T, A_MN, B_MN, 128>(p, stream, b.split);
        return launch_v8<V8_CLUSTER, true, T, A_MN, B_MN, 128>(p, stream, b.split);
    }
    if constexpr (!A_MN && !B_MN)
        if (b.bn == 320)
            return launch_v8<V8_CLUSTER, true, T, A_MN, B_MN, 320, 2, false, v8_tile<320, 2>::late_at, V8_EXP_DEAL>(
                p, stream, b.split);
    if constexpr (!B_MN) {
        if (b.bn == 192) return launch_v8<V8_CLUSTER, true, T, A_MN, B_MN, 192>(p, stream, b.split);
        if (b.bn == 64) return launch_v8<V8_CLUSTER, true, T, A_MN, B_MN, 64>(p, stream, b.split);
        if (b.cluster == 1) return launch_v8<1, true, T, A_MN, B_MN, 256, 2>(p, stream, b.split);
    }
    if (b.deep == 0) return launch_v8<V8_CLUSTER, true, T, A_MN, B_MN, 256, 0>(p, stream, b.split);
    if (!b.seam) return launch_v8<V8_CLUSTER, true, T, A_MN, B_MN, 256, 2>(p, stream, b.split);
    return launch_v8<V8_CLUSTER, true, T, A_MN, B_MN, 256, 2, false, v8_tile<256, 2>::late_at,
                     V8_EXP_SEAM | V8_EXP_DEAL>(p, stream, b.split);
}

template <typename T>
static hgemm_status launch_v8_forms(const hgemm_problem *p, cudaStream_t stream) {
    if (p->a_mn && p->b_mn) return launch_v8_tile<T, 1, 1>(p, stream);
    if (p->a_mn) return launch_v8_tile<T, 1, 0>(p, stream);
    if (p->b_mn) return launch_v8_tile<T, 0, 1>(p, stream);
    return launch_v8_tile<T, 0, 0>(p, stream);
}

/* What V8 serves: the tensor-map limits of A, B and C (src/tensor_map.c),
 * and a batch whose tiles, all entries together, a 32-bit index counts (at
 * the narrow width; the quarter tile, with twice as many, is taken only
 * where its count fits too, and launch_v8 refuses it elsewhere). */
extern "C" hgemm_status hgemm__supports_v8(const hgemm_problem *p) {
    hgemm_status st = hgemm__tmap_supports(p, 1);
    if (st != HGEMM_SUCCESS) return st;
    const uint64_t tiles = (uint64_t)hgemm_ceil_div(hgemm_ceil_div(p->m, V8_BM), V8_CLUSTER) *
                           (uint64_t)hgemm_ceil_div(p->n, 128);
    const uint64_t batch = p->batch > 1 ? (uint64_t)p->batch : 1;
    return tiles * batch <= UINT32_MAX ? HGEMM_SUCCESS : HGEMM_ERROR_NOT_SUPPORTED;
}

/* The ring's stages of each build v8_choose_build names. */
static int v8_stages(int bn, int deep) {
    switch (bn) {
    case 64: return v8_tile<64>::stages;
    case 128: return v8_tile<128>::stages;
    case 192: return v8_tile<192>::stages;
    case 320: return v8_tile<320, 2>::stages;
    default: return deep ? v8_tile<256, 2>::stages : v8_tile<256, 0>::stages;
    }
}

/* What hgemm__launch_v8 would run for `p` on a GPU of `sms` SMs (0: the
 * current device's), by the same choices (v8_choose_build, v8_schedule_for),
 * with no CUDA call when sms > 0. One difference: launch_v8 takes as many
 * pairs as the GPU holds at once (cudaOccupancyMaxActiveClusters), assumed
 * here to be every SM's (so on the H100 and H200, 66 pairs). */
extern "C" hgemm_status hgemm__v8_explain(const hgemm_problem *p, uint32_t sms, hgemm_v8_plan *out) {
    if (sms == 0) {
        const hgemm_status st = v8_sms(p, &sms);
        if (st != HGEMM_SUCCESS) return st;
    } else if (p->sm_count > 0 && (uint32_t)p->sm_count < sms) {
        sms = (uint32_t)p->sm_count;
    }
    const v8_build b = v8_choose_build(p, sms);
    const uint64_t batch = p->batch > 1 ? (uint64_t)p->batch : 1;
    const uint64_t ctiles_m = hgemm_ceil_div(hgemm_ceil_div(p->m, V8_BM), (uint32_t)b.cluster);
    const uint64_t tiles = ctiles_m * hgemm_ceil_div(p->n, (uint32_t)b.bn) * batch;
    if (tiles > UINT32_MAX) return HGEMM_ERROR_NOT_SUPPORTED;
    const uint32_t cluster = (uint32_t)b.cluster;
    const uint32_t grid = v8_whole_clusters(sms, cluster);
    const v8_schedule sc = v8_schedule_for(p, (uint32_t)tiles, grid, cluster, b.bn, b.split, b.seam != 0);
    out->bn = b.bn;
    out->cluster = b.cluster;
    out->stages = v8_stages(b.bn, b.deep);
    out->seam = sc.seam;
    out->deal = b.deal;
    out->split = sc.split;
    out->sms = sms;
    out->tiles = (uint32_t)tiles;
    out->k_tiles = sc.sk.k_tiles;
    out->clusters = sc.busy;
    out->workers = sc.sk.workers;
    out->dp_tiles = sc.sk.dp_tiles;
    out->sk_workers = sc.sk.sk_workers;
    out->slices = sc.sk.slices;
    out->tail_slices = sc.sk.tail_slices;
    out->reduce = sc.sk.reduce;
    return HGEMM_SUCCESS;
}

extern "C" hgemm_status hgemm__launch_v8(const hgemm_problem *p, cudaStream_t stream) {
    return p->dtype == HGEMM_DTYPE_BF16 ? launch_v8_forms<__nv_bfloat16>(p, stream)
                                        : launch_v8_forms<__half>(p, stream);
}

/* Ablations (src/api.c's experiment table): V8 with one idea taken out,
 * fp16 NT, 128x256 tiles; and each tile width alone. */
extern "C" hgemm_status hgemm__launch_v8_nocluster(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<1, true, __half, 0, 0, 256, 2>(p, stream, HGEMM_SK_AUTO);
}

extern "C" hgemm_status hgemm__launch_v8_direct(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, false, __half, 0, 0, 256, 1>(p, stream, HGEMM_SK_AUTO);
}

extern "C" hgemm_status hgemm__launch_v8_dp(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 256, 2>(p, stream, HGEMM_SK_NONE);
}

extern "C" hgemm_status hgemm__launch_v8_wide(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 256, 2>(p, stream, HGEMM_SK_AUTO);
}

extern "C" hgemm_status hgemm__launch_v8_narrow(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 128>(p, stream, HGEMM_SK_AUTO);
}

/* The narrow tile with whole tiles only (no split-K, one launch), for the
 * small products where a split's second launch may cost more than it buys. */
extern "C" hgemm_status hgemm__launch_v8_narrow_dp(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 128>(p, stream, HGEMM_SK_NONE);
}

/* The narrow tile without clusters: each block loads its whole B tile, so
 * no block waits for its partner to free a stage (run 69). */
extern "C" hgemm_status hgemm__launch_v8_narrow_nocluster(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<1, true, __half, 0, 0, 128>(p, stream, HGEMM_SK_AUTO);
}

extern "C" hgemm_status hgemm__launch_v8_192(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 192>(p, stream, HGEMM_SK_AUTO);
}

/* The 320-wide tile at every shape (run 82): cuBLAS's tile at 8192^3; with
 * a workspace, the tail split where it applies (as V8), or whole tiles only
 * (v8-320-whole, V8's 320 tile through run 94). */
extern "C" hgemm_status hgemm__launch_v8_320(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 320, 2>(p, stream, HGEMM_SK_TAIL);
}
/* v8-320-gpc: the 320 tile with the GPC-aware deal, as the table's V8 runs
 * it since run 136 (v8-320: without the deal; in the phase clocks' build,
 * v8-320's). */
extern "C" hgemm_status hgemm__launch_v8_320_gpc(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 320, 2, false, v8_tile<320, 2>::late_at, V8_EXP_DEAL>(
        p, stream, HGEMM_SK_TAIL);
}
extern "C" hgemm_status hgemm__launch_v8_320_whole(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 320, 2>(p, stream, HGEMM_SK_NONE);
}

/* The 320-wide tile in raster groups of other widths (V8: V8_RASTER, 8
 * cluster tiles): which tiles run at once, and so which of them ask L2 for
 * the same k-tile of A or B at about the same time. */
static hgemm_status launch_v8_320_raster(const hgemm_problem *p, cudaStream_t stream, int raster) {
    hgemm_problem q = *p;
    q.raster = raster;
    return hgemm__launch_v8_320(&q, stream);
}
extern "C" hgemm_status hgemm__launch_v8_320_r1(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8_320_raster(p, stream, 1);
}
extern "C" hgemm_status hgemm__launch_v8_320_r2(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8_320_raster(p, stream, 2);
}
extern "C" hgemm_status hgemm__launch_v8_320_r4(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8_320_raster(p, stream, 4);
}
extern "C" hgemm_status hgemm__launch_v8_320_r16(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8_320_raster(p, stream, 16);
}
extern "C" hgemm_status hgemm__launch_v8_320_r32(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8_320_raster(p, stream, 32);
}

extern "C" hgemm_status hgemm__launch_v8_64(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 64>(p, stream, HGEMM_SK_AUTO);
}

/* The table's V8 with one way of programmatic dependent launch everywhere
 * (hgemm_problem.pdl); OFF is V8 as through run 78: each call starts only
 * once the previous kernel in the stream has finished. */
static hgemm_status launch_v8_pdl(const hgemm_problem *p, cudaStream_t stream, int pdl) {
    hgemm_problem q = *p;
    q.pdl = pdl;
    return hgemm__launch_v8(&q, stream);
}
extern "C" hgemm_status hgemm__launch_v8_nopdl(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8_pdl(p, stream, HGEMM_PDL_OFF);
}
extern "C" hgemm_status hgemm__launch_v8_pdl_start(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8_pdl(p, stream, HGEMM_PDL_START);
}
extern "C" hgemm_status hgemm__launch_v8_pdl_late(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8_pdl(p, stream, HGEMM_PDL_LATE);
}

/* The table's V8 with whole tiles dealt over every cluster, as through run
 * 99, where V8 deals them over the fewest clusters that take as many rounds
 * (hgemm_sk_balance). */
/* V8 with the wide tile's plain k-loop: every tile waits for its last
 * WGMMA group before its epilogue, as through run 125 */
extern "C" hgemm_status hgemm__launch_v8_noseam(const hgemm_problem *p, cudaStream_t stream) {
    hgemm_problem q = *p;
    q.no_seam = 1;
    return hgemm__launch_v8(&q, stream);
}

extern "C" hgemm_status hgemm__launch_v8_allsms(const hgemm_problem *p, cudaStream_t stream) {
    hgemm_problem q = *p;
    q.all_workers = 1;
    return hgemm__launch_v8(&q, stream);
}

/* The quarter tile with the block's start and end as through run 76
 * (FENCED), to measure the memory barriers at the small products. */
extern "C" hgemm_status hgemm__launch_v8_64_fenced(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 64, 0, true>(p, stream, HGEMM_SK_AUTO);
}

extern "C" hgemm_status hgemm__launch_v8_3stage(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 256, 0>(p, stream, HGEMM_SK_AUTO);
}

/* Split-K always reduced by the second kernel (before run 52 it was so for
 * any number of slices; now a few slices are added by slice 0's worker). */
extern "C" hgemm_status hgemm__launch_v8_split2k(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 256, 2>(p, stream, HGEMM_SK_SPLIT_KERNEL);
}

/* Stream-K where split-K would apply (the plan before split-K existed). */
extern "C" hgemm_status hgemm__launch_v8_streamk(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 256, 2>(p, stream, HGEMM_SK_STREAM);
}

/* Clusters of 4 along M (v8-c4, run 73): four 128x256 tiles one above the
 * other share each B tile, a quarter loaded by each block, so a block asks
 * L2 for 24 KB a k-tile (16 KB of A, 8 KB of B) instead of 32. */
extern "C" hgemm_status hgemm__launch_v8_c4(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<4, true, __half, 0, 0, 256, 2>(p, stream, HGEMM_SK_AUTO);
}

/* The deep ring with C in two halves through one buffer (DEEP = 1), the
 * table's wide tile from run 27 to run 74, at every k. */
extern "C" hgemm_status hgemm__launch_v8_halves(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 256, 1>(p, stream, HGEMM_SK_AUTO);
}

/* The wide and the 320-wide tile with every part of C stored before the
 * next tile starts, as through run 90 (the wide tile) and run 92 (the 320
 * tile); V8 sends their last three and two parts during the next tile's
 * first k-tiles (v8_late_parts). */
extern "C" hgemm_status hgemm__launch_v8_wide_serial(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 256, 2, false, V8_LATE_NONE>(p, stream, HGEMM_SK_AUTO);
}
extern "C" hgemm_status hgemm__launch_v8_320_serial(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 320, 2, false, V8_LATE_NONE>(p, stream, HGEMM_SK_NONE);
}

/* The wide tile's late parts in the 320 tile's order: after the release of
 * the stage the k-tile before had read (V8_LATE_AFTER; run 93's v8-wide). */
extern "C" hgemm_status hgemm__launch_v8_wide_after(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 256, 2, false, V8_LATE_AFTER>(p, stream, HGEMM_SK_AUTO);
}

/* The wide tile as V8 runs it at 8192^3 (4 stages, C in four parts, the
 * tail split with a workspace), built with V8_EXP_* bits, at every shape
 * (V8 picks the width by shape) */
template <int EXP>
static hgemm_status launch_v8_wide_exp(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 256, 2, false, v8_tile<256, 2>::late_at, EXP>(p, stream,
                                                                                                  HGEMM_SK_AUTO);
}
extern "C" hgemm_status hgemm__launch_v8_seam(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8_wide_exp<V8_EXP_SEAM>(p, stream);
}
extern "C" hgemm_status hgemm__launch_v8_n128x2(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8_wide_exp<V8_EXP_N128X2>(p, stream);
}
/* v8-seam-rows (run 132's probe): v8-seam with the raster walked down tile
 * rows (v8_tile_at). L2's request coalescer merges identical unicast loads
 * from different clusters, never the pairs' multicasts (run 132), and the
 * hardware deals cluster indexes round the GPCs, about 8 apart (run 131's
 * SM map): here the clusters one GPC holds share A's rows, which each
 * block loads alone, where V8's walk gives them B's columns, multicast. */
extern "C" hgemm_status hgemm__launch_v8_seam_rows(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8_wide_exp<V8_EXP_SEAM | V8_EXP_ROWS>(p, stream);
}
/* v8-gpc (run 134's probe): v8-seam with the GPC-aware deal (src/deal.h):
 * each cluster plays the worker at its place in the device's map sorted by
 * GPC, so that the 8 workers a raster group gives one row of A sit in one
 * GPC, where L2's coalescer can merge their loads of it. */
extern "C" hgemm_status hgemm__launch_v8_gpc(const hgemm_problem *p, cudaStream_t stream) {
#ifdef HGEMM_PHASE_TIMER
    /* not in the phase clocks' build: there the deal's worker, held where
     * V8's index is read again from %ctaid, spilled 8 bytes */
    (void)p;
    (void)stream;
    return HGEMM_ERROR_NOT_SUPPORTED;
#else
    return launch_v8_wide_exp<V8_EXP_SEAM | V8_EXP_GPC>(p, stream);
#endif
}
