/* check.c: counters and messages behind check.h. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "test_check.h"

static int passed, failed;

int check_record(int ok, const char *file, int line, const char *expr, const char *fmt, ...) {
    if (ok) {
        passed++;
        return 1;
    }
    failed++;
    printf("%s:%d: FAILED: %s: ", file, line, expr);
    va_list args;
    va_start(args, fmt);
    vprintf(fmt, args);
    va_end(args);
    printf("\n");
    fflush(stdout);
    return 0;
}

const char *check_status_name(hgemm_status status) {
    switch (status) {
    case HGEMM_SUCCESS: return "HGEMM_SUCCESS";
    case HGEMM_ERROR_INVALID_VALUE: return "HGEMM_ERROR_INVALID_VALUE";
    case HGEMM_ERROR_MISALIGNED: return "HGEMM_ERROR_MISALIGNED";
    case HGEMM_ERROR_NOT_SUPPORTED: return "HGEMM_ERROR_NOT_SUPPORTED";
    case HGEMM_ERROR_NO_DEVICE: return "HGEMM_ERROR_NO_DEVICE";
    case HGEMM_ERROR_ARCH_MISMATCH: return "HGEMM_ERROR_ARCH_MISMATCH";
    case HGEMM_ERROR_CUDA: return "HGEMM_ERROR_CUDA";
    }
    return "?";
}

int check_status(hgemm_status got, hgemm_status want, const char *expr, const char *file, int line) {
    return check_record(got == want, file, line, expr, "got %s (%d), want %s (%d)",
                        check_status_name(got), (int)got, check_status_name(want), (int)want);
}

int check_i64(int64_t got, int64_t want, const char *expr, const char *file, int line) {
    return check_record(got == want, file, line, expr, "got %" PRId64 ", want %" PRId64, got, want);
}

int check_u64(uint64_t got, uint64_t want, const char *expr, const char *file, int line) {
    return check_record(got == want, file, line, expr, "got %" PRIu64 ", want %" PRIu64, got, want);
}

int check_str(const char *got, const char *want, const char *expr, const char *file, int line) {
    int ok = (got == NULL || want == NULL) ? got == want : strcmp(got, want) == 0;
    return check_record(ok, file, line, expr, "got %s%s%s, want %s%s%s", got ? "\"" : "",
                        got ? got : "NULL", got ? "\"" : "", want ? "\"" : "",
                        want ? want : "NULL", want ? "\"" : "");
}

int check_gpu_present(void) {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return count > 0;
}

int check_finish(void) {
    printf("%d passed, %d failed\n", passed, failed);
    fflush(stdout);
    return failed ? 1 : 0;
}
