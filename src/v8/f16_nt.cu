/* V8, fp16, A K-major and B K-major (op_a N, op_b T): the table's builds for this
 * element type and form (launch_v8_tile, src/v8/launch.cuh), one file so that
 * the forms compile in parallel. */
#include "v8/launch.cuh"

V8_INSTANCE(f16_nt, __half, 0, 0)
