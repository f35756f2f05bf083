// torch.ops.hgemm.wgrad_accumulate_: a weight gradient added into an fp32
// buffer in place, as mixed-precision training keeps it (Megatron's
// main_grad, its "gradient accumulation fusion"):
//
//   wgrad_accumulate_(Tensor(a!) main_grad, Tensor grad_output, Tensor input) -> ()
//     main_grad (out, in) float32 += grad_output^T @ input, where grad_output
//     (..., out) and input (..., in) are fp16 or bf16 of one type, their leading
//     dimensions the tokens (flattened).
//
// One hgemm_gemm_ex call: the TN form with an fp32 C and beta = 1 (c_fp32),
// fp32 accumulation, torch's current stream; the 16-bit product is never
// rounded. main_grad must be contiguous with in a multiple of 8 and 16-byte
// aligned (hgemm's C rules at 4 bytes an element); grad_output and input are
// read in place where their rows are contiguous at a multiple of 8 elements,
// else copied into padded rows.
#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <cuda_runtime_api.h>

#include "hgemm.h"
#include "refuse.h"
#include "rows.h"

namespace {

using at::Tensor;

hgemm_dtype wgrad_dtype(const Tensor &t, const char *name)
{
    if (t.scalar_type() == at::kHalf) return HGEMM_DTYPE_F16;
    if (t.scalar_type() == at::kBFloat16) return HGEMM_DTYPE_BF16;
    TORCH_CHECK_TYPE(false, "hgemm::wgrad_accumulate_: ", name, ": expected float16 or bfloat16, got ",
                     t.scalar_type());
}

// The product of every dimension but the last.
c10::SymInt tokens(const Tensor &t)
{
    c10::SymInt r = 1;
    for (int64_t i = 0; i + 1 < t.dim(); i++) r = r * t.sym_size(i);
    return r;
}

// What can be checked without running (the Meta kernel, and the first step of the CUDA one).
void wgrad_meta(const Tensor &main_grad, const Tensor &grad_output, const Tensor &input)
{
    TORCH_CHECK_TYPE(main_grad.scalar_type() == at::kFloat, "hgemm::wgrad_accumulate_: main_grad: expected "
                     "float32, got ", main_grad.scalar_type());
    const hgemm_dtype dg = wgrad_dtype(grad_output, "grad_output"), dx = wgrad_dtype(input, "input");
    TORCH_CHECK_TYPE(dg == dx, "hgemm::wgrad_accumulate_: grad_output is ", grad_output.scalar_type(),
                     " and input ", input.scalar_type(), ": both must be the same type");
    TORCH_CHECK_VALUE(main_grad.dim() == 2 && grad_output.dim() >= 1 && input.dim() >= 1,
                      "hgemm::wgrad_accumulate_: expected main_grad (out, in), grad_output (..., out) and input "
                      "(..., in), got shapes ", main_grad.sym_sizes(), ", ", grad_output.sym_sizes(), " and ",
                      input.sym_sizes());
    TORCH_CHECK_VALUE(grad_output.sym_size(-1) == main_grad.sym_size(0) && input.sym_size(-1) == main_grad.sym_size(1),
                      "hgemm::wgrad_accumulate_: main_grad has shape ", main_grad.sym_sizes(), ", grad_output ",
                      grad_output.sym_sizes(), " and input ", input.sym_sizes(),
                      ": expected main_grad (grad_output.shape[-1], input.shape[-1])");
    TORCH_CHECK_VALUE(tokens(grad_output) == tokens(input),
                      "hgemm::wgrad_accumulate_: grad_output ", grad_output.sym_sizes(), " and input ",
                      input.sym_sizes(), " have different numbers of tokens");
}

// x (..., cols) as 2-D rows (tokens, cols) hgemm reads in place, or a padded copy.
Tensor rows_of(const Tensor &x)
{
    const int64_t cols = x.size(-1), tokens = cols == 0 ? 0 : x.numel() / cols;
    return hgemm_rows_padded(x.reshape({tokens, cols}));
}

void wgrad_cuda(const Tensor &main_grad, const Tensor &grad_output, const Tensor &input)
{
    wgrad_meta(main_grad, grad_output, input);
    const int64_t m = main_grad.size(0), n = main_grad.size(1);
    for (const Tensor *t : {&main_grad, &grad_output, &input})
        TORCH_CHECK_VALUE(t->is_cuda() && t->get_device() == main_grad.get_device(), "hgemm::wgrad_accumulate_: "
                          "main_grad, grad_output and input must be on one CUDA device, got ", main_grad.device(),
                          ", ", grad_output.device(), " and ", input.device());
    TORCH_CHECK_VALUE(main_grad.is_contiguous() && n % 8 == 0 &&
                          reinterpret_cast<uintptr_t>(main_grad.data_ptr()) % 16 == 0,
                      "hgemm::wgrad_accumulate_: main_grad (shape ", main_grad.sizes(), ", strides ",
                      main_grad.strides(), "): expected a contiguous, 16-byte aligned tensor whose rows are a "
                      "multiple of 8 elements (in_features % 8 == 0)");
    if (m == 0 || n == 0) return;
    const Tensor g = rows_of(grad_output), x = rows_of(input);
    const int64_t k = g.size(0);
    if (k == 0) return;  // no token: nothing to add
    c10::cuda::CUDAGuard device(main_grad.device());
    cudaStream_t stream = c10::cuda::getCurrentCUDAStream(main_grad.get_device()).stream();
    hgemm_options options = {};
    options.size = sizeof options;
    options.c_fp32 = 1;
    // dW (m x n) = dY^T (m x k; dY stored k x m) times X (k x n, as stored): the TN form
    const hgemm_status s = hgemm_gemm_ex(HGEMM_KERNEL_AUTO, wgrad_dtype(g, "grad_output"), HGEMM_OP_T, HGEMM_OP_N, m,
                                         n, k, 1.0f, g.data_ptr(), g.stride(0), 0, x.data_ptr(), x.stride(0), 0, 1.0f,
                                         main_grad.data_ptr(), main_grad.stride(0), 0, 1, &options, stream);
    TORCH_CHECK(s == HGEMM_SUCCESS, "hgemm::wgrad_accumulate_: hgemm_gemm_ex failed: ", hgemm_status_string(s),
                " (status ", (int)s, ")");
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(hgemm, m)
{
    m.def("wgrad_accumulate_(Tensor(a!) main_grad, Tensor grad_output, Tensor input) -> ()");
}

TORCH_LIBRARY_IMPL(hgemm, CUDA, m)
{
    m.impl("wgrad_accumulate_", &wgrad_cuda);
}

TORCH_LIBRARY_IMPL(hgemm, Meta, m)
{
    m.impl("wgrad_accumulate_", &wgrad_meta);
}

TORCH_LIBRARY_IMPL(hgemm, CPU, m)
{
    m.impl("wgrad_accumulate_", torch::CppFunction::makeFromBoxedFunction<&hgemm_refuse_cpu>());
}
