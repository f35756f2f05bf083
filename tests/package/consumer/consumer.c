/*
 * consumer.c: the smallest program built against an *installed* hgemm, by
 * tests/package/install_consume.cmake, once through find_package(hgemm) and
 * once through pkg-config. It proves that the installed header, the library
 * and the CUDA runtime resolve and that a call goes through:
 *   - hgemm_kernel_name(HGEMM_KERNEL_V6) is "v6";
 *   - hgemm_nt on a valid 64 x 64 x 64 problem returns HGEMM_SUCCESS on a
 *     Hopper GPU and HGEMM_ERROR_NO_DEVICE where there is no GPU (CI). A GPU
 *     of another generation answers HGEMM_ERROR_ARCH_MISMATCH, which is also
 *     the right answer there: this test is about packaging, not kernels.
 * Exit 0 when all is well, 1 with a message on stderr otherwise.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <hgemm.h>

enum { N = 64 }; /* m = n = k = lda = ldb = ldc */

#define CUDA_CHECK(call)                                                              \
    do {                                                                              \
        cudaError_t err_ = (call);                                                    \
        if (err_ != cudaSuccess) {                                                    \
            fprintf(stderr, "consumer: %s:%d: %s failed: %s\n", __FILE__, __LINE__,   \
                    #call, cudaGetErrorString(err_));                                 \
            return 1;                                                                 \
        }                                                                             \
    } while (0)

/* Stand-ins for the matrices where there is no device: 16-byte aligned and
 * never read, since hgemm checks every argument and then finds no device
 * before it would touch them. */
static _Alignas(16) uint16_t host_a[N * N], host_b[N * N], host_c[N * N];

int main(void) {
    const char *v6 = hgemm_kernel_name(HGEMM_KERNEL_V6);
    if (v6 == NULL || strcmp(v6, "v6") != 0) {
        fprintf(stderr, "consumer: hgemm_kernel_name(HGEMM_KERNEL_V6) is \"%s\", expected \"v6\"\n",
                v6 ? v6 : "(null)");
        return 1;
    }

    /* With a device the matrices must be real device memory: a kernel will run. */
    int devices = 0;
    int have_device = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
    (void)cudaGetLastError(); /* "no device" is not sticky: leave no trace */
    void *a = host_a, *b = host_b, *c = host_c;
    if (have_device) {
        size_t bytes = sizeof(uint16_t) * N * N;
        CUDA_CHECK(cudaMalloc(&a, bytes));
        CUDA_CHECK(cudaMalloc(&b, bytes));
        CUDA_CHECK(cudaMalloc(&c, bytes));
        CUDA_CHECK(cudaMemset(a, 0, bytes));
        CUDA_CHECK(cudaMemset(b, 0, bytes));
    }

    hgemm_status st = hgemm_nt(HGEMM_KERNEL_AUTO, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N, 0);
    printf("consumer: hgemm_nt -> %s (status %d)\n", hgemm_status_string(st), (int)st);
    if (have_device) {
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaFree(a));
        CUDA_CHECK(cudaFree(b));
        CUDA_CHECK(cudaFree(c));
    }
    if (st != HGEMM_SUCCESS && st != HGEMM_ERROR_NO_DEVICE && st != HGEMM_ERROR_ARCH_MISMATCH) {
        fprintf(stderr, "consumer: unexpected status %d from hgemm_nt\n", (int)st);
        return 1;
    }
    return 0;
}
