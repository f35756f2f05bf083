"""hgemm.functional: torch's products through hgemm's native operators, with autograd.

    y = hgemm.functional.linear(x, w, b)     # F.linear: x @ w.T + b
    y = hgemm.functional.linear(x, w, b, activation="gelu_tanh")   # F.gelu(F.linear(...), approximate="tanh")
    c = hgemm.functional.mm(a, b)            # torch.mm; a transposed view is read in place
    c = hgemm.functional.bmm(a, b)           # torch.bmm
    y = hgemm.functional.grouped_mm(x, w, offs=offs)   # F.grouped_mm's 2D x 3D form (MoE experts)
    y = hgemm.functional.scaled_mm(a8, b8.t(), sa, sb)  # torch._scaled_mm (FP8, no autograd)
    hgemm.functional.wgrad_accumulate_(main_grad, dy, x)  # main_grad (fp32) += dy^T x, in place

fp16 or bf16 CUDA tensors of one type, fp32 accumulation (kernel="auto"),
on torch's current stream. Gradients: dX = dY W through hgemm's NN form,
dW = dY^T X through its TN form, the bias gradient as torch sums it. These
need the native operators (libhgemm_torch.so, built by `pip install .` or
the CMake build where torch is installed); hgemm.native_ops() says whether
they are loaded, and why not.
"""
from . import _torch


def _ops():
    if _torch.native_path is None:
        raise RuntimeError("hgemm.functional needs hgemm's native torch operators, which are not "
                           "loaded: %s" % _torch.native_missing)
    return _torch.torch.ops.hgemm


def linear(input, weight, bias=None, *, activation=None, kernel="auto"):
    """F.linear through hgemm: input (..., in_features) @ weight.T + bias, then
    `activation` if given: "relu", "gelu" (erf, F.gelu's default), "gelu_tanh"
    or "silu". Without a gradient to record, the bias and the activation run
    in hgemm's fused epilogue where AUTO runs V8 (both sides over 64, m * n
    over 2^20, k up to 8192), as passes of their own elsewhere; with one, the
    activation is torch's, after the product."""
    if activation is None or activation == "none":
        return _ops().linear(input, weight, bias, kernel_name=kernel)
    return _ops().linear_act(input, weight, bias, activation=activation, kernel_name=kernel)


def mm(a, b, *, kernel="auto"):
    """torch.mm through hgemm: a (m, k) @ b (k, n)."""
    return _ops().mm(a, b, kernel_name=kernel)


def bmm(a, b, *, kernel="auto"):
    """torch.bmm through hgemm: a (B, m, k) @ b (B, k, n)."""
    return _ops().bmm(a, b, kernel_name=kernel)


def grouped_mm(a, b, *, offs, out_dtype=None):
    """torch.nn.functional.grouped_mm through hgemm, one launch for every
    group, offs (groups,) int32 cumulative ends on a's device:
    - 2D x 3D: a (total_rows, k), b (groups, k, n); rows offs[g-1]:offs[g]
      of the result are a[offs[g-1]:offs[g]] @ b[g] (rows past offs[-1]
      unspecified, as torch's). b[g] is read as stored (k or n contiguous: an
      expert weight stored (n, k) passed as w.transpose(-2, -1) is not copied).
    - 2D x 2D, grouped along k: a (m, total_k), b (total_k, n); the result
      (groups, m, n) holds a[:, rows of g] @ b[rows of g] (zeros for an empty
      group): the experts' weight gradients, dY.t() and X as torch passes them.

    With a gradient to record, no host synchronization either way. 2D x 3D:
    da through the grouped product (dy @ b[g]^T, zero past offs[-1]), db
    through the product grouped along the rows. 2D x 2D: each input's
    gradient through the 2D x 3D product (zero past offs[-1])."""
    torch = _torch.torch
    grad = torch.is_grad_enabled() and (a.requires_grad or b.requires_grad)
    if a.dim() == 2 and b.dim() == 2:
        if out_dtype is not None and out_dtype != a.dtype:
            raise TypeError("hgemm.functional.grouped_mm: out_dtype %s: only the inputs' type (%s) is served"
                            % (out_dtype, a.dtype))
        if grad:
            return _GroupedMMK.apply(a, b, offs)
        return _ops().grouped_mm_k(a.t(), b, offs)
    if grad:
        return _GroupedMM.apply(a, b, offs, out_dtype)
    return _ops().grouped_mm(a, b, offs, out_dtype=out_dtype)


def scaled_mm(a, b, scale_a, scale_b, *, out_dtype=None):
    """torch._scaled_mm through hgemm: a (m, k) row-major and b (k, n)
    column-major, float8_e4m3fn (or one of them float8_e5m2), fp32 scales
    whose shapes choose the mode as torch's do: one value each, (m, 1) and
    (1, n), or 1 x 128 and 128 x 128 blocks (quantize_fp8's layouts, which
    are torch's). out_dtype: torch.bfloat16 (default), float16 or float32.
    No gradient."""
    return _ops().scaled_mm(a, b, scale_a, scale_b, out_dtype=out_dtype)


def grouped_scaled_mm(a, b, scale_a, scale_b, *, offs, out_dtype=None):
    """FP8 experts in one launch (hgemm_grouped_fp8): a (total_rows, k) and
    b (groups, k, n), float8_e4m3fn, each b[g] column-major (an expert's
    (n, k) weight transposed, as torch._scaled_grouped_mm takes it); offs
    (groups,) int32 cumulative ends on a's device. The scales choose the
    mode: a's one value and b's (groups,); a's (total_rows,) and b's
    (groups, n) (torch._scaled_grouped_mm's rowwise scales); or a's 1 x 128
    blocks (quantize_fp8's (total_rows, ceil(k/128)) layout) and b's 128 x 128
    blocks per group, (groups, ceil(k/128), ceil(n/128)), each group's the
    transposed view quantize_fp8 returns for that expert. out_dtype:
    torch.bfloat16 (default), float16 or float32. Rows past offs[-1] are
    left as allocated. No gradient."""
    return _ops().grouped_scaled_mm(a, b, scale_a, scale_b, offs, out_dtype=out_dtype)


def quantize_fp8(x, block=(1, 128), dtype=None):
    """x (rows, cols), any float type, to fp8 with one fp32 scale per block
    of `block` (rows x cols: (1, 128) for activations, (128, 128) for
    weights, (1, cols) per row, or None: one for the tensor), on x's device:
    returns (q, scale) with x ~= q * scale blockwise. Each block's largest
    magnitude maps to the type's largest finite value.

    The scale's layout is what torch._scaled_mm and scaled_mm take for the
    operand x will be: for an activation a (m, k) with (1, 128), an (m,
    ceil(k/128)) tensor of strides (1, m); for a weight w (n, k) with
    (128, 128), a (ceil(n/128), ceil(k/128)) row-major tensor, to be passed
    transposed beside w.t()."""
    torch = _torch.torch
    dtype = dtype or torch.float8_e4m3fn
    top = torch.finfo(dtype).max
    x32 = x.float()
    rows, cols = x32.shape
    if block is None:
        scale = (x32.abs().amax().clamp(min=1e-12) / top).reshape(())
        return (x32 / scale).to(dtype), scale.float()
    br, bc = block
    br = min(br, rows) if br == 1 else br
    pr, pc = -rows % br, -cols % bc
    padded = torch.nn.functional.pad(x32, (0, pc, 0, pr))
    tiles = padded.reshape((rows + pr) // br, br, (cols + pc) // bc, bc)
    amax = tiles.abs().amax(dim=(1, 3)).clamp(min=1e-12)  # (row blocks, col blocks)
    scale = amax / top
    q = (tiles / scale[:, None, :, None]).reshape(rows + pr, cols + pc)[:rows, :cols].to(dtype)
    if br == 1 and bc == cols:  # per row
        return q, scale.reshape(rows, 1).contiguous()
    if br == 1:  # activations: (m, kb), m-major
        return q, scale.t().contiguous().t()
    return q, scale.contiguous()


def _past_groups_zeroed(x, offs):
    """x (rows, cols) with the rows past every group (offs' largest end) zeroed, no host sync."""
    torch = _torch.torch
    last = offs.max().clamp(min=0).long()
    rows = torch.arange(x.shape[0], device=x.device)
    return x.masked_fill((rows >= last).unsqueeze(1), 0)


def _grouped_backward(a, b, offs, dy, need_a, need_b):
    ops = _ops()
    da = db = None
    if need_a:
        da = _past_groups_zeroed(ops.grouped_mm(dy, b.transpose(-2, -1), offs), offs)
    if need_b:  # every expert's a_g^T dy_g in one launch, grouped along the rows; no host sync
        db = ops.grouped_mm_k(a, dy, offs)
    return da, db


if _torch.torch is not None:
    class _GroupedMM(_torch.torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, offs, out_dtype):
            ctx.save_for_backward(a, b, offs)
            return _ops().grouped_mm(a, b, offs, out_dtype=out_dtype)

        @staticmethod
        def backward(ctx, dy):
            a, b, offs = ctx.saved_tensors
            da, db = _grouped_backward(a, b, offs, dy, ctx.needs_input_grad[0], ctx.needs_input_grad[1])
            return da, db, None, None

    class _GroupedMMK(_torch.torch.autograd.Function):
        """out[g] = a[:, rows of g] @ b[rows of g]; for a row r of group g,
        da[:, r] = dout[g] @ b[r]^T and db[r] = a[:, r]^T dout[g]: both the
        2D x 3D grouped product over the rows."""

        @staticmethod
        def forward(ctx, a, b, offs):
            ctx.save_for_backward(a, b, offs)
            return _ops().grouped_mm_k(a.t(), b, offs)

        @staticmethod
        def backward(ctx, dout):
            a, b, offs = ctx.saved_tensors
            ops = _ops()
            da = db = None
            if ctx.needs_input_grad[0]:  # (total, m) rows, then a's (m, total) view
                da = _past_groups_zeroed(ops.grouped_mm(b, dout.transpose(-2, -1), offs), offs).t()
            if ctx.needs_input_grad[1]:
                db = _past_groups_zeroed(ops.grouped_mm(a.t(), dout, offs), offs)
            return da, db, None


def wgrad_accumulate_(main_grad, grad_output, input):
    """main_grad += grad_output^T @ input, in place, in fp32: the weight
    gradient of a linear layer added into the fp32 buffer mixed-precision
    training keeps (Megatron's main_grad). main_grad (out, in) float32,
    contiguous, in % 8 == 0; grad_output (..., out) and input (..., in) fp16
    or bf16 of one type, their leading dimensions the tokens. One hgemm call
    (the TN form, fp32 C, beta 1): the 16-bit product is never rounded."""
    _ops().wgrad_accumulate_(main_grad, grad_output, input)
