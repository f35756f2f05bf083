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
 * --interleave N times the entries of a run together instead: one cooldown,
 * every check, every warm-up, then N slices in which each entry in turn runs
 * its share of `iters`, the windows back to back with events between them.
 * The SM clock steps between levels (about 3% apart) from one window to the
 * next; entries measured in separate windows can land on different levels,
 * interleaved ones see the same levels in proportion, so their ratios hold.
 * Each slice takes the next row of a Williams design, so that within the
 * slices every entry follows every other one equally often, and opens with
 * an untimed lead-in of its first entry, so that across them too every
 * timed window follows another entry as often as any other, or its own
 * lead-in (--no-lead-in: the slices back to back, where the last window of
 * one slice precedes the first of the next, always in the same pairs).
 * That balances one window back only: where a window lasts about as long
 * as the clock's memory (16384^3, 52 ms, an H100), the windows before
 * that still count, and an entry's place in the order cost it 2..3% (run
 * 144); with windows of one 13 ms launch every place was level (run 145).
 * So a window is capped (--max-window-ms, default 15 ms): a shape whose
 * windows would be longer, by the warm-up's time a launch, runs in more
 * slices, up to one launch a window. With no cooldown between
 * entries, the GPU runs at its sustained clocks, not the boost that the
 * default's cooldowns give each window's start.
 *
 * Shapes: one --size, the --sweep table, a named suite (--suite llm) or a
 * file of "M N K" lines (--shapes FILE); --list-shapes prints them without a
 * GPU. Memory-bound shapes (m or n <= 64, decode) are judged in GB/s against
 * the HBM peak, and their timed launches rotate over R copies of A, B and C
 * (at least 128 MiB in all, more than twice the L2), so that what a launch
 * reads was not left in the L2 by the launch before it; --rotate does this
 * for every shape, --no-rotate for none. The check always runs on copy 0.
 *
 * Forms: --dtype (f16, bf16), --layout (nt, nn, tn, tt: how A and B are
 * stored, as hgemm_gemm's op_a and op_b) and --batch (strided batches, the
 * entries packed back to back), lists of dtypes and layouts timing every
 * combination in one process. f16 nt with batch 1 runs hgemm's kernels on
 * hgemm_nt's path (by table row, ablations included) and cuBLAS through
 * cublasGemmEx, as always; every other form runs the public kernels through
 * hgemm_gemm and cuBLAS through cublasGemmEx (batch 1) or
 * cublasGemmStridedBatchedEx, and skips, with a line on stderr, a kernel that
 * answers HGEMM_ERROR_NOT_SUPPORTED (asked once, before the cooldown), the
 * ablations whose rows serve fp16 NT only, and cuBLAS COMPUTE_16F for bf16
 * (cuBLAS has none). An ablation that goes through its version's launcher
 * with a flag (its row's `forms`: v8-noseam, v8-allsms, the PDL ones) runs
 * every form by hgemm_gemm's path, given its row.
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
#include "fp8/plan.h" /* hgemm_gemm_fp8's plan, for --explain --fp8 */
#include "stream_k.h" /* HGEMM_SK_REDUCE_*, for --explain */
#include "interleave.h" /* the order of --interleave's slices */

#ifndef HGEMM_VERSION
#define HGEMM_VERSION "unknown" /* the build passes the project's version */
#endif

enum {
    DEFAULT_SIZE = 8192,
    DEFAULT_WARMUP = 5,
    DEFAULT_ITERS = 30,
    DEFAULT_COOLDOWN_S = 3,
    DEFAULT_MAX_WINDOW_MS = 15, /* --interleave's windows at most this long (runs 144, 145) */
    DEFAULT_REPEAT = 1,
    DEFAULT_BATCH = 1,
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
    MIN_INTERLEAVE = 2,       /* --interleave: one slice would be the default order */
    MAX_INTERLEAVE = 1000,    /* slices of one run: (n_entries + 1) * N + 1 events */
    MAX_WINDOW_MS = 1000000,  /* --max-window-ms */
    WINDOW_SAMPLE_US = 500,   /* NVML sampling period while a timed window runs */
    ELEM_BYTES = 2,           /* an fp16 or bf16 element */
    MEMORY_BOUND_MN = 64,     /* m or n at most this: a memory-bound (decode) shape */
    ROTATE_MN = 256,          /* m or n at most this: the weight streams (decode, batched decode):
                                 its operands rotate by default */
    MIN_ROTATE_SETS = 2,      /* a rotation has at least two operand sets */
    MAX_ROTATE_SETS = 8192,   /* operand sets of one shape, at most (tiny shapes) */
    ROTATE_ALIGN = 256,       /* bytes: every rotated operand starts as aligned as cudaMalloc's */
    MAX_FILE_SHAPES = 100000, /* shapes in one --shapes file */
    MAX_BATCH = 1000000,      /* --batch */
    MAX_EXPLAIN_SMS = 1024,   /* --sms */
    EXPLAIN_DEFAULT_SMS = 132, /* --explain without a GPU: the H100's and H200's SMs */
    MAX_DTYPES = 2,           /* f16, bf16 */
    MAX_LAYOUTS = 4,          /* nt, nn, tn, tt */
    MAX_FORMS = MAX_DTYPES * MAX_LAYOUTS,
    /* --host-cost: back-to-back calls on a tiny problem, timed on the host */
    HOST_COST_SIZE = 64,
    HOST_COST_WARMUP = 100,
    HOST_COST_CALLS = 2000,   /* calls per batch */
    HOST_COST_BATCHES = 5,    /* the median of the batches is reported */
};

/* --workspace: bytes every hgemm call is given (0: none); one value for the whole run */
#define MAX_WORKSPACE_BYTES ((int64_t)1 << 36)
static size_t bench_workspace_bytes = HGEMM_WORKSPACE_BYTES;

/* The yardstick of memory-bound shapes: the HBM bandwidth of the GPU the
 * bench runs on, in GB/s of 1e9 bytes. Hopper products by the name the
 * driver gives them, from NVIDIA's datasheets (H200 SXM and NVL: "GPU memory
 * bandwidth 4.8TB/s"; H100 SXM 3.35TB/s, H100 NVL 3.9TB/s; H100 PCIe product
 * brief PB-11133-001: more than 2,000 GB/s). Any other GPU: the peak its
 * memory clock and bus width give (cudaDevAttrMemoryClockRate, double data
 * rate, x cudaDevAttrGlobalMemoryBusWidth). The first match wins, so GH200
 * (two memory configurations under one name) comes before H200. */
static const struct {
    const char *name_has; /* a substring of cudaDeviceProp.name */
    double gbps;          /* 0: from the clock and bus width */
    const char *source;
} HBM_PEAKS[] = {
    {"GH200", 0.0, NULL},
    {"H200", 4800.0, "H200 datasheet, 4.8 TB/s"},
    {"H100 NVL", 3900.0, "H100 NVL datasheet, 3.9 TB/s"},
    {"H100 PCIe", 2000.0, "H100 PCIe product brief, 2 TB/s"},
    {"H100 80GB HBM3", 3350.0, "H100 SXM datasheet, 3.35 TB/s"},
};
enum { HBM_H200 = 1 }; /* HBM_PEAKS' H200 row: the figure before the GPU is known, and without one */
/* What the bench judges memory-bound shapes against (hbm_peak_select, once
 * the GPU is known) and where the figure comes from. */
static struct {
    double gbps;
    char source[96];
} hbm_peak = {4800.0, "H200 datasheet, 4.8 TB/s"};

/* The HBM peak of the GPU named `name` whose memory runs at `mem_khz` over
 * `bus_bits` (0 where unknown: then the H200's, said so). */
static void hbm_peak_select(const char *name, int mem_khz, int bus_bits) {
    for (size_t i = 0; i < sizeof HBM_PEAKS / sizeof HBM_PEAKS[0]; i++) {
        if (!strstr(name, HBM_PEAKS[i].name_has)) continue;
        if (HBM_PEAKS[i].gbps > 0.0) {
            hbm_peak.gbps = HBM_PEAKS[i].gbps;
            snprintf(hbm_peak.source, sizeof hbm_peak.source, "%s", HBM_PEAKS[i].source);
            return;
        }
        break;
    }
    if (mem_khz > 0 && bus_bits > 0) {
        hbm_peak.gbps = 2.0 * mem_khz * 1e3 * (bus_bits / 8) / 1e9;
        snprintf(hbm_peak.source, sizeof hbm_peak.source, "2 x %d MHz x %d-bit bus, this GPU's memory",
                 mem_khz / 1000, bus_bits);
        return;
    }
    hbm_peak.gbps = HBM_PEAKS[HBM_H200].gbps;
    snprintf(hbm_peak.source, sizeof hbm_peak.source, "%s; this GPU's memory unknown",
             HBM_PEAKS[HBM_H200].source);
}
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
enum { NVML_SUCCESS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_TEMPERATURE_GPU = 0,
       NVML_DRIVER_LEN = 96, PCI_BUS_ID_LEN = 32 };
typedef int (*nvml_init_fn)(void);
typedef int (*nvml_shutdown_fn)(void);
typedef int (*nvml_handle_by_pci_fn)(const char *pci_bus_id, nvmlDevice_t *device);
typedef int (*nvml_clock_fn)(nvmlDevice_t device, int clock_type, unsigned int *mhz);
typedef int (*nvml_driver_fn)(char *version, unsigned int length);
typedef int (*nvml_temperature_fn)(nvmlDevice_t device, int sensor, unsigned int *celsius);
typedef int (*nvml_events_fn)(nvmlDevice_t device, unsigned long long *reasons);

typedef struct nvml {
    void *lib;
    nvmlDevice_t dev;
    int initialized;
    nvml_shutdown_fn shutdown;
    nvml_clock_fn clock;      /* nvmlDeviceGetClockInfo */
    nvml_clock_fn max_clock;  /* nvmlDeviceGetMaxClockInfo */
    nvml_temperature_fn temperature; /* nvmlDeviceGetTemperature (NULL if absent) */
    nvml_events_fn events; /* nvmlDeviceGetCurrentClocksEventReasons, or its older name
                              ...ThrottleReasons (NULL if neither) */
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

/* How the operands are stored and how many entries a call multiplies:
 * C_b = op_a(A_b) * op_b(B_b) for b < batch, as hgemm_gemm takes them. */
typedef struct form {
    hgemm_dtype dtype;
    hgemm_op op_a, op_b;
    int64_t batch;
} form;

/* The names --dtype and --layout take and the CSV's dtype and layout
 * columns hold. A layout names op_a then op_b: "nt" is C = A * B^T. */
static const struct { hgemm_dtype dtype; const char *name; } dtype_names[MAX_DTYPES] = {
    {HGEMM_DTYPE_F16, "f16"}, {HGEMM_DTYPE_BF16, "bf16"}};
static const struct { hgemm_op op_a, op_b; const char *name; } layout_names[MAX_LAYOUTS] = {
    {HGEMM_OP_N, HGEMM_OP_T, "nt"}, {HGEMM_OP_N, HGEMM_OP_N, "nn"},
    {HGEMM_OP_T, HGEMM_OP_N, "tn"}, {HGEMM_OP_T, HGEMM_OP_T, "tt"}};
static const form DEFAULT_FORM = {HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, DEFAULT_BATCH};

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
    /* batched decode and speculative verify: 96..256 tokens against the same
     * weights (operands rotated: the weight streams from HBM) */
    LLAMA8B_WEIGHTS(96), LLAMA8B_WEIGHTS(128), LLAMA8B_WEIGHTS(192), LLAMA8B_WEIGHTS(256),
    {128, LLAMA70B_HIDDEN, LLAMA70B_FFN}, {256, LLAMA70B_HIDDEN, LLAMA70B_FFN},
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
    int dtypes[MAX_DTYPES], n_dtypes;    /* --dtype: indices into dtype_names */
    int layouts[MAX_LAYOUTS], n_layouts; /* --layout: indices into layout_names */
    int64_t batch;                       /* --batch */
    form forms[MAX_FORMS];      /* every dtype with every layout, in the order given */
    int n_forms;
    int label_forms;            /* some form is not f16 nt batch 1: tables name the form */
    const char *timing_flag;    /* the last of --warmup, --iters, --repeat, --cooldown given */
    int64_t warmup, iters, repeat;
    int64_t interleave;         /* --interleave: slices per run; 0 when off */
    int no_lead_in;             /* --no-lead-in: the slices without their untimed lead-in */
    int no_library_ws;          /* --no-library-workspace */
    double max_window_ms;       /* --max-window-ms: an interleaved window's cap; 0: none */
    int max_window_given;
    double cooldown_s;
    const char *csv;
    const char *host_cost_csv;  /* --host-cost-csv */
    int list, list_shapes, accuracy, host_cost, help, version;
    int explain;                /* --explain */
    int explain_fp8;            /* --fp8: --explain plans hgemm_gemm_fp8's calls instead */
    int64_t sms;                /* --sms: the SMs --explain plans for; 0: the GPU's (or 132) */
} options;

/* OUTCOME_SKIPPED: the entry does not serve this form (no row, no failure). */
typedef enum outcome { OUTCOME_OK, OUTCOME_CHECK_FAILED, OUTCOME_LAUNCH_FAILED, OUTCOME_SKIPPED } outcome;

typedef struct result {
    outcome status;
    char why[WHY_LEN];
    hgemm_check_stats stats;
    int timed;
    double ms, tflops, vs32, vs16;
    double gbps; /* operand bytes (operand_bytes, every entry of the batch) over ms */
    int clock_before, clock_after;
    /* NVML sampled on the host while the timed launches run (-1 without NVML
     * or without a sample): mean SM clock, highest temperature. (No power:
     * NVML's reading is a 1-second average on this GPU generation, longer
     * than a window, so it would mostly show the cooldown.) Also the memory
     * clock's mean, and every reason NVML gave for the clocks during the
     * window, OR-ed (nvml_clock_events; -1 without a sample). */
    int window_clock_mhz, window_temp_c, window_mem_clock_mhz;
    long long window_events;
    int64_t slices; /* --interleave: the slices its run took (hgemm_interleave_slices); 0 otherwise */
} result;

/* How one shape's timed launches rotate over operand sets, decided before
 * the run (rotation_plan) so that the CSV header can say it; the same R for
 * every form of the shape. */
typedef struct rotation {
    int wanted;          /* the policy asks for rotation of this shape */
    int sets;            /* R: 1 when not rotated */
    int sets_wanted;     /* R before the free-memory cap */
    double set_bytes;    /* bytes one launch moves (operand_bytes), the measure of R */
} rotation;

/* A form's matrices for one shape: A stored a_rows x a_cols, B b_rows x
 * b_cols, C m x n, leading dimensions padded to LD_ALIGN, the entries of a
 * batch packed back to back (stride: one matrix's span, padding included). */
typedef struct dims {
    int64_t a_rows, a_cols, lda, b_rows, b_cols, ldb, ldc;
    int64_t stride_a, stride_b, stride_c; /* elements from one entry to the next */
    size_t set_a, set_b, set_c;           /* bytes between two rotated sets of A, of B, of C */
} dims;

/* One operand set: what one launch reads and writes. */
typedef struct operands {
    const void *A, *B;
    void *C;
} operands;

/* The buffers of one shape in one form: A and B with NaN in their padding,
 * C in a guard band (operand set 0, the one checked); sets 1 .. R-1, copies
 * of A and B with their own C, follow each other in rot_A, rot_B and rot_C.
 * A batch's entries lie one after the other: C is one (batch * m) x n matrix
 * inside the guard band, and so is the reference. */
typedef struct problem {
    form f;
    dims d;
    int64_t m, n, k, lda, ldb, ldc;
    void *A, *B;
    hgemm_check_guarded C;
    double *ref; /* (batch * m) x n, ld n */
    void *workspace; /* bench_workspace_bytes, zeroed once: every hgemm kernel gets it; NULL for 0 */
    rotation rot;
    void *rot_A, *rot_B, *rot_C; /* (R - 1) sets each, d.set_* bytes apart; NULL if R == 1 */
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
        "(COMPUTE_32F and COMPUTE_16F) on the same buffers: by default C = A * B^T, fp16,\n"
        "row-major A (M x K), B (N x K), C (M x N).\n"
        "\n"
        "options (each also as --option=VALUE; --size=N is N N N, --size=M,N,K three sizes):\n"
        "  --kernels LIST   comma-separated kernel names, any case (see --list), auto and\n"
        "                   auto-f16acc (HGEMM_KERNEL_AUTO and AUTO_F16ACC: the library's\n"
        "                   choice by shape) or all (default: all)\n"
        "forms (every dtype with every layout, each beside cuBLAS on its own buffers):\n"
        "  --dtype LIST     element types, comma-separated: f16, bf16 (default: f16)\n"
        "  --layout LIST    how A and B are stored, comma-separated: nt, nn, tn, tt, op_a\n"
        "                   then op_b as hgemm_gemm takes them: C = op_a(A) * op_b(B), A\n"
        "                   stored M x K (n) or K x M (t), B K x N (n) or N x K (t)\n"
        "                   (default: nt, C = A * B^T)\n"
        "  --batch N        a strided batch of N products, every entry its own random\n"
        "                   matrices, packed back to back (default: %d)\n"
        "                   f16 nt with batch 1 runs the kernels on hgemm_nt's path and\n"
        "                   cuBLAS through cublasGemmEx; other forms run the public kernels\n"
        "                   through hgemm_gemm (and the ablations that go through their\n"
        "                   version's own launcher, e.g. v8-noseam, by the same path) and\n"
        "                   cuBLAS through cublasGemmEx (batch 1) or\n"
        "                   cublasGemmStridedBatchedEx; a kernel that answers NOT_SUPPORTED\n"
        "                   for a form, the other ablations, and cublas16 for bf16 (cuBLAS\n"
        "                   has no COMPUTE_16F for it: vs_cublas16 is nan) are skipped with\n"
        "                   a line on stderr\n"
        "shapes (one of --size, --sweep, --suite, --shapes):\n"
        "  --size M N K     problem size (default: %d %d %d)\n"
        "  --sweep          run the built-in table of shapes instead of one size\n"
        "  --suite NAME     run a named suite of shapes: llm (%d shapes: Llama-3 decode,\n"
        "                   batched decode, prefill, squares, long k, wide, ragged; as\n"
        "                   bench/shapes/llm.txt)\n"
        "  --shapes FILE    run the shapes of FILE: one 'M N K' per line, the sizes separated\n"
        "                   by spaces or commas; '#' starts a comment; blank lines are skipped\n"
        "  --list-shapes    print the shapes the run would time, one 'M N K' per line (a\n"
        "                   valid --shapes file), and exit; needs no GPU\n"
        "  --explain        print what each kernel would run at each shape and form, as the\n"
        "                   library decides it for the call hgemm-bench makes (its\n"
        "                   workspace, beta 0): the kernel AUTO picks, and for V8 its tile,\n"
        "                   cluster, stages, seam, and how the tiles go round the SMs (whole\n"
        "                   rounds, the tail split, split-K, stream-K); then exit; needs no GPU\n"
        "  --workspace BYTES\n"
        "                   the workspace every hgemm call is given, zero-filled once (default:\n"
        "                   HGEMM_WORKSPACE_BYTES, %zu; 0: none, as hgemm_nt without options,\n"
        "                   so V8 borrows the library's); cuBLAS keeps its own either way\n"
        "  --no-library-workspace\n"
        "                   calls without a workspace run unsplit (hgemm_set_library_workspace(0))\n"
        "  --sms N          the SMs --explain plans for (default: the GPU's, else %d)\n"
        "  --fp8            with --explain: hgemm_gemm_fp8's plan at each shape instead (e4m3,\n"
        "                   a bf16 C, beta 0): its tile, the pair or the split, the stores\n"
        "timing:\n"
        "  --warmup N       untimed launches before each timed window (default: %d)\n"
        "  --iters N        timed launches per window (default: %d)\n"
        "  --cooldown SEC   sleep before every measurement, cuBLAS included (default: %d)\n"
        "  --repeat N       measure the whole set N times (default: %d)\n"
        "  --interleave N   time a run's entries together, N in %d..%d: one cooldown, every\n"
        "                   check and warm-up, then N slices, each running every kernel's\n"
        "                   share of --iters (>= N) back to back, so that kernels and cuBLAS\n"
        "                   see the same SM clock levels; the slices take the rows of a\n"
        "                   Williams design (N a multiple of the kernels timed, twice that\n"
        "                   when they are odd: each follows every other equally often), and\n"
        "                   each opens with an untimed lead-in (the slice's first kernel, its\n"
        "                   share again), so that no slice's first window follows the last\n"
        "                   of the slice before it; ms sums an entry's windows, the\n"
        "                   window telemetry is the whole period's (not for profiling: the\n"
        "                   launches lie in one NVTX range, 'interleaved'). The ratios are\n"
        "                   at the one clock every entry's power draw sets together, so they\n"
        "                   compare cycles; a kernel timed alone (no --interleave, --cooldown\n"
        "                   0 and warm-up enough for its clock to settle) runs at the clock\n"
        "                   its own draw allows, which may differ (V8 at 8192^3 on an H100:\n"
        "                   30..45 MHz under cuBLAS's)\n"
        "  --no-lead-in     --interleave's slices back to back, without the lead-in\n"
        "  --max-window-ms MS\n"
        "                   --interleave's windows at most MS long (default: %d; 0: no cap): a\n"
        "                   shape whose launches, timed in the warm-up, would make one longer\n"
        "                   runs in more slices (a multiple of the design's rows where N is\n"
        "                   one), up to a launch a window; a window's clock remembers about\n"
        "                   100 ms of the windows before it, which the design does not\n"
        "                   balance (16384^3 on an H100: 2..3%% by place with 52 ms windows,\n"
        "                   none with 13 ms); column interleave holds each run's slices\n"
        "  --rotate         rotate the operands of every shape; by default only those\n"
        "                   whose weight streams (m or n <= %d: decode, batched decode)\n"
        "  --no-rotate      rotate no shape's operands (the L2 may then serve the weights)\n"
        "                   Rotating: R copies of A, B and C, R >= %d, together >= %zu MiB (twice\n"
        "                   the L2 if that is more), R <= %d, within free device memory; every\n"
        "                   warm-up and timed launch, hgemm's and cuBLAS's alike, takes the next\n"
        "                   copy, so the L2 cannot serve what the launch before it read; the\n"
        "                   check runs on copy 0. Memory-bound shapes also show GB/s and %% of\n"
        "                   the GPU's HBM peak (the H200's: %.0f GB/s, datasheet; H100s by theirs;\n"
        "                   other GPUs from their memory clock and bus width; the CSV header\n"
        "                   names it, hbm_peak_gbps).\n"
        "output:\n"
        "  --csv FILE       write one row per (kernel, shape, form, run), with metadata, to\n"
        "                   FILE; columns gbps (bytes of A and B read and C written over ms;\n"
        "                   beta is 0, C is never read), rotate_sets (R, 1 when not rotated),\n"
        "                   dtype, layout and batch follow, in that order ('# rotated:'\n"
        "                   lines name the rotated shapes); tflops and gbps count every entry\n"
        "                   of a batch; last come the timed window's NVML telemetry beyond\n"
        "                   the SM clock: window_mem_clock_mhz (mean memory clock) and\n"
        "                   window_clock_events (every reason NVML gave for the clocks during\n"
        "                   the window, OR-ed, in hex: 0x4 software power cap, 0x8 hardware\n"
        "                   slowdown, 0x20/0x40 thermal, 0x80 power brake; -1 without NVML)\n"
        "                   and interleave (--interleave's N, 1 without it), workspace_bytes (what\n"
        "                   every hgemm call was given, --workspace)\n"
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
        "                   m,n,k,calls,batches,status,dtype,layout,batch), with metadata, to\n"
        "                   FILE: a CSV of its own, so that --csv's rows stay as they are\n"
        "  --version        print the version and the git commit, and exit\n"
        "  -h, --help       print this help and exit\n"
        "\n"
        "exit status: 0 success; 1 bad arguments, a failed check or a CUDA error;\n"
        "2 no compute capability 9.0 GPU\n",
        program, DEFAULT_BATCH, DEFAULT_SIZE, DEFAULT_SIZE, DEFAULT_SIZE, LLM_COUNT, (size_t)HGEMM_WORKSPACE_BYTES, EXPLAIN_DEFAULT_SMS,
        DEFAULT_WARMUP,
        DEFAULT_ITERS, DEFAULT_COOLDOWN_S, DEFAULT_REPEAT, MIN_INTERLEAVE, MAX_INTERLEAVE,
        DEFAULT_MAX_WINDOW_MS, ROTATE_MN, MIN_ROTATE_SETS,
        ROTATE_MIN_BYTES >> 20, MAX_ROTATE_SETS, HBM_PEAKS[HBM_H200].gbps, HOST_COST_SIZE,
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
        /* a table name in any case, an ablation, or auto / auto-f16acc (the
         * library's choice by shape, through hgemm_nt_ws's own path) */
        const hgemm_kernel_info *info = hgemm__row_by_any_name(item);
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

/* A comma-separated list of names (any case) out of names[0..count) into
 * idx[] as indices, in the order given; flag and what word the messages.
 * 0 after printing a message. */
static int parse_name_list(const char *flag, const char *what, const char *list,
                           const char *const *names, int count, int *idx, int *n_idx) {
    char known[TEXT_LEN] = "";
    for (int j = 0; j < count; j++)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", j ? ", " : "", names[j]);
    char buf[TEXT_LEN];
    if (strlen(list) >= sizeof buf) return !bad_usage("%s: '%s' is too long", flag, list);
    memcpy(buf, list, strlen(list) + 1);
    *n_idx = 0;
    char *item = buf;
    for (;;) {
        char *comma = strchr(item, ',');
        if (comma) *comma = '\0';
        if (*item == '\0') return !bad_usage("%s: empty name in '%s'", flag, list);
        int found = -1;
        for (int j = 0; j < count; j++)
            if (strcasecmp(names[j], item) == 0) found = j;
        if (found < 0) return !bad_usage("%s: unknown %s '%s' (known: %s)", flag, what, item, known);
        for (int j = 0; j < *n_idx; j++)
            if (idx[j] == found) return !bad_usage("%s: '%s' is listed twice", flag, item);
        idx[(*n_idx)++] = found; /* no overflow: each of the count names at most once */
        if (comma == NULL) return 1;
        item = comma + 1;
    }
}

static int form_is_default(form f) {
    return f.dtype == DEFAULT_FORM.dtype && f.op_a == DEFAULT_FORM.op_a && f.op_b == DEFAULT_FORM.op_b &&
           f.batch == DEFAULT_FORM.batch;
}

static const char *dtype_name(hgemm_dtype dtype) {
    for (int i = 0; i < MAX_DTYPES; i++)
        if (dtype_names[i].dtype == dtype) return dtype_names[i].name;
    return "?";
}

static const char *layout_name(hgemm_op op_a, hgemm_op op_b) {
    for (int i = 0; i < MAX_LAYOUTS; i++)
        if (layout_names[i].op_a == op_a && layout_names[i].op_b == op_b) return layout_names[i].name;
    return "?";
}

/* "bf16 nn" or "f16 nt, batch 8": how tables and messages name a form. */
static void form_text(char *out, size_t len, form f) {
    snprintf(out, len, "%s %s", dtype_name(f.dtype), layout_name(f.op_a, f.op_b));
    if (f.batch != 1) snprintf(out + strlen(out), len - strlen(out), ", batch %lld", (long long)f.batch);
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
    return o->rotate == ROTATE_ALL || s.m <= ROTATE_MN || s.n <= ROTATE_MN;
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
    o->batch = DEFAULT_BATCH;
    o->n_dtypes = o->n_layouts = 1; /* index 0 of each table: f16, nt */
    int kernels_given = 0, rotate_all = 0, rotate_none = 0;
    const char *dtype_list[MAX_DTYPES], *layout_list[MAX_LAYOUTS];
    for (int j = 0; j < MAX_DTYPES; j++) dtype_list[j] = dtype_names[j].name;
    for (int j = 0; j < MAX_LAYOUTS; j++) layout_list[j] = layout_names[j].name;
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
                                strcmp(a, "--shapes") == 0 || strcmp(a, "--host-cost-csv") == 0 ||
                                strcmp(a, "--dtype") == 0 || strcmp(a, "--layout") == 0 ||
                                strcmp(a, "--batch") == 0 || strcmp(a, "--interleave") == 0 ||
                                strcmp(a, "--sms") == 0 || strcmp(a, "--max-window-ms") == 0 ||
                                strcmp(a, "--workspace") == 0;
        if (inline_val && !takes_value) {
            if (strcmp(a, "--help") == 0 || strcmp(a, "--list") == 0 || strcmp(a, "--accuracy") == 0 ||
                strcmp(a, "--accuracy-sweep") == 0 || strcmp(a, "--sweep") == 0 ||
                strcmp(a, "--version") == 0 || strcmp(a, "--list-shapes") == 0 ||
                strcmp(a, "--rotate") == 0 || strcmp(a, "--no-rotate") == 0 ||
                strcmp(a, "--host-cost") == 0 || strcmp(a, "--explain") == 0 || strcmp(a, "--fp8") == 0 ||
                strcmp(a, "--no-lead-in") == 0 || strcmp(a, "--no-library-workspace") == 0)
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
        } else if (strcmp(a, "--explain") == 0) {
            o->explain = 1;
        } else if (strcmp(a, "--fp8") == 0) {
            o->explain_fp8 = 1;
        } else if (strcmp(a, "--sms") == 0) {
            if (val == NULL) return bad_usage("--sms needs an argument");
            if (!parse_int(val, 1, MAX_EXPLAIN_SMS, &o->sms))
                return bad_usage("--sms: '%s' is not an integer in 1..%d", val, MAX_EXPLAIN_SMS);
            i += !inline_val;
        } else if (strcmp(a, "--rotate") == 0) {
            rotate_all = 1;
        } else if (strcmp(a, "--no-rotate") == 0) {
            rotate_none = 1;
        } else if (strcmp(a, "--no-lead-in") == 0) {
            o->no_lead_in = 1;
        } else if (strcmp(a, "--no-library-workspace") == 0) {
            o->no_library_ws = 1;
            hgemm_set_library_workspace(0);
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
        } else if (strcmp(a, "--dtype") == 0) {
            if (val == NULL || *val == '\0')
                return bad_usage("--dtype needs an argument: f16, bf16 or a list like f16,bf16");
            if (!parse_name_list("--dtype", "element type", val, dtype_list, MAX_DTYPES, o->dtypes,
                                 &o->n_dtypes))
                return EXIT_FAIL;
            i += !inline_val;
        } else if (strcmp(a, "--layout") == 0) {
            if (val == NULL || *val == '\0')
                return bad_usage("--layout needs an argument: nt, nn, tn, tt or a list like nn,nt,tn");
            if (!parse_name_list("--layout", "layout", val, layout_list, MAX_LAYOUTS, o->layouts,
                                 &o->n_layouts))
                return EXIT_FAIL;
            i += !inline_val;
        } else if (strcmp(a, "--batch") == 0) {
            if (val == NULL) return bad_usage("--batch needs an argument");
            if (!parse_int(val, 1, MAX_BATCH, &o->batch))
                return bad_usage("--batch: '%s' is not an integer in 1..%d", val, MAX_BATCH);
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
        } else if (strcmp(a, "--workspace") == 0) {
            if (val == NULL) return bad_usage("--workspace needs an argument (bytes)");
            int64_t v = 0;
            if (!parse_int(val, 0, MAX_WORKSPACE_BYTES, &v))
                return bad_usage("--workspace: '%s' is not a byte count in 0..%lld", val,
                                 (long long)MAX_WORKSPACE_BYTES);
            bench_workspace_bytes = (size_t)v;
            i += !inline_val;
        } else if (strcmp(a, "--interleave") == 0) {
            if (val == NULL) return bad_usage("--interleave needs an argument (slices per run)");
            if (!parse_int(val, MIN_INTERLEAVE, MAX_INTERLEAVE, &o->interleave))
                return bad_usage("--interleave: '%s' is not an integer in %d..%d", val, MIN_INTERLEAVE,
                                 MAX_INTERLEAVE);
            i += !inline_val;
        } else if (strcmp(a, "--max-window-ms") == 0) {
            if (val == NULL) return bad_usage("--max-window-ms needs an argument (milliseconds)");
            char *end = NULL;
            errno = 0;
            const double v = strtod(val, &end);
            if (*val == '\0' || errno != 0 || end == val || *end != '\0' || !(v >= 0.0 && v <= MAX_WINDOW_MS))
                return bad_usage("--max-window-ms: '%s' is not a number of milliseconds in 0..%d", val,
                                 MAX_WINDOW_MS);
            o->max_window_ms = v;
            o->max_window_given = 1;
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
        if (o->interleave) return bad_usage("--interleave applies to timed shapes: not with --host-cost");
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
    if (o->interleave && o->accuracy)
        return bad_usage("--interleave applies to timing: not with %s", accuracy_flag);
    if (o->no_lead_in && !o->interleave) return bad_usage("--no-lead-in applies to --interleave's slices");
    if (o->max_window_given && !o->interleave)
        return bad_usage("--max-window-ms applies to --interleave's windows");
    if (!o->max_window_given) o->max_window_ms = DEFAULT_MAX_WINDOW_MS;
    if (o->interleave > o->iters)
        return bad_usage("--interleave %lld needs --iters >= %lld (a launch per slice), got %lld",
                         (long long)o->interleave, (long long)o->interleave, (long long)o->iters);
    if (o->explain) {
        if (o->accuracy) return bad_usage("--explain and %s exclude each other", accuracy_flag);
        if (o->host_cost) return bad_usage("--explain and --host-cost exclude each other");
        if (o->list_shapes) return bad_usage("--explain and --list-shapes exclude each other");
        if (o->csv) return bad_usage("--explain prints its plans: no --csv with it");
    } else if (o->sms) {
        return bad_usage("--sms sets the SMs --explain plans for: only with --explain");
    }
    if (o->explain_fp8 && !o->explain) return bad_usage("--fp8 applies to --explain: hgemm-bench times no FP8 product");
    if (!kernels_given) parse_kernels("all", o);
    /* The forms: every dtype with every layout, dtypes outermost. */
    for (int d = 0; d < o->n_dtypes; d++)
        for (int l = 0; l < o->n_layouts; l++) {
            const form f = {dtype_names[o->dtypes[d]].dtype, layout_names[o->layouts[l]].op_a,
                            layout_names[o->layouts[l]].op_b, o->batch};
            o->label_forms |= !form_is_default(f);
            o->forms[o->n_forms++] = f;
        }
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
    nv->events = (nvml_events_fn)dlsym(nv->lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (nv->events == NULL) nv->events = (nvml_events_fn)dlsym(nv->lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
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

/* A current clock (NVML_CLOCK_SM or NVML_CLOCK_MEM) in MHz, or -1 without NVML. */
static int nvml_clock_now(const nvml *nv, int clock_type) {
    unsigned mhz = 0;
    if (nv->dev == NULL || nv->clock(nv->dev, clock_type, &mhz) != NVML_SUCCESS) return -1;
    return (int)mhz;
}

static int nvml_sm_clock(const nvml *nv) { return nvml_clock_now(nv, NVML_CLOCK_SM); }

/* Why the clocks are where they are now, NVML's bit mask (nvmlClocksEventReason*:
 * 0x1 idle, 0x4 software power cap, 0x8 hardware slowdown, 0x20 / 0x40
 * software / hardware thermal slowdown, 0x80 hardware power brake), or -1. */
static long long nvml_clock_events(const nvml *nv) {
    unsigned long long reasons = 0;
    if (nv->dev == NULL || nv->events == NULL || nv->events(nv->dev, &reasons) != NVML_SUCCESS) return -1;
    return (long long)reasons;
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

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * NS_PER_S + (double)ts.tv_nsec;
}

/* Bytes one launch moves: A and B read, C written, and C read too when beta
 * is not 0 (never here: BENCH_BETA), for every entry of the batch. The
 * numerator of the gbps column. */
static double operand_bytes(int64_t m, int64_t n, int64_t k, int64_t batch) {
    const double c_passes = BENCH_BETA != 0.0f ? 2.0 : 1.0;
    return (double)batch * (double)ELEM_BYTES *
           ((double)m * (double)k + (double)n * (double)k + c_passes * (double)m * (double)n);
}

static double median_of(double *v, int count) {
    if (count == 0) return NAN;
    double lo = hgemm_check_select(v, count, (count - 1) / 2);
    if (count % 2) return lo;
    double hi = hgemm_check_select(v, count, count / 2);
    return (lo + hi) / 2;
}

/* ---- the problem of one shape ------------------------------------------------------ */

/* Bytes of `batch` entries `stride` elements apart, rounded up to `align`
 * bytes; SIZE_MAX where that passes INT64_MAX (sizes up to 2^31 - 1 and
 * batches up to MAX_BATCH reach 2^82: --explain plans them, no device holds
 * them, and cudaMalloc refuses SIZE_MAX). */
static size_t batch_bytes(int64_t batch, int64_t stride, int64_t align) {
    const int64_t most = (INT64_MAX - align) / ELEM_BYTES; /* elements */
    if (stride > 0 && batch > most / stride) return SIZE_MAX;
    return (size_t)round_up(batch * stride * ELEM_BYTES, align);
}

/* Form f's matrices for shape s (f16 nt: lda = ldb = k and ldc = n, each
 * rounded up to LD_ALIGN, as hgemm-bench always had them). A stride is at
 * most (2^31 - 1) x 2^31 elements: int64 holds it. */
static dims form_dims(shape s, form f) {
    dims d;
    d.a_rows = f.op_a == HGEMM_OP_N ? s.m : s.k;
    d.a_cols = f.op_a == HGEMM_OP_N ? s.k : s.m;
    d.b_rows = f.op_b == HGEMM_OP_N ? s.k : s.n;
    d.b_cols = f.op_b == HGEMM_OP_N ? s.n : s.k;
    d.lda = round_up(d.a_cols, LD_ALIGN);
    d.ldb = round_up(d.b_cols, LD_ALIGN);
    d.ldc = round_up(s.n, LD_ALIGN);
    d.stride_a = d.a_rows * d.lda;
    d.stride_b = d.b_rows * d.ldb;
    d.stride_c = s.m * d.ldc;
    d.set_a = batch_bytes(f.batch, d.stride_a, ROTATE_ALIGN);
    d.set_b = batch_bytes(f.batch, d.stride_b, ROTATE_ALIGN);
    d.set_c = batch_bytes(f.batch, d.stride_c, ROTATE_ALIGN);
    return d;
}

/* Device bytes problem_setup allocates for form f of shape s besides the
 * rotated sets: set 0 (C with its guard rows), the reference, the workspace. */
static double form_own_bytes(shape s, form f) {
    const dims d = form_dims(s, f);
    const double batch = (double)f.batch;
    return (double)ELEM_BYTES * (batch * (double)d.stride_a + batch * (double)d.stride_b +
                                 (batch * (double)s.m + 2 * GUARD_ROWS) * (double)d.ldc) +
           batch * (double)s.m * (double)s.n * (double)sizeof(double) + (double)bench_workspace_bytes;
}

/* How the timed launches of shape s rotate over operand sets, the same R for
 * each of its forms (which share one batch count): when wanted,
 * R = ceil(target_bytes / bytes per set), at least MIN_ROTATE_SETS and at
 * most MAX_ROTATE_SETS, and no more than free_bytes holds beside the shape's
 * own buffers (and ROTATE_RESERVE_BYTES) in its largest form; R = 1 if not
 * even two fit. Between two launches on one set the others move
 * max(set, target - set) >= half the target bytes, more than the L2 holds. */
static rotation rotation_plan(shape s, const form *forms, int n_forms, int wanted,
                              size_t free_bytes, size_t target_bytes) {
    rotation r;
    memset(&r, 0, sizeof r);
    r.wanted = wanted;
    r.sets = r.sets_wanted = 1;
    r.set_bytes = operand_bytes(s.m, s.n, s.k, forms[0].batch);
    if (!wanted) return r;
    const double sets = fmin(fmax(ceil((double)target_bytes / r.set_bytes), MIN_ROTATE_SETS),
                             MAX_ROTATE_SETS);
    r.sets_wanted = (int)sets;
    double own = 0, per_set = 0;
    for (int i = 0; i < n_forms; i++) {
        const dims d = form_dims(s, forms[i]);
        own = fmax(own, form_own_bytes(s, forms[i]));
        per_set = fmax(per_set, (double)(d.set_a + d.set_b + d.set_c));
    }
    const double spare = (double)free_bytes - own - (double)ROTATE_RESERVE_BYTES;
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

/* Operand set `set` of p: 0 is A, B and the guarded C; 1 .. R-1 the copies.
 * Each points at entry 0 of its batch. */
static operands problem_set(const problem *p, int set) {
    if (set == 0) return (operands){p->A, p->B, p->C.C};
    const size_t i = (size_t)(set - 1);
    return (operands){(const char *)p->rot_A + i * p->d.set_a,
                      (const char *)p->rot_B + i * p->d.set_b, (char *)p->rot_C + i * p->d.set_c};
}

/* The data of shape s in form f: every stored matrix random (the entries of
 * a batch one stacked matrix of batch x rows, so each entry has its own
 * values; f16 nt batch 1 is the data hgemm-bench always used), NaN in the
 * padding, and the fp64 reference of each entry. */
static void problem_setup(problem *p, shape s, form f, rotation rot) {
    memset(p, 0, sizeof *p);
    p->f = f;
    p->d = form_dims(s, f);
    p->m = s.m;
    p->n = s.n;
    p->k = s.k;
    p->lda = p->d.lda;
    p->ldb = p->d.ldb;
    p->ldc = p->d.ldc;
    p->rot = rot;
    const int64_t batch = f.batch;
    const size_t a_bytes = batch_bytes(batch, p->d.stride_a, 1);
    const size_t b_bytes = batch_bytes(batch, p->d.stride_b, 1);
    HGEMM_CHECK_CUDA(cudaMalloc(&p->A, a_bytes));
    HGEMM_CHECK_CUDA(cudaMalloc(&p->B, b_bytes));
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&p->ref, (size_t)(batch * p->m * p->n) * sizeof(double)));
    p->workspace = NULL;
    if (bench_workspace_bytes) {
        HGEMM_CHECK_CUDA(cudaMalloc(&p->workspace, bench_workspace_bytes));
        HGEMM_CHECK_CUDA(cudaMemset(p->workspace, 0, bench_workspace_bytes));
    }
    hgemm_check_guarded_alloc_dt(f.dtype, &p->C, batch * p->m, p->n, p->ldc, GUARD_ROWS);
    /* NaN in the padding columns: a kernel that reads past a row's end is caught. */
    const int64_t a_rows = batch * p->d.a_rows, b_rows = batch * p->d.b_rows;
    hgemm_check_fill_nan_dt(f.dtype, p->A, a_rows, p->lda, p->lda, 0);
    hgemm_check_fill_nan_dt(f.dtype, p->B, b_rows, p->ldb, p->ldb, 0);
    float scale = hgemm_check_unit_scale(p->k);
    hgemm_check_fill_random_dt(f.dtype, p->A, a_rows, p->d.a_cols, p->lda, SEED_A, scale, 0);
    hgemm_check_fill_random_dt(f.dtype, p->B, b_rows, p->d.b_cols, p->ldb, SEED_B, scale, 0);
    for (int64_t b = 0; b < batch; b++)
        hgemm_check_reference_ex(f.dtype, f.op_a, f.op_b, p->m, p->n, p->k, 1.0,
                                 (const uint16_t *)p->A + b * p->d.stride_a, p->lda,
                                 (const uint16_t *)p->B + b * p->d.stride_b, p->ldb, 0.0, NULL, 0,
                                 p->ref + b * p->m * p->n, p->n, 0);
    if (rot.sets > 1) {
        /* Sets 1 .. R-1: byte copies of A and B (padding included), after
         * their fills on the same stream; their C is NaN (0xffff in fp16 and
         * bf16 alike), which a launch never reads (beta 0) and always overwrites. */
        const size_t extra = (size_t)(rot.sets - 1);
        p->rot_A = rotation_malloc(extra * p->d.set_a, s, rot.sets);
        p->rot_B = rotation_malloc(extra * p->d.set_b, s, rot.sets);
        p->rot_C = rotation_malloc(extra * p->d.set_c, s, rot.sets);
        for (int i = 1; i < rot.sets; i++) {
            const operands o = problem_set(p, i);
            HGEMM_CHECK_CUDA(cudaMemcpyAsync((void *)o.A, p->A, a_bytes, cudaMemcpyDeviceToDevice, 0));
            HGEMM_CHECK_CUDA(cudaMemcpyAsync((void *)o.B, p->B, b_bytes, cudaMemcpyDeviceToDevice, 0));
        }
        HGEMM_CHECK_CUDA(cudaMemsetAsync(p->rot_C, 0xff, extra * p->d.set_c, 0));
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

/* Whether e is a row with a public id (a table kernel, auto, auto-f16acc),
 * the kernels hgemm_gemm can run; ablations share their parent's id. */
static int public_kernel(const entry *e) {
    return e->info != NULL &&
           (hgemm__kernel_find(e->info->id) == e->info || hgemm__auto_row(e->info->id) == e->info);
}

/* Why entry e does not run form f at all, whatever the shape; NULL if it may. */
static const char *form_skip_reason(const entry *e, form f) {
    if (e->kind == ENTRY_CUBLAS16 && f.dtype != HGEMM_DTYPE_F16)
        return "cuBLAS has no COMPUTE_16F for this element type (vs_cublas16 is nan)";
    if (e->kind == ENTRY_HGEMM && !form_is_default(f) && !public_kernel(e) && !e->info->forms)
        return "this ablation runs on hgemm_nt's path only (f16 nt, batch 1)";
    return NULL;
}

/* One call of hgemm kernel e on operand set o of p. f16 nt batch 1:
 * hgemm_nt_ws's own path, by table row (ablations have no public id); every
 * other form: hgemm_gemm, or for an ablation whose row reads the form
 * (its `forms`), hgemm_gemm's path by row. All with the workspace (--workspace;
 * by default HGEMM_WORKSPACE_BYTES, as cuBLAS has its own). */
static hgemm_status hgemm_call(const entry *e, const problem *p, operands o) {
    if (form_is_default(p->f))
        return hgemm__run_ws(e->info, p->m, p->n, p->k, BENCH_ALPHA, o.A, p->lda, o.B, p->ldb,
                             BENCH_BETA, o.C, p->ldc, p->workspace, bench_workspace_bytes, 0);
    const hgemm_nt_options ws = {p->workspace, bench_workspace_bytes, 0, NULL, 0};
    if (!public_kernel(e))
        return hgemm__run_gemm(e->info, p->f.dtype, p->f.op_a, p->f.op_b, p->m, p->n, p->k, BENCH_ALPHA,
                               o.A, p->lda, p->d.stride_a, o.B, p->ldb, p->d.stride_b, BENCH_BETA, o.C,
                               p->ldc, p->d.stride_c, p->f.batch, &ws, 0);
    return hgemm_gemm(e->info->id, p->f.dtype, p->f.op_a, p->f.op_b, p->m, p->n, p->k, BENCH_ALPHA,
                      o.A, p->lda, p->d.stride_a, o.B, p->ldb, p->d.stride_b, BENCH_BETA, o.C,
                      p->ldc, p->d.stride_c, p->f.batch, &ws, 0);
}

/* One launch of e on operand set o of p: BENCH_ALPHA, BENCH_BETA, the
 * default stream. Returns 1 on success, else 0 with the reason in why. */
static int launch(const entry *e, const problem *p, operands o, cublasHandle_t h, char *why,
                  size_t why_len) {
    if (e->kind == ENTRY_HGEMM) {
        hgemm_status st = hgemm_call(e, p, o);
        if (st != HGEMM_SUCCESS) {
            snprintf(why, why_len, "%s returned %d: %s",
                     form_is_default(p->f) ? "hgemm_nt" : "hgemm_gemm", (int)st,
                     hgemm_status_string(st));
            (void)cudaGetLastError(); /* this kernel's failure: not left for the next check */
            return 0;
        }
        return 1;
    }
    /* Row-major C (m x n) is column-major C^T (n x m), and C^T = op_b(B)^T *
     * op_a(A)^T. A row-major matrix read column-major is its transpose, so B
     * as stored is B^T to cuBLAS: op_b(B)^T is that with op_b's transpose
     * (N: B^T as it lies; T: transposed back to B). The same for A: cuBLAS
     * takes B first with op_b, then A with op_a, sizes n, m, k. f16 nt is
     * (CUBLAS_OP_T, CUBLAS_OP_N), the call hgemm-bench always made. */
    const cublasOperation_t op_b = p->f.op_b == HGEMM_OP_T ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_a = p->f.op_a == HGEMM_OP_T ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cudaDataType_t type = p->f.dtype == HGEMM_DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_16F;
    const float alpha32 = BENCH_ALPHA, beta32 = BENCH_BETA;
    const uint16_t alpha16 = hgemm_check_f32_to_f16(BENCH_ALPHA); /* __half bits */
    const uint16_t beta16 = hgemm_check_f32_to_f16(BENCH_BETA);
    const int f32 = e->kind == ENTRY_CUBLAS32;
    const void *alpha = f32 ? (const void *)&alpha32 : (const void *)&alpha16;
    const void *beta = f32 ? (const void *)&beta32 : (const void *)&beta16;
    const cublasComputeType_t compute = f32 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_16F;
    if (p->f.batch == 1) {
        CHECK_CUBLAS(cublasGemmEx(h, op_b, op_a, (int)p->n, (int)p->m, (int)p->k, alpha, o.B, type,
                                  (int)p->ldb, o.A, type, (int)p->lda, beta, o.C, type, (int)p->ldc,
                                  compute, CUBLAS_GEMM_DEFAULT));
    } else {
        CHECK_CUBLAS(cublasGemmStridedBatchedEx(
            h, op_b, op_a, (int)p->n, (int)p->m, (int)p->k, alpha, o.B, type, (int)p->ldb,
            (long long)p->d.stride_b, o.A, type, (int)p->lda, (long long)p->d.stride_a, beta, o.C,
            type, (int)p->ldc, (long long)p->d.stride_c, (int)p->f.batch, compute,
            CUBLAS_GEMM_DEFAULT));
    }
    return 1;
}

/* Before the first check of an hgemm kernel in a form other than f16 nt
 * batch 1, and before its cooldown: does the kernel serve this form and
 * shape? hgemm_gemm decides NOT_SUPPORTED before any CUDA call; any other
 * answer runs the product once (on set 0, which the check poisons again) and
 * leaves the verdict to the check. Returns 0 with a message on stderr when
 * the kernel is to be skipped. */
static int probe_entry(const entry *e, const problem *p) {
    if (e->kind != ENTRY_HGEMM || form_is_default(p->f)) return 1;
    const hgemm_status st = hgemm_call(e, p, problem_set(p, 0));
    if (st == HGEMM_ERROR_NOT_SUPPORTED) {
        char text[TEXT_LEN];
        form_text(text, sizeof text, p->f);
        fprintf(stderr, "%s: %s: %s at %lld x %lld x %lld: hgemm_gemm answers '%s'; skipped\n",
                program, e->name, text,
                (long long)p->m, (long long)p->n, (long long)p->k, hgemm_status_string(st));
        return 0;
    }
    if (st != HGEMM_SUCCESS) (void)cudaGetLastError(); /* the check calls again and reports */
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    return 1;
}

/* Poisoned C, one launch, the comparison (every entry of a batch: C and the
 * reference as one (batch * m) x n matrix) and the guard band. */
static void check_entry(const entry *e, const problem *p, cublasHandle_t h, result *r) {
    const int64_t rows = p->f.batch * p->m;
    hgemm_check_guarded_reset(&p->C, 0);
    hgemm_check_fill_nan_dt(p->f.dtype, p->C.C, rows, p->n, p->ldc, 0);
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    if (!launch(e, p, problem_set(p, 0), h, r->why, sizeof r->why)) {
        r->status = OUTCOME_LAUNCH_FAILED;
        return;
    }
    HGEMM_CHECK_LAUNCH();
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    int ok = hgemm_check_compare_dt(p->f.dtype, p->C.C, p->ldc, p->ref, p->n, rows, p->n, e->atol,
                                    HGEMM_CHECK_RTOL, &r->stats, 0);
    hgemm_check_guard_report g;
    int intact = hgemm_check_guard_intact(&p->C, &g, 0);
    if (!ok) {
        r->status = OUTCOME_CHECK_FAILED;
        snprintf(r->why, sizeof r->why, "%lld of %lld elements outside atol %g + rtol %g * |ref|%s",
                 (long long)r->stats.failed, (long long)r->stats.count, e->atol, HGEMM_CHECK_RTOL,
                 p->f.batch > 1 ? " (row: entry * m + row of the entry)" : "");
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
    double clock_sum = 0, mem_sum = 0;
    int clocks = 0, mems = 0, temp_max = -1;
    long long events = -1;
    cudaError_t q;
    while ((q = cudaEventQuery(stop)) == cudaErrorNotReady) {
        const int mhz = nvml_sm_clock(nv), celsius = nvml_temperature_c(nv), mem = nvml_clock_now(nv, NVML_CLOCK_MEM);
        const long long why = nvml_clock_events(nv);
        if (mhz >= 0) clock_sum += mhz, clocks++;
        if (mem >= 0) mem_sum += mem, mems++;
        if (celsius > temp_max) temp_max = celsius;
        if (why >= 0) events = (events < 0 ? 0 : events) | why;
        sleep_seconds(WINDOW_SAMPLE_US * 1e-6);
    }
    if (q != cudaSuccess) HGEMM_CHECK_CUDA(q);
    r->window_clock_mhz = clocks ? (int)(clock_sum / clocks + 0.5) : -1;
    r->window_mem_clock_mhz = mems ? (int)(mem_sum / mems + 0.5) : -1;
    r->window_temp_c = temp_max;
    r->window_events = events;
}

/* `count` launches of e, each on the operand set after *set: with R sets they
 * take sets 1, 2, ..., R-1, 0, 1, ... in turn (set 0 was just read by the
 * check); with R == 1 every launch takes set 0. Returns 1, or 0 with the
 * reason in r->why. */
static int launch_n(const entry *e, const problem *p, cublasHandle_t h, int64_t count, int *set,
                    result *r) {
    for (int64_t i = 0; i < count; i++) {
        *set = (*set + 1) % p->rot.sets;
        if (!launch(e, p, problem_set(p, *set), h, r->why, sizeof r->why)) return 0;
    }
    return 1;
}

/* The speed columns of a timed entry: total_ms over `iters` launches. */
static void set_speed(result *r, const problem *p, double total_ms, int64_t iters) {
    r->timed = 1;
    r->ms = total_ms / (double)iters;
    r->tflops = 2.0 * (double)p->f.batch * (double)p->m * (double)p->n * (double)p->k /
                (r->ms * 1e-3) / 1e12;
    r->gbps = operand_bytes(p->m, p->n, p->k, p->f.batch) / (r->ms * 1e-3) / 1e9;
}

/* Warm-up, then the timed window, on one rotation of operand sets (launch_n). */
static void time_entry(const entry *e, const problem *p, cublasHandle_t h, const options *o,
                       const nvml *nv, cudaEvent_t start, cudaEvent_t stop, result *r) {
    int set = 0;
    if (!launch_n(e, p, h, o->warmup, &set, r)) goto failed;
    HGEMM_CHECK_LAUNCH();
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    r->clock_before = nvml_sm_clock(nv);
    HGEMM_CHECK_CUDA(cudaEventRecord(start, 0));
    if (!launch_n(e, p, h, o->iters, &set, r)) goto failed;
    HGEMM_CHECK_LAUNCH();
    HGEMM_CHECK_CUDA(cudaEventRecord(stop, 0));
    sample_window(nv, stop, r);
    HGEMM_CHECK_CUDA(cudaEventSynchronize(stop));
    r->clock_after = nvml_sm_clock(nv);
    float total_ms = 0.0f;
    HGEMM_CHECK_CUDA(cudaEventElapsedTime(&total_ms, start, stop));
    set_speed(r, p, (double)total_ms, o->iters);
    return;
failed:
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    r->status = OUTCOME_LAUNCH_FAILED;
}

/* --interleave N: the entries of res that passed their check (OUTCOME_OK),
 * timed together. Each one's warm-up in entry order, then N slices; in a
 * slice every such entry in turn runs its share of iters (iters / N, one
 * more in the first iters % N slices), an event recorded after each window:
 * marks[0], window, marks[1], window, ... so the windows run back to back
 * with no host sync in the whole period, and every entry meets the clock
 * levels of the period in about the same proportion. A window's clock also
 * depends on how much power the window before it drew (run 96: in a fixed
 * cyclic order, two builds of the same kernel 1.5..2.5% apart), so each
 * slice takes the next row of a Williams design (tools/interleave.h): with N
 * a multiple of the design's rows (the entries timed, twice that when they
 * are odd), each entry follows every other one equally often within the
 * slices. Back to back, the last window of a slice would also precede the
 * first of the next, and those pairs repeat (with 4 entries, the fourth
 * follows the first in 4 of its 8 windows, the third the fourth in 4). So
 * each slice opens with an untimed lead-in, its first entry's share run once
 * more: every timed window follows either another entry, each equally
 * often, or its own entry's lead-in, as often for every entry
 * (hgemm_interleave_lead; --no-lead-in leaves it out). Two windows back the
 * design is not balanced (run 144: at 16384^3 the fourth of 4 entries ran
 * 2..3% slower whichever kernel it was, in windows of 52 ms), so the
 * windows are kept short: each warm-up is timed, and where the slowest
 * entry's launches would make a window longer than --max-window-ms the
 * run takes more slices than N (hgemm_interleave_slices; run 145: one
 * launch of 13 ms a window, every place level). marks holds at least
 * (n_entries + 1) * interleave_max_slices(o) + 1 events. An entry's ms is the sum of its
 * windows over iters. The telemetry (clock before and after, the sampled
 * window) is the whole period's, the same for every entry: they shared it.
 * Sampling starts once the period's launches are queued, as time_entry's
 * does.
 *
 * One rotation of operand sets for every launch of the period, in the order
 * the GPU runs them: a counter per entry would let the first launch of a
 * window read the set the last launch of the window before just read, out
 * of the L2. An entry whose launch fails keeps its (empty) windows, so the
 * events of the others stay where they are. */
/* The most slices one interleaved run may take: N, or with a cap on the
 * windows up to a launch a window (--iters), MAX_INTERLEAVE at most. */
static int64_t interleave_max_slices(const options *o) {
    if (!o->interleave) return 0;
    if (!(o->max_window_ms > 0.0)) return o->interleave;
    const int64_t most = o->iters < MAX_INTERLEAVE ? o->iters : MAX_INTERLEAVE;
    return most > o->interleave ? most : o->interleave;
}

/* `share` launches of entries[i] in the period (launch_n), unless it has
 * failed; a failure marks it so, and its later shares are empty. */
static void launch_share(const entry *entries, int i, const problem *p, cublasHandle_t h, int64_t share,
                         int *set, result *res) {
    result *r = &res[i];
    if (r->status == OUTCOME_OK && !launch_n(&entries[i], p, h, share, set, r)) r->status = OUTCOME_LAUNCH_FAILED;
    HGEMM_CHECK_LAUNCH();
}

static void time_interleaved(const entry *entries, int n_entries, const problem *p, cublasHandle_t h,
                             const options *o, const nvml *nv, const cudaEvent_t *marks, result *res) {
    int timed[MAX_ENTRIES], n_timed = 0;
    for (int i = 0; i < n_entries; i++)
        if (res[i].status == OUTCOME_OK) timed[n_timed++] = i;
    if (n_timed == 0) return;
    int set = 0;
    /* every warm-up in entry order, between marks[j] and marks[j + 1] */
    HGEMM_CHECK_CUDA(cudaEventRecord(marks[0], 0));
    for (int j = 0; j < n_timed; j++) {
        result *r = &res[timed[j]];
        if (!launch_n(&entries[timed[j]], p, h, o->warmup, &set, r)) r->status = OUTCOME_LAUNCH_FAILED;
        HGEMM_CHECK_CUDA(cudaEventRecord(marks[j + 1], 0));
    }
    HGEMM_CHECK_LAUNCH();
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    double launch_ms = 0.0; /* the slowest entry's warm-up, a launch; 0 without warm-ups or a cap */
    for (int j = 0; j < n_timed && o->warmup > 0 && o->max_window_ms > 0.0; j++) {
        if (res[timed[j]].status != OUTCOME_OK) continue;
        float ms = 0.0f;
        HGEMM_CHECK_CUDA(cudaEventElapsedTime(&ms, marks[j], marks[j + 1]));
        if ((double)ms / (double)o->warmup > launch_ms) launch_ms = (double)ms / (double)o->warmup;
    }
    const int clock_before = nvml_sm_clock(nv);
    const int64_t slices = hgemm_interleave_slices(o->interleave, o->iters, n_timed, launch_ms, o->max_window_ms,
                                                   interleave_max_slices(o));
    const int lead = !o->no_lead_in; /* an untimed lead-in before each slice */
    int mark = 0;
    if (!lead) HGEMM_CHECK_CUDA(cudaEventRecord(marks[mark++], 0));
    for (int64_t s = 0; s < slices; s++) {
        const int64_t share = o->iters / slices + (s < o->iters % slices);
        if (lead) { /* the first window's entry once more, untimed; then the slice's first mark */
            launch_share(entries, timed[hgemm_interleave_lead(s, n_timed)], p, h, share, &set, res);
            HGEMM_CHECK_CUDA(cudaEventRecord(marks[mark++], 0));
        }
        for (int q = 0; q < n_timed; q++) {
            launch_share(entries, timed[hgemm_interleave_place(s, q, n_timed)], p, h, share, &set, res);
            HGEMM_CHECK_CUDA(cudaEventRecord(marks[mark++], 0));
        }
    }
    result period;
    memset(&period, 0, sizeof period);
    sample_window(nv, marks[mark - 1], &period);
    HGEMM_CHECK_CUDA(cudaEventSynchronize(marks[mark - 1]));
    const int clock_after = nvml_sm_clock(nv);
    double total_ms[MAX_ENTRIES] = {0.0};
    for (int64_t s = 0; s < slices; s++)
        for (int q = 0; q < n_timed; q++) { /* window marks[w] .. marks[w + 1]; a lead-in lies between
                                                 a slice's last mark and the next slice's first */
            const int64_t w = s * (n_timed + lead) + q;
            float window_ms = 0.0f;
            HGEMM_CHECK_CUDA(cudaEventElapsedTime(&window_ms, marks[w], marks[w + 1]));
            total_ms[hgemm_interleave_place(s, q, n_timed)] += (double)window_ms;
        }
    for (int j = 0; j < n_timed; j++) {
        result *r = &res[timed[j]];
        if (r->status != OUTCOME_OK) continue;
        r->clock_before = clock_before;
        r->clock_after = clock_after;
        r->window_clock_mhz = period.window_clock_mhz;
        r->window_mem_clock_mhz = period.window_mem_clock_mhz;
        r->window_temp_c = period.window_temp_c;
        r->window_events = period.window_events;
        r->slices = slices;
        set_speed(r, p, total_ms[j], o->iters);
    }
}

/* ---- output ------------------------------------------------------------------------- */

static const char *outcome_name(outcome s) {
    switch (s) {
    case OUTCOME_OK: return "ok";
    case OUTCOME_CHECK_FAILED: return "check_failed";
    case OUTCOME_LAUNCH_FAILED: return "launch_failed";
    case OUTCOME_SKIPPED: return "skipped";
    }
    return "unknown";
}

static const char *const csv_columns =
    "kernel,m,n,k,run,ms,tflops,vs_cublas32,vs_cublas16,max_abs_err,mean_abs_err,p99_abs_err,"
    "failed_elements,status,accumulator,iters,warmup,sm_clock_before_mhz,sm_clock_after_mhz,"
    "window_sm_clock_mhz,window_max_temp_c,gbps,rotate_sets,dtype,layout,batch,window_mem_clock_mhz,"
    "window_clock_events,interleave,workspace_bytes";

static void csv_row(FILE *f, const entry *e, const problem *p, int run, const result *r,
                    const options *o) {
    int have_err = r->status != OUTCOME_LAUNCH_FAILED;
    char events[24] = "-1"; /* NVML's bit mask in hex, as nvml.h writes it */
    if (r->timed && r->window_events >= 0) snprintf(events, sizeof events, "0x%llx", (unsigned long long)r->window_events);
    fprintf(f, "%s,%lld,%lld,%lld,%d,%.6f,%.3f,%.5f,%.5f,%.6e,%.6e,%.6e,%lld,%s,%s,%lld,%lld,%d,%d,%d,%d,"
               "%.3f,%d,%s,%s,%lld,%d,%s,%lld,%zu\n",
            e->name, (long long)p->m, (long long)p->n, (long long)p->k, run,
            r->timed ? r->ms : NAN, r->timed ? r->tflops : NAN, r->vs32, r->vs16,
            have_err ? r->stats.max_abs_err : NAN, have_err ? r->stats.mean_abs_err : NAN,
            have_err ? r->stats.p99_abs_err : NAN, (long long)r->stats.failed,
            outcome_name(r->status), e->acc, (long long)(r->timed ? o->iters : 0),
            (long long)(r->timed ? o->warmup : 0), r->timed ? r->clock_before : -1,
            r->timed ? r->clock_after : -1, r->timed ? r->window_clock_mhz : -1,
            r->timed ? r->window_temp_c : -1, r->timed ? r->gbps : NAN, p->rot.sets,
            dtype_name(p->f.dtype), layout_name(p->f.op_a, p->f.op_b), (long long)p->f.batch,
            r->timed ? r->window_mem_clock_mhz : -1, events,
            (long long)(r->slices ? r->slices : o->interleave ? o->interleave : 1), bench_workspace_bytes);
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
/* ", bf16 nn, batch 8" when the run names its forms, else "". */
static void form_note(char *out, size_t len, const options *o, form f) {
    out[0] = '\0';
    if (!o->label_forms) return;
    out[0] = ',';
    out[1] = ' ';
    form_text(out + 2, len - 2, f);
}

/* ", interleaved in 3 slices" with --interleave, else ""; where the cap on
 * a window gave the run more slices than asked, the cap too. */
static void interleave_note(char *out, size_t len, const options *o, const result *res, int n_entries) {
    out[0] = '\0';
    if (!o->interleave) return;
    int64_t slices = o->interleave;
    for (int i = 0; i < n_entries; i++)
        if (res[i].slices) {
            slices = res[i].slices;
            break;
        }
    if (slices == o->interleave) snprintf(out, len, ", interleaved in %lld slices", (long long)slices);
    else
        snprintf(out, len, ", interleaved in %lld slices (windows of at most %g ms; --interleave %lld)",
                 (long long)slices, o->max_window_ms, (long long)o->interleave);
}

static void print_run_table(const entry *entries, int n_entries, const result *res,
                            const problem *p, const options *o, int run, int runs) {
    const int mb = memory_bound((shape){p->m, p->n, p->k});
    char note[TEXT_LEN], fnote[TEXT_LEN], inote[TEXT_LEN];
    rotation_note(note, sizeof note, &p->rot);
    form_note(fnote, sizeof fnote, o, p->f);
    interleave_note(inote, sizeof inote, o, res, n_entries);
    printf("\n== %lld x %lld x %lld%s, run %d of %d%s%s%s ==\n", (long long)p->m, (long long)p->n,
           (long long)p->k, fnote, run, runs, mb ? "; memory-bound" : "", note, inote);
    printf("%-10s %10s %10s %13s %13s %12s %7s %5s", "kernel", "ms", "TFLOP/s", "% cuBLAS 32F",
           "% cuBLAS 16F", "max error", "MHz", "C");
    if (mb) printf(" %9s %7s", "GB/s", "% HBM");
    printf("\n");
    for (int i = 0; i < n_entries; i++) {
        const result *r = &res[i];
        if (r->status == OUTCOME_SKIPPED) continue;
        if (r->status != OUTCOME_OK) {
            print_failure(&entries[i], r);
            continue;
        }
        printf("%-10s %10.4f %10.1f %12.1f%% %12.1f%% %12.3e %7d %5d", entries[i].name, r->ms,
               r->tflops, 100.0 * r->vs32, 100.0 * r->vs16, r->stats.max_abs_err, r->window_clock_mhz,
               r->window_temp_c);
        if (mb) printf(" %9.1f %6.1f%%", r->gbps, 100.0 * r->gbps / hbm_peak.gbps);
        printf("\n");
    }
    fflush(stdout);
}

static void print_accuracy_table(const entry *entries, int n_entries, const result *res,
                                 const problem *p, const options *o) {
    char fnote[TEXT_LEN];
    form_note(fnote, sizeof fnote, o, p->f);
    printf("\n== accuracy at %lld x %lld x %lld%s: |C - fp64 reference|, unit-variance outputs ==\n",
           (long long)p->m, (long long)p->n, (long long)p->k, fnote);
    printf("%-10s %5s %13s %13s %13s %10s %8s\n", "kernel", "acc", "mean abs err", "p99 abs err",
           "max abs err", "atol", "result");
    for (int i = 0; i < n_entries; i++) {
        const result *r = &res[i];
        if (r->status == OUTCOME_SKIPPED) continue;
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
                          const problem *p, const options *o) {
    enum { FIELDS = 6 }; /* ms, TFLOP/s, % cuBLAS 32F, % cuBLAS 16F, GB/s, % HBM */
    const int mb = memory_bound((shape){p->m, p->n, p->k});
    const int fields = mb ? FIELDS : FIELDS - 2;
    char fnote[TEXT_LEN];
    form_note(fnote, sizeof fnote, o, p->f);
    printf("\n== %lld x %lld x %lld%s: median [min..max] over %d runs ==\n", (long long)p->m,
           (long long)p->n, (long long)p->k, fnote, n_runs);
    printf("%-10s %-28s %-28s %-24s %-24s", "kernel", "ms", "TFLOP/s", "% cuBLAS 32F", "% cuBLAS 16F");
    if (mb) printf(" %-28s %-24s", "GB/s", "% HBM");
    printf("\n");
    double *v = (double *)xmalloc((size_t)n_runs * sizeof(double));
    for (int i = 0; i < n_entries; i++) {
        if (runs[0][i].status == OUTCOME_SKIPPED) continue; /* skipped in every run */
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
                                              : 100.0 * r->gbps / hbm_peak.gbps;
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
        printf("%-6s %-5s ablation (%s): %s\n", k->name, k->acc == HGEMM_ACC_F16 ? "fp16" : "fp32",
               k->forms ? "every form" : "f16 nt", k->idea);
    }
    const hgemm_kernel autos[] = {HGEMM_KERNEL_AUTO, HGEMM_KERNEL_AUTO_F16ACC};
    for (size_t i = 0; i < sizeof autos / sizeof autos[0]; i++) {
        const hgemm_kernel_info *k = hgemm__auto_row(autos[i]);
        printf("%-6s %-5s %s (src/auto.c's table)\n", k->name, k->acc == HGEMM_ACC_F16 ? "fp16" : "fp32",
               k->idea);
    }
    printf("(baselines cublas32 and cublas16 always run; cublas16 for f16 only)\n");
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

/* --explain: one line of words for hgemm__explain's answer. */
static void explain_text(char *buf, size_t len, hgemm_status st, const hgemm_explanation *e) {
    if (st != HGEMM_SUCCESS) {
        snprintf(buf, len, "%s%s%s", e->row ? e->row->name : "", e->row ? " does not run it: " : "",
                 hgemm_status_string(st));
        return;
    }
    if (e->row == NULL) {
        snprintf(buf, len, "nothing to multiply");
        return;
    }
    if (e->scale_only) {
        snprintf(buf, len, "C = beta * C only (k = 0)");
        return;
    }
    if (e->has_v9_plan) {
        const hgemm_v9_plan *w = &e->v9;
        const char *short_side = w->swap ? "m" : "n", *long_side = w->swap ? "n" : "m";
        int n = snprintf(buf, len, "%s: C's %s on WGMMA's N in %d-wide tiles, its %s in 64-row tiles: %llu tiles, "
                         "%d stage%s of %d k-tile%s", e->row->name, short_side, w->bn, long_side,
                         (unsigned long long)(w->long_tiles * w->short_tiles), w->stages, w->stages == 1 ? "" : "s",
                         w->kb, w->kb == 1 ? "" : "s");
        if (n > 0 && (size_t)n < len)
            snprintf(buf + n, len - (size_t)n, w->split > 1 ? ", k split over a cluster of %u" : ", k whole",
                     w->split);
        return;
    }
    if (!e->has_v8_plan) {
        snprintf(buf, len, "%s (%s)", e->row->name, e->row->idea);
        return;
    }
    const hgemm_v8_plan *v = &e->v8;
    const char *unit = v->cluster > 1 ? "pairs" : "blocks";
    const uint32_t units = v->sms / (uint32_t)v->cluster;
    int n = snprintf(buf, len, "%s: %s128x%d tiles, %s, %d stages%s%s; %u tiles of %u k-tiles: ", e->row->name,
                     v->swapped ? "swapped (C^T = B A^T: the weight's rows on M, m's on N), " : "",
                     v->bn, v->cluster > 1 ? "in pairs sharing B" : "one block each (no cluster)", v->stages,
                     v->seam ? ", the seam between tiles" : "", v->deal ? ", pairs dealt by GPC" : "", v->tiles,
                     v->k_tiles);
    if (n < 0 || (size_t)n >= len) return;
    buf += n;
    len -= (size_t)n;
    if (v->slices >= 2) {
        const char *who = v->reduce == HGEMM_SK_REDUCE_OWNER    ? "slice 0's worker adds them"
                          : v->reduce == HGEMM_SK_REDUCE_SHARED ? "every slice's worker adds a share"
                                                                : "a second kernel adds them";
        snprintf(buf, len, "split-K, %u slices each, on %u of %u %s (%s)", v->slices, v->clusters, units, unit,
                 who);
    } else if (v->sk_workers) {
        snprintf(buf, len, "%u whole on %u %s, the rest by stream-K over %u of them", v->dp_tiles, v->workers,
                 unit, v->sk_workers);
    } else if (v->tail_slices >= 2) {
        snprintf(buf, len, "%u whole rounds on %u %s, then the last %u tiles in %u slices each (the tail split)",
                 v->dp_tiles / v->workers, v->workers, unit, v->tiles - v->dp_tiles, v->tail_slices);
    } else {
        const uint32_t rounds = (v->tiles + v->workers - 1) / v->workers, last = v->tiles - (rounds - 1) * v->workers;
        int m = snprintf(buf, len, "%u round%s on %u of %u %s", rounds, rounds == 1 ? "" : "s", v->clusters, units,
                         unit);
        if (rounds > 1 && last < v->workers && m > 0 && (size_t)m < len)
            snprintf(buf + m, len - (size_t)m, ", the last on %u", last);
    }
    const size_t used = strlen(buf);
    if (e->library_workspace && (v->slices >= 2 || v->sk_workers || v->tail_slices >= 2) && used < len)
        snprintf(buf + used, len - used, "; in the library's workspace");
}

/* --explain --fp8: hgemm_gemm_fp8's plan at each shape (src/fp8/plan.h; the
 * launch in src/fp8/kernel.cu), for e4m3 operands, a bf16 C and beta 0. */
static void explain_fp8_line(char *buf, size_t len, int64_t m, int64_t n, int64_t k, int sms) {
    const uint64_t m_tiles = (uint64_t)(m + 127) / 128, k_tiles = (uint64_t)(k + 127) / 128;
    const int wide = hgemm__fp8_wide((uint64_t)m, (uint64_t)n, sms);
    const uint64_t bn = wide ? 256 : 128, tiles = m_tiles * (((uint64_t)n + bn - 1) / bn);
    if (m == 0 || n == 0) {
        snprintf(buf, len, "nothing to do");
    } else if (wide) {
        const int pair = hgemm__fp8_pair((uint64_t)m, wide, sms);
        const uint64_t units = pair ? (m_tiles + 1) / 2 * (tiles / m_tiles) : tiles;
        const uint64_t most = pair ? (uint64_t)(sms & ~1) : (uint64_t)sms;
        snprintf(buf, len,
                 "128x256 tiles%s, %llu tiles of %llu k-tiles on up to %llu blocks; a 16-bit C by TMA "
                 "(stores from registers for beta != 0, an fp32 C, a right edge with n %% 8 != 0)",
                 pair ? ", in pairs sharing B by multicast" : "", (unsigned long long)tiles,
                 (unsigned long long)k_tiles,
                 (unsigned long long)(pair ? (2 * units < most ? 2 * units : most) : (tiles < most ? tiles : most)));
    } else {
        const int lg = hgemm__fp8_split_log(tiles, (int64_t)k_tiles, sms);
        if (lg > 0)
            snprintf(buf, len,
                     "128x128 tiles, k split over a cluster of %d: %llu tiles x %d blocks, %llu k-tiles each, "
                     "the partial sums added in distributed shared memory",
                     1 << lg, (unsigned long long)tiles, 1 << lg, (unsigned long long)(k_tiles >> lg));
        else
            snprintf(buf, len, "128x128 tiles, %llu tiles of %llu k-tiles on %llu blocks; stores from registers",
                     (unsigned long long)tiles, (unsigned long long)k_tiles,
                     (unsigned long long)(tiles < (uint64_t)sms ? tiles : (uint64_t)sms));
    }
}

/* --explain: what each selected kernel would run at each shape and form (the
 * library's own decision for the call the bench makes: its leading
 * dimensions, its workspace, beta 0), without a GPU. */
static int print_explanations(const options *o) {
    int count = 0;
    char what[TEXT_LEN];
    const shape *v = selected_shapes(o, &count, what, sizeof what);
    uint32_t sms = (uint32_t)o->sms;
    const char *whose = "--sms";
    char why[WHY_LEN];
    if (sms == 0 && hgemm_check_sm90_available(why, sizeof why)) {
        int dev = 0, n = 0;
        HGEMM_CHECK_CUDA(cudaGetDevice(&dev));
        HGEMM_CHECK_CUDA(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
        sms = (uint32_t)n;
        whose = "this GPU's";
    }
    if (sms == 0) {
        sms = EXPLAIN_DEFAULT_SMS;
        whose = "an H100's or H200's; no sm_90 GPU here";
    }
    if (o->explain_fp8) {
        printf("# hgemm_gemm_fp8's plan (e4m3 x e4m3, a bf16 C, beta 0), on %u SMs (%s)\n", sms, whose);
        char line[TEXT_LEN * 4];
        for (int i = 0; i < count; i++) {
            explain_fp8_line(line, sizeof line, v[i].m, v[i].n, v[i].k, (int)sms);
            printf("%lld %lld %lld: fp8 -> %s\n", (long long)v[i].m, (long long)v[i].n, (long long)v[i].k, line);
        }
        return EXIT_OK;
    }
    printf("# what each kernel runs, as the library decides it for hgemm-bench's calls (a workspace of "
           "%zu bytes%s, beta 0), on %u SMs (%s)\n", bench_workspace_bytes,
           bench_workspace_bytes || o->no_library_ws ? "" : ": V8 borrows the library's", sms, whose);
    /* hgemm__explain reads the workspace pointer for being set, never through it */
    static char workspace_stand_in;
    const hgemm_nt_options ws = {bench_workspace_bytes ? &workspace_stand_in : NULL, bench_workspace_bytes, 0,
                                 NULL, 0};
    int failed = 0;
    char text[TEXT_LEN * 4], form_name[TEXT_LEN];
    for (int i = 0; i < count; i++) {
        for (int fi = 0; fi < o->n_forms; fi++) {
            const form f = o->forms[fi];
            const dims d = form_dims(v[i], f);
            form_text(form_name, sizeof form_name, f);
            for (int ki = 0; ki < o->n_kernels; ki++) {
                const hgemm_kernel_info *info = o->kernels[ki];
                hgemm_explanation e;
                const hgemm_status st = hgemm__explain(info, f.dtype, f.op_a, f.op_b, v[i].m, v[i].n, v[i].k,
                                                       d.lda, d.ldb, f.batch, BENCH_BETA, &ws, sms, &e);
                if (st != HGEMM_SUCCESS && st != HGEMM_ERROR_NOT_SUPPORTED) failed = 1;
                explain_text(text, sizeof text, st, &e);
                printf("%lld %lld %lld", (long long)v[i].m, (long long)v[i].n, (long long)v[i].k);
                if (o->label_forms) printf(" %s", form_name);
                printf(": %s -> %s\n", info->name, text);
            }
        }
    }
    return failed ? EXIT_FAIL : EXIT_OK;
}

/* ---- the shapes ---------------------------------------------------------------------- */

/* The entries of form f that run at all: 1 in run[i], else 0 after a line on
 * stderr (printed with the first shape only: the reason holds for every shape). */
static void form_entries(const entry *entries, int n_entries, form f, int first_shape, int *run) {
    char text[TEXT_LEN];
    form_text(text, sizeof text, f);
    for (int i = 0; i < n_entries; i++) {
        const char *why = form_skip_reason(&entries[i], f);
        run[i] = why == NULL;
        if (why && first_shape) fprintf(stderr, "%s: %s: %s: %s; skipped\n", program, entries[i].name, text, why);
    }
}

/* A result before its entry runs, or SKIPPED if the entry does not serve
 * p's form: serves[i] as form_entries left it, asked of the kernel itself
 * (probe_entry) in the first run. Returns whether the entry runs. */
static int result_start(const entry *e, const problem *p, int run, int *serves, result *r) {
    r->vs32 = r->vs16 = r->gbps = NAN;
    r->clock_before = r->clock_after = -1;
    r->window_clock_mhz = r->window_temp_c = r->window_mem_clock_mhz = -1;
    r->window_events = -1;
    if (run == 0 && *serves) *serves = probe_entry(e, p);
    if (!*serves) r->status = OUTCOME_SKIPPED;
    return *serves;
}

/* A line on stderr before each step of a multi-shape or multi-form run. */
static void progress(const options *o, int si, int n_shapes, const problem *p, const char *fnote,
                     int run, int n_runs, const char *what) {
    if (n_shapes > 1 || o->n_forms > 1)
        fprintf(stderr, "[%d/%d] %lld x %lld x %lld%s, run %d of %d: %s\n", si + 1, n_shapes,
                (long long)p->m, (long long)p->n, (long long)p->k, fnote, run + 1, n_runs, what);
}

/* Every shape, form, run and entry: cooldown, check, timing; tables and CSV
 * rows. An hgemm kernel in a form other than f16 nt batch 1 is first asked
 * whether it serves it (probe_entry, run 1 only, before the cooldown).
 * With --interleave: every probe, one cooldown, every check, then the
 * entries timed together (time_interleaved). Returns 1 if any entry failed. */
static int run_shapes(const options *o, const entry *entries, int n_entries, const shape *shapes,
                      const rotation *plans, int n_shapes, cublasHandle_t handle, const nvml *nv,
                      cudaEvent_t start, cudaEvent_t stop, FILE *csv) {
    const int n_runs = o->accuracy ? 1 : (int)o->repeat;
    int any_failed = 0;
    result **runs = (result **)xmalloc((size_t)n_runs * sizeof(result *));
    for (int run = 0; run < n_runs; run++)
        runs[run] = (result *)xmalloc((size_t)n_entries * sizeof(result));
    int *serves = (int *)xmalloc((size_t)n_entries * sizeof(int));
    /* --interleave: an event before the first window and after every window (and
     * around each entry's warm-up, for the cap on a window: fewer than those) */
    const int n_marks = o->interleave ? (n_entries + 1) * (int)interleave_max_slices(o) + 1 : 0;
    cudaEvent_t *marks = (cudaEvent_t *)xmalloc((size_t)n_marks * sizeof(cudaEvent_t));
    for (int i = 0; i < n_marks; i++) HGEMM_CHECK_CUDA(cudaEventCreate(&marks[i]));

    for (int si = 0; si < n_shapes; si++) {
        char note[TEXT_LEN];
        rotation_note(note, sizeof note, &plans[si]);
        for (int fi = 0; fi < o->n_forms; fi++) {
            problem p;
            char fnote[TEXT_LEN];
            form_note(fnote, sizeof fnote, o, o->forms[fi]);
            if (n_shapes > 1 || o->n_forms > 1 || plans[si].sets > 1)
                fprintf(stderr, "[%d/%d] %lld x %lld x %lld%s: preparing data and the fp64 reference%s\n",
                        si + 1, n_shapes, (long long)shapes[si].m, (long long)shapes[si].n,
                        (long long)shapes[si].k, fnote, note);
            problem_setup(&p, shapes[si], o->forms[fi], plans[si]);
            form_entries(entries, n_entries, p.f, si == 0, serves);
            for (int run = 0; run < n_runs; run++) {
                result *res = runs[run];
                memset(res, 0, (size_t)n_entries * sizeof(result));
                if (o->interleave) {
                    int any = 0;
                    for (int i = 0; i < n_entries; i++)
                        any |= result_start(&entries[i], &p, run, &serves[i], &res[i]);
                    if (any) {
                        progress(o, si, n_shapes, &p, fnote, run, n_runs, "interleaved");
                        sleep_seconds(o->cooldown_s);
                    }
                    for (int i = 0; i < n_entries; i++)
                        if (res[i].status != OUTCOME_SKIPPED) check_entry(&entries[i], &p, handle, &res[i]);
                    /* One NVTX range for the whole period, warm-ups included: its
                     * windows are not one kernel's, so scripts/profile.sh, which
                     * looks for a range named after the kernel, finds none. */
                    nvtxRangePushA("interleaved");
                    time_interleaved(entries, n_entries, &p, handle, o, nv, marks, res);
                    nvtxRangePop();
                    for (int i = 0; i < n_entries; i++)
                        if (res[i].status != OUTCOME_OK && res[i].status != OUTCOME_SKIPPED) any_failed = 1;
                } else {
                    for (int i = 0; i < n_entries; i++) {
                        result *r = &res[i];
                        if (!result_start(&entries[i], &p, run, &serves[i], r)) continue;
                        progress(o, si, n_shapes, &p, fnote, run, n_runs, entries[i].name);
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
                }
                /* Ratios within this run: cuBLAS time over the kernel's time. */
                const result *c32 = &res[0], *c16 = &res[1];
                for (int i = 0; i < n_entries; i++) {
                    if (!res[i].timed) continue;
                    if (c32->timed) res[i].vs32 = c32->ms / res[i].ms;
                    if (c16->timed) res[i].vs16 = c16->ms / res[i].ms;
                }
                if (o->accuracy) print_accuracy_table(entries, n_entries, res, &p, o);
                else print_run_table(entries, n_entries, res, &p, o, run + 1, n_runs);
                if (csv) {
                    for (int i = 0; i < n_entries; i++)
                        if (res[i].status != OUTCOME_SKIPPED)
                            csv_row(csv, &entries[i], &p, run + 1, &res[i], o);
                    fflush(csv);
                }
            }
            if (n_runs > 1) print_summary(entries, n_entries, runs, n_runs, &p, o);
            problem_free(&p);
        }
    }
    for (int i = 0; i < n_marks; i++) HGEMM_CHECK_CUDA(cudaEventDestroy(marks[i]));
    free(marks);
    free(serves);
    for (int run = 0; run < n_runs; run++) free(runs[run]);
    free(runs);
    return any_failed;
}

/* ---- host cost per call ------------------------------------------------------------- */

static const char *const host_cost_columns =
    "kernel,host_us,host_us_min,host_us_max,m,n,k,calls,batches,status,dtype,layout,batch";

/* --host-cost in form f: for each entry, the check once, HOST_COST_WARMUP
 * calls, then HOST_COST_BATCHES batches of HOST_COST_CALLS back-to-back
 * calls, each timed on the host from before its first call to after its last
 * returned, the GPU drained between batches; the median batch's microseconds
 * per call are reported, with the range. Entries that do not serve f are
 * skipped as in run_shapes. Returns 1 if any entry failed. */
static int run_host_cost(const entry *entries, int n_entries, const options *opt, form f,
                         cublasHandle_t h, FILE *csv) {
    const shape s = {HOST_COST_SIZE, HOST_COST_SIZE, HOST_COST_SIZE};
    problem p;
    problem_setup(&p, s, f, rotation_plan(s, &f, 1, 0, 0, 0));
    char fnote[TEXT_LEN];
    form_note(fnote, sizeof fnote, opt, f);
    printf("\n== host time per call, %d x %d x %d%s: median [min..max] of %d batches of %d calls ==\n",
           HOST_COST_SIZE, HOST_COST_SIZE, HOST_COST_SIZE, fnote, HOST_COST_BATCHES, HOST_COST_CALLS);
    printf("%-10s %10s %22s\n", "kernel", "us/call", "[min..max]");
    int any_failed = 0;
    int *serves = (int *)xmalloc((size_t)n_entries * sizeof(int));
    form_entries(entries, n_entries, f, 1, serves);
    const char *form_cols[3];
    char batch_text[TEXT_LEN / 4];
    snprintf(batch_text, sizeof batch_text, "%lld", (long long)f.batch);
    form_cols[0] = dtype_name(f.dtype);
    form_cols[1] = layout_name(f.op_a, f.op_b);
    form_cols[2] = batch_text;
    for (int i = 0; i < n_entries; i++) {
        const entry *e = &entries[i];
        if (!serves[i] || !probe_entry(e, &p)) continue;
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
                fprintf(csv, "%s,nan,nan,nan,%d,%d,%d,%d,%d,%s,%s,%s,%s\n", e->name, HOST_COST_SIZE,
                        HOST_COST_SIZE, HOST_COST_SIZE, HOST_COST_CALLS, HOST_COST_BATCHES,
                        outcome_name(r.status), form_cols[0], form_cols[1], form_cols[2]);
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
            fprintf(csv, "%s,%.4f,%.4f,%.4f,%d,%d,%d,%d,%d,%s,%s,%s,%s\n", e->name, med, lo, hi,
                    HOST_COST_SIZE, HOST_COST_SIZE, HOST_COST_SIZE, HOST_COST_CALLS,
                    HOST_COST_BATCHES, outcome_name(r.status), form_cols[0], form_cols[1],
                    form_cols[2]);
    }
    fflush(stdout);
    if (csv) fflush(csv);
    free(serves);
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
    fprintf(f, "# hgemm_workspace_bytes: %zu (hgemm_nt_ws or hgemm_gemm's options, every hgemm kernel; "
               "--workspace)%s\n", bench_workspace_bytes,
            bench_workspace_bytes ? ""
            : o->no_library_ws    ? "; without one, nothing split (--no-library-workspace)"
                                  : "; V8 borrows the library's (HGEMM_WORKSPACE_BYTES a stream)");
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
    if (!o->host_cost && o->interleave)
        fprintf(f, "# interleave: %lld (per run: one cooldown, every check, every warm-up, then %lld "
                   "slices, each running every entry's share of iters back to back, the slices in "
                   "the rows of a Williams design, %s, events between; ms "
                   "is an entry's windows summed over iters; the sm clocks and window columns are the "
                   "whole period's, the same for every entry; column interleave)\n",
                (long long)o->interleave, (long long)o->interleave,
                o->no_lead_in ? "back to back (--no-lead-in)"
                              : "each opened by an untimed lead-in of its first entry (its share once more)");
    if (!o->host_cost && o->interleave)
        fprintf(f, "# max_window_ms: %g (%s)\n", o->max_window_ms,
                o->max_window_ms > 0.0
                    ? "a run whose windows would last longer, by the slowest entry's warm-up a launch, "
                      "takes more slices, a multiple of the design's rows where interleave is one, up "
                      "to a launch a window; column interleave holds each run's slices"
                    : "no cap: every run takes interleave's slices");
    char dtypes[TEXT_LEN] = "", layouts[TEXT_LEN] = "";
    for (int i = 0; i < o->n_dtypes; i++)
        snprintf(dtypes + strlen(dtypes), sizeof dtypes - strlen(dtypes), "%s%s", i ? "," : "",
                 dtype_names[o->dtypes[i]].name);
    for (int i = 0; i < o->n_layouts; i++)
        snprintf(layouts + strlen(layouts), sizeof layouts - strlen(layouts), "%s%s", i ? "," : "",
                 layout_names[o->layouts[i]].name);
    if (!o->label_forms)
        fprintf(f, "# layout: row-major NT, C = A * B^T, fp16; alpha 1, beta 0; unit-variance outputs\n");
    else
        fprintf(f, "# layout: row-major, C = op_a(A) * op_b(B) (layout nt: A * B^T); alpha 1, beta 0; "
                   "unit-variance outputs\n");
    fprintf(f, "# forms: dtype %s; layout %s; batch %lld (columns dtype, layout, batch; a batch's "
               "entries packed back to back, each its own random matrices; tflops and gbps count "
               "every entry)\n", dtypes, layouts, (long long)o->batch);
    fprintf(f, "# paths: f16 nt batch 1: hgemm_nt_ws's path by table row, cublasGemmEx; other forms: "
               "hgemm_gemm (public kernels, and by row the ablations that serve forms; NOT_SUPPORTED ones skipped), "
               "cublasGemmEx for batch 1 and "
               "cublasGemmStridedBatchedEx otherwise; cublas16 (COMPUTE_16F) for f16 only\n");
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
    else snprintf(out, len, "shapes whose weight streams (m or n <= %d)", ROTATE_MN);
}

/* The shapes, gbps and rotation lines of a timing CSV's header. */
static void write_shape_metadata(FILE *f, const gpu_info *g, const options *o, const char *what,
                                 const shape *shapes, const rotation *plans, int n_shapes) {
    fprintf(f, "# shapes: %s\n", what);
    fprintf(f, "# memory_bound: m or n <= %d\n", MEMORY_BOUND_MN);
    fprintf(f, "# gbps: 2 * batch * (m*k + n*k + m*n) bytes (A and B read, C written; beta 0, C never "
               "read) over ms, in 1e9 bytes/s\n");
    fprintf(f, "# hbm_peak_gbps: %.0f (%s)\n", hbm_peak.gbps, hbm_peak.source);
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
    if (o->explain) return print_explanations(o);

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
    int mem_khz = 0, bus_bits = 0;
    if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, g.device) != cudaSuccess ||
        cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, g.device) != cudaSuccess) {
        (void)cudaGetLastError();
        mem_khz = bus_bits = 0;
    }
    hbm_peak_select(g.name, mem_khz, bus_bits);
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
        plans[si] = rotation_plan(shapes[si], o->forms, o->n_forms, rotation_wanted(o, shapes[si]),
                                  g.free_bytes, rotate_target_bytes(&g));

    char command[COMMAND_LEN];
    hgemm_check_command_line(argc, argv, command, sizeof command);
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
        for (int fi = 0; fi < o->n_forms; fi++)
            any_failed |= run_host_cost(chosen, n_chosen, o, o->forms[fi], handle, csv);
    } else {
        if (!o->accuracy) {
            char inote[TEXT_LEN];
            interleave_note(inote, sizeof inote, o, NULL, 0);
            char cap[TEXT_LEN] = "";
            if (o->interleave && o->max_window_ms > 0.0)
                snprintf(cap, sizeof cap, " (more where a window would last over %g ms)", o->max_window_ms);
            printf("%s: %lld warm-up and %lld timed launches%s%s, %g s cooldown before each %s, %lld run(s)\n",
                   program, (long long)o->warmup, (long long)o->iters, inote, cap, o->cooldown_s,
                   o->interleave ? "run" : "measurement", (long long)o->repeat);
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
