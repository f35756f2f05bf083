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
    FP16_ONE = 0x3c00,
    FP16_ZERO = 0x0000,
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
};

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

typedef struct options {
    const hgemm_kernel_info *kernels[MAX_SELECTED];
    int n_kernels;
    shape size;
    int sweep, accuracy_sweep, size_given;
    int64_t warmup, iters, repeat;
    double cooldown_s;
    const char *csv;
    int list, accuracy, help, version;
} options;

typedef enum outcome { OUTCOME_OK, OUTCOME_CHECK_FAILED, OUTCOME_LAUNCH_FAILED } outcome;

typedef struct result {
    outcome status;
    char why[WHY_LEN];
    hgemm_check_stats stats;
    int timed;
    double ms, tflops, vs32, vs16;
    int clock_before, clock_after;
    /* NVML sampled on the host while the timed launches run (-1 without NVML
     * or without a sample): mean SM clock, highest temperature. (No power:
     * NVML's reading is a 1-second average on this GPU generation, longer
     * than a window, so it would mostly show the cooldown.) */
    int window_clock_mhz, window_temp_c;
} result;

/* The buffers of one shape: A and B with NaN in their padding, C in a guard band. */
typedef struct problem {
    int64_t m, n, k, lda, ldb, ldc;
    void *A, *B;
    hgemm_check_guarded C;
    double *ref; /* m x n, ld n */
    void *workspace; /* HGEMM_WORKSPACE_BYTES, zeroed once: every hgemm kernel gets it (hgemm_nt_ws) */
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
        "  --kernels LIST   comma-separated kernel names, any case (see --list), auto (the\n"
        "                   kernel HGEMM_KERNEL_AUTO runs) or all (default: all)\n"
        "  --size M N K     problem size (default: %d %d %d)\n"
        "  --sweep          run the built-in table of shapes instead of one size\n"
        "  --warmup N       untimed launches before each timed window (default: %d)\n"
        "  --iters N        timed launches per window (default: %d)\n"
        "  --cooldown SEC   sleep before every measurement, cuBLAS included (default: %d)\n"
        "  --repeat N       measure the whole set N times (default: %d)\n"
        "  --csv FILE       write one row per (kernel, shape, run), with metadata, to FILE\n"
        "  --list           print the kernel table and exit\n"
        "  --accuracy       print mean, p99 and max absolute error of each kernel and of\n"
        "                   cuBLAS against the fp64 reference (unit-variance outputs); no timing\n"
        "  --accuracy-sweep --accuracy over k = 1024 .. 16384 on a 4096 x 4096 output\n"
        "                   (with --csv: one row per kernel and k, mean/p99/max_abs_err)\n"
        "  --version        print the version and the git commit, and exit\n"
        "  -h, --help       print this help and exit\n"
        "\n"
        "exit status: 0 success; 1 bad arguments, a failed check or a CUDA error;\n"
        "2 no compute capability 9.0 GPU\n",
        program, DEFAULT_SIZE, DEFAULT_SIZE, DEFAULT_SIZE, DEFAULT_WARMUP, DEFAULT_ITERS,
        DEFAULT_COOLDOWN_S, DEFAULT_REPEAT);
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

/* One name of --kernels: a table name in any case ("V5" is v5), or auto, the
 * kernel HGEMM_KERNEL_AUTO runs. NULL if unknown. */
static const hgemm_kernel_info *kernel_by_any_name(const char *name) {
    if (strcasecmp(name, "auto") == 0) return hgemm__kernel_find(hgemm__auto_kernel());
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

/* Returns -1 to go on, or the exit status. Every option taking a value takes
 * it as the next argument or after '=' (--iters=100); --size=... is one word. */
static int parse_args(int argc, char **argv, options *o) {
    memset(o, 0, sizeof *o);
    o->size = (shape){DEFAULT_SIZE, DEFAULT_SIZE, DEFAULT_SIZE};
    o->warmup = DEFAULT_WARMUP;
    o->iters = DEFAULT_ITERS;
    o->repeat = DEFAULT_REPEAT;
    o->cooldown_s = DEFAULT_COOLDOWN_S;
    int kernels_given = 0;
    char name[TEXT_LEN];
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
                                strcmp(a, "--csv") == 0;
        if (inline_val && !takes_value) {
            if (strcmp(a, "--help") == 0 || strcmp(a, "--list") == 0 || strcmp(a, "--accuracy") == 0 ||
                strcmp(a, "--accuracy-sweep") == 0 || strcmp(a, "--sweep") == 0 ||
                strcmp(a, "--version") == 0)
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
            if (strcmp(a, "--warmup") == 0) o->warmup = v;
            else if (strcmp(a, "--iters") == 0) o->iters = v;
            else o->repeat = v;
            i += !inline_val;
        } else if (strcmp(a, "--cooldown") == 0) {
            if (val == NULL) return bad_usage("--cooldown needs an argument (seconds)");
            if (!parse_seconds(val, &o->cooldown_s))
                return bad_usage("--cooldown: '%s' is not a number of seconds in 0..%d", val, MAX_COOLDOWN_S);
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
    if (o->sweep && o->size_given) return bad_usage("--size and --sweep exclude each other");
    if (o->accuracy_sweep && (o->size_given || o->sweep))
        return bad_usage("--accuracy-sweep has its own shapes: no --size or --sweep with it");
    if (!kernels_given) parse_kernels("all", o);
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

static double median_of(double *v, int count) {
    if (count == 0) return NAN;
    double lo = hgemm_check_select(v, count, (count - 1) / 2);
    if (count % 2) return lo;
    double hi = hgemm_check_select(v, count, count / 2);
    return (lo + hi) / 2;
}

/* ---- the problem of one shape ------------------------------------------------------ */

static void problem_setup(problem *p, shape s) {
    memset(p, 0, sizeof *p);
    p->m = s.m;
    p->n = s.n;
    p->k = s.k;
    p->lda = round_up(s.k, LD_ALIGN);
    p->ldb = round_up(s.k, LD_ALIGN);
    p->ldc = round_up(s.n, LD_ALIGN);
    HGEMM_CHECK_CUDA(cudaMalloc(&p->A, (size_t)(p->m * p->lda) * sizeof(uint16_t)));
    HGEMM_CHECK_CUDA(cudaMalloc(&p->B, (size_t)(p->n * p->ldb) * sizeof(uint16_t)));
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
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
}

static void problem_free(problem *p) {
    HGEMM_CHECK_CUDA(cudaFree(p->A));
    HGEMM_CHECK_CUDA(cudaFree(p->B));
    HGEMM_CHECK_CUDA(cudaFree(p->ref));
    HGEMM_CHECK_CUDA(cudaFree(p->workspace));
    hgemm_check_guarded_free(&p->C);
}

/* One launch of e on p: alpha = 1, beta = 0, the default stream. Returns 1 on
 * success, else 0 with the reason in why. */
static int launch(const entry *e, const problem *p, cublasHandle_t h, char *why, size_t why_len) {
    if (e->kind == ENTRY_HGEMM) {
        /* hgemm_nt_ws's own path, by table row (ablations have no public id),
         * with a workspace, as cuBLAS has its own */
        hgemm_status st = hgemm__run_ws(e->info, p->m, p->n, p->k, 1.0f, p->A, p->lda, p->B,
                                        p->ldb, 0.0f, p->C.C, p->ldc, p->workspace,
                                        HGEMM_WORKSPACE_BYTES, 0);
        if (st != HGEMM_SUCCESS) {
            snprintf(why, why_len, "hgemm_nt returned %d: %s", (int)st, hgemm_status_string(st));
            (void)cudaGetLastError(); /* this kernel's failure: not left for the next check */
            return 0;
        }
        return 1;
    }
    /* Row-major NT is column-major C^T = B * A^T: swap the operands, transpose B. */
    const float one32 = 1.0f, zero32 = 0.0f;
    const uint16_t one16 = FP16_ONE, zero16 = FP16_ZERO; /* __half bits */
    int f32 = e->kind == ENTRY_CUBLAS32;
    CHECK_CUBLAS(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)p->n, (int)p->m, (int)p->k,
                              f32 ? (const void *)&one32 : (const void *)&one16, p->B, CUDA_R_16F,
                              (int)p->ldb, p->A, CUDA_R_16F, (int)p->lda,
                              f32 ? (const void *)&zero32 : (const void *)&zero16, p->C.C,
                              CUDA_R_16F, (int)p->ldc,
                              f32 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_16F, CUBLAS_GEMM_DEFAULT));
    return 1;
}

/* Poisoned C, one launch, the comparison and the guard band. */
static void check_entry(const entry *e, const problem *p, cublasHandle_t h, result *r) {
    hgemm_check_guarded_reset(&p->C, 0);
    hgemm_check_fill_pattern(p->C.C, p->m, p->n, p->ldc, HGEMM_CHECK_NAN, 0);
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    if (!launch(e, p, h, r->why, sizeof r->why)) {
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

static void time_entry(const entry *e, const problem *p, cublasHandle_t h, const options *o,
                       const nvml *nv, cudaEvent_t start, cudaEvent_t stop, result *r) {
    for (int64_t i = 0; i < o->warmup; i++)
        if (!launch(e, p, h, r->why, sizeof r->why)) goto failed;
    HGEMM_CHECK_LAUNCH();
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    r->clock_before = nvml_sm_clock(nv);
    HGEMM_CHECK_CUDA(cudaEventRecord(start, 0));
    for (int64_t i = 0; i < o->iters; i++)
        if (!launch(e, p, h, r->why, sizeof r->why)) goto failed;
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
    "window_sm_clock_mhz,window_max_temp_c";

static void csv_row(FILE *f, const entry *e, const problem *p, int run, const result *r,
                    const options *o) {
    int have_err = r->status != OUTCOME_LAUNCH_FAILED;
    fprintf(f, "%s,%lld,%lld,%lld,%d,%.6f,%.3f,%.5f,%.5f,%.6e,%.6e,%.6e,%lld,%s,%s,%lld,%lld,%d,%d,%d,%d\n",
            e->name, (long long)p->m, (long long)p->n, (long long)p->k, run,
            r->timed ? r->ms : NAN, r->timed ? r->tflops : NAN, r->vs32, r->vs16,
            have_err ? r->stats.max_abs_err : NAN, have_err ? r->stats.mean_abs_err : NAN,
            have_err ? r->stats.p99_abs_err : NAN, (long long)r->stats.failed,
            outcome_name(r->status), e->acc, (long long)(r->timed ? o->iters : 0),
            (long long)(r->timed ? o->warmup : 0), r->timed ? r->clock_before : -1,
            r->timed ? r->clock_after : -1, r->timed ? r->window_clock_mhz : -1,
            r->timed ? r->window_temp_c : -1);
}

static void print_failure(const entry *e, const result *r) {
    printf("%-10s FAILED: %s\n", e->name, r->why);
    if (r->status == OUTCOME_CHECK_FAILED) hgemm_check_print_mismatches(stdout, &r->stats, "             ");
}

static void print_run_table(const entry *entries, int n_entries, const result *res,
                            const problem *p, int run, int runs) {
    printf("\n== %lld x %lld x %lld, run %d of %d ==\n", (long long)p->m, (long long)p->n,
           (long long)p->k, run, runs);
    printf("%-10s %10s %10s %13s %13s %12s %7s %5s\n", "kernel", "ms", "TFLOP/s", "% cuBLAS 32F",
           "% cuBLAS 16F", "max error", "MHz", "C");
    for (int i = 0; i < n_entries; i++) {
        const result *r = &res[i];
        if (r->status != OUTCOME_OK) {
            print_failure(&entries[i], r);
            continue;
        }
        printf("%-10s %10.4f %10.1f %12.1f%% %12.1f%% %12.3e %7d %5d\n", entries[i].name, r->ms,
               r->tflops, 100.0 * r->vs32, 100.0 * r->vs16, r->stats.max_abs_err, r->window_clock_mhz,
               r->window_temp_c);
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
    printf("\n== %lld x %lld x %lld: median [min..max] over %d runs ==\n", (long long)p->m,
           (long long)p->n, (long long)p->k, n_runs);
    printf("%-10s %-28s %-28s %-24s %-24s\n", "kernel", "ms", "TFLOP/s", "% cuBLAS 32F", "% cuBLAS 16F");
    double *v = (double *)xmalloc((size_t)n_runs * sizeof(double));
    for (int i = 0; i < n_entries; i++) {
        char cols[4][TEXT_LEN];
        int failed = 0;
        for (int field = 0; field < 4; field++) {
            int count = 0;
            for (int run = 0; run < n_runs; run++) {
                const result *r = &runs[run][i];
                if (!r->timed) {
                    failed += field == 0;
                    continue;
                }
                double x = field == 0 ? r->ms : field == 1 ? r->tflops : field == 2 ? 100.0 * r->vs32 : 100.0 * r->vs16;
                if (!isnan(x)) v[count++] = x;
            }
            format_range(cols[field], sizeof cols[field], v, count, field == 0 ? "%.4f" : "%.1f");
        }
        printf("%-10s %-28s %-28s %-24s %-24s", entries[i].name, cols[0], cols[1], cols[2], cols[3]);
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
    const char *auto_name = hgemm_kernel_name(hgemm__auto_kernel());
    printf("(auto = %s, the latest fp32-accumulating kernel; baselines cublas32 and cublas16 "
           "always run)\n", auto_name ? auto_name : "none");
}

/* ---- main --------------------------------------------------------------------------- */

typedef struct gpu_info {
    int device;
    char name[TEXT_LEN];
    int sm_count, clock_max_mhz, driver_version, runtime_version, cublas_version;
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
    fprintf(f, "# mode: %s\n", o->accuracy_sweep ? "accuracy-sweep" : o->accuracy ? "accuracy" : "timing");
    fprintf(f, "# warmup: %lld\n# iters: %lld\n# cooldown_s: %g\n# repeat: %lld\n",
            (long long)o->warmup, (long long)o->iters, o->cooldown_s, (long long)o->repeat);
    fprintf(f, "# layout: row-major NT, C = A * B^T, fp16; alpha 1, beta 0; unit-variance outputs\n");
    fprintf(f, "# nvml: %s\n", nv->dev ? "yes" : "unavailable (sm clocks are -1)");
}

int main(int argc, char **argv) {
    options o;
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) return rc;
    if (o.help) {
        usage(stdout);
        return EXIT_OK;
    }
    if (o.version) {
        printf("%s %s (commit %s)\n", program, HGEMM_VERSION, HGEMM_GIT_COMMIT);
        return EXIT_OK;
    }
    if (o.list) {
        print_kernel_list();
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

    char command[COMMAND_LEN];
    command_line(argc, argv, command, sizeof command);
    FILE *csv = NULL;
    if (o.csv) {
        csv = fopen(o.csv, "w");
        if (csv == NULL) {
            fprintf(stderr, "%s: cannot write '%s': %s\n", program, o.csv, strerror(errno));
            return EXIT_FAIL;
        }
        write_metadata(csv, &g, &nv, &o, command);
        fprintf(csv, "%s\n", csv_columns);
        fflush(csv);
    }
    printf("%s: %s, %d SMs, SM clock max %d MHz, now %d MHz; CUDA runtime %d.%d; cuBLAS %d.%d.%d; "
           "commit %s\n", program, g.name, g.sm_count, g.clock_max_mhz, nvml_sm_clock(&nv),
           g.runtime_version / 1000, g.runtime_version % 1000 / 10, g.cublas_version / 10000,
           g.cublas_version / 100 % 100, g.cublas_version % 100, HGEMM_GIT_COMMIT);
    if (!o.accuracy)
        printf("%s: %lld warm-up and %lld timed launches, %g s cooldown before each measurement, "
               "%lld run(s)\n", program, (long long)o.warmup, (long long)o.iters, o.cooldown_s,
               (long long)o.repeat);

    /* The baselines first, then the selected kernels in table order. */
    entry entries[MAX_ENTRIES];
    int n_entries = 0;
    entries[n_entries++] = (entry){ENTRY_CUBLAS32, "cublas32", NULL, HGEMM_CHECK_ATOL_ACC_F32, "fp32"};
    entries[n_entries++] = (entry){ENTRY_CUBLAS16, "cublas16", NULL, HGEMM_CHECK_ATOL_ACC_F16, "fp16"};
    for (int i = 0; i < o.n_kernels; i++) {
        int f16 = o.kernels[i]->acc == HGEMM_ACC_F16;
        entries[n_entries++] = (entry){ENTRY_HGEMM, o.kernels[i]->name, o.kernels[i],
                                       f16 ? HGEMM_CHECK_ATOL_ACC_F16 : HGEMM_CHECK_ATOL_ACC_F32,
                                       f16 ? "fp16" : "fp32"};
    }

    const shape *shapes = o.accuracy_sweep ? accuracy_shapes : o.sweep ? sweep_shapes : &o.size;
    const int n_shapes = o.accuracy_sweep ? ACCURACY_SWEEP_COUNT : o.sweep ? SWEEP_COUNT : 1;
    const int n_runs = o.accuracy ? 1 : (int)o.repeat;
    int any_failed = 0;
    result **runs = (result **)xmalloc((size_t)n_runs * sizeof(result *));
    for (int run = 0; run < n_runs; run++)
        runs[run] = (result *)xmalloc((size_t)n_entries * sizeof(result));

    for (int si = 0; si < n_shapes; si++) {
        problem p;
        if (n_shapes > 1)
            fprintf(stderr, "[%d/%d] %lld x %lld x %lld: preparing data and the fp64 reference\n",
                    si + 1, n_shapes, (long long)shapes[si].m, (long long)shapes[si].n,
                    (long long)shapes[si].k);
        problem_setup(&p, shapes[si]);
        for (int run = 0; run < n_runs; run++) {
            result *res = runs[run];
            memset(res, 0, (size_t)n_entries * sizeof(result));
            for (int i = 0; i < n_entries; i++) {
                result *r = &res[i];
                r->vs32 = r->vs16 = NAN;
                r->clock_before = r->clock_after = -1;
                r->window_clock_mhz = r->window_temp_c = -1;
                if (n_shapes > 1)
                    fprintf(stderr, "[%d/%d] %lld x %lld x %lld, run %d of %d: %s\n", si + 1,
                            n_shapes, (long long)p.m, (long long)p.n, (long long)p.k, run + 1,
                            n_runs, entries[i].name);
                if (!o.accuracy) sleep_seconds(o.cooldown_s);
                check_entry(&entries[i], &p, handle, r);
                /* One NVTX range per timed entry, named as in the CSV and holding
                 * only its launches: scripts/profile.sh profiles the first one
                 * inside "v6/", "cublas32/", ... */
                nvtxRangePushA(entries[i].name);
                if (r->status == OUTCOME_OK && !o.accuracy)
                    time_entry(&entries[i], &p, handle, &o, &nv, start, stop, r);
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
            if (o.accuracy) print_accuracy_table(entries, n_entries, res, &p);
            else print_run_table(entries, n_entries, res, &p, run + 1, n_runs);
            if (csv) {
                for (int i = 0; i < n_entries; i++) csv_row(csv, &entries[i], &p, run + 1, &res[i], &o);
                fflush(csv);
            }
        }
        if (n_runs > 1) print_summary(entries, n_entries, runs, n_runs, &p);
        problem_free(&p);
    }

    if (csv && fclose(csv) != 0) {
        fprintf(stderr, "%s: error writing '%s': %s\n", program, o.csv, strerror(errno));
        any_failed = 1;
    }
    for (int run = 0; run < n_runs; run++) free(runs[run]);
    free(runs);
    HGEMM_CHECK_CUDA(cudaEventDestroy(start));
    HGEMM_CHECK_CUDA(cudaEventDestroy(stop));
    CHECK_CUBLAS(cublasDestroy(handle));
    nvml_close(&nv);
    if (any_failed) fprintf(stderr, "%s: at least one kernel FAILED its check (see above)\n", program);
    return any_failed ? EXIT_FAIL : EXIT_OK;
}
