"""hgemm.nn: nn.Linear through hgemm.

    layer = hgemm.nn.Linear(4096, 4096, bias=False, device="cuda", dtype=torch.bfloat16)
    report = hgemm.nn.swap_linears(model)    # every nn.Linear of a model, in place

Linear is torch.nn.Linear (the same parameters, initialisation and
state_dict) whose forward runs torch.ops.hgemm.linear, with autograd. It
needs the native operators (hgemm.native_ops()).

Mixed-precision training that keeps an fp32 copy of each weight's gradient
(Megatron's `weight.main_grad`): where the weight has a `main_grad`
attribute (an fp32 tensor of its shape), the backward adds dW into it in
place, in fp32 (torch.ops.hgemm.wgrad_accumulate_), and leaves weight.grad
None, so the 16-bit gradient is never formed.
"""
from . import _torch

torch = _torch.torch
if torch is None:
    raise ImportError("hgemm.nn needs torch")

_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", lambda: False)


_ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "silu")
_ACT_FNS = {"relu": torch.relu, "gelu": torch.nn.functional.gelu,
            "gelu_tanh": lambda y: torch.nn.functional.gelu(y, approximate="tanh"),
            "silu": torch.nn.functional.silu}


def _rows_ready(g):
    """g as (tokens, cols) rows hgemm reads: contiguous, cols padded to 8 where needed."""
    g = g.reshape(-1, g.shape[-1])
    if g.is_contiguous() and g.shape[-1] % 8 == 0:
        return g
    padded = torch.empty(g.shape[0], (g.shape[-1] + 7) // 8 * 8, device=g.device, dtype=g.dtype)
    padded[:, :g.shape[-1]].copy_(g)
    return padded[:, :g.shape[-1]]


class _LinearMainGrad(torch.autograd.Function):
    """linear whose weight gradient goes into weight.main_grad (fp32, in place)."""

    @staticmethod
    def forward(ctx, x, weight, bias, kernel):
        ctx.save_for_backward(x, weight)
        ctx.has_bias, ctx.kernel = bias is not None, kernel
        return torch.ops.hgemm.linear(x, weight, bias, kernel_name=kernel)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        g = _rows_ready(grad)
        dx = db = None
        if ctx.needs_input_grad[0]:
            dx = torch.ops.hgemm.mm(g, weight, kernel_name=ctx.kernel).reshape(x.shape)
        if ctx.needs_input_grad[1]:
            torch.ops.hgemm.wgrad_accumulate_(weight.main_grad, g, x.reshape(-1, x.shape[-1]))
        if ctx.has_bias and ctx.needs_input_grad[2]:
            db = g.sum(0)
        return dx, None, db, None


class Linear(torch.nn.Linear):
    """torch.nn.Linear whose product is hgemm's (fp32 accumulation, AUTO's kernel).

    Parameters must be fp16 or bf16 on an sm_90 GPU, in_features a multiple of
    8; the input the same type as the weight. `activation` ("relu", "gelu"
    (erf), "gelu_tanh", "silu"; None: none) follows the product, fused into
    it where no gradient is recorded (hgemm.functional.linear)."""

    kernel = "auto"
    activation = None

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None, *, activation=None):
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        if activation is not None and activation != "none":
            if activation not in _ACTIVATIONS:
                raise ValueError("activation %r: one of %s, or None" % (activation, ", ".join(_ACTIVATIONS)))
            self.activation = activation

    def extra_repr(self):
        r = super().extra_repr()
        return r + (", activation=%s" % self.activation if self.activation else "")

    def forward(self, input):
        if _torch._native_linear is None:
            raise RuntimeError("hgemm.nn.Linear needs hgemm's native torch operators, which are not "
                               "loaded: %s" % _torch.native_missing)
        if getattr(self.weight, "main_grad", None) is not None and self.weight.requires_grad \
                and torch.is_grad_enabled():
            y = _LinearMainGrad.apply(input, self.weight, self.bias, self.kernel)
            if self.activation:
                y = _ACT_FNS[self.activation](y)
            return y if self.out_features % 8 == 0 else y.contiguous()
        if self.activation:
            y = torch.ops.hgemm.linear_act(input, self.weight, self.bias, activation=self.activation,
                                           kernel_name=self.kernel)
            return y if self.out_features % 8 == 0 else y.contiguous()
        # dynamo traces the OpOverload; eager calls its C++ entry (one Python frame less)
        op = torch.ops.hgemm.linear.default if _compiling() else _torch._native_linear
        if self.kernel == "auto":
            y = op(input, self.weight, self.bias)
        else:
            y = op(input, self.weight, self.bias, kernel_name=self.kernel)
        # out_features % 8 != 0: hgemm writes rows padded to 8; nn.Linear's result is dense.
        return y if self.out_features % 8 == 0 else y.contiguous()


def _why_not(module):
    """Why a torch.nn.Linear cannot run on hgemm, or None."""
    w = module.weight
    if w.dtype not in (torch.float16, torch.bfloat16):
        return "weight is %s (hgemm takes float16 and bfloat16)" % w.dtype
    if not w.is_cuda:
        return "weight is on %s" % w.device
    if module.in_features % 8:
        return "in_features %d is not a multiple of 8 (hgemm's leading dimensions)" % module.in_features
    return None


def swap_linears(model, *, kernel="auto"):
    """Make every torch.nn.Linear of `model` (the model itself included) an
    hgemm.nn.Linear, in place: the same module objects and parameters (tied
    weights stay tied, hooks stay), only the forward changes. Subclasses of
    nn.Linear are left alone, as are layers hgemm cannot take.

    Returns (swapped, skipped): the qualified names swapped, and a dict of the
    names left alone with the reason."""
    if _torch.native_path is None:
        raise RuntimeError("hgemm.nn.swap_linears needs hgemm's native torch operators, which are "
                           "not loaded: %s" % _torch.native_missing)
    swapped, skipped = [], {}
    for name, module in model.named_modules():
        if type(module) is not torch.nn.Linear:
            continue
        why = _why_not(module)
        if why:
            skipped[name] = why
            continue
        module.__class__ = Linear
        if kernel != Linear.kernel:
            module.kernel = kernel
        swapped.append(name)
    return swapped, skipped
