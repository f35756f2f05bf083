/* fp8/plan.h: the FP8 kernel's plan (src/fp8/fp8.c), tested on the CPU
 * (tests/cpu/test_fp8_api.c). */
#ifndef HGEMM_FP8_PLAN_H
#define HGEMM_FP8_PLAN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* log2 of the blocks (a cluster) that share each 128 x 128 tile, 0 .. 3. */
int hgemm__fp8_split_log(uint64_t tiles, int64_t k_tiles, int sms);
/* 1 where the kernel takes 128 x 256 tiles. */
int hgemm__fp8_wide(uint64_t m, uint64_t n, int sms);
/* 1 where the wide build runs in pairs (clusters of two blocks sharing B). */
int hgemm__fp8_pair(uint64_t m, int wide, int sms);

#ifdef __cplusplus
}
#endif

#endif
