/*
 * hgemm: fp16 and bf16 matrix multiply for NVIDIA Hopper (sm_90a).
 *
 *     C[m,n] = alpha * sum_k A[m,k] * B[n,k] + beta * C[m,n]
 *
 * hgemm_nt's layout ("NT"): A (m x k), B (n x k) and C (m x n) are row-major
 * IEEE fp16 matrices, so both operands are contiguous along k (the layout of
 * `x @ W.T` in PyTorch). Leading dimensions are in elements. hgemm_gemm
 * (below) adds bf16, each operand as stored or transposed, and batches; the
 * rules that follow hold for both.
 *
 * Rules:
 *   - any m, n, k >= 0; m == 0 or n == 0 does nothing; k == 0 gives C = beta*C
 *     (beta * c_in with a separate C input, hgemm_nt_ex);
 *   - no element of C outside the m x n region is ever written;
 *   - beta == 0 never reads C; alpha == 0 (or k == 0) never reads A or B;
 *   - alpha and beta are applied in fp32: each element of C becomes
 *     alpha * acc + beta * C (acc the sum over k, beta * C left out when
 *     beta == 0), computed in fp32 and rounded once to fp16 (to nearest,
 *     overflowing to +-Inf). NaN and Inf follow IEEE arithmetic from there:
 *     alpha NaN gives NaN everywhere (k > 0); alpha +-Inf gives +-Inf where acc
 *     has the same or opposite sign and NaN where acc == 0; beta NaN or Inf
 *     reaches every element through beta * C. When alpha == 0 or k == 0 the
 *     call is C = beta * C (beta * c_in with a separate C input) and A, B
 *     (and NaN or Inf in them) are not read;
 *   - pointers must be 16-byte aligned and leading dimensions multiples of 8;
 *   - A, B and C are memory of the current device (cudaMalloc, a stream-ordered
 *     pool, or cudaMallocManaged); host memory, pinned or not, and another
 *     device's memory are refused with HGEMM_ERROR_INVALID_VALUE. What is
 *     asked of the runtime (cudaPointerGetAttributes, after every other
 *     check): the first and the last byte of each matrix the call reads or
 *     writes (C; A and B unless alpha == 0 or k == 0; c_in unless beta == 0),
 *     from its first element to its last at its leading dimension, and of the
 *     workspace's workspace_bytes. The bytes between are not asked about: a
 *     matrix that starts and ends in device memory with unmapped memory
 *     between (two allocations with a gap) is not refused, and its kernel
 *     faults there;
 *   - C may not share an element with A or B. This is decided exactly when C
 *     and the operand have the same leading dimension (or either is a single
 *     row), so interleaved views are accepted (A = X[:, :64], C = X[:, 64:128]
 *     with ld 128). With different leading dimensions C is refused as soon as
 *     the address ranges the two span (first to last element) meet;
 *   - every argument is checked before any CUDA call; the library never exits.
 *     Requests a kernel cannot serve (m, n or k above 2^31 - 257, a leading
 *     dimension of 2^39 elements or more, more tile rows than a kernel's grid
 *     holds) return HGEMM_ERROR_NOT_SUPPORTED, without a device too;
 *   - the status comes from the CUDA calls' own return values: a successful
 *     call neither reports nor clears an error the caller left pending (a
 *     failed one reports its own error and clears it);
 *   - the call is asynchronous on `stream`, like cuBLAS, and thread-safe;
 *     it allocates nothing per call, never synchronizes, and may be captured
 *     in a CUDA graph, the process's first call included;
 *   - the one state the library keeps, once per device: the first call there
 *     that runs V8 with its GPC-aware deal (AUTO at most large products;
 *     `hgemm-bench --explain` prints "pairs dealt by GPC" for them) creates
 *     a stream, two events and 8 KB of pinned host memory, kept until the
 *     process ends, and queues on that stream, after the work already on the
 *     caller's stream, four short probe launches (their blocks stay about
 *     100 us) and a one-thread marker, to learn on which SMs V8's pairs of
 *     blocks land; the caller's stream waits for them (an event). Until the
 *     host sees their result, and for good if they fail, V8 deals its tiles
 *     in the hardware's order; C is the same, bit for bit, either way.
 *     Nothing is queued while the caller's stream is being captured;
 *   - V8 and V9 (and so AUTO) launch with programmatic dependent launch: a
 *     call's blocks may be scheduled before the stream's previous kernel has
 *     ended, but read and write memory only once that kernel has completed
 *     and its writes are visible, so the stream's order holds as for any
 *     launch. V9 lets a kernel launched after it with that attribute start
 *     once its blocks have issued their last loads (such a kernel must wait,
 *     cudaGridDependencySynchronize, before it reads C); V8 lets it start
 *     as its blocks exit.
 */
#ifndef HGEMM_H
#define HGEMM_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hgemm_status {
    HGEMM_SUCCESS = 0,
    HGEMM_ERROR_INVALID_VALUE,  /* negative size, NULL with nonzero size,
                                   ld too small, unknown kernel, C overlaps A/B */
    HGEMM_ERROR_MISALIGNED,     /* pointer not 16-byte aligned, ld % 8 != 0 */
    HGEMM_ERROR_NOT_SUPPORTED,  /* valid request this kernel cannot serve */
    HGEMM_ERROR_NO_DEVICE,      /* no CUDA device or driver */
    HGEMM_ERROR_ARCH_MISMATCH,  /* current device is not compute capability 9.0 */
    HGEMM_ERROR_CUDA            /* a CUDA call failed */
} hgemm_status;

typedef enum hgemm_kernel {
    HGEMM_KERNEL_AUTO = 0,      /* by shape, the fastest kernel that accumulates in fp32 */
    HGEMM_KERNEL_V0, HGEMM_KERNEL_V1, HGEMM_KERNEL_V2, HGEMM_KERNEL_V3,
    HGEMM_KERNEL_V4, HGEMM_KERNEL_V5, HGEMM_KERNEL_V6,
    HGEMM_KERNEL_V7, HGEMM_KERNEL_V8,
    HGEMM_KERNEL_V9,            /* m or n <= 64 (decode): operand swap, split-K in a cluster */
    HGEMM_KERNEL_AUTO_F16ACC    /* by shape, the fastest kernel where fp16 accumulation is
                                   acceptable (cuBLAS COMPUTE_16F's counterpart): it may pick
                                   V6 or V7, whose error is about 20x fp32 accumulation's */
    /* later versions append here; never renumber */
} hgemm_kernel;

/* C = alpha * A * B^T + beta * C on `stream` with the chosen kernel. */
hgemm_status hgemm_nt(hgemm_kernel kernel, int64_t m, int64_t n, int64_t k,
                      float alpha, const void *A, int64_t lda,
                      const void *B, int64_t ldb,
                      float beta, void *C, int64_t ldc,
                      cudaStream_t stream);

/* Bytes of workspace with which hgemm_nt_ws can split the work of any
 * problem over every SM of an H100 or H200 (V8 needs 128 KB per SM). */
#define HGEMM_WORKSPACE_BYTES ((size_t)32 << 20)

/* hgemm_nt with a workspace (the style of cuBLASLt): V8 and AUTO use it to
 * share the k-loop of the last tiles among all SMs (stream-K) where whole
 * tiles would leave SMs idle: the last partial round of a large product, or a
 * few tiles with a long k. With HGEMM_WORKSPACE_BYTES or more (or none:
 * the library's, below), AUTO also takes V8 where its table says V9 for a
 * few long tiles (both sides over 64, m * n <= 2^16, k >= 32768): there
 * V8's split-K is the faster (src/auto.c). The result is deterministic: the
 * same inputs and workspace size give bitwise the same C on every run (on
 * the same GPU model; a call that splits nothing may differ in the last
 * bits, since the sums are grouped differently).
 * The workspace is memory of the current device, 16-byte aligned, sharing no
 * byte with A, B or C; it must be zero-filled once before its first use
 * (cudaMemset), and every completed call leaves it ready for the next.
 * Calls that may run at the same time (different streams) need separate
 * workspaces. workspace_bytes == 0 (workspace ignored) is hgemm_nt, which
 * borrows the library's; with less than a problem needs, the call runs
 * without splitting. */
hgemm_status hgemm_nt_ws(hgemm_kernel kernel, int64_t m, int64_t n, int64_t k,
                         float alpha, const void *A, int64_t lda,
                         const void *B, int64_t ldb,
                         float beta, void *C, int64_t ldc,
                         void *workspace, size_t workspace_bytes,
                         cudaStream_t stream);

/* The library's workspace. A call that brings no workspace (hgemm_nt,
 * workspace_bytes == 0) and runs V8 (AUTO's large and long-k products, or
 * V8 named) borrows one the library owns: HGEMM_WORKSPACE_BYTES of device
 * memory per device and stream, allocated by the first such call on that
 * stream (its zero fill queued on the stream) and kept until
 * hgemm_free_library_workspaces. So such a call splits as it would with
 * hgemm_nt_ws's workspace of that size and gives the same C, bitwise.
 * Calls on different streams never share one. A call captured into a graph
 * borrows none (it runs as without a workspace, which may differ from a
 * split call in the last bits): pass a workspace of your own to split
 * inside a graph. At most HGEMM_LIBRARY_WORKSPACE_STREAMS streams get one
 * in a process; past that, or where the allocation fails, the call runs as
 * without a workspace (no error), and a call the plan with it cannot serve
 * is planned as given: borrowing never refuses a call. Memory: 32 MiB per
 * stream that ran V8. */
#define HGEMM_LIBRARY_WORKSPACE_STREAMS 32

/* 0: calls without a workspace run without splitting, as before the
 * library had one (workspaces it holds stay until freed); nonzero (the
 * default): they borrow the library's. Process-wide; takes effect for the
 * calls made after it returns. */
hgemm_status hgemm_set_library_workspace(int enabled);

/* Frees every library workspace (device memory on each device that has one).
 * Only once every call that may use one has completed (cudaDeviceSynchronize
 * on each device); later calls allocate again. HGEMM_ERROR_CUDA where a free
 * failed (that workspace stays held). */
hgemm_status hgemm_free_library_workspaces(void);

/* Options of hgemm_nt_ex. Zero-initialise it: all zeros is hgemm_nt. */
typedef struct hgemm_nt_options {
    void *workspace;          /* as hgemm_nt_ws's (NULL with 0 bytes: none) */
    size_t workspace_bytes;
    int sm_count_target;      /* > 0: the persistent kernels (V7, V8) run at most this many
                                 SMs' worth of blocks, leaving the others free for kernels
                                 that run at the same time, such as NCCL's (the counterpart
                                 of cublasSetSmCountTarget); V8, where its blocks go in
                                 pairs, runs whole pairs: an odd target is rounded down,
                                 and 1 runs one pair. Kernels with a block per tile take
                                 SMs as they free up and ignore it. 0: every SM */
    const void *c_in;         /* non-NULL: the C that beta multiplies, read from here
                                 instead of from C (cuBLASLt's C beside its output D):
                                 C = alpha * A * B^T + beta * c_in, and c_in is never
                                 written. NULL, or c_in == C with ldc_in == ldc: C itself */
    int64_t ldc_in;           /* c_in's leading dimension (elements) */
} hgemm_nt_options;

/* hgemm_nt with options (NULL: none): the same checks, the same result
 * (bitwise, for the same kernel, workspace use and SM count). A negative
 * sm_count_target is HGEMM_ERROR_INVALID_VALUE; the workspace follows
 * hgemm_nt_ws's rules.
 *
 * A separate c_in (not C itself) follows C's rules for its m x n entries at
 * ldc_in (ldc_in >= n and a multiple of 8, 16-byte aligned, device memory;
 * in a batch its entries lie stride_c apart, as C's) and shares no byte
 * with C (HGEMM_ERROR_INVALID_VALUE; it may overlap A or B, which are only
 * read). It is served by V8 alone, where n is a multiple of 8: AUTO and
 * AUTO_F16ACC then take V8 whatever the shape, and every other kernel, or
 * n not a multiple of 8, returns HGEMM_ERROR_NOT_SUPPORTED before any CUDA
 * call (k == 0 and alpha == 0 included). ldc_in of 2^39 elements or more
 * is HGEMM_ERROR_NOT_SUPPORTED as ldc is, before any CUDA call, wherever
 * V8 would multiply. With alpha == 0 or k == 0 the call is C = beta * c_in.
 * With beta == 0 c_in is never read (its contents may be anything).
 * V8 does not split k with a separate c_in (the workspace is then unused). */
hgemm_status hgemm_nt_ex(hgemm_kernel kernel, int64_t m, int64_t n, int64_t k, float alpha,
                         const void *A, int64_t lda, const void *B, int64_t ldb, float beta,
                         void *C, int64_t ldc, const hgemm_nt_options *options,
                         cudaStream_t stream);

/* Element types and operand forms of hgemm_gemm. Values are ABI: never renumbered. */
typedef enum hgemm_dtype {
    HGEMM_DTYPE_F16 = 0,        /* IEEE binary16 */
    HGEMM_DTYPE_BF16 = 1,       /* bfloat16 (accumulates in fp32 only) */
    HGEMM_DTYPE_F32 = 2,        /* IEEE binary32: a bias's type (hgemm_options), an fp32 C (c_fp32,
                                   hgemm_gemm_fp8), never A's or B's */
    HGEMM_DTYPE_E4M3 = 3,       /* fp8 e4m3 (torch.float8_e4m3fn): hgemm_gemm_fp8's A and B only */
    HGEMM_DTYPE_E5M2 = 4        /* fp8 e5m2 (torch.float8_e5m2): hgemm_gemm_fp8's A or B only */
} hgemm_dtype;

typedef enum hgemm_op {
    HGEMM_OP_N = 0,             /* the operand as stored */
    HGEMM_OP_T = 1              /* the operand transposed */
} hgemm_op;

/* The general entry point, row-major, in the style of
 * cublasGemmStridedBatchedEx: for b = 0 .. batch-1,
 *
 *     C_b = alpha * op_a(A_b) * op_b(B_b) + beta * C_b
 *
 * with op(X) = X (HGEMM_OP_N) or X^T (HGEMM_OP_T); op_a(A_b) is m x k and
 * op_b(B_b) is k x n, so A_b is stored m x k (N) or k x m (T), B_b k x n (N)
 * or n x k (T), and C_b m x n, all row-major with leading dimensions lda,
 * ldb, ldc. X_b starts stride_x elements after X_{b-1}. hgemm_nt is
 * (HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, batch 1).
 *
 * Every argument is checked before any CUDA call, with hgemm_nt's rules for
 * each matrix (sizes, NULL, leading dimensions, alignment; device memory
 * after the device query, below) and:
 *   - dtype and the two ops must be known values, batch >= 0 (0 does
 *     nothing), strides >= 0 and multiples of 8 (MISALIGNED otherwise);
 *   - A's and B's entries may overlap one another (stride 0 repeats one
 *     matrix); C's entries may not (stride_c times 2 bytes at least the
 *     span of one C: INVALID_VALUE), and C may not share a byte with any
 *     entry of A or B (decided exactly for batch 1 as hgemm_nt does, by
 *     the address ranges of all entries otherwise);
 *   - options as hgemm_nt_ex's (NULL: none);
 *   - device memory (hgemm_nt's rule), for every entry before the first
 *     launch: where one launch serves the batch (V8, and C = beta * C when
 *     alpha == 0 or k == 0), each matrix's first byte of entry 0 and last
 *     byte of entry batch-1 (the entries between are not asked about);
 *     where the kernel launches entry by entry, the first and the last byte
 *     of every entry's matrices. A status other than HGEMM_SUCCESS thus
 *     means nothing was queued, with one exception: a launch of entry b > 0
 *     of an entry-by-entry batch that fails in CUDA itself
 *     (HGEMM_ERROR_CUDA or HGEMM_ERROR_NO_DEVICE) leaves entries 0 .. b-1
 *     queued on `stream`.
 * What each kernel serves:
 *   - V8 serves every form: fp16 and bf16, NN, NT, TN and TT, a whole batch
 *     in one launch. A transposed operand is read as it lies (TMA and
 *     WGMMA's transpose bits), never copied;
 *   - V9 serves fp16 and bf16 where the operand on C's short side (A when
 *     m <= n, else B) is stored contiguous along k: NT, and NN with m <= n
 *     or TT with m > n; a batch as one launch per entry;
 *   - V0..V7 serve fp16 NT, a batch as one launch per entry, on `stream`,
 *     in order;
 *   - a kernel asked for a form it does not serve returns
 *     HGEMM_ERROR_NOT_SUPPORTED, after all the checks above and before any
 *     CUDA call;
 *   - AUTO and AUTO_F16ACC choose by shape as for hgemm_nt where the form is
 *     fp16 NT, and take V8 where their choice does not serve the form, and
 *     for every batch (batch > 1) that V8 can take in one launch: one launch
 *     for all its entries.
 * bf16 accumulates in fp32 (AUTO_F16ACC too: it never picks V6 or V7 for
 * bf16). */
hgemm_status hgemm_gemm(hgemm_kernel kernel, hgemm_dtype dtype, hgemm_op op_a, hgemm_op op_b,
                        int64_t m, int64_t n, int64_t k, float alpha,
                        const void *A, int64_t lda, int64_t stride_a,
                        const void *B, int64_t ldb, int64_t stride_b,
                        float beta, void *C, int64_t ldc, int64_t stride_c,
                        int64_t batch, const hgemm_nt_options *options, cudaStream_t stream);

/* The activation of a fused epilogue (hgemm_options). Values are ABI. */
typedef enum hgemm_activation {
    HGEMM_ACTIVATION_NONE = 0,
    HGEMM_ACTIVATION_RELU = 1,      /* max(x, 0); NaN stays NaN */
    HGEMM_ACTIVATION_GELU_TANH = 2, /* x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3): torch's
                                       gelu(approximate="tanh"), cuBLASLt's GELU */
    HGEMM_ACTIVATION_GELU_ERF = 3,  /* x * Phi(x) = x/2 * erfc(-x / sqrt(2)): torch's gelu() */
    HGEMM_ACTIVATION_SILU = 4       /* x * sigmoid(x): torch's silu() */
} hgemm_activation;

/* Options of hgemm_gemm_ex, extensible: set `size` to sizeof(hgemm_options)
 * and every other field to zero, then what you need. A later version may
 * append fields; the library reads only the `size` bytes the caller has,
 * and refuses (NOT_SUPPORTED) bytes past its own struct that are not zero.
 * All zeros but `size` is hgemm_gemm with no options. */
typedef struct hgemm_options {
    size_t size;              /* sizeof(hgemm_options) where the caller was compiled */
    void *workspace;          /* the first five fields: as hgemm_nt_options' */
    size_t workspace_bytes;
    int sm_count_target;
    const void *c_in;
    int64_t ldc_in;
    /* The fused epilogue: each element of C becomes, in fp32, rounded once,
     *     act(alpha * acc + bias[col]) + beta * C_in
     * (the bias before the activation, as cuBLASLt's BIAS/RELU_BIAS/GELU_BIAS,
     * the residual beta * C_in after it). With no bias and no activation it
     * is hgemm_gemm's result, bit for bit. */
    const void *bias;         /* n values, one per column of C, the same for every entry
                                 of a batch; NULL: none. Device memory, 16-byte aligned,
                                 sharing no byte with C or the workspace */
    hgemm_dtype bias_dtype;   /* C's dtype or HGEMM_DTYPE_F32 (read only with a bias) */
    hgemm_activation activation;
    int c_fp32;               /* nonzero: C (and beta's C) hold fp32 elements, ldc and
                                 stride_c counted in them, for fp16 or bf16 A and B: a
                                 weight gradient accumulated in place (beta = 1) */
} hgemm_options;

/* hgemm_gemm with hgemm_options (NULL: none). A size below the first
 * version's (up to and including `c_fp32`), an unknown activation or a
 * bias_dtype that is neither C's nor fp32 is HGEMM_ERROR_INVALID_VALUE; a
 * misaligned bias HGEMM_ERROR_MISALIGNED. A bias or an activation is served
 * by V8 in the NT form (op_a N, op_b T: nn.Linear's product), fp16 or bf16,
 * batched or not; AUTO and AUTO_F16ACC then take V8 whatever the shape.
 * Every other kernel and form returns HGEMM_ERROR_NOT_SUPPORTED before any
 * CUDA call. V8 then splits no k-loop (the workspace is unused). With
 * alpha == 0 or k == 0 the call is C = act(bias) + beta * C_in.
 * An fp32 C (c_fp32) is served by V8 in the TN form (op_a T, op_b N: dW =
 * dY^T X), without a bias, an activation or a separate c_in, and by the
 * k == 0 / alpha == 0 path in every form; C's rules hold at 4 bytes an
 * element (ldc and stride_c multiples of 8, C 16-byte aligned, no byte
 * shared with A, B or the workspace, decided by address ranges). Other
 * kernels and combinations: HGEMM_ERROR_NOT_SUPPORTED before any CUDA call. */
hgemm_status hgemm_gemm_ex(hgemm_kernel kernel, hgemm_dtype dtype, hgemm_op op_a, hgemm_op op_b,
                           int64_t m, int64_t n, int64_t k, float alpha,
                           const void *A, int64_t lda, int64_t stride_a,
                           const void *B, int64_t ldb, int64_t stride_b,
                           float beta, void *C, int64_t ldc, int64_t stride_c,
                           int64_t batch, const hgemm_options *options, cudaStream_t stream);

/* Grouped products (mixture-of-experts), torch.nn.functional.grouped_mm's
 * 2D x 3D form. Group g of `groups` holds A's rows [start_g, end_g), where
 * end_g = offs[g] and start_g = offs[g-1] (0 for g = 0): `offs` is an int32
 * array of cumulative ends in device memory, read by the kernel alone (no
 * host synchronization; the sizes may change between replays of a graph).
 * For every row r of every group:
 *     C[r, :] = alpha * A[r, :] * op_b(B_g) + beta * C[r, :]
 * A is total_rows x k, row-major (lda); B_g is B's entry g, stride_b
 * elements after entry g-1 (0: every group the same B), stored n x k with
 * op_b = HGEMM_OP_T (ldb >= k: an expert's weight as nn.Linear stores it) or
 * k x n with HGEMM_OP_N (ldb >= n); C is total_rows x n (ldc). fp32
 * accumulation, alpha and beta in fp32 rounded once; beta == 0 never reads C.
 * Rows in no group (past the last end) are never written.
 *
 * Checked before any CUDA call, as hgemm_gemm's arguments: sizes and
 * leading dimensions (multiples of 8), 16-byte aligned A, B and C, offs
 * 4-byte aligned and not NULL when groups > 0, C sharing no element with A
 * and no byte with B or offs. groups above HGEMM_GROUPED_MAX_GROUPS, or a
 * size above what hgemm_gemm serves, is HGEMM_ERROR_NOT_SUPPORTED. What only
 * the device sees is clamped, never a fault: start_g to [0, total_rows],
 * end_g to [start_g, total_rows] (a decreasing or too large end gives an
 * empty or a shorter group). kernel: HGEMM_KERNEL_AUTO (others:
 * NOT_SUPPORTED). options: NULL, or hgemm_options with an SM target (the
 * grid's SMs); its workspace is unused, and a bias, an activation, a c_in
 * or an fp32 C is NOT_SUPPORTED. Asynchronous on `stream`, capturable. */
#define HGEMM_GROUPED_MAX_GROUPS 1024
hgemm_status hgemm_grouped(hgemm_kernel kernel, hgemm_dtype dtype, hgemm_op op_b, int64_t total_rows, int64_t n,
                           int64_t k, int64_t groups, const int32_t *offs, float alpha, const void *A, int64_t lda,
                           const void *B, int64_t ldb, int64_t stride_b, float beta, void *C, int64_t ldc,
                           const hgemm_options *options, cudaStream_t stream);

/* Products grouped along k (the weight gradients of a mixture's experts,
 * torch.nn.functional.grouped_mm's 2D x 2D form): group g holds the rows
 * [start_g, end_g) of A and of B, offs as hgemm_grouped reads it (int32
 * cumulative ends in device memory, read by the kernel alone, clamped to
 * [0, total_k]); for each group
 *     C_g = alpha * A_g^T B_g + beta * C_g
 * A is total_k x m and B total_k x n, row-major (lda >= m, ldb >= n: dY and
 * X of a linear layer, tokens by features), C_g is m x n (ldc) at C +
 * g * stride_c elements, every group's C written (an empty group: beta * C_g,
 * zeros with beta 0). fp16 or bf16 in, fp32 accumulation; C of the same type,
 * or fp32 with hgemm_options.c_fp32 (a main gradient accumulated with beta
 * 1; c_in, if set, must be C itself). Checked before any CUDA call as
 * hgemm_grouped's arguments are (leading dimensions and stride_c multiples
 * of 8, 16-byte aligned A, B and C, C's groups not overlapping one another
 * nor A, B or offs); kernels other than AUTO, a bias or an activation:
 * NOT_SUPPORTED. Asynchronous on `stream`, capturable. */
hgemm_status hgemm_grouped_k(hgemm_kernel kernel, hgemm_dtype dtype, int64_t m, int64_t n, int64_t total_k,
                             int64_t groups, const int32_t *offs, float alpha, const void *A, int64_t lda,
                             const void *B, int64_t ldb, float beta, void *C, int64_t ldc, int64_t stride_c,
                             const hgemm_options *options, cudaStream_t stream);

/* How hgemm_gemm_fp8 scales its operands. Values are ABI. Each is a pair,
 * one mode for A and its counterpart for B, as torch._scaled_mm accepts them;
 * the scales are fp32 arrays in device memory:
 *   TENSOR: one value each (scale_a[0], scale_b[0]);
 *   ROW:    A per row, m values (scale_a[i]); B per column of C, n values
 *           (scale_b[j]): torch's rowwise scaling, (m, 1) and (1, n);
 *   BLOCK:  A per 1 x 128 block along k, kb = ceil(k / 128) values per row,
 *           stored m-major: A's block (i, q) scaled by scale_a[q * m + i]
 *           (torch's (m, kb) tensor of strides (1, m)); B per 128 x 128
 *           block, scale_b[p * kb + q] for B's rows 128p.. and k 128q..
 *           (torch's (kb, ceil(n / 128)) tensor of strides (1, kb), the
 *           transposed view of a row-major (ceil(n / 128), kb) one). */
typedef enum hgemm_scale_mode {
    HGEMM_SCALE_TENSOR = 0,
    HGEMM_SCALE_ROW = 1,
    HGEMM_SCALE_BLOCK = 2
} hgemm_scale_mode;

/* FP8 products (torch._scaled_mm), row-major:
 *
 *     C = alpha * (A .* S_A) * (B .* S_B)^T + beta * C
 *
 * A is m x k and B is n x k, both k-contiguous (lda, ldb >= k, in bytes:
 * one byte an element), of types a_dtype and b_dtype (E4M3, or E5M2 for one
 * of them with HGEMM_SCALE_TENSOR, as torch._scaled_mm takes it; other
 * combinations are NOT_SUPPORTED); S_A and S_B are the scales of
 * `scale_mode` spread over A and B. C is m x n of c_dtype (F16, BF16 or
 * F32), ldc in elements. Products accumulate in fp32: the tensor core's sums
 * over each 128 of k are added into an fp32 total on the CUDA cores, scaled
 * there by the block's scales (BLOCK), and the ROW and TENSOR scales are
 * applied once, on the way out; alpha and beta in fp32, C rounded once;
 * beta == 0 never reads C.
 *
 * Checked before any CUDA call: known types and mode; sizes >= 0; k, lda
 * and ldb multiples of 16 and ldc of 8 (MISALIGNED; torch._scaled_mm's own
 * rule for k), A, B and C 16-byte aligned, the scales 4-byte aligned
 * (MISALIGNED); NULL A, B or C with nonzero size, or NULL scales
 * (INVALID_VALUE); C sharing a byte with A, B or a scale array
 * (INVALID_VALUE). kernel: HGEMM_KERNEL_AUTO (others: NOT_SUPPORTED).
 * options: read as hgemm_gemm_ex reads them (a size short of the first
 * version's, an unknown activation, a bias_dtype neither c_dtype nor F32:
 * INVALID_VALUE); NULL, or hgemm_options with an SM target only (a bias,
 * an activation, a c_in or a workspace: NOT_SUPPORTED; c_fp32 is c_dtype's
 * business here and must be 0). A status other than HGEMM_SUCCESS means
 * nothing was queued. k == 0 or alpha == 0: C = beta * C, A, B and the
 * scales not read. Asynchronous on `stream`, capturable, compiled ahead of
 * time for every configuration: no JIT. */
hgemm_status hgemm_gemm_fp8(hgemm_kernel kernel, hgemm_dtype a_dtype, hgemm_dtype b_dtype, hgemm_dtype c_dtype,
                            int64_t m, int64_t n, int64_t k, float alpha,
                            const void *A, int64_t lda, const void *B, int64_t ldb,
                            hgemm_scale_mode scale_mode, const float *scale_a, const float *scale_b,
                            float beta, void *C, int64_t ldc,
                            const hgemm_options *options, cudaStream_t stream);

/* Grouped FP8 products (mixture-of-experts in FP8): hgemm_grouped's 2D x
 * 3D form with hgemm_gemm_fp8's scaling. Group g holds A's rows [start_g,
 * end_g) (offs as hgemm_grouped reads it: int32 cumulative ends in device
 * memory, read by the kernel alone, clamped, capturable); for each of them
 *     C[r, :] = alpha * (A[r, :] .* S_A) * (B_g .* S_Bg)^T + beta * C[r, :]
 * A is total_rows x k and each B_g n x k (an expert's weight as nn.Linear
 * stores it), both e4m3 and k-contiguous (lda, ldb >= k, bytes), B_g
 * stride_b bytes after B_{g-1} (0: every group the same B and the same
 * scales). C is total_rows x n of c_dtype (F16, BF16 or F32). The scales,
 * fp32 in device memory, with E experts (groups, or 1 where stride_b is 0):
 *   TENSOR: scale_a[0]; scale_b[e], one per expert;
 *   ROW:    scale_a[r] per row of A; scale_b[e * n + j] per expert and
 *           column (torch's (E, n) rowwise scales);
 *   BLOCK:  scale_a[q * total_rows + r] per row and 128 of k, as
 *           hgemm_gemm_fp8's; scale_b[(e * ceil(n / 128) + p) * kb + q]
 *           per expert and 128 x 128 block (each expert's blocks as
 *           hgemm_gemm_fp8's, experts one after another; kb = ceil(k / 128)).
 * Accumulation as hgemm_gemm_fp8's. Checked before any CUDA call as
 * hgemm_grouped's and hgemm_gemm_fp8's arguments are (k, lda, ldb and
 * stride_b multiples of 16, ldc of 8); E5M2 operands, kernels other than
 * AUTO and options other than an SM target: NOT_SUPPORTED. Rows in no
 * group are never written. Asynchronous on `stream`, capturable. */
hgemm_status hgemm_grouped_fp8(hgemm_kernel kernel, hgemm_dtype a_dtype, hgemm_dtype b_dtype, hgemm_dtype c_dtype,
                               int64_t total_rows, int64_t n, int64_t k, int64_t groups, const int32_t *offs,
                               float alpha, const void *A, int64_t lda, const void *B, int64_t ldb, int64_t stride_b,
                               hgemm_scale_mode scale_mode, const float *scale_a, const float *scale_b, float beta,
                               void *C, int64_t ldc, const hgemm_options *options, cudaStream_t stream);

/* A short English sentence for a status; never NULL. */
const char *hgemm_status_string(hgemm_status status);

/* The kernel's short name ("v6"; "auto" for HGEMM_KERNEL_AUTO, "auto-f16acc"
 * for HGEMM_KERNEL_AUTO_F16ACC), NULL if unknown. */
const char *hgemm_kernel_name(hgemm_kernel kernel);

#ifdef __cplusplus
}
#endif

#endif /* HGEMM_H */
