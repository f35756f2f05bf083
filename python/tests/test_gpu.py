"""GPU tests of the hgemm Python package: real products through torch and cupy.

    PYTHONPATH=python HGEMM_LIBRARY=build/libhgemm.so python3 python/tests/run_gpu.py

Each class skips itself (unittest.SkipTest) when its library (torch, cupy) is
missing or there is no sm_90 GPU; run_gpu.py exits 77 when nothing ran.
Results are compared with a @ b.T (hgemm.nt) or a @ b (hgemm.matmul)
computed in fp32 from the same fp16 or bf16 inputs, with the tolerances of
DESIGN.md: atol 1e-2 for kernels accumulating in fp32, 5e-2 for v6 and v7
(fp16 accumulation), rtol 1e-2 for both. The inputs are scaled so that the
outputs have unit variance. Nothing here is slow: the timing against
torch.matmul is python/bench_torch.py.
"""
import itertools
import unittest

import hgemm

SHAPES = ((1, 1, 1), (129, 264, 72), (777, 1032, 520))  # (m, n, k), ragged
KERNELS = ("auto", "v6", "v7")
RTOL = 1e-2


def atol(kernel):
    return 5e-2 if kernel in ("v6", "v7") else 1e-2  # v6, v7 accumulate in fp16


def hopper(capability):
    return tuple(capability) == (9, 0)


def assert_torch_close(tc, got, ref, tol, what):
    """tc fails unless every element of the torch tensor got is within tol + RTOL * |ref|
    of ref (NaN counts as off), naming the first five that are not."""
    tc.assertEqual(tuple(got.shape), tuple(ref.shape), what)
    err = (got.double() - ref.double()).abs()
    bad = ~(err <= tol + RTOL * ref.double().abs())
    if bad.any():
        lines = ["  %s: got %g, expected %g" % (tuple(i), got[tuple(i)].item(), ref[tuple(i)].item())
                 for i in bad.nonzero()[:5].tolist()]
        tc.fail("%s: %d of %d elements off (max abs error %g), first ones:\n%s"
                % (what, int(bad.sum()), bad.numel(), float(err.nan_to_num(float("inf")).max()),
                   "\n".join(lines)))


def assert_error_like_torch(tc, got, base, ref, what, floor=1e-3):
    """tc fails unless got's error against ref (fp64) is within that of base,
    torch's own result in the same dtype: root mean square at most 1.25x
    base's, the largest at most 2x base's (each at least `floor`)."""
    tc.assertEqual(tuple(got.shape), tuple(ref.shape), what)
    e_got, e_base = (got.double() - ref).abs(), (base.double() - ref).abs()
    rms_got, rms_base = e_got.pow(2).mean().sqrt().item(), e_base.pow(2).mean().sqrt().item()
    max_got, max_base = e_got.max().item(), e_base.max().item()
    tc.assertTrue(rms_got <= 1.25 * max(rms_base, floor) and max_got <= 2 * max(max_base, floor),
                  "%s: error rms %g max %g, torch's rms %g max %g" % (what, rms_got, max_got, rms_base, max_base))


class TorchTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        try:
            import torch
        except ImportError:
            raise unittest.SkipTest("torch is not installed")
        if not torch.cuda.is_available():
            raise unittest.SkipTest("torch sees no CUDA device")
        if not hopper(torch.cuda.get_device_capability()):
            raise unittest.SkipTest("hgemm needs an sm_90 GPU, this is sm_%d%d"
                                    % torch.cuda.get_device_capability())
        cls.torch = torch
        torch.manual_seed(0)

    def randn(self, rows, cols, k, **kw):
        # Entries of variance 1/sqrt(k): a dot product over k has variance 1.
        torch = self.torch
        return (torch.randn(rows, cols, device="cuda", **kw) * k ** -0.25).half()

    def reference(self, a, b, alpha=1.0, beta=0.0, c=None):
        ref = alpha * (a.float() @ b.float().T)
        return ref if c is None else ref + beta * c.float()

    def assertClose(self, got, ref, kernel, what):
        self.assertEqual(got.dtype, self.torch.float16, what)
        assert_torch_close(self, got, ref, atol(kernel), what)

    def test_shapes_and_kernels(self):
        for m, n, k in SHAPES:
            a, b = self.randn(m, k, k), self.randn(n, k, k)
            for kernel in KERNELS:
                out = hgemm.nt(a, b, kernel=kernel)  # out=None: torch.empty
                self.torch.cuda.synchronize()
                self.assertEqual(out.device, a.device)
                self.assertClose(out, self.reference(a, b), kernel,
                                 "%dx%dx%d %s" % (m, n, k, kernel))

    def test_padded_rows_and_guard_band(self):
        # Slices of wider tensors: leading dimensions larger than the rows. The
        # padding of out is a guard band that must stay as it was, and its
        # m x n region starts as NaN, which beta == 0 must never read.
        torch = self.torch
        m, n, k = 129, 264, 72
        a = self.randn(m, k + 64, k)[:, :k]
        b = self.randn(n, k + 128, k)[:, 8:8 + k]
        out_wide = torch.full((m, n + 40), 7.0, dtype=torch.float16, device="cuda")
        out = out_wide[:, :n]
        out.fill_(float("nan"))
        for kernel in KERNELS:
            self.assertIs(hgemm.nt(a, b, out, kernel=kernel), out)
            torch.cuda.synchronize()
            self.assertClose(out, self.reference(a, b), kernel, "padded " + kernel)
            self.assertTrue(bool((out_wide[:, n:] == 7.0).all()), "the guard band was written")

    def test_alpha_beta(self):
        torch = self.torch
        m, n, k = 777, 1032, 520
        a, b = self.randn(m, k, k), self.randn(n, k, k)
        c = torch.randn(m, n, device="cuda").half()
        for kernel in KERNELS:
            out = c.clone()
            hgemm.nt(a, b, out, alpha=0.5, beta=-1.5, kernel=kernel)
            torch.cuda.synchronize()
            self.assertClose(out, self.reference(a, b, 0.5, -1.5, c), kernel, "alpha/beta " + kernel)

    def test_kernel_by_id(self):
        a, b = self.randn(129, 72, 72), self.randn(264, 72, 72)
        out = hgemm.nt(a, b, kernel=hgemm.kernels().index("v6"))
        self.torch.cuda.synchronize()
        self.assertClose(out, self.reference(a, b), "v6", "kernel id")

    def test_streams(self):
        # On a side stream: given as torch's current stream, and given explicitly.
        torch = self.torch
        a, b = self.randn(777, 520, 520), self.randn(1032, 520, 520)
        side = torch.cuda.Stream()
        torch.cuda.synchronize()  # the inputs were made on the default stream
        with torch.cuda.stream(side):
            out = hgemm.nt(a, b)
        out2 = torch.empty_like(out)
        hgemm.nt(a, b, out2, stream=side)
        side.synchronize()
        self.assertClose(out, self.reference(a, b), "auto", "current side stream")
        self.assertClose(out2, self.reference(a, b), "auto", "stream=side")

    def test_errors_from_real_tensors(self):
        torch = self.torch
        a, b = self.randn(128, 64, 64), self.randn(64, 64, 64)
        with self.assertRaisesRegex(TypeError, "CUDA array"):
            hgemm.nt(a.cpu(), b)
        with self.assertRaisesRegex(TypeError, "fp16"):
            hgemm.nt(a.float(), b)
        # One element in: the pointer is 2 bytes off 16-byte alignment.
        flat = torch.empty(128 * 64 + 8, dtype=torch.float16, device="cuda")
        with self.assertRaises(hgemm.HgemmError) as cm:
            hgemm.nt(flat[1:1 + 128 * 64].view(128, 64), b)
        self.assertEqual(cm.exception.status, hgemm.ERROR_MISALIGNED)

    def test_custom_op(self):
        torch = self.torch
        if not hasattr(torch.ops.hgemm, "nt"):
            self.skipTest("this torch has no torch.library.custom_op")
        a, b = self.randn(129, 72, 72), self.randn(264, 72, 72)
        out = torch.ops.hgemm.nt(a, b)
        out2 = torch.ops.hgemm.nt(a, b, 0.5, "v6")
        torch.cuda.synchronize()
        self.assertClose(out, self.reference(a, b), "auto", "torch.ops.hgemm.nt")
        self.assertClose(out2, self.reference(a, b, 0.5), "v6", "torch.ops.hgemm.nt alpha, v6")
        if hasattr(torch.library, "opcheck"):
            torch.library.opcheck(torch.ops.hgemm.nt.default, (a, b))

    def test_custom_op_torch_path(self):
        # The op hands torch tensors straight to the library: strided rows,
        # one-row inputs (decode: AUTO is V9 there), empty products, and the
        # library's own errors, raised as HgemmError.
        torch = self.torch
        if not hasattr(torch.ops.hgemm, "nt"):
            self.skipTest("this torch has no torch.library.custom_op")
        wide_a, wide_b = self.randn(40, 200, 136), self.randn(520, 200, 136)
        a, b = wide_a[:, 8:144], wide_b[:, 16:152]  # row strides 200, k = 136
        x = self.randn(1, 4096, 4096)
        w = self.randn(1032, 4096, 4096)
        out, out1 = torch.ops.hgemm.nt(a, b, 2.0), torch.ops.hgemm.nt(x, w)
        torch.cuda.synchronize()
        self.assertClose(out, self.reference(a, b, 2.0), "auto", "strided rows")
        self.assertClose(out1, self.reference(x, w), "auto", "m = 1")
        self.assertEqual(tuple(torch.ops.hgemm.nt(a[:0], b).shape), (0, 520))
        flat = torch.empty(128 * 64 + 8, dtype=torch.float16, device="cuda")
        # The native op raises RuntimeError, the ctypes one HgemmError; both name the status.
        with self.assertRaises((hgemm.HgemmError, RuntimeError)) as cm:
            torch.ops.hgemm.nt(flat[1:1 + 128 * 64].view(128, 64), self.randn(64, 64, 64))
        self.assertIn("(status %d)" % hgemm.ERROR_MISALIGNED, str(cm.exception))
        with self.assertRaisesRegex(TypeError, "fp16"):
            torch.ops.hgemm.nt(a.float(), b.float())

    def test_linear(self):
        # hgemm.linear: the op's fast path without the dispatcher. The same
        # kernel gives the same bits as torch.ops.hgemm.nt; leading dims are
        # flattened and restored; bf16 and strided rows go through matmul.
        torch = self.torch
        x, w = self.randn(2 * 65, 264, 264).view(2, 65, 264), self.randn(520, 264, 264)
        y = hgemm.linear(x, w)
        self.assertEqual(tuple(y.shape), (2, 65, 520))
        self.assertClose(y.view(130, 520), self.reference(x.view(130, 264), w), "auto", "hgemm.linear")
        if hasattr(torch.ops.hgemm, "nt"):
            self.assertTrue(torch.equal(y.view(130, 520), torch.ops.hgemm.nt(x.view(130, 264), w)),
                            "hgemm.linear and torch.ops.hgemm.nt differ")
        one = hgemm.linear(x[0, :1], w, "v8")  # decode: m = 1
        self.assertClose(one, self.reference(x[0, :1], w), "v8", "m = 1, v8")
        wide = self.randn(64, 400, 264)
        strided = hgemm.linear(wide[:, 8:272], w)  # row stride 400: the fast path, lda 400
        self.assertClose(strided, self.reference(wide[:, 8:272], w), "auto", "strided rows")
        xb, wb = x.to(torch.bfloat16), w.to(torch.bfloat16)
        yb = hgemm.linear(xb, wb)
        self.assertEqual(yb.dtype, torch.bfloat16)
        ref = self.reference(x.view(130, 264).to(torch.bfloat16), wb).view(2, 65, 520)
        self.assertLess(float((yb.float() - ref).abs().max()), 0.1, "bf16 through matmul")
        self.assertEqual(tuple(hgemm.linear(x[:, :0], w).shape), (2, 0, 520))
        with self.assertRaises(TypeError):
            hgemm.linear(x.float(), w.float())
        # On a side stream: the fast path launches on torch's current stream,
        # so the result is complete once that stream is (and only then).
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            ys = hgemm.linear(x, w)
        side.synchronize()
        self.assertTrue(torch.equal(ys, y), "hgemm.linear on a side stream differs")

    def test_linear_workspace(self):
        # hgemm.linear with hgemm.workspace(): 4224 x 1000 x 2112 is 68 wide
        # cluster tiles for an H200's 66 clusters, the last 2 cut in halves
        # of k (the tail split); 200 x 300 x 4096 6 narrow tiles in 8 slices
        # (split-K; n = 300, no multiple of 8: through matmul, rows padded).
        # Each against the fp64 reference, the second call bitwise the
        # first's (each call leaves the workspace's flags ready for the next;
        # its partial sums stay). bf16 goes through matmul with the same
        # workspace, and an fp16 call after it gives the same bits again.
        torch = self.torch
        ws = hgemm.workspace()
        self.assertEqual((ws.numel(), ws.dtype, ws.device.type), (hgemm.WORKSPACE_BYTES, torch.uint8, "cuda"))
        for m, n, k in ((4224, 1000, 2112), (200, 300, 4096)):
            x, w = self.randn(m, k, k), self.randn(n, k, k)
            y = hgemm.linear(x, w, workspace=ws)
            y2 = hgemm.linear(x, w, workspace=ws)
            torch.cuda.synchronize()
            what = "workspace %dx%dx%d" % (m, n, k)
            self.assertClose(y, self.reference(x, w), "auto", what)
            self.assertTrue(torch.equal(y, y2), what + ": two calls differ")
            yb = hgemm.linear(x.to(torch.bfloat16), w.to(torch.bfloat16), workspace=ws)
            y3 = hgemm.linear(x, w, workspace=ws)  # after a bf16 call, the workspace still ready
            torch.cuda.synchronize()
            ref = self.reference(x.to(torch.bfloat16), w.to(torch.bfloat16))
            self.assertLess(float((yb.float() - ref).abs().max()), 0.1, what + ", bf16")
            self.assertTrue(torch.equal(y, y3), what + ": the call after bf16 differs")
        with self.assertRaisesRegex(ValueError, "CUDA device"):
            hgemm.workspace("cpu")

    def test_torch_compile(self):
        # aot_eager traces with fake tensors (register_fake) and runs the graph
        # as it is, without generating code: the op's part, quickly.
        torch = self.torch
        if not hasattr(torch.ops.hgemm, "nt"):
            self.skipTest("this torch has no torch.library.custom_op")

        def f(x, w):
            return torch.ops.hgemm.nt(x, w, 2.0) * 0.25

        compiled = torch.compile(f, backend="aot_eager", fullgraph=True)
        a, b = self.randn(129, 72, 72), self.randn(264, 72, 72)
        out = compiled(a, b)
        torch.cuda.synchronize()
        self.assertClose(out, self.reference(a, b, 0.5), "auto", "torch.compile")


class TorchMatmulTests(unittest.TestCase):
    """hgemm.matmul and torch.ops.hgemm.matmul against torch.matmul in fp32:
    fp16 and bf16, every form (NN, NT, TN, TT through .t() / .mT views),
    batches (broadcast on either side, or both batched), out given or not."""

    DTYPES = ("float16", "bfloat16")
    # (m, n, k): multiples of 8 where a transposed view makes them a leading
    # dimension; one decode row; k not a multiple of the tiles.
    SHAPES = ((200, 264, 72), (1, 1032, 520), (136, 64, 1000))

    @classmethod
    def setUpClass(cls):
        TorchTests.setUpClass.__func__(cls)

    def randn(self, *shape, k, dtype):
        # Entries of variance 1/sqrt(k): a dot product over k has variance 1.
        torch = self.torch
        return (torch.randn(*shape, device="cuda") * k ** -0.25).to(getattr(torch, dtype))

    def operand(self, batch, rows, cols, transposed, k, dtype):
        """A (batch..., rows, cols) tensor, stored as it is or as the
        transpose of a (batch..., cols, rows) one (a view, not a copy)."""
        if transposed:
            return self.randn(*batch, cols, rows, k=k, dtype=dtype).transpose(-1, -2)
        return self.randn(*batch, rows, cols, k=k, dtype=dtype)

    def reference(self, a, b, alpha=1.0, beta=0.0, c=None):
        ref = alpha * self.torch.matmul(a.float(), b.float())
        return ref if c is None else ref + beta * c.float()

    def assertClose(self, got, ref, kernel, what, dtype):
        self.assertEqual(got.dtype, getattr(self.torch, dtype), what)
        assert_torch_close(self, got, ref, atol(kernel), what)

    def test_forms_and_types(self):
        for dtype, (m, n, k), ta, tb in itertools.product(self.DTYPES, self.SHAPES, (False, True),
                                                          (False, True)):
            what = "%s %dx%dx%d %s%s" % (dtype, m, n, k, "T" if ta else "N", "T" if tb else "N")
            with self.subTest(what):
                a = self.operand((), m, k, ta, k, dtype)
                b = self.operand((), k, n, tb, k, dtype)
                out = hgemm.matmul(a, b)
                self.torch.cuda.synchronize()
                self.assertClose(out, self.reference(a, b), "auto", what, dtype)

    def test_v8_serves_every_form(self):
        m, n, k = 200, 264, 72
        for dtype, ta, tb in itertools.product(self.DTYPES, (False, True), (False, True)):
            what = "v8 %s %s%s" % (dtype, "T" if ta else "N", "T" if tb else "N")
            with self.subTest(what):
                a, b = self.operand((), m, k, ta, k, dtype), self.operand((), k, n, tb, k, dtype)
                out = hgemm.matmul(a, b, kernel="v8")
                self.torch.cuda.synchronize()
                self.assertClose(out, self.reference(a, b), "v8", what, dtype)

    def test_batches(self):
        m, n, k = 136, 200, 72
        for dtype, (ba, bb), ta, tb in itertools.product(
                self.DTYPES, (((3,), (3,)), ((3,), ()), ((), (3,)), ((2, 3), (2, 3)), ((2, 3), ())),
                (False, True), (False, True)):
            what = "%s batch %s @ %s %s%s" % (dtype, ba, bb, "T" if ta else "N", "T" if tb else "N")
            with self.subTest(what):
                a, b = self.operand(ba, m, k, ta, k, dtype), self.operand(bb, k, n, tb, k, dtype)
                out = hgemm.matmul(a, b)
                self.torch.cuda.synchronize()
                self.assertClose(out, self.reference(a, b), "auto", what, dtype)

    def test_out_alpha_beta_and_guard_band(self):
        # out a slice of a wider tensor (its padding a guard band), in a
        # batch whose entries have a gap between them; beta reads it.
        torch = self.torch
        m, n, k = 129, 264, 72
        for dtype in self.DTYPES:
            a = self.operand((2,), m, k, False, k, dtype)
            b = self.operand((2,), k, n, True, k, dtype)
            wide = torch.full((2, m + 3, n + 40), 7.0, dtype=getattr(torch, dtype), device="cuda")
            out = wide[:, :m, :n]
            c = torch.randn(2, m, n, device="cuda").to(out.dtype)
            out.copy_(c)
            self.assertIs(hgemm.matmul(a, b, out, alpha=0.5, beta=-1.5), out)
            torch.cuda.synchronize()
            self.assertClose(out, self.reference(a, b, 0.5, -1.5, c), "auto", "out " + dtype, dtype)
            self.assertTrue(bool((wide[:, :m, n:] == 7.0).all()), "the guard band was written")
            self.assertTrue(bool((wide[:, m:, :] == 7.0).all()), "the rows past m were written")

    def test_transposed_out(self):
        # out = y.t(): computed as out^T = b^T a^T.
        torch = self.torch
        m, n, k = 200, 264, 72
        for dtype in self.DTYPES:
            a, b = self.operand((), m, k, False, k, dtype), self.operand((), k, n, True, k, dtype)
            out = torch.empty(n, m, dtype=getattr(torch, dtype), device="cuda").t()
            hgemm.matmul(a, b, out)
            torch.cuda.synchronize()
            self.assertClose(out, self.reference(a, b), "auto", "out transposed " + dtype, dtype)

    def test_out_none_pads_rows(self):
        # n = 1001: rows padded to 1008 elements.
        m, n, k = 64, 1001, 520
        a, b = self.operand((2,), m, k, False, k, "bfloat16"), self.operand((), k, n, True, k, "bfloat16")
        out = hgemm.matmul(a, b)
        self.torch.cuda.synchronize()
        self.assertEqual(out.stride(), (m * 1008, 1008, 1))
        self.assertClose(out, self.reference(a, b), "auto", "n = 1001", "bfloat16")

    def test_refusals(self):
        torch = self.torch
        a, b = self.randn(64, 48, k=48, dtype="float16"), self.randn(48, 32, k=48, dtype="float16")
        with self.assertRaisesRegex(ValueError, "neither its rows nor its columns.*copy"):
            hgemm.matmul(self.randn(64, 96, k=48, dtype="float16")[:, ::2], b)
        with self.assertRaisesRegex(ValueError, "batch dimensions do not step.*copy"):
            hgemm.matmul(self.randn(2, 3, 64, 48, k=48, dtype="float16"),
                         self.randn(3, 48, 32, k=48, dtype="float16"))
        with self.assertRaisesRegex(TypeError, "same type"):
            hgemm.matmul(a, b.to(torch.bfloat16))
        with self.assertRaisesRegex(TypeError, "float16 or bfloat16"):
            hgemm.matmul(a.float(), b.float())
        with self.assertRaisesRegex(TypeError, "CUDA tensor"):
            hgemm.matmul(a.cpu(), b.cpu())
        flat = torch.empty(64 * 48 + 8, dtype=torch.float16, device="cuda")
        with self.assertRaises(hgemm.HgemmError) as cm:
            hgemm.matmul(flat[1:1 + 64 * 48].view(64, 48), b)
        self.assertEqual(cm.exception.status, hgemm.ERROR_MISALIGNED)

    def test_custom_ops(self):
        torch = self.torch
        if not hasattr(torch.ops.hgemm, "matmul"):
            self.skipTest("this torch has no torch.library.custom_op")
        m, n, k = 136, 200, 72
        for dtype in self.DTYPES:
            x = self.operand((3,), m, k, False, k, dtype)
            w = self.randn(n, k, k=k, dtype=dtype)
            y = torch.ops.hgemm.matmul(x, w.t())
            y2 = torch.ops.hgemm.matmul(x.transpose(-1, -2).contiguous().mT, w.t(), 2.0, "auto")
            out = torch.randn(3, m, n, device="cuda").to(x.dtype)
            c = out.clone()
            self.assertIsNone(torch.ops.hgemm.matmul_out(x, w.t(), out, 0.5, 1.0, "auto"))
            torch.cuda.synchronize()
            self.assertClose(y, self.reference(x, w.t()), "auto", "op " + dtype, dtype)
            self.assertClose(y2, self.reference(x, w.t(), 2.0), "auto", "op TN " + dtype, dtype)
            self.assertClose(out, self.reference(x, w.t(), 0.5, 1.0, c), "auto", "op out " + dtype,
                             dtype)
            if hasattr(torch.library, "opcheck"):
                torch.library.opcheck(torch.ops.hgemm.matmul.default, (x, w.t()))
                torch.library.opcheck(torch.ops.hgemm.matmul.default,
                                      (x[:, :, :64], self.randn(1001, 64, k=64, dtype=dtype).t()))
                torch.library.opcheck(torch.ops.hgemm.matmul_out.default, (x, w.t(), out.clone()))

    def test_torch_compile(self):
        # fullgraph=True: no graph break around the op. aot_eager runs the
        # traced graph as it is; inductor generates code around the op.
        torch = self.torch
        if not hasattr(torch.ops.hgemm, "matmul"):
            self.skipTest("this torch has no torch.library.custom_op")

        def f(x, w, bias):
            return torch.ops.hgemm.matmul(x, w.t(), 2.0) * 0.25 + bias

        def g(x, w, out):
            torch.ops.hgemm.matmul_out(x, w.t(), out, 1.0, 1.0, "auto")
            return out.sum()

        m, n, k = 136, 1001, 72
        for dtype in self.DTYPES:
            x, w = self.operand((2,), m, k, False, k, dtype), self.randn(n, k, k=k, dtype=dtype)
            bias = self.randn(n, k=1, dtype=dtype)
            want = self.reference(x, w.t(), 0.5) + bias.float()
            for backend in ("aot_eager", "inductor"):
                torch._dynamo.reset()
                out = torch.compile(f, backend=backend, fullgraph=True)(x, w, bias)
                torch.cuda.synchronize()
                self.assertClose(out, want, "auto", "compiled %s %s" % (backend, dtype), dtype)
            # out given: C-ordered, so n a multiple of 8 (its leading dimension).
            c = torch.zeros(2, m, 1000, device="cuda", dtype=x.dtype)
            total = torch.compile(g, backend="inductor", fullgraph=True)(x, w[:1000], c)
            torch.cuda.synchronize()
            self.assertClose(c, self.reference(x, w[:1000].t()), "auto", "compiled out " + dtype,
                             dtype)
            self.assertTrue(torch.isfinite(total).item())


class CupyTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        try:
            import cupy
        except ImportError:
            raise unittest.SkipTest("cupy is not installed")
        try:
            if cupy.cuda.runtime.getDeviceCount() == 0:
                raise unittest.SkipTest("cupy sees no CUDA device")
            capability = cupy.cuda.Device().compute_capability  # "90"
        except cupy.cuda.runtime.CUDARuntimeError as e:
            raise unittest.SkipTest("cupy sees no CUDA device: %s" % e)
        if capability != "90":
            raise unittest.SkipTest("hgemm needs an sm_90 GPU, this is sm_%s" % capability)
        cls.cupy = cupy
        cupy.random.seed(0)

    def randn(self, rows, cols, k):
        cupy = self.cupy
        x = cupy.random.standard_normal((rows, cols), dtype=cupy.float32) * k ** -0.25
        return x.astype(cupy.float16)

    def reference(self, a, b, alpha=1.0, beta=0.0, c=None):
        cupy = self.cupy
        ref = alpha * (a.astype(cupy.float32) @ b.astype(cupy.float32).T)
        return ref if c is None else ref + beta * c.astype(cupy.float32)

    def assertClose(self, got, ref, kernel, what):
        cupy = self.cupy
        self.assertEqual(got.dtype, cupy.float16, what)
        self.assertEqual(got.shape, ref.shape, what)
        err = cupy.abs(got.astype(cupy.float32) - ref)
        bad = ~(err <= atol(kernel) + RTOL * cupy.abs(ref))
        if bool(bad.any()):
            where = cupy.argwhere(bad)[:5].get().tolist()
            lines = ["  [%d, %d]: got %g, expected %g" % (i, j, float(got[i, j]), float(ref[i, j]))
                     for i, j in where]
            self.fail("%s: %d of %d elements off (max abs error %g), first ones:\n%s"
                      % (what, int(bad.sum()), bad.size, float(cupy.nan_to_num(err, nan=float("inf")).max()),
                         "\n".join(lines)))

    def test_shapes_and_kernels(self):
        cupy = self.cupy
        for m, n, k in SHAPES:
            a, b = self.randn(m, k, k), self.randn(n, k, k)
            for kernel in KERNELS:
                out = hgemm.nt(a, b, kernel=kernel)  # out=None: cupy.empty
                cupy.cuda.Device().synchronize()
                self.assertClose(out, self.reference(a, b), kernel,
                                 "%dx%dx%d %s" % (m, n, k, kernel))

    def test_padded_rows_alpha_beta(self):
        cupy = self.cupy
        m, n, k = 777, 1032, 520
        a = self.randn(m, k + 64, k)[:, :k]
        b = self.randn(n, k + 16, k)[:, 16:]
        c = self.randn(m, n, 1)
        out_wide = cupy.full((m, n + 24), 7.0, dtype=cupy.float16)
        out = out_wide[:, :n]
        for kernel in KERNELS:
            out[...] = c
            self.assertIs(hgemm.nt(a, b, out, alpha=-2.0, beta=0.5, kernel=kernel), out)
            cupy.cuda.Device().synchronize()
            self.assertClose(out, self.reference(a, b, -2.0, 0.5, c), kernel, "padded " + kernel)
            self.assertTrue(bool((out_wide[:, n:] == 7.0).all()), "the guard band was written")

    def test_matmul(self):
        # Every form through transposed views (.T), and a batch over one b.
        cupy = self.cupy
        m, n, k = 200, 264, 72
        for ta, tb in itertools.product((False, True), (False, True)):
            a = self.randn(k, m, k).T if ta else self.randn(m, k, k)
            b = self.randn(n, k, k).T if tb else self.randn(k, n, k)
            out = hgemm.matmul(a, b)
            cupy.cuda.Device().synchronize()
            # reference() multiplies by b.T: hand it b's transpose.
            self.assertClose(out, self.reference(a, b.T), "auto", "matmul %s%s"
                             % ("T" if ta else "N", "T" if tb else "N"))
        a = cupy.stack([self.randn(m, k, k) for _ in range(3)])
        b = self.randn(n, k, k).T
        out = hgemm.matmul(a, b)
        cupy.cuda.Device().synchronize()
        self.assertEqual(out.shape, (3, m, n))
        self.assertClose(out.reshape(3 * m, n), self.reference(a.reshape(3 * m, k), b.T), "auto",
                         "matmul batch")

    def test_stream_from_the_interface(self):
        # cupy exports its current stream in __cuda_array_interface__ (v3).
        cupy = self.cupy
        a, b = self.randn(129, 72, 72), self.randn(264, 72, 72)
        cupy.cuda.Device().synchronize()
        side = cupy.cuda.Stream()
        with side:
            out = hgemm.nt(a, b)
        side.synchronize()
        self.assertClose(out, self.reference(a, b), "auto", "cupy side stream")
        out2 = cupy.empty_like(out)
        hgemm.nt(a, b, out2, stream=side)
        side.synchronize()
        self.assertClose(out2, self.reference(a, b), "auto", "stream=cupy stream")


if __name__ == "__main__":
    unittest.main()
