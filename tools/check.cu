/*
 * check.cu: the GPU half of hgemm_check (see check.h): fills, the fp64
 * reference GEMM for fp16 and bf16 and every operand form, error statistics
 * with an exact p99, and guard-band checks. CUDA C; the host functions are the
 * C API of check.h. Kernels take the element type as a value, not a template
 * parameter: a uniform branch per element costs nothing beside fp64 FMAs.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "check.h"

enum {
    FILL_THREADS = 256,
    FILL_MAX_BLOCKS_X = 64,     /* grid-stride loops: enough blocks to fill the GPU */
    FILL_MAX_BLOCKS_Y = 4096,
    MAX_GRID_Y = 65535,

    /* Reference GEMM: a 64x64 tile of C per block of 16x16 threads, each
     * thread a 4x4 sub-tile strided by 16 (so a warp reads 16 consecutive
     * doubles of B and 2 broadcast doubles of A: no bank conflicts). */
    REF_TILE = 64,
    REF_BK = 16,
    REF_THREADS_X = 16,
    REF_THREADS_Y = 16,
    REF_THREADS = REF_THREADS_X * REF_THREADS_Y,
    REF_PER_THREAD = REF_TILE / REF_THREADS_X, /* 4 rows x 4 columns per thread */
    REF_PAD = 1,                               /* one double: the transposed stores of a
                                                  row's 16 k values hit 16 banks */

    /* Statistics: a fixed grid, so the per-block partial sums are added on the
     * host in a fixed order (the mean is reproducible run to run). */
    STAT_THREADS = 256,
    STAT_MAX_BLOCKS_X = 16,
    STAT_MAX_BLOCKS = 2048,

    /* Exact p99: a radix select over the bits of the (non-negative) double
     * errors, 8 bits per pass, most significant first. */
    RADIX_BITS = 8,
    RADIX_BINS = 1 << RADIX_BITS,
    RADIX_PASSES = 64 / RADIX_BITS,
};

static_assert(REF_THREADS_Y * REF_PER_THREAD == REF_TILE, "thread grid must cover the tile");
static_assert(REF_TILE * REF_BK % REF_THREADS == 0, "tile loads split evenly over threads");
static_assert(RADIX_BINS == STAT_THREADS, "one histogram bin per thread when flushing");

static inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static dim3 stride_grid(int64_t rows, int64_t cols, int threads, int64_t max_x, int64_t max_total) {
    int64_t gx = min64(ceil_div(cols, threads), max_x);
    if (gx < 1) gx = 1;
    int64_t gy = min64(rows, max_total / gx);
    if (gy < 1) gy = 1;
    return dim3((unsigned)gx, (unsigned)min64(gy, MAX_GRID_Y));
}

/* The rows x cols region of an ld-strided matrix, visited by a 2-D grid-stride
 * loop: rows over blockIdx.y, columns over the x threads. No 64-bit division. */
#define FOR_EACH_ELEMENT(rows, cols, r, c)                                                \
    for (int64_t r = blockIdx.y; r < (rows); r += gridDim.y)                           \
        for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < (cols);    \
             c += (int64_t)gridDim.x * blockDim.x)

/* ---- fills --------------------------------------------------------------- */

__global__ void fill_random_kernel(uint16_t *dst, int64_t rows, int64_t cols, int64_t ld,
                                   uint64_t seed, float scale, hgemm_dtype dtype) {
    FOR_EACH_ELEMENT(rows, cols, r, c)
        dst[r * ld + c] = hgemm_check_random_dt(dtype, seed, (uint64_t)r, (uint64_t)c, scale);
}

__global__ void fill_pattern_kernel(uint16_t *dst, int64_t rows, int64_t cols, int64_t ld,
                                    uint16_t pattern) {
    FOR_EACH_ELEMENT(rows, cols, r, c) dst[r * ld + c] = pattern;
}

void hgemm_check_fill_random_dt(hgemm_dtype dtype, void *dst, int64_t rows, int64_t cols,
                                int64_t ld, uint64_t seed, float scale, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    dim3 grid = stride_grid(rows, cols, FILL_THREADS, FILL_MAX_BLOCKS_X, FILL_MAX_BLOCKS_X * FILL_MAX_BLOCKS_Y);
    fill_random_kernel<<<grid, FILL_THREADS, 0, stream>>>((uint16_t *)dst, rows, cols, ld, seed,
                                                          scale, dtype);
    HGEMM_CHECK_LAUNCH();
}

void hgemm_check_fill_random(void *dst, int64_t rows, int64_t cols, int64_t ld, uint64_t seed,
                             float scale, cudaStream_t stream) {
    hgemm_check_fill_random_dt(HGEMM_DTYPE_F16, dst, rows, cols, ld, seed, scale, stream);
}

void hgemm_check_fill_pattern(void *dst, int64_t rows, int64_t cols, int64_t ld, uint16_t pattern,
                              cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    dim3 grid = stride_grid(rows, cols, FILL_THREADS, FILL_MAX_BLOCKS_X, FILL_MAX_BLOCKS_X * FILL_MAX_BLOCKS_Y);
    fill_pattern_kernel<<<grid, FILL_THREADS, 0, stream>>>((uint16_t *)dst, rows, cols, ld, pattern);
    HGEMM_CHECK_LAUNCH();
}

void hgemm_check_fill_nan_dt(hgemm_dtype dtype, void *dst, int64_t rows, int64_t cols, int64_t ld,
                             cudaStream_t stream) {
    hgemm_check_fill_pattern(dst, rows, cols, ld, hgemm_check_nan_dt(dtype), stream);
}

void hgemm_check_fill_sentinel_dt(hgemm_dtype dtype, void *dst, int64_t rows, int64_t cols,
                                  int64_t ld, cudaStream_t stream) {
    hgemm_check_fill_pattern(dst, rows, cols, ld, hgemm_check_sentinel_dt(dtype), stream);
}

/* ---- the fp64 reference GEMM ------------------------------------------------ */

typedef struct ref_args {
    hgemm_dtype dtype;
    int64_t m, n, k;
    double alpha, beta;
    const uint16_t *A; int64_t lda; int a_kmajor; /* op_a N: A[r, k] at A[r * lda + k] */
    const uint16_t *B; int64_t ldb; int b_kmajor; /* op_b T: B^T[c, k] at B[c * ldb + k] */
    const uint16_t *C0; int64_t ldc0;
    double *ref; int64_t ldref;
} ref_args;

/* Element bits to double, exact: fp16 by the hardware conversion (the same
 * values as hgemm_check_f16_to_f32), bf16 as the upper half of an fp32. */
static __device__ __forceinline__ double elem_to_f64(hgemm_dtype dtype, uint16_t h) {
    if (dtype == HGEMM_DTYPE_BF16) return (double)__uint_as_float((unsigned)h << 16);
    return (double)__half2float(__ushort_as_half(h));
}

/* One (BK, TILE) k-major tile of an operand into shared memory: S[kk][i] =
 * X(i0 + i, k0 + kk), zero outside rows x k. X(i, kk) lies at X[i * ld + kk]
 * when kmajor, else at X[kk * ld + i]. Consecutive threads take consecutive
 * addresses either way: 16 threads per row's 16 k values (k-major), or 64
 * per k's row of 64 (the transposed layout). */
static __device__ __forceinline__ void load_tile(double (*S)[REF_TILE + REF_PAD], hgemm_dtype dtype,
                                                 const uint16_t *X, int64_t ld, int kmajor,
                                                 int64_t i0, int64_t rows, int64_t k0, int64_t k,
                                                 int tid) {
    for (int e = tid; e < REF_TILE * REF_BK; e += REF_THREADS) {
        const int i = kmajor ? e / REF_BK : e % REF_TILE;
        const int kk = kmajor ? e % REF_BK : e / REF_TILE;
        const int64_t gi = i0 + i, gk = k0 + kk;
        double v = 0.0;
        if (gi < rows && gk < k) v = elem_to_f64(dtype, kmajor ? X[gi * ld + gk] : X[gk * ld + gi]);
        S[kk][i] = v;
    }
}

/* One 64x64 tile of ref per block. Every output is summed in k order with
 * fp64 FMAs; fp16 and bf16 products are exact in fp64 (11 x 11 and 8 x 8
 * significant bits), so the sum matches the CPU reference's k-ordered loop to
 * the last bit. */
__global__ void __launch_bounds__(REF_THREADS) reference_kernel(ref_args a) {
    __shared__ double As[REF_BK][REF_TILE + REF_PAD]; /* (BK, TILE): A tile, k-major */
    __shared__ double Bs[REF_BK][REF_TILE + REF_PAD]; /* (BK, TILE): B tile, k-major */
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * REF_THREADS_X + tx;
    const int64_t row0 = (int64_t)blockIdx.y * REF_TILE, col0 = (int64_t)blockIdx.x * REF_TILE;
    const int64_t k = a.alpha == 0.0 ? 0 : a.k; /* alpha == 0: A and B are not read */

    double acc[REF_PER_THREAD][REF_PER_THREAD];
#pragma unroll
    for (int i = 0; i < REF_PER_THREAD; i++)
#pragma unroll
        for (int j = 0; j < REF_PER_THREAD; j++) acc[i][j] = 0.0;

    for (int64_t k0 = 0; k0 < k; k0 += REF_BK) {
        load_tile(As, a.dtype, a.A, a.lda, a.a_kmajor, row0, a.m, k0, k, tid);
        load_tile(Bs, a.dtype, a.B, a.ldb, a.b_kmajor, col0, a.n, k0, k, tid);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < REF_BK; kk++) {
            double av[REF_PER_THREAD], bv[REF_PER_THREAD];
#pragma unroll
            for (int i = 0; i < REF_PER_THREAD; i++) av[i] = As[kk][ty + i * REF_THREADS_Y];
#pragma unroll
            for (int j = 0; j < REF_PER_THREAD; j++) bv[j] = Bs[kk][tx + j * REF_THREADS_X];
#pragma unroll
            for (int i = 0; i < REF_PER_THREAD; i++)
#pragma unroll
                for (int j = 0; j < REF_PER_THREAD; j++) acc[i][j] = fma(av[i], bv[j], acc[i][j]);
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < REF_PER_THREAD; i++) {
        int64_t r = row0 + ty + i * REF_THREADS_Y;
        if (r >= a.m) continue;
#pragma unroll
        for (int j = 0; j < REF_PER_THREAD; j++) {
            int64_t c = col0 + tx + j * REF_THREADS_X;
            if (c >= a.n) continue;
            /* Separate roundings, no FMA contraction: the same as the CPU reference. */
            double v = __dmul_rn(a.alpha, acc[i][j]);
            if (a.beta != 0.0)
                v = __dadd_rn(v, __dmul_rn(a.beta, elem_to_f64(a.dtype, a.C0[r * a.ldc0 + c])));
            a.ref[r * a.ldref + c] = v;
        }
    }
}

void hgemm_check_reference_ex(hgemm_dtype dtype, hgemm_op op_a, hgemm_op op_b, int64_t m,
                              int64_t n, int64_t k, double alpha, const void *A, int64_t lda,
                              const void *B, int64_t ldb, double beta, const void *C0,
                              int64_t ldc0, double *ref, int64_t ldref, cudaStream_t stream) {
    if (m <= 0 || n <= 0) return;
    int64_t gy = ceil_div(m, REF_TILE), gx = ceil_div(n, REF_TILE);
    if (gy > MAX_GRID_Y || gx > INT32_MAX) {
        fprintf(stderr, "%s:%d: reference GEMM: %lld x %lld is too large\n", __FILE__, __LINE__,
                (long long)m, (long long)n);
        exit(1);
    }
    ref_args a = {dtype, m, n, k, alpha, beta,
                  (const uint16_t *)A, lda, op_a == HGEMM_OP_N,
                  (const uint16_t *)B, ldb, op_b == HGEMM_OP_T,
                  (const uint16_t *)C0, ldc0, ref, ldref};
    reference_kernel<<<dim3((unsigned)gx, (unsigned)gy), dim3(REF_THREADS_X, REF_THREADS_Y), 0, stream>>>(a);
    HGEMM_CHECK_LAUNCH();
}

void hgemm_check_reference(int64_t m, int64_t n, int64_t k, double alpha, const void *A,
                           int64_t lda, const void *B, int64_t ldb, double beta, const void *C0,
                           int64_t ldc0, double *ref, int64_t ldref, cudaStream_t stream) {
    hgemm_check_reference_ex(HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, m, n, k, alpha, A, lda, B,
                             ldb, beta, C0, ldc0, ref, ldref, stream);
}

/* ---- comparing with the reference ------------------------------------------ */

typedef struct cmp_args {
    hgemm_dtype dtype;
    const uint16_t *C; int64_t ldc;
    const double *ref; int64_t ldref;
    int64_t m, n;
    double atol, rtol;
} cmp_args;

/* |C - ref| for the statistics: a non-finite C (or ref) is an infinite error. */
static __device__ __forceinline__ double abs_err(double got, double want) {
    double e = fabs(got - want);
    return isfinite(got) && isfinite(want) ? e : (double)INFINITY;
}

/* NaN fails: the comparison is written so that it is false for NaN. */
static __device__ __forceinline__ int fails(double got, double want, double atol, double rtol) {
    return !(fabs(got - want) <= atol + rtol * fabs(want));
}

typedef struct stat_partial {
    double sum, max;
    unsigned long long failed, nonfinite;
} stat_partial;

__global__ void __launch_bounds__(STAT_THREADS) stats_kernel(cmp_args a, stat_partial *partials) {
    __shared__ stat_partial sh[STAT_THREADS];
    stat_partial p = {0.0, 0.0, 0, 0};
    FOR_EACH_ELEMENT(a.m, a.n, r, c) {
        double got = elem_to_f64(a.dtype, a.C[r * a.ldc + c]), want = a.ref[r * a.ldref + c];
        double e = abs_err(got, want);
        p.sum += e;
        p.max = fmax(p.max, e);
        p.failed += fails(got, want, a.atol, a.rtol);
        p.nonfinite += !isfinite(got);
    }
    const int t = threadIdx.x;
    sh[t] = p;
    __syncthreads();
    for (int s = STAT_THREADS / 2; s > 0; s /= 2) {
        if (t < s) {
            sh[t].sum += sh[t + s].sum;
            sh[t].max = fmax(sh[t].max, sh[t + s].max);
            sh[t].failed += sh[t + s].failed;
            sh[t].nonfinite += sh[t + s].nonfinite;
        }
        __syncthreads();
    }
    if (t == 0) partials[blockIdx.y * gridDim.x + blockIdx.x] = sh[0];
}

/* The smallest row-major index of a failing element above `after` (-1: from the start). */
__global__ void __launch_bounds__(STAT_THREADS) next_failure_kernel(cmp_args a, long long after,
                                                                    unsigned long long *first) {
    FOR_EACH_ELEMENT(a.m, a.n, r, c) {
        long long idx = (long long)(r * a.n + c);
        if (idx <= after) continue;
        double got = elem_to_f64(a.dtype, a.C[r * a.ldc + c]), want = a.ref[r * a.ldref + c];
        if (fails(got, want, a.atol, a.rtol)) atomicMin(first, (unsigned long long)idx);
    }
}

/* One radix-select pass: histogram of the bits (shift .. shift+7) of the
 * errors whose higher bits equal `prefix` (under `mask`). Non-negative
 * doubles (+inf included) order like their bit patterns. */
__global__ void __launch_bounds__(STAT_THREADS) radix_kernel(cmp_args a, unsigned long long prefix,
                                                             unsigned long long mask, int shift,
                                                             unsigned long long *hist) {
    __shared__ unsigned int sh[RADIX_BINS];
    sh[threadIdx.x] = 0;
    __syncthreads();
    FOR_EACH_ELEMENT(a.m, a.n, r, c) {
        double e = abs_err(elem_to_f64(a.dtype, a.C[r * a.ldc + c]), a.ref[r * a.ldref + c]);
        unsigned long long bits = (unsigned long long)__double_as_longlong(e);
        if ((bits & mask) == prefix) atomicAdd(&sh[(bits >> shift) & (RADIX_BINS - 1)], 1u);
    }
    __syncthreads();
    if (sh[threadIdx.x]) atomicAdd(&hist[threadIdx.x], (unsigned long long)sh[threadIdx.x]);
}

int hgemm_check_compare_dt(hgemm_dtype dtype, const void *C, int64_t ldc, const double *ref,
                           int64_t ldref, int64_t m, int64_t n, double atol, double rtol,
                           hgemm_check_stats *out, cudaStream_t stream) {
    memset(out, 0, sizeof *out);
    if (m <= 0 || n <= 0) return 1;
    out->count = m * n;

    /* A reference in host memory is copied to the device first. */
    const double *dref = ref;
    double *owned = NULL;
    cudaPointerAttributes attr;
    HGEMM_CHECK_CUDA(cudaPointerGetAttributes(&attr, ref));
    if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged) {
        HGEMM_CHECK_CUDA(cudaMalloc((void **)&owned, (size_t)(m * n) * sizeof(double)));
        HGEMM_CHECK_CUDA(cudaMemcpy2DAsync(owned, (size_t)n * sizeof(double), ref,
                                           (size_t)ldref * sizeof(double), (size_t)n * sizeof(double),
                                           (size_t)m, cudaMemcpyHostToDevice, stream));
        dref = owned;
        ldref = n;
    }
    cmp_args a = {dtype, (const uint16_t *)C, ldc, dref, ldref, m, n, atol, rtol};
    dim3 grid = stride_grid(m, n, STAT_THREADS, STAT_MAX_BLOCKS_X, STAT_MAX_BLOCKS);
    const int blocks = (int)(grid.x * grid.y);

    /* One scratch allocation: partial sums, the histogram, the failure index. */
    size_t partial_bytes = (size_t)blocks * sizeof(stat_partial);
    size_t hist_bytes = RADIX_BINS * sizeof(unsigned long long);
    uint8_t *scratch = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&scratch, partial_bytes + hist_bytes + sizeof(unsigned long long)));
    stat_partial *d_partials = (stat_partial *)scratch;
    unsigned long long *d_hist = (unsigned long long *)(scratch + partial_bytes);
    unsigned long long *d_first = d_hist + RADIX_BINS;

    stats_kernel<<<grid, STAT_THREADS, 0, stream>>>(a, d_partials);
    HGEMM_CHECK_LAUNCH();
    stat_partial *partials = (stat_partial *)malloc(partial_bytes);
    if (partials == NULL) {
        fprintf(stderr, "%s:%d: out of host memory\n", __FILE__, __LINE__);
        exit(1);
    }
    HGEMM_CHECK_CUDA(cudaMemcpyAsync(partials, d_partials, partial_bytes, cudaMemcpyDeviceToHost, stream));
    HGEMM_CHECK_CUDA(cudaStreamSynchronize(stream));
    double sum = 0.0;
    for (int b = 0; b < blocks; b++) {
        sum += partials[b].sum;
        out->max_abs_err = fmax(out->max_abs_err, partials[b].max);
        out->failed += (int64_t)partials[b].failed;
        out->nonfinite += (int64_t)partials[b].nonfinite;
    }
    free(partials);
    out->mean_abs_err = sum / (double)out->count;

    /* p99: find the bits of the rank-th smallest error, 8 bits at a time. */
    unsigned long long prefix = 0, mask = 0, hist[RADIX_BINS];
    unsigned long long rank = (unsigned long long)hgemm_check_p99_rank(out->count);
    for (int pass = 0; pass < RADIX_PASSES; pass++) {
        int shift = 64 - RADIX_BITS * (pass + 1);
        HGEMM_CHECK_CUDA(cudaMemsetAsync(d_hist, 0, hist_bytes, stream));
        radix_kernel<<<grid, STAT_THREADS, 0, stream>>>(a, prefix, mask, shift, d_hist);
        HGEMM_CHECK_LAUNCH();
        HGEMM_CHECK_CUDA(cudaMemcpyAsync(hist, d_hist, hist_bytes, cudaMemcpyDeviceToHost, stream));
        HGEMM_CHECK_CUDA(cudaStreamSynchronize(stream));
        int digit = 0;
        while (digit < RADIX_BINS - 1 && rank >= hist[digit]) rank -= hist[digit++];
        prefix |= (unsigned long long)digit << shift;
        mask |= (unsigned long long)(RADIX_BINS - 1) << shift;
    }
    memcpy(&out->p99_abs_err, &prefix, sizeof prefix);

    /* The first few failures, in row-major order: one scan each (failures are rare). */
    long long after = -1;
    while (out->mismatches_shown < HGEMM_CHECK_MAX_MISMATCHES && out->mismatches_shown < out->failed) {
        unsigned long long first = ~0ull;
        HGEMM_CHECK_CUDA(cudaMemcpyAsync(d_first, &first, sizeof first, cudaMemcpyHostToDevice, stream));
        next_failure_kernel<<<grid, STAT_THREADS, 0, stream>>>(a, after, d_first);
        HGEMM_CHECK_LAUNCH();
        HGEMM_CHECK_CUDA(cudaMemcpyAsync(&first, d_first, sizeof first, cudaMemcpyDeviceToHost, stream));
        HGEMM_CHECK_CUDA(cudaStreamSynchronize(stream));
        if (first == ~0ull) break;
        hgemm_check_mismatch *mm = &out->mismatches[out->mismatches_shown++];
        mm->row = (int64_t)(first / (unsigned long long)n);
        mm->col = (int64_t)(first % (unsigned long long)n);
        uint16_t got;
        HGEMM_CHECK_CUDA(cudaMemcpy(&got, (const uint16_t *)C + mm->row * ldc + mm->col, sizeof got,
                                    cudaMemcpyDeviceToHost));
        HGEMM_CHECK_CUDA(cudaMemcpy(&mm->want, dref + mm->row * ldref + mm->col, sizeof mm->want,
                                    cudaMemcpyDeviceToHost));
        mm->got = (double)hgemm_check_dt_to_f32(dtype, got);
        after = (long long)first;
    }

    HGEMM_CHECK_CUDA(cudaFree(scratch));
    if (owned) HGEMM_CHECK_CUDA(cudaFree(owned));
    return out->failed == 0;
}

int hgemm_check_compare(const void *C, int64_t ldc, const double *ref, int64_t ldref, int64_t m,
                        int64_t n, double atol, double rtol, hgemm_check_stats *out,
                        cudaStream_t stream) {
    return hgemm_check_compare_dt(HGEMM_DTYPE_F16, C, ldc, ref, ldref, m, n, atol, rtol, out, stream);
}

/* ---- guard bands ------------------------------------------------------------ */

typedef struct guard_args {
    const uint16_t *base;
    int64_t rows, ld;           /* the whole allocation */
    int64_t row0, m, n;         /* the region: rows row0 .. row0+m-1, columns 0 .. n-1 */
    uint16_t sentinel;
} guard_args;

__global__ void __launch_bounds__(FILL_THREADS) guard_kernel(guard_args g, unsigned long long *bad,
                                                             unsigned long long *first) {
    FOR_EACH_ELEMENT(g.rows, g.ld, r, c) {
        if (r >= g.row0 && r < g.row0 + g.m && c < g.n) continue;
        if (g.base[r * g.ld + c] != g.sentinel) {
            atomicAdd(bad, 1ull);
            atomicMin(first, (unsigned long long)(r * g.ld + c));
        }
    }
}

void hgemm_check_guarded_alloc_dt(hgemm_dtype dtype, hgemm_check_guarded *g, int64_t m, int64_t n,
                                  int64_t ld, int64_t guard_rows) {
    if (m < 0 || n < 0 || guard_rows < 0 || ld < (n > 1 ? n : 1)) {
        fprintf(stderr, "%s:%d: bad guarded matrix %lld x %lld, ld %lld, guard %lld\n", __FILE__,
                __LINE__, (long long)m, (long long)n, (long long)ld, (long long)guard_rows);
        exit(1);
    }
    g->m = m;
    g->n = n;
    g->ld = ld;
    g->guard_rows = guard_rows;
    g->sentinel = hgemm_check_sentinel_dt(dtype);
    int64_t rows = 2 * guard_rows + m;
    size_t bytes = (size_t)((rows > 0 ? rows : 1) * ld) * sizeof(uint16_t);
    HGEMM_CHECK_CUDA(cudaMalloc(&g->base, bytes));
    g->C = (uint16_t *)g->base + guard_rows * ld;
    hgemm_check_guarded_reset(g, 0);
    HGEMM_CHECK_CUDA(cudaStreamSynchronize(0));
}

void hgemm_check_guarded_alloc(hgemm_check_guarded *g, int64_t m, int64_t n, int64_t ld,
                               int64_t guard_rows) {
    hgemm_check_guarded_alloc_dt(HGEMM_DTYPE_F16, g, m, n, ld, guard_rows);
}

void hgemm_check_guarded_free(hgemm_check_guarded *g) {
    if (g->base) HGEMM_CHECK_CUDA(cudaFree(g->base));
    memset(g, 0, sizeof *g);
}

void hgemm_check_guarded_reset(const hgemm_check_guarded *g, cudaStream_t stream) {
    hgemm_check_fill_pattern(g->base, 2 * g->guard_rows + g->m, g->ld, g->ld, g->sentinel, stream);
}

int hgemm_check_guard_intact(const hgemm_check_guarded *g, hgemm_check_guard_report *out,
                             cudaStream_t stream) {
    memset(out, 0, sizeof *out);
    int64_t rows = 2 * g->guard_rows + g->m;
    if (rows <= 0) return 1;
    unsigned long long init[2] = {0ull, ~0ull}, res[2];
    unsigned long long *d = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&d, sizeof init));
    HGEMM_CHECK_CUDA(cudaMemcpyAsync(d, init, sizeof init, cudaMemcpyHostToDevice, stream));
    guard_args a = {(const uint16_t *)g->base, rows, g->ld, g->guard_rows, g->m, g->n, g->sentinel};
    dim3 grid = stride_grid(rows, g->ld, FILL_THREADS, FILL_MAX_BLOCKS_X, FILL_MAX_BLOCKS_X * FILL_MAX_BLOCKS_Y);
    guard_kernel<<<grid, FILL_THREADS, 0, stream>>>(a, d, d + 1);
    HGEMM_CHECK_LAUNCH();
    HGEMM_CHECK_CUDA(cudaMemcpyAsync(res, d, sizeof res, cudaMemcpyDeviceToHost, stream));
    HGEMM_CHECK_CUDA(cudaStreamSynchronize(stream));
    HGEMM_CHECK_CUDA(cudaFree(d));
    out->bad = (int64_t)res[0];
    if (out->bad) {
        int64_t idx = (int64_t)res[1];
        out->first_row = idx / g->ld - g->guard_rows;
        out->first_col = idx % g->ld;
        HGEMM_CHECK_CUDA(cudaMemcpy(&out->first_value, (const uint16_t *)g->base + idx,
                                    sizeof out->first_value, cudaMemcpyDeviceToHost));
    }
    return out->bad == 0;
}
