/* V8, fp16, A K-major and B N-major (op_a N, op_b N): the table's builds for this
 * element type and form (launch_v8_tile, src/v8/launch.cuh), one file so that
 * the forms compile in parallel. */
#include "v8/launch.cuh"

V8_INSTANCE(f16_nn, __half, 0, 1)
