/*
 * lab/lab.h: the lab's ablation launchers (lab/v8_lab.cu, lab/v9_lab.c),
 * each a row of lab/lab.c's table. Built with -DHGEMM_LAB=ON only.
 */
#ifndef HGEMM_LAB_H
#define HGEMM_LAB_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

hgemm_status hgemm__launch_v8_nocluster(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_direct(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_dp(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_wide(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_narrow(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_192(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_320(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_320_gpc(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_320_whole(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_64(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_64_fenced(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_allsms(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_nopdl(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_320_r1(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_320_r2(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_320_r4(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_320_r16(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_320_r32(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_pdl_start(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_pdl_late(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v9_nopdl(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v9_pdl_start(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_narrow_dp(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_narrow_nocluster(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_3stage(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_streamk(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_split2k(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_c4(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_halves(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_wide_serial(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_wide_after(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_seam(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_seam_rows(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_gpc(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_noseam(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_n128x2(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v8_320_serial(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v9_nosplit(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v9_noswap(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v9_k128(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v9_norot(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v9_scalar(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v9_deep(const hgemm_problem *p, cudaStream_t stream);
hgemm_status hgemm__launch_v9_shallow(const hgemm_problem *p, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* HGEMM_LAB_H */
