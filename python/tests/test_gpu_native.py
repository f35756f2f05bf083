"""GPU tests of the native torch operators (python/hgemm/csrc/ops.cpp):
torch.ops.hgemm.mm/bmm/baddbmm/linear, their autograd, hgemm.nn and
torch.compile, against fp64 references computed from the same inputs.

Tolerances: atol 1e-2 and rtol 1e-2 on unit-variance outputs (fp32
accumulation, one rounding to fp16/bf16 at 2^-8 relative for bf16: 1e-2 of
rtol covers it). Skips without torch, an sm_90 GPU or the native operators.
"""
import unittest

import hgemm
import test_gpu  # (a module: its TestCases are not collected twice)

try:  # submodules, imported by name as users do; they need torch (the tests skip without it)
    import hgemm.functional
    import hgemm.nn
except ImportError:
    pass

ATOL = 1e-2  # and test_gpu.RTOL, 1e-2
# bf16 keeps 8 bits: its rounding of a unit-variance value reaches 4e-3
# absolute; a gradient summed over many rows is compared with a scaled atol.
DTYPES = ("float16", "bfloat16")


class NativeOpsTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        test_gpu.TorchTests.setUpClass.__func__(cls)  # torch, an sm_90 GPU, the seed
        path, why = hgemm.native_ops()
        if path is None:
            raise unittest.SkipTest("hgemm's native torch operators are not built: %s" % why)
        cls.ops = cls.torch.ops.hgemm

    def randn(self, *shape, k, dtype="float16"):
        torch = self.torch
        return (torch.randn(*shape, device="cuda", dtype=torch.float64) * max(k, 1) ** -0.25).to(getattr(torch, dtype))

    def assertClose(self, got, ref, what, atol=ATOL):
        test_gpu.assert_torch_close(self, got, ref, atol, what)
        self.torch.cuda.synchronize()

    def test_mm_every_layout(self):
        for dtype in DTYPES:
            for m, n, k in ((129, 264, 72), (1, 4096, 4096), (64, 13, 520), (200, 200, 0)):
                for ta in (False, True):
                    for tb in (False, True):
                        if ta and m % 8:
                            continue  # a transposed a of m rows needs ld = m, a multiple of 8
                        if (tb and k % 8) or (not tb and n % 8):
                            continue  # b's leading dimension (k or n) must be a multiple of 8
                        a = self.randn(k, m, k=k, dtype=dtype).t() if ta else self.randn(m, k, k=k, dtype=dtype)
                        b = self.randn(n, k, k=k, dtype=dtype).t() if tb else self.randn(k, n, k=k, dtype=dtype)
                        c = self.ops.mm(a, b)
                        self.assertEqual(c.dtype, a.dtype)
                        what = "mm %s %dx%dx%d a%s b%s" % (dtype, m, n, k, "T" if ta else "N", "T" if tb else "N")
                        self.assertClose(c, a.double() @ b.double(), what)

    def test_mm_out_guard_band_and_errors(self):
        torch = self.torch
        a, b = self.randn(130, 72, k=72), self.randn(72, 200, k=72)
        wide = torch.full((140, 216), float("nan"), device="cuda", dtype=torch.float16)
        out = wide[5:135, 8:208]
        self.assertIs(self.ops.mm(a, b, out=out), out)
        self.assertClose(out, a.double() @ b.double(), "mm.out into a slice")
        wide[5:135, 8:208] = 0
        self.assertTrue(torch.isnan(wide).sum().item() == 140 * 216 - 130 * 200, "mm.out wrote outside out")
        with self.assertRaisesRegex(TypeError, "float16 or bfloat16"):
            self.ops.mm(a.float(), b.float())
        with self.assertRaisesRegex(TypeError, "same type"):
            self.ops.mm(a, b.bfloat16())
        with self.assertRaisesRegex(ValueError, "neither its rows nor its columns"):
            self.ops.mm(self.randn(130, 144, k=72)[:, ::2], b)
        with self.assertRaisesRegex(ValueError, "must equal"):
            self.ops.mm(a, b.t())
        flat = torch.empty(130 * 72 + 8, dtype=torch.float16, device="cuda")
        with self.assertRaisesRegex(RuntimeError, "status 2"):  # HGEMM_ERROR_MISALIGNED
            self.ops.mm(flat[1:1 + 130 * 72].view(130, 72), b)
        with self.assertRaisesRegex(ValueError, "unknown kernel 'v99'"):
            self.ops.mm(a, b, kernel_name="v99")

    def test_bmm_baddbmm(self):
        torch = self.torch
        for dtype in DTYPES:
            a, b = self.randn(3, 136, 72, k=72, dtype=dtype), self.randn(3, 72, 200, k=72, dtype=dtype)
            ref = a.double() @ b.double()
            self.assertClose(self.ops.bmm(a, b), ref, "bmm " + dtype)
            self.assertClose(self.ops.bmm(a, b.transpose(1, 2).contiguous().transpose(1, 2)), ref, "bmm NT " + dtype)
            c = self.randn(3, 136, 200, k=1, dtype=dtype)
            got = self.ops.baddbmm(c, a, b, beta=0.5, alpha=2.0)
            self.assertClose(got, 2.0 * ref + 0.5 * c.double(), "baddbmm " + dtype)
            nan = torch.full_like(c, float("nan"))
            self.assertClose(self.ops.baddbmm(nan, a, b, beta=0.0), ref, "baddbmm beta 0 never reads self")
            bias = self.randn(200, k=1, dtype=dtype)
            self.assertClose(self.ops.baddbmm(bias, a, b), ref + bias.double(), "baddbmm broadcast self")

    def test_linear(self):
        torch = self.torch
        for dtype in DTYPES:
            x, w = self.randn(2, 65, 264, k=264, dtype=dtype), self.randn(520, 264, k=264, dtype=dtype)
            bias = self.randn(520, k=1, dtype=dtype)
            ref = x.double() @ w.double().t()
            y = self.ops.linear(x, w)
            self.assertTrue(y.is_contiguous())
            self.assertClose(y, ref, "linear " + dtype)
            yb = self.ops.linear(x, w, bias)
            self.assertClose(yb, ref + bias.double(), "linear bias " + dtype, atol=2 * ATOL)
            # where AUTO runs V8 (m * n > 2^20) the bias rides in the fused epilogue;
            # n = 1100 leaves a ragged last column tile, a sliced bias is not contiguous
            xl, wl = self.randn(3, 500, 384, k=384, dtype=dtype), self.randn(1100, 384, k=384, dtype=dtype)
            bl = self.randn(1100, k=1, dtype=dtype)
            refl = xl.double() @ wl.double().t() + bl.double()
            self.assertClose(self.ops.linear(xl, wl, bl), refl, "linear fused bias " + dtype, atol=2 * ATOL)
            wide = self.randn(2200, k=1, dtype=dtype)
            self.assertClose(self.ops.linear(xl, wl, wide[::2]), xl.double() @ wl.double().t() + wide[::2].double(),
                             "linear strided bias " + dtype, atol=2 * ATOL)
            self.assertClose(self.ops.linear(x[0, 0], w), ref[0, 0], "linear of a vector")
            self.assertClose(hgemm.linear(x, w), ref, "hgemm.linear " + dtype)
            odd = self.randn(13, 264, k=264, dtype=dtype)
            self.assertClose(self.ops.linear(x, odd), x.double() @ odd.double().t(), "linear n = 13")
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            y = self.ops.linear(x, w)
        side.synchronize()
        self.assertClose(y, ref, "linear on a side stream")

    def test_linear_act(self):
        torch = self.torch
        F = torch.nn.functional
        acts = {"relu": F.relu, "gelu": F.gelu, "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
                "silu": F.silu, "none": lambda t: t}
        for dtype in DTYPES:
            # fused (AUTO's V8: m * n > 2^20), ragged n; and decode, the product then torch's passes
            shapes = [((3, 500, 384), 1100), ((4, 384), 1024)]
            for xs, n in shapes:
                k = xs[-1]
                x, w, b = self.randn(*xs, k=k, dtype=dtype), self.randn(n, k, k=k, dtype=dtype), self.randn(n, k=1, dtype=dtype)
                pre = x.double() @ w.double().t() + b.double()
                for name, f in acts.items():
                    what = "linear_act %s %s %s" % (name, dtype, "x".join(map(str, xs)))
                    self.assertClose(self.ops.linear_act(x, w, b, activation=name), f(pre), what, atol=2 * ATOL)
                    self.assertClose(hgemm.functional.linear(x, w, None, activation=name),
                                     f(x.double() @ w.double().t()), what + " no bias", atol=2 * ATOL)
            with self.assertRaisesRegex(ValueError, "gelu_tanh"):
                self.ops.linear_act(x, w, b, activation="tanh")
            # with a gradient to record: linear, then torch's activation, whose backward runs
            x = self.randn(2, 300, 136, k=136, dtype=dtype).requires_grad_()
            w = self.randn(4000, 136, k=136, dtype=dtype).requires_grad_()
            g = self.randn(2, 300, 4000, k=1, dtype=dtype)
            y = hgemm.functional.linear(x, w, activation="gelu_tanh")
            self.assertIsNotNone(y.grad_fn)
            y.backward(g)
            x64, w64 = x.detach().double().requires_grad_(), w.detach().double().requires_grad_()
            F.gelu(x64 @ w64.t(), approximate="tanh").backward(g.double())
            # the activation's backward runs in the input's dtype: judged beside torch's own
            xt, wt = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
            F.gelu(F.linear(xt, wt), approximate="tanh").backward(g)
            test_gpu.assert_error_like_torch(self, x.grad, xt.grad, x64.grad, "linear_act dX " + dtype)
            test_gpu.assert_error_like_torch(self, w.grad, wt.grad, w64.grad, "linear_act dW " + dtype)

    def test_nn_linear_activation(self):
        torch = self.torch
        F = torch.nn.functional
        for dtype in DTYPES:
            layer = hgemm.nn.Linear(384, 1100, device="cuda", dtype=getattr(torch, dtype), activation="gelu_tanh")
            self.assertIn("activation=gelu_tanh", repr(layer))
            x = self.randn(3, 500, 384, k=384, dtype=dtype)
            w, b = layer.weight.detach().double(), layer.bias.detach().double()
            want = F.gelu(x.double() @ w.t() + b, approximate="tanh")
            with torch.no_grad():
                self.assertClose(layer(x), want, "nn.Linear gelu_tanh fused " + dtype, atol=2 * ATOL)
            # with a gradient: the activation's backward runs, the grads match fp64
            xg = x.detach().requires_grad_()
            g = self.randn(3, 500, 1100, k=1, dtype=dtype)
            layer(xg).backward(g)
            x64 = x.detach().double().requires_grad_()
            w64, b64 = w.clone().requires_grad_(), b.clone().requires_grad_()
            F.gelu(x64 @ w64.t() + b64, approximate="tanh").backward(g.double())
            self.assertClose(xg.grad, x64.grad, "nn.Linear activation dX " + dtype, atol=2 * ATOL)
            self.assertClose(layer.weight.grad, w64.grad, "nn.Linear activation dW " + dtype,
                             atol=ATOL * 1500 ** 0.5)
            self.assertClose(layer.bias.grad, b64.grad, "nn.Linear activation db " + dtype,
                             atol=ATOL * 1500 ** 0.5)
        with self.assertRaisesRegex(ValueError, "gelu_tanh"):
            hgemm.nn.Linear(8, 8, activation="tanh")

    def test_grouped_mm(self):
        torch = self.torch
        for dtype in DTYPES:
            groups, k, n = 6, 264, 520
            offs = torch.tensor([0, 1, 130, 300, 300, 700], device="cuda", dtype=torch.int32)
            a = self.randn(760, k, k=k, dtype=dtype)  # rows 700..759 in no group
            w = self.randn(groups, n, k, k=k, dtype=dtype)  # experts stored (n, k)
            for b, how in ((w.transpose(-2, -1), "k contiguous"), (w.transpose(-2, -1).contiguous(), "n contiguous")):
                out = hgemm.functional.grouped_mm(a, b, offs=offs)
                self.assertEqual(tuple(out.shape), (760, n))
                ends = [0] + offs.tolist()
                for g in range(groups):
                    r0, r1 = ends[g], ends[g + 1]
                    if r1 > r0:
                        self.assertClose(out[r0:r1], a[r0:r1].double() @ b[g].double(),
                                         "grouped_mm %s %s group %d" % (dtype, how, g))
            with self.assertRaisesRegex(TypeError, "int32"):
                hgemm.functional.grouped_mm(a, w.transpose(-2, -1), offs=offs.long())
            with self.assertRaisesRegex(ValueError, "groups"):
                hgemm.functional.grouped_mm(a, w.transpose(-2, -1), offs=offs[:3])
            torch.library.opcheck(self.ops.grouped_mm.default, (a, w.transpose(-2, -1), offs),
                                  test_utils=("test_schema", "test_faketensor"))
            # gradients: da through the grouped product, db per group; rows in no group get none
            ag = a.detach().requires_grad_()
            wg = w.detach().requires_grad_()
            out = hgemm.functional.grouped_mm(ag, wg.transpose(-2, -1), offs=offs)
            g = self.randn(*out.shape, k=1, dtype=dtype)
            out.backward(g)
            a64, w64 = a.detach().double().requires_grad_(), w.detach().double().requires_grad_()
            ends = [0] + offs.tolist()
            pieces = [a64[ends[i]:ends[i + 1]] @ w64[i].t() for i in range(groups)]
            torch.cat(pieces).backward(g[:700].double())
            self.assertClose(ag.grad, a64.grad, "grouped_mm da (rows 700.. zero) " + dtype, atol=2 * ATOL)
            self.assertClose(wg.grad, w64.grad, "grouped_mm db " + dtype, atol=ATOL * 400 ** 0.5)
            # grouped along k directly: rows past offs[-1] belong to no group, an empty group gives zeros
            y = self.randn(760, n, k=1, dtype=dtype)
            dw = self.ops.grouped_mm_k(a, y, offs)
            self.assertEqual(tuple(dw.shape), (groups, k, n))
            for gi in range(groups):
                r0, r1 = ends[gi], ends[gi + 1]
                self.assertClose(dw[gi], a[r0:r1].double().t() @ y[r0:r1].double(),
                                 "grouped_mm_k %s group %d" % (dtype, gi), atol=ATOL * 400 ** 0.5)
            torch.library.opcheck(self.ops.grouped_mm_k.default, (a, y, offs),
                                  test_utils=("test_schema", "test_faketensor"))
            # F.grouped_mm's 2D x 2D form through hgemm.functional.grouped_mm, with gradients
            at = a.t().detach().requires_grad_()  # (k, 760): dY^T as torch passes it
            yg = y.detach().requires_grad_()
            out = hgemm.functional.grouped_mm(at, yg, offs=offs)
            self.assertEqual(tuple(out.shape), (groups, k, n))
            gout = self.randn(groups, k, n, k=1, dtype=dtype)
            out.backward(gout)
            a64, y64 = a.detach().double().t().requires_grad_(), y.detach().double().requires_grad_()
            ref = torch.stack([a64[:, ends[i]:ends[i + 1]] @ y64[ends[i]:ends[i + 1]] for i in range(groups)])
            self.assertClose(out, ref.detach(), "grouped_mm 2D x 2D " + dtype, atol=ATOL * 400 ** 0.5)
            ref.backward(gout.double())
            self.assertClose(at.grad, a64.grad, "grouped_mm 2D x 2D da (columns 700.. zero) " + dtype,
                             atol=ATOL * groups ** 0.5 * 2)
            self.assertClose(yg.grad, y64.grad, "grouped_mm 2D x 2D db " + dtype, atol=ATOL * groups ** 0.5 * 2)

    def test_autograd(self):
        torch = self.torch
        for dtype in DTYPES:
            x = self.randn(3, 40, 136, k=136, dtype=dtype).requires_grad_()
            w = self.randn(264, 136, k=136, dtype=dtype).requires_grad_()
            bias = self.randn(264, k=1, dtype=dtype).requires_grad_()
            g = self.randn(3, 40, 264, k=1, dtype=dtype)
            self.ops.linear(x, w, bias).backward(g)
            x64, w64, g64 = x.detach().double(), w.detach().double(), g.double()
            rows = 3 * 40
            self.assertClose(x.grad, g64 @ w64, "linear dX " + dtype, atol=2 * ATOL)
            self.assertClose(w.grad, g64.reshape(rows, 264).t() @ x64.reshape(rows, 136), "linear dW " + dtype,
                             atol=ATOL * rows ** 0.5)
            self.assertClose(bias.grad, g64.reshape(rows, 264).sum(0), "linear dbias " + dtype,
                             atol=ATOL * rows ** 0.5)
            a = self.randn(136, 72, k=72, dtype=dtype).requires_grad_()
            b = self.randn(200, 72, k=72, dtype=dtype).t().requires_grad_()  # read transposed (NT)
            gc = self.randn(136, 200, k=1, dtype=dtype)
            self.ops.mm(a, b).backward(gc)
            self.assertClose(a.grad, gc.double() @ b.detach().double().t(), "mm dA " + dtype, atol=2 * ATOL)
            ba, bb = self.randn(2, 40, 72, k=72, dtype=dtype).requires_grad_(), \
                self.randn(2, 72, 64, k=72, dtype=dtype).requires_grad_()
            gb = self.randn(2, 40, 64, k=1, dtype=dtype)
            self.ops.bmm(ba, bb).backward(gb)
            self.assertClose(bb.grad, ba.detach().double().transpose(1, 2) @ gb.double(), "bmm dB " + dtype,
                             atol=2 * ATOL)

    def test_wgrad_accumulate(self):
        """dW added into an fp32 main_grad in place (TN, fp32 C, beta 1):
        against main_grad + dY^T X in fp64; inputs whose rows need a copy
        (a column slice) give the same; hgemm.nn.Linear with weight.main_grad
        fills it and leaves weight.grad None, dX as torch's."""
        torch = self.torch
        for dtype in DTYPES:
            for tokens, out, inn in ((120, 264, 136), (1, 4096, 4096), (4100, 72, 200)):
                base = torch.randn(out, inn, device="cuda", dtype=torch.float32)
                main = base.clone()
                g = self.randn(tokens, out, k=1, dtype=dtype)
                x = self.randn(tokens, inn, k=1, dtype=dtype)
                self.ops.wgrad_accumulate_(main, g, x)
                ref = base.double() + g.double().t() @ x.double()
                # fp32 sums of `tokens` products: far inside atol scaled by sqrt(tokens)
                self.assertClose(main, ref, "wgrad %s %dx%dx%d" % (dtype, out, inn, tokens),
                                 atol=1e-4 * max(tokens, 1) ** 0.5)
            wide = self.randn(50, 300, k=1, dtype=dtype)
            g, x = wide[:, :264], self.randn(50, 136, k=1, dtype=dtype)  # g's rows 300 apart: copied
            main = torch.zeros(264, 136, device="cuda")
            self.ops.wgrad_accumulate_(main, g, x)
            self.assertClose(main, g.double().t() @ x.double(), "wgrad, strided grad_output " + dtype, atol=1e-3)
            with self.assertRaisesRegex(ValueError, "multiple of 8"):
                self.ops.wgrad_accumulate_(torch.zeros(264, 130, device="cuda"), g, self.randn(50, 130, k=1,
                                                                                               dtype=dtype))
            layer = hgemm.nn.Linear(136, 264, device="cuda", dtype=getattr(torch, dtype))
            layer.weight.main_grad = torch.zeros(264, 136, device="cuda")
            xin = self.randn(3, 40, 136, k=136, dtype=dtype).requires_grad_()
            gy = self.randn(3, 40, 264, k=1, dtype=dtype)
            layer(xin).backward(gy)
            layer(xin).backward(gy)  # twice: main_grad accumulates
            self.assertIsNone(layer.weight.grad)
            g64, x64 = gy.double().reshape(120, 264), xin.detach().double().reshape(120, 136)
            self.assertClose(layer.weight.main_grad, 2 * (g64.t() @ x64), "Linear main_grad " + dtype, atol=1e-3)
            self.assertClose(xin.grad, 2 * (gy.double() @ layer.weight.detach().double()), "Linear dX " + dtype,
                             atol=4 * ATOL)
            self.assertClose(layer.bias.grad, 2 * g64.sum(0), "Linear dbias " + dtype, atol=ATOL * 120 ** 0.5)

    def test_swap_linears_training(self):
        # A small MLP: the same loss and gradients with hgemm.nn.Linear as with nn.Linear.
        torch = self.torch
        import hgemm.nn
        for dtype in (torch.float16, torch.bfloat16):
            torch.manual_seed(1)
            model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 128),
                                        torch.nn.Linear(128, 10)).cuda().to(dtype)
            twin = torch.nn.Sequential(*[torch.nn.Linear(m.in_features, m.out_features) if isinstance(m, torch.nn.Linear)
                                         else torch.nn.GELU() for m in model]).cuda().to(dtype)
            twin.load_state_dict(model.state_dict())
            swapped, skipped = hgemm.nn.swap_linears(model)
            self.assertEqual(swapped, ["0", "2", "3"])
            self.assertEqual(skipped, {})
            self.assertEqual(set(model.state_dict()), set(twin.state_dict()))
            x = torch.randn(64, 256, device="cuda", dtype=dtype)
            out, ref = model(x), twin(x)
            self.assertTrue(out.is_contiguous(), "out_features 10: a dense result, as nn.Linear gives")
            out.float().square().mean().backward()
            ref.float().square().mean().backward()
            tol = 5e-2 if dtype == torch.bfloat16 else 1e-2
            self.assertClose(out, ref, "swapped forward %s" % dtype, atol=tol)
            for (name, p), q in zip(model.named_parameters(), twin.parameters()):
                scale = q.grad.double().abs().max().item() + 1e-6
                self.assertClose(p.grad / scale, q.grad / scale, "grad %s %s" % (name, dtype), atol=tol)
        fp32 = torch.nn.Linear(64, 64).cuda()
        odd = torch.nn.Linear(12, 64).cuda().half()
        swapped, skipped = hgemm.nn.swap_linears(torch.nn.Sequential(fp32, odd))
        self.assertEqual(swapped, [])
        self.assertIn("float32", skipped["0"])
        self.assertIn("multiple of 8", skipped["1"])

    def test_opcheck_and_compile(self):
        torch = self.torch
        x, w = self.randn(2, 64, 136, k=136), self.randn(264, 136, k=136)
        bias = self.randn(264, k=1)
        if hasattr(torch.library, "opcheck"):
            torch.library.opcheck(self.ops.linear.default, (x, w, bias))
            torch.library.opcheck(self.ops.linear.default, (x.requires_grad_(), w.requires_grad_(), None))
            torch.library.opcheck(self.ops.mm.default, (x[0].detach(), w.t().detach()))
            torch.library.opcheck(self.ops.linear_act.default, (x.detach(), w.detach(), bias),
                                  {"activation": "silu"})
            torch.library.opcheck(self.ops.bmm.default, (x.detach(), w.t().detach().expand(2, 136, 264)))
        x, w = x.detach(), w.detach()

        def f(x, w, bias):
            return torch.nn.functional.gelu(self.ops.linear(x, w, bias)) * 0.5

        compiled = torch.compile(f, fullgraph=True)
        self.assertClose(compiled(x, w, bias), f(x, w, bias), "compiled linear")
        x2 = self.randn(3, 40, 136, k=136)
        self.assertClose(compiled(x2, w, bias), f(x2, w, bias), "compiled linear, another shape")

    def test_graph_capture(self):
        torch = self.torch
        x, w = self.randn(1, 4096, k=4096), self.randn(4096, 4096, k=4096)
        side = torch.cuda.Stream()  # never used before capture: no workspace of its own
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=side):
            y = self.ops.linear(x, w)
        x.copy_(self.randn(1, 4096, k=4096))
        graph.replay()
        torch.cuda.synchronize()
        self.assertClose(y, x.double() @ w.double().t(), "linear replayed from a graph")

    def test_scaled_mm_beside_torch(self):
        """FP8 through the torch op, every scale layout torch._scaled_mm takes,
        against the fp64 product of the dequantized operands: hgemm's worst
        error at most twice torch's own plus bf16's rounding."""
        torch = self.torch
        HF = hgemm.functional
        for m, n, k in ((256, 384, 1024), (1, 520, 2048), (200, 136, 4096)):
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.05
            for block in ("tensor", "row", "block"):
                if block == "tensor":
                    (a8, sa), (w8, sw) = HF.quantize_fp8(x, None), HF.quantize_fp8(w, None)
                    sb = sw
                    xa, wb = a8.double() * sa.double(), w8.double() * sw.double()
                elif block == "row":
                    (a8, sa), (w8, sw) = HF.quantize_fp8(x, (1, k)), HF.quantize_fp8(w, (1, k))
                    sb = sw.t()
                    xa, wb = a8.double() * sa.double(), w8.double() * sw.double()
                else:
                    (a8, sa), (w8, sw) = HF.quantize_fp8(x, (1, 128)), HF.quantize_fp8(w, (128, 128))
                    sb = sw.t()
                    xa = a8.double() * sa.double().repeat_interleave(128, dim=1)[:, :k]
                    wb = w8.double() * sw.double().repeat_interleave(128, dim=0)[:n].repeat_interleave(128, dim=1)[:, :k]
                ref = xa @ wb.t()
                # the quantization itself: the dequantized operands near the originals
                self.assertLess(float((xa - x.double()).abs().max()), 0.07 * float(x.double().abs().max()))
                got = HF.scaled_mm(a8, w8.t(), sa, sb)
                self.assertEqual(got.dtype, torch.bfloat16)
                self.assertEqual(tuple(got.shape), (m, n))
                err = float((got.double() - ref).abs().max())
                bound = float(ref.abs().max()) * 2 ** -8
                try:
                    theirs = torch._scaled_mm(a8, w8.t(), sa, sb, out_dtype=torch.bfloat16)
                    bound += 2 * float((theirs.double() - ref).abs().max())
                except RuntimeError:  # a layout this torch does not serve: bf16 rounding twice over
                    bound *= 2
                self.assertLessEqual(err, bound, "scaled_mm %s %dx%dx%d" % (block, m, n, k))
        with self.assertRaisesRegex(TypeError, "float8"):
            HF.scaled_mm(x, w.t(), sa, sb)
        with self.assertRaisesRegex(ValueError, "scales of shapes"):
            HF.scaled_mm(a8, w8.t(), sa[:, :1], sb)

    def test_grouped_scaled_mm(self):
        """FP8 experts in one launch (hgemm.functional.grouped_scaled_mm):
        groups of 37, 0, 1 and 90 rows, each against its expert, row and
        block scales, against the fp64 product of the dequantized operands
        group by group (bf16's rounding plus the tensor core's FP8 sums over
        each 128 of k, as test_gpu_fp8 bounds them); rows past offs[-1] left alone."""
        torch = self.torch
        HF = hgemm.functional
        sizes, n, k = (37, 0, 1, 90), 200, 384
        groups, rows = len(sizes), sum(sizes)
        offs = torch.tensor(sizes, device="cuda").cumsum(0).to(torch.int32)
        x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(groups, n, k, device="cuda", dtype=torch.bfloat16) * 0.05
        for scaling in ("row", "block"):
            blk_a, blk_b = ((1, k), (1, k)) if scaling == "row" else ((1, 128), (128, 128))
            a8, sa = HF.quantize_fp8(x, blk_a)
            qs = [HF.quantize_fp8(w[e], blk_b) for e in range(groups)]
            w8 = torch.stack([q for q, _ in qs])
            if scaling == "row":
                sa_g, sb = sa.reshape(rows), torch.stack([s.reshape(n) for _, s in qs])
                xa = a8.double() * sa.double()
                wbs = [q.double() * s.double() for q, s in qs]
            else:
                sa_g, sb = sa, torch.stack([s for _, s in qs]).transpose(1, 2)
                xa = a8.double() * sa.double().repeat_interleave(128, dim=1)[:, :k]
                wbs = [q.double() * s.double().repeat_interleave(128, dim=0)[:n].repeat_interleave(128, dim=1)[:, :k]
                       for q, s in qs]
            got = HF.grouped_scaled_mm(a8, w8.transpose(1, 2), sa_g, sb, offs=offs)
            self.assertEqual((tuple(got.shape), got.dtype), ((rows, n), torch.bfloat16))
            start = 0
            for e, c in enumerate(sizes):
                if c:
                    prods = xa[start:start + c, None, :] * wbs[e][None, :, :]
                    ref, mag = prods.sum(-1), prods.abs().sum(-1)
                    err = (got[start:start + c].double() - ref).abs()
                    bound = ref.abs() * 2 ** -7 + mag * 2 ** -10 + 1e-30
                    self.assertTrue(bool((err <= bound).all()), "grouped_scaled_mm %s group %d: %g" %
                                    (scaling, e, float((err - bound).max())))
                start += c
        with self.assertRaisesRegex(ValueError, "scales of shapes"):
            HF.grouped_scaled_mm(a8, w8.transpose(1, 2), sa_g[:, :1], sb, offs=offs)


if __name__ == "__main__":
    unittest.main()
