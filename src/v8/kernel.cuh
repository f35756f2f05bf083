/*
 * V8: fp32 accumulation at cuBLAS speed. v8_kernel: persistent blocks of one
 * loader and two consumer warpgroups (setmaxnreg: 24 and 240 registers),
 * pairs of blocks (clusters along M) that share each B tile by multicast,
 * and an epilogue through shared memory and TMA stores in parts, the last
 * ones sent while the next tile's first k-tiles run; split-K, stream-K and
 * the tail split through a workspace (src/stream_k.h, v8/reduce.cuh).
 *
 * Changes from V5 (the last fp32-accumulating version): persistence (V7's),
 * setmaxnreg, the pair and its multicast, staged TMA stores, the seam
 * between tiles (the wide tile's k-tiles in two halves), tile widths of 64
 * to 320 chosen by cost (v8/plan.c), every layout and bf16.
 *
 * Measurements: docs/tutorial/v8.md and its CSVs in bench/results; the runs,
 * predictions and misses in docs/notes/v8-log.md; the design notes this
 * file's comment used to hold in docs/notes/v8-design.txt.
 */
#ifndef HGEMM_V8_KERNEL_CUH
#define HGEMM_V8_KERNEL_CUH

#include "epilogue_act.cuh"
#include "v8/reduce.cuh"

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

/* V8_EXP_EPI: the fused epilogue's builds (hgemm_options' bias and
 * activation, applied where C's parts are packed or stored; no split, so
 * no partial sum ever needs it). V8_EXP_F32C: an fp32 C (hgemm_options.
 * c_fp32), stored from registers, no split either. */
enum {
    V8_EXP_SEAM = 8,
    V8_EXP_N128X2 = 16,
    V8_EXP_ROWS = 32,
    V8_EXP_GPC = 64,
    V8_EXP_EPI = 128,
    V8_EXP_F32C = 256,
    V8_EXP_TRANS = 512,
};

/* V8_EXP_TRANS: the kernel computes C^T = B A^T (the launch swapped the
 * operands, v8_swap) and stores each part of its accumulator
 * transposed (stmatrix .trans), so that C lands as stored: the weight of a
 * few hundred tokens' product on WGMMA's M side, the tokens on N in one
 * tile that fits them. Whole parts through TMA only, beta 0, no second
 * reduction pass (the launch keeps it to those). */
template <int EXP>
static __device__ __forceinline__ bool v8_needs_direct(const gemm_args &args, int32_t col0, int32_t bn) {
    if constexpr ((EXP & V8_EXP_TRANS) != 0) return false;
    else return f16q_needs_direct(args, col0, bn);
}

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

/* The launch runs the seam's build only where it pays (v8_seam_pays, v8/plan.c):
 * every unit holds two k-tiles or more, and whole tiles end plain. */
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
          v8_batch bt, uint32_t trigger, const __grid_constant__ v8_deal deal,
          const __grid_constant__ hgemm_epi epi) {
    typedef v8_tile<BN, DEEP> tile_t;
    constexpr bool TRANS = (EXP & V8_EXP_TRANS) != 0;
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
            /* TRANS: box b holds C's rows pcol0 + 64b.., columns prow0.. */
            if constexpr (DEEP == 0) {
#pragma unroll
                for (int b = 0; b < tile_t::boxes; b++)
                    tma_store_3d_if(leader, &tmap_c, TRANS ? prow0 : pcol0 + b * F16Q_BOX,
                                    TRANS ? pcol0 + b * F16Q_BOX : prow0, pentry, sm->c[g][bi + b]);
                bulk_commit_group_if(leader);
            } else if (leader) {
#pragma unroll
                for (int b = 0; b < tile_t::boxes; b++)
                    tma_store_3d(&tmap_c, TRANS ? prow0 : pcol0 + b * F16Q_BOX, TRANS ? pcol0 + b * F16Q_BOX : prow0,
                                 pentry, sm->c[g][bi + b]);
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
                     [&](__half *buf, int) { f32q_store_packed<tile_t::c_cols, TRANS>(buf, &late[j * PART_REGS]); });
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
        constexpr bool SEAM = (EXP & V8_EXP_SEAM) != 0, EPI = (EXP & V8_EXP_EPI) != 0,
                       F32C = (EXP & V8_EXP_F32C) != 0;
        static_assert(!TRANS || (TMA_EPILOGUE && !EPI && !F32C), "a transposed C goes out through TMA, plain");
        static_assert(!F32C || (!TMA_EPILOGUE && !EPI && !SEAM), "an fp32 C is stored from registers, alone");
        static_assert(!SEAM || (BN == 256 && LATE == 3 && LATE_AT == V8_LATE_BEFORE),
                      "the seam is built for the wide tile with three late parts");
        static_assert(!(EXP & V8_EXP_N128X2) || BN == 256, "the k-tile in halves is the wide tile's");
        bool carry = false;
        pipe_state carry_st = st;
        /* parts 2 and 3 of the tile before, once its right group is done */
        auto seam_pack_right = [&]() {
            if constexpr (SEAM) {
                if constexpr (EPI) { /* late_col0 is part 1's column */
                    epi_apply<T, tile_t::c_cols>(d + 2 * tile_t::c_cols / 2, args.alpha, epi, args.n,
                                                 late_col0 + tile_t::c_cols);
                    epi_apply<T, tile_t::c_cols>(d + 3 * tile_t::c_cols / 2, args.alpha, epi, args.n,
                                                 late_col0 + 2 * tile_t::c_cols);
                }
                f32q_pack<T, tile_t::c_cols>(&late[PART_REGS], d + 2 * tile_t::c_cols / 2, EPI ? 1.0f : args.alpha);
                f32q_pack<T, tile_t::c_cols>(&late[2 * PART_REGS], d + 3 * tile_t::c_cols / 2,
                                             EPI ? 1.0f : args.alpha);
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
                                   u.k_end == sk.k_tiles && !v8_needs_direct<EXP>(args, col0, BN);
                if (plain) {
                    wgmma_wait_group_1();
                    late_flush();
                    const int32_t qrow0 = row0 + g * V8_WG_M;
                    gemm_args out = args;
                    out.C = (__half *)((T *)args.C + (int64_t)entry * bt.stride_c);
                    if constexpr (EPI) { /* parts 0 and 1 as the activation leaves them, then with alpha 1 */
                        epi_apply<T, tile_t::c_cols>(d, args.alpha, epi, args.n, col0);
                        epi_apply<T, tile_t::c_cols>(d + tile_t::c_cols / 2, args.alpha, epi, args.n,
                                                     col0 + tile_t::c_cols);
                        out.alpha = 1.0f;
                    }
                    part_out(col0, qrow0, (int32_t)entry, 0, [&](__half *buf, int) {
                        gemm_args no_c = out;
                        no_c.beta = 0.0f;
                        f32q_stage<T, tile_t::c_cols, TRANS>(buf, d, no_c);
                    });
                    f32q_pack<T, tile_t::c_cols>(&late[0], d + tile_t::c_cols / 2, out.alpha);
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
            const bool tail_unit = !EPI && !F32C && sk.tail_slices && u.tile >= sk.dp_tiles;
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
            if constexpr (BN <= 256 && !EPI && !F32C) {
                if (!TRANS && sk.slices && sk.reduce == HGEMM_SK_REDUCE_KERNEL) { /* v8_split_reduce finishes the tile */
                    v8_partial_store<ACC>(d, partials + (size_t)v8_slot<CLUSTER>(worker, rank, g) * V8_SLOT_FLOATS);
                    continue;
                }
                if (!TRANS && sk.slices && sk.reduce == HGEMM_SK_REDUCE_SHARED) {
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
            /* The fused epilogue (EPI) replaces each part of the accumulator in
             * place just before it is stored, which then runs with alpha 1: a
             * part at a time, the bias of one part in registers at once. */
            if constexpr (EPI) out.alpha = 1.0f;
            if constexpr (F32C) {
                out.C = (__half *)((float *)args.C + (int64_t)entry * bt.stride_c);
                epilogue_m64n_f32_out_f32<BN>(out, d, qrow0, col0);
            } else if (!TMA_EPILOGUE || (!EPI && v8_needs_direct<EXP>(args, col0, BN))) {
                epilogue_m64n_f32<T, BN, true>(out, d, qrow0, col0);
            } else {
                /* One staging per consumer's part; with DEEP, parts in turn
                 * (registers 4j.. of the accumulator hold columns 8j..). With
                 * beta 0 the last LATE parts are only packed here: they go out
                 * during the next unit's first k-tiles (or after the walk).
                 * The epilogue's builds store a tile TMA cannot (direct) part
                 * by part from registers, in the same loop, so that each part's
                 * epilogue is built once. */
                const bool direct = EPI && v8_needs_direct<EXP>(args, col0, BN);
                const bool pack_late = LATE > 0 && args.beta == 0.0f && !direct;
#pragma unroll
                for (int h = 0; h < PARTS; h++) {
                    const int32_t hcol0 = col0 + h * tile_t::c_cols;
                    if constexpr (EPI) {
                        epi_apply<T, tile_t::c_cols>(d + h * tile_t::c_cols / 2, args.alpha, epi, args.n, hcol0);
                        if (direct) {
                            epilogue_m64n_f32<T, tile_t::c_cols, true>(out, d + h * tile_t::c_cols / 2, qrow0, hcol0);
                            continue;
                        }
                    }
                    if constexpr (LATE > 0) {
                        if (pack_late && h >= PARTS - LATE) {
                            f32q_pack<T, tile_t::c_cols>(&late[(h - (PARTS - LATE)) * PART_REGS],
                                                         d + h * tile_t::c_cols / 2, EPI ? 1.0f : args.alpha);
                            continue;
                        }
                    }
                    const uint32_t part = PARTS_ODD ? c_part++ : (uint32_t)h;
                    if (!TRANS && args.beta != 0.0f) {
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
                            f32q_stage<T, tile_t::c_cols, TRANS>(buf, d + h * tile_t::c_cols / 2, no_c);
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


#endif /* HGEMM_V8_KERNEL_CUH */
