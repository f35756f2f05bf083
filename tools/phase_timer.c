/*
 * hgemm-phase-timer: where one launch of V8 spends its time, phase by phase.
 *
 *   hgemm-phase-timer M N K [LAUNCHES] [CSV]
 *
 * Needs a build configured with -DHGEMM_PHASE_TIMER=ON (scripts/device-check.sh's
 * phase step makes one in build-phase/): there the leader of each of V8's consumer
 * warpgroups writes the global timer and its SM's cycle counter at six points
 * of its first unit of work (enum v8_phase, src/internal.h). The tool runs
 * AUTO on random fp16 operands (C = A * B^T, a whole workspace, as hgemm-bench
 * gives it), checks C against the fp64 reference, then times LAUNCHES
 * (default 5) single launches, each after 3 untimed ones, and prints for each
 * phase when the warpgroups reached it (ns after the launch's first START,
 * min / median / max over warpgroups) and how long each step took inside
 * a warpgroup (ns, and SM cycles); then, at every tile width, the SM
 * cycles from each warpgroup's start to its first unit of work, from each
 * unit's start to the next's (a unit with its share of the tile change),
 * and from its last unit's start to its end. With CSV, every mark goes
 * there: launch,slot,phase,ns,cycles (ns relative to the launch's first
 * START; the units as phases unit0, unit1, ...).
 * HGEMM_PHASE_SMS=N in the environment runs AUTO with sm_count_target N
 * (hgemm_nt_options: V8 on N / 2 pairs), so that the same tiles can be
 * timed with fewer clusters asking L2 at once.
 * Exit status: 0 success, 1 bad arguments, a failed check or a CUDA error,
 * 2 no V8 marks (AUTO ran another kernel at this shape).
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hgemm.h"
#include "internal.h"

enum { WARMUP = 3, VALUES = V8_PHASE_SLOTS * V8_PHASES * 2, UNIT_VALUES = V8_PHASE_SLOTS * V8_UNIT_MARKS * 2 };

static const char *const phase_names[V8_PHASES] = {"start", "first data", "k-loop done", "all slices in",
                                                   "reduced", "end"};

static int cmp_u64(const void *a, const void *b) {
    const unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return (x > y) - (x < y);
}

/* min, median, max of n values (sorted in place); n > 0 */
static void stats3(unsigned long long *v, int n, unsigned long long out[3]) {
    qsort(v, (size_t)n, sizeof *v, cmp_u64);
    out[0] = v[0];
    out[1] = v[n / 2];
    out[2] = v[n - 1];
}

static unsigned long long mark(const unsigned long long *clk, int slot, int phase, int which) {
    return clk[((size_t)slot * V8_PHASES + (size_t)phase) * 2 + (size_t)which];
}

/* One launch's marks: the table on stdout, the rows into csv. Returns the
 * number of warpgroups that marked a start. */
static int report(const unsigned long long *clk, int launch, FILE *csv) {
    static unsigned long long v[V8_PHASE_SLOTS];
    unsigned long long t0 = ~0ull;
    int slots = 0;
    for (int s = 0; s < V8_PHASE_SLOTS; s++) {
        const unsigned long long t = mark(clk, s, V8_PHASE_START, 0);
        if (t == 0) continue;
        slots++;
        if (t < t0) t0 = t;
    }
    if (slots == 0) return 0;
    printf("launch %d: %d consumer warpgroups\n", launch, slots);
    printf("  %-14s %6s  %28s\n", "phase", "groups", "ns after the first start");
    for (int p = 0; p < V8_PHASES; p++) {
        int n = 0;
        for (int s = 0; s < V8_PHASE_SLOTS; s++) {
            const unsigned long long t = mark(clk, s, p, 0);
            if (mark(clk, s, V8_PHASE_START, 0) == 0 || t == 0) continue;
            v[n++] = t - t0;
            if (csv)
                fprintf(csv, "%d,%d,%s,%llu,%llu\n", launch, s, phase_names[p], t - t0, mark(clk, s, p, 1));
        }
        if (n == 0) continue;
        unsigned long long st[3];
        stats3(v, n, st);
        printf("  %-14s %6d  %8llu %8llu %8llu\n", phase_names[p], n, st[0], st[1], st[2]);
    }
    /* each step inside a warpgroup: from one marked phase to the next marked one */
    printf("  %-30s %6s  %26s  %26s\n", "step (inside a warpgroup)", "groups", "ns min / median / max",
           "cycles min / median / max");
    for (int p = 1; p < V8_PHASES; p++) {
        static unsigned long long cyc[V8_PHASE_SLOTS];
        int n = 0, from_phase = -1;
        for (int s = 0; s < V8_PHASE_SLOTS; s++) {
            if (mark(clk, s, V8_PHASE_START, 0) == 0 || mark(clk, s, p, 0) == 0) continue;
            int q = p - 1;
            while (q > 0 && mark(clk, s, q, 0) == 0) q--;
            if (from_phase < 0) from_phase = q;
            if (q != from_phase) continue; /* count a step only between the same two phases */
            v[n] = mark(clk, s, p, 0) - mark(clk, s, q, 0);
            cyc[n] = mark(clk, s, p, 1) - mark(clk, s, q, 1);
            n++;
        }
        if (n == 0) continue;
        unsigned long long a[3], b[3];
        stats3(v, n, a);
        stats3(cyc, n, b);
        char name[64];
        snprintf(name, sizeof name, "%s -> %s", phase_names[from_phase], phase_names[p]);
        printf("  %-30s %6d  %8llu %8llu %8llu  %8llu %8llu %8llu\n", name, n, a[0], a[1], a[2], b[0], b[1],
               b[2]);
    }
    return slots;
}

static unsigned long long unit_mark(const unsigned long long *uc, int slot, int u, int which) {
    return uc[((size_t)slot * V8_UNIT_MARKS + (size_t)u) * 2 + (size_t)which];
}

/* The units of one launch: into csv as phases unit0, unit1, ... (ns from the
 * launch's first START), and on stdout, in SM cycles inside each warpgroup,
 * min / median / max over the warpgroups that ran both ends: from its start
 * to its first unit, from each unit to the next (a unit with its share of
 * the tile change), and from its last unit to its end (the last unit and
 * the walk's close). */
static void report_units(const unsigned long long *clk, const unsigned long long *uc, FILE *csv, int launch) {
    static unsigned long long cyc[V8_PHASE_SLOTS];
    unsigned long long t0 = ~0ull;
    for (int s = 0; s < V8_PHASE_SLOTS; s++) {
        const unsigned long long t = mark(clk, s, V8_PHASE_START, 0);
        if (t != 0 && t < t0) t0 = t;
    }
    int most = 0;
    for (int s = 0; s < V8_PHASE_SLOTS; s++) {
        if (mark(clk, s, V8_PHASE_START, 0) == 0) continue;
        int u = 0;
        while (u < V8_UNIT_MARKS && unit_mark(uc, s, u, 0) != 0) {
            if (csv)
                fprintf(csv, "%d,%d,unit%d,%llu,%llu\n", launch, s, u, unit_mark(uc, s, u, 0) - t0,
                        unit_mark(uc, s, u, 1));
            u++;
        }
        if (u > most) most = u;
    }
    if (most == 0) return;
    printf("  %-30s %6s  %26s\n", "units (inside a warpgroup)", "groups", "cycles min / median / max");
    /* step -1: start -> unit 0; 0 .. most-2: unit u -> u+1; most-1: each
     * warpgroup's own last unit -> its end */
    for (int step = -1; step < most; step++) {
        int n = 0;
        for (int s = 0; s < V8_PHASE_SLOTS; s++) {
            if (mark(clk, s, V8_PHASE_START, 0) == 0 || unit_mark(uc, s, 0, 0) == 0) continue;
            int last = 0;
            while (last + 1 < V8_UNIT_MARKS && unit_mark(uc, s, last + 1, 0) != 0) last++;
            unsigned long long from = 0, to = 0;
            if (step < 0) {
                from = mark(clk, s, V8_PHASE_START, 1);
                to = unit_mark(uc, s, 0, 1);
            } else if (step == most - 1) {
                /* not where the marks ran out before the units did */
                if (mark(clk, s, V8_PHASE_END, 0) == 0 || last == V8_UNIT_MARKS - 1) continue;
                from = unit_mark(uc, s, last, 1);
                to = mark(clk, s, V8_PHASE_END, 1);
            } else if (step < last) {
                from = unit_mark(uc, s, step, 1);
                to = unit_mark(uc, s, step + 1, 1);
            }
            if (from != 0 && to >= from) cyc[n++] = to - from;
        }
        if (n == 0) continue;
        unsigned long long b[3];
        stats3(cyc, n, b);
        char name[64];
        if (step < 0) snprintf(name, sizeof name, "start -> unit 0");
        else if (step == most - 1) snprintf(name, sizeof name, "last unit -> end");
        else snprintf(name, sizeof name, "unit %d -> unit %d", step, step + 1);
        printf("  %-30s %6d  %8llu %8llu %8llu\n", name, n, b[0], b[1], b[2]);
    }
}

int main(int argc, char **argv) {
    const int help = argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"));
    if (help || argc < 4 || argc > 6) {
        fprintf(help ? stdout : stderr,
                "usage: hgemm-phase-timer M N K [LAUNCHES] [CSV]\n"
                "V8's per-phase clocks for one launch of AUTO (a -DHGEMM_PHASE_TIMER=ON build):\n"
                "when each consumer warpgroup started, got its first k-tile, finished its k-loop,\n"
                "saw every split-K slice and finished its reduction and its stores.\n");
        return help ? 0 : 1;
    }
    char *end;
    const int64_t m = strtoll(argv[1], &end, 10), n = strtoll(argv[2], &end, 10), k = strtoll(argv[3], &end, 10);
    const int launches = argc > 4 ? atoi(argv[4]) : 5;
    if (m < 1 || n < 1 || k < 1 || m * n > ((int64_t)1 << 30) || launches < 1 || launches > 100) {
        fprintf(stderr, "hgemm-phase-timer: M, N, K must be positive (M * N <= 2^30), LAUNCHES 1..100\n");
        return 1;
    }
    int sms = 0;
    const char *sms_env = getenv("HGEMM_PHASE_SMS");
    if (sms_env && *sms_env) {
        sms = (int)strtol(sms_env, &end, 10);
        if (*end != '\0' || sms < 1) {
            fprintf(stderr, "hgemm-phase-timer: HGEMM_PHASE_SMS must be a positive SM count, not '%s'\n", sms_env);
            return 1;
        }
    }
    FILE *csv = NULL;
    if (argc > 5) {
        csv = fopen(argv[5], "w");
        if (!csv) {
            perror(argv[5]);
            return 1;
        }
        fprintf(csv, "# tool: hgemm-phase-timer\n# shape: %lld %lld %lld\n", (long long)m, (long long)n,
                (long long)k);
        if (sms) fprintf(csv, "# sm_count_target: %d\n", sms);
    }
    void *A, *B, *C, *ws;
    double *ref;
    HGEMM_CHECK_CUDA(cudaMalloc(&A, (size_t)(m * k) * 2));
    HGEMM_CHECK_CUDA(cudaMalloc(&B, (size_t)(n * k) * 2));
    HGEMM_CHECK_CUDA(cudaMalloc(&C, (size_t)(m * n) * 2));
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&ref, (size_t)(m * n) * sizeof(double)));
    HGEMM_CHECK_CUDA(cudaMalloc(&ws, HGEMM_WORKSPACE_BYTES));
    HGEMM_CHECK_CUDA(cudaMemset(ws, 0, HGEMM_WORKSPACE_BYTES));
    const float scale = hgemm_check_unit_scale(k);
    hgemm_check_fill_random(A, m, k, k, 1, scale, 0);
    hgemm_check_fill_random(B, n, k, k, 2, scale, 0);
    hgemm_check_reference(m, n, k, 1.0, A, k, B, k, 0.0, NULL, 0, ref, n, 0);

    const hgemm_nt_options ws_options = {ws, HGEMM_WORKSPACE_BYTES, sms, NULL, 0};
#define RUN() hgemm_nt_ex(HGEMM_KERNEL_AUTO, m, n, k, 1.0f, A, k, B, k, 0.0f, C, n, &ws_options, 0)
    hgemm_status status = RUN();
    if (status != HGEMM_SUCCESS) {
        fprintf(stderr, "hgemm-phase-timer: hgemm_nt_ex: %s\n", hgemm_status_string(status));
        return 1;
    }
    hgemm_check_stats stats;
    if (!hgemm_check_compare(C, n, ref, n, m, n, HGEMM_CHECK_ATOL_ACC_F32, HGEMM_CHECK_RTOL, &stats, 0)) {
        fprintf(stderr, "hgemm-phase-timer: check failed: %lld of %lld elements (max error %.3e)\n",
                (long long)stats.failed, (long long)stats.count, stats.max_abs_err);
        return 1;
    }
    printf("hgemm-phase-timer: AUTO at %lld x %lld x %lld%s, check passed (max error %.3e)\n", (long long)m,
           (long long)n, (long long)k, sms ? " (sm_count_target from HGEMM_PHASE_SMS)" : "", stats.max_abs_err);
    /* what ran, as the library decides it (hgemm__explain), for the CSV's readers (scripts/unit_clocks.py) */
    hgemm_explanation e;
    if (hgemm__explain(NULL, HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, m, n, k, k, k, 1, 0.0f, &ws_options, 0, &e) ==
            HGEMM_SUCCESS &&
        e.has_v8_plan) {
        const hgemm_v8_plan *v = &e.v8;
        char plan[256];
        snprintf(plan, sizeof plan,
                 "%s bn %d cluster %d stages %d seam %d tiles %u k_tiles %u clusters %u workers %u dp_tiles %u "
                 "tail_slices %u slices %u sk_workers %u",
                 e.row->name, v->bn, v->cluster, v->stages, v->seam, v->tiles, v->k_tiles, v->clusters, v->workers,
                 v->dp_tiles, v->tail_slices, v->slices, v->sk_workers);
        printf("plan: %s\n", plan);
        if (csv) fprintf(csv, "# plan: %s\n", plan);
    }
    if (csv) fprintf(csv, "launch,slot,phase,ns,cycles\n");

    static unsigned long long clk[VALUES], units[UNIT_VALUES];
    cudaEvent_t e0, e1;
    HGEMM_CHECK_CUDA(cudaEventCreate(&e0));
    HGEMM_CHECK_CUDA(cudaEventCreate(&e1));
    int marked = 0;
    for (int l = 1; l <= launches; l++) {
        for (int w = 0; w < WARMUP; w++) RUN();
        HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
        if (hgemm__v8_phase_clear() != 0) return 1;
        HGEMM_CHECK_CUDA(cudaEventRecord(e0, 0));
        status = RUN();
        HGEMM_CHECK_CUDA(cudaEventRecord(e1, 0));
        HGEMM_CHECK_CUDA(cudaEventSynchronize(e1));
        if (status != HGEMM_SUCCESS) return 1;
        float ms = 0;
        HGEMM_CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
        if (hgemm__v8_phase_read(clk, VALUES) != 0) return 1;
        printf("launch %d: %.1f us between the events around it\n", l, ms * 1000.0);
        marked = report(clk, l, csv);
        if (marked == 0) {
            fprintf(stderr, "hgemm-phase-timer: no V8 marks: AUTO did not run V8 at this shape\n");
            return 2;
        }
        if (hgemm__v8_unit_read(units, UNIT_VALUES) != 0) return 1;
        report_units(clk, units, csv, l);
    }
    if (csv) fclose(csv);
    return 0;
}
