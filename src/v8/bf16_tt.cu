/* V8, bf16, A M-major and B K-major (op_a T, op_b T): the table's builds for this
 * element type and form (launch_v8_tile, src/v8/launch.cuh), one file so that
 * the forms compile in parallel. */
#include "v8/launch.cuh"

V8_INSTANCE(bf16_tt, __nv_bfloat16, 1, 0)
