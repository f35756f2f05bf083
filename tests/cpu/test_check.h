/*
 * test_check.h: the tests' tiny checking kit. Every CHECK_* records the file,
 * the line, the expression and the values it compared; a failure is printed
 * at once and counted. check_finish() prints the final "N passed, N failed"
 * line and returns the exit status (1 on any failure). Never assert().
 */
#ifndef HGEMM_TEST_CHECK_H
#define HGEMM_TEST_CHECK_H

#include <stdint.h>

#include "hgemm.h"

/* Count one check; on failure print file:line, the expression and `fmt`. */
#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
int check_record(int ok, const char *file, int line, const char *expr, const char *fmt, ...);

int check_status(hgemm_status got, hgemm_status want, const char *expr, const char *file, int line);
int check_i64(int64_t got, int64_t want, const char *expr, const char *file, int line);
int check_u64(uint64_t got, uint64_t want, const char *expr, const char *file, int line);
/* Both NULL counts as equal; one NULL does not. */
int check_str(const char *got, const char *want, const char *expr, const char *file, int line);

/* Symbolic name of a status for messages, "HGEMM_ERROR_CUDA"; "?" if unknown. */
const char *check_status_name(hgemm_status status);

/* 1 when the CUDA runtime sees at least one device, 0 otherwise (no driver
 * included). Tests use it only to skip what cannot be asserted with a GPU. */
int check_gpu_present(void);

/* Print "N passed, N failed" and return the process exit status. */
int check_finish(void);

#define CHECK(cond) check_record((cond) ? 1 : 0, __FILE__, __LINE__, #cond, "is false")
/* CHECK with a printf-style explanation of the failure. */
#define CHECK_MSG(cond, ...) check_record((cond) ? 1 : 0, __FILE__, __LINE__, #cond, __VA_ARGS__)
#define CHECK_STATUS(expr, want) check_status((expr), (want), #expr, __FILE__, __LINE__)
#define CHECK_I64(expr, want) check_i64((int64_t)(expr), (int64_t)(want), #expr, __FILE__, __LINE__)
#define CHECK_U64(expr, want) check_u64((uint64_t)(expr), (uint64_t)(want), #expr, __FILE__, __LINE__)
#define CHECK_STR(expr, want) check_str((expr), (want), #expr, __FILE__, __LINE__)

#endif /* HGEMM_TEST_CHECK_H */
