/*
 * hgemm-nccl-bench: times a tensor-parallel layer across the GPUs of a host,
 * libhgemm_nccl's overlapped operations beside what they replace.
 *
 * The layer is M tokens x K features in, N features out (default 16384 x 8192
 * -> 8192), over G GPUs (default: every visible one), one host thread per GPU
 * in one process:
 *   ag  all-gather + GEMM ("column parallel"): A (M x K) is split along M
 *       (M/G rows per GPU), the weight B (N x K) along N (N/G rows per GPU).
 *       Each GPU gathers all of A and computes C_local = A * B_local^T, M x N/G.
 *   rs  GEMM + reduce-scatter ("row parallel"): A and B are split along K
 *       (M x K/G and N x K/G per GPU). Each GPU computes a partial M x N over
 *       its K/G; the sum is reduce-scattered along M: M/G x N per GPU.
 * Each GPU's GEMM is 2 M N K / G flops in both.
 *
 * Modes (the CSV's `mode`; `kernel` is the hgemm kernel, `nccl` for the
 * collective alone):
 *   gemm                the local GEMM alone, one hgemm_nt
 *   gemm-chunked        the overlapped path's GEMM launches alone (its pieces)
 *   collective          ncclAllGather / ncclReduceScatter alone
 *   collective-chunked  the overlapped path's communication alone (grouped
 *                       ncclBroadcast / ncclReduce per chunk)
 *   naive               the collective, then the GEMM (ag); the GEMM, then the
 *                       collective (rs); one stream
 *   overlap             libhgemm_nccl, HGEMM_NCCL_CHECK_AGREE (the default)
 *   overlap-local       libhgemm_nccl, HGEMM_NCCL_CHECK_LOCAL
 * Each measurement: a cooldown, `warmup` calls, then `iters` calls back to
 * back with a CUDA event between consecutive calls on every GPU; a call's time
 * is the slowest GPU's; the row reports the median call and the range
 * (ms_min, ms_max). --repeat runs the whole set again (`run`). The overlapped
 * results are checked against the naive ones on sampled rows (max_abs_diff).
 *
 * --copy-engine measures libhgemm_nccl's copy-engine path (include/hgemm_nccl.h,
 * "Copy engines"): the communicators are created with ncclConfig_t.CTAPolicy =
 * NCCL_CTA_POLICY_ZERO, the gathered A and the (b) workspace come from
 * hgemm_nccl_mem_alloc (symmetric windows), the all-gather runs in place (A_local
 * is the rank's rows of A_gathered: NCCL then makes no local copy), and the
 * contexts have copy_engine = 1 and no GEMM SM target. The rows are the same,
 * so that the CSV compares with one of the default mode: the collective alone
 * and the naive sequence of (a) use the same ncclAllGather on the same windows
 * (NCCL runs it on the copy engines); those of (b) stay ncclReduceScatter, which
 * NCCL runs as kernels (it has no copy-engine reduction). The overlapped calls
 * at 1 chunk must take the copy-engine path (checked on every call; more
 * chunks take the kernel path, as the library decides); collective-chunked at
 * 1 chunk is then what that path moves (ag: the all-gather; rs: the swap of
 * the partials, an in-place ncclAllGather on 2 GPUs), so that
 * tools/tp_overlap_table.py's model sees the path's own transfer.
 * overlap-local is not measured: the windows belong to the AGREE context, so
 * a LOCAL context would find none. The CSV says `# copy_engine: on`.
 *
 * Exit status: 0 done; 1 bad arguments, an error or a failed check; 2 fewer
 * than 2 sm_90 GPUs. NVLink multicast (NVLS) stays off unless
 * NCCL_NVLS_ENABLE is already set.
 */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "check.h"
#include "hgemm.h"
#include "hgemm_bench_git.h" /* HGEMM_GIT_COMMIT, generated at build time */
#include "hgemm_nccl.h"
#include "internal.h"        /* hgemm__auto_kernel: which kernel AUTO is */

#ifndef HGEMM_VERSION
#define HGEMM_VERSION "unknown"
#endif

enum {
    DEFAULT_M = 16384, DEFAULT_N = 8192, DEFAULT_K = 8192,
    DEFAULT_WARMUP = 3, DEFAULT_ITERS = 20, DEFAULT_REPEAT = 3,
    MAX_GPUS = 8,
    MAX_LIST = 16,              /* kernels or chunk counts on one command line */
    MAX_ROWS = 4096,            /* CSV rows kept */
    MAX_COUNT = 100000,
    MAX_COOLDOWN_S = 600,
    SAMPLE_ROWS = 32,           /* rows compared between overlapped and naive results */
    SHARD_ALIGN = 8,            /* shards are whole multiples of 8 rows / columns */
    SEED_A = 0xa11ce, SEED_B = 0xb0b,
    EXIT_OK = 0, EXIT_FAIL = 1, EXIT_NO_GPUS = 2,
    TEXT_LEN = 256, COMMAND_LEN = 4096, NVML_DRIVER_LEN = 96,
    NS_PER_S = 1000000000
};
#define DEFAULT_COOLDOWN_S 0.5
#define DIFF_ATOL 1e-2          /* overlapped vs naive: DESIGN.md's fp32-accumulation tolerance */
#define DIFF_RTOL 1e-2

#define CHECK_NCCL(call)                                                                         \
    do {                                                                                         \
        ncclResult_t r_ = (call);                                                                \
        if (r_ != ncclSuccess) {                                                                 \
            fprintf(stderr, "%s:%d: NCCL error %d (%s) in %s\n", __FILE__, __LINE__, (int)r_,     \
                    ncclGetErrorString(r_), #call);                                              \
            exit(EXIT_FAIL);                                                                     \
        }                                                                                        \
    } while (0)
#define CHECK_HGEMM(call)                                                                        \
    do {                                                                                         \
        hgemm_status s_ = (call);                                                                \
        if (s_ != HGEMM_SUCCESS) {                                                               \
            fprintf(stderr, "%s:%d: hgemm: %s in %s\n", __FILE__, __LINE__,                      \
                    hgemm_status_string(s_), #call);                                             \
            exit(EXIT_FAIL);                                                                     \
        }                                                                                        \
    } while (0)
#define CHECK_TP(call)                                                                           \
    do {                                                                                         \
        hgemm_nccl_status s_ = (call);                                                           \
        if (s_ != HGEMM_NCCL_SUCCESS) {                                                          \
            fprintf(stderr, "%s:%d: hgemm_nccl: %s in %s\n", __FILE__, __LINE__,                 \
                    hgemm_nccl_status_string(s_), #call);                                        \
            exit(EXIT_FAIL);                                                                     \
        }                                                                                        \
    } while (0)

typedef enum op { OP_AG, OP_RS, OP_COUNT } op;
static const char *const op_names[OP_COUNT] = {"ag", "rs"};
static const char *const op_splits[OP_COUNT] = {
    "A split along M, B along N; each GPU: M x N/G over all K",
    "A and B split along K; each GPU: partial M x N over K/G, then M/G x N of the sum"};

typedef enum mode {
    MODE_GEMM, MODE_GEMM_CHUNKED, MODE_COLL, MODE_COLL_CHUNKED, MODE_NAIVE, MODE_OVERLAP,
    MODE_OVERLAP_LOCAL, MODE_COUNT
} mode;
static const char *const mode_names[MODE_COUNT] = {"gemm", "gemm-chunked", "collective",
                                                   "collective-chunked", "naive", "overlap",
                                                   "overlap-local"};

typedef struct options {
    int64_t m, n, k;
    int gpus;                        /* 0: every visible GPU */
    int ops[OP_COUNT];
    hgemm_kernel kernels[MAX_LIST];
    int n_kernels;
    int chunks[MAX_LIST];
    int n_chunks;
    int64_t warmup, iters, repeat;
    double cooldown_s;
    int nccl_max_ctas;               /* 0: NCCL's own choice */
    int gemm_sms;                    /* the overlapped calls' GEMM SM target; 0: every SM */
    int copy_engine;                 /* --copy-engine */
    int timeline_chunks_set;         /* --timeline-chunks given (else 4, or 1 with --copy-engine) */
    const char *csv, *timeline;
    int timeline_chunks;
} options;

/* One measurement, done by every rank in lockstep. */
typedef struct job {
    op o;
    mode md;
    hgemm_kernel kernel;             /* for the GEMM modes */
    int chunks;
} job;

typedef struct row {
    job j;
    int run;
    double ms, ms_min, ms_max, max_abs_diff; /* max_abs_diff < 0: not checked */
} row;

typedef struct rank_ctx rank_ctx;

typedef struct shared {
    options opt;
    int gpus;
    pthread_barrier_t barrier;
    ncclComm_t comms[MAX_GPUS];
    rank_ctx *ranks;
    double *times;                   /* [gpus][iters]: each rank's call times of the measurement */
    row rows[MAX_ROWS];
    int n_rows;
    int failures;
    FILE *timeline;
} shared;

struct rank_ctx {
    shared *sh;
    int rank, device;
    cudaStream_t stream;
    hgemm_nccl_ctx *agree, *local;
    cudaEvent_t *events;             /* iters + 1, timing */
    int path_errors;                 /* --copy-engine: overlapped calls on the wrong path */
    /* ag: A_local (M/G x K), A_full (M x K), B (N/G x K), C and C_naive (M x N/G).
     * rs: A_local (M x K/G), B (N x K/G), P (the partial, M x N), C and C_naive (M/G x N). */
    void *a_local[OP_COUNT], *b[OP_COUNT], *c[OP_COUNT], *c_naive[OP_COUNT];
    void *a_full, *p;
    size_t p_bytes;
    int64_t counts[MAX_GPUS];        /* M/G each: the row split of both operations */
};

/* ---- command line ---------------------------------------------------------------- */

static void usage(FILE *f, const char *program) {
    fprintf(f,
            "usage: %s [options]\n"
            "  --m M --n N --k K    the layer: M tokens, K in, N out (default %d %d %d);\n"
            "                       M, N and K must be multiples of 8 x GPUs\n"
            "  --gpus G             GPUs to use (default: every visible one; at least 2)\n"
            "  --ops LIST           ag,rs (default both)\n"
            "  --kernels LIST       hgemm kernels for the GEMM (default auto,v5)\n"
            "  --chunks LIST        chunk counts of the chunked and overlapped modes (default 1,2,4,8)\n"
            "  --warmup N --iters N --repeat N   (default %d, %d, %d)\n"
            "  --cooldown S         seconds of sleep before each measurement (default %g)\n"
            "  --nccl-max-ctas N    cap NCCL's blocks per collective (ncclConfig_t.maxCTAs)\n"
            "  --gemm-sms N         the overlapped calls run their GEMMs on at most N SMs\n"
            "                       (hgemm_nccl_config.gemm_sm_count), leaving the rest to\n"
            "                       NCCL; the GEMM-alone and naive modes use every SM\n"
            "  --copy-engine        NCCL's copy-engine (zero-SM) collectives: communicators with\n"
            "                       CTAPolicy NCCL_CTA_POLICY_ZERO, A_gathered and the rs workspace\n"
            "                       from hgemm_nccl_mem_alloc (the all-gather in place), contexts\n"
            "                       with copy_engine = 1 and every SM for the GEMMs (not with\n"
            "                       --gemm-sms); the copy-engine path needs --chunks 1 (the\n"
            "                       other counts measure the kernel path); ag's collective and\n"
            "                       naive rows use the same ncclAllGather, rs's stay\n"
            "                       ncclReduceScatter (kernels); collective-chunked at 1 chunk\n"
            "                       is the path's own transfer; no overlap-local rows;\n"
            "                       NCCL 2.28 or newer\n"
            "  --csv FILE           one row per (op, mode, kernel, chunks, run), with metadata\n"
            "  --timeline FILE      per-chunk event times of one overlapped call per op\n"
            "  --timeline-chunks C  chunks of that call (default 4; 1 with --copy-engine)\n"
            "  --help, --version\n",
            program, DEFAULT_M, DEFAULT_N, DEFAULT_K, DEFAULT_WARMUP, DEFAULT_ITERS, DEFAULT_REPEAT,
            DEFAULT_COOLDOWN_S);
}

static int bad_usage(const char *program, const char *what, const char *value) {
    fprintf(stderr, "%s: %s%s%s\n", program, what, value ? ": " : "", value ? value : "");
    usage(stderr, program);
    return EXIT_FAIL;
}

static int parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    char *end = NULL;
    if (s == NULL || *s == '\0') return 0;
    long long v = strtoll(s, &end, 10);
    if (*end != '\0' || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

static int parse_kernel_list(const char *list, options *o) {
    char buf[TEXT_LEN];
    if (strlen(list) >= sizeof buf) return 0;
    strcpy(buf, list);
    o->n_kernels = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->n_kernels == MAX_LIST) return 0;
        hgemm_kernel found = (hgemm_kernel)-1;
        for (int id = HGEMM_KERNEL_AUTO; hgemm_kernel_name((hgemm_kernel)id) != NULL; id++)
            if (strcmp(hgemm_kernel_name((hgemm_kernel)id), t) == 0) found = (hgemm_kernel)id;
        if ((int)found < 0) return 0;
        o->kernels[o->n_kernels++] = found;
    }
    return o->n_kernels > 0;
}

static int parse_chunk_list(const char *list, options *o) {
    char buf[TEXT_LEN];
    if (strlen(list) >= sizeof buf) return 0;
    strcpy(buf, list);
    o->n_chunks = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int64_t v = 0;
        if (o->n_chunks == MAX_LIST || !parse_int(t, 1, HGEMM_NCCL_MAX_CHUNKS, &v)) return 0;
        o->chunks[o->n_chunks++] = (int)v;
    }
    return o->n_chunks > 0;
}

/* -1: go on; otherwise the exit status. */
static int parse_args(int argc, char **argv, options *o) {
    const char *program = argv[0];
    memset(o, 0, sizeof *o);
    o->m = DEFAULT_M;
    o->n = DEFAULT_N;
    o->k = DEFAULT_K;
    o->ops[OP_AG] = o->ops[OP_RS] = 1;
    o->warmup = DEFAULT_WARMUP;
    o->iters = DEFAULT_ITERS;
    o->repeat = DEFAULT_REPEAT;
    o->cooldown_s = DEFAULT_COOLDOWN_S;
    o->timeline_chunks = 4;
    parse_kernel_list("auto,v5", o);
    parse_chunk_list("1,2,4,8", o);
    /* Every option but --help, --version and --copy-engine takes a value. */
    for (int i = 1, step = 2; i < argc; i += step, step = 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t x = 0;
        if (strcmp(a, "--copy-engine") == 0) {
            o->copy_engine = 1;
            step = 1;
        } else if (strcmp(a, "--help") == 0) {
            usage(stdout, program);
            return EXIT_OK;
        } else if (strcmp(a, "--version") == 0) {
            printf("%s %s (commit %s)\n", program, HGEMM_VERSION, HGEMM_GIT_COMMIT);
            return EXIT_OK;
        } else if (v == NULL) {
            return bad_usage(program, "unknown option or missing value", a);
        } else if (strcmp(a, "--m") == 0 || strcmp(a, "--n") == 0 || strcmp(a, "--k") == 0) {
            if (!parse_int(v, 1, (int64_t)INT32_MAX, &x)) return bad_usage(program, "bad size", v);
            *(a[2] == 'm' ? &o->m : a[2] == 'n' ? &o->n : &o->k) = x;
        } else if (strcmp(a, "--gpus") == 0) {
            if (!parse_int(v, 1, MAX_GPUS, &x)) return bad_usage(program, "bad GPU count", v);
            o->gpus = (int)x;
        } else if (strcmp(a, "--ops") == 0) {
            o->ops[OP_AG] = strstr(v, "ag") != NULL;
            o->ops[OP_RS] = strstr(v, "rs") != NULL;
            if (!o->ops[OP_AG] && !o->ops[OP_RS]) return bad_usage(program, "bad --ops (ag, rs)", v);
        } else if (strcmp(a, "--kernels") == 0) {
            if (!parse_kernel_list(v, o)) return bad_usage(program, "bad kernel list", v);
        } else if (strcmp(a, "--chunks") == 0) {
            if (!parse_chunk_list(v, o)) return bad_usage(program, "bad chunk list", v);
        } else if (strcmp(a, "--warmup") == 0 || strcmp(a, "--iters") == 0 || strcmp(a, "--repeat") == 0) {
            const int64_t lo = strcmp(a, "--warmup") == 0 ? 0 : 1;
            if (!parse_int(v, lo, MAX_COUNT, &x)) return bad_usage(program, "bad count", v);
            *(a[2] == 'w' ? &o->warmup : a[2] == 'i' ? &o->iters : &o->repeat) = x;
        } else if (strcmp(a, "--cooldown") == 0) {
            char *end = NULL;
            o->cooldown_s = strtod(v, &end);
            if (*end != '\0' || !(o->cooldown_s >= 0 && o->cooldown_s <= MAX_COOLDOWN_S))
                return bad_usage(program, "bad cooldown", v);
        } else if (strcmp(a, "--nccl-max-ctas") == 0) {
            if (!parse_int(v, 1, MAX_COUNT, &x)) return bad_usage(program, "bad CTA count", v);
            o->nccl_max_ctas = (int)x;
        } else if (strcmp(a, "--gemm-sms") == 0) {
            if (!parse_int(v, 1, MAX_COUNT, &x)) return bad_usage(program, "bad SM count", v);
            o->gemm_sms = (int)x;
        } else if (strcmp(a, "--csv") == 0) {
            o->csv = v;
        } else if (strcmp(a, "--timeline") == 0) {
            o->timeline = v;
        } else if (strcmp(a, "--timeline-chunks") == 0) {
            if (!parse_int(v, 1, HGEMM_NCCL_MAX_CHUNKS, &x)) return bad_usage(program, "bad chunk count", v);
            o->timeline_chunks = (int)x;
            o->timeline_chunks_set = 1;
        } else {
            return bad_usage(program, "unknown option", a);
        }
    }
    if (o->copy_engine && o->gemm_sms)
        return bad_usage(program, "--copy-engine gives the GEMMs every SM: no --gemm-sms with it", NULL);
#if NCCL_VERSION_CODE < 22800
    if (o->copy_engine) return bad_usage(program, "--copy-engine needs NCCL 2.28 or newer", NULL);
#endif
    if (o->copy_engine && !o->timeline_chunks_set) o->timeline_chunks = 1;
    return -1;
}

/* ---- helpers ------------------------------------------------------------------------ */

static void sleep_s(double s) {
    if (s <= 0) return;
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * NS_PER_S);
    nanosleep(&ts, NULL);
}

static void *dev_alloc(size_t bytes) {
    void *p = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc(&p, bytes));
    return p;
}

/* A symmetric window of the context's communicator (--copy-engine). */
static void *window_alloc(hgemm_nccl_ctx *ctx, size_t bytes) {
    void *p = NULL;
    CHECK_TP(hgemm_nccl_mem_alloc(ctx, bytes, &p));
    return p;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static const char *kernel_label(const job *j) {
    if (j->md == MODE_COLL || j->md == MODE_COLL_CHUNKED) return "nccl";
    return hgemm_kernel_name(j->kernel);
}

static int64_t piece_lo(int c, int chunks, int64_t m) { return (int64_t)c * m / chunks; }

static const char *at(const void *base, int64_t r, int64_t ld) { return (const char *)base + r * ld * 2; }

/* ---- one call of each mode -------------------------------------------------------------- */

static void gemm_ag(rank_ctx *rc, const job *j, int chunked) {
    const options *o = &rc->sh->opt;
    const int G = rc->sh->gpus;
    const int64_t nl = o->n / G, K = o->k, M = o->m;
    if (!chunked) {
        CHECK_HGEMM(hgemm_nt(j->kernel, M, nl, K, 1.0f, rc->a_full, K, rc->b[OP_AG], K, 0.0f, rc->c[OP_AG], nl,
                             rc->stream));
        return;
    }
    const int64_t mr = M / G;
    CHECK_HGEMM(hgemm_nt(j->kernel, mr, nl, K, 1.0f, at(rc->a_full, rc->rank * mr, K), K, rc->b[OP_AG], K, 0.0f,
                         (char *)rc->c[OP_AG] + rc->rank * mr * nl * 2, nl, rc->stream));
    for (int c = 0; c < j->chunks; c++)
        for (int s = 0; s < G; s++) {
            if (s == rc->rank) continue;
            const int64_t lo = piece_lo(c, j->chunks, mr), nrows = piece_lo(c + 1, j->chunks, mr) - lo;
            if (nrows == 0) continue;
            CHECK_HGEMM(hgemm_nt(j->kernel, nrows, nl, K, 1.0f, at(rc->a_full, s * mr + lo, K), K, rc->b[OP_AG], K,
                                 0.0f, (char *)rc->c[OP_AG] + (s * mr + lo) * nl * 2, nl, rc->stream));
        }
}

static void gemm_rs(rank_ctx *rc, const job *j, int chunked) {
    const options *o = &rc->sh->opt;
    const int G = rc->sh->gpus;
    const int64_t kl = o->k / G, N = o->n, M = o->m, mr = M / G;
    if (!chunked) {
        CHECK_HGEMM(hgemm_nt(j->kernel, M, N, kl, 1.0f, rc->a_local[OP_RS], kl, rc->b[OP_RS], kl, 0.0f, rc->p, N,
                             rc->stream));
        return;
    }
    for (int c = 0; c < j->chunks; c++)
        for (int r = 0; r < G; r++) {
            const int64_t lo = piece_lo(c, j->chunks, mr), nrows = piece_lo(c + 1, j->chunks, mr) - lo;
            if (nrows == 0) continue;
            CHECK_HGEMM(hgemm_nt(j->kernel, nrows, N, kl, 1.0f, at(rc->a_local[OP_RS], r * mr + lo, kl), kl,
                                 rc->b[OP_RS], kl, 0.0f, (char *)rc->p + (r * mr + lo) * N * 2, N, rc->stream));
        }
}

static void collective(rank_ctx *rc, op o, int chunks, int chunked) {
    const options *opt = &rc->sh->opt;
    const int G = rc->sh->gpus;
    const int64_t mr = opt->m / G;
    ncclComm_t comm = rc->sh->comms[rc->rank];
    if (opt->copy_engine && chunked && chunks == 1) {
        /* What the copy-engine path moves: ag the same all-gather as the
         * collective row; rs the partials' swap (an in-place all-gather of
         * M/G x N blocks on 2 GPUs, an all-to-all from the second region on more). */
        if (o == OP_AG) {
            collective(rc, OP_AG, 1, 0);
        } else {
            const size_t block = (size_t)(mr * opt->n);
            char *R = rc->p;
            if (G == 2)
                CHECK_NCCL(ncclAllGather(R + (size_t)rc->rank * block * 2, R, block, ncclFloat16, comm, rc->stream));
            else
                CHECK_NCCL(ncclAlltoAll(R + (size_t)G * block * 2, R, block, ncclFloat16, comm, rc->stream));
        }
        return;
    }
    if (o == OP_AG) {
        const int64_t K = opt->k;
        if (!chunked) {
            CHECK_NCCL(ncclAllGather(rc->a_local[OP_AG], rc->a_full, (size_t)(mr * K), ncclFloat16, comm, rc->stream));
            return;
        }
        for (int c = 0; c < chunks; c++) {
            const int64_t lo = piece_lo(c, chunks, mr), nrows = piece_lo(c + 1, chunks, mr) - lo;
            if (nrows == 0) continue;
            CHECK_NCCL(ncclGroupStart());
            for (int s = 0; s < G; s++) {
                char *recv = (char *)rc->a_full + (s * mr + lo) * K * 2;
                const void *send = s == rc->rank ? at(rc->a_local[OP_AG], lo, K) : recv;
                CHECK_NCCL(ncclBroadcast(send, recv, (size_t)(nrows * K), ncclFloat16, s, comm, rc->stream));
            }
            CHECK_NCCL(ncclGroupEnd());
        }
        return;
    }
    const int64_t N = opt->n;
    if (!chunked) {
        CHECK_NCCL(ncclReduceScatter(rc->p, rc->c[OP_RS], (size_t)(mr * N), ncclFloat16, ncclSum, comm, rc->stream));
        return;
    }
    for (int c = 0; c < chunks; c++) {
        const int64_t lo = piece_lo(c, chunks, mr), nrows = piece_lo(c + 1, chunks, mr) - lo;
        if (nrows == 0) continue;
        CHECK_NCCL(ncclGroupStart());
        for (int r = 0; r < G; r++) {
            char *send = (char *)rc->p + (r * mr + lo) * N * 2;
            void *recv = r == rc->rank ? (char *)rc->c[OP_RS] + lo * N * 2 : send;
            CHECK_NCCL(ncclReduce(send, recv, (size_t)(nrows * N), ncclFloat16, ncclSum, r, comm, rc->stream));
        }
        CHECK_NCCL(ncclGroupEnd());
    }
}

static void overlapped(rank_ctx *rc, const job *j, hgemm_nccl_ctx *ctx, void *C) {
    const options *o = &rc->sh->opt;
    const int G = rc->sh->gpus;
    if (j->o == OP_AG) {
        const int64_t nl = o->n / G, K = o->k;
        CHECK_TP(hgemm_nccl_allgather_gemm(ctx, j->kernel, j->chunks, rc->counts, nl, K, 1.0f, rc->a_local[OP_AG],
                                           rc->a_full, K, rc->b[OP_AG], K, 0.0f, C, nl, rc->stream));
    } else {
        const int64_t kl = o->k / G, N = o->n;
        CHECK_TP(hgemm_nccl_gemm_reducescatter(ctx, j->kernel, j->chunks, rc->counts, N, kl, 1.0f, rc->a_local[OP_RS],
                                               kl, rc->b[OP_RS], kl, 0.0f, C, N, rc->p, rc->p_bytes, rc->stream));
    }
}

/* --copy-engine: the overlapped call must have taken the copy-engine path
 * at 1 chunk, and (b) on 2 GPUs at any chunk count (chunked swaps); (a) at
 * more chunks, and (b) on more GPUs, the kernel path. */
static void check_path(rank_ctx *rc, const job *j) {
    if (!rc->sh->opt.copy_engine || j->md != MODE_OVERLAP) return;
    const int want = j->chunks == 1 || (j->o == OP_RS && rc->sh->gpus == 2);
    const int got = hgemm_nccl_used_copy_engine(rc->agree);
    if (got != want && rc->path_errors++ == 0)
        fprintf(stderr, "rank %d: %s, %d chunk(s): the %s path, want the %s path\n", rc->rank, op_names[j->o],
                j->chunks, got ? "copy-engine" : "kernel", want ? "copy-engine" : "kernel");
}

static void call(rank_ctx *rc, const job *j) {
    switch (j->md) {
    case MODE_GEMM:
    case MODE_GEMM_CHUNKED:
        if (j->o == OP_AG) gemm_ag(rc, j, j->md == MODE_GEMM_CHUNKED);
        else gemm_rs(rc, j, j->md == MODE_GEMM_CHUNKED);
        break;
    case MODE_COLL:
    case MODE_COLL_CHUNKED: collective(rc, j->o, j->chunks, j->md == MODE_COLL_CHUNKED); break;
    case MODE_NAIVE:
        if (j->o == OP_AG) {
            collective(rc, OP_AG, 1, 0);
            gemm_ag(rc, j, 0);
        } else {
            gemm_rs(rc, j, 0);
            collective(rc, OP_RS, 1, 0);
        }
        break;
    case MODE_OVERLAP:
        overlapped(rc, j, rc->agree, rc->c[j->o]);
        check_path(rc, j);
        break;
    case MODE_OVERLAP_LOCAL: overlapped(rc, j, rc->local, rc->c[j->o]); break;
    case MODE_COUNT: break;
    }
    HGEMM_CHECK_LAUNCH();
}

/* ---- measuring ---------------------------------------------------------------------------- */

static void barrier(shared *sh) { pthread_barrier_wait(&sh->barrier); }

/* Largest |C - C_naive| over SAMPLE_ROWS rows spread over C; failures counted. */
static double sampled_diff(rank_ctx *rc, op o) {
    const options *opt = &rc->sh->opt;
    const int G = rc->sh->gpus;
    const int64_t nrows = o == OP_AG ? opt->m : opt->m / G, cols = o == OP_AG ? opt->n / G : opt->n;
    uint16_t *got = malloc((size_t)cols * 2), *want = malloc((size_t)cols * 2);
    if (got == NULL || want == NULL) {
        fprintf(stderr, "out of host memory\n");
        exit(EXIT_FAIL);
    }
    double worst = 0.0;
    int bad = 0;
    for (int i = 0; i < SAMPLE_ROWS; i++) {
        const int64_t r = (int64_t)i * (nrows - 1) / (SAMPLE_ROWS - 1);
        HGEMM_CHECK_CUDA(cudaMemcpy(got, at(rc->c[o], r, cols), (size_t)cols * 2, cudaMemcpyDeviceToHost));
        HGEMM_CHECK_CUDA(cudaMemcpy(want, at(rc->c_naive[o], r, cols), (size_t)cols * 2, cudaMemcpyDeviceToHost));
        for (int64_t c = 0; c < cols; c++) {
            const double g = hgemm_check_f16_to_f32(got[c]), w = hgemm_check_f16_to_f32(want[c]);
            const double d = fabs(g - w);
            if (!(d <= DIFF_ATOL + DIFF_RTOL * fabs(w))) {
                if (bad++ == 0)
                    fprintf(stderr, "rank %d: %s: C[%lld, %lld] = %g, naive %g\n", rc->rank, op_names[o],
                            (long long)r, (long long)c, g, w);
            }
            if (d > worst || d != d) worst = d != d ? INFINITY : d;
        }
    }
    free(got);
    free(want);
    if (bad) {
        fprintf(stderr, "rank %d: %s: %d sampled elements differ from the naive result\n", rc->rank, op_names[o], bad);
        __atomic_add_fetch(&rc->sh->failures, 1, __ATOMIC_SEQ_CST);
    }
    return worst;
}

static void measure(rank_ctx *rc, const job *j, int run) {
    shared *sh = rc->sh;
    const options *o = &sh->opt;
    barrier(sh);
    sleep_s(o->cooldown_s);
    barrier(sh);
    for (int64_t i = 0; i < o->warmup; i++) call(rc, j);
    HGEMM_CHECK_CUDA(cudaStreamSynchronize(rc->stream));
    barrier(sh);
    HGEMM_CHECK_CUDA(cudaEventRecord(rc->events[0], rc->stream));
    for (int64_t i = 0; i < o->iters; i++) {
        call(rc, j);
        HGEMM_CHECK_CUDA(cudaEventRecord(rc->events[i + 1], rc->stream));
    }
    HGEMM_CHECK_CUDA(cudaStreamSynchronize(rc->stream));
    for (int64_t i = 0; i < o->iters; i++) {
        float ms = 0.0f;
        HGEMM_CHECK_CUDA(cudaEventElapsedTime(&ms, rc->events[i], rc->events[i + 1]));
        sh->times[rc->rank * o->iters + i] = ms;
    }
    double diff = -1.0;
    if (j->md == MODE_OVERLAP || j->md == MODE_OVERLAP_LOCAL) {
        double mine = sampled_diff(rc, j->o);
        sh->times[(int64_t)sh->gpus * o->iters + rc->rank] = mine; /* the diff slots after the times */
    }
    barrier(sh);
    if (rc->rank != 0) return;
    if (j->md == MODE_OVERLAP || j->md == MODE_OVERLAP_LOCAL)
        for (int r = 0; r < sh->gpus; r++) {
            const double d = sh->times[(int64_t)sh->gpus * o->iters + r];
            diff = d > diff ? d : diff;
        }
    /* A call lasts as long as its slowest GPU. */
    double *calls = malloc(sizeof(double) * (size_t)o->iters);
    if (calls == NULL) exit(EXIT_FAIL);
    for (int64_t i = 0; i < o->iters; i++) {
        calls[i] = 0.0;
        for (int r = 0; r < sh->gpus; r++) {
            const double t = sh->times[r * o->iters + i];
            calls[i] = t > calls[i] ? t : calls[i];
        }
    }
    qsort(calls, (size_t)o->iters, sizeof(double), cmp_double);
    const int64_t n = o->iters;
    const double median = n % 2 ? calls[n / 2] : 0.5 * (calls[n / 2 - 1] + calls[n / 2]);
    if (sh->n_rows < MAX_ROWS) {
        row *rw = &sh->rows[sh->n_rows++];
        rw->j = *j;
        rw->run = run;
        rw->ms = median;
        rw->ms_min = calls[0];
        rw->ms_max = calls[n - 1];
        rw->max_abs_diff = diff;
    }
    printf("%-3s %-19s %-5s chunks %2d run %d: %9.4f ms (%.4f .. %.4f)%s\n", op_names[j->o], mode_names[j->md],
           kernel_label(j), j->chunks, run, median, calls[0], calls[n - 1], diff >= 0 ? " checked" : "");
    fflush(stdout);
    free(calls);
}

/* The reference for the sampled check: the naive sequence, into C_naive. */
static void naive_reference(rank_ctx *rc, op o, hgemm_kernel kernel) {
    job j = {o, MODE_NAIVE, kernel, 1};
    void *keep = rc->c[o];
    rc->c[o] = rc->c_naive[o];
    call(rc, &j);
    rc->c[o] = keep;
    HGEMM_CHECK_CUDA(cudaStreamSynchronize(rc->stream));
    barrier(rc->sh);
}

/* One traced overlapped call per op: per-chunk event times on every GPU. */
static void timeline(rank_ctx *rc, op o) {
    shared *sh = rc->sh;
    const int chunks = sh->opt.timeline_chunks, count = 2 + 2 * chunks;
    cudaEvent_t *ev = malloc(sizeof(cudaEvent_t) * (size_t)count);
    if (ev == NULL) exit(EXIT_FAIL);
    for (int i = 0; i < count; i++) HGEMM_CHECK_CUDA(cudaEventCreate(&ev[i]));
    job j = {o, MODE_OVERLAP, sh->opt.kernels[0], chunks};
    for (int64_t i = 0; i < sh->opt.warmup; i++) call(rc, &j);
    HGEMM_CHECK_CUDA(cudaStreamSynchronize(rc->stream));
    barrier(sh);
    CHECK_TP(hgemm_nccl_ctx_set_trace(rc->agree, ev, count));
    call(rc, &j);
    CHECK_TP(hgemm_nccl_ctx_set_trace(rc->agree, NULL, 0));
    HGEMM_CHECK_CUDA(cudaStreamSynchronize(rc->stream));
    barrier(sh);
    for (int r = 0; r < sh->gpus; r++) {
        if (r == rc->rank) {
            for (int i = 0; i < count; i++) {
                float ms = 0.0f;
                HGEMM_CHECK_CUDA(cudaEventElapsedTime(&ms, ev[0], ev[i]));
                const char *what = i == 0 ? "start" : i == 1 ? "own_gemm_done" : i % 2 == 0 ? "comm_done" : "gemm_done";
                const int chunk = i < 2 ? -1 : (i - 2) / 2;
                fprintf(sh->timeline, "%s,%s,%d,%d,%s,%d,%.4f\n", op_names[o], hgemm_kernel_name(j.kernel),
                        chunks, rc->rank, what, chunk, ms);
            }
            fflush(sh->timeline);
        }
        barrier(sh);
    }
    for (int i = 0; i < count; i++) HGEMM_CHECK_CUDA(cudaEventDestroy(ev[i]));
    free(ev);
}

static void allocate(rank_ctx *rc) {
    const options *o = &rc->sh->opt;
    const int G = rc->sh->gpus;
    const int64_t M = o->m, N = o->n, K = o->k, mr = M / G, nl = N / G, kl = K / G;
    for (int r = 0; r < G; r++) rc->counts[r] = mr;
    /* --copy-engine: windows, in the same order on every rank (collective). */
    if (o->ops[OP_AG]) {
        if (o->copy_engine) {
            rc->a_full = window_alloc(rc->agree, (size_t)(M * K * 2));
            rc->a_local[OP_AG] = (char *)rc->a_full + (size_t)(rc->rank * mr * K * 2); /* in place */
        } else {
            rc->a_local[OP_AG] = dev_alloc((size_t)(mr * K * 2));
            rc->a_full = dev_alloc((size_t)(M * K * 2));
        }
        rc->b[OP_AG] = dev_alloc((size_t)(nl * K * 2));
        rc->c[OP_AG] = dev_alloc((size_t)(M * nl * 2));
        rc->c_naive[OP_AG] = dev_alloc((size_t)(M * nl * 2));
        /* Unit-variance outputs: rank r holds rows r*M/G.. of one random A. */
        hgemm_check_fill_random(rc->a_local[OP_AG], mr, K, K, SEED_A + (uint64_t)rc->rank, hgemm_check_unit_scale(K),
                                rc->stream);
        hgemm_check_fill_random(rc->b[OP_AG], nl, K, K, SEED_B + (uint64_t)rc->rank, hgemm_check_unit_scale(K),
                                rc->stream);
    }
    if (o->ops[OP_RS]) {
        rc->a_local[OP_RS] = dev_alloc((size_t)(M * kl * 2));
        rc->b[OP_RS] = dev_alloc((size_t)(N * kl * 2));
        if (o->copy_engine) {
            rc->p_bytes = hgemm_nccl_gemm_reducescatter_ce_workspace(G, M, N);
            rc->p = window_alloc(rc->agree, rc->p_bytes);
        } else {
            rc->p_bytes = hgemm_nccl_gemm_reducescatter_workspace(M, N);
            rc->p = dev_alloc(rc->p_bytes);
        }
        HGEMM_CHECK_CUDA(cudaMemsetAsync(rc->p, 0, rc->p_bytes, rc->stream)); /* read before the first GEMM */
        rc->c[OP_RS] = dev_alloc((size_t)(mr * N * 2));
        rc->c_naive[OP_RS] = dev_alloc((size_t)(mr * N * 2));
        hgemm_check_fill_random(rc->a_local[OP_RS], M, kl, kl, SEED_A + (uint64_t)rc->rank, hgemm_check_unit_scale(K),
                                rc->stream);
        hgemm_check_fill_random(rc->b[OP_RS], N, kl, kl, SEED_B + (uint64_t)rc->rank, hgemm_check_unit_scale(K),
                                rc->stream);
    }
    HGEMM_CHECK_CUDA(cudaStreamSynchronize(rc->stream));
}

static void release(rank_ctx *rc) {
    const int windows = rc->sh->opt.copy_engine;
    for (int o = 0; o < OP_COUNT; o++) {
        if (rc->a_local[o] && !(windows && o == OP_AG)) HGEMM_CHECK_CUDA(cudaFree(rc->a_local[o]));
        if (rc->b[o]) HGEMM_CHECK_CUDA(cudaFree(rc->b[o]));
        if (rc->c[o]) HGEMM_CHECK_CUDA(cudaFree(rc->c[o]));
        if (rc->c_naive[o]) HGEMM_CHECK_CUDA(cudaFree(rc->c_naive[o]));
    }
    /* The windows: freed in the order allocated, on every rank. */
    if (rc->a_full) {
        if (windows) CHECK_TP(hgemm_nccl_mem_free(rc->agree, rc->a_full));
        else HGEMM_CHECK_CUDA(cudaFree(rc->a_full));
    }
    if (rc->p) {
        if (windows) CHECK_TP(hgemm_nccl_mem_free(rc->agree, rc->p));
        else HGEMM_CHECK_CUDA(cudaFree(rc->p));
    }
}

static void *rank_main(void *arg) {
    rank_ctx *rc = arg;
    shared *sh = rc->sh;
    const options *o = &sh->opt;
    HGEMM_CHECK_CUDA(cudaSetDevice(rc->device));
    HGEMM_CHECK_CUDA(cudaStreamCreateWithFlags(&rc->stream, cudaStreamNonBlocking));
    rc->events = malloc(sizeof(cudaEvent_t) * (size_t)(o->iters + 1));
    if (rc->events == NULL) exit(EXIT_FAIL);
    for (int64_t i = 0; i <= o->iters; i++) HGEMM_CHECK_CUDA(cudaEventCreate(&rc->events[i]));
    hgemm_nccl_config agree = {HGEMM_NCCL_CHECK_AGREE, 0.0, o->gemm_sms, o->copy_engine};
    hgemm_nccl_config local = {HGEMM_NCCL_CHECK_LOCAL, 0.0, o->gemm_sms, o->copy_engine};
    CHECK_TP(hgemm_nccl_ctx_create(&rc->agree, sh->comms[rc->rank], &agree));
    CHECK_TP(hgemm_nccl_ctx_create(&rc->local, sh->comms[rc->rank], &local));
    allocate(rc);
    barrier(sh);

    for (int run = 1; run <= o->repeat; run++)
        for (int op_i = 0; op_i < OP_COUNT; op_i++) {
            if (!o->ops[op_i]) continue;
            const op p = (op)op_i;
            job j = {p, MODE_COLL, HGEMM_KERNEL_AUTO, 1};
            measure(rc, &j, run);
            for (int c = 0; c < o->n_chunks; c++) {
                job jc = {p, MODE_COLL_CHUNKED, HGEMM_KERNEL_AUTO, o->chunks[c]};
                measure(rc, &jc, run);
            }
            for (int kx = 0; kx < o->n_kernels; kx++) {
                const hgemm_kernel kern = o->kernels[kx];
                job jg = {p, MODE_GEMM, kern, 1};
                measure(rc, &jg, run);
                job jn = {p, MODE_NAIVE, kern, 1};
                measure(rc, &jn, run);
                naive_reference(rc, p, kern);
                for (int c = 0; c < o->n_chunks; c++) {
                    const mode chunked[] = {MODE_GEMM_CHUNKED, MODE_OVERLAP, MODE_OVERLAP_LOCAL};
                    for (size_t x = 0; x < sizeof chunked / sizeof chunked[0]; x++) {
                        /* --copy-engine: the windows are the AGREE context's. */
                        if (o->copy_engine && chunked[x] == MODE_OVERLAP_LOCAL) continue;
                        job jx = {p, chunked[x], kern, o->chunks[c]};
                        measure(rc, &jx, run);
                    }
                }
            }
        }
    if (sh->timeline)
        for (int op_i = 0; op_i < OP_COUNT; op_i++)
            if (o->ops[op_i]) timeline(rc, (op)op_i);

    if (rc->path_errors) {
        fprintf(stderr, "rank %d: %d overlapped call(s) on the wrong path\n", rc->rank, rc->path_errors);
        __atomic_add_fetch(&sh->failures, 1, __ATOMIC_SEQ_CST);
    }
    barrier(sh);
    release(rc);
    CHECK_TP(hgemm_nccl_ctx_destroy(rc->agree));
    CHECK_TP(hgemm_nccl_ctx_destroy(rc->local));
    for (int64_t i = 0; i <= o->iters; i++) HGEMM_CHECK_CUDA(cudaEventDestroy(rc->events[i]));
    free(rc->events);
    HGEMM_CHECK_CUDA(cudaStreamDestroy(rc->stream));
    return NULL;
}

/* ---- output ---------------------------------------------------------------------------------- */

static void driver_string(char *out, size_t len) {
    typedef int (*init_fn)(void);
    typedef int (*driver_fn)(char *, unsigned);
    typedef int (*shutdown_fn)(void);
    out[0] = '\0';
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) return;
    init_fn init = (init_fn)dlsym(lib, "nvmlInit_v2");
    driver_fn driver = (driver_fn)dlsym(lib, "nvmlSystemGetDriverVersion");
    shutdown_fn shutdown = (shutdown_fn)dlsym(lib, "nvmlShutdown");
    if (init && driver && init() == 0) {
        if (driver(out, (unsigned)len) != 0) out[0] = '\0';
        if (shutdown) shutdown();
    }
    dlclose(lib);
}

/* The row of `mode` for the same op, kernel (or any, for the collective) and run. */
static const row *find(const shared *sh, const row *like, mode md) {
    for (int i = 0; i < sh->n_rows; i++) {
        const row *r = &sh->rows[i];
        if (r->j.o == like->j.o && r->run == like->run && r->j.md == md &&
            (md == MODE_COLL || r->j.kernel == like->j.kernel))
            return r;
    }
    return NULL;
}

static void write_csv(FILE *f, const shared *sh, const char *command) {
    const options *o = &sh->opt;
    char date[TEXT_LEN], driver[NVML_DRIVER_LEN], name[TEXT_LEN] = "unknown";
    time_t now = time(NULL);
    struct tm tm_utc;
    gmtime_r(&now, &tm_utc);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm_utc);
    driver_string(driver, sizeof driver);
    int driver_version = 0, runtime_version = 0, nccl_version = 0, sms = 0;
    struct cudaDeviceProp prop;
    HGEMM_CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    snprintf(name, sizeof name, "%s", prop.name);
    sms = prop.multiProcessorCount;
    HGEMM_CHECK_CUDA(cudaDriverGetVersion(&driver_version));
    HGEMM_CHECK_CUDA(cudaRuntimeGetVersion(&runtime_version));
    CHECK_NCCL(ncclGetVersion(&nccl_version));
    const char *nvls = getenv("NCCL_NVLS_ENABLE");
    fprintf(f, "# tool: hgemm-nccl-bench\n");
    fprintf(f, "# gpu: %s\n# gpus: %d\n# sm_count: %d\n", name, sh->gpus, sms);
    fprintf(f, "# driver_version: %s%sCUDA %d.%d\n", driver, driver[0] ? ", " : "", driver_version / 1000,
            driver_version % 1000 / 10);
    fprintf(f, "# cuda_runtime_version: %d.%d\n", runtime_version / 1000, runtime_version % 1000 / 10);
    fprintf(f, "# nccl_version: %d.%d.%d\n", nccl_version / 10000, nccl_version / 100 % 100, nccl_version % 100);
    fprintf(f, "# nccl_nvls_enable: %s\n", nvls ? nvls : "unset");
    fprintf(f, "# nccl_max_ctas: %s%d\n", o->nccl_max_ctas ? "" : "NCCL default (0 = unset) ", o->nccl_max_ctas);
    fprintf(f, "# gemm_sms: %s%d\n", o->gemm_sms ? "overlapped calls' GEMMs on at most " : "every SM (0 = unset) ",
            o->gemm_sms);
    if (o->copy_engine)
        fprintf(f, "# copy_engine: on: CTAPolicy NCCL_CTA_POLICY_ZERO, A_gathered and the rs workspace from "
                   "hgemm_nccl_mem_alloc, ag gathered in place, every SM for the GEMMs; collective and naive: ag "
                   "ncclAllGather on the windows (copy engines), rs ncclReduceScatter (kernels); collective-chunked at 1 "
                   "chunk: the copy-engine path's transfer (ag the all-gather, rs the partials' swap); overlap at 1 chunk "
                   "took the copy-engine path on every call, at more chunks too for rs on 2 GPUs (chunked swaps, the sum in the own rows' GEMM), else the kernel path; no overlap-local rows\n");
    else
        fprintf(f, "# copy_engine: off\n");
    fprintf(f, "# git_commit: %s\n", HGEMM_GIT_COMMIT);
    fprintf(f, "# date: %s\n# command: %s\n", date, command);
    fprintf(f, "# auto_kernel: %s\n", hgemm_kernel_name(hgemm__auto_kernel()));
    fprintf(f, "# layer: M %lld tokens, K %lld in, N %lld out, fp16, fp32 accumulation, alpha 1, beta 0\n",
            (long long)o->m, (long long)o->k, (long long)o->n);
    fprintf(f, "# split ag: %s\n# split rs: %s\n", op_splits[OP_AG], op_splits[OP_RS]);
    fprintf(f, "# timing: %lld warm-up calls, then %lld calls back to back with an event between each; a "
               "call's time is the slowest GPU's; ms = median call, ms_min..ms_max = range; cooldown %g s "
               "before each measurement; repeat %lld\n",
            (long long)o->warmup, (long long)o->iters, o->cooldown_s, (long long)o->repeat);
    fprintf(f, "# columns: coll_gemm_ratio = collective ms / gemm ms (same op, kernel, run); vs_gemm = ms / gemm "
               "ms; vs_naive = naive ms / ms; tflops per GPU = 2 M N K / gpus / ms; algbw_gbps = collective "
               "buffer bytes (ag: M K, rs: M N fp16) / ms; max_abs_diff: overlapped vs naive on %d sampled "
               "rows (-1: not checked)\n",
            SAMPLE_ROWS);
    fprintf(f, "kernel,mode,op,m,n,k,gpus,chunks,run,ms,ms_min,ms_max,coll_gemm_ratio,vs_gemm,vs_naive,tflops,"
               "algbw_gbps,max_abs_diff\n");
    const double flops = 2.0 * (double)o->m * (double)o->n * (double)o->k / sh->gpus;
    for (int i = 0; i < sh->n_rows; i++) {
        const row *r = &sh->rows[i];
        const row *coll = find(sh, r, MODE_COLL);
        /* The collective's rows compare with the first kernel's GEMM. */
        row like = *r;
        if (r->j.md == MODE_COLL || r->j.md == MODE_COLL_CHUNKED) like.j.kernel = o->kernels[0];
        const row *gemm = find(sh, &like, MODE_GEMM), *naive = find(sh, &like, MODE_NAIVE);
        const int is_coll = r->j.md == MODE_COLL || r->j.md == MODE_COLL_CHUNKED;
        const double coll_bytes = 2.0 * (double)o->m * (double)(r->j.o == OP_AG ? o->k : o->n);
        fprintf(f, "%s,%s,%s,%lld,%lld,%lld,%d,%d,%d,%.5f,%.5f,%.5f,", kernel_label(&r->j), mode_names[r->j.md],
                op_names[r->j.o], (long long)o->m, (long long)o->n, (long long)o->k, sh->gpus, r->j.chunks, r->run,
                r->ms, r->ms_min, r->ms_max);
        if (coll && gemm) fprintf(f, "%.4f,", coll->ms / gemm->ms); else fprintf(f, ",");
        if (gemm) fprintf(f, "%.4f,", r->ms / gemm->ms); else fprintf(f, ",");
        if (naive && !is_coll) fprintf(f, "%.4f,", naive->ms / r->ms); else fprintf(f, ",");
        if (!is_coll) fprintf(f, "%.2f,", flops / (r->ms * 1e-3) / 1e12); else fprintf(f, ",");
        if (is_coll) fprintf(f, "%.2f,", coll_bytes / (r->ms * 1e-3) / 1e9); else fprintf(f, ",");
        fprintf(f, "%.3e\n", r->max_abs_diff);
    }
}

/* ---- main --------------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
    setenv("NCCL_NVLS_ENABLE", "0", 0); /* NVLink multicast off unless asked for */
    shared *sh = calloc(1, sizeof *sh);
    if (sh == NULL) return EXIT_FAIL;
    const int rc = parse_args(argc, argv, &sh->opt);
    if (rc >= 0) return rc;
    options *o = &sh->opt;
    char command[COMMAND_LEN] = "";
    for (int i = 0; i < argc; i++) {
        strncat(command, argv[i], sizeof command - strlen(command) - 2);
        if (i + 1 < argc) strncat(command, " ", sizeof command - strlen(command) - 1);
    }

    int visible = 0;
    if (cudaGetDeviceCount(&visible) != cudaSuccess) {
        (void)cudaGetLastError();
        visible = 0;
    }
    int usable = 0;
    char why[TEXT_LEN] = "";
    for (int d = 0; d < visible && d < MAX_GPUS; d++) {
        HGEMM_CHECK_CUDA(cudaSetDevice(d));
        if (!hgemm_check_sm90_available(why, sizeof why)) break;
        usable++;
    }
    const int want = o->gpus ? o->gpus : usable;
    if (usable < 2 || want > usable || want < 2) {
        fprintf(stderr, "%s: needs at least 2 sm_90 GPUs: %d visible, %d usable, %d asked for%s%s; nothing measured\n",
                argv[0], visible, usable, want, why[0] ? "; " : "", why);
        return EXIT_NO_GPUS;
    }
    sh->gpus = want;
    const int64_t unit = (int64_t)SHARD_ALIGN * want;
    if (o->m % unit || o->n % unit || o->k % unit) {
        fprintf(stderr, "%s: M, N and K must be multiples of %lld (8 x %d GPUs)\n", argv[0], (long long)unit, want);
        return EXIT_FAIL;
    }

    FILE *csv = NULL;
    if (o->csv && (csv = fopen(o->csv, "w")) == NULL) {
        fprintf(stderr, "%s: cannot write %s\n", argv[0], o->csv);
        return EXIT_FAIL;
    }
    if (o->timeline) {
        if ((sh->timeline = fopen(o->timeline, "w")) == NULL) {
            fprintf(stderr, "%s: cannot write %s\n", argv[0], o->timeline);
            return EXIT_FAIL;
        }
        fprintf(sh->timeline, "# tool: hgemm-nccl-bench timeline; git_commit: %s; times in ms from each GPU's own "
                              "call start (events of different GPUs share no clock)\n", HGEMM_GIT_COMMIT);
        fprintf(sh->timeline, "op,kernel,chunks,rank,event,chunk,t_ms\n");
    }

    printf("hgemm-nccl-bench: %d GPUs, M %lld, N %lld, K %lld, auto = %s\n", want, (long long)o->m, (long long)o->n,
           (long long)o->k, hgemm_kernel_name(hgemm__auto_kernel()));
    ncclUniqueId id;
    CHECK_NCCL(ncclGetUniqueId(&id));
    CHECK_NCCL(ncclGroupStart());
    for (int r = 0; r < want; r++) {
        ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
        if (o->nccl_max_ctas) cfg.maxCTAs = o->nccl_max_ctas;
#if NCCL_VERSION_CODE >= 22800
        if (o->copy_engine) cfg.CTAPolicy = NCCL_CTA_POLICY_ZERO;
#endif
        HGEMM_CHECK_CUDA(cudaSetDevice(r));
        CHECK_NCCL(ncclCommInitRankConfig(&sh->comms[r], want, id, r, &cfg));
    }
    CHECK_NCCL(ncclGroupEnd());

    sh->times = calloc((size_t)(want * o->iters + want), sizeof(double));
    sh->ranks = calloc((size_t)want, sizeof(rank_ctx));
    if (sh->times == NULL || sh->ranks == NULL) return EXIT_FAIL;
    pthread_barrier_init(&sh->barrier, NULL, (unsigned)want);
    pthread_t threads[MAX_GPUS];
    for (int r = 0; r < want; r++) {
        sh->ranks[r].sh = sh;
        sh->ranks[r].rank = r;
        sh->ranks[r].device = r;
        if (pthread_create(&threads[r], NULL, rank_main, &sh->ranks[r]) != 0) {
            fprintf(stderr, "%s: pthread_create failed\n", argv[0]);
            return EXIT_FAIL;
        }
    }
    for (int r = 0; r < want; r++) pthread_join(threads[r], NULL);
    for (int r = 0; r < want; r++) CHECK_NCCL(ncclCommDestroy(sh->comms[r]));
    pthread_barrier_destroy(&sh->barrier);

    if (csv) {
        write_csv(csv, sh, command);
        if (fclose(csv) != 0) {
            fprintf(stderr, "%s: writing %s failed\n", argv[0], o->csv);
            return EXIT_FAIL;
        }
        printf("wrote %s (%d rows)\n", o->csv, sh->n_rows);
    }
    if (sh->timeline) fclose(sh->timeline);
    if (sh->failures) {
        fprintf(stderr, "%s: %d check(s) failed: overlapped results differ from the naive ones, or (--copy-engine) "
                        "took the wrong path\n", argv[0], sh->failures);
        return EXIT_FAIL;
    }
    return EXIT_OK;
}
