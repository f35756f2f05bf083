/*
 * internal.h: what the library's own files, tools and tests share and users
 * do not see: the problem record, the kernel table, tensor-map helpers and the
 * launchers of each version. C header, usable from CUDA C.
 */
#ifndef HGEMM_INTERNAL_H
#define HGEMM_INTERNAL_H

#include <stdint.h>
#include <cuda.h> /* CUtensorMap and its enums only; libcuda is never linked */
#include "hgemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A fused epilogue as the kernels read it (hgemm_options' bias and
 * activation): each element act(alpha * acc + bias[col]) + beta * C_in.
 * All zero: none. */
typedef struct hgemm_epi {
    const void *bias; /* n values; NULL: none */
    int32_t bias_f32; /* the bias is fp32; 0: C's type */
    int32_t act;      /* hgemm_activation */
    int32_t c_f32;    /* C (and c_in) are fp32 (hgemm_options.c_fp32); 0: A's and B's type */
    int32_t pad;      /* zero */
} hgemm_epi;

static inline int hgemm__epi_on(const hgemm_epi *e) {
    return e->bias != NULL || e->act != HGEMM_ACTIVATION_NONE || e->c_f32;
}

/* One validated request, as the entry points pass it to a launcher. The
 * fields after sm_count are hgemm_gemm's; all zero is one fp16 NT product,
 * which is all that a launcher of a row without `forms` and `batched` ever
 * receives. */
typedef struct hgemm_problem {
    int64_t m, n, k;
    float alpha, beta;
    const void *A; int64_t lda; /* (m, k) row-major; (k, m) when a_mn */
    const void *B; int64_t ldb; /* (n, k) row-major; (k, n) when b_mn */
    void *C;       int64_t ldc; /* (m, n) row-major */
    void *workspace;            /* hgemm_nt_ws's scratch for split tiles; NULL: none */
    size_t workspace_bytes;
    int sm_count;               /* hgemm_nt_ex's sm_count_target: > 0 caps persistent grids */
    hgemm_dtype dtype;          /* of A, B and C */
    int a_mn, b_mn;             /* the operand is stored contiguous along M (resp. N), not K:
                                   op_a == HGEMM_OP_T, op_b == HGEMM_OP_N */
    int64_t batch;              /* entries served by one launch; 0 or 1: one */
    int64_t stride_a, stride_b, stride_c; /* elements between entries (0: A or B shared) */
    const void *C_in; int64_t ldc_in; /* hgemm_nt_options' c_in where it is not C (only V8's
                                         table row receives one); NULL: C */
    hgemm_epi epi;              /* hgemm_options' epilogue (only V8's row and the scale
                                   launch receive one) */
} hgemm_problem;

/* A variant's pdl (hgemm_v8_variant, hgemm_v9_variant): how a V8 or V9 launch lets the stream's next kernel start.
 * START: the launch attribute, and each block triggers its dependents
 * right after its own griddepcontrol.wait; LATE: the attribute, and a
 * block triggers once its loader has issued its last load; EXIT: the
 * attribute, no trigger (the dependents are scheduled as blocks exit);
 * OFF: no attribute (a call starts once the previous kernel has ended). */
enum { HGEMM_PDL_DEFAULT = 0, HGEMM_PDL_START, HGEMM_PDL_LATE, HGEMM_PDL_EXIT, HGEMM_PDL_OFF };
/* DEFAULT is EXIT for V8 and LATE for V9 (run 80). */

/* What a kernel under a resolved mode (not DEFAULT) executes: its `trigger`
 * argument, HGEMM_TRIGGER_START right after its griddepcontrol.wait,
 * HGEMM_TRIGGER_LATE once its loader has issued its last load, or none. */
enum { HGEMM_TRIGGER_START = 0, HGEMM_TRIGGER_LATE = 1, HGEMM_TRIGGER_NONE = 2 };
static inline int hgemm__pdl_trigger(int mode) {
    return mode == HGEMM_PDL_START ? HGEMM_TRIGGER_START
           : mode == HGEMM_PDL_LATE ? HGEMM_TRIGGER_LATE : HGEMM_TRIGGER_NONE;
}


/* What the lab may change in a V8 launch (lab/v8_lab.cu): all zero is the
 * table's V8, which is all the library itself ever runs. */
typedef struct hgemm_v8_variant {
    int pdl;         /* HGEMM_PDL_*: 0 the launcher's choice (EXIT) */
    int raster;      /* raster groups, in cluster tiles: 0 V8_RASTER */
    int all_workers; /* 1: whole tiles on every cluster, never on fewer (hgemm_sk_balance) */
    int no_seam;     /* 1: the wide tile's plain k-loop, without the seam between tiles */
} hgemm_v8_variant;

/* What the lab may change in a V9 launch (lab/v9_lab.c); all zero: the table's V9. */
typedef struct hgemm_v9_variant {
    int kb;        /* k-tiles per stage: 1 or 2; 0: V9's choice (2 for 64-wide short tiles) */
    int no_split;  /* 1: one block per tile, the whole k-loop (v9-nosplit) */
    int no_swap;   /* 1: A always on WGMMA's M side, B on N (v9-noswap) */
    int no_rotate; /* 1: every tile walks its slice from the first step (v9-norot) */
    int no_stage;  /* 1: the swapped tile stored element by element (v9-scalar) */
    int deep;      /* the deep ring (one block per SM, 6 stages of two k-tiles): 0 where
                      V9's tiles are at most one per SM, 1 always (v9-deep), -1 never
                      (v9-shallow: V9 before run 29) */
    int pdl;       /* HGEMM_PDL_*: 0 V9's choice (LATE) */
} hgemm_v9_variant;

typedef enum hgemm_acc { HGEMM_ACC_F32 = 0, HGEMM_ACC_F16 = 1 } hgemm_acc;

typedef hgemm_status (*hgemm_launch_fn)(const hgemm_problem *p, cudaStream_t stream);
/* Whether a kernel can serve a valid problem (m, n, k <= INT32_MAX, k > 0):
 * SUCCESS or NOT_SUPPORTED, decided on the CPU without any CUDA call. */
typedef hgemm_status (*hgemm_supports_fn)(const hgemm_problem *p);

/* A row of the kernel table in src/kernel_table.c. */
typedef struct hgemm_kernel_info {
    hgemm_kernel id;
    const char *name;     /* "v0" ... as hgemm_kernel_name returns it */
    hgemm_acc acc;        /* accumulator type: decides tolerances and AUTO */
    const char *idea;     /* one line: what this version adds */
    hgemm_launch_fn launch;
    hgemm_supports_fn supports; /* NULL: the tensor-map limits of A, B and C */
    int forms;            /* its launcher reads dtype, a_mn and b_mn, and its supports()
                             says which of those forms it serves; 0: fp16 NT only */
    int batched;          /* its launcher serves a whole batch in one launch (batch,
                             strides); 0: a batch runs as one launch per entry */
} hgemm_kernel_info;

int hgemm__kernel_count(void);
const hgemm_kernel_info *hgemm__kernel_at(int i);        /* NULL when out of range */
const hgemm_kernel_info *hgemm__kernel_find(hgemm_kernel id);
const hgemm_kernel_info *hgemm__kernel_by_name(const char *name);
/* AUTO's kernel for a shape (the table in src/auto.c), and for large shapes
 * (both m and n above every bound of that table). Both accumulate in fp32. */
hgemm_kernel hgemm__auto_choice(int64_t m, int64_t n, int64_t k);
/* Whether AUTO (and AUTO_F16ACC) take V8 instead of the table's V9 for a call
 * with workspace_bytes of workspace (src/api.c: few long tiles, split-K). */
int hgemm__auto_prefers_split(int64_t m, int64_t n, int64_t k, size_t workspace_bytes);
/* HGEMM_KERNEL_AUTO_F16ACC's kernel for a shape (fp16 accumulation allowed). */
hgemm_kernel hgemm__auto_f16acc_choice(int64_t m, int64_t n, int64_t k);
hgemm_kernel hgemm__auto_kernel(void);
/* AUTO (HGEMM_KERNEL_AUTO) or AUTO_F16ACC as a row ("auto", "auto-f16acc";
 * launch NULL: hgemm__run and hgemm__run_ws choose by shape); NULL otherwise. */
const hgemm_kernel_info *hgemm__auto_row(hgemm_kernel id);
/* Ablations (lab/lab.c, in a build configured with -DHGEMM_LAB=ON; none
 * otherwise): not in the public enum; run them with hgemm__run. */
int hgemm__experiment_count(void);
const hgemm_kernel_info *hgemm__experiment_at(int i);   /* NULL when out of range */
const hgemm_kernel_info *hgemm__experiment_by_name(const char *name); /* NULL if none */
/* Any row by name in any case, as the tools take it: auto and auto-f16acc
 * (hgemm__auto_row), the table ("V5" is v5), then the ablations. NULL if none. */
const hgemm_kernel_info *hgemm__row_by_any_name(const char *name);
/* hgemm_nt with the kernel given by its row (NULL: AUTO): the same checks and
 * the same path, for rows that have no public id. */
hgemm_status hgemm__run(const hgemm_kernel_info *info, int64_t m, int64_t n, int64_t k,
                        float alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
                        float beta, void *C, int64_t ldc, cudaStream_t stream);
/* hgemm_nt_ws by row. */
hgemm_status hgemm__run_ws(const hgemm_kernel_info *info, int64_t m, int64_t n, int64_t k,
                           float alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
                           float beta, void *C, int64_t ldc, void *workspace,
                           size_t workspace_bytes, cudaStream_t stream);
/* hgemm_gemm by row: any form, for the rows whose `forms` says they read
 * it (an ablation that goes through its version's own launcher); a row
 * without forms answers NOT_SUPPORTED outside fp16 NT, as in hgemm_gemm. */
hgemm_status hgemm__run_gemm(const hgemm_kernel_info *info, hgemm_dtype dtype, hgemm_op op_a, hgemm_op op_b,
                             int64_t m, int64_t n, int64_t k, float alpha, const void *A, int64_t lda,
                             int64_t stride_a, const void *B, int64_t ldb, int64_t stride_b, float beta,
                             void *C, int64_t ldc, int64_t stride_c, int64_t batch,
                             const hgemm_nt_options *options, cudaStream_t stream);
/* Argument checks of hgemm_nt, without touching CUDA. */
hgemm_status hgemm__validate(hgemm_kernel kernel, int64_t m, int64_t n, int64_t k,
                             const void *A, int64_t lda, const void *B, int64_t ldb,
                             const void *C, int64_t ldc);
/* Everything hgemm_nt decides before its first CUDA call: hgemm__validate,
 * then the sizes and the chosen kernel's limits (NOT_SUPPORTED). SUCCESS
 * means hgemm_nt would go on to the device, or has nothing to do. */
hgemm_status hgemm__preflight(hgemm_kernel kernel, int64_t m, int64_t n, int64_t k, float alpha,
                              const void *A, int64_t lda, const void *B, int64_t ldb,
                              const void *C, int64_t ldc);
/* The pointer check after the device query (CUDA calls): the first and
 * the last byte of C, of the C input when beta != 0, and of A and B when
 * they are read (from entry 0 to entry batch-1 when p->batch > 1) must be
 * memory of device `dev` or managed memory. */
hgemm_status hgemm__check_pointers(const hgemm_problem *p, int dev);

/* Make the current device's primary context current on this thread (the
 * runtime binds it lazily: a thread whose first CUDA work is an hgemm call
 * has none, and driver calls fail there); 0 where that failed (src/launch.c). */
int hgemm__bind_context(void);

/* The status for a failed CUDA call (NO_DEVICE or CUDA); clears the error. */
hgemm_status hgemm__status_from_cuda(cudaError_t err);

/* TMA coordinates and the kernels' scalars are 32-bit signed. A size is
 * served up to INT32_MAX less the largest tile side any kernel uses, so that a
 * tile which starts inside the matrix also ends below 2^31: row0 + tile rows,
 * and (kt + 1) * BK for the last k-tile, never overflow int32 in any kernel. */
enum { HGEMM_MAX_TILE_SIDE = 256, HGEMM_MAX_DIM = INT32_MAX - HGEMM_MAX_TILE_SIDE };

/* hgemm_options as the entry points read it (src/api.c): its size and
 * unknown bytes checked, its fields into `nt` and `epi` (NULL: none). */
hgemm_status hgemm__read_options(const hgemm_options *options, hgemm_dtype dtype, hgemm_nt_options *nt,
                                 hgemm_epi *epi);

/* Memory arguments (src/checks.c). Spans are bytes of 2-byte elements (-1:
 * cannot exist in memory); hgemm__scaled widens one to elements `scale`
 * times as wide (1, or 2 for fp32). */
int64_t hgemm__span_bytes(int64_t rows, int64_t cols, int64_t ld);
int64_t hgemm__batch_span(int64_t one, int64_t stride, int64_t batch);
int64_t hgemm__scaled(int64_t bytes, int scale);
int hgemm__overlaps(const void *a, int64_t a_bytes, const void *b, int64_t b_bytes);
int hgemm__shares_element(const void *x, int64_t xr, int64_t xc, int64_t xld, const void *y, int64_t yr,
                          int64_t yc, int64_t yld);
int hgemm__misaligned(const void *p); /* not 16-byte aligned */
/* The current device exists and is compute capability 9.0 (its ordinal in *dev). */
hgemm_status hgemm__check_device(int *dev);
/* The first and last of `bytes` bytes at ptr are memory of device `dev` (or managed). */
hgemm_status hgemm__check_ends(const void *ptr, int64_t bytes, int dev);

/* The library's workspace (src/library_ws.c): whether calls without one
 * borrow it, and the one of `device` and `stream` (allocated and its fill
 * queued on the first call; NULL where disabled, past the stream limit or
 * where the allocation failed, with no CUDA error left set). */
int hgemm__library_workspace_on(void);
void *hgemm__library_workspace(int device, cudaStream_t stream);

/* Tensor maps (src/tensor_map.c). A 2-D fp16 tensor of `rows` x `cols`
 * elements, row-major with `ld` elements between rows, read or written in
 * boxes of box_rows x box_cols. swizzle128 (TMAP_SWIZZLE_NONE or
 * TMAP_SWIZZLE_128B, src/hw.h) selects the 128-byte swizzle, which needs
 * box_cols * 2 <= 128. */
hgemm_status hgemm__tmap_check(const void *ptr, uint64_t rows, uint64_t cols, uint64_t ld,
                               uint32_t box_rows, uint32_t box_cols, int swizzle128);
hgemm_status hgemm__tmap_encode(CUtensorMap *map, const void *ptr, uint64_t rows,
                                uint64_t cols, uint64_t ld, uint32_t box_rows,
                                uint32_t box_cols, int swizzle128);
/* hgemm__tmap_encode for either element type. */
hgemm_status hgemm__tmap_encode_dt(CUtensorMap *map, hgemm_dtype dtype, const void *ptr, uint64_t rows,
                                   uint64_t cols, uint64_t ld, uint32_t box_rows, uint32_t box_cols,
                                   int swizzle128);
/* The same for `count` such matrices of `dtype`, `stride` elements apart, as
 * a 3-D tensor (the entry innermost-last): boxes are 2-D, one entry each.
 * count == 1 ignores stride. */
hgemm_status hgemm__tmap_encode_batch(CUtensorMap *map, hgemm_dtype dtype, const void *ptr,
                                      uint64_t rows, uint64_t cols, uint64_t ld, uint64_t count,
                                      uint64_t stride, uint32_t box_rows, uint32_t box_cols,
                                      int swizzle128);
/* The tensor limits (not the boxes) of the A and B maps of a valid problem,
 * of the C map when c_by_tma, and of the C input's map when C_in is set:
 * SUCCESS or NOT_SUPPORTED, no CUDA call. */
hgemm_status hgemm__tmap_supports(const hgemm_problem *p, int c_by_tma);
/* How many times the driver's encoder has been looked up (a failed lookup is
 * retried by the next encode; a found encoder is kept). */
long hgemm__tmap_lookup_attempts(void);

/* Start `kernel` (a __global__ function) with `smem` bytes of dynamic shared
 * memory and, when cluster > 1, thread-block clusters of `cluster` blocks along
 * x; `args` points at each kernel argument in order. The status is the launch's
 * own (cudaLaunchKernelExC's return value), never a pending error of the
 * caller's (src/launch.c). */
hgemm_status hgemm__launch(const void *kernel, dim3 grid, unsigned block, size_t smem,
                           unsigned cluster, cudaStream_t stream, void **args);
/* The current device's SMs, at most `target` of them where target > 0 (an
 * SM target of the options): a persistent grid's size. */
hgemm_status hgemm__target_sms(int target, int *sms);
/* hgemm__launch for a kernel whose shared-memory limit is already set
 * (hgemm__persistent_grid sets it): the launch alone. */
hgemm_status hgemm__launch_ready(const void *kernel, dim3 grid, unsigned block, size_t smem,
                                 unsigned cluster, cudaStream_t stream, void **args);
/* hgemm__launch_ready with programmatic dependent launch when pdl != 0: the
 * kernel may start before the stream's previous kernel has finished, so it
 * must execute griddepcontrol.wait (griddep_wait, src/ptx/common.cuh) before
 * it reads or writes any global memory. */
hgemm_status hgemm__launch_ready_ex(const void *kernel, dim3 grid, unsigned block, size_t smem,
                                    unsigned cluster, int pdl, cudaStream_t stream, void **args);
/* hgemm__launch with programmatic dependent launch when pdl != 0 (the same
 * contract as hgemm__launch_ready_ex). */
hgemm_status hgemm__launch_ex(const void *kernel, dim3 grid, unsigned block, size_t smem, unsigned cluster,
                              int pdl, cudaStream_t stream, void **args);

/* Let `kernel` launch in clusters of up to 16 blocks (non-portable sizes),
 * through the driver (a caller's pending error stays pending). */
hgemm_status hgemm__allow_large_clusters(const void *kernel);

/* V8's GPC-aware deal (src/deal.h, src/kernels/v8_deal.cu): worker[c] for
 * the `clusters` pairs of a launch of blocks of `threads` threads and `smem`
 * bytes of shared memory on `stream`'s device. The first call queues the
 * device's probes after `stream`'s work and makes `stream` wait for them
 * (never while `stream` is being captured); a later call reads the map once
 * they have landed. Never waits for the GPU. Returns 1 with the deal, or 0
 * with worker[c] = c where no map is known yet. */
int hgemm__v8_deal(cudaStream_t stream, uint32_t clusters, unsigned threads, size_t smem, uint8_t *worker);

/* What the table's V8 would run for a problem (hgemm__v8_explain; the
 * bench's --explain): tile, cluster, ring, seam, deal, and the work plan of
 * src/stream_k.h with the clusters launched. */
typedef struct hgemm_v8_plan {
    int bn, cluster, stages;
    int seam;             /* the seam between tiles runs */
    int deal;             /* the pairs play the GPC-aware deal (src/deal.h) */
    int split;            /* the split mode the plan ran under (HGEMM_SK_*, stream_k.h) */
    uint32_t sms;         /* the SMs planned for */
    uint32_t tiles;       /* cluster tiles, every entry of a batch */
    uint32_t k_tiles;     /* per tile */
    uint32_t clusters;    /* launched */
    uint32_t workers;     /* the plan's: whole tiles go round these */
    uint32_t dp_tiles;    /* tiles dealt whole */
    uint32_t sk_workers;  /* stream-K or split-K workers; 0: none */
    uint32_t slices;      /* split-K slices (>= 2), else 0 */
    uint32_t tail_slices; /* the last round's tiles in this many slices (>= 2), else 0 */
    uint32_t reduce;      /* split-K: who adds the slices (HGEMM_SK_REDUCE_*) */
    int swapped;          /* C^T = B A^T, stored transposed (v8_swap): tiles, bn and k_tiles are its */
} hgemm_v8_plan;
/* sms 0: the current device's (a CUDA call); > 0: that many, no CUDA call. */
hgemm_status hgemm__v8_explain(const hgemm_problem *p, uint32_t sms, hgemm_v8_plan *out);

/* What V9 would run (hgemm__v9_explain): which side of C goes on WGMMA's N,
 * the short side's tile width, the k-tiles a stage holds and the stages,
 * the tiles, and the k-loop's slices (a cluster of that many blocks). */
typedef struct hgemm_v9_plan {
    int swap;             /* 1: B's rows (n) on WGMMA's M, C's m on its N */
    int bn, kb, stages;
    uint64_t long_tiles;  /* 64 rows of the long side each */
    uint64_t short_tiles; /* bn of the short side each */
    uint32_t split;       /* blocks a tile's k-loop is dealt to (a cluster), 1: none */
} hgemm_v9_plan;
hgemm_status hgemm__v9_explain(const hgemm_problem *p, uint32_t sms, hgemm_v9_plan *out);

/* What a call of `row` (NULL or an auto row: AUTO's choice by shape; an
 * ablation's row as hgemm__run_gemm runs it) would run, decided as
 * hgemm_gemm decides it but without its pointer checks: for A and B with
 * leading dimensions lda and ldb, packed entries, C packed with its rows
 * rounded up to 8 elements, alpha 1. The options' pointers are read for
 * being NULL or not, never dereferenced. No CUDA call where sms > 0.
 * out->row is the row that runs (NULL: nothing to multiply), scale_only
 * whether it only scales C (k == 0), and where the row is the table's V8
 * or V9, its plan (hgemm__v8_explain, hgemm__v9_explain). A request the row does not serve returns
 * HGEMM_ERROR_NOT_SUPPORTED with out->row set. */
typedef struct hgemm_explanation {
    const hgemm_kernel_info *row;
    int scale_only;
    int library_workspace; /* V8 would borrow the library's workspace (none was given) */
    int has_v8_plan;
    hgemm_v8_plan v8;
    int has_v9_plan;
    hgemm_v9_plan v9;
} hgemm_explanation;
hgemm_status hgemm__explain(const hgemm_kernel_info *row, hgemm_dtype dtype, hgemm_op op_a, hgemm_op op_b,
                            int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t batch,
                            float beta, const hgemm_nt_options *options, uint32_t sms,
                            hgemm_explanation *out);

/* Blocks for a persistent kernel: as many as the device holds at once (whole
 * clusters of `cluster` blocks, as the occupancy calculator counts them for
 * `block` threads and `smem` bytes), but no more clusters than `units` of work.
 * Also sets the kernel's dynamic shared-memory limit to `smem`, so the launch
 * that follows is hgemm__launch_ready. */
hgemm_status hgemm__persistent_grid(const void *kernel, unsigned block, size_t smem,
                                    unsigned cluster, uint64_t units, unsigned *grid);

/* What each version can serve (hgemm_supports_fn), beside its launcher. */
hgemm_status hgemm__supports_v0(const hgemm_problem *p);
hgemm_status hgemm__supports_v1(const hgemm_problem *p);
hgemm_status hgemm__supports_v2(const hgemm_problem *p);
hgemm_status hgemm__supports_v3(const hgemm_problem *p);
hgemm_status hgemm__supports_v4(const hgemm_problem *p);
hgemm_status hgemm__supports_v5(const hgemm_problem *p);
hgemm_status hgemm__supports_v6(const hgemm_problem *p);
hgemm_status hgemm__supports_v7(const hgemm_problem *p);
hgemm_status hgemm__supports_v8(const hgemm_problem *p);
hgemm_status hgemm__supports_v9(const hgemm_problem *p);

/* The launchers, one per file in src/kernels/. */
hgemm_status hgemm__launch_scale(const hgemm_problem *p, cudaStream_t stream);
const void *hgemm__scale_kernel(void); /* its __global__ function: for tests */
hgemm_status hgemm__launch_v0(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v1(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v2(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v3(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v4(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v5(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v6(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v7(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v9(const hgemm_problem *p, cudaStream_t stream);
/* A validated grouped call (hgemm_grouped; src/grouped/): every field as
 * the caller gave it, alpha == 0 or k == 0 with k_zero set (A and B never
 * read). */
typedef struct hgemm_grouped_problem {
    hgemm_dtype dtype;
    int b_mn;                /* op_b == HGEMM_OP_N: B_g stored k x n */
    int64_t total_rows, n, k, groups;
    const int32_t *offs;
    float alpha, beta;
    const void *A; int64_t lda;
    const void *B; int64_t ldb, stride_b;
    void *C;       int64_t ldc;
    int sm_count;            /* > 0: at most this many SMs' blocks */
    int k_zero;
} hgemm_grouped_problem;
hgemm_status hgemm__launch_grouped(const hgemm_grouped_problem *p, cudaStream_t stream);

/* A validated call grouped along k (hgemm_grouped_k; src/grouped/kgrouped.cu):
 * every field as the caller gave it, alpha == 0 or total_k == 0 with k_zero
 * set (A and B never read). */
typedef struct hgemm_grouped_k_problem {
    hgemm_dtype dtype;
    int c_f32;               /* C of fp32 elements */
    int64_t m, n, total_k, groups;
    const int32_t *offs;
    float alpha, beta;
    const void *A; int64_t lda;
    const void *B; int64_t ldb;
    void *C;       int64_t ldc, stride_c;
    int sm_count;            /* > 0: at most this many SMs' blocks */
    int k_zero;
} hgemm_grouped_k_problem;
hgemm_status hgemm__launch_grouped_k(const hgemm_grouped_k_problem *p, cudaStream_t stream);

/* A validated FP8 call (hgemm_gemm_fp8; src/fp8/): every field as the
 * caller gave it, alpha == 0 or k == 0 with k_zero set (A, B and the
 * scales never read). */
typedef struct hgemm_fp8_problem {
    hgemm_dtype a_dtype, b_dtype, c_dtype;
    hgemm_scale_mode mode;
    int64_t m, n, k;
    float alpha, beta;
    const void *A; int64_t lda;   /* bytes */
    const void *B; int64_t ldb;
    const float *scale_a, *scale_b;
    void *C;       int64_t ldc;   /* elements of c_dtype */
    int sm_count;                 /* > 0: at most this many SMs' blocks */
    int k_zero;
} hgemm_fp8_problem;
hgemm_status hgemm__launch_fp8(const hgemm_fp8_problem *p, cudaStream_t stream);

/* A validated grouped FP8 call (hgemm_grouped_fp8; src/fp8/grouped.cu):
 * e4m3 x e4m3, every other field as the caller gave it, alpha == 0 or k == 0
 * with k_zero set (A, B and the scales never read). */
typedef struct hgemm_grouped_fp8_problem {
    hgemm_dtype c_dtype;
    hgemm_scale_mode mode;
    int64_t total_rows, n, k, groups;
    const int32_t *offs;
    float alpha, beta;
    const void *A; int64_t lda;   /* bytes */
    const void *B; int64_t ldb, stride_b;
    const float *scale_a, *scale_b;
    void *C;       int64_t ldc;   /* elements of c_dtype */
    int sm_count;                 /* > 0: at most this many SMs' blocks */
    int k_zero;
} hgemm_grouped_fp8_problem;
hgemm_status hgemm__launch_grouped_fp8(const hgemm_grouped_fp8_problem *p, cudaStream_t stream);

/* The table's V8 and V9 under a variant (the lab's ablations; src/v8/v8.c,
 * src/kernels/v9_skinny.cu). */
hgemm_status hgemm__v8_run(const hgemm_problem *p, const hgemm_v8_variant *v, cudaStream_t stream);
hgemm_status hgemm__v9_run(const hgemm_problem *p, const hgemm_v9_variant *v, cudaStream_t stream);

/* V8's phase clocks, in a build configured with -DHGEMM_PHASE_TIMER=ON only
 * (tools/phase_timer.c; src/v8/all.cu): for each of up to
 * V8_PHASE_SLOTS consumer warpgroups (slot = block * 2 + warpgroup), the
 * global timer (ns) and the SM's cycle counter at each phase of its first
 * unit of work, zero where it never got there. */
enum v8_phase {
    V8_PHASE_START,      /* the consumer starts */
    V8_PHASE_FIRST_DATA, /* its first k-tile has landed */
    V8_PHASE_KLOOP,      /* its k-loop's last WGMMA is done */
    V8_PHASE_ALL_IN,     /* split-K in-kernel reduction: every slice's partial sum is in */
    V8_PHASE_REDUCED,    /* ... and its share of the tile is reduced and stored */
    V8_PHASE_END,        /* its last stores have read their staging */
    V8_PHASES
};
enum { V8_PHASE_SLOTS = 1024 };
/* ... and for each slot, the same two clocks as each of its first
 * V8_UNIT_MARKS units of work begins (before its first k-tile's wait), zero
 * for units it did not run: consecutive marks time a unit with its share
 * of the tile change, at every tile width (the phases above mark only the
 * walk's start and end in the tiles wider than 128). */
enum { V8_UNIT_MARKS = 32 };
#ifdef HGEMM_PHASE_TIMER
int hgemm__v8_phase_clear(void);
int hgemm__v8_phase_read(unsigned long long *out, size_t n);
int hgemm__v8_unit_read(unsigned long long *out, size_t n); /* at most V8_PHASE_SLOTS * V8_UNIT_MARKS * 2 */
#endif

#ifdef __cplusplus
}
#endif

#endif /* HGEMM_INTERNAL_H */
