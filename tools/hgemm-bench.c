/*
 * hgemm-bench: checks and times hgemm's kernels beside cuBLAS on the same GPU,
 * in the same process, on the same buffers (DESIGN.md, "Measuring").
 *
 * For every shape, run and kernel (cuBLAS COMPUTE_32F and COMPUTE_16F
 * included): sleep the cooldown, run once on NaN-poisoned C and compare with
 * an fp64 reference (a failure prints the mismatches, skips the timing and
 * makes the exit status 1), then time `iters` launches after `warmup` ones
 * between two CUDA events, reading the SM clock (NVML, opened at run time)
 * right before and right after the timed window, and sampling clock and
 * temperature every 0.5 ms on the host while the window runs (the table's
 * MHz is the clock's mean over the window, C the highest temperature).
 *
 * Shapes: one --size, the --sweep table, a named suite (--suite llm) or a
 * file of "M N K" lines (--shapes FILE); --list-shapes prints them without a
 * GPU. Memory-bound shapes (m or n <= 64, decode) are judged in GB/s against
 * the HBM peak, and their timed launches rotate over R copies of A, B and C
 * (at least 128 MiB in all, more than twice the L2), so that what a launch
 * reads was not left in the L2 by the launch before it; --rotate does this
 * for every shape, --no-rotate for none. The check always runs on copy 0.
 *
 * --host-cost, a mode of its own: the host time of one call (cuBLAS
 * COMPUTE_32F and each selected kernel) on a 64 x 64 x 64 problem.
 *
 * Exit status: 0 all passed; 1 bad arguments, a failed check or a CUDA error;
 * 2 no sm_90 GPU.
 */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h> /* strcasecmp */
#include <time.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h> /* header-only; silent unless a profiler is attached */

#include "check.h"
#include "hgemm_bench_git.h" /* HGEMM_GIT_COMMIT, generated at build time */
#include "internal.h"

#ifndef HGEMM_VERSION
#define HGEMM_VERSION "unknown" /* the build passes the project's version */
#endif

enum {
    DEFAULT_SIZE = 8192,
    DEFAULT_WARMUP = 5,
    DEFAULT_ITERS = 30,
    DEFAULT_COOLDOWN_S = 3,
    DEFAULT_REPEAT = 1,
    MAX_SELECTED = 64,        /* kernels on one command line */
    BASELINES = 2,            /* cublas32, cublas16 */
    MAX_ENTRIES = BASELINES + MAX_SELECTED,
    LD_ALIGN = 8,             /* hgemm wants leading dimensions in multiples of 8 elements */
    GUARD_ROWS = 16,          /* sentinel rows above and below C */
    SEED_A = 0xa11ce,         /* the random matrices: the same for every run and kernel */
    SEED_B = 0xb0b,
    EXIT_OK = 0,
    EXIT_FAIL = 1,
    EXIT_NO_GPU = 2,
    WHY_LEN = 256,
    TEXT_LEN = 256,
    COMMAND_LEN = 4096,
    NS_PER_S = 1000000000,
    MAX_COOLDOWN_S = 3600,
    MAX_COUNT = 1000000,      /* warmup, iters, repeat */
    WINDOW_SAMPLE_US = 500,   /* NVML sampling period while a timed window runs */
    FP16_BYTES = 2,
    MEMORY_BOUND_MN = 64,     /* m or n at most this: a memory-bound (decode) shape */
    MIN_ROTATE_SETS = 2,      /* a rotation has at least two operand sets */
    MAX_ROTATE_SETS = 8192,   /* operand sets of one shape, at most (tiny shapes) */
    ROTATE_ALIGN = 256,       /* bytes: every rotated operand starts as aligned as cudaMalloc's */
    MAX_FILE_SHAPES = 100000, /* shapes in one --shapes file */
    /* --host-cost: back-to-back calls on a tiny problem, timed on the host */
    HOST_COST_SIZE = 64,
    HOST_COST_WARMUP = 100,
    HOST_COST_CALLS = 2000,   /* calls per batch */
    HOST_COST_BATCHES = 5,    /* the median of the batches is reported */
};

/* The H200's HBM bandwidth, 4.8 TB/s (NVIDIA H200 Tensor Core GPU datasheet,
 * H200 SXM: "GPU memory bandwidth 4.8TB/s"), in GB/s of 1e9 bytes: the
 * yardstick of memory-bound shapes. */
static const double H200_HBM_PEAK_GBPS = 4800.0;
/* Rotated operand sets hold at least this many bytes in all: more than twice
 * the H200's 50 MB L2; twice the device's own L2 (cudaDevAttrL2CacheSize,
 * written to the CSV header) where that is larger. */
static const size_t ROTATE_MIN_BYTES = (size_t)128 << 20;
/* Free device memory that rotation leaves alone (cuBLAS, the check's buffers). */
static const size_t ROTATE_RESERVE_BYTES = (size_t)1 << 30;
/* alpha and beta of every launch; beta == 0: C is written, never read (the
 * fp64 reference of problem_setup and the check's poisoned C assume it). */
static const float BENCH_ALPHA = 1.0f, BENCH_BETA = 0.0f;

/* NVML, declared here and opened with dlopen: the tool never links it. */
typedef struct nvmlDevice_st *nvmlDevice_t;
enum { NVML_SUCCESS = 0, NVML_CLOCK_SM = 1, NVML_TEMPERATURE_GPU = 0, NVML_DRIVER_LEN = 96,
       PCI_BUS_ID_LEN = 32 };
typedef int (*nvml_init_fn)(void);
typedef int (*nvml_shutdown_fn)(void);
typedef int (*nvml_handle_by_pci_fn)(const char *pci_bus_id, nvmlDevice_t *device);
typedef int (*nvml_clock_fn)(nvmlDevice_t device, int clock_type, unsigned int *mhz);
typedef int (*nvml_driver_fn)(char *version, unsigned int length);
typedef int (*nvml_temperature_fn)(nvmlDevice_t device, int sensor, unsigned int *celsius);

typedef struct nvml {
    void *lib;
    nvmlDevice_t dev;
    int initialized;
    nvml_shutdown_fn shutdown;
    nvml_clock_fn clock;      /* nvmlDeviceGetClockInfo */
    nvml_clock_fn max_clock;  /* nvmlDeviceGetMaxClockInfo */
    nvml_temperature_fn temperature; /* nvmlDeviceGetTemperature (NULL if absent) */
    char driver[NVML_DRIVER_LEN];
} nvml;

typedef enum entry_kind { ENTRY_CUBLAS32, ENTRY_CUBLAS16, ENTRY_HGEMM } entry_kind;

/* One thing to check and time: a baseline or a kernel of the table. */
typedef struct entry {
    entry_kind kind;
    const char *name;               /* CSV name: cublas32, cublas16, v0, ... */
    const hgemm_kernel_info *info;  /* NULL for the baselines */
    double atol;
    const char *acc;                /* "fp32" / "fp16" */
} entry;

typedef struct shape { int64_t m, n, k; } shape;

/* The --sweep table: squares, transformer-layer shapes, ragged shapes. */
static const shape sweep_shapes[] = {
    {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192},
    {16384, 16384, 16384},
    {4096, 4096, 14336}, {8192, 8192, 1024}, {4096, 14336, 4096},
    {1000, 1000, 1000}, {777, 1032, 520}, {8191, 8193, 8190},
    /* few output tiles, long k: whole tiles leave most SMs idle (weight gradients) */
    {256, 256, 65536}, {1024, 1024, 16384},
};
enum { SWEEP_COUNT = (int)(sizeof(sweep_shapes) / sizeof(sweep_shapes[0])) };

/* The --accuracy-sweep table: error against the fp64 reference as k grows,
 * on a 4096 x 4096 output (16.8M elements, so the p99 and max are well
 * sampled). 14336 is the long-K shape of the --sweep table. */
enum { ACC_SWEEP_MN = 4096 };
static const shape accuracy_shapes[] = {
    {ACC_SWEEP_MN, ACC_SWEEP_MN, 1024},  {ACC_SWEEP_MN, ACC_SWEEP_MN, 2048},
    {ACC_SWEEP_MN, ACC_SWEEP_MN, 4096},  {ACC_SWEEP_MN, ACC_SWEEP_MN, 6144},
    {ACC_SWEEP_MN, ACC_SWEEP_MN, 8192},  {ACC_SWEEP_MN, ACC_SWEEP_MN, 10240},
    {ACC_SWEEP_MN, ACC_SWEEP_MN, 12288}, {ACC_SWEEP_MN, ACC_SWEEP_MN, 14336},
    {ACC_SWEEP_MN, ACC_SWEEP_MN, 16384},
};
enum { ACCURACY_SWEEP_COUNT = (int)(sizeof(accuracy_shapes) / sizeof(accuracy_shapes[0])) };

/* --suite llm: the shapes of a Llama-3 model's linear layers, and the rest of
 * DESIGN.md's yardstick for AUTO. C (m x n) = A (m x k) * B (n x k)^T: m is
 * tokens, B a weight of n outputs by k inputs. bench/shapes/llm.txt holds
 * the same list (a CPU test compares them). */
enum {
    LLAMA8B_HIDDEN = 4096,    /* Llama-3-8B: model width */
    LLAMA8B_QKV = 6144,       /* fused q, k, v: 4096 + 1024 + 1024 (8 key/value heads of 128) */
    LLAMA8B_FFN = 14336,      /* MLP width */
    LLAMA8B_GATE_UP = 28672,  /* fused gate and up: 2 x 14336 */
    LLAMA70B_HIDDEN = 8192,   /* Llama-3-70B: model width */
    LLAMA70B_FFN = 28672,     /* MLP width: the down projection is 8192 x 28672 */
    LLAMA3_VOCAB = 128256,    /* the LM head: vocabulary x width */
};
#define LLAMA8B_WEIGHTS(m)                                                                   \
    {m, LLAMA8B_HIDDEN, LLAMA8B_HIDDEN}, {m, LLAMA8B_QKV, LLAMA8B_HIDDEN},                  \
        {m, LLAMA8B_GATE_UP, LLAMA8B_HIDDEN}, {m, LLAMA8B_HIDDEN, LLAMA8B_FFN}
static const shape llm_shapes[] = {
    /* decode: 1..64 tokens against Llama-3-8B's weights (q/o, fused qkv,
     * fused gate+up, down), and a 70B weight: memory-bound */
    LLAMA8B_WEIGHTS(1), LLAMA8B_WEIGHTS(8), LLAMA8B_WEIGHTS(16), LLAMA8B_WEIGHTS(32),
    LLAMA8B_WEIGHTS(64),
    {1, LLAMA70B_HIDDEN, LLAMA70B_FFN}, {16, LLAMA70B_HIDDEN, LLAMA70B_FFN},
    /* prefill: 512, 2048 and 8192 tokens against fused qkv, fused gate+up, down */
    {512, LLAMA8B_QKV, LLAMA8B_HIDDEN}, {512, LLAMA8B_GATE_UP, LLAMA8B_HIDDEN},
    {512, LLAMA8B_HIDDEN, LLAMA8B_FFN},
    {2048, LLAMA8B_QKV, LLAMA8B_HIDDEN}, {2048, LLAMA8B_GATE_UP, LLAMA8B_HIDDEN},
    {2048, LLAMA8B_HIDDEN, LLAMA8B_FFN},
    {8192, LLAMA8B_QKV, LLAMA8B_HIDDEN}, {8192, LLAMA8B_GATE_UP, LLAMA8B_HIDDEN},
    {8192, LLAMA8B_HIDDEN, LLAMA8B_FFN},
    /* squares */
    {512, 512, 512}, {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096},
    {6144, 6144, 6144}, {8192, 8192, 8192}, {16384, 16384, 16384},
    /* long k, few output tiles (weight gradients): whole tiles leave SMs idle */
    {256, 256, 65536}, {1024, 1024, 32768}, {512, 512, 131072},
    /* wide: the LM head over 2048 tokens; 32768 tokens with a short k */
    {2048, LLAMA3_VOCAB, LLAMA8B_HIDDEN}, {32768, 4096, 1024},
    /* ragged: no size a multiple of the tiles; odd n and k (leading dimensions
     * padded to multiples of 8, the padding NaN) */
    {1000, 1000, 1000}, {777, 1032, 520}, {8191, 8193, 8190}, {1, 4095, 4097},
};
#undef LLAMA8B_WEIGHTS
enum { LLM_COUNT = (int)(sizeof(llm_shapes) / sizeof(llm_shapes[0])) };

/* The named suites of --suite. */
typedef struct shape_suite {
    const char *name;
    const shape *shapes;
    int count;
} shape_suite;
static const shape_suite suites[] = {{"llm", llm_shapes, LLM_COUNT}};
enum { SUITE_COUNT = (int)(sizeof(suites) / sizeof(suites[0])) };

/* Which shapes operands rotate for (DESIGN.md, "Measuring"). */
typedef enum rotate_policy { ROTATE_AUTO, ROTATE_ALL, ROTATE_NONE } rotate_policy;

typedef struct options {
    const hgemm_kernel_info *kernels[MAX_SELECTED];
    int n_kernels;
    shape size;
    int sweep, accuracy_sweep, size_given;
    const shape_suite *suite;   /* --suite */
    const char *shapes_path;    /* --shapes */
    shape *file_shapes;         /* its shapes (malloc'd; options_free) */
    int n_file_shapes;
    rotate_policy rotate;
    int rotate_given;           /* --rotate or --no-rotate was given */
    const char *timing_flag;    /* the last of --warmup, --iters, --repeat, --cooldown given */
    int64_t warmup, iters, repeat;
    double cooldown_s;
    const char *csv;
    const char *host_cost_csv;  /* --host-cost-csv */
    int list, list_shapes, accuracy, host_cost, help, version;
} options;

typedef enum outcome { OUTCOME_OK, OUTCOME_CHECK_FAILED, OUTCOME_LAUNCH_FAILED } outcome;

typedef struct result {
    outcome status;
    char why[WHY_LEN];
    hgemm_check_stats stats;
    int timed;
    double ms, tflops, vs32, vs16;
    double gbps; /* operand bytes (operand_bytes) over ms */
    int clock_before, clock_after;
    /* NVML sampled on the host while the timed launches run (-1 without NVML
     * or without a sample): mean SM clock, highest temperature. (No power:
     * NVML's reading is a 1-second average on this GPU generation, longer
     * than a window, so it would mostly show the cooldown.) */
    int window_clock_mhz, window_temp_c;
} result;

/* How one shape's timed launches rotate over operand sets, decided before
 * the run (rotation_plan) so that the CSV header can say it. */
typedef struct rotation {
    int wanted;          /* the policy asks for rotation of this shape */
    int sets;            /* R: 1 when not rotated */
    int sets_wanted;     /* R before the free-memory cap */
    double set_bytes;    /* bytes one launch moves (operand_bytes), the measure of R */
    size_t stride_a, stride_b, stride_c; /* bytes between two sets of A, of B, of C */
} rotation;

/* One operand set: what one launch reads and writes. */
typedef struct operands {
    const void *A, *B;
    void *C;
} operands;

/* The buffers of one shape: A and B with NaN in their padding, C in a guard
 * band (operand set 0, the one checked); sets 1 .. R-1, copies of A and B
 * with their own C, follow each other in rot_A, rot_B and rot_C. */
typedef struct problem {
    int64_t m, n, k, lda, ldb, ldc;
    void *A, *B;
    hgemm_check_guarded C;
    double *ref; /* m x n, ld n */
    void *workspace; /* HGEMM_WORKSPACE_BYTES, zeroed once: every hgemm kernel gets it (hgemm_nt_ws) */
    rotation rot;
    void *rot_A, *rot_B, *rot_C; /* (R - 1) sets each, rot.stride_* bytes apart; NULL if R == 1 */
} problem;

static const char *program = "hgemm-bench";

/* ---- failing loudly ------------------------------------------------------- */

static void check_cublas_(cublasStatus_t st, const char *what, const char *file, int line) {
    if (st != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "%s:%d: cuBLAS error %d (%s)\n  in %s\n", file, line, (int)st,
                cublasGetStatusString(st), what);
        exit(EXIT_FAIL);
    }
}
#define CHECK_CUBLAS(call) check_cublas_((call), #call, __FILE__, __LINE__)

static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL) {
        fprintf(stderr, "%s: out of host memory\n", program);
        exit(EXIT_FAIL);
    }
    return p;
}

/* ---- arguments -------------------------------------------------------------- */

static void usage(FILE *f) {
    fprintf(f,
        "usage: %s [options]\n"
        "\n"
        "Checks hgemm's kernels against an fp64 reference, then times them beside cuBLAS\n"
        "(COMPUTE_32F and COMPUTE_16F) on the same buffers: C = A * B^T, fp16, row-major\n"
        "A (M x K), B (N x K), C (M x N).\n"
        "\n"
        "options (each also as --option=VALUE; --size=N is N N N, --size=M,N,K three sizes):\n"
        "  --kernels LIST   comma-separated kernel names, any case (see --list), auto and\n"
        "                   auto-f16acc (HGEMM_KERNEL_AUTO and AUTO_F16ACC: the library's\n"
        "                   choice by shape) or all (default: all)\n"
        "shapes (one of --size, --sweep, --suite, --shapes):\n"
        "  --size M N K     problem size (default: %d %d %d)\n"
        "  --sweep          run the built-in table of shapes instead of one size\n"
        "  --suite NAME     run a named suite of shapes: llm (%d shapes: Llama-3 decode\n"
        "                   and prefill, squares, long k, wide, ragged; as bench/shapes/llm.txt)\n"
        "  --shapes FILE    run the shapes of FILE: one 'M N K' per line, the sizes separated\n"
        "                   by spaces or commas; '#' starts a comment; blank lines are skipped\n"
        "  --list-shapes    print the shapes the run would time, one 'M N K' per line (a\n"
        "                   valid --shapes file), and exit; needs no GPU\n"
        "timing:\n"
        "  --warmup N       untimed launches before each timed window (default: %d)\n"
        "  --iters N        timed launches per window (default: %d)\n"
        "  --cooldown SEC   sleep before every measurement, cuBLAS included (default: %d)\n"
        "  --repeat N       measure the whole set N times (default: %d)\n"
        "  --rotate         rotate the operands of every shape; by default only those of\n"
        "                   memory-bound shapes (m or n <= %d) rotate\n"
        "  --no-rotate      rotate no shape's operands (the L2 may then serve the weights)\n"
        "                   Rotating: R copies of A, B and C, R >= %d, together >= %zu MiB (twice\n"
        "                   the L2 if that is more), R <= %d, within free device memory; every\n"
        "                   warm-up and timed launch, hgemm's and cuBLAS's alike, takes the next\n"
        "                   copy, so the L2 cannot serve what the launch before it read; the\n"
        "                   check runs on copy 0. Memory-bound shapes also show GB/s and %% of\n"
        "                   the HBM peak (%.0f GB/s, H200 datasheet).\n"
        "output:\n"
        "  --csv FILE       write one row per (kernel, shape, run), with metadata, to FILE;\n"
        "                   columns gbps (bytes of A and B read and C written over ms; beta is\n"
        "                   0, C is never read) and rotate_sets (R, 1 when not rotated) come\n"
        "                   last, '# rotated:' lines name the rotated shapes\n"
        "  --list           print the kernel table and exit\n"
        "  --accuracy       print mean, p99 and max absolute error of each kernel and of\n"
        "                   cuBLAS against the fp64 reference (unit-variance outputs); no timing\n"
        "  --accuracy-sweep --accuracy over k = 1024 .. 16384 on a 4096 x 4096 output\n"
        "                   (with --csv: one row per kernel and k, mean/p99/max_abs_err)\n"
        "  --host-cost      instead of timing shapes: the host time of one call of cuBLAS\n"
        "                   COMPUTE_32F and of each selected kernel, after a passed check, on\n"
        "                   a %d x %d x %d problem: %d warm-up calls, then %d batches of %d\n"
        "                   back-to-back calls timed with CLOCK_MONOTONIC, the median batch's\n"
        "                   microseconds per call printed (if the GPU runs a call slower than\n"
        "                   the host issues it, the launch queue fills and the GPU's time shows)\n"
        "  --host-cost-csv FILE\n"
        "                   --host-cost, and its rows (kernel,host_us,host_us_min,host_us_max,\n"
        "                   m,n,k,calls,batches,status), with metadata, to FILE: a CSV of its\n"
        "                   own, so that --csv's one row per (kernel, shape, run) stays as it is\n"
        "  --version        print the version and the git commit, and exit\n"
        "  -h, --help       print this help and exit\n"
        "\n"
        "exit status: 0 success; 1 bad arguments, a failed check or a CUDA error;\n"
        "2 no compute capability 9.0 GPU\n",
        program, DEFAULT_SIZE, DEFAULT_SIZE, DEFAULT_SIZE, LLM_COUNT, DEFAULT_WARMUP,
        DEFAULT_ITERS, DEFAULT_COOLDOWN_S, DEFAULT_REPEAT, MEMORY_BOUND_MN, MIN_ROTATE_SETS,
        ROTATE_MIN_BYTES >> 20, MAX_ROTATE_SETS, H200_HBM_PEAK_GBPS, HOST_COST_SIZE,
        HOST_COST_SIZE, HOST_COST_SIZE, HOST_COST_WARMUP, HOST_COST_BATCHES, HOST_COST_CALLS);
}

/* One message, a hint, and status 1. */
static int bad_usage(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", program);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s --help' for usage.\n", program);
    return EXIT_FAIL;
}

/* The same for a line of a --shapes file, named "FILE:LINE: "; returns -1. */
static int bad_shape_line(const char *path, long line_no, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: %s:%ld: ", program, path, line_no);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s --help' for usage.\n", program);
    return -1;
}

/* A whole decimal integer in [lo, hi]. */
static int parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    if (s == NULL || *s == '\0') return 0;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) return 0;
    *out = (int64_t)v;
    return 1;
}

static int parse_seconds(const char *s, double *out) {
    if (s == NULL || *s == '\0') return 0;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(v >= 0.0 && v <= MAX_COOLDOWN_S)) return 0;
    *out = v;
    return 1;
}

/* One name of --kernels: a table name in any case ("V5" is v5), an ablation,
 * or auto / auto-f16acc, which run HGEMM_KERNEL_AUTO / AUTO_F16ACC: the
 * library's choice by shape, through hgemm_nt_ws's own path. NULL if unknown. */
static const hgemm_kernel_info *kernel_by_any_name(const char *name) {
    if (strcasecmp(name, "auto") == 0) return hgemm__auto_row(HGEMM_KERNEL_AUTO);
    if (strcasecmp(name, "auto-f16acc") == 0) return hgemm__auto_row(HGEMM_KERNEL_AUTO_F16ACC);
    for (int i = 0; i < hgemm__kernel_count(); i++)
        if (strcasecmp(hgemm__kernel_at(i)->name, name) == 0) return hgemm__kernel_at(i);
    for (int i = 0; i < hgemm__experiment_count(); i++) /* ablations, e.g. v8-nocluster */
        if (strcasecmp(hgemm__experiment_at(i)->name, name) == 0) return hgemm__experiment_at(i);
    return NULL;
}

/* "v0,v1", "auto" or "all" into o->kernels; 0 after printing a message. */
static int parse_kernels(const char *list, options *o) {
    o->n_kernels = 0;
    if (strcasecmp(list, "all") == 0) {
        for (int i = 0; i < hgemm__kernel_count() && i < MAX_SELECTED; i++)
            o->kernels[o->n_kernels++] = hgemm__kernel_at(i);
        return 1;
    }
    size_t len = strlen(list);
    char *copy = (char *)xmalloc(len + 1);
    memcpy(copy, list, len + 1);
    int ok = 1;
    char *item = copy;
    for (;;) {
        char *comma = strchr(item, ',');
        if (comma) *comma = '\0';
        const hgemm_kernel_info *info = kernel_by_any_name(item);
        if (*item == '\0') {
            bad_usage("--kernels: empty name in '%s'", list);
            ok = 0;
        } else if (info == NULL) {
            bad_usage("--kernels: unknown kernel '%s' (see --list; or auto, or all)", item);
            ok = 0;
        } else {
            for (int i = 0; i < o->n_kernels; i++)
                if (o->kernels[i] == info) {
                    bad_usage("--kernels: '%s' is listed twice (as %s)", item, info->name);
                    ok = 0;
                }
            if (ok && o->n_kernels == MAX_SELECTED) {
                bad_usage("--kernels: more than %d kernels", MAX_SELECTED);
                ok = 0;
            }
            if (ok) o->kernels[o->n_kernels++] = info;
        }
        if (!ok || comma == NULL) break;
        item = comma + 1;
    }
    free(copy);
    return ok;
}

/* --size=VALUE: "N" (N x N x N) or three sizes "M,N,K" (or "MxNxK"). */
static int parse_size_value(const char *value, shape *out) {
    char buf[TEXT_LEN];
    if (strlen(value) >= sizeof buf) return bad_usage("--size: '%s' is too long", value);
    memcpy(buf, value, strlen(value) + 1);
    int64_t d[3];
    int count = 0;
    char *item = buf;
    for (;;) {
        char *sep = strpbrk(item, ",x");
        if (sep) *sep = '\0';
        if (count == 3) return bad_usage("--size=%s: expected N or M,N,K", value);
        if (!parse_int(item, 1, INT32_MAX, &d[count]))
            return bad_usage("--size: '%s' is not a positive integer (M, N and K must be 1..%d)",
                             item, INT32_MAX);
        count++;
        if (sep == NULL) break;
        item = sep + 1;
    }
    if (count == 2) return bad_usage("--size=%s: expected N or M,N,K", value);
    *out = count == 1 ? (shape){d[0], d[0], d[0]} : (shape){d[0], d[1], d[2]};
    return -1;
}

/* One line of a --shapes file, its comment already cut: 0 for a blank line,
 * 1 with *out set, -1 after a message naming path and line. Sizes are
 * separated by blanks, or by one comma with or without blanks around it. */
static int parse_shape_line(const char *line, const char *path, long line_no, shape *out) {
    static const char blanks[] = " \t\r\v\f";
    int64_t d[3];
    int count = 0;
    const char *s = line;
    for (;;) {
        s += strspn(s, blanks);
        if (*s == '\0') break;
        if (*s == ',') {
            if (count == 0) return bad_shape_line(path, line_no, "a comma before the first size");
            s++;
            s += strspn(s, blanks);
            if (*s == '\0' || *s == ',')
                return bad_shape_line(path, line_no, "a comma without a size after it");
        }
        const size_t len = strcspn(s, " \t\r\v\f,");
        char item[TEXT_LEN];
        if (len >= sizeof item) return bad_shape_line(path, line_no, "a size is too long");
        memcpy(item, s, len);
        item[len] = '\0';
        if (count == 3)
            return bad_shape_line(path, line_no, "more than three sizes ('%s' after M N K)", item);
        if (!parse_int(item, 1, INT32_MAX, &d[count]))
            return bad_shape_line(path, line_no,
                                  "'%s' is not a positive integer (M, N and K must be 1..%d)", item,
                                  INT32_MAX);
        count++;
        s += len;
    }
    if (count == 0) return 0;
    if (count != 3)
        return bad_shape_line(path, line_no, "expected three sizes M N K, got %d", count);
    *out = (shape){d[0], d[1], d[2]};
    return 1;
}

/* --shapes FILE into o->file_shapes: -1 to go on, or the exit status (then
 * nothing is left allocated). */
static int read_shapes_file(const char *path, options *o) {
    FILE *f = fopen(path, "r");
    if (f == NULL) return bad_usage("--shapes: cannot read '%s': %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    long line_no = 0;
    int ok = 1, n = 0, room = 0;
    shape *v = NULL;
    for (;;) {
        errno = 0;
        if (getline(&line, &cap, f) < 0) break;
        line_no++;
        line[strcspn(line, "#\n")] = '\0'; /* the comment and the line's end */
        shape sh;
        const int got = parse_shape_line(line, path, line_no, &sh);
        if (got < 0) {
            ok = 0;
            break;
        }
        if (got == 0) continue;
        if (n == MAX_FILE_SHAPES) {
            bad_shape_line(path, line_no, "more than %d shapes", MAX_FILE_SHAPES);
            ok = 0;
            break;
        }
        if (n == room) {
            room = room ? 2 * room : 64;
            shape *grown = (shape *)realloc(v, (size_t)room * sizeof(shape));
            if (grown == NULL) {
                fprintf(stderr, "%s: out of host memory\n", program);
                exit(EXIT_FAIL);
            }
            v = grown;
        }
        v[n++] = sh;
    }
    const int read_error = ok && ferror(f);
    const int err = errno ? errno : EIO;
    free(line);
    fclose(f);
    if (read_error) bad_usage("--shapes: error reading '%s': %s", path, strerror(err));
    else if (ok && n == 0) bad_usage("--shapes: '%s' holds no shape (one 'M N K' per line)", path);
    if (!ok || read_error || n == 0) {
        free(v);
        return EXIT_FAIL;
    }
    o->file_shapes = v;
    o->n_file_shapes = n;
    return -1;
}

static void options_free(options *o) {
    free(o->file_shapes);
    o->file_shapes = NULL;
    o->n_file_shapes = 0;
}

/* The shapes the run times, and what they are for the CSV header. */
static const shape *selected_shapes(const options *o, int *count, char *what, size_t what_len) {
    if (o->accuracy_sweep) {
        *count = ACCURACY_SWEEP_COUNT;
        snprintf(what, what_len, "accuracy sweep (%d shapes)", *count);
        return accuracy_shapes;
    }
    if (o->sweep) {
        *count = SWEEP_COUNT;
        snprintf(what, what_len, "sweep (%d shapes)", *count);
        return sweep_shapes;
    }
    if (o->suite) {
        *count = o->suite->count;
        snprintf(what, what_len, "suite %s (%d shapes)", o->suite->name, *count);
        return o->suite->shapes;
    }
    if (o->shapes_path) {
        *count = o->n_file_shapes;
        snprintf(what, what_len, "file %s (%d shapes)", o->shapes_path, *count);
        return o->file_shapes;
    }
    *count = 1;
    snprintf(what, what_len, "size");
    return &o->size;
}

static int memory_bound(shape s) { return s.m <= MEMORY_BOUND_MN || s.n <= MEMORY_BOUND_MN; }

static int rotation_wanted(const options *o, shape s) {
    if (o->accuracy || o->rotate == ROTATE_NONE) return 0;
    return o->rotate == ROTATE_ALL || memory_bound(s);
}

/* Returns -1 to go on, or the exit status. Every option taking a value takes
 * it as the next argument or after '=' (--iters=100); --size=... is one word. */
static int parse_args(int argc, char **argv, options *o) {
    memset(o, 0, sizeof *o);
    o->size = (shape){DEFAULT_SIZE, DEFAULT_SIZE, DEFAULT_SIZE};
    o->warmup = DEFAULT_WARMUP;
    o->iters = DEFAULT_ITERS;
    o->repeat = DEFAULT_REPEAT;
    o->cooldown_s = DEFAULT_COOLDOWN_S;
    int kernels_given = 0, rotate_all = 0, rotate_none = 0;
    char name[TEXT_LEN];
    char suite_names[TEXT_LEN] = "";
    for (int j = 0; j < SUITE_COUNT; j++)
        snprintf(suite_names + strlen(suite_names), sizeof suite_names - strlen(suite_names), "%s%s",
                 j ? ", " : "", suites[j].name);
    for (int i = 1; i < argc; i++) {
        /* a is the option's name; val its value: after '=', else the next argument. */
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        int inline_val = 0;
        const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        if (eq != NULL) {
            size_t len = (size_t)(eq - a);
            if (len >= sizeof name) return bad_usage("unknown option '%s'", a);
            memcpy(name, a, len);
            name[len] = '\0';
            a = name;
            val = eq + 1;
            inline_val = 1;
        }
        const int takes_value = strcmp(a, "--kernels") == 0 || strcmp(a, "--size") == 0 ||
                                strcmp(a, "--warmup") == 0 || strcmp(a, "--iters") == 0 ||
                                strcmp(a, "--repeat") == 0 || strcmp(a, "--cooldown") == 0 ||
                                strcmp(a, "--csv") == 0 || strcmp(a, "--suite") == 0 ||
                                strcmp(a, "--shapes") == 0 || strcmp(a, "--host-cost-csv") == 0;
        if (inline_val && !takes_value) {
            if (strcmp(a, "--help") == 0 || strcmp(a, "--list") == 0 || strcmp(a, "--accuracy") == 0 ||
                strcmp(a, "--accuracy-sweep") == 0 || strcmp(a, "--sweep") == 0 ||
                strcmp(a, "--version") == 0 || strcmp(a, "--list-shapes") == 0 ||
                strcmp(a, "--rotate") == 0 || strcmp(a, "--no-rotate") == 0 ||
                strcmp(a, "--host-cost") == 0)
                return bad_usage("%s takes no value", a);
            return bad_usage("unknown option '%s'", a);
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            o->help = 1;
        } else if (strcmp(a, "--version") == 0) {
            o->version = 1;
        } else if (strcmp(a, "--list") == 0) {
            o->list = 1;
        } else if (strcmp(a, "--accuracy") == 0) {
            o->accuracy = 1;
        } else if (strcmp(a, "--accuracy-sweep") == 0) {
            o->accuracy = 1;
            o->accuracy_sweep = 1;
        } else if (strcmp(a, "--sweep") == 0) {
            o->sweep = 1;
        } else if (strcmp(a, "--list-shapes") == 0) {
            o->list_shapes = 1;
        } else if (strcmp(a, "--rotate") == 0) {
            rotate_all = 1;
        } else if (strcmp(a, "--no-rotate") == 0) {
            rotate_none = 1;
        } else if (strcmp(a, "--host-cost") == 0) {
            o->host_cost = 1;
        } else if (strcmp(a, "--suite") == 0) {
            if (val == NULL || *val == '\0') return bad_usage("--suite needs a name: %s", suite_names);
            if (o->suite != NULL) return bad_usage("--suite is given twice");
            for (int j = 0; j < SUITE_COUNT; j++)
                if (strcasecmp(suites[j].name, val) == 0) o->suite = &suites[j];
            if (o->suite == NULL) return bad_usage("--suite: unknown suite '%s' (known: %s)", val, suite_names);
            i += !inline_val;
        } else if (strcmp(a, "--shapes") == 0) {
            if (val == NULL || *val == '\0') return bad_usage("--shapes needs a file name");
            if (o->shapes_path != NULL) return bad_usage("--shapes is given twice");
            o->shapes_path = val;
            i += !inline_val;
        } else if (strcmp(a, "--host-cost-csv") == 0) {
            if (val == NULL || *val == '\0') return bad_usage("--host-cost-csv needs a file name");
            o->host_cost_csv = val;
            o->host_cost = 1;
            i += !inline_val;
        } else if (strcmp(a, "--kernels") == 0) {
            if (val == NULL || (inline_val && *val == '\0'))
                return bad_usage("--kernels needs an argument: a list like v0,v1, auto or all");
            if (!parse_kernels(val, o)) return EXIT_FAIL;
            kernels_given = 1;
            i += !inline_val;
        } else if (strcmp(a, "--size") == 0 && inline_val) {
            int rc = parse_size_value(val, &o->size);
            if (rc >= 0) return rc;
            o->size_given = 1;
        } else if (strcmp(a, "--size") == 0) {
            int64_t d[3];
            for (int j = 0; j < 3; j++) {
                if (i + 1 + j >= argc)
                    return bad_usage("--size needs three arguments M N K, got %d", j);
                if (!parse_int(argv[i + 1 + j], 1, INT32_MAX, &d[j]))
                    return bad_usage("--size: '%s' is not a positive integer (M, N and K must be "
                                     "1..%d)", argv[i + 1 + j], INT32_MAX);
            }
            o->size = (shape){d[0], d[1], d[2]};
            o->size_given = 1;
            i += 3;
        } else if (strcmp(a, "--warmup") == 0 || strcmp(a, "--iters") == 0 ||
                   strcmp(a, "--repeat") == 0) {
            int64_t lo = strcmp(a, "--warmup") == 0 ? 0 : 1, v = 0;
            if (val == NULL) return bad_usage("%s needs an argument", a);
            if (!parse_int(val, lo, MAX_COUNT, &v))
                return bad_usage("%s: '%s' is not an integer in %lld..%d", a, val, (long long)lo, MAX_COUNT);
            if (strcmp(a, "--warmup") == 0) {
                o->warmup = v;
                o->timing_flag = "--warmup";
            } else if (strcmp(a, "--iters") == 0) {
                o->iters = v;
                o->timing_flag = "--iters";
            } else {
                o->repeat = v;
                o->timing_flag = "--repeat";
            }
            i += !inline_val;
        } else if (strcmp(a, "--cooldown") == 0) {
            if (val == NULL) return bad_usage("--cooldown needs an argument (seconds)");
            if (!parse_seconds(val, &o->cooldown_s))
                return bad_usage("--cooldown: '%s' is not a number of seconds in 0..%d", val, MAX_COOLDOWN_S);
            o->timing_flag = "--cooldown";
            i += !inline_val;
        } else if (strcmp(a, "--csv") == 0) {
            if (val == NULL || *val == '\0') return bad_usage("--csv needs a file name");
            o->csv = val;
            i += !inline_val;
        } else if (a[0] == '-') {
            return bad_usage("unknown option '%s'", a);
        } else {
            return bad_usage("unexpected argument '%s'", a);
        }
    }
    /* Options that exclude each other, then the shapes file (read last: an
     * error before it leaves nothing allocated). */
    if (rotate_all && rotate_none) return bad_usage("--rotate and --no-rotate exclude each other");
    o->rotate = rotate_all ? ROTATE_ALL : rotate_none ? ROTATE_NONE : ROTATE_AUTO;
    o->rotate_given = rotate_all || rotate_none;
    const char *rotate_flag = rotate_all ? "--rotate" : "--no-rotate";
    const char *shape_flags[4];
    int n_shape_flags = 0;
    if (o->size_given) shape_flags[n_shape_flags++] = "--size";
    if (o->sweep) shape_flags[n_shape_flags++] = "--sweep";
    if (o->suite) shape_flags[n_shape_flags++] = "--suite";
    if (o->shapes_path) shape_flags[n_shape_flags++] = "--shapes";
    if (n_shape_flags > 1)
        return bad_usage("%s and %s exclude each other", shape_flags[0], shape_flags[1]);
    if (o->accuracy_sweep && n_shape_flags > 0)
        return bad_usage("--accuracy-sweep has its own shapes: no --size, --sweep, --suite or "
                         "--shapes with it");
    const char *accuracy_flag = o->accuracy_sweep ? "--accuracy-sweep" : "--accuracy";
    if (o->host_cost) {
        if (o->accuracy) return bad_usage("--host-cost and %s exclude each other", accuracy_flag);
        if (n_shape_flags > 0)
            return bad_usage("--host-cost times its own %d x %d x %d problem: no %s with it",
                             HOST_COST_SIZE, HOST_COST_SIZE, HOST_COST_SIZE, shape_flags[0]);
        if (o->list_shapes) return bad_usage("--list-shapes lists timed shapes: not with --host-cost");
        if (o->rotate_given) return bad_usage("%s applies to timed shapes: not with --host-cost", rotate_flag);
        if (o->timing_flag)
            return bad_usage("%s does not apply to --host-cost (%d warm-up calls, then %d batches of "
                             "%d calls)", o->timing_flag, HOST_COST_WARMUP, HOST_COST_BATCHES,
                             HOST_COST_CALLS);
        if (o->csv)
            return bad_usage("--csv holds timed shapes' rows: --host-cost writes its own with "
                             "--host-cost-csv FILE");
    }
    if (o->rotate_given && o->accuracy)
        return bad_usage("%s applies to timing: not with %s", rotate_flag, accuracy_flag);
    if (!kernels_given) parse_kernels("all", o);
    if (o->shapes_path) return read_shapes_file(o->shapes_path, o);
    return -1;
}

/* ---- NVML through dlopen ------------------------------------------------------ */

static void nvml_open(nvml *nv, int cuda_dev) {
    memset(nv, 0, sizeof *nv);
    nv->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (nv->lib == NULL) return;
    nvml_init_fn init = (nvml_init_fn)dlsym(nv->lib, "nvmlInit_v2");
    nvml_handle_by_pci_fn by_pci = (nvml_handle_by_pci_fn)dlsym(nv->lib, "nvmlDeviceGetHandleByPciBusId_v2");
    nvml_driver_fn driver = (nvml_driver_fn)dlsym(nv->lib, "nvmlSystemGetDriverVersion");
    nv->shutdown = (nvml_shutdown_fn)dlsym(nv->lib, "nvmlShutdown");
    nv->clock = (nvml_clock_fn)dlsym(nv->lib, "nvmlDeviceGetClockInfo");
    nv->max_clock = (nvml_clock_fn)dlsym(nv->lib, "nvmlDeviceGetMaxClockInfo");
    nv->temperature = (nvml_temperature_fn)dlsym(nv->lib, "nvmlDeviceGetTemperature");
    char bus[PCI_BUS_ID_LEN];
    if (init == NULL || by_pci == NULL || nv->clock == NULL || init() != NVML_SUCCESS) return;
    nv->initialized = 1;
    /* NVML numbers devices its own way: find ours by PCI bus id. */
    if (cudaDeviceGetPCIBusId(bus, (int)sizeof bus, cuda_dev) != cudaSuccess ||
        by_pci(bus, &nv->dev) != NVML_SUCCESS) {
        (void)cudaGetLastError();
        nv->dev = NULL;
        return;
    }
    if (driver == NULL || driver(nv->driver, (unsigned)sizeof nv->driver) != NVML_SUCCESS)
        nv->driver[0] = '\0';
}

/* The current SM clock in MHz, or -1 without NVML. */
static int nvml_sm_clock(const nvml *nv) {
    unsigned mhz = 0;
    if (nv->dev == NULL || nv->clock(nv->dev, NVML_CLOCK_SM, &mhz) != NVML_SUCCESS) return -1;
    return (int)mhz;
}

static int nvml_sm_clock_max(const nvml *nv) {
    unsigned mhz = 0;
    if (nv->dev == NULL || nv->max_clock == NULL ||
        nv->max_clock(nv->dev, NVML_CLOCK_SM, &mhz) != NVML_SUCCESS)
        return -1;
    return (int)mhz;
}

/* The GPU temperature in degrees C, or -1 without NVML. */
static int nvml_temperature_c(const nvml *nv) {
    unsigned c = 0;
    if (nv->dev == NULL || nv->temperature == NULL ||
        nv->temperature(nv->dev, NVML_TEMPERATURE_GPU, &c) != NVML_SUCCESS)
        return -1;
    return (int)c;
}

static void nvml_close(nvml *nv) {
    if (nv->initialized && nv->shutdown) nv->shutdown();
    if (nv->lib) dlclose(nv->lib);
    memset(nv, 0, sizeof *nv);
}

/* ---- small helpers -------------------------------------------------------------- */

static int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

static void sleep_seconds(double s) {
    if (s <= 0.0) return;
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * NS_PER_S);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static void command_line(int argc, char **argv, char *out, size_t len) {
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < argc && used + 1 < len; i++) {
        const char *a = argv[i];
        int quote = *a == '\0' || strpbrk(a, " \t'\"$\\*?;&|<>()") != NULL;
        int w = snprintf(out + used, len - used, "%s%s%s%s", i ? " " : "", quote ? "'" : "", a,
                         quote ? "'" : "");
        if (w < 0) break;
        used += (size_t)w;
    }
}

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * NS_PER_S + (double)ts.tv_nsec;
}

/* Bytes one launch moves: A and B read, C written, and C read too when beta
 * is not 0 (never here: BENCH_BETA). The numerator of the gbps column. */
static double operand_bytes(int64_t m, int64_t n, int64_t k) {
    const double c_passes = BENCH_BETA != 0.0f ? 2.0 : 1.0;
    return (double)FP16_BYTES * ((double)m * (double)k + (double)n * (double)k +
                                 c_passes * (double)m * (double)n);
}

static double median_of(double *v, int count) {
    if (count == 0) return NAN;
    double lo = hgemm_check_select(v, count, (count - 1) / 2);
    if (count % 2) return lo;
    double hi = hgemm_check_select(v, count, count / 2);
    return (lo + hi) / 2;
}

/* ---- the problem of one shape ------------------------------------------------------ */

/* How the timed launches of shape s rotate over operand sets: when wanted,
 * R = ceil(target_bytes / bytes per set), at least MIN_ROTATE_SETS and at
 * most MAX_ROTATE_SETS, and no more than free_bytes holds beside the shape's
 * own buffers (and ROTATE_RESERVE_BYTES); R = 1 if not even two fit. Between
 * two launches on one set the others move max(set, target - set) >= half
 * the target bytes, more than the L2 holds. */
static rotation rotation_plan(shape s, int wanted, size_t free_bytes, size_t target_bytes) {
    rotation r;
    memset(&r, 0, sizeof r);
    const int64_t lda = round_up(s.k, LD_ALIGN), ldb = lda, ldc = round_up(s.n, LD_ALIGN);
    r.wanted = wanted;
    r.sets = r.sets_wanted = 1;
    r.set_bytes = operand_bytes(s.m, s.n, s.k);
    r.stride_a = (size_t)round_up(s.m * lda * FP16_BYTES, ROTATE_ALIGN);
    r.stride_b = (size_t)round_up(s.n * ldb * FP16_BYTES, ROTATE_ALIGN);
    r.stride_c = (size_t)round_up(s.m * ldc * FP16_BYTES, ROTATE_ALIGN);
    if (!wanted) return r;
    const double sets = fmin(fmax(ceil((double)target_bytes / r.set_bytes), MIN_ROTATE_SETS),
                             MAX_ROTATE_SETS);
    r.sets_wanted = (int)sets;
    /* what problem_setup allocates for set 0, the reference and the workspace */
    const double own = (double)FP16_BYTES * ((double)s.m * (double)lda + (double)s.n * (double)ldb +
                                             (double)(s.m + 2 * GUARD_ROWS) * (double)ldc) +
                       (double)s.m * (double)s.n * (double)sizeof(double) +
                       (double)HGEMM_WORKSPACE_BYTES;
    const double spare = (double)free_bytes - own - (double)ROTATE_RESERVE_BYTES;
    const double per_set = (double)(r.stride_a + r.stride_b + r.stride_c);
    const double fit = spare > 0 ? 1.0 + floor(spare / per_set) : 1.0; /* set 0 included */
    r.sets = (int)fmin(sets, fit);
    if (r.sets < MIN_ROTATE_SETS) r.sets = 1;
    return r;
}

/* cudaMalloc for the rotated sets, with a message of its own when the
 * device memory runs out (the plan left room, so this is not expected). */
static void *rotation_malloc(size_t bytes, shape s, int sets) {
    void *ptr = NULL;
    const cudaError_t err = cudaMalloc(&ptr, bytes);
    if (err == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        fprintf(stderr, "%s: %lld x %lld x %lld: no device memory for %d rotated operand sets; "
                "try --no-rotate\n", program, (long long)s.m, (long long)s.n, (long long)s.k, sets);
        exit(EXIT_FAIL);
    }
    HGEMM_CHECK_CUDA(err);
    return ptr;
}

/* Operand set `set` of p: 0 is A, B and the guarded C; 1 .. R-1 the copies. */
static operands problem_set(const problem *p, int set) {
    if (set == 0) return (operands){p->A, p->B, p->C.C};
    const size_t i = (size_t)(set - 1);
    return (operands){(const char *)p->rot_A + i * p->rot.stride_a,
                      (const char *)p->rot_B + i * p->rot.stride_b,
                      (char *)p->rot_C + i * p->rot.stride_c};
}

static void problem_setup(problem *p, shape s, rotation rot) {
    memset(p, 0, sizeof *p);
    p->m = s.m;
    p->n = s.n;
    p->k = s.k;
    p->lda = round_up(s.k, LD_ALIGN);
    p->ldb = round_up(s.k, LD_ALIGN);
    p->ldc = round_up(s.n, LD_ALIGN);
    p->rot = rot;
    const size_t a_bytes = (size_t)(p->m * p->lda) * sizeof(uint16_t);
    const size_t b_bytes = (size_t)(p->n * p->ldb) * sizeof(uint16_t);
    HGEMM_CHECK_CUDA(cudaMalloc(&p->A, a_bytes));
    HGEMM_CHECK_CUDA(cudaMalloc(&p->B, b_bytes));
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&p->ref, (size_t)(p->m * p->n) * sizeof(double)));
    HGEMM_CHECK_CUDA(cudaMalloc(&p->workspace, HGEMM_WORKSPACE_BYTES));
    HGEMM_CHECK_CUDA(cudaMemset(p->workspace, 0, HGEMM_WORKSPACE_BYTES));
    hgemm_check_guarded_alloc(&p->C, p->m, p->n, p->ldc, GUARD_ROWS);
    /* NaN in the padding columns: a kernel that reads past k is caught. */
    hgemm_check_fill_pattern(p->A, p->m, p->lda, p->lda, HGEMM_CHECK_NAN, 0);
    hgemm_check_fill_pattern(p->B, p->n, p->ldb, p->ldb, HGEMM_CHECK_NAN, 0);
    float scale = hgemm_check_unit_scale(p->k);
    hgemm_check_fill_random(p->A, p->m, p->k, p->lda, SEED_A, scale, 0);
    hgemm_check_fill_random(p->B, p->n, p->k, p->ldb, SEED_B, scale, 0);
    hgemm_check_reference(p->m, p->n, p->k, 1.0, p->A, p->lda, p->B, p->ldb, 0.0, NULL, 0, p->ref,
                          p->n, 0);
    if (rot.sets > 1) {
        /* Sets 1 .. R-1: byte copies of A and B (padding included), after
         * their fills on the same stream; their C is NaN (0xffff), which a
         * launch never reads (beta 0) and always overwrites. */
        const size_t extra = (size_t)(rot.sets - 1);
        p->rot_A = rotation_malloc(extra * rot.stride_a, s, rot.sets);
        p->rot_B = rotation_malloc(extra * rot.stride_b, s, rot.sets);
        p->rot_C = rotation_malloc(extra * rot.stride_c, s, rot.sets);
        for (int i = 1; i < rot.sets; i++) {
            const operands o = problem_set(p, i);
            HGEMM_CHECK_CUDA(cudaMemcpyAsync((void *)o.A, p->A, a_bytes, cudaMemcpyDeviceToDevice, 0));
            HGEMM_CHECK_CUDA(cudaMemcpyAsync((void *)o.B, p->B, b_bytes, cudaMemcpyDeviceToDevice, 0));
        }
        HGEMM_CHECK_CUDA(cudaMemsetAsync(p->rot_C, 0xff, extra * rot.stride_c, 0));
    }
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
}

static void problem_free(problem *p) {
    HGEMM_CHECK_CUDA(cudaFree(p->A));
    HGEMM_CHECK_CUDA(cudaFree(p->B));
    HGEMM_CHECK_CUDA(cudaFree(p->ref));
    HGEMM_CHECK_CUDA(cudaFree(p->workspace));
    hgemm_check_guarded_free(&p->C);
    HGEMM_CHECK_CUDA(cudaFree(p->rot_A)); /* cudaFree(NULL) does nothing */
    HGEMM_CHECK_CUDA(cudaFree(p->rot_B));
    HGEMM_CHECK_CUDA(cudaFree(p->rot_C));
    memset(p, 0, sizeof *p);
}

/* One launch of e on operand set o of p: BENCH_ALPHA, BENCH_BETA, the
 * default stream. Returns 1 on success, else 0 with the reason in why. */
static int launch(const entry *e, const problem *p, operands o, cublasHandle_t h, char *why,
                  size_t why_len) {
    if (e->kind == ENTRY_HGEMM) {
        /* hgemm_nt_ws's own path, by table row (ablations have no public id),
         * with a workspace, as cuBLAS has its own */
        hgemm_status st = hgemm__run_ws(e->info, p->m, p->n, p->k, BENCH_ALPHA, o.A, p->lda, o.B,
                                        p->ldb, BENCH_BETA, o.C, p->ldc, p->workspace,
                                        HGEMM_WORKSPACE_BYTES, 0);
        if (st != HGEMM_SUCCESS) {
            snprintf(why, why_len, "hgemm_nt returned %d: %s", (int)st, hgemm_status_string(st));
            (void)cudaGetLastError(); /* this kernel's failure: not left for the next check */
            return 0;
        }
        return 1;
    }
    /* Row-major NT is column-major C^T = B * A^T: swap the operands, transpose B. */
    const float alpha32 = BENCH_ALPHA, beta32 = BENCH_BETA;
    const uint16_t alpha16 = hgemm_check_f32_to_f16(BENCH_ALPHA); /* __half bits */
    const uint16_t beta16 = hgemm_check_f32_to_f16(BENCH_BETA);
    int f32 = e->kind == ENTRY_CUBLAS32;
    CHECK_CUBLAS(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)p->n, (int)p->m, (int)p->k,
                              f32 ? (const void *)&alpha32 : (const void *)&alpha16, o.B,
                              CUDA_R_16F, (int)p->ldb, o.A, CUDA_R_16F, (int)p->lda,
                              f32 ? (const void *)&beta32 : (const void *)&beta16, o.C,
                              CUDA_R_16F, (int)p->ldc,
                              f32 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_16F, CUBLAS_GEMM_DEFAULT));
    return 1;
}

/* Poisoned C, one launch, the comparison and the guard band. */
static void check_entry(const entry *e, const problem *p, cublasHandle_t h, result *r) {
    hgemm_check_guarded_reset(&p->C, 0);
    hgemm_check_fill_pattern(p->C.C, p->m, p->n, p->ldc, HGEMM_CHECK_NAN, 0);
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    if (!launch(e, p, problem_set(p, 0), h, r->why, sizeof r->why)) {
        r->status = OUTCOME_LAUNCH_FAILED;
        return;
    }
    HGEMM_CHECK_LAUNCH();
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    int ok = hgemm_check_compare(p->C.C, p->ldc, p->ref, p->n, p->m, p->n, e->atol,
                                 HGEMM_CHECK_RTOL, &r->stats, 0);
    hgemm_check_guard_report g;
    int intact = hgemm_check_guard_intact(&p->C, &g, 0);
    if (!ok) {
        r->status = OUTCOME_CHECK_FAILED;
        snprintf(r->why, sizeof r->why, "%lld of %lld elements outside atol %g + rtol %g * |ref|",
                 (long long)r->stats.failed, (long long)r->stats.count, e->atol, HGEMM_CHECK_RTOL);
    } else if (!intact) {
        r->status = OUTCOME_CHECK_FAILED;
        snprintf(r->why, sizeof r->why,
                 "%lld elements outside C changed, the first at row %lld, column %lld (0x%04x)",
                 (long long)g.bad, (long long)g.first_row, (long long)g.first_col, g.first_value);
    }
}

/* While `stop` is pending: sample the SM clock and the temperature about
 * every WINDOW_SAMPLE_US and keep the clock's mean and the temperature's
 * maximum in r. The host only polls; the GPU's work is not touched. */
static void sample_window(const nvml *nv, cudaEvent_t stop, result *r) {
    double clock_sum = 0;
    int clocks = 0, temp_max = -1;
    cudaError_t q;
    while ((q = cudaEventQuery(stop)) == cudaErrorNotReady) {
        const int mhz = nvml_sm_clock(nv), celsius = nvml_temperature_c(nv);
        if (mhz >= 0) clock_sum += mhz, clocks++;
        if (celsius > temp_max) temp_max = celsius;
        sleep_seconds(WINDOW_SAMPLE_US * 1e-6);
    }
    if (q != cudaSuccess) HGEMM_CHECK_CUDA(q);
    r->window_clock_mhz = clocks ? (int)(clock_sum / clocks + 0.5) : -1;
    r->window_temp_c = temp_max;
}

/* Warm-up, then the timed window. With R operand sets the launches take
 * sets 1, 2, ..., R-1, 0, 1, ... in turn (set 0 was just read by the check),
 * warm-up and window alike; with R == 1 every launch takes set 0. */
static void time_entry(const entry *e, const problem *p, cublasHandle_t h, const options *o,
                       const nvml *nv, cudaEvent_t start, cudaEvent_t stop, result *r) {
    const int sets = p->rot.sets;
    int set = 0;
    for (int64_t i = 0; i < o->warmup; i++) {
        set = (set + 1) % sets;
        if (!launch(e, p, problem_set(p, set), h, r->why, sizeof r->why)) goto failed;
    }
    HGEMM_CHECK_LAUNCH();
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    r->clock_before = nvml_sm_clock(nv);
    HGEMM_CHECK_CUDA(cudaEventRecord(start, 0));
    for (int64_t i = 0; i < o->iters; i++) {
        set = (set + 1) % sets;
        if (!launch(e, p, problem_set(p, set), h, r->why, sizeof r->why)) goto failed;
    }
    HGEMM_CHECK_LAUNCH();
    HGEMM_CHECK_CUDA(cudaEventRecord(stop, 0));
    sample_window(nv, stop, r);
    HGEMM_CHECK_CUDA(cudaEventSynchronize(stop));
    r->clock_after = nvml_sm_clock(nv);
    float total_ms = 0.0f;
    HGEMM_CHECK_CUDA(cudaEventElapsedTime(&total_ms, start, stop));
    r->timed = 1;
    r->ms = (double)total_ms / (double)o->iters;
    r->tflops = 2.0 * (double)p->m * (double)p->n * (double)p->k / (r->ms * 1e-3) / 1e12;
    r->gbps = operand_bytes(p->m, p->n, p->k) / (r->ms * 1e-3) / 1e9;
    return;
failed:
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    r->status = OUTCOME_LAUNCH_FAILED;
}

/* ---- output ------------------------------------------------------------------------- */

static const char *outcome_name(outcome s) {
    switch (s) {
    case OUTCOME_OK: return "ok";
    case OUTCOME_CHECK_FAILED: return "check_failed";
    case OUTCOME_LAUNCH_FAILED: return "launch_failed";
    }
    return "unknown";
}

static const char *const csv_columns =
    "kernel,m,n,k,run,ms,tflops,vs_cublas32,vs_cublas16,max_abs_err,mean_abs_err,p99_abs_err,"
    "failed_elements,status,accumulator,iters,warmup,sm_clock_before_mhz,sm_clock_after_mhz,"
    "window_sm_clock_mhz,window_max_temp_c,gbps,rotate_sets";

static void csv_row(FILE *f, const entry *e, const problem *p, int run, const result *r,
                    const options *o) {
    int have_err = r->status != OUTCOME_LAUNCH_FAILED;
    fprintf(f, "%s,%lld,%lld,%lld,%d,%.6f,%.3f,%.5f,%.5f,%.6e,%.6e,%.6e,%lld,%s,%s,%lld,%lld,%d,%d,%d,%d,"
               "%.3f,%d\n",
            e->name, (long long)p->m, (long long)p->n, (long long)p->k, run,
            r->timed ? r->ms : NAN, r->timed ? r->tflops : NAN, r->vs32, r->vs16,
            have_err ? r->stats.max_abs_err : NAN, have_err ? r->stats.mean_abs_err : NAN,
            have_err ? r->stats.p99_abs_err : NAN, (long long)r->stats.failed,
            outcome_name(r->status), e->acc, (long long)(r->timed ? o->iters : 0),
            (long long)(r->timed ? o->warmup : 0), r->timed ? r->clock_before : -1,
            r->timed ? r->clock_after : -1, r->timed ? r->window_clock_mhz : -1,
            r->timed ? r->window_temp_c : -1, r->timed ? r->gbps : NAN, p->rot.sets);
}

static void print_failure(const entry *e, const result *r) {
    printf("%-10s FAILED: %s\n", e->name, r->why);
    if (r->status == OUTCOME_CHECK_FAILED) hgemm_check_print_mismatches(stdout, &r->stats, "             ");
}

/* ", 4 operand sets rotated (33.6 MB each)" or "" */
static void rotation_note(char *out, size_t len, const rotation *rot) {
    if (rot->sets > 1)
        snprintf(out, len, ", %d operand sets rotated (%.1f MB each)", rot->sets, rot->set_bytes / 1e6);
    else if (rot->wanted)
        snprintf(out, len, ", not rotated (no device memory for a second operand set)");
    else
        out[0] = '\0';
}

/* Memory-bound shapes add GB/s and the share of the HBM peak. */
static void print_run_table(const entry *entries, int n_entries, const result *res,
                            const problem *p, int run, int runs) {
    const int mb = memory_bound((shape){p->m, p->n, p->k});
    char note[TEXT_LEN];
    rotation_note(note, sizeof note, &p->rot);
    printf("\n== %lld x %lld x %lld, run %d of %d%s%s ==\n", (long long)p->m, (long long)p->n,
           (long long)p->k, run, runs, mb ? "; memory-bound" : "", note);
    printf("%-10s %10s %10s %13s %13s %12s %7s %5s", "kernel", "ms", "TFLOP/s", "% cuBLAS 32F",
           "% cuBLAS 16F", "max error", "MHz", "C");
    if (mb) printf(" %9s %7s", "GB/s", "% HBM");
    printf("\n");
    for (int i = 0; i < n_entries; i++) {
        const result *r = &res[i];
        if (r->status != OUTCOME_OK) {
            print_failure(&entries[i], r);
            continue;
        }
        printf("%-10s %10.4f %10.1f %12.1f%% %12.1f%% %12.3e %7d %5d", entries[i].name, r->ms,
               r->tflops, 100.0 * r->vs32, 100.0 * r->vs16, r->stats.max_abs_err, r->window_clock_mhz,
               r->window_temp_c);
        if (mb) printf(" %9.1f %6.1f%%", r->gbps, 100.0 * r->gbps / H200_HBM_PEAK_GBPS);
        printf("\n");
    }
    fflush(stdout);
}

static void print_accuracy_table(const entry *entries, int n_entries, const result *res,
                                 const problem *p) {
    printf("\n== accuracy at %lld x %lld x %lld: |C - fp64 reference|, unit-variance outputs ==\n",
           (long long)p->m, (long long)p->n, (long long)p->k);
    printf("%-10s %5s %13s %13s %13s %10s %8s\n", "kernel", "acc", "mean abs err", "p99 abs err",
           "max abs err", "atol", "result");
    for (int i = 0; i < n_entries; i++) {
        const result *r = &res[i];
        if (r->status == OUTCOME_LAUNCH_FAILED) {
            print_failure(&entries[i], r);
            continue;
        }
        printf("%-10s %5s %13.3e %13.3e %13.3e %10g %8s\n", entries[i].name, entries[i].acc,
               r->stats.mean_abs_err, r->stats.p99_abs_err, r->stats.max_abs_err, entries[i].atol,
               r->status == OUTCOME_OK ? "PASS" : "FAIL");
        if (r->status != OUTCOME_OK) {
            printf("%-10s FAILED: %s\n", entries[i].name, r->why);
            hgemm_check_print_mismatches(stdout, &r->stats, "             ");
        }
    }
    fflush(stdout);
}

/* "median [min..max]" of the runs where the value exists. */
static void format_range(char *out, size_t len, double *v, int count, const char *fmt_one) {
    if (count == 0) {
        snprintf(out, len, "-");
        return;
    }
    double lo = v[0], hi = v[0];
    for (int i = 1; i < count; i++) {
        lo = fmin(lo, v[i]);
        hi = fmax(hi, v[i]);
    }
    double med = median_of(v, count);
    char a[TEXT_LEN / 4], b[TEXT_LEN / 4], c[TEXT_LEN / 4];
    snprintf(a, sizeof a, fmt_one, med);
    snprintf(b, sizeof b, fmt_one, lo);
    snprintf(c, sizeof c, fmt_one, hi);
    snprintf(out, len, "%s [%s..%s]", a, b, c);
}

static void print_summary(const entry *entries, int n_entries, result *const *runs, int n_runs,
                          const problem *p) {
    enum { FIELDS = 6 }; /* ms, TFLOP/s, % cuBLAS 32F, % cuBLAS 16F, GB/s, % HBM */
    const int mb = memory_bound((shape){p->m, p->n, p->k});
    const int fields = mb ? FIELDS : FIELDS - 2;
    printf("\n== %lld x %lld x %lld: median [min..max] over %d runs ==\n", (long long)p->m,
           (long long)p->n, (long long)p->k, n_runs);
    printf("%-10s %-28s %-28s %-24s %-24s", "kernel", "ms", "TFLOP/s", "% cuBLAS 32F", "% cuBLAS 16F");
    if (mb) printf(" %-28s %-24s", "GB/s", "% HBM");
    printf("\n");
    double *v = (double *)xmalloc((size_t)n_runs * sizeof(double));
    for (int i = 0; i < n_entries; i++) {
        char cols[FIELDS][TEXT_LEN];
        int failed = 0;
        for (int field = 0; field < fields; field++) {
            int count = 0;
            for (int run = 0; run < n_runs; run++) {
                const result *r = &runs[run][i];
                if (!r->timed) {
                    failed += field == 0;
                    continue;
                }
                const double x = field == 0 ? r->ms
                                 : field == 1 ? r->tflops
                                 : field == 2 ? 100.0 * r->vs32
                                 : field == 3 ? 100.0 * r->vs16
                                 : field == 4 ? r->gbps
                                              : 100.0 * r->gbps / H200_HBM_PEAK_GBPS;
                if (!isnan(x)) v[count++] = x;
            }
            format_range(cols[field], sizeof cols[field], v, count, field == 0 ? "%.4f" : "%.1f");
        }
        printf("%-10s %-28s %-28s %-24s %-24s", entries[i].name, cols[0], cols[1], cols[2], cols[3]);
        if (mb) printf(" %-28s %-24s", cols[4], cols[5]);
        if (failed) printf("  FAILED in %d of %d runs", failed, n_runs);
        printf("\n");
    }
    free(v);
    fflush(stdout);
}

static void print_kernel_list(void) {
    printf("%-6s %-5s %s\n", "name", "acc", "idea");
    for (int i = 0; i < hgemm__kernel_count(); i++) {
        const hgemm_kernel_info *k = hgemm__kernel_at(i);
        printf("%-6s %-5s %s\n", k->name, k->acc == HGEMM_ACC_F16 ? "fp16" : "fp32", k->idea);
    }
    for (int i = 0; i < hgemm__experiment_count(); i++) {
        const hgemm_kernel_info *k = hgemm__experiment_at(i);
        printf("%-6s %-5s ablation: %s\n", k->name, k->acc == HGEMM_ACC_F16 ? "fp16" : "fp32", k->idea);
    }
    const hgemm_kernel autos[] = {HGEMM_KERNEL_AUTO, HGEMM_KERNEL_AUTO_F16ACC};
    for (size_t i = 0; i < sizeof autos / sizeof autos[0]; i++) {
        const hgemm_kernel_info *k = hgemm__auto_row(autos[i]);
        printf("%-6s %-5s %s (src/api.c's table)\n", k->name, k->acc == HGEMM_ACC_F16 ? "fp16" : "fp32",
               k->idea);
    }
    printf("(baselines cublas32 and cublas16 always run)\n");
}

/* --list-shapes: one "M N K" per line, a valid --shapes file; a comment
 * says which shapes are memory-bound and which would rotate. */
static void print_shape_list(const options *o) {
    int count = 0;
    char what[TEXT_LEN];
    const shape *v = selected_shapes(o, &count, what, sizeof what);
    for (int i = 0; i < count; i++) {
        const int mb = memory_bound(v[i]), rot = rotation_wanted(o, v[i]);
        printf("%lld %lld %lld", (long long)v[i].m, (long long)v[i].n, (long long)v[i].k);
        if (mb) printf("  # memory-bound, %s", rot ? "operands rotated" : "not rotated");
        else if (rot) printf("  # operands rotated");
        printf("\n");
    }
}

/* ---- the shapes ---------------------------------------------------------------------- */

/* Every shape, run and entry: cooldown, check, timing; tables and CSV rows.
 * Returns 1 if any entry failed. */
static int run_shapes(const options *o, const entry *entries, int n_entries, const shape *shapes,
                      const rotation *plans, int n_shapes, cublasHandle_t handle, const nvml *nv,
                      cudaEvent_t start, cudaEvent_t stop, FILE *csv) {
    const int n_runs = o->accuracy ? 1 : (int)o->repeat;
    int any_failed = 0;
    result **runs = (result **)xmalloc((size_t)n_runs * sizeof(result *));
    for (int run = 0; run < n_runs; run++)
        runs[run] = (result *)xmalloc((size_t)n_entries * sizeof(result));

    for (int si = 0; si < n_shapes; si++) {
        problem p;
        char note[TEXT_LEN];
        rotation_note(note, sizeof note, &plans[si]);
        if (n_shapes > 1 || plans[si].sets > 1)
            fprintf(stderr, "[%d/%d] %lld x %lld x %lld: preparing data and the fp64 reference%s\n",
                    si + 1, n_shapes, (long long)shapes[si].m, (long long)shapes[si].n,
                    (long long)shapes[si].k, note);
        problem_setup(&p, shapes[si], plans[si]);
        for (int run = 0; run < n_runs; run++) {
            result *res = runs[run];
            memset(res, 0, (size_t)n_entries * sizeof(result));
            for (int i = 0; i < n_entries; i++) {
                result *r = &res[i];
                r->vs32 = r->vs16 = r->gbps = NAN;
                r->clock_before = r->clock_after = -1;
                r->window_clock_mhz = r->window_temp_c = -1;
                if (n_shapes > 1)
                    fprintf(stderr, "[%d/%d] %lld x %lld x %lld, run %d of %d: %s\n", si + 1,
                            n_shapes, (long long)p.m, (long long)p.n, (long long)p.k, run + 1,
                            n_runs, entries[i].name);
                if (!o->accuracy) sleep_seconds(o->cooldown_s);
                check_entry(&entries[i], &p, handle, r);
                /* One NVTX range per timed entry, named as in the CSV and holding
                 * only its launches: scripts/profile.sh profiles the first one
                 * inside "v6/", "cublas32/", ... */
                nvtxRangePushA(entries[i].name);
                if (r->status == OUTCOME_OK && !o->accuracy)
                    time_entry(&entries[i], &p, handle, o, nv, start, stop, r);
                nvtxRangePop();
                if (r->status != OUTCOME_OK) any_failed = 1;
            }
            /* Ratios within this run: cuBLAS time over the kernel's time. */
            const result *c32 = &res[0], *c16 = &res[1];
            for (int i = 0; i < n_entries; i++) {
                if (!res[i].timed) continue;
                if (c32->timed) res[i].vs32 = c32->ms / res[i].ms;
                if (c16->timed) res[i].vs16 = c16->ms / res[i].ms;
            }
            if (o->accuracy) print_accuracy_table(entries, n_entries, res, &p);
            else print_run_table(entries, n_entries, res, &p, run + 1, n_runs);
            if (csv) {
                for (int i = 0; i < n_entries; i++) csv_row(csv, &entries[i], &p, run + 1, &res[i], o);
                fflush(csv);
            }
        }
        if (n_runs > 1) print_summary(entries, n_entries, runs, n_runs, &p);
        problem_free(&p);
    }
    for (int run = 0; run < n_runs; run++) free(runs[run]);
    free(runs);
    return any_failed;
}

/* ---- host cost per call ------------------------------------------------------------- */

static const char *const host_cost_columns =
    "kernel,host_us,host_us_min,host_us_max,m,n,k,calls,batches,status";

/* --host-cost: for each entry, the check once, HOST_COST_WARMUP calls, then
 * HOST_COST_BATCHES batches of HOST_COST_CALLS back-to-back calls, each
 * timed on the host from before its first call to after its last returned,
 * the GPU drained between batches; the median batch's microseconds per call
 * are reported, with the range. Returns 1 if any entry failed. */
static int run_host_cost(const entry *entries, int n_entries, cublasHandle_t h, FILE *csv) {
    const shape s = {HOST_COST_SIZE, HOST_COST_SIZE, HOST_COST_SIZE};
    problem p;
    problem_setup(&p, s, rotation_plan(s, 0, 0, 0));
    printf("\n== host time per call, %d x %d x %d: median [min..max] of %d batches of %d calls ==\n",
           HOST_COST_SIZE, HOST_COST_SIZE, HOST_COST_SIZE, HOST_COST_BATCHES, HOST_COST_CALLS);
    printf("%-10s %10s %22s\n", "kernel", "us/call", "[min..max]");
    int any_failed = 0;
    for (int i = 0; i < n_entries; i++) {
        const entry *e = &entries[i];
        result r;
        memset(&r, 0, sizeof r);
        check_entry(e, &p, h, &r);
        double us[HOST_COST_BATCHES];
        int ok = r.status == OUTCOME_OK;
        const operands o = problem_set(&p, 0);
        for (int c = 0; ok && c < HOST_COST_WARMUP; c++) ok = launch(e, &p, o, h, r.why, sizeof r.why);
        HGEMM_CHECK_LAUNCH();
        HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
        for (int b = 0; ok && b < HOST_COST_BATCHES; b++) {
            const double t0 = now_ns();
            for (int c = 0; ok && c < HOST_COST_CALLS; c++) ok = launch(e, &p, o, h, r.why, sizeof r.why);
            const double t1 = now_ns();
            HGEMM_CHECK_LAUNCH();
            HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
            us[b] = (t1 - t0) / 1e3 / HOST_COST_CALLS;
        }
        if (!ok && r.status == OUTCOME_OK) r.status = OUTCOME_LAUNCH_FAILED;
        if (r.status != OUTCOME_OK) {
            print_failure(e, &r);
            any_failed = 1;
            if (csv)
                fprintf(csv, "%s,nan,nan,nan,%d,%d,%d,%d,%d,%s\n", e->name, HOST_COST_SIZE,
                        HOST_COST_SIZE, HOST_COST_SIZE, HOST_COST_CALLS, HOST_COST_BATCHES,
                        outcome_name(r.status));
            continue;
        }
        double lo = us[0], hi = us[0];
        for (int b = 1; b < HOST_COST_BATCHES; b++) {
            lo = fmin(lo, us[b]);
            hi = fmax(hi, us[b]);
        }
        const double med = median_of(us, HOST_COST_BATCHES);
        char range[TEXT_LEN];
        snprintf(range, sizeof range, "[%.2f..%.2f]", lo, hi);
        printf("%-10s %10.2f %22s\n", e->name, med, range);
        if (csv)
            fprintf(csv, "%s,%.4f,%.4f,%.4f,%d,%d,%d,%d,%d,%s\n", e->name, med, lo, hi, HOST_COST_SIZE,
                    HOST_COST_SIZE, HOST_COST_SIZE, HOST_COST_CALLS, HOST_COST_BATCHES,
                    outcome_name(r.status));
    }
    fflush(stdout);
    problem_free(&p);
    return any_failed;
}

/* ---- main --------------------------------------------------------------------------- */

typedef struct gpu_info {
    int device;
    char name[TEXT_LEN];
    int sm_count, clock_max_mhz, driver_version, runtime_version, cublas_version;
    int l2_bytes;        /* cudaDevAttrL2CacheSize */
    size_t free_bytes;   /* free device memory before the first shape */
} gpu_info;

static void write_metadata(FILE *f, const gpu_info *g, const nvml *nv, const options *o,
                           const char *command) {
    char date[TEXT_LEN];
    time_t now = time(NULL);
    struct tm tm_utc;
    gmtime_r(&now, &tm_utc);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm_utc);
    fprintf(f, "# tool: hgemm-bench\n");
    fprintf(f, "# gpu: %s\n", g->name);
    fprintf(f, "# sm_count: %d\n", g->sm_count);
    fprintf(f, "# sm_clock_max_mhz: %d\n", g->clock_max_mhz);
    fprintf(f, "# sm_clock_mhz_at_start: %d\n", nvml_sm_clock(nv));
    fprintf(f, "# driver_version: %s%sCUDA %d.%d\n", nv->driver, nv->driver[0] ? ", " : "",
            g->driver_version / 1000, g->driver_version % 1000 / 10);
    fprintf(f, "# cuda_runtime_version: %d.%d\n", g->runtime_version / 1000, g->runtime_version % 1000 / 10);
    fprintf(f, "# cublas_version: %d.%d.%d\n", g->cublas_version / 10000, g->cublas_version / 100 % 100,
            g->cublas_version % 100);
    fprintf(f, "# git_commit: %s\n", HGEMM_GIT_COMMIT);
    fprintf(f, "# hgemm_workspace_bytes: %zu (hgemm_nt_ws, every hgemm kernel)\n", HGEMM_WORKSPACE_BYTES);
    fprintf(f, "# date: %s\n", date);
    fprintf(f, "# command: %s\n", command);
    fprintf(f, "# mode: %s\n", o->host_cost ? "host-cost" : o->accuracy_sweep ? "accuracy-sweep"
                               : o->accuracy ? "accuracy" : "timing");
    if (o->host_cost)
        fprintf(f, "# host_cost: %d x %d x %d after a passed check, %d warm-up calls, %d batches of "
                   "%d back-to-back calls timed on the host (CLOCK_MONOTONIC, before the first call "
                   "to after the last returned, the GPU drained between batches); host_us is the "
                   "median batch's microseconds per call\n", HOST_COST_SIZE, HOST_COST_SIZE,
                HOST_COST_SIZE, HOST_COST_WARMUP, HOST_COST_BATCHES, HOST_COST_CALLS);
    else
        fprintf(f, "# warmup: %lld\n# iters: %lld\n# cooldown_s: %g\n# repeat: %lld\n",
                (long long)o->warmup, (long long)o->iters, o->cooldown_s, (long long)o->repeat);
    fprintf(f, "# layout: row-major NT, C = A * B^T, fp16; alpha 1, beta 0; unit-variance outputs\n");
    fprintf(f, "# nvml: %s\n", nv->dev ? "yes" : "unavailable (sm clocks are -1)");
}

/* The bytes a rotation holds at least: ROTATE_MIN_BYTES, or twice the L2. */
static size_t rotate_target_bytes(const gpu_info *g) {
    const size_t twice_l2 = 2 * (size_t)(g->l2_bytes > 0 ? g->l2_bytes : 0);
    return twice_l2 > ROTATE_MIN_BYTES ? twice_l2 : ROTATE_MIN_BYTES;
}

static void rotate_policy_text(char *out, size_t len, rotate_policy r) {
    if (r == ROTATE_ALL) snprintf(out, len, "every shape (--rotate)");
    else if (r == ROTATE_NONE) snprintf(out, len, "no shape (--no-rotate)");
    else snprintf(out, len, "memory-bound shapes (m or n <= %d)", MEMORY_BOUND_MN);
}

/* The shapes, gbps and rotation lines of a timing CSV's header. */
static void write_shape_metadata(FILE *f, const gpu_info *g, const options *o, const char *what,
                                 const shape *shapes, const rotation *plans, int n_shapes) {
    fprintf(f, "# shapes: %s\n", what);
    fprintf(f, "# memory_bound: m or n <= %d\n", MEMORY_BOUND_MN);
    fprintf(f, "# gbps: 2 * (m*k + n*k + m*n) bytes (A and B read, C written; beta 0, C never read) "
               "over ms, in 1e9 bytes/s\n");
    fprintf(f, "# hbm_peak_gbps: %.0f (H200 datasheet, 4.8 TB/s)\n", H200_HBM_PEAK_GBPS);
    fprintf(f, "# l2_bytes: %d\n", g->l2_bytes);
    if (o->accuracy) {
        fprintf(f, "# rotate: none (no timing)\n# rotated: none\n");
        return;
    }
    char policy[TEXT_LEN];
    rotate_policy_text(policy, sizeof policy, o->rotate);
    fprintf(f, "# rotate: %s; R operand sets (A, B, C) with R * set_bytes >= %zu bytes, %d <= R <= %d, "
               "within free device memory (%zu bytes at the start, %zu left alone); every warm-up and "
               "timed launch, hgemm's and cuBLAS's alike, takes the next set; the check runs on set 0; "
               "column rotate_sets\n",
            policy, rotate_target_bytes(g), MIN_ROTATE_SETS, MAX_ROTATE_SETS, g->free_bytes,
            ROTATE_RESERVE_BYTES);
    int any = 0;
    for (int i = 0; i < n_shapes; i++) {
        const rotation *r = &plans[i];
        if (!r->wanted) continue;
        any = 1;
        fprintf(f, "# rotated: %lldx%lldx%lld sets=%d set_bytes=%.0f", (long long)shapes[i].m,
                (long long)shapes[i].n, (long long)shapes[i].k, r->sets, r->set_bytes);
        if (r->sets < r->sets_wanted)
            fprintf(f, " (wanted %d: free device memory holds no more)", r->sets_wanted);
        else if ((double)r->sets * r->set_bytes < (double)rotate_target_bytes(g))
            fprintf(f, " (at most %d sets)", MAX_ROTATE_SETS);
        fprintf(f, "\n");
    }
    if (!any) fprintf(f, "# rotated: none\n");
}

static FILE *open_csv(const char *path) {
    FILE *f = fopen(path, "w");
    if (f == NULL) fprintf(stderr, "%s: cannot write '%s': %s\n", program, path, strerror(errno));
    return f;
}

static int close_csv(FILE *f, const char *path) {
    if (f == NULL || fclose(f) == 0) return 1;
    fprintf(stderr, "%s: error writing '%s': %s\n", program, path, strerror(errno));
    return 0;
}

static int run(const options *o, int argc, char **argv) {
    if (o->help) {
        usage(stdout);
        return EXIT_OK;
    }
    if (o->version) {
        printf("%s %s (commit %s)\n", program, HGEMM_VERSION, HGEMM_GIT_COMMIT);
        return EXIT_OK;
    }
    if (o->list) {
        print_kernel_list();
        return EXIT_OK;
    }
    if (o->list_shapes) {
        print_shape_list(o);
        return EXIT_OK;
    }

    /* The GPU: after parsing, before anything is allocated or written. */
    char why[WHY_LEN];
    if (!hgemm_check_sm90_available(why, sizeof why)) {
        fprintf(stderr, "%s: no sm_90 GPU: %s\n", program, why);
        return EXIT_NO_GPU;
    }

    gpu_info g;
    memset(&g, 0, sizeof g);
    HGEMM_CHECK_CUDA(cudaGetDevice(&g.device));
    struct cudaDeviceProp prop;
    HGEMM_CHECK_CUDA(cudaGetDeviceProperties(&prop, g.device));
    snprintf(g.name, sizeof g.name, "%s", prop.name);
    g.sm_count = prop.multiProcessorCount;
    int clock_khz = 0;
    HGEMM_CHECK_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, g.device));
    HGEMM_CHECK_CUDA(cudaDeviceGetAttribute(&g.l2_bytes, cudaDevAttrL2CacheSize, g.device));
    HGEMM_CHECK_CUDA(cudaDriverGetVersion(&g.driver_version));
    HGEMM_CHECK_CUDA(cudaRuntimeGetVersion(&g.runtime_version));
    nvml nv;
    nvml_open(&nv, g.device);
    g.clock_max_mhz = nvml_sm_clock_max(&nv);
    if (g.clock_max_mhz < 0) g.clock_max_mhz = clock_khz / 1000;
    cublasHandle_t handle;
    CHECK_CUBLAS(cublasCreate(&handle));
    CHECK_CUBLAS(cublasGetVersion(handle, &g.cublas_version));
    cudaEvent_t start, stop;
    HGEMM_CHECK_CUDA(cudaEventCreate(&start));
    HGEMM_CHECK_CUDA(cudaEventCreate(&stop));
    size_t total_bytes = 0;
    HGEMM_CHECK_CUDA(cudaMemGetInfo(&g.free_bytes, &total_bytes));

    /* The baselines first, then the selected kernels in table order. */
    entry entries[MAX_ENTRIES];
    int n_entries = 0;
    entries[n_entries++] = (entry){ENTRY_CUBLAS32, "cublas32", NULL, HGEMM_CHECK_ATOL_ACC_F32, "fp32"};
    entries[n_entries++] = (entry){ENTRY_CUBLAS16, "cublas16", NULL, HGEMM_CHECK_ATOL_ACC_F16, "fp16"};
    for (int i = 0; i < o->n_kernels; i++) {
        int f16 = o->kernels[i]->acc == HGEMM_ACC_F16;
        entries[n_entries++] = (entry){ENTRY_HGEMM, o->kernels[i]->name, o->kernels[i],
                                       f16 ? HGEMM_CHECK_ATOL_ACC_F16 : HGEMM_CHECK_ATOL_ACC_F32,
                                       f16 ? "fp16" : "fp32"};
    }

    /* The shapes, and how each one's operands rotate: decided now, so that
     * the CSV header can say it. */
    int n_shapes = 0;
    char shapes_what[TEXT_LEN + 64];
    const shape *shapes = selected_shapes(o, &n_shapes, shapes_what, sizeof shapes_what);
    rotation *plans = (rotation *)xmalloc((size_t)n_shapes * sizeof(rotation));
    for (int si = 0; si < n_shapes; si++)
        plans[si] = rotation_plan(shapes[si], rotation_wanted(o, shapes[si]), g.free_bytes,
                                  rotate_target_bytes(&g));

    char command[COMMAND_LEN];
    command_line(argc, argv, command, sizeof command);
    const char *csv_path = o->host_cost ? o->host_cost_csv : o->csv;
    FILE *csv = NULL;
    if (csv_path) {
        csv = open_csv(csv_path);
        if (csv == NULL) {
            free(plans);
            return EXIT_FAIL;
        }
        write_metadata(csv, &g, &nv, o, command);
        if (o->host_cost) {
            fprintf(csv, "%s\n", host_cost_columns);
        } else {
            write_shape_metadata(csv, &g, o, shapes_what, shapes, plans, n_shapes);
            fprintf(csv, "%s\n", csv_columns);
        }
        fflush(csv);
    }
    printf("%s: %s, %d SMs, SM clock max %d MHz, now %d MHz; CUDA runtime %d.%d; cuBLAS %d.%d.%d; "
           "commit %s\n", program, g.name, g.sm_count, g.clock_max_mhz, nvml_sm_clock(&nv),
           g.runtime_version / 1000, g.runtime_version % 1000 / 10, g.cublas_version / 10000,
           g.cublas_version / 100 % 100, g.cublas_version % 100, HGEMM_GIT_COMMIT);

    int any_failed = 0;
    if (o->host_cost) {
        /* cuBLAS COMPUTE_32F and the selected kernels: every entry but cublas16 */
        entry chosen[MAX_ENTRIES];
        int n_chosen = 0;
        for (int i = 0; i < n_entries; i++)
            if (entries[i].kind != ENTRY_CUBLAS16) chosen[n_chosen++] = entries[i];
        any_failed = run_host_cost(chosen, n_chosen, handle, csv);
    } else {
        if (!o->accuracy) {
            printf("%s: %lld warm-up and %lld timed launches, %g s cooldown before each measurement, "
                   "%lld run(s)\n", program, (long long)o->warmup, (long long)o->iters, o->cooldown_s,
                   (long long)o->repeat);
            int rotated = 0;
            for (int si = 0; si < n_shapes; si++) rotated += plans[si].sets > 1;
            char policy[TEXT_LEN];
            rotate_policy_text(policy, sizeof policy, o->rotate);
            if (rotated)
                printf("%s: %d of %d shapes rotate operand sets (%s), >= %zu MiB in all, for hgemm "
                       "and cuBLAS alike, so the L2 (%d MiB) cannot serve what the launch before "
                       "read; the check runs on set 0\n", program, rotated, n_shapes, policy,
                       rotate_target_bytes(&g) >> 20, g.l2_bytes >> 20);
        }
        any_failed = run_shapes(o, entries, n_entries, shapes, plans, n_shapes, handle, &nv, start,
                                stop, csv);
    }

    if (csv && !close_csv(csv, csv_path)) any_failed = 1;
    free(plans);
    HGEMM_CHECK_CUDA(cudaEventDestroy(start));
    HGEMM_CHECK_CUDA(cudaEventDestroy(stop));
    CHECK_CUBLAS(cublasDestroy(handle));
    nvml_close(&nv);
    if (any_failed) fprintf(stderr, "%s: at least one kernel FAILED its check (see above)\n", program);
    return any_failed ? EXIT_FAIL : EXIT_OK;
}

int main(int argc, char **argv) {
    options o;
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) return rc;
    rc = run(&o, argc, argv);
    options_free(&o);
    return rc;
}
