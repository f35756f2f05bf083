// torch.ops.hgemm: hgemm's PyTorch operators, registered from C++ over the C
// API (include/hgemm.h). hgemm/_ops.py loads this library with
// torch.ops.load_library; the ops then run without Python in between.
//
//   mm(a, b) / mm.out          a (m, k) @ b (k, n), every layout read from strides
//   bmm(a, b) / bmm.out        (B, m, k) @ (B, k, n)
//   baddbmm(self, a, b, beta, alpha)
//   linear(x, w, bias?)        x (..., k) @ w.T (+ bias), nn.Linear's product
//   linear_act(x, w, bias?, activation)
//                              act(linear): relu, gelu, gelu_tanh or silu, fused with
//                              the bias in hgemm's epilogue where AUTO runs V8
//   matmul(a, b, alpha)        numpy.matmul's shapes (batch dimensions broadcast)
//   matmul_out, nt             the ops the Python registration had
//
// All take fp16 or bf16 CUDA tensors of one type and accumulate in fp32
// (AUTO; kernel_name picks another kernel). A transposed view is a form, not
// a copy; a layout hgemm cannot read raises ValueError. Results of n not a
// multiple of 8 are views of rows padded to one (the leading dimension hgemm
// needs). They run on torch's current stream with a workspace owned here per
// device and stream (zeroed once), so AUTO may split k. mm, linear and bmm
// have autograd formulas (dX = dY W through the NN form, dW = dY^T X through
// TN), linear_act through linear's; every op has a Meta kernel for torch.compile.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "hgemm.h"
#include "refuse.h"
#include "plan.h"

namespace {

using at::Tensor;
using c10::string_view;

// --- kernels by name ------------------------------------------------------------

int kernel_id(string_view name)
{
    static const std::unordered_map<std::string, int> *table = [] {
        auto *t = new std::unordered_map<std::string, int>;
        for (int i = 0;; i++) {
            const char *n = hgemm_kernel_name((hgemm_kernel)i);
            if (n == nullptr) break;
            t->emplace(n, i);
        }
        return t;
    }();
    auto it = table->find(std::string(name));
    if (it == table->end()) {
        std::string known;
        for (int i = 0; hgemm_kernel_name((hgemm_kernel)i); i++)
            known += std::string(i ? ", " : "") + hgemm_kernel_name((hgemm_kernel)i);
        TORCH_CHECK_VALUE(false, "hgemm: unknown kernel '", std::string(name), "'; known kernels: ", known);
    }
    return it->second;
}

// --- the workspace ----------------------------------------------------------------

// One HGEMM_WORKSPACE_BYTES workspace per (device, stream), from torch's
// caching allocator, zero-filled on that stream the first time the stream
// runs an op outside graph capture. Kept until the process ends (never
// freed: the allocator may be gone by the time static objects die). A
// stream first seen while it is being captured gets no workspace (the call
// runs unsplit): the zero-fill would be captured, not run.
void *workspace_for(c10::DeviceIndex device, cudaStream_t stream, size_t *bytes)
{
    static std::mutex lock;
    static auto *spaces = new std::map<std::pair<int, cudaStream_t>, Tensor>;
    std::lock_guard<std::mutex> guard(lock);
    auto key = std::make_pair((int)device, stream);
    auto it = spaces->find(key);
    if (it == spaces->end()) {
        cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
        if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
            (void)cudaGetLastError();
            status = cudaStreamCaptureStatusActive;  // unknown: take the safe side
        }
        if (status != cudaStreamCaptureStatusNone) {
            *bytes = 0;
            return nullptr;
        }
        Tensor t = at::zeros({(int64_t)HGEMM_WORKSPACE_BYTES}, at::TensorOptions().dtype(at::kByte).device(at::kCUDA, device));
        it = spaces->emplace(key, std::move(t)).first;
    }
    *bytes = HGEMM_WORKSPACE_BYTES;
    return it->second.data_ptr();
}

// --- checks and results --------------------------------------------------------

hgemm_dtype dtype_of(const Tensor &t, const char *name)
{
    if (t.scalar_type() == at::kHalf) return HGEMM_DTYPE_F16;
    if (t.scalar_type() == at::kBFloat16) return HGEMM_DTYPE_BF16;
    TORCH_CHECK_TYPE(false, "hgemm: ", name, ": expected float16 or bfloat16, got ", t.scalar_type());
}

void check_operands(const Tensor &a, const Tensor &b, const Tensor *out)
{
    hgemm_dtype da = dtype_of(a, "a"), db = dtype_of(b, "b");
    TORCH_CHECK_TYPE(da == db, "hgemm: a is ", a.scalar_type(), " and b ", b.scalar_type(),
                     ": both must be the same type");
    if (out) {
        dtype_of(*out, "out");
        TORCH_CHECK_TYPE(out->scalar_type() == a.scalar_type(), "hgemm: out is ", out->scalar_type(),
                         " and a, b ", a.scalar_type(), ": all three must be the same type");
    }
    for (const Tensor *t : {&a, &b, out}) {
        if (t == nullptr) continue;
        TORCH_CHECK_TYPE(t->layout() == at::kStrided, "hgemm: expected strided (dense) tensors, got layout ",
                         t->layout());
    }
}

hgemm_view view_of(const Tensor &t)
{
    return hgemm_view{(int)t.dim(), t.sizes().data(), t.strides().data()};
}

const char *operand_name(int which)
{
    return which == 0 ? "a" : which == 1 ? "b" : "out";
}

// A ValueError that says why plan.h refused a @ b -> out.
[[noreturn]] void throw_plan_error(hgemm_plan_error e, int which, const Tensor &a, const Tensor &b, const Tensor &out)
{
    const Tensor &t = which == 0 ? a : which == 1 ? b : out;
    switch (e) {
    case HGEMM_PLAN_RANK:
        TORCH_CHECK_VALUE(false, "hgemm: ", operand_name(which), ": expected a tensor of 2 to ",
                          (int)HGEMM_PLAN_MAX_DIMS, " dimensions, got shape ", t.sizes());
    case HGEMM_PLAN_INNER:
        TORCH_CHECK_VALUE(false, "hgemm: a has shape ", a.sizes(), " and b ", b.sizes(),
                          ": a.shape[-1] must equal b.shape[-2]");
    case HGEMM_PLAN_BROADCAST:
        TORCH_CHECK_VALUE(false, "hgemm: the batch dimensions of a ", a.sizes(), " and b ", b.sizes(),
                          " do not broadcast");
    case HGEMM_PLAN_OUT_SHAPE:
        TORCH_CHECK_VALUE(false, "hgemm: out has shape ", out.sizes(), ", which is not the shape of a ",
                          a.sizes(), " @ b ", b.sizes());
    case HGEMM_PLAN_LAYOUT:
        TORCH_CHECK_VALUE(false, "hgemm: ", operand_name(which), " (shape ", t.sizes(), ", strides ", t.strides(),
                          "): neither its rows nor its columns are contiguous, so hgemm cannot read it "
                          "as stored or transposed; pass a copy (e.g. .contiguous())");
    case HGEMM_PLAN_BATCH:
        TORCH_CHECK_VALUE(false, "hgemm: ", operand_name(which), " (shape ", t.sizes(), ", strides ", t.strides(),
                          "): its batch dimensions do not step through the batch by one stride; pass a "
                          "copy (e.g. .contiguous())");
    case HGEMM_PLAN_OK: break;
    }
    TORCH_CHECK(false, "hgemm: unknown plan status ", (int)e);
}

hgemm_plan plan_or_throw(const Tensor &a, const Tensor &b, const Tensor &out)
{
    hgemm_plan p;
    int which = 0;
    hgemm_plan_error e = hgemm_plan_make(view_of(a), view_of(b), view_of(out), &p, &which);
    if (e != HGEMM_PLAN_OK) throw_plan_error(e, which, a, b, out);
    return p;
}

// The shape of a @ b (numpy.matmul's), checked; symbolic sizes (torch.compile's
// fake tensors) work too.
std::vector<c10::SymInt> result_shape(const Tensor &a, const Tensor &b)
{
    c10::SymIntArrayRef as = a.sym_sizes(), bs = b.sym_sizes();
    for (const Tensor *t : {&a, &b})
        TORCH_CHECK_VALUE(t->dim() >= 2 && t->dim() <= HGEMM_PLAN_MAX_DIMS, "hgemm: ", t == &a ? "a" : "b",
                          ": expected a tensor of 2 to ", (int)HGEMM_PLAN_MAX_DIMS, " dimensions, got shape ",
                          t->sym_sizes());
    TORCH_CHECK_VALUE(as.back() == bs[bs.size() - 2], "hgemm: a has shape ", as, " and b ", bs,
                      ": a.shape[-1] must equal b.shape[-2]");
    size_t ab = as.size() - 2, bb = bs.size() - 2, width = std::max(ab, bb);
    std::vector<c10::SymInt> shape;
    for (size_t i = 0; i < width; i++) {
        c10::SymInt x = i >= width - ab ? as[i - (width - ab)] : c10::SymInt(1);
        c10::SymInt y = i >= width - bb ? bs[i - (width - bb)] : c10::SymInt(1);
        TORCH_CHECK_VALUE(x == 1 || y == 1 || x == y, "hgemm: the batch dimensions of a ", as, " and b ", bs,
                          " do not broadcast");
        shape.push_back(x == 1 ? y : x);
    }
    shape.push_back(as[as.size() - 2]);
    shape.push_back(bs.back());
    return shape;
}

// An empty tensor of `shape` like `like` whose rows are padded to a multiple
// of 8 elements (a view of a wider buffer when n % 8 != 0): the leading
// dimension hgemm needs. The real ops and the Meta ones allocate here alike.
Tensor new_result(c10::SymIntArrayRef shape, const Tensor &like)
{
    std::vector<c10::SymInt> strides(shape.size());
    c10::SymInt step = 1;
    for (size_t i = shape.size(); i-- > 0;) {
        strides[i] = step;
        if (i + 1 == shape.size()) {
            c10::SymInt cols = shape[i] == 0 ? c10::SymInt(1) : shape[i];
            step = (cols + HGEMM_PLAN_ALIGN - 1) / HGEMM_PLAN_ALIGN * HGEMM_PLAN_ALIGN;
        } else {
            step = step * shape[i];
        }
    }
    return at::empty_strided_symint(shape, strides, like.options());
}

Tensor new_product(const Tensor &a, const Tensor &b)
{
    return new_result(result_shape(a, b), a);
}

// --- the call -----------------------------------------------------------------

// Whether a product takes its bias (n values, or none) and activation in
// hgemm's fused epilogue (hgemm_gemm_ex): where AUTO runs V8 anyway, which
// alone applies it, without a split (the epilogue runs unsplit): both sides
// past V9's 64, past AUTO's small products (m * n > 2^20), k at most 8192.
// Elsewhere (decode, few long tiles) the product keeps its kernel and the
// bias and activation are passes of their own.
bool fuses_epilogue(const hgemm_plan &p, const Tensor *bias, const Tensor &out, string_view kernel)
{
    const int kid = kernel_id(kernel);
    const bool shape = (kid == HGEMM_KERNEL_AUTO || kid == HGEMM_KERNEL_V8) && p.op_a == HGEMM_OP_N &&
                       p.op_b == HGEMM_OP_T && !p.swap && p.m > 64 && p.n > 64 &&
                       p.m * p.n > (int64_t(1) << 20) && p.k <= 8192;
    return shape && (bias == nullptr || (bias->scalar_type() == out.scalar_type() && bias->is_contiguous() &&
                                         bias->device() == out.device() &&
                                         reinterpret_cast<uintptr_t>(bias->data_ptr()) % 16 == 0));
}

// out = alpha * (a @ b) + beta * out on torch's current stream of out's device;
// with a bias (n values) or an activation that fuses_epilogue takes (beta 0),
// out = act(alpha * (a @ b) + bias) in one pass. Returns whether the bias and
// activation were applied.
bool gemm(const Tensor &a, const Tensor &b, const Tensor &out, double alpha, double beta, string_view kernel,
          const Tensor *bias = nullptr, hgemm_activation act = HGEMM_ACTIVATION_NONE)
{
    check_operands(a, b, &out);
    int kid = kernel_id(kernel);
    hgemm_plan p = plan_or_throw(a, b, out);
    if (p.batch == 0 || p.m == 0 || p.n == 0) return false;
    TORCH_CHECK_VALUE(out.is_cuda(), "hgemm: out: expected a CUDA tensor, got one on ", out.device());
    for (const Tensor *t : {&a, &b}) {
        if (p.k == 0) break;  // A and B are never read
        TORCH_CHECK_VALUE(t->is_cuda(), "hgemm: ", t == &a ? "a" : "b", ": expected a CUDA tensor, got one on ",
                          t->device());
        TORCH_CHECK_VALUE(t->get_device() == out.get_device(), "hgemm: the tensors are on different devices: ",
                          t->device(), " and ", out.device());
    }
    const Tensor &A = p.swap ? b : a, &B = p.swap ? a : b;
    c10::cuda::CUDAGuard device(out.device());
    cudaStream_t stream = c10::cuda::getCurrentCUDAStream(out.get_device()).stream();
    hgemm_options options = {};
    options.size = sizeof options;
    const bool fused =
        (bias != nullptr || act != HGEMM_ACTIVATION_NONE) && beta == 0.0 && fuses_epilogue(p, bias, out, kernel);
    if (fused) {
        options.bias = bias != nullptr ? bias->data_ptr() : nullptr;
        options.bias_dtype = dtype_of(a, "a");
        options.activation = act;
    } else {  // the epilogue's V8 splits nothing: the workspace only for a plain product
        options.workspace = workspace_for(out.get_device(), stream, &options.workspace_bytes);
    }
    hgemm_status s = hgemm_gemm_ex((hgemm_kernel)kid, dtype_of(a, "a"), (hgemm_op)p.op_a, (hgemm_op)p.op_b, p.m,
                                   p.n, p.k, (float)alpha, A.data_ptr(), p.lda, p.stride_a, B.data_ptr(), p.ldb,
                                   p.stride_b, (float)beta, out.data_ptr(), p.ldc, p.stride_c, p.batch, &options,
                                   stream);
    TORCH_CHECK(s == HGEMM_SUCCESS, "hgemm: hgemm_gemm_ex failed: ", hgemm_status_string(s), " (status ", (int)s,
                ")");
    return fused;
}

// --- the ops: checks and result (Meta), then the product (CUDA) ---------------
// Each Meta kernel checks what can be checked without running and allocates
// the result; the CUDA kernel is its Meta kernel on real tensors, then gemm.

void check_2d(const Tensor &a, const Tensor &b, const char *op)
{
    TORCH_CHECK_VALUE(a.dim() == 2 && b.dim() == 2, "hgemm::", op, ": expected 2-D tensors, got shapes ",
                      a.sym_sizes(), " and ", b.sym_sizes());
}

void check_bmm(const Tensor &a, const Tensor &b, const char *op)
{
    TORCH_CHECK_VALUE(a.dim() == 3 && b.dim() == 3 && a.sym_size(0) == b.sym_size(0), "hgemm::", op,
                      ": expected 3-D tensors of one batch size, got shapes ", a.sym_sizes(), " and ", b.sym_sizes());
}

void check_out(const Tensor &a, const Tensor &b, const Tensor &out)
{
    check_operands(a, b, &out);
    TORCH_CHECK_VALUE(out.sym_sizes() == c10::SymIntArrayRef(result_shape(a, b)), "hgemm: out has shape ",
                      out.sym_sizes(), ", which is not the shape of a @ b");
}

void check_linear(const Tensor &x, const Tensor &w, const std::optional<Tensor> &bias)
{
    TORCH_CHECK_VALUE(x.dim() >= 1 && w.dim() == 2, "hgemm::linear: expected input (..., in_features) and weight "
                      "(out_features, in_features), got shapes ", x.sym_sizes(), " and ", w.sym_sizes());
    TORCH_CHECK_VALUE(x.sym_size(-1) == w.sym_size(1), "hgemm::linear: input has ", x.sym_size(-1),
                      " features and weight takes ", w.sym_size(1), " (shapes ", x.sym_sizes(), " and ",
                      w.sym_sizes(), ")");
    if (bias && bias->defined()) {
        TORCH_CHECK_VALUE(bias->dim() == 1 && bias->sym_size(0) == w.sym_size(0), "hgemm::linear: bias of shape ",
                          bias->sym_sizes(), " for ", w.sym_size(0), " output features");
        TORCH_CHECK_TYPE(bias->scalar_type() == x.scalar_type(), "hgemm::linear: bias is ", bias->scalar_type(),
                         " and input ", x.scalar_type(), ": both must be the same type");
    }
    check_operands(x, w, nullptr);
}

void check_nt(const Tensor &a, const Tensor &b)
{
    TORCH_CHECK_TYPE(a.scalar_type() == at::kHalf && b.scalar_type() == at::kHalf,
                     "hgemm::nt: expected fp16 tensors, got ", a.scalar_type(), " and ", b.scalar_type(),
                     " (hgemm::mm and hgemm::linear take bf16 too)");
    check_2d(a, b, "nt");
}

// x of one dimension is one row: (k) -> (1, k), and the result back to (n).
Tensor as_rows(const Tensor &x) { return x.dim() == 1 ? x.unsqueeze(0) : x; }

Tensor mm_meta(const Tensor &a, const Tensor &b, string_view)
{
    check_2d(a, b, "mm");
    check_operands(a, b, nullptr);
    return new_product(a, b);
}

Tensor &mm_out_meta(const Tensor &a, const Tensor &b, string_view, Tensor &out)
{
    check_out(a, b, out);
    return out;
}

Tensor bmm_meta(const Tensor &a, const Tensor &b, string_view)
{
    check_bmm(a, b, "bmm");
    check_operands(a, b, nullptr);
    return new_product(a, b);
}

Tensor &bmm_out_meta(const Tensor &a, const Tensor &b, string_view, Tensor &out)
{
    check_bmm(a, b, "bmm");
    check_out(a, b, out);
    return out;
}

Tensor baddbmm_meta(const Tensor &self, const Tensor &a, const Tensor &b, double, double, string_view)
{
    check_bmm(a, b, "baddbmm");
    check_operands(a, b, &self);
    return new_product(a, b);
}

Tensor matmul_meta(const Tensor &a, const Tensor &b, double, string_view)
{
    check_operands(a, b, nullptr);
    return new_product(a, b);
}

void matmul_out_meta(const Tensor &a, const Tensor &b, const Tensor &out, double, double, string_view)
{
    check_out(a, b, out);
}

Tensor nt_meta(const Tensor &a, const Tensor &b, double alpha, string_view kernel)
{
    check_nt(a, b);
    return matmul_meta(a, b.t(), alpha, kernel);
}

Tensor linear_meta(const Tensor &x, const Tensor &w, const std::optional<Tensor> &bias, string_view)
{
    check_linear(x, w, bias);
    Tensor out = new_product(as_rows(x), w.t());
    return x.dim() == 1 ? out.squeeze(0) : out;
}

Tensor mm_cuda(const Tensor &a, const Tensor &b, string_view kernel)
{
    Tensor out = mm_meta(a, b, kernel);
    gemm(a, b, out, 1.0, 0.0, kernel);
    return out;
}

Tensor &mm_out_cuda(const Tensor &a, const Tensor &b, string_view kernel, Tensor &out)
{
    check_2d(a, b, "mm");
    gemm(a, b, out, 1.0, 0.0, kernel);
    return out;
}

Tensor bmm_cuda(const Tensor &a, const Tensor &b, string_view kernel)
{
    Tensor out = bmm_meta(a, b, kernel);
    gemm(a, b, out, 1.0, 0.0, kernel);
    return out;
}

Tensor &bmm_out_cuda(const Tensor &a, const Tensor &b, string_view kernel, Tensor &out)
{
    check_bmm(a, b, "bmm");
    gemm(a, b, out, 1.0, 0.0, kernel);
    return out;
}

// self broadcast into a fresh result, then beta * it + alpha * a @ b.
Tensor baddbmm_cuda(const Tensor &self, const Tensor &a, const Tensor &b, double beta, double alpha,
                    string_view kernel)
{
    Tensor out = baddbmm_meta(self, a, b, beta, alpha, kernel);
    if (beta != 0.0) out.copy_(self.expand(out.sizes()));
    gemm(a, b, out, alpha, beta, kernel);
    return out;
}

Tensor matmul_cuda(const Tensor &a, const Tensor &b, double alpha, string_view kernel)
{
    Tensor out = matmul_meta(a, b, alpha, kernel);
    gemm(a, b, out, alpha, 0.0, kernel);
    return out;
}

void matmul_out_cuda(const Tensor &a, const Tensor &b, const Tensor &out, double alpha, double beta,
                     string_view kernel)
{
    gemm(a, b, out, alpha, beta, kernel);
}

Tensor nt_cuda(const Tensor &a, const Tensor &b, double alpha, string_view kernel)
{
    check_nt(a, b);
    return matmul_cuda(a, b.t(), alpha, kernel);
}

Tensor linear_cuda(const Tensor &x, const Tensor &w, const std::optional<Tensor> &bias, string_view kernel)
{
    check_linear(x, w, bias);
    Tensor x2 = as_rows(x), wt = w.t();
    Tensor out = new_product(x2, wt);
    const Tensor *b = bias && bias->defined() ? &*bias : nullptr;
    if (!gemm(x2, wt, out, 1.0, 0.0, kernel, b) && b != nullptr) out.add_(*b);
    return x.dim() == 1 ? out.squeeze(0) : out;
}

// act(x @ w.T + bias), fused where fuses_epilogue takes it, else the product
// and then torch's bias add and activation. With a gradient to record, the
// autograd kernel (linear_act_autograd) runs linear and torch's activation
// instead: the fused epilogue keeps no pre-activation for the backward.
hgemm_activation activation_of(string_view name)
{
    if (name == "none") return HGEMM_ACTIVATION_NONE;
    if (name == "relu") return HGEMM_ACTIVATION_RELU;
    if (name == "gelu") return HGEMM_ACTIVATION_GELU_ERF;
    if (name == "gelu_tanh") return HGEMM_ACTIVATION_GELU_TANH;
    if (name == "silu") return HGEMM_ACTIVATION_SILU;
    TORCH_CHECK_VALUE(false, "hgemm::linear_act: activation \"", std::string(name),
                      "\" is not one of none, relu, gelu (erf, torch's default), gelu_tanh, silu");
}

Tensor linear_act_meta(const Tensor &x, const Tensor &w, const std::optional<Tensor> &bias, string_view activation,
                       string_view kernel)
{
    activation_of(activation);
    return linear_meta(x, w, bias, kernel);
}

Tensor linear_act_cuda(const Tensor &x, const Tensor &w, const std::optional<Tensor> &bias, string_view activation,
                       string_view kernel)
{
    const hgemm_activation act = activation_of(activation);
    check_linear(x, w, bias);
    Tensor x2 = as_rows(x), wt = w.t();
    Tensor out = new_product(x2, wt);
    const Tensor *b = bias && bias->defined() ? &*bias : nullptr;
    if (!gemm(x2, wt, out, 1.0, 0.0, kernel, b, act)) {
        if (b != nullptr) out.add_(*b);
        switch (act) {
        case HGEMM_ACTIVATION_RELU: out.relu_(); break;
        case HGEMM_ACTIVATION_GELU_ERF: out.copy_(at::gelu(out)); break;
        case HGEMM_ACTIVATION_GELU_TANH: out.copy_(at::gelu(out, "tanh")); break;
        case HGEMM_ACTIVATION_SILU: out.copy_(at::silu(out)); break;
        default: break;
        }
    }
    return x.dim() == 1 ? out.squeeze(0) : out;
}

// --- autograd -------------------------------------------------------------------

// The ops below autograd, through the dispatcher (so that tracing sees them).
Tensor call_mm(const Tensor &a, const Tensor &b, string_view kernel)
{
    static auto op = c10::Dispatcher::singleton().findSchemaOrThrow("hgemm::mm", "").typed<Tensor(
        const Tensor &, const Tensor &, string_view)>();
    return op.call(a, b, kernel);
}

Tensor call_bmm(const Tensor &a, const Tensor &b, string_view kernel)
{
    static auto op = c10::Dispatcher::singleton().findSchemaOrThrow("hgemm::bmm", "").typed<Tensor(
        const Tensor &, const Tensor &, string_view)>();
    return op.call(a, b, kernel);
}

Tensor call_linear(const Tensor &x, const Tensor &w, const std::optional<Tensor> &bias, string_view kernel)
{
    static auto op = c10::Dispatcher::singleton().findSchemaOrThrow("hgemm::linear", "").typed<Tensor(
        const Tensor &, const Tensor &, const std::optional<Tensor> &, string_view)>();
    return op.call(x, w, bias, kernel);
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// A gradient as hgemm reads it: contiguous rows whose length is a multiple of
// 8, else copied into padded rows (an n % 8 != 0 layer's dense gradient).
Tensor rows_ready(const Tensor &g)
{
    if (g.is_contiguous() && g.sym_size(-1) % HGEMM_PLAN_ALIGN == 0) return g;
    Tensor p = new_result(g.sym_sizes(), g);
    p.copy_(g);
    return p;
}

// mm and bmm: dA = dC B^T, dB = A^T dC (transposed views: the NT/TN forms).
template <bool Batched>
struct ProductFunction : public torch::autograd::Function<ProductFunction<Batched>> {
    static Tensor forward(AutogradContext *ctx, const Tensor &a, const Tensor &b, string_view kernel)
    {
        at::AutoDispatchBelowADInplaceOrView guard;
        ctx->saved_data["kernel"] = std::string(kernel);
        ctx->save_for_backward({a, b});
        return Batched ? call_bmm(a, b, kernel) : call_mm(a, b, kernel);
    }

    static variable_list backward(AutogradContext *ctx, variable_list grads)
    {
        auto saved = ctx->get_saved_variables();
        std::string kernel = ctx->saved_data["kernel"].toStringRef();
        const Tensor &a = saved[0], &b = saved[1];
        Tensor g = rows_ready(grads[0]), da, db;
        if (ctx->needs_input_grad(0))
            da = Batched ? call_bmm(g, b.transpose(-1, -2), kernel) : call_mm(g, b.t(), kernel);
        if (ctx->needs_input_grad(1))
            db = Batched ? call_bmm(a.transpose(-1, -2), g, kernel) : call_mm(a.t(), g, kernel);
        return {da, db, Tensor()};
    }
};

// linear: dX = dY W (NN), dW = dY^T X (TN, fp32 accumulation), dbias = sum dY.
struct LinearFunction : public torch::autograd::Function<LinearFunction> {
    static Tensor forward(AutogradContext *ctx, const Tensor &x, const Tensor &w, const std::optional<Tensor> &bias,
                          string_view kernel)
    {
        at::AutoDispatchBelowADInplaceOrView guard;
        ctx->saved_data["kernel"] = std::string(kernel);
        ctx->saved_data["bias"] = bias.has_value() && bias->defined();
        ctx->save_for_backward({x, w});
        return call_linear(x, w, bias, kernel);
    }

    static variable_list backward(AutogradContext *ctx, variable_list grads)
    {
        auto saved = ctx->get_saved_variables();
        std::string kernel = ctx->saved_data["kernel"].toStringRef();
        const Tensor &x = saved[0], &w = saved[1];
        Tensor g = grads[0].dim() == 1 ? grads[0].unsqueeze(0) : grads[0].flatten(0, -2);
        g = rows_ready(g);
        Tensor dx, dw, db;
        if (ctx->needs_input_grad(0)) dx = call_mm(g, w, kernel).reshape_symint(x.sym_sizes());
        if (ctx->needs_input_grad(1)) {
            Tensor x2 = x.dim() == 1 ? x.unsqueeze(0) : x.flatten(0, -2);
            dw = call_mm(g.t(), x2, kernel);
        }
        // needs_input_grad counts the tensors given: index 2 exists only with a bias
        if (ctx->saved_data["bias"].toBool() && ctx->needs_input_grad(2)) db = g.sum(0);
        return {dx, dw, db, Tensor()};
    }
};

Tensor mm_autograd(const Tensor &a, const Tensor &b, string_view kernel)
{
    return ProductFunction<false>::apply(a, b, kernel);
}

Tensor bmm_autograd(const Tensor &a, const Tensor &b, string_view kernel)
{
    return ProductFunction<true>::apply(a, b, kernel);
}

Tensor linear_autograd(const Tensor &x, const Tensor &w, const std::optional<Tensor> &bias, string_view kernel)
{
    return LinearFunction::apply(x, w, bias, kernel);
}

Tensor linear_act_autograd(const Tensor &x, const Tensor &w, const std::optional<Tensor> &bias,
                           string_view activation, string_view kernel)
{
    const hgemm_activation act = activation_of(activation);
    const bool grad = at::GradMode::is_enabled() &&
                      (x.requires_grad() || w.requires_grad() || (bias && bias->defined() && bias->requires_grad()));
    if (!grad) {  // the fused op, below autograd
        static auto op = c10::Dispatcher::singleton().findSchemaOrThrow("hgemm::linear_act", "").typed<Tensor(
            const Tensor &, const Tensor &, const std::optional<Tensor> &, string_view, string_view)>();
        at::AutoDispatchBelowADInplaceOrView below;
        return op.call(x, w, bias, activation, kernel);
    }
    Tensor y = LinearFunction::apply(x, w, bias, kernel);
    switch (act) {
    case HGEMM_ACTIVATION_RELU: return at::relu(y);
    case HGEMM_ACTIVATION_GELU_ERF: return at::gelu(y);
    case HGEMM_ACTIVATION_GELU_TANH: return at::gelu(y, "tanh");
    case HGEMM_ACTIVATION_SILU: return at::silu(y);
    default: return y;
    }
}

}  // namespace

// Tensors in host memory: a TypeError that names the argument, for every op.
void hgemm_refuse_cpu(const c10::OperatorHandle &op, torch::jit::Stack *stack)
{
    const auto &args = op.schema().arguments();
    size_t first = stack->size() - args.size();
    for (size_t i = 0; i < args.size(); i++) {
        const c10::IValue &v = (*stack)[first + i];
        if (v.isTensor() && !v.toTensor().is_cuda())
            TORCH_CHECK_TYPE(false, op.schema().name(), ": ", args[i].name(), ": expected a CUDA tensor, got one on ",
                             v.toTensor().device());
    }
    TORCH_CHECK_TYPE(false, op.schema().name(), ": expected CUDA tensors");
}

TORCH_LIBRARY(hgemm, m)
{
    m.def("mm(Tensor a, Tensor b, *, str kernel_name=\"auto\") -> Tensor");
    m.def("mm.out(Tensor a, Tensor b, *, str kernel_name=\"auto\", Tensor(a!) out) -> Tensor(a!)");
    m.def("bmm(Tensor a, Tensor b, *, str kernel_name=\"auto\") -> Tensor");
    m.def("bmm.out(Tensor a, Tensor b, *, str kernel_name=\"auto\", Tensor(a!) out) -> Tensor(a!)");
    m.def("baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, float beta=1.0, float alpha=1.0, "
          "str kernel_name=\"auto\") -> Tensor");
    m.def("linear(Tensor input, Tensor weight, Tensor? bias=None, *, str kernel_name=\"auto\") -> Tensor");
    m.def("linear_act(Tensor input, Tensor weight, Tensor? bias=None, *, str activation, "
          "str kernel_name=\"auto\") -> Tensor");
    m.def("matmul(Tensor a, Tensor b, float alpha=1.0, str kernel_name=\"auto\") -> Tensor");
    m.def("matmul_out(Tensor a, Tensor b, Tensor(a!) out, float alpha=1.0, float beta=0.0, "
          "str kernel_name=\"auto\") -> ()");
    m.def("nt(Tensor a, Tensor b, float alpha=1.0, str kernel_name=\"auto\") -> Tensor");
}

TORCH_LIBRARY_IMPL(hgemm, CUDA, m)
{
    m.impl("mm", &mm_cuda);
    m.impl("mm.out", &mm_out_cuda);
    m.impl("bmm", &bmm_cuda);
    m.impl("bmm.out", &bmm_out_cuda);
    m.impl("baddbmm", &baddbmm_cuda);
    m.impl("linear", &linear_cuda);
    m.impl("linear_act", &linear_act_cuda);
    m.impl("matmul", &matmul_cuda);
    m.impl("matmul_out", &matmul_out_cuda);
    m.impl("nt", &nt_cuda);
}

TORCH_LIBRARY_IMPL(hgemm, Meta, m)
{
    m.impl("mm", &mm_meta);
    m.impl("mm.out", &mm_out_meta);
    m.impl("bmm", &bmm_meta);
    m.impl("bmm.out", &bmm_out_meta);
    m.impl("baddbmm", &baddbmm_meta);
    m.impl("linear", &linear_meta);
    m.impl("linear_act", &linear_act_meta);
    m.impl("matmul", &matmul_meta);
    m.impl("matmul_out", &matmul_out_meta);
    m.impl("nt", &nt_meta);
}

TORCH_LIBRARY_IMPL(hgemm, CPU, m)
{
    for (const char *name :
         {"mm", "mm.out", "bmm", "bmm.out", "baddbmm", "linear", "linear_act", "matmul", "matmul_out", "nt"})
        m.impl(name, torch::CppFunction::makeFromBoxedFunction<&hgemm_refuse_cpu>());
}

TORCH_LIBRARY_IMPL(hgemm, Autograd, m)
{
    m.impl("mm", &mm_autograd);
    m.impl("bmm", &bmm_autograd);
    m.impl("linear", &linear_autograd);
    m.impl("linear_act", &linear_act_autograd);
}
